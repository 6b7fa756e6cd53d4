"""Hostile input in the app: each failure found by probing the server as an attacker, reproduced and now refused.

Every test here runs the real app on a real SQLite file and a real photo folder;
the ones that need a real ``tiplu serve`` process are in ``test_hostile_input_server.py``.
"""

from __future__ import annotations

import io
import logging
import os
import threading
import time
from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

from scorer import get_rules
from web import photos
from web.app import create_app
from web.bounds import maal_limit
from web.maintenance import check_ledger
from web.throttle import CodeThrottle
from web_support import PLAYERS, if_match, nepali_round

CODE = "246810"
LAN = {"REMOTE_ADDR": "192.168.1.23"}
OTHER_PHONE = {"REMOTE_ADDR": "192.168.1.24"}
LOCAL = {"REMOTE_ADDR": "127.0.0.1"}


@pytest.fixture
def guarded_app(tmp_path: Path) -> Flask:
    """The app as ``tiplu serve --host 0.0.0.0`` builds it: with a table code."""
    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "g.db"), "SECRET_KEY": "k",
                       "WTF_CSRF_ENABLED": False, "TABLE_CODE": CODE, "CAMERA": "none"})


def png_bytes(width: int = 64, height: int = 48) -> bytes:
    return cv2.imencode(".png", np.full((height, width, 3), 200, np.uint8))[1].tobytes()


def photo_files(app: Flask) -> list[str]:
    folder = photos.photo_folder(app)
    return sorted(os.listdir(folder)) if folder.is_dir() else []


# --- 1-3: the code ---------------------------------------------------------------------------------

def test_every_request_needs_the_code_even_from_the_machine_itself(guarded_app: Flask) -> None:
    client = guarded_app.test_client()
    for env in (LOCAL, LAN):
        assert client.get("/api/sessions", environ_base=env).status_code == 403
        assert client.get("/api/sessions/1/export.json", environ_base=env).status_code == 403
        page = client.get("/sessions/1", environ_base=env)
        assert page.status_code == 302 and "/code?next=/sessions/1" in page.location
        assert client.get("/", environ_base=env).status_code == 302
    assert client.get("/code", environ_base=LAN).status_code == 200
    assert client.get("/static/photo.js", environ_base=LAN).status_code == 200
    assert client.get("/api/sessions", environ_base=LOCAL, headers={"X-Table-Code": CODE}).status_code == 200


def test_without_a_code_nothing_is_asked(client: FlaskClient) -> None:
    assert client.get("/api/sessions", environ_base=LAN).status_code == 200
    assert client.get("/", environ_base=LAN).status_code == 200


def test_the_printed_link_lets_a_phone_in_once(guarded_app: Flask) -> None:
    client = guarded_app.test_client()
    entered = client.get(f"/?table_code={CODE}", environ_base=LAN)
    assert entered.status_code == 302 and entered.location == "/"
    assert "tiplu_table_code" in entered.headers["Set-Cookie"]
    assert client.get("/", environ_base=LAN).status_code == 200
    wrong = guarded_app.test_client().get("/?table_code=111111", environ_base=LAN)
    assert wrong.status_code == 302 and "/code" in wrong.location


def test_wrong_codes_are_throttled_per_address_with_growing_waits(guarded_app: Flask,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    clock = [1000.0]
    guarded_app.extensions["tiplu_code_throttle"] = CodeThrottle(free_tries=3, clock=lambda: clock[0])
    client = guarded_app.test_client()
    guesses = iter(f"{n:06d}" for n in range(100))
    with caplog.at_level(logging.WARNING, logger="web.security"):
        statuses = [client.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": next(guesses)}).status_code
                    for _ in range(4)]
    assert statuses == [403] * 4
    assert "wrong table code from 192.168.1.23" in caplog.text
    waits = []
    for _ in range(3):
        blocked = client.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": CODE})
        assert blocked.status_code == 429 and "too many wrong table codes" in blocked.get_json()["error"]
        waits.append(int(blocked.headers["Retry-After"]))
        assert client.get("/api/sessions", environ_base=OTHER_PHONE, headers={"X-Table-Code": CODE}).status_code == 200
        clock[0] += waits[-1]
        assert client.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": next(guesses)}
                          ).status_code == 403
    assert waits == [1, 2, 4], "each wrong code doubles the wait"
    page = client.post("/code", data={"code": CODE}, environ_base=LAN)
    assert page.status_code == 429 and page.headers["Retry-After"] == "8"
    clock[0] += 8
    assert client.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": CODE}).status_code == 200
    assert client.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": next(guesses)}
                      ).status_code == 403, "a right code clears"


