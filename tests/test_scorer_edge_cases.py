"""The engine's edge cases: five cases the engine once got wrong and nine points RULES.md
clarifies, table-driven like the RULES.md examples."""

from __future__ import annotations

import pytest

from scorer import (RULE_FAMILIES, HandError, MeldKind, OptionError, PlayerCountError, PlayerRound, Route,
                    get_rules, parse_card, parse_cards)
from scorer.declare import can_see, check_grouping, check_hand, dublee_pairs
from scorer.maal import maal_points
from scorer.melds import classify_meld
from scorer.rummy import penalty_points
from scorer.settle import settle_round
from scorer.wilds import wild_cards

JC = parse_card("JC")
TIPLU_5C = parse_card("5C")
SEVEN_D = parse_card("7D")
VALID_21 = "AS 2S 3S | QH KH AH | 6H 6H 6H | 9D 10D JD | KS KD KC | 7C 8C 5D | 2H 2D 5H"
DUBLEES = "AS AS 2H 2H 3D 3D 4C 4C 7S 7S 8H 8H 9D 9D KC KC 10S JH QD 6S 3C"


def _groups(text: str) -> list[list]:
    return [parse_cards(group) for group in text.split("|")]


# --- bug 1: the rummy tunnela bonus is part of the search -------------------------------

@pytest.mark.parametrize("cards, turned, options, penalty, tunnelas", [
    # the hand: a life and three tunnelas leave only KD (10 - 3 x 3); the old code
    # chose three 5H-6H-7H runs and gave 10
    ("2C 3C 4C 5H 5H 5H 6H 6H 6H 7H 7H 7H KD", "9D", {"tunnela_bonus": 3}, 1, 3),
    ("2C 3C 4C 5H 5H 5H 6H 6H 6H 7H 7H 7H KD", "9D", {}, 10, 0),
    # a tunnela of joker-rank cards counts: 20 - 15 beats the set KD 8H 8H 8H (QC 10)
    ("3S 4S 5S 8H 8H 8H KD QC", "7D", {"tunnela_bonus": 15}, 5, 1),
    # three printed jokers are no tunnela
    ("3S 4S 5S JOKER JOKER JOKER KD QC", "7D", {"tunnela_bonus": 15}, 10, 0),
    # the set of four (nothing left) beats a tunnela and 9C (9 - 3); a set of four is no tunnela
    ("3S 4S 5S 9H 9H 9H 9C", "7D", {"tunnela_bonus": 3}, 0, 0),
])
def test_tunnela_bonus_is_part_of_the_search(cards: str, turned: str, options: dict, penalty: int,
                                             tunnelas: int) -> None:
    result = penalty_points(parse_cards(cards), get_rules("rummy", options), parse_card(turned))
    assert (result.penalty, result.tunnelas) == (penalty, tunnelas)


# --- bug 3 and clarification: 21 or 22 cards, also with a grouping ---------------------

@pytest.mark.parametrize("groups, discard, outcome", [
    (VALID_21, None, True),
    (VALID_21.replace("| 2H 2D 5H", ""), None, "this one has 18"),
    (VALID_21, "JS", True),
    # the 24 dublee cards, and 40, finished with exit 0 before
    ("2S 2S | 3H 3H | 4D 4D | 5C 5C | 6S 6S | 7H 7H | 8D 8D | 9C 9C | KS KS | QH QH | JD JD | 10C 10C",
     None, "this one has 24"),
    ("2S 2S | 3H 3H | 4D 4D | 5C 5C | 6S 6S | 7H 7H | 8D 8D | 9C 9C | KS KS | QH QH | JD JD | 10C 10C | "
     "2D 2D | 3S 3S | 4H 4H | 6C 6C | 7S 7S | 8H 8H | 9D 9D | KC KC", None, "this one has 40"),
    # 8 dublees alone are 16 cards: the other 5 belong to the hand too
    ("2S 2S | 3H 3H | 4D 4D | 6C 6C | 6S 6S | 7H 7H | 8D 8D | 9C 9C", None, "this one has 16"),
    ("2S 2S | 3H 3H | 4D 4D | 6C 6C | 6S 6S | 7H 7H | 8D 8D | 9C 9C | KS KS | QH QH", "JD", True),
])
def test_a_grouping_is_a_whole_hand(groups: str, discard: str | None, outcome: bool | str) -> None:
    def check() -> bool:
        return check_grouping(_groups(groups), get_rules(), tiplu=TIPLU_5C,
                              discard=None if discard is None else parse_card(discard)).valid
    if isinstance(outcome, str):
        with pytest.raises(HandError, match=outcome):
            check()
    else:
        assert check() is outcome


# --- bug 4: players within the rule set's range -----------------------------------------

