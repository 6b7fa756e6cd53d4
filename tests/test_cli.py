"""The `tiplu` CLI contract, run as a real process (other tools depend on it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TIPLU = shutil.which("tiplu", path=str(Path(sys.executable).parent)) or "tiplu"
VALID_21 = "AS 2S 3S QH KH AH 6H 6H 6H 9D 10D JD KS KD KC 7C 8C 5D 2H 2D 5H".split()
EXAMPLE_1 = {"rules": "nepali", "winner": "Anna", "finish": "melds", "players": [
    {"name": "Anna", "maal": 5, "seen": True}, {"name": "Ben", "maal": 2, "seen": True},
    {"name": "Carla", "maal": 10, "seen": True}, {"name": "Dan", "maal": 3, "seen": False}]}


def tiplu(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TIPLU, *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_check_valid_hand_exits_0_with_the_json_shape() -> None:
    run = tiplu("check", "--tiplu", "5C", "--json", *VALID_21)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert set(result) == {"valid", "route", "melds", "discard", "reason"}
    assert result["valid"] is True and result["route"] == "melds" and result["discard"] is None
    assert sorted(c for meld in result["melds"] for c in meld) == sorted(VALID_21)


def test_check_22_cards_names_the_discard() -> None:
    result = json.loads(tiplu("check", "--tiplu", "5C", "--json", *VALID_21, "JS").stdout)
    assert result["discard"] == "JS"


def test_check_invalid_hand_exits_1_with_a_reason() -> None:
    hand = VALID_21[:-3] + ["2H", "7D", "10S"]
    run = tiplu("check", "--tiplu", "5C", "--json", *hand)
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["valid"] is False and result["route"] is None
    assert result["reason"].startswith("needs one more meld")


@pytest.mark.parametrize("args, message", [
    (["check", "--tiplu", "JC", "1X"], "'1X': unknown suit 'X'"),
    (["check", "--tiplu", "JC", *(["QS"] * 4), *VALID_21[:17]], "'QS' appears 4 times; 3 decks have 3"),
    (["check", "--tiplu", "JC", "--option", "tiplu_pair", *VALID_21], "NAME=VALUE"),
    (["check", "--tiplu", "JC", "--option", "nonsense=1", *VALID_21], "unknown option 'nonsense'"),
    (["check", "--rules", "rummy", *VALID_21], "turned card"),
    (["maal", "10C"], "needs the tiplu"),
])
def test_bad_input_exits_2_with_a_clear_message(args: list[str], message: str) -> None:
    run = tiplu(*args)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr


def test_check_rummy_with_turned_card() -> None:
    hand = "3S 4S 5S 6S 7S 9H 9D 9C 10H JH QH KH 2D 2C 2S 5D 6D 7D 4C 4C 4D".split()
    run = tiplu("check", "--rules", "rummy", "--turned", "10S", "--json", *hand)
    assert run.returncode == 0 and json.loads(run.stdout)["valid"] is True


def test_check_judges_the_players_grouping() -> None:
    groups = " | ".join(" ".join(VALID_21[i:i + 3]) for i in range(0, 21, 3)).split()
    assert tiplu("check", "--tiplu", "5C", *groups).returncode == 0
    groups[0:3] = ["AS", "2S", "4S"]
    run = tiplu("check", "--tiplu", "5C", "--json", *groups, "3S")
    assert run.returncode == 2 or json.loads(run.stdout)["reason"].startswith("group 1")


def test_check_jsonl_answers_line_by_line() -> None:
    lines = [json.dumps({"tiplu": "5C", "cards": VALID_21}),
             json.dumps({"rules": "rummy", "turned": "10S", "cards": VALID_21}),
             json.dumps({"tiplu": "JC", "cards": ["QS"] * 4}),
             "not json"]
    run = tiplu("check", "--jsonl", stdin="\n".join(lines) + "\n")
    results = [json.loads(line) for line in run.stdout.splitlines()]
    assert len(results) == 4
    assert results[0]["valid"] is True and results[1]["valid"] is False
    assert "appears 4 times" in results[2]["error"] and "not JSON" in results[3]["error"]
    assert run.returncode == 2


def test_maal_json() -> None:
    run = tiplu("maal", "--tiplu", "JC", "--json", "10C", "JC", "QC", "QC")
    assert json.loads(run.stdout) == {"total": 12, "items": [
        {"label": "marriage", "cards": ["10C", "JC", "QC"], "points": 10},
        {"label": "poplu", "cards": ["QC"], "points": 2}]}


def test_maal_options_and_dealt_tunnela() -> None:
    run = tiplu("maal", "--tiplu", "JC", "--option", "tiplu_pair=8", "--dealt-tunnela", "6H", "--json",
                "JC", "JC", "6H", "6H", "6H")
    assert json.loads(run.stdout)["total"] == 8 + 5
    unseen = tiplu("maal", "--tiplu", "JC", "--unseen", "--dealt-tunnela", "6H", "--json", "6H", "6H", "6H")
    assert json.loads(unseen.stdout)["total"] == 0


def test_settle_example_1() -> None:
    run = tiplu("settle", "--json", stdin=json.dumps(EXAMPLE_1))
    result = json.loads(run.stdout)
    assert set(result) == {"net", "payments"}
    assert result["net"] == {"Anna": 16, "Ben": -15, "Carla": 17, "Dan": -18}
    assert {"from": "Dan", "to": "Anna", "points": 10, "reason": "unseen fee"} in result["payments"]


def test_settle_with_options_and_no_winner() -> None:
    data = {**EXAMPLE_1, "winner": None, "options": {"murder": True}}
    result = json.loads(tiplu("settle", "--json", stdin=json.dumps(data)).stdout)
    assert result["net"] == {"Anna": 3, "Ben": -9, "Carla": 23, "Dan": -17}  # murder: Dan's 3 counts 0, T = 17
    assert sum(result["net"].values()) == 0


@pytest.mark.parametrize("stdin, message", [
    ("{", "JSON object"), ('{"players": []}', "players"),
    (json.dumps({**EXAMPLE_1, "winner": "Dan"}), "must have seen"),
    (json.dumps({**EXAMPLE_1, "winner": "Zed"}), "not one of the players"),
])
def test_settle_bad_input(stdin: str, message: str) -> None:
    run = tiplu("settle", "--json", stdin=stdin)
    assert run.returncode == 2 and message in run.stderr


def test_penalty_json() -> None:
    run = tiplu("penalty", "--rules", "rummy", "--turned", "7D", "--json", "3S", "4S", "5S", "9H", "9D", "9C",
                "KH", "2D")
    assert json.loads(run.stdout) == {"penalty": 12, "melds": [["3S", "4S", "5S"], ["9H", "9D", "9C"]],
                                      "unmatched": ["KH", "2D"]}


def test_rules_lists_every_option() -> None:
    result = json.loads(tiplu("rules", "--json").stdout)
    assert result["nepali"]["tiplu_pair"] == 7 and result["rummy"]["wrong_close_penalty"] == 80