def test_a_blocked_phone_with_a_cookie_gets_a_page_that_says_so(guarded_app: Flask) -> None:
    guarded_app.extensions["tiplu_code_throttle"] = CodeThrottle(free_tries=0)
    client = guarded_app.test_client()
    client.set_cookie("tiplu_table_code", "999999")
    client.get("/", environ_base=LAN)
    client.set_cookie("tiplu_table_code", CODE)
    page = client.get("/", environ_base=LAN)
    assert page.status_code == 429 and "too many wrong table codes" in page.get_data(as_text=True)
    assert page.headers["Retry-After"] == "1"


def test_an_old_cookie_is_cleared_not_counted_again_and_again(guarded_app: Flask) -> None:
    client = guarded_app.test_client()
    client.set_cookie("tiplu_table_code", "999999")
    first = client.get("/sessions/1", environ_base=LAN)
    assert first.status_code == 302 and "tiplu_table_code=;" in first.headers["Set-Cookie"]
    assert client.get("/sessions/1", environ_base=LAN).status_code == 302
    assert guarded_app.extensions["tiplu_code_throttle"].failures("192.168.1.23") == 1


# --- 6: numbers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("url", ["/api/sessions/{big}", "/sessions/{big}", "/api/sessions/{sid}/rounds/{big}",
                                 "/sessions/{sid}/rounds/{big}", "/api/sessions/{big}/history",
                                 "/api/sessions/²", "/sessions/٣"])
def test_huge_or_foreign_digit_ids_are_404(client: FlaskClient, make_session: Callable[..., int], url: str) -> None:
    sid = make_session()
    response = client.get(url.format(big="9" * 30, sid=sid), headers={"Accept": "application/json"})
    assert response.status_code == 404 and "does not exist" in response.get_json()["error"]


@pytest.mark.parametrize("maal", [10**30, 4 * 10**18, "9" * 5000, "²", "٣", " 12x", -1])
def test_maal_beyond_any_hand_or_not_ascii_is_refused(client: FlaskClient, make_session: Callable[..., int],
                                                     maal: Any) -> None:
    sid = make_session()
    response = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(Dan={"seen": False, "maal": maal}))
    assert response.status_code == 400 and "players.Dan.maal" in response.get_json()["error"]
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


def test_a_5000_digit_number_in_json_is_a_clear_400(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    body = ('{"tiplu": "JC", "winner": "Anna", "players": {"Anna": {"maal": %s}, "Ben": {}, "Carla": {}, "Dan": {}}}'
            % ("9" * 5000))
    response = client.post(f"/api/sessions/{sid}/rounds", data=body, content_type="application/json")
    assert response.status_code == 400 and "JSON" in response.get_json()["error"]


def test_the_maal_bound_comes_from_the_scorer(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    limit = maal_limit(get_rules("nepali"))
    assert 100 < limit < 1000
    assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(Dan={"maal": limit})).status_code == 201
    refused = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(Dan={"maal": limit + 1}))
    assert refused.status_code == 400 and f"above {limit}" in refused.get_json()["error"]
    generous = make_session(options={"tiplu_pair": 100})
    assert maal_limit(get_rules("nepali", {"tiplu_pair": 100})) > limit
    assert client.post(f"/api/sessions/{generous}/rounds", json=nepali_round(Dan={"maal": limit + 1})).status_code == 201


