"""Hypothesis strategies for hands: random cards and hands built from real melds."""

from __future__ import annotations

from collections import Counter

from hypothesis import strategies as st

from scorer import ALL_FACES, JOKER, Card

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


#: How the cards beside the 8 dublees may lie (RULES.md 2.3: in any groups, or loose).
ODD_LAYOUTS = ("one group", "loose", "odd pairs", "any split")


def _copies(card: Card, tiplu: Card, printed_jokers: int) -> int:
    """Copies of ``card`` in play: 3, the tiplu 2 (the third lies under the stock), printed jokers as many
    as the option adds."""
    return printed_jokers if card.is_joker else 2 if card == tiplu else 3


def _lay_odd_cards(draw: st.DrawFn, cards: list[Card]) -> list[list[Card]]:
    layout = draw(st.sampled_from(ODD_LAYOUTS))
    if layout == "one group":
        return [cards]
    if layout == "loose":
        return [[card] for card in cards]
    if layout == "odd pairs":
        return [cards[k:k + 2] for k in range(0, len(cards), 2)]
    groups: list[list[Card]] = []
    rest = list(cards)
    while rest:
        size = draw(st.integers(1, len(rest)))
        groups.append(rest[:size])
        rest = rest[size:]
    return groups


@st.composite
def dublee_finish(draw: st.DrawFn, dublees: int = 8) -> tuple[list[list[Card]], Card | None, Card, int]:
    """A dublee finish as laid: ``dublees`` pairs of identical cards (often two tiplus, two wilds or,
    with printed jokers in play, ``JOKER JOKER``) and the other cards in any groups, or loose.

    21 cards, or 22 with the discard given or left for the checker to pick. Returns the groups
    (in a drawn order), the discard given (or None), the tiplu and the printed jokers in play.
    """
    tiplu = draw(faces)
    printed = draw(st.integers(0, 3))
    wild_pairs = [tiplu, Card(tiplu.rank % 13 + 1, tiplu.suit), *([JOKER] if printed >= 2 else [])]
    pair_faces = st.one_of(faces, st.sampled_from(wild_pairs))
    counts: Counter = Counter()
    pairs: list[list[Card]] = []
    while len(pairs) < dublees:
        face = draw(pair_faces)
        if counts[face] + 2 <= _copies(face, tiplu, printed):
            counts[face] += 2
            pairs.append([face, face])
    size = draw(st.sampled_from([21, 22]))
    odd: list[Card] = []
    odd_faces = st.one_of(faces, st.just(JOKER)) if printed else faces
    while len(odd) < size - 2 * dublees:
        card = draw(odd_faces)
        if counts[card] < _copies(card, tiplu, printed):
            counts[card] += 1
            odd.append(card)
    discard = odd.pop() if size == 22 and draw(st.booleans()) else None
    groups = pairs + _lay_odd_cards(draw, odd)
    draw(st.randoms(use_true_random=False)).shuffle(groups)
    return groups, discard, tiplu, printed
