"""Rules cases as a user types them on the command line: each once finished, crashed or scored wrongly.

Each case is the exact ``tiplu`` command line of the report; before the fix these finished
(exit 0), crashed (exit 1 with a traceback) or scored wrongly.
"""

from __future__ import annotations

import json
from io import StringIO

import pytest

from web.cli import ExitCode, main

DUBLEE_GROUPS_24 = ("5H 2S 2S | 3H 3H | 4D 4D | 5C 5C | 6S 6S | 7H 7H | 8D 8D | 9C 9C | KS KS | QH QH | "
                    "JD JD | 10C 10C").split()[1:]
DUBLEES_21 = "2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H 8D 8D 9C 9C KS KS QH QH JD".split()


def tiplu(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    code = main(list(args), stdin=StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_tunnela_bonus_is_part_of_the_search() -> None:
    code, out, _ = tiplu("penalty", "--json", "--option", "tunnela_bonus=3", "--turned", "9D",
                         *"2C 3C 4C 5H 5H 5H 6H 6H 6H 7H 7H 7H KD".split())
    assert code == ExitCode.OK
    result = json.loads(out)
    assert result["penalty"] == 1
    assert sorted(map(tuple, result["melds"])) == [("2C", "3C", "4C"), ("5H", "5H", "5H"), ("6H", "6H", "6H"),
                                                   ("7H", "7H", "7H")]


@pytest.mark.parametrize("stdin", [
    '{"rules":5,"players":[{"name":"A"},{"name":"B"}]}',
    '{"rules":7,"players":[{"name":"A"},{"name":"B"}]}',
    '{"tiplu":"JC","players":[{"name":"A","cards":5},{"name":"B"}]}',
    '{"tiplu":"JC","players":"three"}',
])
def test_settle_with_wrongly_typed_fields_is_bad_input(stdin: str) -> None:
    code, out, err = tiplu("settle", stdin=stdin)
    assert (code, out) == (ExitCode.BAD_INPUT, "")
    assert err.startswith("tiplu settle: ") and "Traceback" not in err


@pytest.mark.parametrize("line", ['{"tiplu":"JC","cards":5}', '{"tiplu":"JC","groups":[5,6]}',
                                  '{"rules":7,"tiplu":"JC","cards":["2S"]}'])
def test_a_wrongly_typed_jsonl_line_gets_an_error_and_the_run_goes_on(line: str) -> None:
    good = json.dumps({"tiplu": "5H", "cards": DUBLEES_21})
    code, out, _ = tiplu("check", "--jsonl", stdin=f"{line}\n{good}\n")
    first, second = (json.loads(text) for text in out.splitlines())
    assert code == ExitCode.BAD_INPUT
    assert first["error"].startswith("line 1: ") and first["valid"] is False
    assert second["valid"] is True and second["route"] == "dublees"


def test_a_grouping_of_24_cards_is_bad_input_like_the_same_cards_ungrouped() -> None:
    grouped = tiplu("check", "--tiplu", "5H", *DUBLEE_GROUPS_24)
    ungrouped = tiplu("check", "--tiplu", "5H", *(c for c in DUBLEE_GROUPS_24 if c != "|"))
    assert grouped[0] == ungrouped[0] == ExitCode.BAD_INPUT
    assert "21" in grouped[2] and "22" in grouped[2]


@pytest.mark.parametrize("players", ["40", "0", "-1", "6"])
def test_players_outside_the_rule_sets_range_is_bad_input(players: str) -> None:
    code, out, err = tiplu("check", "--tiplu", "5H", "--players", players, *DUBLEES_21)
    assert (code, out) == (ExitCode.BAD_INPUT, "")
    assert "2" in err and "5" in err, err


def test_players_inside_the_range_still_judge_the_dublee_route() -> None:
    assert tiplu("check", "--tiplu", "5H", "--players", "5", *DUBLEES_21)[0] == ExitCode.OK
    code, out, _ = tiplu("check", "--json", "--tiplu", "5H", "--players", "3", "--option", "dublee_min_players=4",
                         *DUBLEES_21)
    assert code == ExitCode.NOT_FINISHED and "4 players" in json.loads(out)["reason"]


def test_maal_refuses_more_cards_than_a_hand_can_hold() -> None:
    cards = "10C QC KC 2S 3S 4S 5S 6S 7S 8S 9S KS AS 2H 3H 4H 5H 6H 7H 8H 9H 10H KH QH".split()
    code, out, err = tiplu("maal", "--tiplu", "JC", *cards[:23])
    assert (code, out) == (ExitCode.BAD_INPUT, "")
    assert "22" in err, err
    assert tiplu("maal", "--tiplu", "JC", *cards[:22])[0] == ExitCode.OK


def test_murder_and_kidnap_together_are_refused() -> None:
    code, _, err = tiplu("maal", "--tiplu", "JC", "--option", "murder=on", "--option", "kidnap=on", "10C")
    assert code == ExitCode.BAD_INPUT and "murder" in err and "kidnap" in err