def test_penalty_is_bounded_too(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(players=["A", "B", "C"], rules="rummy")
    body = {"turned": "7D", "winner": "A", "players": {"A": {}, "B": {"penalty": 10**30}, "C": {"penalty": 3}}}
    response = client.post(f"/api/sessions/{sid}/rounds", json=body)
    assert response.status_code == 400 and "players.B.penalty" in response.get_json()["error"]


def test_totals_that_would_overflow_are_refused_and_nothing_is_stored(
        client: FlaskClient, make_session: Callable[..., int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("web.ledger.MAX_TOTAL", 60)
    sid = make_session()
    assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round()).status_code == 201
    before = client.get(f"/api/sessions/{sid}").get_json()
    refused = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(Carla={"seen": True, "maal": 100}))
    assert refused.status_code == 400 and "beyond 60 points" in refused.get_json()["error"]
    assert client.get(f"/api/sessions/{sid}").get_json() == before


# --- 7-9: JSON, cross-site writes, smaller problems -------------------------------------------------

@pytest.mark.parametrize("url", ["/api/sessions", "/api/sessions/{sid}/rounds", "/sessions/{sid}/cards/check"])
def test_deep_or_large_json_is_a_400_with_a_json_error(client: FlaskClient, make_session: Callable[..., int],
                                                       url: str) -> None:
    sid = make_session()
    for body in ("[" * 2000 + "]" * 2000, '{"players": [' + '"x",' * 40_000 + '"y"]}'):
        response = client.post(url.format(sid=sid), data=body, content_type="application/json")
        assert response.status_code == 400, body[:20]
        assert "nests 2000 levels" in response.get_json()["error"] or "bytes (at most" in response.get_json()["error"]


def test_api_writes_need_a_json_content_type(client: FlaskClient) -> None:
    body = '{"players": ["Anna", "Ben"]}'
    refused = client.post("/api/sessions", data=body, content_type="text/plain")
    assert refused.status_code == 415 and "application/json" in refused.get_json()["error"]
    assert client.post("/api/sessions", data=body, content_type="application/x-www-form-urlencoded").status_code == 415
    assert client.get("/api/sessions").get_json()["sessions"] == []
    assert client.post("/api/sessions", data=body, content_type="application/json").status_code == 201


@pytest.mark.parametrize("headers", [{"Origin": "http://localhost:9000"}, {"Origin": "http://evil.example"},
                                     {"Origin": "null"}, {"Sec-Fetch-Site": "cross-site"},
                                     {"Sec-Fetch-Site": "same-site"}])
def test_cross_site_writes_are_refused(guarded_app: Flask, headers: dict[str, str]) -> None:
    client = guarded_app.test_client()
    client.set_cookie("tiplu_table_code", CODE)
    refused = client.post("/api/sessions", json={"players": ["A", "B"]}, headers=headers)
    assert refused.status_code == 403 and "another site" in refused.get_json()["error"]
    assert client.get("/api/sessions").get_json()["sessions"] == []
    same = {"Origin": "http://localhost", "Sec-Fetch-Site": "same-origin"}
    assert client.post("/api/sessions", json={"players": ["A", "B"]}, headers=same).status_code == 201


def test_replayed_key_after_an_edit_or_delete_says_so(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(winner="Ben")).status_code == 201
    key = {"Idempotency-Key": "tap-1"}
    first = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), headers=key)
    assert first.status_code == 201 and first.get_json()["number"] == 2
    assert client.delete(f"/api/sessions/{sid}/rounds/1", headers=if_match(client, f"/api/sessions/{sid}/rounds/1")).status_code == 204
    moved = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), headers=key)
    assert moved.status_code == 201 and moved.headers["Idempotent-Replayed"] == "true"
    assert moved.get_json()["number"] == 1 and moved.headers["Location"].endswith(f"/sessions/{sid}/rounds/1")
    assert client.put(f"/api/sessions/{sid}/rounds/1", json=nepali_round(winner="Carla"),
                      headers=if_match(client, f"/api/sessions/{sid}/rounds/1")).status_code == 200
    edited = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), headers=key)
    assert edited.status_code == 409 and "edited since" in edited.get_json()["error"]
    assert edited.get_json()["round"]["winner"] == "Carla"
    assert edited.get_json()["location"].endswith(f"/sessions/{sid}/rounds/1")
    assert client.delete(f"/api/sessions/{sid}/rounds/1", headers=if_match(client, f"/api/sessions/{sid}/rounds/1")).status_code == 204
    gone = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(), headers=key)
    assert gone.status_code == 410 and "deleted since" in gone.get_json()["error"]
    assert gone.get_json()["rounds"] == 0
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


@pytest.mark.parametrize("title", [["a"], {"a": 1}, 5, True])
def test_title_takes_only_text(client: FlaskClient, make_session: Callable[..., int], title: Any) -> None:
    response = client.post("/api/sessions", json={"players": ["A", "B"], "title": title})
    assert response.status_code == 400 and "title" in response.get_json()["error"]
    sid = make_session()
    assert client.patch(f"/api/sessions/{sid}", json={"title": title}).status_code == 400


def test_too_large_is_json_on_the_api(tmp_path: Path) -> None:
    app = create_app({"DATABASE": str(tmp_path / "b.db"), "SECRET_KEY": "k", "MAX_CONTENT_LENGTH": 1024})
    response = app.test_client().post("/api/sessions", data=b"x" * 4096, content_type="application/json")
    assert response.status_code == 413 and "too large" in response.get_json()["error"]


