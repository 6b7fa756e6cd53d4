"""Maal points (RULES.md 2.4): what a player's cards are worth once the tiplu is known.

Each physical card counts in one line only, and the grouping that gives the
player the most points is used: a marriage is not always best.

>>> from scorer import get_rules, parse_cards, parse_card
>>> result = maal_points(parse_cards("10C JC QC QC"), get_rules(), parse_card("JC"))
>>> result.total, [(i.label, i.points) for i in result.items]
(12, [('marriage', 10), ('poplu', 2)])
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import product
from typing import Any, Iterable, Sequence

from scorer.cards import JOKER, Card, card_names
from scorer.errors import HandError
from scorer.kinds import Scoring
from scorer.messages import Message, N_
from scorer.rules import RuleSet, family_names
from scorer.wilds import Wilds, checked_hand, verify_holding_size, wild_cards

#: points for 1, 2 or 3 copies of a jhiplu or poplu face
NEIGHBOUR_POINTS = (0, 2, 5, 10)
TIPLU_SINGLE = 3
MARRIAGE_SINGLE = 10
TUNNELA_BONUS_ORDINARY = 5
TUNNELA_BONUS_JOKER = 10
TUNNELA_BONUS_NEIGHBOUR = 20

#: The words of a maal line for one copy and for several (``×n``).
COPIES_LABELS: dict[str, tuple[str, str]] = {
    "marriage": (N_("marriage"), N_("marriage ×%(n)s")),
    "tiplu": (N_("tiplu"), N_("tiplu ×%(n)s")),
    "jhiplu": (N_("jhiplu"), N_("jhiplu ×%(n)s")),
    "poplu": (N_("poplu"), N_("poplu ×%(n)s")),
    "alter": (N_("alter"), N_("alter ×%(n)s")),
    "printed joker": (N_("printed joker"), N_("printed joker ×%(n)s")),
}
DEALT_TUNNELA = N_("dealt tunnela")
#: Every template of a maal line's label (a ledger keeps labels as English text; see :func:`scorer.messages.recognise`).
LABELS: tuple[str, ...] = (DEALT_TUNNELA, *(template for pair in COPIES_LABELS.values() for template in pair))


@dataclass(frozen=True)
class MaalItem:
    """One line of a maal breakdown: a label, the cards it uses, its points."""

    label: str
    cards: tuple[Card, ...]
    points: int

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "cards": card_names(self.cards), "points": self.points}


@dataclass(frozen=True)
class MaalResult:
    """A player's maal: the total and the itemised lines that make it up."""

    total: int
    items: tuple[MaalItem, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"total": self.total, "items": [item.to_dict() for item in self.items]}


def _copies_label(label: str, n: int) -> Message:
    """The line's words for ``n`` copies: ``'tiplu'``, ``'tiplu ×2'``."""
    one, several = COPIES_LABELS[label]
    return Message(one) if n == 1 else Message(several, n=n)


def _core_items(counts: Counter[Card], rules: RuleSet, wilds: Wilds) -> list[MaalItem]:
    """Best lines for tiplu, jhiplu and poplu copies: try every number of marriages."""
    tiplu, jhiplu, poplu = wilds.tiplu, wilds.jhiplu, wilds.poplu
    assert tiplu is not None and jhiplu is not None and poplu is not None
    t, j, p = counts[tiplu], counts[jhiplu], counts[poplu]
    tiplu_points = (0, TIPLU_SINGLE, rules.number("tiplu_pair"))
    marriage_points = (0, MARRIAGE_SINGLE, rules.number("double_marriage"))
    best: list[MaalItem] = []
    best_total = -1
    for marriages in range(min(t, j, p, 2) + 1):
        items = []
        if marriages:
            items.append(MaalItem(_copies_label("marriage", marriages),
                                  (jhiplu, tiplu, poplu) * marriages, marriage_points[marriages]))
        for label, card, n, table in (("tiplu", tiplu, t, tiplu_points), ("jhiplu", jhiplu, j, NEIGHBOUR_POINTS),
                                      ("poplu", poplu, p, NEIGHBOUR_POINTS)):
            left = n - marriages
            if left:
                items.append(MaalItem(_copies_label(label, left), (card,) * left, table[left]))
        total = sum(i.points for i in items)
        if total > best_total:
            best, best_total = items, total
    return best


