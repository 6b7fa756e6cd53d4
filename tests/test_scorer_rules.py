"""Cards, rule families, wild cards and meld classification (RULES.md 1, 2.1, 2.2, 2.6, 3)."""

from __future__ import annotations

import pytest

from scorer import (CLASS_NAMES, JOKER, RULE_FAMILIES, Card, CardError, OptionError, TooManyCopiesError,
                    check_copies, get_rules, parse_card, parse_cards)
from scorer.melds import classify_meld, classify_rummy_meld, sequence_fits
from scorer.wilds import wild_cards


@pytest.mark.parametrize("token, expected", [
    ("10C", Card(10, "C")), ("TC", Card(10, "C")), ("10♣", Card(10, "C")), ("jh", Card(11, "H")),
    ("AS", Card(1, "S")), ("qd", Card(12, "D")), ("K♥", Card(13, "H")), ("2♦", Card(2, "D")),
    ("JOKER", JOKER), ("jk", JOKER), ("🃏", JOKER), (" 7s ", Card(7, "S")),
])
def test_parse_card_accepts_every_notation(token: str, expected: Card) -> None:
    assert parse_card(token) == expected


@pytest.mark.parametrize("token, message", [
    ("1X", "'1X': unknown suit 'X'"),
    ("1C", "'1C': unknown rank '1'"),
    ("11H", "unknown rank '11'"),
    ("", "empty card"),
    ("C", "missing rank"),
])
def test_parse_card_names_the_bad_token(token: str, message: str) -> None:
    with pytest.raises(CardError, match=message):
        parse_card(token)


def test_canonical_form_round_trips() -> None:
    assert [str(c) for c in parse_cards("10C TC 10♣ jh as JOKER")] == ["10C", "10C", "10C", "JH", "AS", "JOKER"]


def test_a_fourth_copy_is_an_input_error() -> None:
    with pytest.raises(TooManyCopiesError, match="'QS' appears 4 times; 3 decks have 3"):
        check_copies(parse_cards("QS QS QS QS"))
    assert check_copies(parse_cards("QS QS QS"))[Card(12, "S")] == 3


def test_printed_jokers_need_the_option() -> None:
    with pytest.raises(TooManyCopiesError, match="printed_jokers"):
        check_copies([JOKER])
    assert check_copies([JOKER, JOKER], jokers=3)[JOKER] == 2


def test_detector_classes_are_52_cards_and_the_joker() -> None:
    assert len(CLASS_NAMES) == 53 and len(set(CLASS_NAMES)) == 53
    assert CLASS_NAMES[0] == "AS" and CLASS_NAMES[-1] == "JOKER"


@pytest.mark.parametrize("family, option, default", [
    ("nepali", "murder", False), ("nepali", "kidnap", False), ("nepali", "alter", False),
    ("nepali", "alter_points", 5), ("nepali", "printed_jokers", 0), ("nepali", "printed_joker_points", 5),
    ("nepali", "tiplu_pair", 7), ("nepali", "double_marriage", 30), ("nepali", "seen_fee", 3),
    ("nepali", "unseen_fee", 10), ("nepali", "dublee_bonus", 5), ("nepali", "dublee_exempt", False),
    ("nepali", "dublee_min_players", 2), ("nepali", "open_joker", False),
    ("nepali", "tunnela_requires_seen", True), ("nepali", "invalid_declaration_fine", 0),
    ("nepali", "players_max", 5), ("nepali", "direction", "clockwise"),
    ("rummy", "two_decks", False), ("rummy", "two_lives", False), ("rummy", "ace_points", 10),
    ("rummy", "unmatched_joker_points", 20), ("rummy", "wrong_close_penalty", 80),
    ("rummy", "no_dublee", False), ("rummy", "per_round_settlement", False), ("rummy", "tunnela_bonus", 0),
    ("rummy", "joker_same_suit", False), ("rummy", "max_penalty", 0), ("rummy", "hand_size", 21),
])
def test_every_rules_md_option_has_its_default(family: str, option: str, default: object) -> None:
    assert get_rules(family)[option] == default
    assert RULE_FAMILIES[family].option(option).default == default