@pytest.mark.parametrize("target", ["/\\evil.example", "\\\\evil.example", "/\t/evil.example", "/\n/evil.example",
                                    "http://evil.example/", "javascript:alert(1)"])
def test_the_code_page_never_redirects_off_site(guarded_app: Flask, target: str) -> None:
    response = guarded_app.test_client().post("/code", data={"code": CODE, "next": target}, environ_base=LAN)
    assert response.status_code == 302 and response.location == "/"


def test_end_refuses_unknown_fields(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    refused = client.post(f"/api/sessions/{sid}/end", json={"ende": False})
    assert refused.status_code == 400 and "unknown field 'ende'" in refused.get_json()["error"]
    assert client.get(f"/api/sessions/{sid}").get_json()["ended_at"] is None
    assert client.post(f"/api/sessions/{sid}/end", json={"ended": True}).get_json()["ended_at"]


# --- 4-5: photos: memory and orphans ---------------------------------------------------------------

def test_a_failed_upload_leaves_no_photo(app: Flask, client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    for seat in ("9" * 25, "²", "-1", "6"):
        response = client.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png"), "session": str(sid),
                                                    "seat": seat}, content_type="multipart/form-data")
        assert response.status_code == 400 and "seat" in response.get_json()["error"]
    assert photo_files(app) == []
    with app.app_context():
        from web.db import get_db
        assert get_db().execute("SELECT count(*) FROM photos").fetchone()[0] == 0


def test_a_row_that_cannot_be_written_takes_its_file_with_it(app: Flask) -> None:
    import sqlite3
    with app.app_context():
        from web.db import get_db
        with pytest.raises(sqlite3.IntegrityError):
            photos.store_photo(get_db(), photos.photo_folder(app), np.zeros((20, 20, 3), np.uint8), session_id=999)
    assert photo_files(app) == []


def test_one_photo_more_than_admitted_is_refused_with_retry_after(client: FlaskClient) -> None:
    release = threading.Event()

    def hold() -> None:
        try:
            with photos.photo_slot():
                release.wait(timeout=30)
        except photos.Unavailable:
            pass  # a waiting one gave up after photos.SLOT_WAIT

    threads = [threading.Thread(target=hold) for _ in range(photos.MAX_ADMITTED)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 10
        while photos.photos_admitted() < photos.MAX_ADMITTED and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = client.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png")},
                              content_type="multipart/form-data")
        assert refused.status_code == 503 and refused.headers["Retry-After"] == str(photos.BUSY_RETRY_AFTER)
        assert "busy" in refused.get_json()["error"]
    finally:
        release.set()
        for thread in threads:
            thread.join(timeout=30)
    assert client.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png")},
                       content_type="multipart/form-data").status_code == 200


def test_check_ledger_finds_and_removes_orphan_photos(app: Flask, client: FlaskClient,
                                                      make_session: Callable[..., int], db_path: Path) -> None:
    sid = make_session()
    kept = client.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png"), "session": str(sid)},
                       content_type="multipart/form-data").get_json()["photo"]["id"]
    folder = photos.photo_folder(app)
    orphan, leftover, fresh = folder / ("ab" * 16 + ".jpg"), folder / (".cd" + "cd" * 15 + ".tmp"), folder / ("ef" * 16 + ".jpg")
    for path in (orphan, leftover, fresh):
        path.write_bytes(b"jpeg")
    old = time.time() - 3600
    os.utime(orphan, (old, old))
    os.utime(leftover, (old, old))
    report = check_ledger(db_path, folder)
    assert not report.ok and set(report.orphan_files) == {orphan.name, leftover.name}, "a fresh file may be in flight"
    assert "orphan photo files: 2" in "\n".join(report.lines())
    from web.cli import main
    assert main(["check-ledger", "--db", str(db_path), "--photos", str(folder), "--repair"]) == 0
    assert sorted(os.listdir(folder)) == sorted([f"{kept}.jpg", fresh.name])
    assert check_ledger(db_path, folder).ok


def test_behind_a_proxy_each_client_is_throttled_by_its_own_address(tmp_path: Path) -> None:
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "p.db"), "SECRET_KEY": "k", "TABLE_CODE": CODE,
                      "PROXY_HOPS": 1, "CODE_FREE_TRIES": 1})
    client = app.test_client()
    guesses = [{"X-Forwarded-For": "203.0.113.7", "X-Table-Code": f"00000{n}"} for n in range(3)]
    assert [client.get("/api/sessions", environ_base=LOCAL, headers=guesser).status_code for guesser in guesses] == \
        [403, 403, 429]
    phone = {"X-Forwarded-For": "192.168.1.40", "X-Table-Code": CODE}
    assert client.get("/api/sessions", environ_base=LOCAL, headers=phone).status_code == 200


