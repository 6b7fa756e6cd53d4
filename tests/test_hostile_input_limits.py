"""Issue 55, in the app: crafted photos, the guessing budget, devices, lost edits and a full disk.

Each test runs the real app on a real SQLite file; the crafted photos are files in
``tests/data/crafted/`` (``tests/make_crafted_images.py`` writes them).
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from vision.images import MAX_SCANS, ImageError, decode_image

CRAFTED = Path(__file__).resolve().parent / "data" / "crafted"
ROOT = Path(__file__).resolve().parent.parent


# --- rows 4, 5, 10: crafted photos -----------------------------------------------------------------

@pytest.mark.parametrize("name, says", [
    ("hidden_frame.jpg", "marker FF 00"),
    ("unknown_marker.jpg", "marker FF 02"),
    ("two_frames.jpg", "two frames"),
    ("many_scans.jpg", f"300 scans, over the {MAX_SCANS}"),
    ("thin_16x12000.png", "too thin to be a photo of cards"),
])
def test_a_crafted_photo_is_a_400_that_says_why(client: FlaskClient, name: str, says: str) -> None:
    data = (CRAFTED / name).read_bytes()
    with pytest.raises(ImageError, match=says):
        decode_image(data)
    response = client.post("/api/detect", data={"image": (io.BytesIO(data), name)},
                           content_type="multipart/form-data")
    assert response.status_code == 400 and says in response.get_json()["error"], response.get_json()


def test_opencv_decodes_no_more_pixels_than_the_limit_in_any_process_of_the_app() -> None:
    """The hidden 9000 x 9000 frame, handed to OpenCV directly after the app is imported: refused."""
    script = ("import web.app, cv2, numpy as np, sys\n"
              "data = np.frombuffer(open(sys.argv[1], 'rb').read(), np.uint8)\n"
              "try:\n    image = cv2.imdecode(data, cv2.IMREAD_COLOR)\nexcept cv2.error:\n    image = None\n"
              "print('refused' if image is None else image.shape)\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script, str(CRAFTED / "hidden_frame.jpg")], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    assert done.stdout.strip() == "refused", done.stdout + done.stderr


# --- row 3: a budget of wrong codes for the whole server ------------------------------------------

CODE = "246810"


@pytest.fixture
def guarded_app(tmp_path: Path) -> Flask:
    from web.app import create_app
    return create_app({"TESTING": True, "DATABASE": str(tmp_path / "g.db"), "SECRET_KEY": "k",
                       "WTF_CSRF_ENABLED": False, "TABLE_CODE": CODE, "CAMERA": "none"})


def lan(n: int) -> dict[str, str]:
    return {"REMOTE_ADDR": f"10.{n // 250}.{n % 250}.7"}


def test_guesses_from_many_addresses_spend_one_budget_and_then_only_devices_get_in(guarded_app: Flask) -> None:
    phone = guarded_app.test_client()
    assert phone.get(f"/?table_code={CODE}", environ_base=lan(9999)).status_code == 302
    guesser = guarded_app.test_client()
    statuses = [guesser.get("/api/sessions", environ_base=lan(n // 5), headers={"X-Table-Code": f"{n:06d}"}).status_code
                for n in range(1000)]
    assert statuses.count(403) == 100 and statuses[100:] == [429] * 900, "100 wrong codes, then none is compared"
    refused = guesser.get("/api/sessions", environ_base=lan(555), headers={"X-Table-Code": CODE})
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1
    assert "phones already let in go on" in refused.get_json()["error"]
    assert phone.get("/api/sessions", environ_base=lan(9999)).status_code == 200, "a device already in gets in"


def test_the_budget_refills_with_time() -> None:
    from web.throttle import GuessBudget
    clock = [0.0]
    budget = GuessBudget(size=3, refill_seconds=36, clock=lambda: clock[0])
    assert [budget.spend() for _ in range(3)] == [0, 0, 36]
    clock[0] = 35.0
    assert budget.wait_left() == 1
    clock[0] = 36.0 * 4
    assert budget.wait_left() == 0 and [budget.spend() for _ in range(3)] == [0, 0, 36]


# --- row 11: one device per browser; shut out stays out -------------------------------------------

ANDROID = {"User-Agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) Chrome/126.0 Mobile Safari/537.36"}
PHONE_AT = {"REMOTE_ADDR": "192.168.1.23"}
OTHER_AT = {"REMOTE_ADDR": "192.168.1.24"}


def device_rows(app: Flask) -> int:
    import sqlite3
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        return int(conn.execute("SELECT count(*) FROM devices").fetchone()[0])


def test_the_join_link_opened_many_times_is_one_device(guarded_app: Flask) -> None:
    browser = guarded_app.test_client()
    for _ in range(30):
        assert browser.get(f"/?table_code={CODE}", environ_base=PHONE_AT, headers=ANDROID).status_code == 302
    for _ in range(30):  # no cookie jar at all: the same address and browser
        guarded_app.test_client().get(f"/?table_code={CODE}", environ_base=PHONE_AT, headers=ANDROID)
    assert device_rows(guarded_app) == 1
    guarded_app.test_client().get(f"/?table_code={CODE}", environ_base=OTHER_AT, headers=ANDROID)
    assert device_rows(guarded_app) == 2, "another phone is another device"
    assert browser.get("/api/sessions", environ_base=PHONE_AT).status_code == 200


def test_a_shut_out_phone_stays_out_until_let_in_again_or_the_code_changes(guarded_app: Flask) -> None:
    host = guarded_app.test_client()
    host.get(f"/?table_code={CODE}", environ_base=OTHER_AT)
    phone = guarded_app.test_client()
    phone.get(f"/?table_code={CODE}", environ_base=PHONE_AT, headers=ANDROID)
    listed = host.get("/api/devices", environ_base=OTHER_AT).get_json()["devices"]
    phone_id = next(d["id"] for d in listed if not d["this"])
    assert host.post(f"/join/devices/{phone_id}/revoke", environ_base=OTHER_AT).status_code == 302
    assert phone.get("/api/sessions", environ_base=PHONE_AT).status_code == 403
    again = phone.get(f"/?table_code={CODE}", environ_base=PHONE_AT, headers=ANDROID)
    assert again.status_code == 403 and "Join page" in again.get_data(as_text=True)
    typed = phone.post("/code", data={"code": CODE}, environ_base=PHONE_AT, headers=ANDROID)
    assert typed.status_code == 403 and phone.get("/api/sessions", environ_base=PHONE_AT).status_code == 403
    page = host.get("/join", environ_base=OTHER_AT).get_data(as_text=True)
    assert "Phones shut out" in page and f"/join/devices/{phone_id}/let-in" in page
    assert host.post(f"/join/devices/{phone_id}/let-in", environ_base=OTHER_AT).status_code == 302
    assert phone.get("/api/sessions", environ_base=PHONE_AT).status_code == 200, "let in again: the cookie works"
    assert host.delete(f"/api/devices/{phone_id}", environ_base=OTHER_AT,
                       headers={"X-Table-Code": CODE}).status_code == 204
    guarded_app.config["TABLE_CODE"] = "135790"
    entered = phone.post("/code", data={"code": "135790"}, environ_base=PHONE_AT, headers=ANDROID)
    assert entered.status_code == 302 and phone.get("/api/sessions", environ_base=PHONE_AT).status_code == 200


# --- rows 7-8: a delete or an edit names the round and the version it was read at --------------------

def three_rounds(client: FlaskClient, make_session: Callable[..., int]) -> int:
    from web_support import nepali_round
    sid = make_session()
    for maal in (2, 4, 6):
        assert client.post(f"/api/sessions/{sid}/rounds", json=nepali_round(Ben={"seen": True, "maal": maal})
                           ).status_code == 201
    return sid


def ben_maals(client: FlaskClient, sid: int) -> list[int]:
    return [r["players"]["Ben"]["maal"] for r in client.get(f"/api/sessions/{sid}").get_json()["rounds"]]


def test_three_concurrent_deletes_of_round_one_remove_one_round(app: Flask, client: FlaskClient,
                                                                make_session: Callable[..., int]) -> None:
    import threading
    sid = three_rounds(client, make_session)
    url = f"/api/sessions/{sid}/rounds/1"
    assert client.delete(url).status_code == 428 and ben_maals(client, sid) == [2, 4, 6], "no If-Match: nothing"
    tag = client.get(url).headers["ETag"]
    answers: list[Any] = []
    start = threading.Barrier(3)

    def delete() -> None:
        phone = app.test_client()
        start.wait()
        answers.append(phone.delete(url, headers={"If-Match": tag}))

    threads = [threading.Thread(target=delete) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(a.status_code for a in answers) == [204, 409, 409]
    assert ben_maals(client, sid) == [4, 6], "round 1 went, nothing else"
    stale = next(a for a in answers if a.status_code == 409)
    assert "deleted since" in stale.get_json()["error"] and "round" in stale.get_json()


def test_a_stale_delete_of_a_round_that_moved_up_removes_nothing(client: FlaskClient,
                                                                 make_session: Callable[..., int]) -> None:
    from web_support import if_match
    sid = three_rounds(client, make_session)
    second = if_match(client, f"/api/sessions/{sid}/rounds/2")
    assert client.delete(f"/api/sessions/{sid}/rounds/1", headers=if_match(client, f"/api/sessions/{sid}/rounds/1")
                         ).status_code == 204
    stale = client.delete(f"/api/sessions/{sid}/rounds/2", headers=second)
    body = stale.get_json()
    assert stale.status_code == 409 and "round 1 now" in body["error"] and body["round"]["number"] == 1
    assert stale.headers["ETag"] == second["If-Match"], "the round it read, where it is now"
    assert ben_maals(client, sid) == [4, 6]


def test_the_second_of_two_phones_editing_a_round_gets_409_with_the_first_ones_values(
        client: FlaskClient, make_session: Callable[..., int]) -> None:
    from web_support import nepali_round
    sid = three_rounds(client, make_session)
    url = f"/api/sessions/{sid}/rounds/2"
    read = client.get(url).headers["ETag"]
    first = client.put(url, json=nepali_round(Ben={"seen": True, "maal": 9}), headers={"If-Match": read})
    assert first.status_code == 200 and first.headers["ETag"] != read
    second = client.put(url, json=nepali_round(Ben={"seen": True, "maal": 1}), headers={"If-Match": read})
    assert second.status_code == 409 and second.get_json()["round"]["players"]["Ben"]["maal"] == 9
    assert second.headers["ETag"] == first.headers["ETag"]
    assert ben_maals(client, sid) == [2, 9, 6], "the first phone's edit stays"
    again = client.put(url, json=nepali_round(Ben={"seen": True, "maal": 1}), headers={"If-Match": second.headers["ETag"]})
    assert again.status_code == 200 and ben_maals(client, sid) == [2, 1, 6], "read again, saved knowingly"


def test_the_same_delete_form_posted_twice_removes_one_round(client: FlaskClient,
                                                             make_session: Callable[..., int]) -> None:
    from web_support import form_version
    sid = three_rounds(client, make_session)
    form = form_version(client, sid, 1)
    assert client.post(f"/sessions/{sid}/rounds/1/delete", data=form).status_code == 302
    again = client.post(f"/sessions/{sid}/rounds/1/delete", data=form)
    assert again.status_code == 409 and "deleted since" in again.get_data(as_text=True)
    assert client.post(f"/sessions/{sid}/rounds/1/delete").status_code == 409, "a form without its version"
    assert ben_maals(client, sid) == [4, 6]


def test_a_stale_edit_form_shows_what_is_saved_beside_what_was_typed(client: FlaskClient,
                                                                     make_session: Callable[..., int]) -> None:
    import re
    from web_support import form_version
    sid = three_rounds(client, make_session)
    page = client.get(f"/sessions/{sid}/rounds/2/edit").get_data(as_text=True)
    typed = {name: value for name, value in re.findall(r'<input[^>]*name="(\w+)"[^>]*value="([^"]*)"', page)
             if name != "csrf_token"}
    assert typed["p1_maal"] == "4" and "version" in typed
    other_phone = {**typed, **form_version(client, sid, 2), "p1_maal": "8", "winner": "Anna"}
    assert client.post(f"/sessions/{sid}/rounds/2/edit", data=other_phone).status_code == 302
    mine = client.post(f"/sessions/{sid}/rounds/2/edit", data={**typed, "p1_maal": "5", "winner": "Anna"})
    text = mine.get_data(as_text=True)
    assert mine.status_code == 409 and "changed on another phone" in text
    row = re.search(r"<tr><th scope=\"row\">Ben: maal</th><td>(\w+)</td><td>(\w+)</td></tr>", text)
    assert row and row.groups() == ("8", "5"), "both values are shown"
    assert ben_maals(client, sid) == [2, 8, 6]


def test_web_and_vision_set_the_same_opencv_ceiling() -> None:
    import vision
    import web
    assert web.OPENCV_MAX_PIXELS == vision.OPENCV_MAX_PIXELS


# --- row 6: photos wait for memory, not only for a turn ---------------------------------------------

def jpeg_claiming(width: int, height: int, *, progressive: bool) -> bytes:
    """A small 4:4:4 JPEG whose frame says ``width`` x ``height`` (only its cost is read here)."""
    import struct

    import cv2
    import numpy as np
    params = [cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444]
    jpeg = cv2.imencode(".jpg", np.full((48, 64, 3), 90, np.uint8),
                        params + ([cv2.IMWRITE_JPEG_PROGRESSIVE, 1] if progressive else []))[1].tobytes()
    at = jpeg.index(b"\xff\xc2" if progressive else b"\xff\xc0")
    return jpeg[:at + 5] + struct.pack(">HH", height, width) + jpeg[at + 9:]


def test_two_big_progressive_photos_are_not_decoded_at_once_but_two_baseline_ones_are(app: Flask) -> None:
    import threading
    from web import photos
    from web.errors import Unavailable
    progressive = photos.decode_cost(jpeg_claiming(7296, 5472, progressive=True))
    baseline = photos.decode_cost(jpeg_claiming(7296, 5472, progressive=False))
    assert progressive == 7296 * 5472 * 9 and baseline == 7296 * 5472 * 3, "coefficients of 3 components, 2 B each"
    app.config["PHOTO_WAIT_SECONDS"] = 0.3
    for cost, second_waits in ((progressive, True), (baseline, False)):
        holding, done = threading.Event(), threading.Event()

        def first() -> None:
            with app.app_context(), photos.photo_slot(cost):
                holding.set()
                done.wait(10)

        thread = threading.Thread(target=first)
        thread.start()
        assert holding.wait(10)
        try:
            with app.app_context():
                if second_waits:
                    with pytest.raises(Unavailable):
                        with photos.photo_slot(cost):
                            pass
                else:
                    with photos.photo_slot(cost):
                        pass
        finally:
            done.set()
            thread.join(10)


# --- row 5: a decode deadline for progressive JPEGs ------------------------------------------------

def progressive_with_scans(scans: int, width: int = 1600, height: int = 1200) -> bytes:
    """A progressive 4:4:4 JPEG whose last refinement scan is repeated up to ``scans`` scans."""
    import cv2
    import numpy as np
    image = np.full((height, width, 3), 200, np.uint8)
    cv2.rectangle(image, (50, 50), (width // 2, height // 2), (30, 30, 180), -1)
    jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                                        cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444])[1].tobytes()
    end = jpeg.rindex(b"\xff\xd9")
    last = jpeg.rindex(b"\xff\xda", 0, end)
    return jpeg[:end] + jpeg[last:end] * (scans - jpeg.count(b"\xff\xda")) + b"\xff\xd9"


def test_a_progressive_jpeg_whose_scans_outlast_the_deadline_is_refused() -> None:
    import time
    data = progressive_with_scans(MAX_SCANS)
    assert decode_image(data).shape == (1200, 1600, 3), "in time: decoded"
    started = time.monotonic()
    with pytest.raises(ImageError, match="takes over 0.001 seconds to read"):
        decode_image(data, deadline=0.001)
    assert time.monotonic() - started < 2, "stopped after a scan or two, not at the end"
