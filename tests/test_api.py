"""The JSON API contract: sessions, rounds, idempotency, edits, exports and every bad input."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from typing import Any, Callable

import pytest
from flask.testing import FlaskClient

from scorer import get_rules
from scorer.maal import maal_points
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from scorer import parse_card, parse_cards
from web.payloads import round_entry, round_form
from web_support import PLAYERS, if_match, nepali_round


def expected_net(payload: dict[str, Any], rules: str = "nepali", options: dict[str, Any] | None = None) -> dict[str, int]:
    """What the scorer itself says for a payload with numeric maal (no web code involved)."""
    ruleset = get_rules(rules, options or {})
    players = [PlayerRound(name, maal=entry.get("maal", 0), seen=entry.get("seen", False))
               for name, entry in payload["players"].items()]
    return settle_round(ruleset, players, payload["winner"], payload["finish"]).to_dict()["net"]


def state(client: FlaskClient, session_id: int) -> dict[str, Any]:
    data = client.get(f"/api/sessions/{session_id}").get_json()
    return {"rounds": data["rounds"], "totals": data["totals"], "options": data["options"], "players": data["players"]}


def test_create_and_get_session(client: FlaskClient) -> None:
    response = client.post("/api/sessions", json={"players": PLAYERS, "rules": "nepali",
                                                  "options": {"tiplu_pair": 8}, "rounds_planned": 8})
    assert response.status_code == 201
    body = response.get_json()
    assert body["rounds_planned"] == 8
    data = client.get(f"/api/sessions/{body['id']}").get_json()
    assert data["players"] == PLAYERS
    assert data["rules"] == "nepali"
    assert data["options"]["tiplu_pair"] == 8
    assert data["options"] == dict(get_rules("nepali", {"tiplu_pair": 8}).options)
    assert data["rounds"] == [] and data["totals"] == {p: 0 for p in PLAYERS}


def test_round_matches_scorer_and_sums_to_zero(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    payload = nepali_round()
    response = client.post(f"/api/sessions/{sid}/rounds", json=payload)
    assert response.status_code == 201
    body = response.get_json()
    assert body["number"] == 1
    assert body["net"] == expected_net(payload)
    assert sum(body["net"].values()) == 0
    assert body["payments"], "the scorer's payment lines are returned"
    assert all(set(p) == {"from", "to", "points", "reason"} for p in body["payments"])
    data = client.get(f"/api/sessions/{sid}").get_json()
    assert data["rounds"][0]["payments"] == body["payments"]
    assert data["totals"] == body["net"]


def test_maal_cards_are_valued_by_the_scorer(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    cards = ["10C", "JC", "QC", "QC"]
    payload = nepali_round(Ben={"seen": True, "cards": cards})
    body = client.post(f"/api/sessions/{sid}/rounds", json=payload).get_json()
    scored = maal_points(parse_cards(cards), get_rules("nepali"), parse_card("JC"), seen=True).to_dict()
    assert body["players"]["Ben"]["maal"] == scored["total"]
    assert body["players"]["Ben"]["maal_items"] == scored["items"]
    assert body["players"]["Ben"]["cards"] == cards
    assert sum(body["net"].values()) == 0


def test_rummy_round_with_penalty_cards(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(["Anna", "Ben", "Carla"], rules="rummy")
    cards = ["2S", "9H", "KD"]
    payload = {"turned": "7D", "winner": "Anna", "finish": "melds",
               "players": {"Anna": {}, "Ben": {"penalty": 12}, "Carla": {"cards": cards}}}
    response = client.post(f"/api/sessions/{sid}/rounds", json=payload)
    assert response.status_code == 201, response.get_json()
    body = response.get_json()
    rules = get_rules("rummy")
    counted = penalty_points(parse_cards(cards), rules, parse_card("7D"))
    assert body["players"]["Carla"]["penalty"] == counted.penalty
    players = [PlayerRound("Anna", penalty=0), PlayerRound("Ben", penalty=12),
               PlayerRound("Carla", penalty=counted.penalty)]
    assert body["net"] == settle_round(rules, players, "Anna", "melds").to_dict()["net"]
    data = client.get(f"/api/sessions/{sid}").get_json()
    assert data["lower_is_better"] is True
    assert data["standings"][0]["total"] == min(data["totals"].values())


def test_idempotency_key_returns_the_same_round(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    headers = {"Idempotency-Key": "round-1-from-phone-a"}
    first = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), headers=headers)
    again = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert len(client.get(f"/api/sessions/{sid}").get_json()["rounds"]) == 1
    other = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(winner="Ben"), headers=headers)
    assert other.status_code == 409
    assert "Idempotency-Key" in other.get_json()["error"]
    assert len(client.get(f"/api/sessions/{sid}").get_json()["rounds"]) == 1


def test_put_edits_and_recomputes_later_totals(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    first, second = nepali_round(), nepali_round(winner="Carla")
    client.post(f"/api/sessions/{sid}/rounds", json=first)
    client.post(f"/api/sessions/{sid}/rounds", json=second)
    edited = nepali_round(winner="Ben", Anna={"seen": True, "maal": 0})
    response = client.put(f"/api/sessions/{sid}/rounds/1", json=edited,
                          headers=if_match(client, f"/api/sessions/{sid}/rounds/1"))
    assert response.status_code == 200
    assert response.get_json()["net"] == expected_net(edited)
    data = client.get(f"/api/sessions/{sid}").get_json()
    net1, net2 = expected_net(edited), expected_net(second)
    assert data["rounds"][1]["totals"] == {p: net1[p] + net2[p] for p in PLAYERS}
    assert data["totals"] == data["rounds"][1]["totals"]


def test_delete_renumbers_and_recomputes(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    rounds = [nepali_round(), nepali_round(winner="Carla"), nepali_round(winner="Ben")]
    for payload in rounds:
        client.post(f"/api/sessions/{sid}/rounds", json=payload)
    assert client.delete(f"/api/sessions/{sid}/rounds/2", headers=if_match(client, f"/api/sessions/{sid}/rounds/2")).status_code == 204
    data = client.get(f"/api/sessions/{sid}").get_json()
    assert [r["number"] for r in data["rounds"]] == [1, 2]
    assert data["rounds"][1]["winner"] == "Ben"
    assert data["rounds"][1]["dealer"] == PLAYERS[1]
    net1, net3 = expected_net(rounds[0]), expected_net(rounds[2])
    assert data["totals"] == {p: net1[p] + net3[p] for p in PLAYERS}
    assert client.get(f"/api/sessions/{sid}/rounds/3").status_code == 404


def test_get_round_and_history(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    client.put(f"/api/sessions/{sid}/rounds/1", json=nepali_round(winner="Carla"),
               headers=if_match(client, f"/api/sessions/{sid}/rounds/1"))
    assert client.get(f"/api/sessions/{sid}/rounds/1").get_json()["winner"] == "Carla"
    history = client.get(f"/api/sessions/{sid}/history").get_json()["history"]
    assert [h["action"] for h in history] == ["edit round", "add round", "create session"]
    assert history[0]["before"]["winner"] == "Anna" and history[0]["after"]["winner"] == "Carla"


def test_exports(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    payload = nepali_round()
    client.post(f"/api/sessions/{sid}/rounds", json=payload)
    response = client.get(f"/api/sessions/{sid}/export.csv")
    assert response.status_code == 200 and response.mimetype == "text/csv"
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [r["player"] for r in rows] == PLAYERS
    assert {r["player"]: int(r["net"]) for r in rows} == expected_net(payload)
    exported = client.get(f"/api/sessions/{sid}/export.json")
    assert "attachment" in exported.headers["Content-Disposition"]
    data = json.loads(exported.get_data())
    assert data["session"]["rounds"][0]["net"] == expected_net(payload)
    assert data["audit"]


def test_options_fixed_after_first_round(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    ok = client.patch(f"/api/sessions/{sid}", json={"options": {"seen_fee": 4}})
    assert ok.status_code == 200 and ok.get_json()["options"]["seen_fee"] == 4
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    locked = client.patch(f"/api/sessions/{sid}", json={"options": {"seen_fee": 5}})
    assert locked.status_code == 409 and "fixed" in locked.get_json()["error"]
    assert client.get(f"/api/sessions/{sid}").get_json()["options"]["seen_fee"] == 4
    assert client.patch(f"/api/sessions/{sid}", json={"rounds_planned": 12}).get_json()["rounds_planned"] == 12


def test_end_session_blocks_rounds_until_reopened(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    assert client.post(f"/api/sessions/{sid}/end").get_json()["ended_at"]
    blocked = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    assert blocked.status_code == 409
    client.post(f"/api/sessions/{sid}/end", json={"ended": False})
    assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round()).status_code == 201


BAD_ROUNDS: list[tuple[str, Any, str]] = [
    ("unknown player", nepali_round(Zed={"seen": True, "maal": 1}), "unknown player 'Zed'"),
    ("unknown winner", nepali_round(winner="Zed"), "unknown player 'Zed'"),
    ("winner has not seen", nepali_round(winner="Dan"), "Dan"),
    ("fourth copy", nepali_round(Ben={"seen": True, "cards": ["QS", "QS", "QS", "QS"]}), "'QS' appears 4 times"),
    ("malformed number", nepali_round(Ben={"seen": True, "maal": "five"}), "not a whole number"),
    ("fractional number", nepali_round(Ben={"seen": True, "maal": 2.5}), "not a whole number"),
    ("negative maal", nepali_round(Ben={"seen": True, "maal": -3}), "below 0"),
    ("bad card", nepali_round(tiplu="1X"), "unknown suit"),
    ("bad finish", nepali_round(finish="sideways"), "finish"),
    ("missing player", {"tiplu": "JC", "winner": None, "finish": None,
                        "players": {"Anna": {"seen": True, "maal": 1}}}, "missing"),
    ("no players", {"tiplu": "JC"}, "players"),
    ("unknown field", {**nepali_round(), "colour": "red"}, "unknown field"),
    ("rummy field in nepali", nepali_round(Ben={"seen": True, "penalty": 3}), "unknown field"),
    ("both maal and cards", nepali_round(Ben={"seen": True, "maal": 2, "cards": ["JC"]}), "not both"),
    ("cards without tiplu", nepali_round(tiplu=None, Ben={"seen": True, "cards": ["JC"]}), "tiplu"),
]


@pytest.mark.parametrize("case, payload, message", BAD_ROUNDS, ids=[c[0] for c in BAD_ROUNDS])
def test_bad_round_is_rejected_and_changes_nothing(client: FlaskClient, make_session: Callable[..., int],
                                                   case: str, payload: Any, message: str) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    before = state(client, sid)
    response = client.post(f"/api/sessions/{sid}/rounds", json=payload)
    assert 400 <= response.status_code < 500
    assert message in response.get_json()["error"]
    assert state(client, sid) == before
    edit = client.put(f"/api/sessions/{sid}/rounds/1", json=payload,
                      headers=if_match(client, f"/api/sessions/{sid}/rounds/1"))
    assert 400 <= edit.status_code < 500 and message in edit.get_json()["error"]
    assert state(client, sid) == before


@pytest.mark.parametrize("body, message", [
    (b"{not json", "malformed JSON"),
    (b"", "JSON object"),
    (b"[1, 2]", "JSON object"),
    (b"\xff\xfe", "UTF-8"),
])
def test_malformed_json(client: FlaskClient, make_session: Callable[..., int], body: bytes, message: str) -> None:
    sid = make_session()
    before = state(client, sid)
    for url in ("/api/sessions", f"/api/sessions/{sid}/rounds"):
        response = client.post(url, data=body, content_type="application/json")
        assert response.status_code == 400
        assert message in response.get_json()["error"]
    assert state(client, sid) == before
    assert len(client.get("/api/sessions").get_json()["sessions"]) == 1


@pytest.mark.parametrize("method, url", [
    ("get", "/api/sessions/999"), ("get", "/api/sessions/abc"), ("post", "/api/sessions/999/rounds"),
    ("get", "/api/sessions/999/export.csv"), ("get", "/api/sessions/999/export.json"),
    ("delete", "/api/sessions/999/rounds/1"), ("get", "/api/sessions/999/history"),
    ("get", "/api/sessions/abc/history"), ("put", "/api/sessions/abc/rounds/1"), ("get", "/api/sessions/1/rounds/x"),
])
def test_unknown_session_is_404(client: FlaskClient, method: str, url: str) -> None:
    response = getattr(client, method)(url, json=nepali_round())
    assert response.status_code == 404
    assert "does not exist" in response.get_json()["error"]


@pytest.mark.parametrize("players, rules, options, message", [
    (["Anna"], "nepali", {}, "2 to 5 players"),
    (["A", "B", "C", "D", "E", "F"], "nepali", {}, "players_max"),
    (["A", "B"], "rummy", {}, "3 to 6 players"),
    (["A", "a"], "nepali", {}, "given twice"),
    (["A", ""], "nepali", {}, "empty"),
    ("Anna,Ben", "nepali", {}, "list of names"),
    (["A", "B"], "poker", {}, "unknown rules"),
    (["A", "B"], "nepali", {"tiplu_pair": "many"}, "not a whole number"),
    (["A", "B"], "nepali", {"bogus": 1}, "unknown option"),
])
def test_bad_session_is_rejected(client: FlaskClient, players: Any, rules: str, options: dict[str, Any],
                                 message: str) -> None:
    response = client.post("/api/sessions", json={"players": players, "rules": rules, "options": options})
    assert response.status_code == 400
    assert message in response.get_json()["error"]
    assert client.get("/api/sessions").get_json()["sessions"] == []


def test_six_players_with_the_option(client: FlaskClient) -> None:
    response = client.post("/api/sessions", json={"players": list("ABCDEF"), "options": {"players_max": 6}})
    assert response.status_code == 201


def test_request_too_large_is_413(app, client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    app.config["MAX_CONTENT_LENGTH"] = 1024
    response = client.post(f"/api/sessions/{sid}/rounds", data=b"x" * 4096, content_type="application/json")
    assert response.status_code == 413
    assert "too large" in response.get_json()["error"]


def test_preview_stores_nothing(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    response = client.post(f"/api/sessions/{sid}/rounds/preview", json=nepali_round())
    assert response.status_code == 200
    assert response.get_json()["net"] == expected_net(nepali_round())
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


def test_rules_lists_every_option(client: FlaskClient) -> None:
    from scorer import RULE_FAMILIES
    data = client.get("/api/rules").get_json()
    for name, family in RULE_FAMILIES.items():
        assert [o["name"] for o in data[name]["options"]] == [o.name for o in family.options]
        assert [o["default"] for o in data[name]["options"]] == [o.default for o in family.options]


def test_dealt_tunnela_and_false_declaration_are_scored_and_kept(client: FlaskClient,
                                                                  make_session: Callable[..., int]) -> None:
    sid = make_session(options={"invalid_declaration_fine": 15})
    cards = ["6H", "6H", "6H", "10C"]
    payload = nepali_round(Ben={"seen": True, "cards": cards, "dealt_tunnelas": ["6H"]},
                           Dan={"seen": False, "maal": 3, "false_declaration": True})
    body = client.post(f"/api/sessions/{sid}/rounds", json=payload).get_json()
    rules = get_rules("nepali", {"invalid_declaration_fine": 15})
    maal = maal_points(parse_cards(cards), rules, parse_card("JC"), seen=True, dealt_tunnelas=[parse_card("6H")])
    assert body["players"]["Ben"]["maal"] == maal.total
    players = [PlayerRound("Anna", 5, True), PlayerRound("Ben", maal.total, True), PlayerRound("Carla", 10, True),
               PlayerRound("Dan", 3, False, false_declaration=True)]
    assert body["net"] == settle_round(rules, players, "Anna", "melds").to_dict()["net"]
    stored = client.get(f"/api/sessions/{sid}/rounds/1").get_json()
    assert stored["players"]["Ben"]["dealt_tunnelas"] == ["6H"]
    assert stored["players"]["Dan"]["false_declaration"] is True


def test_a_round_reads_the_same_from_the_form_and_from_json() -> None:
    """The round form becomes the API's payload, so both go through one parser."""
    rules = get_rules("nepali")
    form = {"tiplu": "jc", "winner": "Anna", "finish": "melds", "p0_seen": "on", "p0_maal": "5",
            "p1_seen": "on", "p1_cards": "10C JC QC", "p1_seen_by": "dublees", "p3_false_declaration": "on"}
    body = {"tiplu": "JC", "winner": "Anna", "finish": "melds",
            "players": {"Anna": {"seen": True, "maal": 5}, "Ben": {"seen": True, "cards": ["10C", "JC", "QC"],
                                                                   "seen_by": "dublees"},
                        "Carla": {}, "Dan": {"false_declaration": True}}}
    from_form = round_entry(round_form(form, PLAYERS, rules), PLAYERS, rules)
    from_json = round_entry(body, PLAYERS, rules)
    assert dataclasses.replace(from_form, fingerprint="") == dataclasses.replace(from_json, fingerprint="")
    assert from_form.fingerprint != from_json.fingerprint, "the Idempotency-Key compares what was sent"