# --- issue 44, rows 7-11: the last 500s and bad input accepted --------------------------------------

@pytest.mark.parametrize("maal", ["²", "--5", "9" * 5000, "1_0", "٣"])
def test_a_typed_maal_that_is_no_plain_number_is_a_400_naming_the_field(
        client: FlaskClient, make_session: Callable[..., int], maal: str) -> None:
    sid = make_session()
    page = client.post(f"/sessions/{sid}/rounds/new", data={"tiplu": "JC", "winner": "Anna", "p1_maal": maal})
    assert page.status_code == 400 and "Ben&#39;s maal must be a whole number" in page.get_data(as_text=True)
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


@pytest.mark.parametrize("correction", ["[" * 50_000, "{" * 20 + "}" * 20, "x" * 70_000])
def test_a_correction_field_of_brackets_is_a_400_naming_the_field(
        client: FlaskClient, make_session: Callable[..., int], correction: str) -> None:
    sid = make_session()
    form = {"tiplu": "JC", "winner": "Anna", "correction": correction}
    for url in (f"/sessions/{sid}/rounds/new", f"/sessions/{sid}/verify"):
        page = client.post(url, data=form)
        assert page.status_code == 400 and "correction" in page.get_data(as_text=True), url
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


def test_restoring_history_entry_two_to_the_63_is_404(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    for big in (2**63, 2**63 - 1, 10**30):
        api = client.post(f"/api/sessions/{sid}/history/{big}/restore")
        assert api.status_code == 404 and "history entry" in api.get_json()["error"]
        assert client.post(f"/sessions/{sid}/history/{big}/restore").status_code == 404


@pytest.mark.parametrize("body", ['{"players": ["Anna", "Ben"], "title": "\\ud800"}',
                                  '{"players": ["Anna", "\\udc00Ben"]}',
                                  '{"players": ["Anna", "Ben"], "options": {"direction": "\\ud83d"}}'])
def test_a_lone_surrogate_is_a_400(client: FlaskClient, body: str) -> None:
    response = client.post("/api/sessions", data=body, content_type="application/json")
    assert response.status_code == 400 and "broken character" in response.get_json()["error"]
    assert client.get("/api/sessions").get_json()["sessions"] == []


def test_a_lone_surrogate_in_a_round_or_a_patch_is_a_400(client: FlaskClient,
                                                          make_session: Callable[..., int]) -> None:
    import json
    sid = make_session()
    raw = json.dumps(nepali_round()).replace('"Ben": {', '"Be\\udfffn": {', 1)
    response = client.post(f"/api/sessions/{sid}/rounds", data=raw, content_type="application/json")
    assert response.status_code == 400 and "players.Be?n" in response.get_json()["error"]
    patch = client.patch(f"/api/sessions/{sid}", data='{"title": "a\\ud800"}', content_type="application/json")
    assert patch.status_code == 400 and patch.get_json()["error"].startswith("title:")
    assert client.get(f"/api/sessions/{sid}").get_json()["title"] == ""


@pytest.mark.parametrize("options", [{"seen_fee": "٣"}, {"tiplu_pair": "1_0"}, {"tiplu_pair": "８"},
                                     {"seen_fee": " ３ "}, {"alter_points": "²"}])
def test_options_count_only_ascii_digits(client: FlaskClient, options: dict[str, str]) -> None:
    response = client.post("/api/sessions", json={"players": ["Anna", "Ben"], "options": options})
    assert response.status_code == 400, response.get_json()
    assert next(iter(options)) in response.get_json()["error"]
    assert client.post("/api/sessions", json={"players": ["Anna", "Ben"], "options": {"seen_fee": " 4 "}}
                       ).get_json()["options"]["seen_fee"] == 4


def test_a_joker_tiplu_without_printed_jokers_is_a_400(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    refused = client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(tiplu="JOKER"))
    assert refused.status_code == 400 and refused.get_json()["error"].startswith("tiplu:")
    assert "joker" in refused.get_json()["error"]
    assert client.post(f"/api/sessions/{sid}/rounds/preview", json=nepali_round(tiplu="JOKER")).status_code == 400
    page = client.post(f"/sessions/{sid}/rounds/new", data={"tiplu": "JOKER", "winner": "Anna"})
    assert page.status_code == 400
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []
    jokers = make_session(options={"printed_jokers": 2})
    assert client.post(f"/api/sessions/{jokers}/rounds", json=nepali_round(tiplu="JOKER")).status_code != 500


# --- issue 44, rows 2, 3, 6, 12-14: who may use the server ------------------------------------------

IMAGE = {"Accept": "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"}


def entered(app: Flask, env: dict[str, str] = LAN, agent: str = "Mozilla/5.0 (Linux; Android 14) Chrome/126.0"
            ) -> FlaskClient:
    """A phone that typed the code on the code page (it holds a device's cookie)."""
    phone = app.test_client()
    answer = phone.post("/code", data={"code": CODE}, environ_base=env, headers={"User-Agent": agent})
    assert answer.status_code == 302, answer.get_data(as_text=True)[:300]
    return phone


def test_the_cookie_holds_a_signed_device_token_that_can_be_revoked(guarded_app: Flask) -> None:
    phone = entered(guarded_app)
    cookie = phone.get_cookie("tiplu_table_code")
    assert cookie is not None and CODE not in cookie.value and cookie.http_only and cookie.same_site == "Lax"
    assert phone.get("/api/sessions", environ_base=LAN).status_code == 200
    laptop = entered(guarded_app, OTHER_PHONE, "Mozilla/5.0 (Windows NT 10.0) Firefox/128.0")
    listed = phone.get("/api/devices", environ_base=LAN).get_json()["devices"]
    assert {(d["label"], d["address"], d["this"]) for d in listed} == {
        ("Android, Chrome", LAN["REMOTE_ADDR"], True), ("Windows, Firefox", OTHER_PHONE["REMOTE_ADDR"], False)}
    other = next(d["id"] for d in listed if not d["this"])
    page = phone.get("/join", environ_base=LAN).get_data(as_text=True)
    assert page.count('class="device"') == 2 and page.count("revoke-form") == 1, "the join page lists both, the other shuttable"
    assert f"/join/devices/{other}/revoke" in page and "Windows, Firefox" in page
    assert phone.post(f"/join/devices/{other}/revoke", environ_base=LAN).status_code == 302
    shut_out = laptop.get("/api/sessions", environ_base=OTHER_PHONE)
    assert shut_out.status_code == 403 and "Set-Cookie" not in shut_out.headers, "kept: it keeps that browser out"
    assert phone.get("/api/sessions", environ_base=LAN).status_code == 200, "the others stay in"
    assert phone.delete(f"/api/devices/{other}", environ_base=LAN, headers={"X-Table-Code": CODE}).status_code == 404
    forged = guarded_app.test_client()
    forged.set_cookie("tiplu_table_code", cookie.value[:-3] + "abc")
    assert forged.get("/api/sessions", environ_base=LAN).status_code == 403
    assert guarded_app.extensions["tiplu_code_throttle"].failures(LAN["REMOTE_ADDR"]) == 0, "a bad token is no guess"
    guarded_app.config["TABLE_CODE"] = "135790"
    assert phone.get("/api/sessions", environ_base=LAN).status_code == 403, "a new code ends every device"


def test_a_cookie_that_holds_the_code_itself_is_swapped_for_a_token(guarded_app: Flask) -> None:
    phone = guarded_app.test_client()
    phone.set_cookie("tiplu_table_code", CODE)
    answer = phone.get("/api/sessions", environ_base=LAN)
    assert answer.status_code == 200 and CODE not in answer.headers["Set-Cookie"]
    assert phone.get("/api/sessions", environ_base=LAN).status_code == 200


def test_a_foreign_page_cannot_spend_a_phones_tries(guarded_app: Flask) -> None:
    throttle = guarded_app.extensions["tiplu_code_throttle"]
    phone = entered(guarded_app)
    for n in range(8):
        phone.get(f"/?table_code=11111{n}", environ_base=LAN, headers=IMAGE)
        phone.get(f"/static/tiplu.css?table_code=22222{n}", environ_base=LAN)
        phone.get(f"/sessions/1?table_code=33333{n}", environ_base=LAN, headers={"Sec-Fetch-Site": "cross-site"})
        phone.get(f"/?table_code=44444{n}", environ_base=LAN)
    assert throttle.failures(LAN["REMOTE_ADDR"]) == 0
    stranger = guarded_app.test_client()
    for n in range(8):
        stranger.get(f"/?table_code=55555{n}", environ_base=LAN, headers=IMAGE)
        stranger.get(f"/static/tiplu.css?table_code=66666{n}", environ_base=LAN)
        stranger.get(f"/?table_code=77777{n}", environ_base=LAN, headers={"Sec-Fetch-Site": "same-site"})
    assert throttle.failures(LAN["REMOTE_ADDR"]) == 0, "no code from an image, a static file or another site counts"
    for n in range(8):
        stranger.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": f"88888{n}"})
    assert stranger.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": CODE}).status_code == 429
    assert phone.get("/api/sessions", environ_base=LAN).status_code == 200, "a device already in is never throttled"
    assert phone.get("/", environ_base=LAN).status_code == 200


def test_a_phone_with_last_nights_code_gets_in_with_tonights(guarded_app: Flask) -> None:
    guarded_app.extensions["tiplu_code_throttle"] = CodeThrottle(free_tries=5, first_wait=60)
    old_token = entered(guarded_app).get_cookie("tiplu_table_code")
    assert old_token is not None
    guarded_app.config["TABLE_CODE"] = tonight = "864213"
    for cookie in (old_token.value, "246810"):
        for path in ("/", "/static/tiplu.css", "/api/sessions", "/sessions/1", "/manifest.webmanifest", "/join"):
            at_once = guarded_app.test_client()
            at_once.set_cookie("tiplu_table_code", cookie)
            at_once.get(path, environ_base=LAN)
    phone = guarded_app.test_client()
    answer = phone.post("/code", data={"code": tonight}, environ_base=LAN)
    assert answer.status_code == 302 and phone.get("/api/sessions", environ_base=LAN).status_code == 200


def test_a_blocked_address_with_a_cookie_gets_429_not_500(guarded_app: Flask) -> None:
    guarded_app.extensions["tiplu_code_throttle"] = CodeThrottle(free_tries=0, first_wait=60)
    client = guarded_app.test_client()
    client.get("/api/sessions", environ_base=LAN, headers={"X-Table-Code": "999999"})
    client.set_cookie("tiplu_table_code", CODE)
    for answer in (client.get("/?table_code=123456", environ_base=LAN), client.get("/", environ_base=LAN),
                   client.post("/code", data={"code": CODE}, environ_base=LAN)):
        assert answer.status_code == 429 and "too many wrong table codes" in answer.get_data(as_text=True)
        assert int(answer.headers["Retry-After"]) > 0


@pytest.mark.parametrize("host", ["rebind.attacker.example:8000", "evil.example", "127.0.0.1.nip.io:8000"])
def test_a_foreign_host_name_is_refused(client: FlaskClient, host: str) -> None:
    base = f"http://{host}"
    write = client.post("/api/sessions", json={"players": ["Anna", "Ben"]}, base_url=base, headers={"Origin": base})
    assert write.status_code == 403 and "does not answer to the name" in write.get_json()["error"]
    assert client.get("/api/sessions", base_url=base).status_code == 403
    assert client.get("/", base_url=base).status_code == 403
    assert client.get("/api/sessions").get_json()["sessions"] == []


def test_this_machines_names_and_addresses_are_served(client: FlaskClient, tmp_path: Path) -> None:
    import socket
    for host in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "192.168.1.5:8000", socket.gethostname(),
                 f"{socket.gethostname()}.local:8000"):
        assert client.get("/api/sessions", base_url=f"http://{host}").status_code == 200, host
    proxied = create_app({"TESTING": True, "DATABASE": str(tmp_path / "h.db"), "SECRET_KEY": "k",
                          "ALLOWED_HOSTS": "tiplu.example.org, cards.example.org"})
    assert proxied.test_client().get("/api/sessions", base_url="http://tiplu.example.org").status_code == 200


