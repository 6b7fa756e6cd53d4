"""Rummy-family penalty scoring (RULES.md 3): the cards a non-closer is left with.

The app finds the arrangement with the lowest penalty after every bonus: the
``tunnela_bonus`` for each tunnela kept is part of the search, and a player
without a life (two with ``two_lives``) keeps no meld, so every card counts.
``max_penalty`` then caps the round's penalty.

>>> from scorer import get_rules, parse_cards, parse_card
>>> result = penalty_points(parse_cards("3S 4S 5S 9H 9D 9C KH 2D"), get_rules("rummy"), parse_card("7D"))
>>> result.penalty, [str(c) for c in result.unmatched]
(12, ['KH', '2D'])
>>> hand = parse_cards("2C 3C 4C 5H 5H 5H 6H 6H 6H 7H 7H 7H KD")
>>> penalty_points(hand, get_rules("rummy", {"tunnela_bonus": 3}), parse_card("9D")).penalty
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from scorer.cards import Card, card_names
from scorer.errors import HandError
from scorer.kinds import Scoring
from scorer.messages import N_
from scorer.partition import Meld, Partitioner, leftover
from scorer.rules import RuleSet, family_names
from scorer.wilds import Wilds, checked_hand, verify_holding_size


@dataclass(frozen=True)
class PenaltyResult:
    """A non-closer's penalty, the melds that saved the rest, and what was left.

    ``tunnelas`` is how many tunnelas the melds keep (each earns the ``tunnela_bonus``).
    """

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


def is_tunnela(meld: Sequence[Card]) -> bool:
    """Exactly 3 identical natural cards (a joker-rank face counts; printed jokers do not).

    >>> from scorer import parse_cards
    >>> is_tunnela(parse_cards("8H 8H 8H")), is_tunnela(parse_cards("8H 8H 8H 8S"))
    (True, False)
    """
    return len(meld) == 3 and not meld[0].is_joker and meld[0] == meld[1] == meld[2]


def capped_penalty(points: int, rules: RuleSet) -> int:
    """A round's penalty after ``max_penalty`` (0: no cap), never below 0."""
    cap = rules.number("max_penalty")
    return max(min(points, cap) if cap else points, 0)


def penalty_points(cards: Sequence[Card], rules: RuleSet, turned: Card) -> PenaltyResult:
    """The lowest penalty over every arrangement of ``cards`` (rummy rules)."""
    if rules.scoring != Scoring.PENALTY:
        raise HandError(N_("penalty points are part of the %(families)s rules; the %(rules)s rules count maal"),
                        families=family_names(scoring=Scoring.PENALTY), rules=rules.name)
    wilds, _ = checked_hand(cards, rules, turned=turned)
    verify_holding_size(cards, rules)
    bonus = rules.number("tunnela_bonus")

    def meld_bonus(meld: Meld) -> int:
        return bonus if is_tunnela(meld) else 0

    penalty, melds = Partitioner(cards, wilds, rules.family.melds).least_left(
        lambda c: card_penalty(c, rules, wilds), rules.pure_melds_needed, meld_bonus)
    unmatched = leftover(cards, melds)
    tunnelas = sum(1 for m in melds if is_tunnela(m))
    return PenaltyResult(capped_penalty(penalty, rules), tuple(melds), tuple(unmatched), tunnelas)