def _tunnela_bonus(card: Card, wilds: Wilds) -> int:
    if card in (wilds.jhiplu, wilds.poplu):
        return TUNNELA_BONUS_NEIGHBOUR
    if card in wilds.ordinary_jokers:
        return TUNNELA_BONUS_JOKER
    return TUNNELA_BONUS_ORDINARY


def maal_points(cards: Sequence[Card], rules: RuleSet, tiplu: Card, *, seen: bool = True,
                dealt_tunnelas: Iterable[Card] = ()) -> MaalResult:
    """Maal of one player's cards for a ``tiplu`` (nepali rules).

    ``dealt_tunnelas`` names cards of which the player was dealt all three
    copies and showed them before the first draw; the three copies must be in
    ``cards``. With ``tunnela_requires_seen`` (default) an unseen player gets no
    tunnela bonus; ``seen`` means seen by either route, pure melds or dublees. Whether an unseen player's maal counts at all (``murder``)
    is settled in :func:`scorer.settle.settle_round`.
    """
    if rules.scoring != Scoring.MAAL:
        raise HandError(N_("maal is part of the %(families)s rules; the %(rules)s rules score penalty points"),
                        families=family_names(scoring=Scoring.MAAL), rules=rules.name)
    wilds, counts = checked_hand(cards, rules, tiplu=tiplu)
    verify_holding_size(cards, rules)
    tunnelas = list(dict.fromkeys(dealt_tunnelas))
    for card in tunnelas:
        if card.is_joker:
            raise HandError(N_("printed jokers cannot form a dealt tunnela"))
        if counts[card] < 3:
            raise HandError(N_("dealt tunnela %(card)s: the cards hold %(n)s of its 3 copies"), card=card,
                            n=counts[card])
    if not seen and rules.flag("tunnela_requires_seen"):
        tunnelas = []
    best: list[MaalItem] = []
    best_total = -1
    # a dealt tunnela either earns its bonus (its 3 cards then count nowhere else) or not
    for claims in product((True, False), repeat=len(tunnelas)):
        left = Counter(counts)
        items = []
        for card, claimed in zip(tunnelas, claims):
            if claimed:
                left[card] -= 3
                items.append(MaalItem(Message(DEALT_TUNNELA), (card,) * 3, _tunnela_bonus(card, wilds)))
        items.extend(_core_items(left, rules, wilds))
        for card in sorted(wilds.alter, key=str):
            if left[card]:
                items.append(MaalItem(_copies_label("alter", left[card]), (card,) * left[card],
                                      rules.number("alter_points") * left[card]))
        jokers = left[JOKER] if rules.printed_jokers else 0
        if jokers:
            items.append(MaalItem(_copies_label("printed joker", jokers), (JOKER,) * jokers,
                                  rules.number("printed_joker_points") * jokers))
        total = sum(i.points for i in items)
        if total > best_total:
            best, best_total = items, total
    return MaalResult(best_total, tuple(best))


#: A tiplu away from the ends of its suit, so that both neighbours exist: any such tiplu values maal alike.
_PROBE_TIPLU = Card(5, "H")


def plausible_maal(rules: RuleSet) -> int:
    """The maal of one hand holding every maal card in play: above it a typed maal is likely a typo.

    The hand holds the tiplu's other copies, every jhiplu and poplu (their three copies
    shown as dealt tunnelas), every alter and every printed joker; the scorer values it.
    Richer hands exist (a hand of dealt tunnelas of ordinary cards), so a form asks to
    confirm a number above this rather than refusing it.

    >>> from scorer import get_rules
    >>> plausible_maal(get_rules()), plausible_maal(get_rules("nepali", {"tiplu_pair": 20}))
    (47, 60)
    """
    wilds = wild_cards(rules, tiplu=_PROBE_TIPLU)
    assert wilds.jhiplu is not None and wilds.poplu is not None
    copies = rules.decks
    cards = [_PROBE_TIPLU] * (copies - 1) + [wilds.jhiplu] * copies + [wilds.poplu] * copies
    cards += [card for alter in sorted(wilds.alter, key=str) for card in [alter] * copies]
    cards += [JOKER] * rules.printed_jokers
    tunnelas = [wilds.jhiplu, wilds.poplu] if copies >= 3 else []
    return maal_points(cards[:rules.hand_size + 1], rules, _PROBE_TIPLU, dealt_tunnelas=tunnelas).total