RUMMY_HAND = "3S 4S 5S 6S 7S 9H 9D 9C 10H JH QH KH 2D 2C 2S 5D 6D 7D 4C 4C 4D"


@pytest.mark.parametrize("family, players, ok", [
    ("nepali", 40, False), ("nepali", 0, False), ("nepali", -1, False), ("nepali", 6, False),
    ("nepali", 2, True), ("nepali", 5, True), ("rummy", 2, False), ("rummy", 6, True), ("rummy", 7, False),
])
def test_players_are_range_checked(family: str, players: int, ok: bool) -> None:
    rules = get_rules(family)
    hand = parse_cards(DUBLEES if family == "nepali" else RUMMY_HAND)
    groups = [hand[k:k + 3] for k in range(0, 21, 3)]
    wild = {"tiplu": JC} if family == "nepali" else {"turned": parse_card("10S")}
    if ok:
        assert check_hand(hand, rules, players=players, **wild).valid
        assert check_grouping(groups, rules, players=players, **wild).reason is not None
    else:
        # --players 40 let the dublee hand finish, 0 and -1 refused it as "does not finish"
        with pytest.raises(PlayerCountError, match=f"the {family} rules need .* players, got {players}"):
            check_hand(hand, rules, players=players, **wild)
        with pytest.raises(PlayerCountError):
            check_grouping(groups, rules, players=players, **wild)


def test_six_players_need_players_max_six() -> None:
    assert check_hand(parse_cards(DUBLEES), get_rules("nepali", {"players_max": 6}), tiplu=JC, players=6).valid


# --- bug 5: maal refuses more cards than a hand plus one draw --------------------------------

@pytest.mark.parametrize("count, outcome", [(22, 10), (23, "at most 22 cards"), (100, "this one has 100")])
def test_maal_refuses_a_holding_larger_than_a_hand(count: int, outcome: int | str) -> None:
    filler = [card for card in parse_cards("2S 3S 4S 5S 6S 7S 8S 9S 2H 3H 4H 5H 6H 7H 8H 9H 2D 3D 4D 5D 6D 7D "
                                           "8D 9D 2C 3C 4C 5C 6C 7C 8C 9C KS KH KD") for _ in range(3)]
    cards = (parse_cards("10C JC QC") + filler)[:count]
    if isinstance(outcome, str):
        with pytest.raises(HandError, match=outcome):
            maal_points(cards, get_rules(), JC)
    else:
        assert maal_points(cards, get_rules(), JC).total == outcome


# --- can_see names the player minimum -------------------------------------------------------

def test_can_see_says_the_dublee_route_needs_more_players() -> None:
    result = can_see(parse_cards(DUBLEES), get_rules("nepali", {"dublee_min_players": 4}), players=3)
    assert not result.can_see
    assert result.reason == ("only 0 pure melds (3 needed) and 8 dublees (7 needed; the dublee route needs at "
                             "least 4 players (option dublee_min_players))")


# --- clarification: two identical wilds and a wild; a pair of identical wilds is a dublee --

@pytest.mark.parametrize("cards, kind", [
    ("10C 10C JD", MeldKind.WILD_MELD),  # two jhiplus and an ordinary joker: two wilds + any card
    ("JC JC 4S", MeldKind.WILD_MELD),  # two tiplus and any card
    ("QC QC 5H", MeldKind.WILD_MELD),  # two poplus
    ("5D 5D JD", None),  # two identical natural cards and a wild never
    ("6H 6H JH", None),  # a tunnela completed by a wild
])
def test_two_identical_wilds_and_a_wild_make_a_meld(cards: str, kind: MeldKind | None) -> None:
    assert classify_meld(parse_cards(cards), wild_cards(get_rules(), tiplu=JC)).kind == kind


SEVEN_PAIRS = "AS AS 2H 2H 3D 3D 4C 4C 7S 7S 8H 8H 9D 9D"
SEVEN_PAIRS_LAID = "AS AS | 2H 2H | 3D 3D | 4C 4C | 7S 7S | 8H 8H | 9D 9D"