def test_the_pages_json_routes_answer_errors_as_json(client: FlaskClient, make_session: Callable[..., int]) -> None:
    """A page's script gets {"error"} whatever it accepts; an unknown session answers like any page."""
    sid = make_session()
    html = {"Accept": "text/html"}
    bad = client.post(f"/sessions/{sid}/cards/check", data="x", headers=html)
    assert bad.status_code == 400 and "send a JSON object" in bad.get_json()["error"]
    preview = client.post(f"/sessions/{sid}/rounds/preview", data={"p0_maal": "lots"}, headers=html)
    assert preview.status_code == 400 and "not a whole number" in preview.get_json()["error"]
    unknown = client.post("/sessions/999/cards/check", json={"cards": []}, headers=html)
    assert unknown.status_code == 404 and not unknown.is_json
    assert "session 999 does not exist" in unknown.get_data(as_text=True)
    assert client.post("/sessions/abc/cards/check", json={"cards": []},
                       headers={"Accept": "application/json"}).get_json() == {"error": "session 'abc' does not exist"}


def session_of(client: FlaskClient, session_id: int) -> dict[str, Any]:
    return client.get(f"/api/sessions/{session_id}").get_json()


def test_a_session_keeps_its_money_rate_and_shows_it_everywhere(client: FlaskClient) -> None:
    """The rate is stored with the session, given back by every session answer and both exports;
    the points (net, payments, totals) stay what the scorer made them."""
    created = client.post("/api/sessions", json={"players": PLAYERS, "rate": {"per_point": 2.5, "currency": " Rs "}})
    assert created.status_code == 201 and created.get_json()["rate"] == {"per_point": 2.5, "currency": "Rs"}
    sid = created.get_json()["id"]
    payload = nepali_round()
    added = client.post(f"/api/sessions/{sid}/rounds", json=payload).get_json()
    assert added["net"] == expected_net(payload) and all(isinstance(p["points"], int) for p in added["payments"])
    assert session_of(client, sid)["rate"] == {"per_point": 2.5, "currency": "Rs"}
    rows = list(csv.DictReader(io.StringIO(client.get(f"/api/sessions/{sid}/export.csv").get_data(as_text=True))))
    assert {(r["rate_per_point"], r["currency"]) for r in rows} == {("2.50", "Rs")}
    assert json.loads(client.get(f"/api/sessions/{sid}/export.json").get_data())["session"]["rate"] == \
        {"per_point": 2.5, "currency": "Rs"}
    changed = client.patch(f"/api/sessions/{sid}", json={"rate": {"per_point": "10"}})
    assert changed.status_code == 200 and changed.get_json()["rate"] == {"per_point": 10, "currency": ""}
    assert changed.get_json()["totals"] == added["totals"]
    assert client.patch(f"/api/sessions/{sid}", json={"title": "Tihar"}).get_json()["rate"]["per_point"] == 10
    removed = client.patch(f"/api/sessions/{sid}", json={"rate": None}).get_json()
    assert removed["rate"] is None
    rows = list(csv.DictReader(io.StringIO(client.get(f"/api/sessions/{sid}/export.csv").get_data(as_text=True))))
    assert {(r["rate_per_point"], r["currency"]) for r in rows} == {("", "")}
    history = client.get(f"/api/sessions/{sid}/history").get_json()["history"]
    assert [e["after"]["rate"] for e in history if e["action"] == "edit session"][-1] == \
        {"per_point": 10, "currency": ""}


