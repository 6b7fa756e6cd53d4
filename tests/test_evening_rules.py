"""Issue 54, items 14-18: the CLI agrees with the API, and the clarified RULES.md holds on every way in.

In process: ``tiplu`` through ``main``, the API through the Flask test client on a real SQLite file.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path
from typing import Any, Callable

import pytest
from flask.testing import FlaskClient

from scorer import get_rules, parse_card, parse_cards
from scorer.declare import check_grouping, check_hand
from scorer.errors import SettlementError
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from web.cli import ExitCode, main

ROOT = Path(__file__).resolve().parent.parent


def tiplu(*args: str, stdin: str = "") -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    code = main(list(args), stdin=StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_scorer_rules_md_is_the_shared_one() -> None:
    shared = Path("/work/shared/RULES.md")
    if not shared.exists():
        pytest.skip("no ../shared/RULES.md on this machine")
    assert (ROOT / "scorer" / "RULES.md").read_bytes() == shared.read_bytes()


# --- 14: one parser for `tiplu settle` and the API's round preview ----------------------------------

DEALT_TUNNELA = {"rules": "nepali", "tiplu": "JC", "winner": "A", "players": [
    {"name": "A", "seen": True, "cards": ["6H", "6H", "6H"], "dealt_tunnelas": ["6H"]},
    {"name": "B", "seen": True, "maal": 0}]}
KIDNAP = {"rules": "nepali", "options": {"kidnap": True}, "tiplu": "JC", "winner": "A", "players": [
    {"name": "A", "seen": True, "cards": ["10C", "JC", "QC", "6H", "6H", "6H"], "dealt_tunnelas": ["6H"]},
    {"name": "B", "seen": True, "maal": 4}, {"name": "C", "seen": False, "cards": ["JC", "JC"]}]}
DUBLEES_NO_FINISH = {"tiplu": "5D", "winner": "B", "finish": None, "players": [
    {"name": "A", "seen": True, "maal": 2}, {"name": "B", "seen": True, "seen_by": "dublees", "maal": 7},
    {"name": "C", "seen": False}]}
RUMMY = {"rules": "rummy", "turned": "7D", "winner": "A",
         "players": [{"name": "A"}, {"name": "B", "cards": ["KH", "2D"]}, {"name": "C", "penalty": 5}]}


def api_preview(client: FlaskClient, make_session: Callable[..., int], data: dict[str, Any]) -> dict[str, Any]:
    """The API's round preview of a ``tiplu settle`` round, in a session of its players and rules."""
    names = [p["name"] for p in data["players"]]
    session = make_session(names, data.get("rules", "nepali"), options=data.get("options", {}))
    body = {k: v for k, v in data.items() if k not in ("rules", "options", "players")}
    body["players"] = {p["name"]: {k: v for k, v in p.items() if k != "name"} for p in data["players"]}
    response = client.post(f"/api/sessions/{session}/rounds/preview", json=body)
    assert response.status_code == 200, response.get_json()
    return dict(response.get_json())


@pytest.mark.parametrize("data, net", [
    (DEALT_TUNNELA, {"A": 8, "B": -8}),  # a dealt tunnela of 6H is worth 5, and the seen fee 3
    (KIDNAP, None), (DUBLEES_NO_FINISH, None), (RUMMY, {"A": 0, "B": 12, "C": 5}),
], ids=["dealt tunnela", "kidnap", "finish null", "rummy"])
def test_settle_gives_the_api_preview_payments(client: FlaskClient, make_session: Callable[..., int],
                                               data: dict[str, Any], net: dict[str, int] | None) -> None:
    code, out, err = tiplu("settle", "--json", stdin=json.dumps(data))
    assert code == ExitCode.OK, err
    cli = json.loads(out)
    api = api_preview(client, make_session, data)
    assert cli["net"] == api["net"] and cli["payments"] == api["payments"]
    if net is not None:
        assert cli["net"] == net


@pytest.mark.parametrize("data, field", [
    ({**DEALT_TUNNELA, "colour": "red"}, "unknown field 'colour'"),
    ({**DEALT_TUNNELA, "players": [{"name": "A", "seen": True, "hat": 1}, {"name": "B"}]},
     "players.A: unknown field 'hat'"),
    ({**RUMMY, "players": [{"name": "A", "seen": True}, *RUMMY["players"][1:]]}, "players.A: unknown field 'seen'"),
    ({**DUBLEES_NO_FINISH, "winner": None, "finish": "dublees"}, "finish: a round without a winner has no finish"),
])
def test_settle_refuses_what_the_api_refuses_naming_the_field(client: FlaskClient, make_session: Callable[..., int],
                                                              data: dict[str, Any], field: str) -> None:
    code, out, err = tiplu("settle", stdin=json.dumps(data))
    assert (code, out) == (ExitCode.BAD_INPUT, "")
    assert err.startswith("tiplu settle: ") and field in err and "Traceback" not in err


# --- 15: a lone card in a 22-card grouping is the discard ---------------------------------------------

MELDS_22 = "AS 2S 3S | QH KH AH | 9C 9C 9C | 4D 5D 7S | KS KD KC | 2H 2C 7H | 10S 7C 8D | QD"


def test_the_lone_card_of_a_22_card_grouping_is_the_discard_on_the_cli() -> None:
    code, out, _ = tiplu("check", "--tiplu", "7D", "--json", *MELDS_22.split())
    result = json.loads(out)
    assert code == ExitCode.OK and result["valid"] and result["discard"] == "QD" and len(result["melds"]) == 7
    groups = [group.split() for group in MELDS_22.split(" | ")]
    code, out, _ = tiplu("check", "--jsonl", stdin=json.dumps({"tiplu": "7D", "groups": groups}) + "\n")
    assert code == ExitCode.OK and json.loads(out)["discard"] == "QD"


