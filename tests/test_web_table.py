"""Issue 13 through Flask's test client: joining, undo and history, payments, house rules, installing."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Callable

import pytest
from flask.testing import FlaskClient

from scorer import RULE_FAMILIES
from scorer.payments import evening_net, fewest_payments, net_pairs, read_settlement
from web.app import create_app
from web_support import PLAYERS, form_version, if_match, nepali_round

LAN = {"REMOTE_ADDR": "192.168.1.23"}
CODE = "482913"


def text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'").replace("&#34;", '"')


@pytest.fixture
def coded(tmp_path: Path) -> FlaskClient:
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "coded.db"), "SECRET_KEY": "t",
                      "WTF_CSRF_ENABLED": False, "TABLE_CODE": CODE, "CAMERA": "none"})
    return app.test_client()


def test_join_shows_the_code_and_qr_only_to_those_already_in(coded: FlaskClient) -> None:
    coded.post("/api/sessions", json={"players": PLAYERS})
    outsider = coded.get("/join", environ_base=LAN)
    assert outsider.status_code == 302 and "/code" in outsider.location
    for path in ("/", "/sessions/1", "/sessions/1/rounds/new", "/sessions/1/history", "/code", "/join"):
        response = coded.get(path, environ_base=LAN)
        if response.status_code == 302:
            response = coded.get(response.location, environ_base=LAN)
        page = response.get_data(as_text=True)
        assert CODE not in page, f"{path} shows the table code to a phone without it"
        assert 'id="join-link"' not in page, path
    assert coded.get(f"/?table_code={CODE}", environ_base=LAN).status_code == 302
    inside = coded.get("/join", environ_base=LAN)
    html = inside.get_data(as_text=True)
    assert inside.status_code == 200 and 'id="join-link"' in html
    assert f"http://localhost/?table_code={CODE}" not in html and "data:image/svg+xml" in html
    assert f'<strong class="table-code">{CODE}</strong>' in html


def test_the_qr_code_carries_the_address_and_the_table_code(coded: FlaskClient) -> None:
    cv2 = pytest.importorskip("cv2")
    np = pytest.importorskip("numpy")
    segno = pytest.importorskip("segno")
    coded.set_cookie("tiplu_table_code", CODE, domain="192.168.1.5")
    html = coded.get("/join", base_url="http://192.168.1.5:8000", environ_base=LAN).get_data(as_text=True)
    assert "http://192.168.1.5:8000/" in html
    link = f"http://192.168.1.5:8000/?table_code={CODE}"
    matrix = segno.make(link, error="m")
    image = np.array([[0 if dark else 255 for dark in row] for row in matrix.matrix], dtype=np.uint8)
    image = cv2.resize(np.pad(image, 4, constant_values=255), None, fx=8, fy=8, interpolation=cv2.INTER_NEAREST)
    assert cv2.QRCodeDetector().detectAndDecode(image)[0] == link
    assert matrix.svg_data_uri(scale=6, border=2, dark="#000", light="#fff") in html
    joined = coded.get(f"/?table_code={CODE}", environ_base={"REMOTE_ADDR": "192.168.1.77"})
    name, _, value = joined.headers["Set-Cookie"].split(";")[0].partition("=")
    assert joined.status_code == 302 and name == "tiplu_table_code" and value and value != CODE, \
        "the phone gets a device's token, never the code itself"


def test_a_wrong_code_in_the_link_is_not_echoed(coded: FlaskClient) -> None:
    page = coded.get("/?table_code=999999", environ_base=LAN, follow_redirects=True).get_data(as_text=True)
    assert "999999" not in page


def test_a_deleted_round_comes_back_from_the_message_and_history(client: FlaskClient,
                                                                 make_session: Callable[..., int]) -> None:
    sid = make_session()
    for maal in (2, 4, 6):
        client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(Ben={"seen": True, "maal": maal}))
    before = client.get(f"/api/sessions/{sid}").get_json()
    deleted = client.post(f"/sessions/{sid}/rounds/2/delete", data=form_version(client, sid, 2),
                          follow_redirects=True).get_data(as_text=True)
    undo = re.search(r'<form method="post" action="([^"]+)" class="undo-form">', deleted)
    assert undo and "Undo" in deleted
    assert len(client.get(f"/api/sessions/{sid}").get_json()["rounds"]) == 2
    restored = client.post(undo.group(1))
    assert restored.status_code == 302 and restored.location.endswith(f"/sessions/{sid}/rounds/2")
    after = client.get(f"/api/sessions/{sid}").get_json()
    assert [r["net"] for r in after["rounds"]] == [r["net"] for r in before["rounds"]]
    assert after["totals"] == before["totals"]
    assert after["rounds"][1]["players"]["Ben"]["maal"] == 4
    again = client.post(undo.group(1))
    assert again.status_code == 409 and "already restored" in again.get_data(as_text=True)
    history = text(client.get(f"/sessions/{sid}/history").get_data(as_text=True))
    assert "Round 2 restored" in history and "restored since" in history and "round round" not in history

    client.delete(f"/api/sessions/{sid}/rounds/3", headers=if_match(client, f"/api/sessions/{sid}/rounds/3"))
    page = client.get(f"/sessions/{sid}/history").get_data(as_text=True)
    button = re.search(r'href="(/sessions/\d+/history/(\d+)/restore)"', page)
    assert button and "Restore round 3" in page
    api = client.post(f"/api/sessions/{sid}/history/{button.group(2)}/restore")
    assert api.status_code == 201 and api.get_json()["number"] == 3
    assert client.get(f"/api/sessions/{sid}").get_json()["totals"] == before["totals"]
    assert client.post(f"/api/sessions/{sid}/history/1/restore").status_code == 404


def test_history_names_each_changed_field(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    client.put(f"/api/sessions/{sid}/rounds/1", json=nepali_round(winner="Carla", Ben={"seen": True, "maal": 6}),
               headers=if_match(client, f"/api/sessions/{sid}/rounds/1"))
    history = text(client.get(f"/sessions/{sid}/history").get_data(as_text=True))
    assert "Ben's maal: 2 → 6" in history
    assert "winner: Anna → Carla" in history
    client.patch(f"/api/sessions/{sid}", json={"title": "Dashain"})
    assert "title: – → Dashain" in text(client.get(f"/sessions/{sid}/history").get_data(as_text=True))


def test_a_deleted_sessions_audit_stays_readable(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(title="Tihar night")
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    totals = client.get(f"/api/sessions/{sid}").get_json()["totals"]
    assert client.delete(f"/api/sessions/{sid}").status_code in (200, 204)
    index = client.get("/").get_data(as_text=True)
    assert "Deleted sessions" in index and f'href="/sessions/{sid}/history"' in index
    page = client.get(f"/sessions/{sid}/history")
    assert page.status_code == 200
    shown = text(page.get_data(as_text=True))
    assert "deleted session" in shown and "Tihar night" in shown and "Round 1 added" in shown
    assert "Totals: " + ", ".join(f"{name} {total}" for name, total in totals.items()) in shown
    assert client.get("/sessions/99/history").status_code == 404


def test_round_and_end_pages_pay_in_lines_people_can_pay(client: FlaskClient,
                                                         make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(winner="Carla"))
    session = client.get(f"/api/sessions/{sid}").get_json()
    page = text(client.get(f"/sessions/{sid}/rounds/1").get_data(as_text=True))
    for line in net_pairs(read_settlement(session["rounds"][0]).payments):
        assert f"{line.payer} pays {line.payee} {line.points}" in page
        assert all(item.reason in page for item in line.items)
    plan = fewest_payments(evening_net(read_settlement(r) for r in session["rounds"]))
    end = text(client.get(f"/sessions/{sid}/end").get_data(as_text=True))
    assert f"{len(plan)} payments settle the whole evening" in end
    assert all(f"{p.payer} pays {p.payee} {p.points}" in end for p in plan)
    assert len(plan) <= len(PLAYERS) - 1


def test_penalty_totals_are_not_settled_as_payments(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(["Anna", "Ben", "Carla"], rules="rummy")
    client.post(f"/api/sessions/{sid}/rounds", json={"turned": "7D", "winner": "Anna", "players": {
        "Anna": {}, "Ben": {"penalty": 20}, "Carla": {"penalty": 7}}})
    assert "Settle up" not in client.get(f"/sessions/{sid}/end").get_data(as_text=True)


def test_house_rules_read_as_plain_words_from_the_registry(client: FlaskClient) -> None:
    html = client.get("/sessions/new").get_data(as_text=True)
    assert "House rules (standard)" in html
    assert "<code>" not in html and "(default:" not in html
    for family in RULE_FAMILIES.values():
        for spec in family.options:
            assert spec.help.replace("'", "&#39;") in html, spec.name
            assert f">{spec.name}<" not in html
    assert "2 to 5 players" in html and "3 to 6 players" in html
    form = {"rules": "nepali", "player0": "Anna", "player1": "Ben", "opt_nepali_tiplu_pair": "8",
            "opt_nepali_players_max": "5", "opt_nepali_tunnela_requires_seen": "on"}
    client.post("/sessions/new", data=form)
    settings = client.get("/sessions/1/settings").get_data(as_text=True)
    assert "House rules (1 changed)" in settings


def test_seats_and_player_limit_agree(client: FlaskClient) -> None:
    form = {"rules": "nepali", **{f"player{i}": name for i, name in enumerate("ABCDEF")}}
    refused = text(client.post("/sessions/new", data=form).get_data(as_text=True))
    assert "need 2 to 5 players, got 6" in refused
    form["opt_nepali_players_max"] = "6"
    assert client.post("/sessions/new", data=form).status_code == 302


def test_installable_manifest_icons_and_service_worker(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    manifest = client.get("/manifest.webmanifest")
    assert manifest.mimetype == "application/manifest+json"
    body = json.loads(manifest.get_data(as_text=True))
    assert body["name"] == "tiplu" and body["display"] == "standalone" and body["start_url"] == "/"
    for icon in body["icons"]:
        assert client.get(icon["src"]).status_code == 200, icon["src"]
    worker = client.get("/sw.js")
    assert worker.status_code == 200 and worker.headers["Service-Worker-Allowed"] == "/"
    shell = re.search(r"var SHELL = \[([^\]]+)\]", worker.get_data(as_text=True))
    assert shell
    for path in re.findall(r'"([^"]+)"', shell.group(1)):
        assert client.get(path).status_code == 200, path


def test_a_failing_restore_changes_nothing(tmp_path: Path) -> None:
    """A database error half way through a restore (the audit insert) rolls the whole restore back."""
    import sqlite3

    from web import ledger
    from web.db import open_db
    from web.payloads import new_session, round_entry

    db = open_db(tmp_path / "restore.db")
    sid = ledger.create_session(db, new_session({"players": PLAYERS}))
    setup = ledger.session_setup(db, sid)
    for winner in ("Anna", "Carla", "Ben"):
        ledger.add_round(db, sid, round_entry(nepali_round(winner=winner), setup.players, setup.rules))
    kept = ledger.delete_round(db, sid, 2)
    before = ledger.get_session(db, sid)
    db.execute("CREATE TEMP TRIGGER refuse_audit BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    with pytest.raises(sqlite3.IntegrityError):
        ledger.restore_round(db, sid, kept)
    db.execute("DROP TRIGGER refuse_audit")
    assert not db.conn.in_transaction
    assert ledger.get_session(db, sid) == before
    restored = ledger.restore_round(db, sid, kept)
    assert restored["number"] == 2 and restored["winner"] == "Carla"
    assert [r["winner"] for r in ledger.get_session(db, sid)["rounds"]] == ["Anna", "Carla", "Ben"]


def test_a_too_big_maal_is_marked_with_the_other_mistakes(client: FlaskClient,
                                                          make_session: Callable[..., int]) -> None:
    sid = make_session()
    page = client.post(f"/sessions/{sid}/rounds/new", data={"tiplu": "1X", "winner": "Anna", "p2_maal": "99999",
                                                           "p3_maal": "9" * 40})
    assert page.status_code == 400
    html = page.get_data(as_text=True)
    assert 'id="p2_maal-error"' in html and 'id="p3_maal-error"' in html and 'id="tiplu-error"' in html
    assert "Carla's maal: 99999 is more than a hand can hold (at most" in text(html)
    assert "players." not in text(html)


def test_a_payload_message_goes_under_its_field_in_plain_words(client: FlaskClient) -> None:
    from web.views import field_of_error
    session = {"players": ["Hari", "Ram"]}
    with client.application.test_request_context("/"):
        assert field_of_error(session, "players.Ram.maal: 300 is above 294") == ("p1_maal", "Ram's maal: 300 is above 294")
        assert field_of_error(session, "players.Hari.seen: 'x' is not yes or no") == (None, "Hari seen: 'x' is not yes or no")
        assert field_of_error(session, "tiplu: give a card") == (None, "tiplu: give a card")


def money_form(**fields: str) -> dict[str, str]:
    """The new-session form for the four players, plus ``fields``."""
    return {**{f"player{seat}": name for seat, name in enumerate(PLAYERS)}, "rules": "nepali", **fields}


def test_the_money_rate_is_set_on_the_form_and_shown_beside_the_points(client: FlaskClient) -> None:
    created = client.post("/sessions/new", data=money_form(rate_per_point="10", rate_currency="Rs"))
    assert created.status_code == 302
    sid = int(created.headers["Location"].rstrip("/").rsplit("/", 1)[1])
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(winner="Carla"))
    session = client.get(f"/api/sessions/{sid}").get_json()
    assert session["rate"] == {"per_point": 10, "currency": "Rs"}
    plan = fewest_payments(evening_net(read_settlement(r) for r in session["rounds"]))
    end = text(client.get(f"/sessions/{sid}/end").get_data(as_text=True))
    assert "At Rs 10 a point." in end
    for pay in plan:
        points = "point" if pay.points == 1 else "points"
        assert f"{pay.payer} pays {pay.payee} {pay.points} {points} (Rs {pay.points * 10})" in end
    page = text(client.get(f"/sessions/{sid}/rounds/1").get_data(as_text=True))
    for line in net_pairs(read_settlement(session["rounds"][0]).payments):
        points = "point" if line.points == 1 else "points"  # issue 54: said as on the End page
        assert f"{line.payer} pays {line.payee} {line.points} {points} (Rs {line.points * 10})" in page
    settings = client.get(f"/sessions/{sid}/settings").get_data(as_text=True)
    assert 'name="rate_per_point"' in settings and 'value="10"' in settings and 'value="Rs"' in settings
    assert client.post(f"/sessions/{sid}/settings", data={"title": "", "rate_per_point": "2.5",
                                                          "rate_currency": "₹"}).status_code == 302
    end = text(client.get(f"/sessions/{sid}/end").get_data(as_text=True))
    assert "At ₹2.50 a point." in end
    for pay in plan:  # whole sums without decimals, others with two
        cents = pay.points * 250
        assert (f"(₹{cents // 100})" if cents % 100 == 0 else f"(₹{cents // 100}.{cents % 100:02d})") in end
    assert "money per point: Rs 10 → ₹2.50" in text(client.get(f"/sessions/{sid}/history").get_data(as_text=True))
    assert client.post(f"/sessions/{sid}/settings", data={"title": ""}).status_code == 302
    assert client.get(f"/api/sessions/{sid}").get_json()["rate"] is None
    end = text(client.get(f"/sessions/{sid}/end").get_data(as_text=True))
    assert "a point." not in end and all(f"{p.payer} pays {p.payee} {p.points} " in end + " " for p in plan)


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"rate_per_point": "-5", "rate_currency": "Rs"}, "rate_per_point", "Money per point: -5 is below 0"),
    ({"rate_per_point": "ten"}, "rate_per_point", "Money per point: 'ten' is not a number"),
    ({"rate_per_point": "1.234"}, "rate_per_point", "Money per point: 1.234 has more than 2 decimals"),
    ({"rate_currency": "Rs"}, "rate_per_point", "Money per point: give the money one point is worth"),
    ({"rate_per_point": "10", "rate_currency": "Nepali rupees"}, "rate_currency", "Currency: 13 characters"),
])
def test_a_bad_rate_on_the_form_is_marked_under_its_field(client: FlaskClient, make_session: Callable[..., int],
                                                          fields: dict[str, str], field: str, message: str) -> None:
    response = client.post("/sessions/new", data=money_form(**fields))
    html = response.get_data(as_text=True)
    assert response.status_code == 400
    assert message in text(found_error(html, field)) and 'aria-invalid="true"' in html
    assert 'class="error"' not in html, "the message is under the field, not at the top"
    assert client.get("/api/sessions").get_json()["sessions"] == []
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())  # the rate can change after round 1 too
    response = client.post(f"/sessions/{sid}/settings", data={"title": "", **fields})
    assert response.status_code == 400 and message in text(found_error(response.get_data(as_text=True), field))
    assert client.get(f"/api/sessions/{sid}").get_json()["rate"] is None


def found_error(html: str, field: str) -> str:
    match = re.search(rf'<p class="field-error" id="{field}-error" role="alert">([^<]*)</p>', html)
    assert match is not None, f"no error under {field}"
    return match.group(1)


def test_photographing_before_the_tiplu_says_so_under_the_tiplu_field(client: FlaskClient,
                                                                     make_session: Callable[..., int]) -> None:
    """The line is under the tiplu (or turned card) field, hidden until a photo that needs it is tried
    (photo.js, by data-needs); its words are the ones the server's check answers."""
    sid = make_session()
    cases = {f"/sessions/{sid}/rounds/new": ("tiplu", "enter the tiplu first: maal is valued from it"),
             f"/sessions/{sid}/verify": ("tiplu", "enter the tiplu first: it decides the wild cards")}
    rummy = make_session(["Anna", "Ben", "Carla"], rules="rummy")
    cases[f"/sessions/{rummy}/rounds/new"] = ("turned", "enter the turned card first: it sets the joker rank")
    cases[f"/sessions/{rummy}/verify"] = ("turned", "enter the turned card first: it sets the joker rank")
    for path, (wild, words) in cases.items():
        html = client.get(path).get_data(as_text=True)
        entry = html[html.index(f'<div class="cards-entry" data-field="{wild}">'):]
        entry = entry[:entry.index("</details>")]
        hint = re.search(rf'<p class="field-error needed-first" id="{wild}-first" role="alert" hidden>([^<]*)</p>', entry)
        assert hint is not None and hint.group(1) == words, path
        assert entry.index(f'id="{wild}-first"') < entry.index('class="card-tools"'), "right under the field"
        needing = re.findall(r'<span class="photo-tools" data-target="([^"]+)" data-purpose="(\w+)"[^>]*?'
                             r'(?: data-needs="(\w+)")?>', html)
        assert needing and all((needs == wild) == (purpose != wild) for _t, purpose, needs in needing), path


def test_the_decks_page_says_how_to_install_the_train_extra(client: FlaskClient,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    monkeypatch.setitem(sys.modules, "torch", None)  # what a core-only install sees
    page = text(client.get("/decks").get_data(as_text=True))
    assert ".venv/bin/pip install -e '.[train]'" in page and "a few GB to download (PyTorch)" in page
