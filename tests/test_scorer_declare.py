"""The declare check and the seeing check (RULES.md 2.3, 3) on hand-made hands."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from scorer import HandError, Route, TooManyCopiesError, format_cards, get_rules, parse_card, parse_cards
from scorer.declare import can_see, check_grouping, check_hand
from scorer.melds import classify_meld
from scorer.wilds import wild_cards

# tiplu 5C: wilds are 5S 5H 5D (jokers), 5C (tiplu), 4C (jhiplu), 6C (poplu)
TIPLU = parse_card("5C")
VALID_21 = "AS 2S 3S  QH KH AH  6H 6H 6H  9D 10D JD  KS KD KC  7C 8C 5D  2H 2D 5H"
TWO_PURE = "AS 2S 3S  QH QS QD  6H 6H 6H  9D 9S 9H  KS KD KC  7C 8C 5D  2H 2D 5H"
DUBLEES = "AS AS 2H 2H 3D 3D 4C 4C 7S 7S 8H 8H 9D 9D KC KC 10S JH QD 6S 3C"


def _assert_partition(hand: str, result) -> None:
    used = Counter(c for meld in result.melds for c in meld)
    if result.discard is not None:
        used[result.discard] += 1
    used.update(result.unmatched)
    assert used == Counter(parse_cards(hand))


def test_a_21_card_hand_finishes() -> None:
    result = check_hand(parse_cards(VALID_21), get_rules(), tiplu=TIPLU)
    assert result.valid and result.route is Route.MELDS and result.discard is None and result.reason is None
    assert len(result.melds) == 7
    wilds = wild_cards(get_rules(), tiplu=TIPLU)
    assert sum(classify_meld(m, wilds).is_pure for m in result.melds) >= 3
    _assert_partition(VALID_21, result)


def test_the_json_shape_holds_plain_strings() -> None:
    result = check_hand(parse_cards(VALID_21 + " JS"), get_rules(), tiplu=TIPLU)
    assert json.dumps(result.to_dict()) == (
        '{"valid": true, "route": "melds", "melds": [["AS", "2S", "3S"], ["AH", "QH", "KH"], ["6H", "6H", "6H"], '
        '["KS", "KD", "KC"], ["2H", "2D", "5H"], ["9D", "10D", "JD"], ["7C", "8C", "5D"]], '
        '"discard": "JS", "reason": null}')


def test_a_22_card_hand_picks_the_discard() -> None:
    result = check_hand(parse_cards(VALID_21 + " JS"), get_rules(), tiplu=TIPLU)
    assert result.valid and result.discard == parse_card("JS")
    _assert_partition(VALID_21 + " JS", result)


def test_the_discard_can_be_a_card_inside_a_would_be_meld() -> None:
    # 7 melds are only possible if one of the two 3S goes: the checker must find which card
    hand = "AS 2S 3S 3S  QH KH AH  6H 6H 6H  9D 10D JD  KS KD KC  7C 8C 5D  2H 2D 5H"
    result = check_hand(parse_cards(hand), get_rules(), tiplu=TIPLU)
    assert result.valid and result.discard == parse_card("3S")


def test_only_two_pure_melds_do_not_finish() -> None:
    result = check_hand(parse_cards(TWO_PURE), get_rules(), tiplu=TIPLU)
    assert not result.valid
    assert result.reason == ("only 2 pure melds, 3 needed (pure sequences or tunnelas); tiplu checks the hand, "
                             "not its history: a finish needs 3 pure melds among the 7, or 8 dublees, "
                             "whichever way the player saw")
    assert len(result.melds) == 7


def test_a_missing_meld_names_the_unmatched_cards() -> None:
    hand = "AS 2S 3S  QH KH AH  6H 6H 6H  9D 10D JD  KS KD KC  7C 8C 5D  2H 7D 10S"
    result = check_hand(parse_cards(hand), get_rules(), tiplu=TIPLU)
    assert not result.valid and result.route is None
    assert result.reason.startswith("needs one more meld: ") and result.reason.endswith(" unmatched")
    assert len(result.melds) == 6 and len(result.unmatched) == 3
    _assert_partition(hand, result)


def test_wilds_played_as_their_own_face_make_a_pure_meld() -> None:
    # tiplu JC: 10C JC QC is jhiplu + tiplu + poplu, and a pure sequence
    hand = "10C JC QC  AS 2S 3S  6H 6H 6H  KS KD KH  4D 5D 6D  8S 8H 8D  2C 3C 4C"
    result = check_hand(parse_cards(hand), get_rules(), tiplu=parse_card("JC"))
    assert result.valid


def test_two_identical_cards_and_a_wild_do_not_help() -> None:
    hand = "AS 2S 3S  QH KH AH  6H 6H 6H  9D 10D JD  KS KD KC  7C 8C 5D  2H 2H 5H"
    result = check_hand(parse_cards(hand), get_rules(), tiplu=TIPLU)
    assert not result.valid


def test_ace_is_high_or_low_but_never_wraps() -> None:
    wrap = "KS AS 2S  QH KH AH  6H 6H 6H  9D 10D JD  KD KD KC  7C 8C 9C  2H 3H 4H"
    assert not check_hand(parse_cards(wrap), get_rules(), tiplu=parse_card("10C")).valid
    high = "QS KS AS  QH KH AH  6H 6H 6H  9D 10D JD  KD KH KC  7C 8C 9C  2H 3H 4H"
    assert check_hand(parse_cards(high), get_rules(), tiplu=parse_card("10S")).valid


def test_eight_dublees_finish() -> None:
    result = check_hand(parse_cards(DUBLEES), get_rules(), tiplu=parse_card("JS"))
    assert result.valid and result.route is Route.DUBLEES and len(result.melds) == 8
    assert all(a == b for a, b in result.melds)


def test_dublee_min_players_blocks_the_dublee_route() -> None:
    rules = get_rules("nepali", {"dublee_min_players": 4})
    result = check_hand(parse_cards(DUBLEES), rules, tiplu=parse_card("JS"), players=3)
    assert not result.valid


def test_seven_dublees_are_not_enough() -> None:
    hand = DUBLEES.replace("KC KC", "KC 4S")
    result = check_hand(parse_cards(hand), get_rules(), tiplu=parse_card("JS"))
    assert not result.valid and result.reason.startswith("only 7 dublees, 8 needed")


@pytest.mark.parametrize("hand, error", [
    ("AS 2S 3S", HandError), ("QS QS QS QS " + " ".join(["2H"] * 3) + " 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2D 3D",
                              TooManyCopiesError),
])
def test_bad_hands_raise_typed_errors(hand: str, error: type) -> None:
    with pytest.raises(error):
        check_hand(parse_cards(hand), get_rules(), tiplu=TIPLU)


def test_the_third_tiplu_copy_is_under_the_stock() -> None:
    hand = "5C 5C 5C  QH KH AH  6H 6H 6H  9D 10D JD  KS KD KC  7C 8C 5D  2H 2D 5H"
    with pytest.raises(TooManyCopiesError, match="only 2 copies are in play"):
        check_hand(parse_cards(hand), get_rules(), tiplu=TIPLU)


def test_the_players_grouping_is_judged_group_by_group() -> None:
    groups = [parse_cards(g) for g in VALID_21.split("  ")]
    assert check_grouping(groups, get_rules(), tiplu=TIPLU).valid
    groups[3] = parse_cards("9D 10D JS")  # JS is no wild with tiplu 5C
    groups[6] = parse_cards("2H 2D JD")
    result = check_grouping(groups, get_rules(), tiplu=TIPLU)
    assert not result.valid
    assert result.reason.startswith("group 4 (9D 10D JS: not a meld")


def test_a_grouping_with_too_few_pure_melds() -> None:
    groups = [parse_cards(g) for g in TWO_PURE.split("  ")]
    result = check_grouping(groups, get_rules(), tiplu=TIPLU)
    assert not result.valid and result.reason.startswith("only 2 pure melds")


def test_seeing_needs_three_pure_melds_or_seven_dublees() -> None:
    assert can_see(parse_cards("3S 4S 5S 6H 6H 6H QD KD AD 2C 9H"), get_rules()).can_see
    not_yet = can_see(parse_cards("3S 4S 5S 6H 6H 6H QD KD 2C 9H"), get_rules())
    assert not not_yet.can_see and "only 2 pure melds" in not_yet.reason
    by_dublees = can_see(parse_cards(DUBLEES), get_rules())
    assert (by_dublees.can_see, by_dublees.route, by_dublees.reason) == (True, Route.DUBLEES, None)
    assert [format_cards(pair) for pair in by_dublees.shown] == [
        "2H 2H", "3D 3D", "4C 4C", "7S 7S", "8H 8H", "9D 9D", "AS AS"]


RUMMY_HAND = "3S 4S 5S 6S 7S 9H 9D 9C 10H JH QH KH 2D 2C 2S 5D 6D 7D 4C 4C 4D"


def test_rummy_close_needs_a_life_and_every_card_melded() -> None:
    rules = get_rules("rummy")
    assert check_hand(parse_cards(RUMMY_HAND), rules, turned=parse_card("10S")).valid
    no_life = "3S 4H 5S 6S 8S 9H 9D 9C 10H 10H QH KH 2D 2C 2S 5D 6C 7D 4C 4C 4D"
    result = check_hand(parse_cards(no_life), rules, turned=parse_card("10S"))
    assert not result.valid and result.reason is not None


def test_rummy_two_lives() -> None:
    rules = get_rules("rummy", {"two_lives": True})
    result = check_hand(parse_cards(RUMMY_HAND), rules, turned=parse_card("10S"))
    assert result.valid  # 3S-7S and 5D 6D 7D are both lives
    one_life = "3S 4S 5S 6S 7S 9H 9D 9C 10H JD QH KH 2D 2C 2H 5D 6D JS 4C 4C 4H"
    assert check_hand(parse_cards(one_life), get_rules("rummy"), turned=parse_card("10S")).valid
    result = check_hand(parse_cards(one_life), rules, turned=parse_card("10S"))
    assert not result.valid and "needs 2 lives" in result.reason


def test_a_22_card_rummy_hand_that_melds_every_card_still_names_a_discard() -> None:
    # 22 cards: the checker picks the discard, even when all 22 would fit in melds
    result = check_hand(parse_cards(RUMMY_HAND + " 8S"), get_rules("rummy"), turned=parse_card("10S"))
    assert result.valid and result.discard is not None
    assert sum(len(m) for m in result.melds) == 21
