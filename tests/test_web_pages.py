"""The HTML pages through Flask's test client: every route, the forms, CSRF, table code, escaping."""

from __future__ import annotations

import re
from markupsafe import escape
from pathlib import Path
from typing import Callable

import pytest
from flask.testing import FlaskClient

from scorer import RULE_FAMILIES, get_rules
from scorer.settle import PlayerRound, settle_round
from web.app import create_app
from web_support import PLAYERS, form_version, nepali_round


def errors_in(html: str) -> list[str]:
    return re.findall(r'class="error"[^>]*>([^<]+)<', html)


def found(pattern: str, text: str, group: int = 0) -> str:
    """The first match of ``pattern`` in ``text`` (the test fails when there is none)."""
    match = re.search(pattern, text)
    assert match is not None, pattern
    return match.group(group)


def test_every_page_answers(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    pages = ["/", "/sessions/new", f"/sessions/{sid}", f"/sessions/{sid}/rounds/new", f"/sessions/{sid}/rounds/1",
             f"/sessions/{sid}/rounds/1/edit", f"/sessions/{sid}/history", f"/sessions/{sid}/end", "/licenses",
             "/static/vendor/chart.umd.min.js", "/static/tiplu.js", "/static/tiplu.css"]
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
    assert client.get("/sessions/999").status_code == 404
    assert client.get(f"/sessions/{sid}/rounds/7").status_code == 404
    assert "does not exist" in client.get("/sessions/999").get_data(as_text=True)


def test_new_session_form_offers_every_option_with_its_default(client: FlaskClient) -> None:
    html = client.get("/sessions/new").get_data(as_text=True)
    assert "Start session" in html and "disabled" not in html
    for family_name, family in RULE_FAMILIES.items():
        for option in family.options:
            field = f"opt_{family_name}_{option.name}"
            assert f'name="{field}"' in html, field
            assert str(escape(option.help)) in html
            if option.kind == "int":
                assert re.search(rf'name="{field}"[^>]*value="{option.default}"', html), field
            elif option.kind == "bool":
                tag = found(rf'<input type="checkbox" name="{field}"[^>]*>', html)
                assert ("checked" in tag) == option.default, field


def test_create_session_with_the_form(client: FlaskClient) -> None:
    form = {"rules": "nepali", "player0": "Anna", "player1": "Ben", "player2": "Carla", "rounds_planned": "6",
            "opt_nepali_tiplu_pair": "8", "opt_nepali_murder": "on", "opt_nepali_players_max": "5",
            "opt_nepali_direction": "counter-clockwise"}
    response = client.post("/sessions/new", data=form)
    assert response.status_code == 302
    sid = int(response.location.rstrip("/").split("/")[-1])
    data = client.get(f"/api/sessions/{sid}").get_json()
    assert data["players"] == ["Anna", "Ben", "Carla"]
    assert data["options"]["tiplu_pair"] == 8 and data["options"]["murder"] is True
    assert data["options"]["tunnela_requires_seen"] is False, "an unticked box is off"
    assert data["direction"] == "counter-clockwise" and data["rounds_planned"] == 6


@pytest.mark.parametrize("form, message", [
    ({"rules": "nepali", "player0": "Anna"}, "2 to 5 players"),
    ({"rules": "rummy", "player0": "A", "player1": "B"}, "3 to 6 players"),
    ({"rules": "nepali", "player0": "A", "player1": "B", "opt_nepali_seen_fee": "x"}, "not a whole number"),
    ({"rules": "bridge", "player0": "A", "player1": "B"}, "rules"),
])
def test_bad_session_form_shows_the_error_and_keeps_input(client: FlaskClient, form: dict, message: str) -> None:
    response = client.post("/sessions/new", data=form)
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert any(message in e for e in errors_in(html)), errors_in(html)
    assert client.get("/api/sessions").get_json()["sessions"] == []


def round_form(**overrides: str) -> dict[str, str]:
    form = {"tiplu": "JC", "winner": "Anna", "finish": "melds", "p0_seen": "on", "p0_maal": "5",
            "p1_seen": "on", "p1_maal": "2", "p2_seen": "on", "p2_maal": "10", "p3_maal": "3"}
    form.update(overrides)
    return {k: v for k, v in form.items() if v is not None}


def test_round_entry_edit_and_delete_through_the_pages(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    response = client.post(f"/sessions/{sid}/rounds/new", data=round_form())
    assert response.status_code == 302 and response.location.endswith(f"/sessions/{sid}/rounds/1")
    result = client.get(response.location).get_data(as_text=True)
    expected = settle_round(get_rules("nepali"), [
        PlayerRound("Anna", 5, True), PlayerRound("Ben", 2, True), PlayerRound("Carla", 10, True),
        PlayerRound("Dan", 3, False)], "Anna", "melds")
    for payment in expected.payments:
        assert payment.reason in result
    for name, points in expected.net.items():
        assert re.search(rf'data-player="{name}">.*?{re.escape(format(points, "+d"))}', result, re.S)

    client.post(f"/sessions/{sid}/rounds/new", data=round_form(p1_cards="10C JC QC", p1_maal=""))
    data = client.get(f"/api/sessions/{sid}").get_json()
    assert data["rounds"][1]["players"]["Ben"]["cards"] == ["10C", "JC", "QC"]

    edit_page = client.get(f"/sessions/{sid}/rounds/2/edit").get_data(as_text=True)
    assert 'value="10C JC QC"' in edit_page
    edited = client.post(f"/sessions/{sid}/rounds/1/edit",
                         data={**round_form(winner="Carla"), **form_version(client, sid, 1)})
    assert edited.status_code == 302
    assert client.get(f"/api/sessions/{sid}/rounds/1").get_json()["winner"] == "Carla"

    deleted = client.post(f"/sessions/{sid}/rounds/1/delete", data=form_version(client, sid, 1))
    assert deleted.status_code == 302
    rounds = client.get(f"/api/sessions/{sid}").get_json()["rounds"]
    assert len(rounds) == 1 and rounds[0]["players"]["Ben"]["cards"] == ["10C", "JC", "QC"]


def field_error(html: str, field: str) -> str:
    """The message shown right under ``field`` (empty when there is none)."""
    match = re.search(rf'class="field-error" id="{re.escape(field)}-error"[^>]*>([^<]+)<', html)
    return match.group(1).replace("&#39;", "'").replace("&#34;", '"') if match else ""


@pytest.mark.parametrize("overrides, field, message", [
    ({"p1_maal": "two"}, "p1_maal", "Ben's maal must be a whole number, like 5"),
    ({"p1_maal": "-5"}, "p1_maal", "Ben's maal can't be below 0"),
    ({"p1_cards": "QS QS QS QS", "p1_maal": ""}, "p1_cards", "Ben's cards: 'QS' appears 4 times; 3 decks have 3"),
    ({"p1_cards": "10C 1X"}, "p1_cards", "'1X' isn't a card: tap it in the grid instead"),
    ({"tiplu": "ZZ"}, "tiplu", "'ZZ' isn't a card: tap it in the grid instead"),
    ({"winner": ""}, "winner", 'Tap the winner\'s name, or tick "Nobody won this round".'),
])
def test_bad_round_form_shows_the_error_under_its_field(client: FlaskClient, make_session: Callable[..., int],
                                                        overrides: dict, field: str, message: str) -> None:
    sid = make_session()
    response = client.post(f"/sessions/{sid}/rounds/new", data=round_form(**overrides))
    assert response.status_code == 400
    html = response.get_data(as_text=True)
    assert field_error(html, field) == message
    assert 'aria-label="Anna&#39;s maal" placeholder="0" value="5"' in html, "typed values are kept"
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


def test_an_error_the_scorer_finds_is_shown_in_the_form(client: FlaskClient,
                                                        make_session: Callable[..., int]) -> None:
    sid = make_session(["Anna", "Ben"], options={"dublee_min_players": 3})
    form = {"tiplu": "JC", "winner": "Anna", "finish": "dublees", "p0_maal": "5", "p1_maal": "2"}
    response = client.post(f"/sessions/{sid}/rounds/new", data=form)
    assert response.status_code == 400
    assert any("at least 3 players" in e for e in errors_in(response.get_data(as_text=True)))


def test_the_winner_is_ticked_as_seen(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    response = client.post(f"/sessions/{sid}/rounds/new", data=round_form(winner="Dan"))
    assert response.status_code == 302
    assert client.get(f"/api/sessions/{sid}/rounds/1").get_json()["players"]["Dan"]["seen"] is True


def test_form_submission_token_prevents_double_rounds(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    form = round_form(submission="tap-once")
    assert client.post(f"/sessions/{sid}/rounds/new", data=form).status_code == 302
    assert client.post(f"/sessions/{sid}/rounds/new", data=form).status_code == 302
    assert len(client.get(f"/api/sessions/{sid}").get_json()["rounds"]) == 1


def test_preview_returns_the_scorers_numbers(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    good = client.post(f"/sessions/{sid}/rounds/preview", data=round_form())
    assert good.status_code == 200 and sum(good.get_json()["round"]["net"].values()) == 0
    bad = client.post(f"/sessions/{sid}/rounds/preview", data=round_form(p2_maal="x"))
    assert bad.status_code == 400 and "not a whole number" in bad.get_json()["error"]
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


def test_rummy_round_form(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(["A", "B", "C"], rules="rummy")
    page = client.get(f"/sessions/{sid}/rounds/new").get_data(as_text=True)
    assert 'name="turned"' in page and 'name="tiplu"' not in page and "p0_penalty" in page
    response = client.post(f"/sessions/{sid}/rounds/new", data={
        "turned": "7D", "winner": "A", "p1_penalty": "25", "p2_cards": "2S 3S 4S KD", "p2_wrong_close": "on"})
    assert response.status_code == 302, errors_in(response.get_data(as_text=True))
    rnd = client.get(f"/api/sessions/{sid}/rounds/1").get_json()
    assert rnd["players"]["B"]["penalty"] == 25 and rnd["players"]["C"]["wrong_close"] is True
    assert rnd["players"]["C"]["cards"] == ["2S", "3S", "4S", "KD"]


def test_end_and_reopen(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    page = client.post(f"/sessions/{sid}/end", data={"action": "end"}).get_data(as_text=True)
    winners = client.get(f"/api/sessions/{sid}").get_json()["winners"]
    assert all(w in page for w in winners) and "Reopen" in page
    assert client.post(f"/sessions/{sid}/rounds/new", data=round_form()).status_code == 400
    assert client.post(f"/sessions/{sid}/end", data={"action": "reopen"}).status_code == 302
    assert client.post(f"/sessions/{sid}/rounds/new", data=round_form()).status_code == 302


def test_ledger_page_has_chart_data_and_exports(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(winner="Carla"))
    html = client.get(f"/sessions/{sid}").get_data(as_text=True)
    assert 'id="totals-chart"' in html and "vendor/chart.umd.min.js" in html
    assert f"/api/sessions/{sid}/export.csv" in html and f"/api/sessions/{sid}/export.json" in html
    assert "cdn" not in html.lower()
    totals = client.get(f"/api/sessions/{sid}").get_json()["totals"]
    for name in PLAYERS:
        assert f'data-player="{name}">{totals[name]}<' in html


def test_player_names_are_escaped(client: FlaskClient, make_session: Callable[..., int]) -> None:
    evil = "<script>alert(1)</script>"
    sid = make_session([evil, "Ben"])
    client.post(f"/api/sessions/{sid}/rounds", json={"players": {evil: {"seen": True, "maal": 1}, "Ben": {}},
                                                     "winner": evil, "finish": "melds"})
    for page in ("/", f"/sessions/{sid}", f"/sessions/{sid}/rounds/1", f"/sessions/{sid}/rounds/new",
                 f"/sessions/{sid}/history", f"/sessions/{sid}/end"):
        html = client.get(page).get_data(as_text=True)
        assert evil not in html, page
        assert "&lt;script&gt;" in html, page


def test_csp_header_allows_only_own_scripts(client: FlaskClient) -> None:
    policy = client.get("/").headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def test_csrf_is_required_on_forms_but_not_the_api(tmp_path: Path) -> None:
    app = create_app({"DATABASE": str(tmp_path / "c.db"), "SECRET_KEY": "k", "TESTING": True})
    client = app.test_client()
    refused = client.post("/sessions/new", data={"rules": "nepali", "player0": "A", "player1": "B"})
    assert refused.status_code == 400 and "Send again" in refused.get_data(as_text=True)  # issue 54: values kept
    page = client.get("/sessions/new").get_data(as_text=True)
    token = found(r'name="csrf_token" value="([^"]+)"', page, 1)
    accepted = client.post("/sessions/new", data={"csrf_token": token, "rules": "nepali", "player0": "A",
                                                  "player1": "B"})
    assert accepted.status_code == 302
    assert client.post("/api/sessions", json={"players": ["A", "B"]}).status_code == 201


LAN = {"REMOTE_ADDR": "192.168.1.23"}


def test_table_code_guards_writes_from_the_network(tmp_path: Path) -> None:
    app = create_app({"DATABASE": str(tmp_path / "t.db"), "SECRET_KEY": "k", "TESTING": True,
                      "WTF_CSRF_ENABLED": False, "TABLE_CODE": "482913"})
    client = app.test_client()
    body = {"players": ["A", "B"]}
    refused = client.post("/api/sessions", json=body, environ_base=LAN)
    assert refused.status_code == 403 and "X-Table-Code" in refused.get_json()["error"]
    wrong = client.post("/api/sessions", json=body, environ_base=LAN, headers={"X-Table-Code": "000000"})
    assert wrong.status_code == 403
    assert client.get("/api/sessions", environ_base=LAN).status_code == 403, "reading needs the code too"
    assert client.post("/api/sessions", json=body, environ_base={"REMOTE_ADDR": "127.0.0.1"}).status_code == 403
    ok = client.post("/api/sessions", json=body, environ_base=LAN, headers={"X-Table-Code": "482913"})
    assert ok.status_code == 201

    form = {"rules": "nepali", "player0": "A", "player1": "B"}
    redirected = client.post("/sessions/new", data=form, environ_base=LAN)
    assert redirected.status_code == 302 and "/code" in redirected.location
    assert client.post("/code", data={"code": "nope"}, environ_base=LAN).status_code == 400
    entered = client.post("/code", data={"code": "482913", "next": "/sessions/new"}, environ_base=LAN)
    assert entered.status_code == 302 and entered.location.endswith("/sessions/new")
    assert client.post("/sessions/new", data=form, environ_base=LAN).status_code == 302
    assert len(client.get("/api/sessions").get_json()["sessions"]) == 2


def test_checks_writes_and_photos_all_need_the_code(tmp_path: Path) -> None:
    app = create_app({"DATABASE": str(tmp_path / "t.db"), "SECRET_KEY": "k", "TESTING": True,
                      "WTF_CSRF_ENABLED": False, "TABLE_CODE": "482913", "CAMERA": "none"})
    client = app.test_client()
    sid = client.post("/api/sessions", json={"players": PLAYERS}, headers={"X-Table-Code": "482913"}).get_json()["id"]
    checks = [(f"/api/sessions/{sid}/rounds/preview", {"json": nepali_round()}),
              (f"/sessions/{sid}/rounds/preview", {"data": round_form()}),
              (f"/sessions/{sid}/cards/check", {"json": {"cards": ["JC", "JC"], "purpose": "maal", "tiplu": "JC"}}),
              (f"/sessions/{sid}/verify", {"data": {"tiplu": "JC", "hand": "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C "
                                                                        "KS KH KD 7D 8D JC JH 5C 5D"}})]
    for url, body in checks:
        refused = client.post(url, environ_base=LAN, **body)
        assert refused.status_code in (302, 403), url
        assert client.post(url, environ_base=LAN, headers={"X-Table-Code": "482913"}, **body).status_code == 200, url
    assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), environ_base=LAN).status_code == 403
    redirected = client.post(f"/sessions/{sid}/rounds/new", data=round_form(), environ_base=LAN)
    assert redirected.status_code == 302 and "/code" in redirected.location
    assert "table code" in client.get("/camera/preview.jpg", environ_base=LAN).get_json()["error"]
    assert client.get(f"/api/sessions/{sid}", headers={"X-Table-Code": "482913"}).get_json()["rounds"] == []


@pytest.mark.parametrize("target, expected", [
    ("/sessions/1", "/sessions/1"), ("https://evil.example/x", "/"), ("//evil.example", "/"), ("", "/"),
])
def test_code_page_redirects_only_within_the_site(tmp_path: Path, target: str, expected: str) -> None:
    app = create_app({"DATABASE": str(tmp_path / "r.db"), "SECRET_KEY": "k", "WTF_CSRF_ENABLED": False,
                      "TABLE_CODE": "1234"})
    response = app.test_client().post("/code", data={"code": "1234", "next": target}, environ_base=LAN)
    assert response.location == expected


def test_unexpected_errors_show_no_traceback(app, client: FlaskClient) -> None:
    @app.get("/boom")
    def boom() -> str:
        raise RuntimeError("secret internals")

    api_app = app

    @api_app.get("/api/boom")
    def api_boom() -> str:
        raise RuntimeError("secret internals")

    for url in ("/boom", "/api/boom"):
        response = client.get(url)
        assert response.status_code == 500
        text = response.get_data(as_text=True)
        assert "secret internals" not in text and "Traceback" not in text and "nothing was saved" in text
    assert client.get("/api/boom").get_json()["error"]


def test_default_database_lives_in_the_instance_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TIPLU_DB", raising=False)
    monkeypatch.setenv("TIPLU_SECRET_KEY", "k")
    app = create_app({"TESTING": True, "INSTANCE_PATH": str(tmp_path / "instance")})
    assert app.config["DATABASE"] == str(tmp_path / "instance" / "tiplu.db")
    assert (tmp_path / "instance" / "tiplu.db").exists()
    monkeypatch.setenv("TIPLU_DB", str(tmp_path / "env.db"))
    assert create_app({"TESTING": True, "INSTANCE_PATH": str(tmp_path / "instance")}).config["DATABASE"] == \
        str(tmp_path / "env.db")
    assert (tmp_path / "env.db").exists()


def test_ledger_says_when_the_agreed_rounds_are_played(client: FlaskClient,
                                                       make_session: Callable[..., int]) -> None:
    sid = make_session(rounds_planned=2)
    notice = "agreed rounds are played"
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    assert notice not in client.get(f"/sessions/{sid}").get_data(as_text=True)
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    assert notice in client.get(f"/sessions/{sid}").get_data(as_text=True)


def test_secret_key_is_kept_in_the_instance_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from flask import Flask

    from web.app import _secret_key
    monkeypatch.delenv("TIPLU_SECRET_KEY", raising=False)
    app = Flask("keytest", instance_path=str(tmp_path / "instance"))
    first = _secret_key(app)
    assert len(first) == 64 and _secret_key(app) == first
    assert (tmp_path / "instance" / "secret_key").stat().st_mode & 0o777 == 0o600


def test_resubmitting_a_saved_form_with_other_values_explains(client: FlaskClient,
                                                              make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/sessions/{sid}/rounds/new", data=round_form(submission="t1"))
    again = client.post(f"/sessions/{sid}/rounds/new", data=round_form(submission="t1", winner="Ben"))
    assert again.status_code == 400
    assert any("already saved" in e for e in errors_in(again.get_data(as_text=True)))
    fresh = found(r'name="submission" value="([^"]+)"', again.get_data(as_text=True), 1)
    assert fresh != "t1"
    saved = client.post(f"/sessions/{sid}/rounds/new", data=round_form(submission=fresh, winner="Ben"))
    assert saved.status_code == 302
    assert [r["winner"] for r in client.get(f"/api/sessions/{sid}").get_json()["rounds"]] == ["Anna", "Ben"]


def test_a_round_without_a_winner_from_the_form(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    response = client.post(f"/sessions/{sid}/rounds/new", data=round_form(winner="", finish="melds", no_winner="yes"))
    assert response.status_code == 302, errors_in(response.get_data(as_text=True))
    rnd = client.get(f"/api/sessions/{sid}/rounds/1").get_json()
    assert rnd["winner"] is None and rnd["finish"] is None
    assert sum(rnd["net"].values()) == 0
    expected = settle_round(get_rules("nepali"), [
        PlayerRound("Anna", 5, True), PlayerRound("Ben", 2, True), PlayerRound("Carla", 10, True),
        PlayerRound("Dan", 3, False)], None, None)
    assert rnd["payments"] == expected.to_dict()["payments"]


def test_settings_before_and_after_the_first_round(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(["Anna", "Ben", "Carla"], options={"tiplu_pair": 8})
    page = client.get(f"/sessions/{sid}/settings").get_data(as_text=True)
    assert 'name="player2" value="Carla"' in page
    assert re.search(r'name="opt_nepali_tiplu_pair"[^>]*value="8"', page)
    form = {"rules": "nepali", "player0": "Anna", "player1": "Ben", "player2": "Carla", "player3": "Dan",
            "opt_nepali_tiplu_pair": "8", "opt_nepali_seen_fee": "4", "opt_nepali_players_max": "5",
            "opt_nepali_direction": "clockwise", "title": "Friday", "rounds_planned": "8"}
    assert client.post(f"/sessions/{sid}/settings", data=form).status_code == 302
    data = client.get(f"/api/sessions/{sid}").get_json()
    assert data["players"] == PLAYERS and data["options"]["seen_fee"] == 4 and data["title"] == "Friday"

    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    locked = client.get(f"/sessions/{sid}/settings").get_data(as_text=True)
    assert "fixed once the first round" in locked and "disabled" in locked
    crafted = {**form, "player3": "", "opt_nepali_seen_fee": "9", "title": "Saturday", "rounds_planned": "10"}
    assert client.post(f"/sessions/{sid}/settings", data=crafted).status_code == 302
    after = client.get(f"/api/sessions/{sid}").get_json()
    assert after["players"] == PLAYERS and after["options"]["seen_fee"] == 4
    assert after["title"] == "Saturday" and after["rounds_planned"] == 10


def test_dealt_tunnelas_and_false_declaration_from_the_form(client: FlaskClient,
                                                            make_session: Callable[..., int]) -> None:
    sid = make_session()
    form = round_form(p1_maal="", p1_cards="6H 6H 6H", p1_tunnelas="6H", p3_false_declaration="on")
    assert client.post(f"/sessions/{sid}/rounds/new", data=form).status_code == 302
    rnd = client.get(f"/api/sessions/{sid}/rounds/1").get_json()
    assert rnd["players"]["Ben"]["dealt_tunnelas"] == ["6H"]
    assert rnd["players"]["Dan"]["false_declaration"] is True
    edit = client.get(f"/sessions/{sid}/rounds/1/edit").get_data(as_text=True)
    assert 'name="p1_tunnelas" value="6H"' in edit
    assert re.search(r'name="p3_false_declaration" checked', edit)
