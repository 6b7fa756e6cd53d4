"""Meld classification, with the reason a group is *not* a meld.

One classifier serves every family; it reads the family's :class:`~scorer.rules.MeldRules`.
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
>>> classify_meld(parse_cards("5D 5D JD"), w, get_rules("rummy").family.melds).kind
<MeldKind.SET: 'set'>
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from scorer.cards import Card, format_cards
from scorer.kinds import PURE_KINDS, MeldKind
from scorer.messages import Message, N_
from scorer.rules import NEPALI, RUMMY, MeldRules
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


def _one_rank_set(cards: Sequence[Card], melds: MeldRules) -> bool:
    """Cards of one rank that may form a set: all suits different unless sets may repeat suits."""
    return len({c.rank for c in cards}) == 1 and (melds.sets_repeat_suits or len({c.suit for c in cards}) == len(cards))


def _natural_kind(cards: Sequence[Card], melds: MeldRules) -> MeldKind | None:
    """The kind of a group read with every card as its own face."""
    if any(c.is_joker for c in cards):
        return None
    if all(c == cards[0] for c in cards):
        return TUNNELA
    if len({c.suit for c in cards}) == 1 and sequence_fits([c.rank for c in cards], len(cards)):
        return PURE_SEQUENCE
    if _one_rank_set(cards, melds):
        return TRIPLET
    return None


def _kind_with_wilds(naturals: Sequence[Card], length: int, melds: MeldRules) -> MeldKind | None:
    """The kind of a meld of ``length`` cards whose other cards are wilds standing in."""
    if any(c.is_joker for c in naturals):
        return None
    if len(naturals) <= 1:
        return WILD_MELD
    if len({c.suit for c in naturals}) == 1 and sequence_fits([c.rank for c in naturals], length):
        return DIRTY_SEQUENCE
    if _one_rank_set(naturals, melds):
        return DIRTY_TRIPLET
    return None


def _why_not_three(cards: Sequence[Card], wilds: Wilds) -> Message:
    """Why a group is no meld, where melds have exactly 3 cards."""
    wild_count = sum(1 for c in cards if wilds.is_wild(c))
    naturals = [c for c in cards if not wilds.is_wild(c)]
    if wild_count and len(naturals) == 2 and naturals[0] == naturals[1]:
        return Message(N_("two identical cards and a wild never make a meld"))
    ranks = {c.rank for c in cards}
    suits = [c.suit for c in cards]
    if len(ranks) == 1:
        return Message(N_("a triplet needs three different suits"))
    if len(set(suits)) == 1:
        ordered = sorted(ranks)
        if 13 in ordered and 1 in ordered and 2 in ordered:
            return Message(N_("a sequence does not wrap from K to A to 2"))
        if wild_count:
            return Message(N_("ranks are not consecutive even with the wild"))
        return Message(N_("ranks are not consecutive"))
    if wild_count:
        return Message(N_("the other two cards are neither one suit within 2 ranks nor one rank"))
    return Message(N_("mixed suits and ranks, and no wild card to fill in"))


def _why_not_longer(cards: Sequence[Card], wilds: Wilds) -> Message:
    """Why a group is no meld, where melds may be longer than 3 cards."""
    if len({c.suit for c in cards if not wilds.is_wild(c)}) == 1:
        return Message(N_("ranks are not consecutive and there are too few wilds to fill the gaps"))
    return Message(N_("neither one rank (a set) nor one suit in sequence"))


def meld_kind(cards: Sequence[Card], wilds: Wilds, melds: MeldRules = NEPALI.melds) -> MeldKind | None:
    """The kind of meld ``cards`` make under ``melds``, or None: :func:`classify_meld`
    without the reason, for searches that try many groups.

    >>> from scorer import get_rules, parse_cards, parse_card
    >>> from scorer.wilds import wild_cards
    >>> meld_kind(parse_cards("2C 2D QC"), wild_cards(get_rules(), tiplu=parse_card("JC")))
    <MeldKind.DIRTY_TRIPLET: 'dirty triplet'>
    """
    if len(cards) < melds.min_size or (melds.max_size is not None and len(cards) > melds.max_size):
        return None
    natural = _natural_kind(cards, melds)
    if natural:
        return melds.name(natural)
    wild_positions = [i for i, c in enumerate(cards) if wilds.is_wild(c)]
    for size in range(1, len(wild_positions) + 1):
        for acting in combinations(wild_positions, size):
            kind = _kind_with_wilds([c for i, c in enumerate(cards) if i not in acting], len(cards), melds)
            if kind:
                return melds.name(kind)
    return None


def classify_meld(cards: Sequence[Card], wilds: Wilds, melds: MeldRules = NEPALI.melds) -> MeldCheck:
    """Classify a group with the meld rules ``melds`` (nepali's by default);
    ``reason`` says why it is not a meld."""
    group = tuple(cards)
    kind = meld_kind(group, wilds, melds)
    if kind is not None:
        return MeldCheck(group, kind)
    if len(group) < melds.min_size or (melds.max_size is not None and len(group) > melds.max_size):
        if melds.min_size == melds.max_size:
            return MeldCheck(group, None, Message(N_("a meld has exactly %(size)s cards, this group has %(n)s"),
                                                  size=melds.min_size, n=len(group)))
        return MeldCheck(group, None, Message(N_("a meld needs at least %(size)s cards, this group has %(n)s"),
                                              size=melds.min_size, n=len(group)))
    reason = _why_not_three(group, wilds) if melds.max_size == 3 else _why_not_longer(group, wilds)
    return MeldCheck(group, None, reason)


def classify_rummy_meld(cards: Sequence[Card], wilds: Wilds) -> MeldCheck:
    """Classify a rummy group of 3 or more: a life (pure sequence), a sequence or a set."""
    return classify_meld(cards, wilds, RUMMY.melds)


def classify_group(cards: Sequence[Card], wilds: Wilds, melds: MeldRules) -> MeldCheck:
    """Classify with the meld rules ``melds`` (a family's :attr:`~scorer.rules.RuleFamily.melds`)."""
    return classify_meld(cards, wilds, melds)


def describe(check: MeldCheck) -> Message:
    """``'7H 8H 9D: not a meld: ...'`` or ``'10C JC QC: pure sequence'`` (the kind's name as the rules spell it)."""
    if check.is_meld:
        return Message(N_("%(cards)s: %(kind)s"), cards=format_cards(check.cards), kind=str(check.kind))
    return Message(N_("%(cards)s: not a meld: %(why)s"), cards=format_cards(check.cards), why=check.reason)
