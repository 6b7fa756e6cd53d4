"""Does a declared hand finish? The seeing check and the declare check.

Nepali (RULES.md 2.3): 21 cards mean "already discarded", 22 mean the checker
chooses the discard; any other count is bad input, with a grouping too. A hand
finishes with 7 melds of which at least 3 are pure, or with 8 dublees, whichever
way the player saw: the check judges the hand, not its history. Rummy (RULES.md
3): every card in melds of 3 or more with at least one life (two with ``two_lives``).
The counts come from the rule family (:class:`~scorer.rules.RuleFamily`).

>>> from scorer import get_rules, parse_cards, parse_card
>>> hand = parse_cards("3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D")
>>> result = check_hand(hand, get_rules(), tiplu=parse_card("JS"))
>>> result.valid, str(result.route)
(True, 'melds')
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from itertools import combinations_with_replacement
from typing import Any, Sequence

from scorer.cards import Card, card_names, check_copies, format_cards
from scorer.errors import HandError
from scorer.kinds import Route
from scorer.messages import Message, N_
from scorer.melds import MeldCheck, classify_meld, describe
from scorer.partition import Meld, Partitioner, leftover
from scorer.rules import NEPALI, MeldRules, RuleSet, family_names
from scorer.wilds import Wilds, checked_hand

MELDS = Route.MELDS
DUBLEES = Route.DUBLEES


@dataclass(frozen=True)
class DeclareResult:
    """The verdict on a declaration.

    When ``valid`` is False, ``melds`` is the closest arrangement found,
    ``unmatched`` the cards it leaves out and ``reason`` what is missing.
    """

    valid: bool
    route: Route | None
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
    raise HandError(N_("a declared hand has %(size)s cards (already discarded) or %(drawn)s "
                       "(the checker picks the discard); this one has %(n)s"), size=size, drawn=size + 1, n=len(cards))


def dublee_pairs(cards: Sequence[Card]) -> list[tuple[Card, Card]]:
    """Every pair of identical cards, each played as its own face (RULES.md 2.1).

    Two identical wilds pair as well as two naturals: two tiplus, two jhiplus and, where
    ``printed_jokers`` puts them in play, two printed jokers. A wild never completes a
    pair of different cards, so an odd card is left unpaired.

    >>> from scorer import parse_cards
    >>> [f"{a} {b}" for a, b in dublee_pairs(parse_cards("JOKER 5D JOKER 5D 5D 9C"))]
    ['5D 5D', 'JOKER JOKER']
    """
    pairs = []
    for card, n in sorted(Counter(cards).items(), key=lambda kv: str(kv[0])):
        pairs.extend([(card, card)] * (n // 2))
    return pairs


def is_dublee(group: Sequence[Card]) -> bool:
    """Is a laid group a dublee: exactly two identical cards?

    >>> from scorer import parse_cards
    >>> is_dublee(parse_cards("7H 7H")), is_dublee(parse_cards("7H 7H 7H")), is_dublee(parse_cards("7H 7D"))
    (True, False, False)
    """
    return len(group) == 2 and group[0] == group[1]


def _dublee_route_closed(rules: RuleSet, players: int | None) -> Message | None:
    """None when the dublee route is open, else why it is closed."""
    if not rules.family.dublee_route:
        return Message(N_("the %(rules)s rules have no dublee finish"), rules=rules.name)
    minimum = rules.number("dublee_min_players")
    if players is not None and players < minimum:
        return Message(N_("the dublee route needs at least %(n)s players (option dublee_min_players)"), n=minimum)
    return None


def history_note(rules: RuleSet) -> Message:
    """RULES.md 2.3: the check judges the hand as it is, whichever way the player saw.

    >>> from scorer import get_rules
    >>> history_note(get_rules())
    'tiplu checks the hand, not its history: a finish needs 3 pure melds among the 7, or 8 dublees, whichever way the player saw'
    """
    family = rules.family
    if family.dublees_to_finish is None:
        return Message(N_("tiplu checks the hand, not its history: a finish needs %(pure)s pure melds "
                          "among the %(melds)s, whichever way the player saw"),
                       pure=rules.pure_melds_needed, melds=family.melds_to_finish)
    return Message(N_("tiplu checks the hand, not its history: a finish needs %(pure)s pure melds "
                      "among the %(melds)s, or %(dublees)s dublees, whichever way the player saw"),
                   pure=rules.pure_melds_needed, melds=family.melds_to_finish, dublees=family.dublees_to_finish)


def _too_few_pure(pure: int, rules: RuleSet) -> Message:
    return Message(N_("only %(pure)s pure melds, %(needed)s needed (pure sequences or tunnelas); %(note)s"),
                   pure=pure, needed=rules.pure_melds_needed, note=history_note(rules))


def _verify_players(rules: RuleSet, players: int | None) -> None:
    if players is not None:
        rules.verify_players(players)


def _pick_discard(cards: Sequence[Card], used: Sequence[Sequence[Card]], discards: int) -> Card | None:
    if not discards:
        return None
    rest = leftover(cards, used)
    return rest[0] if rest else None


def check_hand(cards: Sequence[Card], rules: RuleSet, *, tiplu: Card | None = None,
               turned: Card | None = None, players: int | None = None,
               discard: Card | None = None) -> DeclareResult:
    """Check whether a 21/22-card hand finishes; an exact search, never greedy.

    ``players`` (at the table) must be within the rule set's range; it decides
    whether the dublee route is open (option ``dublee_min_players``). A ``discard``
    given is set apart, as with :func:`check_grouping`: the cards and the discard
    together are the hand (21 or 22 cards), and no other card is left out.

    >>> from scorer import get_rules, parse_card, parse_cards
    >>> pairs = parse_cards("2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H 8D 8D 9C 9C KS QH AD 10S")
    >>> result = check_hand(pairs, get_rules(), tiplu=parse_card("JC"), discard=parse_card("3C"))
    >>> result.valid, str(result.route), str(result.discard)
    (True, 'dublees', '3C')
    """
    _verify_players(rules, players)
    hand = [*cards, discard] if discard is not None else list(cards)
    wilds, _ = checked_hand(hand, rules, tiplu=tiplu, turned=turned)
    discards = _discards_for(hand, rules)
    if discard is not None:
        discards = 0  # the discard is chosen already: every other card counts
    search = Partitioner(cards, wilds, rules.family.melds)
    if rules.family.melds_to_finish is None:
        result = _check_every_card_melded(cards, rules, search, discards)
    else:
        result = _check_meld_count(cards, rules, rules.family.melds_to_finish, search, discards, players)
    return result if discard is None or not result.valid else replace(result, discard=discard)


def _check_meld_count(cards: Sequence[Card], rules: RuleSet, melds_needed: int, search: Partitioner,
                      discards: int, players: int | None) -> DeclareResult:
    """A finish by ``melds_needed`` melds with enough pure ones, or by dublees (nepali)."""
    pure_needed = rules.pure_melds_needed
    pure_search = pure_melds_search(cards, rules.family.melds)
    closest = search.best_partial()
    melds, pure = _find_melds(search, pure_search, melds_needed, pure_needed) \
        if len(closest) >= melds_needed else (None, 0)
    if melds is not None and pure >= pure_needed:
        return DeclareResult(True, MELDS, tuple(melds), _pick_discard(cards, melds, discards), None)
    pairs = dublee_pairs(cards)
    dublee_block = _dublee_route_closed(rules, players)
    dublees_needed = rules.family.dublees_to_finish
    if dublees_needed is not None and len(pairs) >= dublees_needed and not dublee_block:
        chosen = pairs[:dublees_needed]
        return DeclareResult(True, DUBLEES, tuple(chosen), _pick_discard(cards, chosen, discards), None)
    closest = melds if melds is not None else closest
    pure = sum(1 for m in closest if classify_meld(m, search.wilds, search.melds).is_pure)
    unmatched = leftover(cards, closest)
    if (dublees_needed is not None and not dublee_block and len(pairs) >= dublees_needed - 2
            and len(pairs) / dublees_needed > len(closest) / melds_needed):
        rest = leftover(cards, pairs)
        return DeclareResult(False, None, tuple(pairs), None,
                             Message(N_("only %(n)s dublees, %(needed)s needed: %(cards)s unpaired"),
                                     n=len(pairs), needed=dublees_needed, cards=format_cards(rest)), tuple(rest))
    reason: Message
    if len(closest) >= melds_needed:
        reason = _too_few_pure(pure, rules)
    else:
        missing = melds_needed - len(closest)
        left = format_cards(unmatched)
        reason = Message(N_("needs one more meld: %(cards)s unmatched"), cards=left) if missing == 1 else \
            Message(N_("needs %(n)s more melds: %(cards)s unmatched"), n=missing, cards=left)
        natural = len(pure_search.best_partial())
        if natural < pure_needed:
            reason = Message(N_("%(reason)s; the hand holds only %(natural)s pure melds, %(needed)s needed; %(note)s"),
                             reason=reason, natural=natural, needed=pure_needed, note=history_note(rules))
    if dublee_block and dublees_needed is not None and len(pairs) >= dublees_needed:
        reason = Message(N_("%(reason)s; its %(n)s dublees would finish, but %(why)s"), reason=reason,
                         n=len(pairs), why=dublee_block)
    return DeclareResult(False, None, tuple(closest), None, reason, tuple(unmatched))


def pure_melds_search(cards: Sequence[Card], melds: MeldRules = NEPALI.melds) -> Partitioner:
    """A search over the pure melds only (pure sequences and tunnelas of natural faces).

    No card acts as a wild in a pure meld, so no wilds are needed to find them.
    """
    return Partitioner(cards, Wilds(wild_faces=frozenset()), melds, only_pure=True)


def find_melds(cards: Sequence[Card], wilds: Wilds, melds_needed: int, pure_needed: int,
               melds: MeldRules = NEPALI.melds) -> tuple[list[Meld] | None, int]:
    """``melds_needed`` disjoint melds with as many pure ones as possible
    (up to ``pure_needed``) and that number; (None, 0) when there are not enough melds.

    Pure melds use no wild acting as a wild, so they are few: try each choice of
    up to ``pure_needed`` of them, then ask whether the rest holds the other melds.
    """
    return _find_melds(Partitioner(cards, wilds, melds), pure_melds_search(cards, melds), melds_needed, pure_needed)


def _find_melds(search: Partitioner, pure_search: Partitioner, melds_needed: int,
                pure_needed: int) -> tuple[list[Meld] | None, int]:
    pure_melds = pure_search.all_melds()
    for want in range(pure_needed, -1, -1):
        for chosen in combinations_with_replacement(pure_melds, want):
            others = search.reach(melds_needed - want, without=chosen)
            if others is not None:
                return [*chosen, *others], want
    return None, 0


def _lives(count: int) -> Message:
    return Message(N_("%(n)s life"), n=count) if count == 1 else Message(N_("%(n)s lives"), n=count)


def _check_every_card_melded(cards: Sequence[Card], rules: RuleSet, search: Partitioner,
                             discards: int) -> DeclareResult:
    """A close with every card (but the discard) in melds and enough lives (rummy)."""
    lives = rules.pure_melds_needed
    melds = search.cover(lives, discards)
    if melds is not None:
        return DeclareResult(True, MELDS, tuple(melds), _pick_discard(cards, melds, discards), None)
    closest = search.best_partial()
    found = sum(1 for m in closest if classify_meld(m, search.wilds, search.melds).is_pure)
    unmatched = leftover(cards, closest)
    if found < lives:
        reason = Message(N_("needs %(lives)s (pure sequence), found %(found)s"), lives=_lives(lives), found=found)
        if len(unmatched) > discards:
            reason = Message(N_("%(reason)s; %(cards)s unmatched"), reason=reason, cards=format_cards(unmatched))
    else:
        reason = Message(N_("%(cards)s unmatched: every card must be in a meld"), cards=format_cards(unmatched))
    return DeclareResult(False, None, tuple(closest), None, reason, tuple(unmatched))


def check_grouping(groups: Sequence[Sequence[Card]], rules: RuleSet, *, tiplu: Card | None = None,
                   turned: Card | None = None, discard: Card | None = None,
                   players: int | None = None) -> DeclareResult:
    """Judge the melds as the player laid them on the table.

    Each group is classified on its own; the first wrong group is named with
    its reason ("group 3 (7H 8H 9D): not a meld: ..."). The groups and the
    discard together are the whole hand: 21 or 22 cards (nepali), else
    :class:`HandError`, as with :func:`check_hand`. In a 22-card grouping with
    no discard given, a card alone in its group is the discard (RULES.md 2.3).
    A dublee finish needs 8 of
    the groups to be dublees; the other cards lie as the player likes and are
    not judged (RULES.md 2.3), so a hand laid with pairs is judged as dublees.

    >>> from scorer import get_rules, parse_card, parse_cards
    >>> pairs = [parse_cards(f"{face} {face}") for face in "2S 3H 4D 5C 6S 7H 8D 9C".split()]
    >>> result = check_grouping([*pairs, parse_cards("KS QH AD 10S 4C")], get_rules(), tiplu=parse_card("JC"),
    ...                         discard=parse_card("3C"))
    >>> result.valid, str(result.route), str(result.discard)
    (True, 'dublees', '3C')
    """
    _verify_players(rules, players)
    all_cards = [c for g in groups for c in g] + ([discard] if discard is not None else [])
    wilds, _ = checked_hand(all_cards, rules, tiplu=tiplu, turned=turned)
    discards = _discards_for(all_cards, rules)
    family = rules.family
    laid = tuple(tuple(g) for g in groups)
    if _laid_as_dublees(laid, rules):
        return _judge_dublees(laid, all_cards, discard, rules, players)
    lone = [g for g in laid if len(g) == 1]
    if discards and discard is None and len(lone) == 1:
        discard, laid = lone[0][0], tuple(g for g in laid if len(g) != 1)
    checks = tuple(classify_meld(g, wilds, family.melds) for g in laid)

    def refused(reason: Message) -> DeclareResult:
        return DeclareResult(False, None, laid, discard, reason, groups=checks)

    for number, check in enumerate(checks, 1):
        if not check.is_meld:
            return refused(Message(N_("group %(n)s (%(group)s)"), n=number, group=describe(check)))
    placed = sum(len(g) for g in laid)
    pure = sum(family.melds.pure_melds_in(len(c.cards)) for c in checks if c.is_pure)
    pure_needed = rules.pure_melds_needed
    if family.melds_to_finish is None:
        if placed != rules.hand_size:
            return refused(Message(N_("the melds hold %(placed)s cards; all %(size)s must be melded"),
                                   placed=placed, size=rules.hand_size))
        if pure < pure_needed:
            return refused(Message(N_("needs %(lives)s (pure sequence), found %(found)s"),
                                   lives=_lives(pure_needed), found=pure))
        return DeclareResult(True, MELDS, laid, discard, None, groups=checks)
    if len(laid) != family.melds_to_finish:
        return refused(Message(N_("a finish needs %(n)s melds, %(laid)s were laid"), n=family.melds_to_finish,
                               laid=len(laid)))
    if pure < pure_needed:
        return refused(_too_few_pure(pure, rules))
    return DeclareResult(True, MELDS, laid, discard, None, groups=checks)


def _laid_as_dublees(laid: Sequence[Sequence[Card]], rules: RuleSet) -> bool:
    """Did the player lay a dublee finish rather than melds?

    Yes when the family has the dublee route and the pairs laid are enough for one
    (8 in nepali), or when no group holds more than two cards: 7 pairs and loose
    cards are told they are a dublee short, not that a pair is no meld. A pair is
    never a meld in the nepali family, so neither layout can finish by melds.

    >>> from scorer import get_rules, parse_cards
    >>> pairs = [parse_cards("7H 7H")] * 8
    >>> _laid_as_dublees([*pairs, parse_cards("2S 9D KC AH 4C")], get_rules())
    True
    >>> _laid_as_dublees([*pairs[:7], parse_cards("2S 9D KC"), parse_cards("AH 4C 5C")], get_rules())
    False
    """
    needed = rules.family.dublees_to_finish
    if needed is None:
        return False
    pairs = sum(1 for g in laid if len(g) == 2)
    return pairs >= needed or (pairs > 0 and all(len(g) <= 2 for g in laid))


def _judge_dublees(groups: tuple[tuple[Card, ...], ...], hand: Sequence[Card], discard: Card | None,
                   rules: RuleSet, players: int | None) -> DeclareResult:
    """A dublee finish as laid (RULES.md 2.3): 8 of the groups must be dublees; the
    other cards may lie in any groups, or loose, and are not judged. The discard is
    no group, so it never makes a dublee; with 22 cards and no discard given the
    checker picks one of the cards not in the dublees (a loose one first)."""
    block = _dublee_route_closed(rules, players)
    if block:
        return DeclareResult(False, None, groups, discard, block)
    needed = rules.family.dublees_to_finish or 0
    dublees = [n for n, g in enumerate(groups) if is_dublee(g)]
    if len(dublees) >= needed:
        if discard is None and _discards_for(hand, rules):
            others = [g for n, g in enumerate(groups) if n not in dublees[:needed]]
            discard = ([g[0] for g in others if len(g) == 1] or [c for g in others for c in g])[0]
        return DeclareResult(True, DUBLEES, groups, discard, None)
    odd = next(((n, g) for n, g in enumerate(groups, 1) if len(g) == 2 and not is_dublee(g)), None)
    if odd is None:
        reason = Message(N_("only %(n)s dublees, %(needed)s needed"), n=len(dublees), needed=needed)
    else:
        number, pair = odd
        why = Message(N_("group %(n)s (%(cards)s): a dublee is two identical cards, each its own face "
                         "(a wild never completes a pair)"), n=number, cards=format_cards(pair))
        reason = Message(N_("only %(n)s dublees, %(needed)s needed; %(why)s"), n=len(dublees), needed=needed,
                         why=why)
    return DeclareResult(False, None, groups, discard, reason)


@dataclass(frozen=True)
class SeeResult:
    """Can the player see the tiplu? ``shown`` are the 3 pure melds or 7 dublees."""

    can_see: bool
    route: Route | None
    shown: tuple[tuple[Card, ...], ...]
    reason: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"can_see": self.can_see, "route": self.route,
                "shown": [card_names(m) for m in self.shown], "reason": self.reason}


def can_see(cards: Sequence[Card], rules: RuleSet, *, players: int | None = None) -> SeeResult:
    """The seeing check (RULES.md 2.3): 3 pure melds of natural cards or 7 dublees.

    The tiplu is not known yet, so no card is wild here.

    >>> from scorer import get_rules, parse_cards
    >>> can_see(parse_cards("3S 4S 5S 6H 6H 6H QD KD AD 2C"), get_rules()).route
    <Route.MELDS: 'melds'>
    """
    family = rules.family
    if family.pure_melds_to_see is None or family.dublees_to_see is None:
        raise HandError(N_("seeing the tiplu is part of the %(rules)s rules only"), rules=family_names(seeing=True))
    _verify_players(rules, players)
    check_copies(cards, rules.decks, rules.printed_jokers)
    pure_needed, dublees_needed = family.pure_melds_to_see, family.dublees_to_see
    pure = pure_melds_search(cards, family.melds).best_partial()
    if len(pure) >= pure_needed:
        return SeeResult(True, MELDS, tuple(pure[:pure_needed]), None)
    pairs = dublee_pairs(cards)
    dublee_block = _dublee_route_closed(rules, players)
    if len(pairs) >= dublees_needed and not dublee_block:
        return SeeResult(True, DUBLEES, tuple(pairs[:dublees_needed]), None)
    counts = {"pure": len(pure), "pure_needed": pure_needed, "dublees": len(pairs), "dublees_needed": dublees_needed}
    reason = Message(N_("only %(pure)s pure melds (%(pure_needed)s needed) and %(dublees)s dublees "
                        "(%(dublees_needed)s needed; %(why)s)"), why=dublee_block, **counts) if dublee_block else \
        Message(N_("only %(pure)s pure melds (%(pure_needed)s needed) and %(dublees)s dublees "
                   "(%(dublees_needed)s needed)"), **counts)
    return SeeResult(False, None, tuple(pure), reason)
