"""The `tiplu` CLI contract (other tools depend on it), run in process through ``main``.

A handful of tests at the end start the real console script: a pipe on stdin, the exit
codes a shell sees, and a reader that hangs up early.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest

from web.cli import COMMANDS, Command, ExitCode, main

TIPLU = shutil.which("tiplu", path=str(Path(sys.executable).parent)) or "tiplu"
VALID_21 = "AS 2S 3S QH KH AH 6H 6H 6H 9D 10D JD KS KD KC 7C 8C 5D 2H 2D 5H".split()
EXAMPLE_1 = {"rules": "nepali", "winner": "Anna", "finish": "melds", "players": [
    {"name": "Anna", "maal": 5, "seen": True}, {"name": "Ben", "maal": 2, "seen": True},
    {"name": "Carla", "maal": 10, "seen": True}, {"name": "Dan", "maal": 3, "seen": False}]}


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str


def tiplu(*args: str, stdin: str = "") -> Run:
    out, err = StringIO(), StringIO()
    code = main(list(args), stdin=StringIO(stdin), stdout=out, stderr=err)
    return Run(code, out.getvalue(), err.getvalue())


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
    assert run.returncode == ExitCode.NOT_FINISHED == 1
    result = json.loads(run.stdout)
    assert result["valid"] is False and result["route"] is None
    assert result["reason"].startswith("needs one more meld")


@pytest.mark.parametrize("args, message", [
    (["check", "--tiplu", "JC", "1X"], "'1X': unknown suit 'X'"),
    (["check", "--tiplu", "JC", *(["QS"] * 4), *VALID_21[:17]], "'QS' appears 4 times; 3 decks have 3"),
    (["check", "--tiplu", "JC", "--option", "tiplu_pair", *VALID_21], "NAME=VALUE"),
    (["check", "--tiplu", "JC", "--option", "nonsense=1", *VALID_21], "unknown option 'nonsense'"),
    (["check", "--rules", "rummy", *VALID_21], "turned card"),
    (["check", "--players", "three", *VALID_21], "invalid int value"),
    (["maal", "10C"], "needs the tiplu"),
    (["penalty", "7H"], "needs the turned card"),
    (["rules", "poker"], "invalid choice"),
    (["poker"], "invalid choice"),
    ([], "required: COMMAND"),
])
def test_bad_input_exits_2_with_a_clear_message(args: list[str], message: str) -> None:
    run = tiplu(*args)
    assert run.returncode == ExitCode.BAD_INPUT == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr


def test_help_goes_to_the_given_stdout_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    run = tiplu("check", "--help")
    assert run.returncode == 0 and run.stdout.startswith("usage: tiplu check")
    assert capsys.readouterr() == ("", "")


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


# Issue #10, bug 2: a wrongly typed field is bad input with a message, never a traceback.
# Issue 54: the messages are the API's (one parser), each naming the field.
SETTLE_TYPED = {
    "rules is a number": ({"rules": 5, "players": [{"name": "A"}, {"name": "B"}]}, "rules: give the rule family"),
    "a player's cards are a number": ({"tiplu": "JC", "players": [{"name": "A", "cards": 5}, {"name": "B"}]},
                                      "players.A.cards: give the cards as a list"),
    "players is text": ({"players": "three"}, "players: give a list of players"),
    "a player's maal is a word": ({"players": [{"name": "A", "maal": "five"}, {"name": "B"}]},
                                  "players.A.maal"),
}


@pytest.mark.parametrize("data, message", SETTLE_TYPED.values(), ids=SETTLE_TYPED.keys())
def test_settle_wrongly_typed_fields_exit_2(data: dict[str, object], message: str) -> None:
    run = tiplu("settle", "--json", stdin=json.dumps(data))
    assert (run.returncode, run.stdout) == (2, "")
    assert message in run.stderr and run.stderr.startswith("tiplu settle: ")


JSONL_TYPED = {
    "cards is a number": ({"tiplu": "JC", "cards": 5}, '"cards" must be a list of cards like ["10C", "JC"], got 5'),
    "groups of numbers": ({"tiplu": "JC", "groups": [5, 6]}, '"groups" must be a list of melds'),
    "rules is a number": ({"rules": 7, "tiplu": "JC", "cards": VALID_21}, '"rules" must be text'),
    "players is text": ({"tiplu": "5C", "cards": VALID_21, "players": "three"},
                        '"players" must be a whole number, got "three"'),
    "options is a list": ({"tiplu": "5C", "cards": VALID_21, "options": ["murder"]}, '"options" must be an object'),
}


@pytest.mark.parametrize("item, message", JSONL_TYPED.values(), ids=JSONL_TYPED.keys())
def test_check_jsonl_wrongly_typed_line_gets_an_error_and_the_run_goes_on(item: dict[str, object],
                                                                          message: str) -> None:
    good = json.dumps({"tiplu": "5C", "cards": VALID_21})
    run = tiplu("check", "--jsonl", stdin="\n".join([good, json.dumps(item), good]) + "\n")
    first, bad, last = (json.loads(line) for line in run.stdout.splitlines())
    assert first["valid"] is True and last["valid"] is True
    assert bad["valid"] is False and bad["error"].startswith("line 2: ") and message in bad["error"]
    assert run.returncode == 2 and run.stderr == ""


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
    data = {**EXAMPLE_1, "winner": None, "finish": None, "options": {"murder": True}}
    result = json.loads(tiplu("settle", "--json", stdin=json.dumps(data)).stdout)
    assert result["net"] == {"Anna": 3, "Ben": -9, "Carla": 23, "Dan": -17}  # murder: Dan's 3 counts 0, T = 17
    assert sum(result["net"].values()) == 0


def test_settle_values_the_cards_by_the_family_scoring() -> None:
    nepali = {"tiplu": "JC", "winner": "A", "players": [{"name": "A", "seen": True, "cards": ["10C", "JC", "QC"]},
                                                      {"name": "B", "seen": True, "maal": 0}]}  # marriage 10 + seen fee 3
    assert json.loads(tiplu("settle", "--json", stdin=json.dumps(nepali)).stdout)["net"] == {"A": 13, "B": -13}
    rummy = {"rules": "rummy", "turned": "7D", "winner": "A",
             "players": [{"name": "A"}, {"name": "B", "cards": ["KH", "2D"]}, {"name": "C", "penalty": 5}]}
    net = json.loads(tiplu("settle", "--json", stdin=json.dumps(rummy)).stdout)["net"]
    assert net == {"A": 0, "B": 10 + 2, "C": 5}  # penalty points: KH 10, 2D 2
    missing = tiplu("settle", stdin=json.dumps({**rummy, "turned": None}))
    assert missing.returncode == 2 and "turned: needed to count B's penalty cards" in missing.stderr


@pytest.mark.parametrize("stdin, message", [
    ("{", "JSON object"), ('{"players": []}', "players"),
    (json.dumps({**EXAMPLE_1, "winner": "Dan"}), "must have seen"),
    (json.dumps({**EXAMPLE_1, "winner": "Zed"}), "winner: unknown player 'Zed'"),
])
def test_settle_bad_input(stdin: str, message: str) -> None:
    run = tiplu("settle", "--json", stdin=stdin)
    assert run.returncode == 2 and message in run.stderr


def test_penalty_json() -> None:
    run = tiplu("penalty", "--rules", "rummy", "--turned", "7D", "--json", "3S", "4S", "5S", "9H", "9D", "9C",
                "KH", "2D")
    assert json.loads(run.stdout) == {"penalty": 12, "melds": [["3S", "4S", "5S"], ["9H", "9D", "9C"]],
                                      "unmatched": ["KH", "2D"]}


def test_penalty_defaults_to_the_family_with_penalty_points() -> None:
    args = ["penalty", "--turned", "7D", "--json", "3S", "4S", "5S", "KH"]
    assert tiplu(*args).stdout == tiplu(*args[:1], "--rules", "rummy", *args[1:]).stdout


def test_rules_lists_every_option() -> None:
    result = json.loads(tiplu("rules", "--json").stdout)
    assert result["nepali"]["tiplu_pair"] == 7 and result["rummy"]["wrong_close_penalty"] == 80


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_every_command_has_its_arguments_and_help(command: Command) -> None:
    run = tiplu(command.name, "--help")
    assert run.returncode == 0 and run.stdout.startswith(f"usage: tiplu {command.name}")
    assert command.help in tiplu("--help").stdout


class HungUp(StringIO):
    """A stdout whose reader has gone away."""

    def write(self, text: str) -> int:
        raise BrokenPipeError


def test_a_reader_that_hangs_up_ends_the_command_quietly() -> None:
    err = StringIO()
    assert main(["rules"], stdout=HungUp(), stderr=err) == ExitCode.CLOSED_PIPE
    assert err.getvalue() == ""


def test_check_loads_neither_flask_onnxruntime_nor_torch() -> None:
    code = ("import sys; from web.cli import main\n"
            f"code = main(['check', '--tiplu', '5C', *{VALID_21!r}])\n"
            "heavy = {'flask', 'onnxruntime', 'torch', 'ultralytics', 'cv2', 'vision'}\n"
            "print(code, sorted(m for m in sys.modules if m.split('.')[0] in heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split("\n")[-2] == "0 []", out.stderr


# Real processes: the console script as scripts and shells see it.

def console(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([TIPLU, *args], input=stdin, capture_output=True, text=True, timeout=60)


def test_console_script_exit_codes() -> None:
    assert console("check", "--tiplu", "5C", *VALID_21).returncode == 0
    assert console("check", "--tiplu", "5C", *VALID_21[:-3], "2H", "7D", "10S").returncode == 1
    bad = console("check", "--tiplu", "JC", "1X")
    assert bad.returncode == 2 and bad.stderr.startswith("tiplu check: '1X': unknown suit 'X'")


def test_console_script_reads_a_pipe() -> None:
    run = console("settle", "--json", stdin=json.dumps(EXAMPLE_1))
    assert run.returncode == 0 and json.loads(run.stdout)["net"]["Anna"] == 16
    lines = console("check", "--jsonl", stdin=json.dumps({"tiplu": "JC", "cards": 5}) + "\n")
    assert lines.returncode == 2 and "error" in json.loads(lines.stdout) and lines.stderr == ""


def test_a_closed_pipe_ends_without_a_traceback() -> None:
    shell = subprocess.run(f"'{TIPLU}' rules | head -1", shell=True, capture_output=True, text=True, timeout=60)
    assert shell.stdout.startswith("nepali:") and shell.stderr == ""
    writer = subprocess.Popen([TIPLU, "rules"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.close()
    assert writer.wait(timeout=60) in (0, ExitCode.CLOSED_PIPE)
    assert "Traceback" not in writer.stderr.read()


def test_python_m_web_cli_is_the_same_command() -> None:
    run = subprocess.run([sys.executable, "-m", "web.cli", "rules", "--json"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 0 and run.stdout == tiplu("rules", "--json").stdout
