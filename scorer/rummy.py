"""Rummy-family penalty scoring (RULES.md 3): the cards a non-closer is left with.

The app finds the arrangement with the lowest penalty. Without a life (a pure
sequence) every card in hand counts.

>>> from scorer import get_rules, parse_cards, parse_card
>>> result = penalty_points(parse_cards("3S 4S 5S 9H 9D 9C KH 2D"), get_rules("rummy"), parse_card("7D"))
>>> result.penalty, [str(c) for c in result.unmatched]
(12, ['KH', '2D'])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from scorer.cards import Card, card_names
from scorer.errors import HandError
from scorer.kinds import Scoring
from scorer.partition import Partitioner, leftover
from scorer.rules import RuleSet, family_names
from scorer.wilds import Wilds, checked_hand


@dataclass(frozen=True)
class PenaltyResult:
    """A non-closer's penalty, the melds that saved the rest, and what was left."""

    penalty: int
    melds: tuple[tuple[Card, ...], ...]
    unmatched: tuple[Card, ...]
    tunnelas: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"penalty": self.penalty, "melds": [card_names(m) for m in self.melds],
                "unmatched": card_names(self.unmatched)}


def card_penalty(card: Card, rules: RuleSet, wilds: Wilds) -> int:
    """Penalty of one unmatched card: 2-10 face value, J Q K 10, ace 1 or 10, wild 20."""
    if wilds.is_wild(card):
        return rules.number("unmatched_joker_points")
    if card.rank == 1:
        return rules.number("ace_points")
    return min(card.rank, 10)


def penalty_points(cards: Sequence[Card], rules: RuleSet, turned: Card) -> PenaltyResult:
    """The lowest penalty over every arrangement of ``cards`` (rummy rules)."""
    if rules.scoring != Scoring.PENALTY:
        raise HandError(f"penalty points are part of the {family_names(scoring=Scoring.PENALTY)} rules; "
                        f"the {rules.name} rules count maal")
    wilds, _ = checked_hand(cards, rules, turned=turned)
    if len(cards) > rules.hand_size + 1:
        raise HandError(f"a hand has at most {rules.hand_size + 1} cards; this one has {len(cards)}")
    penalty, melds = Partitioner(cards, wilds, rules.family.melds).least_left(lambda c: card_penalty(c, rules, wilds), 1)
    unmatched = leftover(cards, melds)
    tunnelas = sum(1 for m in melds if len(m) == 3 and m[0] == m[1] == m[2] and not wilds.is_wild(m[0]))
    bonus = rules.number("tunnela_bonus") * tunnelas
    return PenaltyResult(max(penalty - bonus, 0), tuple(melds), tuple(unmatched), tunnelas)