@pytest.mark.parametrize("pair, is_dublee", [
    ("JC JC", True),  # two tiplus
    ("10C 10C", True),  # two jhiplus
    ("JD JD", True),  # two ordinary jokers
    ("5D JD", False),  # a wild never completes a pair
    ("JOKER JOKER", True),  # two printed jokers (with printed_jokers)
])
def test_a_pair_of_identical_wilds_is_a_dublee(pair: str, is_dublee: bool) -> None:
    rules = get_rules("nepali", {"printed_jokers": 2})
    result = check_hand(parse_cards(f"{SEVEN_PAIRS} {pair} KC QD 6S 10S 3C"), rules, tiplu=JC)
    assert (result.valid, result.route) == ((True, Route.DUBLEES) if is_dublee else (False, None))
    assert (tuple(parse_cards(pair)) in dublee_pairs(parse_cards(pair))) is is_dublee
    laid = check_grouping(_groups(f"{SEVEN_PAIRS_LAID} | {pair} | KC QD | 6S 10S"), rules, tiplu=JC,
                          discard=parse_card("3C"))
    assert (laid.valid, laid.route) == ((True, Route.DUBLEES) if is_dublee else (False, None))
    if not is_dublee:
        assert laid.reason == (f"only 7 dublees, 8 needed; group 8 ({pair}): a dublee is two identical cards, "
                               f"each its own face (a wild never completes a pair)")


# --- clarification: tiplu checks the hand, not its history ------------------------------

SEES_BY_MELDS_FINISHES_BY_DUBLEES = "3S 4S 5S 3S 4S 5S 6H 6H 6H 9D 9D KC KC 2H 2H 8C 8C QD 7S 10H AC"
SEES_BY_DUBLEES_TWO_PURE = "AS 2S 3S 6H 6H 6H 9D 10D 5S 9D 10D 5S KS KD 4C KS KD 4C 7H 8H 6C"
THREE_PURE_AND_SEVEN_DUBLEES = SEES_BY_DUBLEES_TWO_PURE.replace("6C", "9H")
NOT_HISTORY = ("tiplu checks the hand, not its history: a finish needs 3 pure melds among the 7, or 8 dublees, "
               "whichever way the player saw")


@pytest.mark.parametrize("hand, sees_by, valid, route, reason", [
    (SEES_BY_MELDS_FINISHES_BY_DUBLEES, Route.MELDS, True, Route.DUBLEES, None),
    (SEES_BY_DUBLEES_TWO_PURE, Route.DUBLEES, False, None,
     f"only 2 pure melds, 3 needed (pure sequences or tunnelas); {NOT_HISTORY}"),
    (THREE_PURE_AND_SEVEN_DUBLEES, Route.MELDS, True, Route.MELDS, None),
    (DUBLEES, Route.DUBLEES, True, Route.DUBLEES, None),
])
def test_the_check_judges_the_hand_not_how_the_player_saw(hand: str, sees_by: Route, valid: bool,
                                                         route: Route | None, reason: str | None) -> None:
    cards = parse_cards(hand)
    assert can_see(cards, get_rules()).route is sees_by
    result = check_hand(cards, get_rules(), tiplu=TIPLU_5C)
    assert (result.valid, result.route, result.reason) == (valid, route, reason)


def test_a_hand_short_of_melds_and_pure_melds_says_so() -> None:
    hand = "AS 2S 3S  QH QS QD  6H 6H 6H  9D 9S 9H  KS KD KC  7C 8C 5D  2H 7D 10S"
    reason = check_hand(parse_cards(hand), get_rules(), tiplu=TIPLU_5C).reason or ""
    assert reason.startswith("needs one more meld: ") and reason.endswith(
        f"; the hand holds only 2 pure melds, 3 needed; {NOT_HISTORY}")


def test_a_laid_grouping_short_of_pure_melds_says_so() -> None:
    groups = _groups("AS 2S 3S | QH QS QD | 6H 6H 6H | 9D 9S 9H | KS KD KC | 7C 8C 5D | 2H 2D 5H")
    result = check_grouping(groups, get_rules(), tiplu=TIPLU_5C)
    assert result.reason == f"only 2 pure melds, 3 needed (pure sequences or tunnelas); {NOT_HISTORY}"


# --- clarification: the dealt-tunnela bonus for a player who saw by either route ----------

@pytest.mark.parametrize("hand, route", [
    ("6H 6H 6H 3S 4S 5S QD KD AD 2C", Route.MELDS),
    ("6H 6H 6H AS AS 2H 2H 3D 3D 4C 4C 7S 7S 8H 8H", Route.DUBLEES),
])
def test_dealt_tunnela_bonus_after_seeing_by_either_route(hand: str, route: Route) -> None:
    cards = parse_cards(hand)
    seen = can_see(cards, get_rules())
    assert seen.route is route
    result = maal_points(cards, get_rules(), JC, seen=seen.can_see, dealt_tunnelas=[parse_card("6H")])
    assert [(item.label, item.points) for item in result.items] == [("dealt tunnela", 5)]


# --- clarification: murder and kidnap exclude each other --------------------------------