@pytest.mark.parametrize("family, options, message", [
    ("poker", {}, "unknown rules 'poker'"),
    ("nepali", {"tiplu_par": 8}, "unknown option 'tiplu_par'"),
    ("nepali", {"tiplu_pair": "eight"}, "'eight' is not a whole number"),
    ("nepali", {"murder": "maybe"}, "not on/off"),
    ("nepali", {"players_max": 7}, "not one of 5, 6"),
    ("rummy", {"hand_size": 13}, "only with two_decks"),
    ("rummy", {"two_decks": True, "hand_size": 21}, "21 cards are not dealt with two_decks: give 13 or 16"),
    ("nepali", {"murder": True, "kidnap": True}, "murder and kidnap exclude each other"),
])
def test_bad_rules_say_what_is_allowed(family: str, options: dict, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        get_rules(family, options)


def test_options_are_coerced_from_text() -> None:
    rules = get_rules("nepali", {"tiplu_pair": "8", "murder": "on"})
    assert rules["tiplu_pair"] == 8 and rules["murder"] is True
    assert get_rules("rummy", {"two_decks": "yes"}).hand_size == 13


@pytest.mark.parametrize("tiplu, jhiplu, poplu", [("JC", "10C", "QC"), ("AH", "KH", "2H"), ("KC", "QC", "AC"),
                                                  ("2S", "AS", "3S")])
def test_neighbours_wrap_around_the_ranks(tiplu: str, jhiplu: str, poplu: str) -> None:
    wilds = wild_cards(get_rules(), tiplu=parse_card(tiplu))
    assert (str(wilds.jhiplu), str(wilds.poplu)) == (jhiplu, poplu)
    assert len(wilds.ordinary_jokers) == 3
    assert len(wilds.wild_faces) == 6  # 17 cards: 3 faces x 3 copies (tiplu 2 in play) + 3 jokers x 3


def test_alter_is_the_same_colour_other_suit() -> None:
    wilds = wild_cards(get_rules("nepali", {"alter": True}), tiplu=parse_card("JC"))
    assert wilds.alter == frozenset({parse_card("JS")})


def test_rummy_joker_rank_is_one_above_the_turned_card() -> None:
    assert wild_cards(get_rules("rummy"), turned=parse_card("KD")).joker_rank == 1
    assert wild_cards(get_rules("rummy"), turned=parse_card("7D")).is_wild(JOKER)


TIPLU_JC = wild_cards(get_rules(), tiplu=parse_card("JC"))


@pytest.mark.parametrize("cards, kind", [
    ("3S 4S 5S", "pure sequence"), ("QS KS AS", "pure sequence"), ("AS 2S 3S", "pure sequence"),
    ("10C JC QC", "pure sequence"),  # wilds played as their own face
    ("6H 6H 6H", "tunnela"), ("KS KH KD", "triplet"),
    ("7H 8H JD", "dirty sequence"), ("7H 9H JD", "dirty sequence"), ("2C 2D QC", "dirty triplet"),
    ("JD JH 4S", "two wilds and a card"), ("QS KS JD", "dirty sequence"), ("KS AS JH", "dirty sequence"),
    ("10C 10C 10C", "tunnela"),
])
def test_melds(cards: str, kind: str) -> None:
    assert classify_meld(parse_cards(cards), TIPLU_JC).kind == kind


@pytest.mark.parametrize("cards, reason", [
    ("KS AS 2S", "does not wrap"),
    ("9S 9S 9C", "three different suits"),
    ("5D 5D JD", "two identical cards and a wild never make a meld"),
    ("6H 6H JH", "two identical cards and a wild"),  # a tunnela completed by a wild
    ("3S 4S 6S", "not consecutive"),
    ("3S 4H 9D", "mixed suits and ranks"),
    ("3S 4S", "exactly 3 cards"),
    ("KS 2S JD", "neither one suit within 2 ranks nor one rank"),
])
def test_not_melds_say_why(cards: str, reason: str) -> None:
    check = classify_meld(parse_cards(cards), TIPLU_JC)
    assert not check.is_meld
    assert reason in (check.reason or "")


@pytest.mark.parametrize("ranks, length, fits", [
    ([1, 2, 3], 3, True), ([12, 13, 1], 3, True), ([13, 1, 2], 3, False), ([1, 3], 3, True),
    ([12, 1], 3, True), ([13, 2], 3, False), ([3, 7], 5, True), ([3, 8], 5, False), ([5, 5], 3, False),
])
def test_sequence_fits(ranks: list[int], length: int, fits: bool) -> None:
    assert sequence_fits(ranks, length) is fits


RUMMY_7D = wild_cards(get_rules("rummy"), turned=parse_card("7D"))


@pytest.mark.parametrize("cards, kind", [
    ("3S 4S 5S 6S", "life"), ("7S 7S 7H", "set"), ("6H 6H 6H", "set"), ("3S 8H 5S", "sequence"),
    ("3S 4S 5S 6S 7S", "life"), ("9C 9D JOKER 9H", "set"), ("QH KH AH", "life"),
])
def test_rummy_melds(cards: str, kind: str) -> None:
    assert classify_rummy_meld(parse_cards(cards), RUMMY_7D).kind == kind


@pytest.mark.parametrize("cards", ["KS AS 2S", "3S 4H 5S", "3S 4S", "3S 6S 7S"])
def test_rummy_not_melds(cards: str) -> None:
    assert not classify_rummy_meld(parse_cards(cards), RUMMY_7D).is_meld


def _rules_md_options() -> set[str]:
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "scorer" / "RULES.md").read_text(encoding="utf-8")
    table = text.split("### 2.6", 1)[1].split("## 3.", 1)[0]
    names = {name for row in table.splitlines() if row.startswith("| `")
             for name in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    rummy = text.split("## 3.", 1)[1]
    return names | set(re.findall(r"`([a-z_]+)`", rummy))


def test_every_option_named_in_rules_md_exists() -> None:
    known = {spec.name for family in RULE_FAMILIES.values() for spec in family.options}
    assert _rules_md_options() - known == set()