def test_an_api_write_with_only_the_cookie_needs_origin_or_the_header(guarded_app: Flask) -> None:
    phone = entered(guarded_app)
    header = {"X-Table-Code": CODE}
    sid = phone.post("/api/sessions", json={"players": PLAYERS}, environ_base=LAN).get_json()["id"]
    refused = phone.post(f"/api/sessions/{sid}/end", environ_base=LAN)
    assert refused.status_code == 403 and "X-Table-Code" in refused.get_json()["error"]
    assert phone.post(f"/api/sessions/{sid}/end", environ_base=LAN, data={"ended": "true"}).status_code == 415
    refused = phone.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png"), "session": str(sid)},
                         content_type="multipart/form-data", environ_base=LAN)
    assert refused.status_code == 403 and photo_files(guarded_app) == []
    assert phone.get(f"/api/sessions/{sid}", environ_base=LAN).get_json()["ended_at"] is None
    own_page = {"Origin": "http://localhost"}
    assert phone.post(f"/api/sessions/{sid}/end", environ_base=LAN, headers=own_page).status_code == 200
    assert phone.post(f"/api/sessions/{sid}/end", environ_base=LAN, json={"ended": False}).status_code == 200
    assert guarded_app.test_client().post(f"/api/sessions/{sid}/end", environ_base=LAN, headers=header
                                          ).status_code == 200


