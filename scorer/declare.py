"""Does a declared hand finish? The seeing check and the declare check.

Nepali (RULES.md 2.3): 21 cards mean "already discarded", 22 mean the checker
chooses the discard. A hand finishes with 7 melds of which at least 3 are pure,
or with 8 dublees. Rummy (RULES.md 3): every card in melds of 3 or more with at
least one life (two with ``two_lives``).

>>> from scorer import get_rules, parse_cards, parse_card
>>> hand = parse_cards("3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D")
>>> result = check_hand(hand, get_rules(), tiplu=parse_card("JS"))
>>> result.valid, str(result.route)
(True, 'melds')
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from dataclasses import dataclass
from typing import Any, Sequence

from scorer.cards import Card, card_names, check_copies, format_cards
from scorer.errors import HandError
from scorer.kinds import Route
from scorer.melds import MeldCheck, classify_group, describe
from scorer.partition import Partitioner, leftover
from scorer.rules import RuleSet
from scorer.wilds import Wilds, checked_hand

MELDS = Route.MELDS
DUBLEES = Route.DUBLEES
NEPALI_MELDS = 7
NEPALI_PURE = 3
DUBLEES_TO_FINISH = 8
DUBLEES_TO_SEE = 7


@dataclass(frozen=True)
class DeclareResult:
    """The verdict on a declaration.

    When ``valid`` is False, ``melds`` is the closest arrangement found,
    ``unmatched`` the cards it leaves out and ``reason`` what is missing.
    """

    valid: bool
    route: str | None
    melds: tuple[tuple[Card, ...], ...]
    discard: Card | None
    reason: str | None
    unmatched: tuple[Card, ...] = ()
    groups: tuple[MeldCheck, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The CLI and API shape: valid, route, melds, discard, reason."""
        return {"valid": self.valid, "route": self.route,
                "melds": [card_names(m) for m in self.melds],
                "discard": None if self.discard is None else str(self.discard),
                "reason": self.reason}


def _discards_for(cards: Sequence[Card], rules: RuleSet) -> int:
    size = rules.hand_size
    if len(cards) == size:
        return 0
    if len(cards) == size + 1:
        return 1
    raise HandError(f"a declared hand has {size} cards (already discarded) or {size + 1} "
                    f"(the checker picks the discard); this one has {len(cards)}")


