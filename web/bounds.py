"""How big a number from a request may be: ids, maal and penalty points, running totals.

Why: a number typed on a phone or sent by a script ends in SQLite (64-bit
integers) and in the scorer's sums. A 30-digit id or a maal of ``10**30`` must be
refused at the edge with a message, not overflow deep inside. The maal and
penalty bounds are not written down here: they are asked of the scorer for the
session's own rules (its options are bounded too), so a house rule that makes a
tiplu pair worth 100 raises the bound with it.

>>> from scorer import get_rules
>>> max_maal(get_rules("nepali")) < maal_limit(get_rules("nepali")) < 1000
True
>>> max_penalty(get_rules("rummy")) == 22 * 20
True
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction
from itertools import product
from typing import Iterable

from scorer import ALL_FACES, Card, RuleSet, TipluError, get_rules, parse_card
from scorer.maal import maal_points
from scorer.rummy import card_penalty
from scorer.wilds import wild_cards

#: Row ids and round numbers: what an SQLite ``INTEGER PRIMARY KEY`` can hold.
MAX_ID = 2**63 - 1
#: Running totals stay below this (the largest integer a browser's JavaScript counts exactly).
MAX_TOTAL = 2**53 - 1
#: A typed maal or penalty may be this many times what a hand can hold: room for a
#: house bonus the scorer does not model, and nowhere near an overflow.
SLACK = 2
#: Digits in a number from a request; longer text is refused before it is parsed.
MAX_DIGITS = len(str(MAX_ID))


def parse_digits(text: str, maximum: int = MAX_ID) -> int | None:
    """``text`` as a whole number when it is ASCII digits only and at most ``maximum``; else None.

    ``str.isdigit`` accepts ``"²"`` and ``"٣"``, which ``int`` rejects or reads as 3:
    only 0-9 count here.

    >>> parse_digits("42"), parse_digits("²"), parse_digits("٣"), parse_digits("9" * 30), parse_digits("-1")
    (42, None, None, None, None)
    """
    if not text or len(text) > MAX_DIGITS or not (text.isascii() and text.isdigit()):
        return None
    number = int(text)
    return number if number <= maximum else None


def _key(rules: RuleSet) -> tuple[str, tuple[tuple[str, object], ...]]:
    return rules.name, tuple(sorted(rules.options.items()))


def _hand_cards(rules: RuleSet) -> int:
    """The most cards one player's line can be about: the hand and the card drawn."""
    return rules.hand_size + 1


def _probes(rules: RuleSet, tiplu: Card) -> Iterable[tuple[list[Card], list[Card]]]:
    """Small hands of maal cards (with claimed dealt tunnelas) whose items cover every kind of maal line."""
    wilds = wild_cards(rules, tiplu=tiplu)
    assert wilds.jhiplu is not None and wilds.poplu is not None
    for t, j, p in product(range(3), range(4), range(4)):
        yield [tiplu] * t + [wilds.jhiplu] * j + [wilds.poplu] * p, []
    others = sorted(set(wilds.alter) | set(wilds.ordinary_jokers), key=str)
    for card in others:
        for n in (1, 2, 3):
            yield [card] * n, []
    for card in [wilds.jhiplu, wilds.poplu, *others, parse_card("9S")]:
        yield [card] * 3, [card]
    for n in range(1, rules.printed_jokers + 1):
        yield [parse_card("JOKER")] * n, []


@functools.lru_cache(maxsize=256)
def _max_maal(key: tuple[str, tuple[tuple[str, object], ...]]) -> int:
    rules = get_rules(key[0], dict(key[1]))
    tiplu = parse_card("5H")
    best = Fraction(0)
    for cards, tunnelas in _probes(rules, tiplu):
        try:
            result = maal_points(cards, rules, tiplu, seen=True, dealt_tunnelas=tunnelas)
        except TipluError:
            continue
        for item in result.items:
            best = max(best, Fraction(item.points, len(item.cards)))
    return math.ceil(best * _hand_cards(rules))


def max_maal(rules: RuleSet) -> int:
    """More than any hand can hold under ``rules``: the scorer's best maal per card times the cards in a hand.

    Every maal line the scorer gives (a marriage, a tiplu pair, a dealt tunnela...)
    is valued on a small probe hand; no hand beats its best line per card on every card.
    """
    return _max_maal(_key(rules))


def maal_limit(rules: RuleSet) -> int:
    """The largest maal a request may type: :func:`max_maal` with :data:`SLACK`."""
    return SLACK * max_maal(rules)


@functools.lru_cache(maxsize=256)
def _max_penalty(key: tuple[str, tuple[tuple[str, object], ...]]) -> int:
    rules = get_rules(key[0], dict(key[1]))
    turned = parse_card("7D")
    wilds = wild_cards(rules, turned=turned)
    return max(card_penalty(card, rules, wilds) for card in ALL_FACES) * _hand_cards(rules)


def max_penalty(rules: RuleSet) -> int:
    """The most penalty a hand can score under ``rules``: the scorer's dearest unmatched card, every card."""
    return _max_penalty(_key(rules))


def penalty_limit(rules: RuleSet) -> int:
    """The largest penalty a request may type: :func:`max_penalty` with :data:`SLACK`."""
    return SLACK * max_penalty(rules)
