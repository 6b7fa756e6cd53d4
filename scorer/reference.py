"""Plain brute-force checks: the reference the fast searches are tested against.

They try every meld that holds the first remaining card, by card positions,
with no memo, no pooling of wilds, no limit on a meld's size and no pruning.
Far too slow for the app; they exist so tests and ``bench/`` can check and time
:func:`scorer.declare.check_hand` and :func:`scorer.rummy.penalty_points`.

>>> from scorer import get_rules, parse_cards, parse_card
>>> brute_force_finishes(parse_cards("3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D"),
...                      get_rules(), tiplu=parse_card("JS"))
True
>>> hand = parse_cards("2C 3C 4C 5H 5H 5H 6H 6H 6H 7H 7H 7H KD")
>>> brute_least_penalty(hand, get_rules("rummy", {"tunnela_bonus": 3}), turned=parse_card("9D"))
1
"""

from __future__ import annotations

from itertools import combinations
from typing import Iterator, Sequence

from scorer.cards import Card
from scorer.declare import dublee_pairs
from scorer.errors import HandError
from scorer.messages import N_
from scorer.melds import classify_meld
from scorer.rules import NEPALI, MeldRules, RuleSet
from scorer.rummy import capped_penalty, card_penalty, is_tunnela
from scorer.wilds import Wilds, wild_cards


def brute_max_melds(cards: Sequence[Card], wilds: Wilds, melds: MeldRules = NEPALI.melds) -> int:
    """Most disjoint 3-card melds, by exhaustive search (small hands only)."""
    cards = list(cards)
    if len(cards) < 3:
        return 0
    first, rest = cards[0], cards[1:]
    best = brute_max_melds(rest, wilds, melds)
    for a, b in combinations(range(len(rest)), 2):
        if classify_meld((first, rest[a], rest[b]), wilds, melds).is_meld:
            remaining = [c for k, c in enumerate(rest) if k not in (a, b)]
            best = max(best, 1 + brute_max_melds(remaining, wilds, melds))
    return best


def brute_cover(cards: Sequence[Card], wilds: Wilds, melds_needed: int, pure_needed: int, discards: int,
                melds: MeldRules = NEPALI.melds) -> bool:
    """Can ``melds_needed`` 3-card melds (``pure_needed`` of them pure) cover all cards but ``discards``?"""
    cards = list(cards)
    if not cards:
        return melds_needed == 0 and pure_needed <= 0
    first, rest = cards[0], cards[1:]
    if discards and brute_cover(rest, wilds, melds_needed, pure_needed, discards - 1, melds):
        return True
    for a, b in combinations(range(len(rest)), 2):
        check = classify_meld((first, rest[a], rest[b]), wilds, melds)
        if check.is_meld:
            remaining = [c for k, c in enumerate(rest) if k not in (a, b)]
            if brute_cover(remaining, wilds, melds_needed - 1, pure_needed - check.is_pure, discards, melds):
                return True
    return False


def brute_force_finishes(cards: Sequence[Card], rules: RuleSet, *, tiplu: Card) -> bool:
    """Does a 21/22-card nepali hand finish? (7 melds, 3 pure, or 8 dublees.)"""
    family = rules.family
    if family.melds_to_finish is None or not family.melds.wilds_can_be_pooled:
        raise HandError(N_("the brute force checks finishes by 3-card melds only, not the %(rules)s rules"),
                        rules=rules.name)
    wilds = wild_cards(rules, tiplu=tiplu)
    if family.dublees_to_finish is not None and len(dublee_pairs(cards)) >= family.dublees_to_finish:
        return True
    melds = family.melds_to_finish
    return brute_cover(cards, wilds, melds, rules.pure_melds_needed, len(cards) - 3 * melds, family.melds)


def _arrangements(cards: list[Card], wilds: Wilds, melds: MeldRules
                  ) -> Iterator[tuple[list[tuple[Card, ...]], list[Card]]]:
    """Every way to set disjoint melds of any size aside: (melds, cards left over)."""
    if not cards:
        yield [], []
        return
    first, rest = cards[0], cards[1:]
    for kept, left in _arrangements(rest, wilds, melds):
        yield kept, [first, *left]
    for size in range(melds.min_size - 1, len(rest) + 1):
        for others in combinations(range(len(rest)), size):
            meld = (first, *(rest[k] for k in others))
            if classify_meld(meld, wilds, melds).is_meld:
                remaining = [c for k, c in enumerate(rest) if k not in others]
                for kept, left in _arrangements(remaining, wilds, melds):
                    yield [meld, *kept], left


def _pure_count(kept: Sequence[tuple[Card, ...]], wilds: Wilds, melds: MeldRules) -> int:
    return sum(melds.pure_melds_in(len(m)) for m in kept if classify_meld(m, wilds, melds).is_pure)


def brute_least_penalty(cards: Sequence[Card], rules: RuleSet, *, turned: Card) -> int:
    """The lowest rummy penalty over every arrangement (small hands only): the cards
    left over less the tunnela bonus, among arrangements with enough lives; every
    card when there is none; then ``max_penalty``."""
    wilds = wild_cards(rules, turned=turned)
    melds = rules.family.melds
    bonus = rules.number("tunnela_bonus")
    best = sum(card_penalty(c, rules, wilds) for c in cards)
    for kept, left in _arrangements(list(cards), wilds, melds):
        if kept and _pure_count(kept, wilds, melds) >= rules.pure_melds_needed:
            points = sum(card_penalty(c, rules, wilds) for c in left) - bonus * sum(map(is_tunnela, kept))
            best = min(best, points)
    return capped_penalty(best, rules)


def brute_every_card_melded(cards: Sequence[Card], rules: RuleSet, *, turned: Card, discards: int) -> bool:
    """Can melds with enough lives hold every card but ``discards`` of them? (small hands only)"""
    wilds = wild_cards(rules, turned=turned)
    melds = rules.family.melds
    return any(len(left) == discards and _pure_count(kept, wilds, melds) >= rules.pure_melds_needed
               for kept, left in _arrangements(list(cards), wilds, melds))