@pytest.mark.parametrize("options, refused", [
    ({"murder": True, "kidnap": True}, True), ({"murder": "on", "kidnap": "yes"}, True),
    ({"murder": True, "kidnap": False}, False), ({"murder": False, "kidnap": True}, False),
])
def test_murder_and_kidnap_exclude_each_other(options: dict, refused: bool) -> None:
    if refused:
        with pytest.raises(OptionError, match="options murder and kidnap exclude each other: turn one of them off"):
            get_rules("nepali", options)
    else:
        assert get_rules("nepali", options).changed_options() == {k: v for k, v in options.items() if v}


# --- rummy clarifications ------------------------------------------------------------------

@pytest.mark.parametrize("cards, options, penalty", [
    ("3S 4S 5S 8H", {}, 20),  # the joker rank (8) is wild in every suit by default
    ("3S 4S 5S 8H", {"joker_same_suit": True}, 8),  # only 8D is wild: 8H is a natural 8
    ("3S 4S 5S 8D", {"joker_same_suit": True}, 20),
    ("3C 4C 5C 9S 10S 8H KD", {}, 10),  # 9S 10S 8H is a sequence with the wild...
    ("3C 4C 5C 9S 10S 8H KD", {"joker_same_suit": True}, 9 + 10 + 8 + 10),  # ...not with joker_same_suit
])
def test_joker_same_suit(cards: str, options: dict, penalty: int) -> None:
    assert penalty_points(parse_cards(cards), get_rules("rummy", options), SEVEN_D).penalty == penalty


@pytest.mark.parametrize("cards, two_lives, penalty", [
    ("3S 4S 5S 9H 9D 9C KH 2D", False, 12),
    ("3S 4S 5S 9H 9D 9C KH 2D", True, 3 + 4 + 5 + 9 + 9 + 9 + 10 + 2),  # one life keeps no meld
    ("3S 4S 5S 6H 7H 8H 9C 9D 9S KH", True, 10),
    ("3S 4S 5S 6S 7S 8S KH", True, 10),  # a pure run of 6 splits into two lives
])
def test_two_lives_for_a_non_closer(cards: str, two_lives: bool, penalty: int) -> None:
    rules = get_rules("rummy", {"two_lives": two_lives})
    assert penalty_points(parse_cards(cards), rules, SEVEN_D).penalty == penalty


RUN_OF_SIX = "3S 4S 5S 6S 7S 8S | 9H 9D 9C | 10H QH JS | 2D 2C 2S | 5D 6D JD | KC KC KD"


@pytest.mark.parametrize("laid, valid", [
    (RUN_OF_SIX, True),  # the run of six counts as two lives
    (RUN_OF_SIX.replace("8S | 9H 9D 9C", "| 9H 9D 9C 9S"), False),  # a run of five is one life
])
def test_a_long_pure_run_may_be_split_into_two_lives(laid: str, valid: bool) -> None:
    rules = get_rules("rummy", {"two_lives": True})
    cards = [c for g in _groups(laid) for c in g]
    assert check_grouping(_groups(laid), rules, turned=parse_card("10S")).valid is valid
    assert check_hand(cards, rules, turned=parse_card("10S")).valid is valid


@pytest.mark.parametrize("cards, max_penalty, penalty", [
    ("3S 4H 5S 9H KD QD JC", 0, 51), ("3S 4H 5S 9H KD QD JC", 40, 40), ("3S 4H 5S 9H KD QD JC", 80, 51),
    ("3S 4S 5S KD", 5, 5),
])
def test_max_penalty_caps_a_non_closer(cards: str, max_penalty: int, penalty: int) -> None:
    rules = get_rules("rummy", {"max_penalty": max_penalty})
    assert penalty_points(parse_cards(cards), rules, SEVEN_D).penalty == penalty


def test_max_penalty_caps_a_typed_penalty_in_settlement() -> None:
    players = [PlayerRound("A"), PlayerRound("B", penalty=95), PlayerRound("C", penalty=30, wrong_close=True)]
    settlement = settle_round(get_rules("rummy", {"max_penalty": 80}), players, "A", None)
    assert settlement.net == {"A": 0, "B": 80, "C": 30 + 80}
    assert [(a.player, a.before, a.after) for a in settlement.adjustments] == [("B", 95, 80), ("C", 30, 110)]


@pytest.mark.parametrize("no_dublee", [False, True])
def test_no_dublee_is_shown_but_not_scored(no_dublee: bool) -> None:
    rules = get_rules("rummy", {"no_dublee": no_dublee})
    assert "nothing to score" in RULE_FAMILIES["rummy"].option("no_dublee").help
    assert penalty_points(parse_cards("3S 4S 5S 9H 9D 9C KH 2D"), rules, SEVEN_D).penalty == 12
    assert check_hand(parse_cards("3S 4S 5S 6S 7S 9H 9D 9C 10H JH QH KH 2D 2C 2S 5D 6D 7D 4C 4C 4D"), rules,
                      turned=parse_card("10S")).valid