def test_the_lone_card_is_the_discard_in_the_rummy_family_too() -> None:
    rules = get_rules("rummy")
    groups = [parse_cards(g) for g in ("2S 3S 4S", "5H 6H 7H", "9C 9D 9S", "JC QC KC", "AD AH AC", "6D 7D 8D",
                                       "10S 10H 10C", "QD")]
    result = check_grouping(groups, rules, turned=parse_card("3D"))
    assert result.valid and str(result.discard) == "QD"


@pytest.mark.parametrize("cards, valid", [
    ("AS 2S 3S QH KH AH 9C 9C 9C 4D 5D 7S KS KD KC 2H 2C 7H 10S 7C 8D", True),  # 21 + the discard
    ("2S 2S 3H 3H 4D 4D 5C 5C 6S 6S 7H 7H 8D 8D 9C 9C KS QH AD 10S", True),  # 20 + the discard: dublees
])
def test_discard_without_groups_is_set_apart(cards: str, valid: bool) -> None:
    code, out, err = tiplu("check", "--tiplu", "7D", "--discard", "QD", "--json", *cards.split())
    result = json.loads(out)
    assert (code == ExitCode.OK, result["valid"], result["discard"]) == (valid, valid, "QD"), err
    assert check_hand(parse_cards(cards), get_rules(), tiplu=parse_card("7D"), discard=parse_card("QD")).valid


# --- 16: the closer cannot also close wrongly -----------------------------------------------------------

def test_a_closer_marked_with_a_wrong_close_is_bad_input(client: FlaskClient,
                                                         make_session: Callable[..., int]) -> None:
    with pytest.raises(SettlementError, match="closed this round"):
        settle_round(get_rules("rummy"), [PlayerRound("A", wrong_close=True), PlayerRound("B", penalty=5),
                                          PlayerRound("C", penalty=2)], "A", None)
    data = {"rules": "rummy", "turned": "7D", "winner": "A",
            "players": [{"name": "A", "wrong_close": True}, {"name": "B", "penalty": 5}, {"name": "C", "penalty": 2}]}
    code, out, err = tiplu("settle", stdin=json.dumps(data))
    assert (code, out) == (ExitCode.BAD_INPUT, "") and "A closed this round" in err
    session = make_session(["A", "B", "C"], "rummy")
    body = {"turned": "7D", "winner": "A", "players": {"A": {"wrong_close": True}, "B": {"penalty": 5},
                                                        "C": {"penalty": 2}}}
    answer = client.post(f"/api/sessions/{session}/rounds", json=body)
    assert answer.status_code == 400 and "A closed this round" in answer.get_json()["error"]
    form = {"turned": "7D", "winner": "A", "p0_wrong_close": "on", "p1_penalty": "5", "p2_penalty": "2"}
    page = client.post(f"/sessions/{session}/rounds/new", data=form)
    assert page.status_code in (200, 400) and "A closed this round" in page.get_data(as_text=True)
    assert client.get(f"/api/sessions/{session}").get_json()["rounds"] == []


# --- 17: the emoji variation selector after a suit symbol ---------------------------------------------

@pytest.mark.parametrize("typed, card", [("10♣\ufe0f", "10C"), ("J♥\ufe0f", "JH"), ("a♠️", "AS"), ("Q♦", "QD")])
def test_a_suit_symbol_with_the_variation_selector_is_a_card(typed: str, card: str) -> None:
    assert str(parse_card(typed)) == card
    code, out, _ = tiplu("maal", "--tiplu", "JC", "--json", typed)
    assert code == ExitCode.OK


# --- 18: the order of the tunnela bonus and the cap ----------------------------------------------------

#: A life, a tunnela and 15 loose cards worth 98 (the turned 9C makes the 10s wild: none here).
HAND_98 = parse_cards("2S 3S 4S 5H 5H 5H KD KC QC QH JH JD 8C 6H 6D 4D 4C 3C 3H 2H 2D")


@pytest.mark.parametrize("options, penalty", [
    ({}, 98), ({"max_penalty": 80}, 80), ({"tunnela_bonus": 30}, 68),
    ({"tunnela_bonus": 30, "max_penalty": 80}, 68),  # RULES.md 3's worked example: bonus first, then the cap
    ({"tunnela_bonus": 30, "max_penalty": 60}, 60),
])
def test_the_bonus_comes_off_before_the_cap(options: dict[str, int], penalty: int) -> None:
    assert penalty_points(HAND_98, get_rules("rummy", options), parse_card("9C")).penalty == penalty


def test_the_worked_example_with_a_wrong_close_and_in_the_help() -> None:
    rules = get_rules("rummy", {"tunnela_bonus": 30, "max_penalty": 80})
    points = penalty_points(HAND_98, rules, parse_card("9C")).penalty
    settlement = settle_round(rules, [PlayerRound("A"), PlayerRound("B", penalty=points, wrong_close=True),
                                      PlayerRound("C", penalty=0)], "A", None)
    assert settlement.net["B"] == 68 + 80  # the wrong-close penalty is added after the cap
    code, out, _ = tiplu("rules", "rummy")
    assert code == 0 and "98 card points, bonus 30, cap 80: 68" in " ".join(out.split())
