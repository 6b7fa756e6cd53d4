"""Hypothesis strategies for hands: random cards and hands built from real melds."""

from __future__ import annotations

from collections import Counter

from hypothesis import strategies as st

from scorer import ALL_FACES, Card

NATURAL_FACES = [c for c in ALL_FACES if not c.is_joker]
faces = st.sampled_from(NATURAL_FACES)


def _fits(counts: Counter, cards: list[Card], tiplu: Card) -> bool:
    trial = counts + Counter(cards)
    return all(n <= (2 if c == tiplu else 3) for c, n in trial.items())


@st.composite
def random_hand(draw: st.DrawFn, size: int) -> tuple[list[Card], Card]:
    """``size`` random cards from 3 decks, and a tiplu (at most 2 tiplu copies in hand)."""
    tiplu = draw(faces)
    pool = [c for c in NATURAL_FACES for _ in range(3)]
    pool.remove(tiplu)
    rng = draw(st.randoms(use_true_random=False))
    return rng.sample(pool, size), tiplu


@st.composite
def meld_built_hand(draw: st.DrawFn, extra: int, melds: int = 7) -> tuple[list[Card], Card]:
    """``melds`` melds (sequences, tunnelas, triplets, any 3 cards) plus ``extra`` random cards:
    often valid, sometimes not, which is what the checker should tell apart."""
    tiplu = draw(faces)
    counts: Counter = Counter()
    cards: list[Card] = []
    while len(cards) < 3 * melds:
        kind = draw(st.sampled_from(["sequence", "tunnela", "triplet", "random"]))
        face = draw(faces)
        if kind == "sequence":
            start = draw(st.integers(1, 12))
            meld = [Card(r if r <= 13 else 1, face.suit) for r in range(start, start + 3)]
        elif kind == "tunnela":
            meld = [face] * 3
        elif kind == "triplet":
            suits = draw(st.permutations(["S", "H", "D", "C"]))[:3]
            meld = [Card(face.rank, s) for s in suits]
        else:
            meld = [draw(faces) for _ in range(3)]
        if _fits(counts, meld, tiplu):
            counts.update(meld)
            cards.extend(meld)
    for _ in range(extra):
        card = draw(faces)
        if _fits(counts, [card], tiplu):
            counts[card] += 1
            cards.append(card)
    draw(st.randoms(use_true_random=False)).shuffle(cards)
    return cards, tiplu