def test_a_session_without_a_rate_says_null(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    assert session_of(client, sid)["rate"] is None
    assert client.post("/api/sessions", json={"players": PLAYERS, "rate": None}).get_json()["rate"] is None
    assert client.post("/api/sessions", json={"players": PLAYERS, "rate": {"per_point": 0}}).get_json()["rate"] == \
        {"per_point": 0, "currency": ""}


@pytest.mark.parametrize(("rate", "field", "words"), [
    ({"per_point": -1, "currency": "Rs"}, "rate.per_point", "below 0"),
    ({"per_point": "-0.5"}, "rate.per_point", "below 0"),
    ({"per_point": "ten"}, "rate.per_point", "not a number"),
    ({"per_point": True}, "rate.per_point", "not a number"),
    ({"per_point": [10]}, "rate.per_point", "not a number"),
    ({"per_point": "1e3"}, "rate.per_point", "not a number"),
    ({"per_point": 1.005}, "rate.per_point", "more than 2 decimals"),
    ({"per_point": 10**30}, "rate.per_point", "above 100000"),
    ({"per_point": 1e308}, "rate.per_point", "above 100000"),
    ({"per_point": "9" * 40}, "rate.per_point", "not a number"),
    ({"currency": "Rs"}, "rate.per_point", "give the money one point is worth"),
    ({"per_point": 10, "currency": "Nepali rupees!"}, "rate.currency", "at most 12"),
    ({"per_point": 10, "currency": 5}, "rate.currency", "write it as text"),
    ({"per_point": 10, "currency": "R\u0000s"}, "rate.currency", "write it as text"),
    ({"per_point": 10, "colour": "red"}, "rate", "unknown field 'colour'"),
    (10, "rate", "per_point"),
])
def test_a_bad_rate_is_refused_naming_its_field(client: FlaskClient, make_session: Callable[..., int],
                                                rate: Any, field: str, words: str) -> None:
    before = client.get("/api/sessions").get_json()["sessions"]
    response = client.post("/api/sessions", json={"players": PLAYERS, "rate": rate})
    assert response.status_code == 400, response.get_json()
    assert response.get_json()["error"].startswith(f"{field}: ") and words in response.get_json()["error"]
    assert client.get("/api/sessions").get_json()["sessions"] == before
    sid = make_session()
    patched = client.patch(f"/api/sessions/{sid}", json={"rate": rate})
    assert patched.status_code == 400 and patched.get_json()["error"].startswith(f"{field}: ")
    assert session_of(client, sid)["rate"] is None


def test_a_nan_rate_is_a_400(client: FlaskClient) -> None:
    """Python's JSON reader takes NaN and Infinity: they are no rate either."""
    for number in ("NaN", "Infinity", "-Infinity"):
        response = client.post("/api/sessions", data='{"players": ["Anna", "Ben"], "rate": {"per_point": %s}}' % number,
                               content_type="application/json")
        assert response.status_code == 400 and response.get_json()["error"].startswith("rate.per_point: ")