# --- issue 44, rows 4-5: photos: a bounded pool, kept photos downscaled, expired and capped ----------

def jpeg_claiming(width: int, height: int) -> bytes:
    """A small JPEG whose header says ``width`` x ``height`` (a flat photo compresses to kilobytes)."""
    return cv2.imencode(".jpg", np.full((height, width, 3), 128, np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 30])[1].tobytes()


def test_photos_wait_a_few_seconds_at_most_and_the_ledger_never_waits(app: Flask, client: FlaskClient,
                                                                     make_session: Callable[..., int]) -> None:
    from web.serve import DEFAULT_THREADS
    assert photos.MAX_PARALLEL < photos.MAX_ADMITTED < DEFAULT_THREADS, "photos leave threads for the ledger"
    app.config["PHOTO_WAIT_SECONDS"] = 0.5
    sid = make_session()
    release = threading.Event()

    def hold() -> None:
        with photos.photo_slot():
            release.wait(timeout=30)

    threads = [threading.Thread(target=hold) for _ in range(photos.MAX_PARALLEL)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 10
        while photos.photos_admitted() < photos.MAX_PARALLEL and time.monotonic() < deadline:
            time.sleep(0.01)
        started = time.monotonic()
        waited = client.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png")},
                             content_type="multipart/form-data")
        assert waited.status_code == 503 and waited.headers["Retry-After"] == str(photos.BUSY_RETRY_AFTER)
        assert 0.4 < time.monotonic() - started < 5
        started = time.monotonic()
        assert client.get(f"/api/sessions/{sid}").status_code == 200
        assert time.monotonic() - started < 1
    finally:
        release.set()
        for thread in threads:
            thread.join(timeout=30)


