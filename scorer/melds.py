"""Meld classification, with the reason a group is *not* a meld.

Nepali melds have exactly 3 cards (RULES.md 2.1); rummy melds have 3 or more
(RULES.md 3). A wild card may always be played as its own face, so the natural
reading is tried first: with tiplu JC, ``10C JC QC`` is a *pure* sequence.

>>> from scorer import get_rules, parse_cards, parse_card
>>> from scorer.wilds import wild_cards
>>> w = wild_cards(get_rules(), tiplu=parse_card("JC"))
>>> classify_meld(parse_cards("10C JC QC"), w).kind == MeldKind.PURE_SEQUENCE
True
>>> classify_meld(parse_cards("5D 5D JD"), w).reason
'two identical cards and a wild never make a meld'
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from scorer.cards import Card, format_cards
from scorer.kinds import PURE_KINDS, MeldKind
from scorer.wilds import Wilds

PURE_SEQUENCE = MeldKind.PURE_SEQUENCE
TUNNELA = MeldKind.TUNNELA
TRIPLET = MeldKind.TRIPLET
DIRTY_SEQUENCE = MeldKind.DIRTY_SEQUENCE
DIRTY_TRIPLET = MeldKind.DIRTY_TRIPLET
WILD_MELD = MeldKind.WILD_MELD
LIFE = MeldKind.LIFE
SEQUENCE = MeldKind.SEQUENCE
SET = MeldKind.SET


@dataclass(frozen=True)
class MeldCheck:
    """The verdict on one group of cards: its kind, or why it is not a meld."""

    cards: tuple[Card, ...]
    kind: MeldKind | None
    reason: str | None = None

    @property
    def is_meld(self) -> bool:
        return self.kind is not None

    @property
    def is_pure(self) -> bool:
        """Pure sequences and tunnelas (nepali), lives (rummy)."""
        return self.kind in PURE_KINDS


def sequence_fits(ranks: Sequence[int], length: int) -> bool:
    """Can cards of these distinct ranks (one suit) sit in a run of ``length``?

    Gaps and ends are left for wild cards. Ace is low (A23) or high (QKA), and a
    run never wraps (KA2 is no sequence).

    >>> sequence_fits([12, 13, 1], 3), sequence_fits([13, 1, 2], 3)
    (True, False)
    """
    if len(set(ranks)) != len(ranks) or length > 13:
        return False
    if not ranks:
        return True
    for ace, (low, high) in ((1, (1, 13)), (14, (2, 14))):
        mapped = [ace if r == 1 else r for r in ranks]
        start_min = max(low, max(mapped) - length + 1)
        start_max = min(min(mapped), high - length + 1)
        if start_min <= start_max:
            return True
    return False


def _natural_kind_nepali(cards: Sequence[Card]) -> str | None:
    if any(c.is_joker for c in cards):
        return None
    if cards[0] == cards[1] == cards[2]:
        return TUNNELA
    suits = {c.suit for c in cards}
    ranks = [c.rank for c in cards]
    if len(suits) == 1 and sequence_fits(ranks, 3):
        return PURE_SEQUENCE
    if len(set(ranks)) == 1 and len(suits) == 3:
        return TRIPLET
    return None


def _with_wilds_nepali(naturals: Sequence[Card]) -> str | None:
    """Kind of a 3-card meld whose other cards are wilds standing in."""
    if any(c.is_joker for c in naturals):
        return None
    if len(naturals) <= 1:
        return WILD_MELD
    a, b = naturals
    if a == b:
        return None
    if a.suit == b.suit and sequence_fits([a.rank, b.rank], 3):
        return DIRTY_SEQUENCE
    if a.rank == b.rank:
        return DIRTY_TRIPLET
    return None


def _why_not_nepali(cards: Sequence[Card], wilds: Wilds) -> str:
    wild_count = sum(1 for c in cards if wilds.is_wild(c))
    naturals = [c for c in cards if not wilds.is_wild(c)]
    if wild_count and len(naturals) == 2 and naturals[0] == naturals[1]:
        return "two identical cards and a wild never make a meld"
    ranks = {c.rank for c in cards}
    suits = [c.suit for c in cards]
    if len(ranks) == 1:
        return "a triplet needs three different suits"
    if len(set(suits)) == 1:
        ordered = sorted(ranks)
        if 13 in ordered and 1 in ordered and 2 in ordered:
            return "a sequence does not wrap from K to A to 2"
        return "ranks are not consecutive" + ("" if not wild_count else " even with the wild")
    if wild_count:
        return "the other two cards are neither one suit within 2 ranks nor one rank"
    return "mixed suits and ranks, and no wild card to fill in"


def classify_meld(cards: Sequence[Card], wilds: Wilds) -> MeldCheck:
    """Classify a 3-card nepali group; ``reason`` says why it is not a meld."""
    group = tuple(cards)
    if len(group) != 3:
        return MeldCheck(group, None, f"a meld has exactly 3 cards, this group has {len(group)}")
    natural = _natural_kind_nepali(group)
    if natural:
        return MeldCheck(group, natural)
    wild_positions = [i for i, c in enumerate(group) if wilds.is_wild(c)]
    for size in range(1, len(wild_positions) + 1):
        for acting in combinations(wild_positions, size):
            naturals = [c for i, c in enumerate(group) if i not in acting]
            kind = _with_wilds_nepali(naturals)
            if kind:
                return MeldCheck(group, kind)
    return MeldCheck(group, None, _why_not_nepali(group, wilds))


def _rummy_kind(naturals: Sequence[Card], length: int) -> str | None:
    if any(c.is_joker for c in naturals):
        return None
    if not naturals:
        return SET
    if len({c.rank for c in naturals}) == 1:
        return SET
    if len({c.suit for c in naturals}) == 1 and sequence_fits([c.rank for c in naturals], length):
        return SEQUENCE
    return None


def classify_rummy_meld(cards: Sequence[Card], wilds: Wilds) -> MeldCheck:
    """Classify a rummy group of 3 or more: a life (pure sequence), a sequence or a set."""
    group = tuple(cards)
    if len(group) < 3:
        return MeldCheck(group, None, f"a meld needs at least 3 cards, this group has {len(group)}")
    natural = _rummy_kind(group, len(group))
    if natural == SEQUENCE:
        return MeldCheck(group, LIFE)
    if natural:
        return MeldCheck(group, natural)
    wild_positions = [i for i, c in enumerate(group) if wilds.is_wild(c)]
    for size in range(1, len(wild_positions) + 1):
        for acting in combinations(wild_positions, size):
            kind = _rummy_kind([c for i, c in enumerate(group) if i not in acting], len(group))
            if kind:
                return MeldCheck(group, kind)
    if len({c.suit for c in group if not wilds.is_wild(c)}) == 1:
        return MeldCheck(group, None, "ranks are not consecutive and there are too few wilds to fill the gaps")
    return MeldCheck(group, None, "neither one rank (a set) nor one suit in sequence")


def classify_group(cards: Sequence[Card], wilds: Wilds, family: str) -> MeldCheck:
    """Classify with the meld rules of ``family`` (``nepali`` or ``rummy``)."""
    if family == "rummy":
        return classify_rummy_meld(cards, wilds)
    return classify_meld(cards, wilds)


def describe(check: MeldCheck) -> str:
    """``'7H 8H 9D: not a meld: ...'`` or ``'10C JC QC: pure sequence'``."""
    if check.is_meld:
        return f"{format_cards(check.cards)}: {check.kind}"
    return f"{format_cards(check.cards)}: not a meld: {check.reason}"
