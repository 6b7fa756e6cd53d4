"""Dublee finishes, printed jokers and rummy penalties: one table per clarification of RULES.md.

1. a dublee finish as laid: 8 of the groups are dublees, the other cards lie as the
   player likes; 2. two printed jokers are a dublee; 3. ``max_penalty`` caps the cards'
   points only, a wrong close is added on top; 4. a penalty never goes below 0, whatever
   the ``tunnela_bonus``; 5. ``hand_size`` 21 with ``two_decks`` is bad input.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest

from scorer import (RULE_FAMILIES, HandError, OptionError, Route, TooManyCopiesError, get_rules, parse_card,
                    parse_cards)
from scorer.declare import can_see, check_grouping, check_hand, dublee_pairs
from scorer.reference import brute_force_finishes
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from web.cli import main

ROOT = Path(__file__).resolve().parent.parent
JC = parse_card("JC")
#: 8 dublees laid as pairs (tiplu JC: no wild among them).
EIGHT = "2S 2S | 3H 3H | 4D 4D | 5C 5C | 6S 6S | 7H 7H | 8D 8D | 9C 9C"
SEVEN = EIGHT.rsplit(" | ", 1)[0]
NOT_A_PAIR = "a dublee is two identical cards, each its own face (a wild never completes a pair)"


def _groups(text: str) -> list[list]:
    return [parse_cards(group) for group in text.split("|")]


def _tiplu(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    code = main(list(args), stdin=StringIO(""), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# --- 1. a dublee finish as laid ----------------------------------------------------------

@pytest.mark.parametrize("laid, discard, outcome", [
    # the reproduction: the other 5 cards as one group
    (f"{EIGHT} | KS QH AD 10S 3C", None, (True, None)),
    # ... as loose cards, as two odd pairs and a loose card, as a meld and an odd pair
    (f"{EIGHT} | KS | QH | AD | 10S | 3C", None, (True, None)),
    (f"{EIGHT} | KS QH | AD 10S | 3C", None, (True, None)),
    (f"{EIGHT} | QS KS AS | 4H 10C", None, (True, None)),
    # the other cards are not judged: wilds, a 9th dublee, a group of four
    (f"{EIGHT} | JC JD 10C QC 2H", None, (True, None)),
    (f"{EIGHT} | KS KS | QH AD 10S", None, (True, None)),
    (f"{EIGHT} | KS QH AD 10S", "3C", (True, "3C")),  # 22 cards, the discard given
    # 22 cards, none given: the checker picks one of the cards beside the dublees, a loose one first
    (f"{EIGHT} | KS QH AD 10S 3C 4C", None, (True, "KS")),
    (f"{EIGHT} | KS QH AD 10S 3C | 4C", None, (True, "4C")),
    (f"{EIGHT} | KS KS | 3C QH | AD 10S", None, (True, "KS")),  # a 9th dublee is one of the other cards
    # the dublees may be laid in any order among the other groups
    ("KS QH | 2S 2S | 3H 3H | AD | 4D 4D | 5C 5C | 6S 6S | 10S 3C | 7H 7H | 8D 8D | 9C 9C", None, (True, None)),
    # fewer than 8 dublees: the odd pair that falls short is named, else the count
    (f"{SEVEN} | 9C 9D | KS QH AD 10S 3C", None,
     (False, f"only 7 dublees, 8 needed; group 8 (9C 9D): {NOT_A_PAIR}")),
    (f"{SEVEN} | 9C JC | KS QH AD 10S 3C", None,  # JC is the tiplu: a wild never completes a pair
     (False, f"only 7 dublees, 8 needed; group 8 (9C JC): {NOT_A_PAIR}")),
    (f"{SEVEN} | 9C | 9D | KS | QH | AD | 10S | 3C", None, (False, "only 7 dublees, 8 needed")),
    # the discard is no group: it never completes a dublee with a loose card
    (f"{SEVEN} | 9C | KS | QH | AD | 10S | 3C", "9C", (False, "only 7 dublees, 8 needed")),
    # 7 pairs among melds: judged as melds, as before
    (f"{SEVEN} | KS QH AD 4C | 10S 3C 9C", None, (False, "group 1 (2S 2S: not a meld: a meld has exactly 3 cards, "
                                                      "this group has 2)")),
])
def test_a_dublee_finish_is_judged_as_laid(laid: str, discard: str | None, outcome: tuple[bool, str | None]) -> None:
    result = check_grouping(_groups(laid), get_rules(), tiplu=JC,
                            discard=None if discard is None else parse_card(discard))
    valid, detail = outcome
    assert result.valid is valid
    assert result.melds == tuple(map(tuple, _groups(laid)))
    if valid:
        assert (result.route, result.reason) == (Route.DUBLEES, None)
        assert (None if result.discard is None else str(result.discard)) == detail
    else:
        assert (result.route, result.reason) == (None, detail)


@pytest.mark.parametrize("laid, discard, error", [
    (f"{EIGHT} | KS QH AD 10S", None, HandError),  # 20 cards: the other 5 are part of the hand
    (f"{EIGHT} | KS QH AD 10S 3C 4C 5D", None, HandError),  # 23
    (f"{EIGHT} | KS QH AD 10S 3C 4C", "5D", HandError),  # 22 and a discard
    (f"{EIGHT} | 2S 2S KS QH AD", None, TooManyCopiesError),  # a fourth 2S among the cards not judged
])
def test_the_cards_beside_the_dublees_still_count(laid: str, discard: str | None, error: type) -> None:
    with pytest.raises(error):
        check_grouping(_groups(laid), get_rules(), tiplu=JC, discard=None if discard is None else parse_card(discard))


@pytest.mark.parametrize("rules, players, reason", [
    ("nepali", None, None),
    ("nepali", 3, "the dublee route needs at least 4 players (option dublee_min_players)"),
])
def test_a_closed_dublee_route_refuses_a_laid_dublee_finish(rules: str, players: int | None,
                                                           reason: str | None) -> None:
    result = check_grouping(_groups(f"{EIGHT} | KS QH AD 10S 3C"), get_rules(rules, {"dublee_min_players": 4}),
                            tiplu=JC, players=players)
    assert (result.valid, result.reason) == (reason is None, reason)


def test_rummy_has_no_dublee_finish() -> None:
    groups = _groups(f"{EIGHT} | KS QH AD 10S 3C")
    result = check_grouping(groups, get_rules("rummy"), turned=parse_card("10S"))
    assert not result.valid and result.reason.startswith("group 1 (2S 2S: not a meld")


@pytest.mark.parametrize("odd, code, verdict", [
    (["KS", "QH", "AD", "10S", "3C"], 0, "finishes (dublees)"),  # the reproduction exited 1
    (["KS", "|", "QH", "|", "AD", "|", "10S", "|", "3C"], 0, "finishes (dublees)"),
    (["KS", "QH", "|", "AD", "10S", "|", "3C"], 0, "finishes (dublees)"),
])
def test_tiplu_check_passes_a_dublee_finish_as_laid(odd: list[str], code: int, verdict: str) -> None:
    pairs = " | ".join(EIGHT.split(" | ")).split()
    exit_code, out, err = _tiplu("check", "--tiplu", "JC", *pairs, "|", *odd)
    assert (exit_code, err) == (code, "")
    assert out.startswith(verdict)


def test_tiplu_check_names_the_discard_it_picks() -> None:
    code, out, _ = _tiplu("check", "--tiplu", "JC", "--json", *EIGHT.split(), "|", *"KS QH AD 10S 3C 4C".split())
    result = json.loads(out)
    assert (code, result["valid"], result["route"], result["discard"]) == (0, True, "dublees", "KS")


# --- 2. two printed jokers are a dublee ----------------------------------------------------

SEVEN_PAIRS = "2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H 8D 8D"


@pytest.mark.parametrize("printed, cards, dublees", [
    (2, "JOKER JOKER", 8),
    (3, "JOKER JOKER JOKER", 8),  # three make one pair and an odd card
    (1, "JOKER 9C", 7),  # a joker never completes a pair of different cards
    (2, "JOKER 9C", 7),
    (0, "9C 9D", 7),
])
def test_two_printed_jokers_are_a_dublee(printed: int, cards: str, dublees: int) -> None:
    rules = get_rules("nepali", {"printed_jokers": printed})
    hand = parse_cards(f"{SEVEN_PAIRS} {cards}")
    hand += parse_cards("KS QH AD 10S 3C 4C")[:21 - len(hand)]
    assert len(hand) == 21
    assert len(dublee_pairs(hand)) == dublees
    result = check_hand(hand, rules, tiplu=JC)
    assert (result.valid, result.route) == ((True, Route.DUBLEES) if dublees == 8 else (False, None))
    assert brute_force_finishes(hand, rules, tiplu=JC) is result.valid


@pytest.mark.parametrize("laid, valid, reason", [
    (f"{SEVEN} | JOKER JOKER | KS QH AD 10S 3C", True, None),
    (f"{SEVEN} | KS JOKER | JOKER QH AD 10S 3C", False,
     f"only 7 dublees, 8 needed; group 8 (KS JOKER): {NOT_A_PAIR}"),
])
def test_two_printed_jokers_laid_as_a_pair_are_a_dublee(laid: str, valid: bool, reason: str | None) -> None:
    result = check_grouping(_groups(laid), get_rules("nepali", {"printed_jokers": 2}), tiplu=JC)
    assert (result.valid, result.reason) == (valid, reason)


@pytest.mark.parametrize("cards, route", [
    ("2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H 8D", None),  # 6 dublees
    ("2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H JOKER JOKER", Route.DUBLEES),  # and two printed jokers: 7
])
def test_two_printed_jokers_count_towards_seeing(cards: str, route: Route | None) -> None:
    assert can_see(parse_cards(cards), get_rules("nepali", {"printed_jokers": 2})).route is route


# --- 3 and 4. max_penalty caps the cards' points; a penalty never goes below 0 --------------

RULES_MD = (ROOT / "scorer" / "RULES.md").read_text(encoding="utf-8")


#: RULES.md's words, a line apart and without Markdown.
RULES_WORDS = " ".join(RULES_MD.replace("`", "").replace("**", "").split())


@pytest.mark.parametrize("option, words, rules_words", [
    ("max_penalty", "caps the points of the cards a non-closer holds at the end of the round", None),
    ("max_penalty", "a wrong-close penalty is added on top and is not capped",
     "a wrong-close penalty (below) is added on top and is not capped"),
    ("max_penalty", "(0: no cap)", "(default 0 = no cap;"),
    ("tunnela_bonus", "a penalty never goes below 0, whatever the tunnela_bonus",
     "A penalty never goes below 0, whatever the tunnela_bonus"),
])
def test_the_option_help_says_what_rules_md_says(option: str, words: str, rules_words: str | None) -> None:
    assert words in RULE_FAMILIES["rummy"].option(option).help
    assert (rules_words or words) in RULES_WORDS
    code, out, _ = _tiplu("rules", "rummy")
    assert code == 0 and words in out


@pytest.mark.parametrize("cap, cards, wrong_close, penalty", [
    (0, 120, False, 120),
    (80, 120, False, 80),  # the cards' points are capped
    (80, 120, True, 160),  # the wrong close is added on top of the cap, not capped
    (80, 50, True, 130),
    (25, 0, True, 80),
    (0, 120, True, 200),
])
def test_max_penalty_caps_the_cards_only(cap: int, cards: int, wrong_close: bool, penalty: int) -> None:
    rules = get_rules("rummy", {"max_penalty": cap})
    players = [PlayerRound("Anna"), PlayerRound("Ben", penalty=cards, wrong_close=wrong_close),
               PlayerRound("Carla", penalty=0)]
    assert settle_round(rules, players, "Anna", None).net["Ben"] == penalty


@pytest.mark.parametrize("bonus, cap, penalty", [
    (0, 0, 10),  # KD alone
    (3, 0, 1),  # 10 - 3 x 3
    (4, 0, 0),  # 10 - 12: never below 0
    (15, 0, 0),
    (15, 80, 0),
])
def test_a_penalty_never_goes_below_zero(bonus: int, cap: int, penalty: int) -> None:
    rules = get_rules("rummy", {"tunnela_bonus": bonus, "max_penalty": cap})
    hand = parse_cards("2C 3C 4C 5H 5H 5H 6H 6H 6H 7H 7H 7H KD")
    assert penalty_points(hand, rules, parse_card("9D")).penalty == penalty


# --- 5. hand_size 21 with two_decks is bad input ----------------------------------------------

@pytest.mark.parametrize("options, outcome", [
    ({}, 21),
    ({"hand_size": 21}, 21),
    ({"two_decks": True}, 13),  # no hand size given: the first two decks deal
    ({"two_decks": True, "hand_size": 13}, 13),
    ({"two_decks": True, "hand_size": 16}, 16),
    ({"two_decks": True, "hand_size": 21}, "option hand_size: 21 cards are not dealt with two_decks: give 13 or 16"),
    ({"two_decks": "on", "hand_size": "21"}, "21 cards are not dealt with two_decks: give 13 or 16"),
    ({"hand_size": 16}, "option hand_size: 13 or 16 cards are dealt only with two_decks"),
    ({"hand_size": 13}, "13 or 16 cards are dealt only with two_decks"),
])
def test_a_hand_size_the_decks_do_not_deal_is_bad_input(options: dict, outcome: int | str) -> None:
    if isinstance(outcome, str):
        with pytest.raises(OptionError, match=outcome):
            get_rules("rummy", options)
    else:
        assert get_rules("rummy", options).hand_size == outcome


@pytest.mark.parametrize("options, code, message", [
    (["two_decks=on", "hand_size=21"], 2, "tiplu check: option hand_size: 21 cards are not dealt with two_decks: "
                                          "give 13 or 16\n"),
    (["hand_size=16"], 2, "tiplu check: option hand_size: 13 or 16 cards are dealt only with two_decks\n"),
    (["two_decks=on"], 0, ""),
])
def test_tiplu_check_refuses_21_cards_from_two_decks(options: list[str], code: int, message: str) -> None:
    hand = "3S 4S 5S 6H 7H 8H 9D 10D JD QC QD QS QH".split()
    flags = [arg for option in options for arg in ("--option", option)]
    assert _tiplu("check", "--rules", "rummy", "--turned", "7D", *flags, *hand)[0::2] == (code, message)


# --- RULES.md is the shared reference -----------------------------------------------------------

@pytest.mark.parametrize("clarified", [
    "8 of the groups must be dublees; the other 5\n    cards may be laid in any groups, or loose, and are not judged.",
    "with `printed_jokers`, two printed jokers) is a dublee",
    "any\n  other hand size with `two_decks` is bad input",
    "a wrong-close penalty (below) is added on top and is not capped",
    "A penalty never\n  goes below 0, whatever the `tunnela_bonus`.",
])
def test_rules_md_holds_the_clarifications(clarified: str) -> None:
    assert clarified in RULES_MD
    shared = ROOT.parent / "shared" / "RULES.md"
    if shared.exists():
        assert shared.read_text(encoding="utf-8") == RULES_MD