def test_a_kept_photo_is_shrunk_to_what_the_reading_needs(app: Flask, client: FlaskClient,
                                                         make_session: Callable[..., int]) -> None:
    sid = make_session()
    big = jpeg_claiming(6000, 4500)
    kept = client.post("/api/detect", data={"image": (io.BytesIO(big), "big.jpg"), "session": str(sid)},
                       content_type="multipart/form-data")
    assert kept.status_code == 200, kept.get_json()
    photo = kept.get_json()["photo"]
    assert max(photo["width"], photo["height"]) == photos.MAX_SIDE and photo["width"] * 3 == photo["height"] * 4
    stored = cv2.imread(str(photos.photo_folder(app) / f"{photo['id']}.jpg"))
    assert stored.shape[:2] == (photo["height"], photo["width"])


def test_unlinked_photos_expire_and_the_folder_has_a_cap(app: Flask, client: FlaskClient,
                                                        make_session: Callable[..., int]) -> None:
    from web.db import get_db
    sid = make_session()

    def keep() -> Any:
        return client.post("/api/detect", data={"image": (io.BytesIO(png_bytes()), "a.png"), "session": str(sid)},
                           content_type="multipart/form-data")

    old, linked, corrected = (keep().get_json()["photo"]["id"] for _ in range(3))
    assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round()).status_code == 201
    with app.app_context():
        db = get_db()
        photos.link_photos(db, sid, 1, [linked])
        db.execute("UPDATE photos SET created_at = '2020-01-01T00:00:00+00:00'")
        db.execute("INSERT INTO corrections(photo_id, position, deck, card, read, file, created_at) "
                   "VALUES (?, 0, NULL, '7H', '7D', 'x.png', '2020-01-01')", [corrected])
        db.conn.commit()
    assert keep().status_code == 200
    assert sorted(p for p in photo_files(app) if p.endswith(".jpg")) != []
    names = set(photo_files(app))
    assert f"{old}.jpg" not in names and {f"{linked}.jpg", f"{corrected}.jpg"} <= names
    app.config["MAX_PHOTO_STORE_MB"] = 0.000001
    before = set(photo_files(app))
    full = keep()
    assert full.status_code == 507 and "photos folder is full" in full.get_json()["error"]
    assert set(photo_files(app)) == before, "nothing kept is removed to make room"