def dublee_pairs(cards: Sequence[Card]) -> list[tuple[Card, Card]]:
    """Every pair of identical natural cards; printed jokers never pair."""
    pairs = []
    for card, n in sorted(Counter(cards).items(), key=lambda kv: str(kv[0])):
        if not card.is_joker:
            pairs.extend([(card, card)] * (n // 2))
    return pairs


def _dublee_route_allowed(rules: RuleSet, players: int | None) -> str | None:
    if rules.name != "nepali":
        return "the rummy rules have no dublee finish"
    minimum = rules["dublee_min_players"]
    if players is not None and players < minimum:
        return f"the dublee route needs at least {minimum} players (option dublee_min_players)"
    return None


def _pick_discard(cards: Sequence[Card], used: Sequence[Sequence[Card]], discards: int) -> Card | None:
    if not discards:
        return None
    rest = leftover(cards, used)
    return rest[0] if rest else None


def check_hand(cards: Sequence[Card], rules: RuleSet, *, tiplu: Card | None = None,
               turned: Card | None = None, players: int | None = None) -> DeclareResult:
    """Check whether a 21/22-card hand finishes; an exact search, never greedy."""
    wilds, _ = checked_hand(cards, rules, tiplu=tiplu, turned=turned)
    discards = _discards_for(cards, rules)
    if rules.name == "rummy":
        return _check_rummy(cards, rules, wilds, discards)
    closest = Partitioner(cards, wilds, "nepali").best_partial()
    melds, pure = find_melds(cards, wilds, NEPALI_MELDS, NEPALI_PURE) if len(closest) >= NEPALI_MELDS else (None, 0)
    if melds is not None and pure >= NEPALI_PURE:
        return DeclareResult(True, MELDS, tuple(melds), _pick_discard(cards, melds, discards), None)
    pairs = dublee_pairs(cards)
    dublee_block = _dublee_route_allowed(rules, players)
    if len(pairs) >= DUBLEES_TO_FINISH and not dublee_block:
        chosen = pairs[:DUBLEES_TO_FINISH]
        return DeclareResult(True, DUBLEES, tuple(chosen), _pick_discard(cards, chosen, discards), None)
    closest = melds if melds is not None else closest
    pure = sum(1 for m in closest if classify_group(m, wilds, "nepali").is_pure)
    unmatched = leftover(cards, closest)
    if len(pairs) >= 6 and len(pairs) / DUBLEES_TO_FINISH > len(closest) / NEPALI_MELDS and not dublee_block:
        rest = leftover(cards, pairs)
        return DeclareResult(False, None, tuple(pairs), None,
                             f"only {len(pairs)} dublees, {DUBLEES_TO_FINISH} needed: "
                             f"{format_cards(rest)} unpaired", tuple(rest))
    if len(closest) >= NEPALI_MELDS:
        reason = f"only {pure} pure melds, {NEPALI_PURE} needed (pure sequences or tunnelas)"
    else:
        missing = NEPALI_MELDS - len(closest)
        plural = "meld" if missing == 1 else "melds"
        more = "one more" if missing == 1 else f"{missing} more"
        reason = f"needs {more} {plural}: {format_cards(unmatched)} unmatched"
        natural = len(pure_melds_search(cards).best_partial())
        if natural < NEPALI_PURE:
            reason += f"; the hand holds only {natural} pure melds, {NEPALI_PURE} needed"
    return DeclareResult(False, None, tuple(closest), None, reason, tuple(unmatched))


def pure_melds_search(cards: Sequence[Card]) -> Partitioner:
    """A search over the pure melds only (pure sequences and tunnelas of natural faces).

    No card acts as a wild in a pure meld, so no wilds are needed to find them.
    """
    return Partitioner(cards, Wilds(wild_faces=frozenset()), "nepali", only_pure=True)


def find_melds(cards: Sequence[Card], wilds: Wilds, melds_needed: int,
               pure_needed: int) -> tuple[list[tuple[Card, ...]] | None, int]:
    """``melds_needed`` disjoint nepali melds with as many pure ones as possible
    (up to ``pure_needed``) and that number; (None, 0) when there are not enough melds.

    Pure melds use no wild acting as a wild, so they are few: try each choice of
    up to ``pure_needed`` of them, then ask whether the rest holds the other melds.
    """
    pure_melds = pure_melds_search(cards).all_melds()
    search = Partitioner(cards, wilds, "nepali")
    for want in range(pure_needed, -1, -1):
        for chosen in combinations_with_replacement(pure_melds, want):
            others = search.reach(melds_needed - want, without=chosen)
            if others is not None:
                return [*chosen, *others], want
    return None, 0


def _lives_needed(rules: RuleSet) -> int:
    return 2 if rules["two_lives"] else 1


def _check_rummy(cards: Sequence[Card], rules: RuleSet, wilds: Wilds, discards: int) -> DeclareResult:
    search = Partitioner(cards, wilds, "rummy")
    lives = _lives_needed(rules)
    melds = search.cover(lives, discards)
    if melds is not None:
        return DeclareResult(True, MELDS, tuple(melds), _pick_discard(cards, melds, discards), None)
    closest = search.best_partial()
    found = sum(1 for m in closest if classify_group(m, wilds, "rummy").is_pure)
    unmatched = leftover(cards, closest)
    if found < lives:
        noun = "life" if lives == 1 else "lives"
        reason = f"needs {lives} {noun} (pure sequence), found {found}"
        if len(unmatched) > discards:
            reason += f"; {format_cards(unmatched)} unmatched"
    else:
        reason = f"{format_cards(unmatched)} unmatched: every card must be in a meld"
    return DeclareResult(False, None, tuple(closest), None, reason, tuple(unmatched))


def check_grouping(groups: Sequence[Sequence[Card]], rules: RuleSet, *, tiplu: Card | None = None,
                   turned: Card | None = None, discard: Card | None = None,
                   players: int | None = None) -> DeclareResult:
    """Judge the melds as the player laid them on the table.

    Each group is classified on its own; the first wrong group is named with
    its reason ("group 3 (7H 8H 9D): not a meld: ...").
    """
    all_cards = [c for g in groups for c in g] + ([discard] if discard is not None else [])
    wilds, _ = checked_hand(all_cards, rules, tiplu=tiplu, turned=turned)
    family = rules.name
    groups = [tuple(g) for g in groups]
    if family == "nepali" and groups and all(len(g) == 2 for g in groups):
        return _judge_dublees(groups, discard, rules, players)
    checks = tuple(classify_group(g, wilds, family) for g in groups)
    for number, check in enumerate(checks, 1):
        if not check.is_meld:
            return DeclareResult(False, None, tuple(groups), discard,
                                 f"group {number} ({describe(check)})", groups=checks)
    placed = sum(len(g) for g in groups)
    pure = sum(1 for c in checks if c.is_pure)
    if family == "rummy":
        if placed != rules.hand_size:
            return DeclareResult(False, None, tuple(groups), discard,
                                 f"the melds hold {placed} cards; all {rules.hand_size} must be melded", groups=checks)
        lives = _lives_needed(rules)
        if pure < lives:
            return DeclareResult(False, None, tuple(groups), discard,
                                 f"needs {lives} {'life' if lives == 1 else 'lives'} (pure sequence), found {pure}",
                                 groups=checks)
        return DeclareResult(True, MELDS, tuple(groups), discard, None, groups=checks)
    if len(groups) != NEPALI_MELDS:
        return DeclareResult(False, None, tuple(groups), discard,
                             f"a finish needs {NEPALI_MELDS} melds, {len(groups)} were laid", groups=checks)
    if pure < NEPALI_PURE:
        return DeclareResult(False, None, tuple(groups), discard,
                             f"only {pure} pure melds, {NEPALI_PURE} needed (pure sequences or tunnelas)",
                             groups=checks)
    return DeclareResult(True, MELDS, tuple(groups), discard, None, groups=checks)


def _judge_dublees(groups: Sequence[tuple[Card, ...]], discard: Card | None, rules: RuleSet,
                   players: int | None) -> DeclareResult:
    block = _dublee_route_allowed(rules, players)
    if block:
        return DeclareResult(False, None, tuple(groups), discard, block)
    for number, pair in enumerate(groups, 1):
        if pair[0] != pair[1] or pair[0].is_joker:
            return DeclareResult(False, None, tuple(groups), discard,
                                 f"group {number} ({format_cards(pair)}): a dublee is two identical natural cards")
    if len(groups) < DUBLEES_TO_FINISH:
        return DeclareResult(False, None, tuple(groups), discard,
                             f"only {len(groups)} dublees, {DUBLEES_TO_FINISH} needed")
    return DeclareResult(True, DUBLEES, tuple(groups), discard, None)


@dataclass(frozen=True)
class SeeResult:
    """Can the player see the tiplu? ``shown`` are the 3 pure melds or 7 dublees."""

    can_see: bool
    route: str | None
    shown: tuple[tuple[Card, ...], ...]
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"can_see": self.can_see, "route": self.route,
                "shown": [card_names(m) for m in self.shown], "reason": self.reason}


def can_see(cards: Sequence[Card], rules: RuleSet, *, players: int | None = None) -> SeeResult:
    """The seeing check (RULES.md 2.3): 3 pure melds of natural cards or 7 dublees.

    The tiplu is not known yet, so no card is wild here.
    """
    if rules.name != "nepali":
        raise HandError("seeing the tiplu is part of the nepali rules only")
    check_copies(cards, rules.decks, rules.printed_jokers)
    pure = pure_melds_search(cards).best_partial()
    if len(pure) >= NEPALI_PURE:
        return SeeResult(True, MELDS, tuple(pure[:NEPALI_PURE]), None)
    pairs = dublee_pairs(cards)
    if len(pairs) >= DUBLEES_TO_SEE and not _dublee_route_allowed(rules, players):
        return SeeResult(True, DUBLEES, tuple(pairs[:DUBLEES_TO_SEE]), None)
    return SeeResult(False, None, tuple(pure),
                     f"only {len(pure)} pure melds ({NEPALI_PURE} needed) and {len(pairs)} dublees "
                     f"({DUBLEES_TO_SEE} needed)")

