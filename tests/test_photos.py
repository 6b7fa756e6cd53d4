"""Photographs in the web app: ``POST /api/detect``, bad uploads, storage, access control, the camera.

Every bad image is generated here; the detector is the shipped ONNX model, run for real.
"""

from __future__ import annotations

import io
import json
import os
import struct
import subprocess
import sys
import threading
import zlib
from collections import Counter
from pathlib import Path
from typing import Any, Callable

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

from scorer import get_rules, parse_card, parse_cards
from scorer.declare import check_hand
from scorer.maal import maal_points
from vision.score import judge_hand
from web import photos
from web.app import create_app
from web.camera import find_camera
from web_support import PLAYERS, if_match

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
REAL_VAL = Path(__file__).resolve().parent / "data" / "real_val" / "images"
LAN = {"REMOTE_ADDR": "192.168.1.20"}
VALID_HAND = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D"


def sample_photos() -> list[Path]:
    """The committed sample photos, else the real validation photos the detector tests use."""
    found = sorted(p for p in SAMPLES.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".png", ".webp"))
    return found or sorted(REAL_VAL.glob("*.jpg"))


def jpeg_bytes(width: int = 320, height: int = 240, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 255, (height, width, 3), dtype=np.uint8)
    ok, encoded = cv2.imencode(".jpg", image)
    assert ok
    return encoded.tobytes()


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def huge_png(width: int = 20000, height: int = 20000) -> bytes:
    """A well-formed PNG that claims width x height: a few compressed rows, cheap to build."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = zlib.compress(b"\x00" * (1 + 3 * width) * 8, 9)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", header) + png_chunk(b"IDAT", rows) + png_chunk(b"IEND", b"")


def upload(client: FlaskClient, data: bytes, *, name: str = "photo.jpg", mimetype: str = "image/jpeg",
           url: str = "/api/detect", **fields: Any) -> Any:
    form = {"image": (io.BytesIO(data), name, mimetype), **fields}
    return client.post(url, data=form, content_type="multipart/form-data")


BAD_IMAGES: list[tuple[str, Callable[[], bytes], str, int, str]] = [
    ("random bytes", lambda: np.random.default_rng(1).bytes(5000), "image/jpeg", 400, "JPEG, PNG or WebP"),
    ("truncated JPEG", lambda: jpeg_bytes()[:1500], "image/jpeg", 400, "cut"),
    ("empty file", lambda: b"", "image/jpeg", 400, "empty"),
    ("20000x20000 PNG", huge_png, "image/png", 400, "20000x20000"),
    ("text sent as image/jpeg", lambda: b"these are my cards: 7H 8H 9H\n" * 20, "image/jpeg", 400, "JPEG, PNG or WebP"),
    ("GIF", lambda: b"GIF89a" + b"\x00" * 200, "image/gif", 400, "GIF"),
    ("50 MB body", lambda: b"\xff\xd8\xff\xe0" + b"\x00" * (50 * 1024 * 1024), "image/jpeg", 413, "too large"),
]


@pytest.mark.parametrize("label, make, mimetype, status, words", BAD_IMAGES, ids=[b[0] for b in BAD_IMAGES])
def test_bad_images_get_a_clear_4xx(client: FlaskClient, label: str, make: Callable[[], bytes], mimetype: str,
                                    status: int, words: str) -> None:
    response = upload(client, make(), mimetype=mimetype)
    assert response.status_code == status, response.get_data(as_text=True)[:300]
    assert response.is_json
    assert words.lower() in response.get_json()["error"].lower()
    after = upload(client, jpeg_bytes())
    assert after.status_code == 200, "the worker still answers after a bad photo"


@pytest.mark.parametrize("body, content_type, words", [
    (b'{"image": "x.jpg"}', "application/json", "multipart/form-data"),
    (b"", "multipart/form-data; boundary=x", "image"),
])
def test_detect_without_a_file_field(client: FlaskClient, body: bytes, content_type: str, words: str) -> None:
    response = client.post("/api/detect", data=body, content_type=content_type)
    assert response.status_code == 400
    assert words in response.get_json()["error"]


def test_wrong_field_name_is_explained(client: FlaskClient) -> None:
    response = client.post("/api/detect", data={"photo": (io.BytesIO(jpeg_bytes()), "a.jpg")},
                           content_type="multipart/form-data")
    assert response.status_code == 400
    assert '"image"' in response.get_json()["error"]


def direct_reading(data: bytes) -> dict[str, Any]:
    """What the vision side itself reads from these bytes (no web code in the way)."""
    from vision.detector import CardDetector
    from vision.images import decode_image
    from vision.pipeline import read_photo
    return read_photo(decode_image(data), CardDetector()).to_dict()


def tiplu_command() -> list[str]:
    script = Path(sys.executable).with_name("tiplu")
    return [str(script)] if script.exists() else [sys.executable, "-m", "web.cli"]


@pytest.fixture(scope="module")
def cli_readings() -> dict[str, dict[str, Any]]:
    """``tiplu detect`` on every sample photo, as a real process (one JSON object per line)."""
    paths = [str(p) for p in sample_photos()]
    done = subprocess.run([*tiplu_command(), "detect", *paths], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr
    readings = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return {Path(r["image"]).name: r for r in readings}


def expected_cards() -> dict[str, list[str]]:
    path = SAMPLES / "expected.json"
    if not path.is_file():
        return {}
    return {name: list(entry["cards"]) for name, entry in json.loads(path.read_text()).items()}


@pytest.mark.parametrize("path", sample_photos(), ids=lambda p: p.name[:24])
def test_detect_gives_what_tiplu_detect_prints(client: FlaskClient, cli_readings: dict[str, dict[str, Any]],
                                               path: Path) -> None:
    response = upload(client, path.read_bytes(), name=path.name)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["image"] == "upload", "the uploaded file name is not echoed"
    printed = cli_readings[path.name]
    assert list(body) == list(printed)
    assert {k: v for k, v in body.items() if k != "image"} == {k: v for k, v in printed.items() if k != "image"}
    for card in body["cards"]:
        parse_card(card["card"])
        x1, y1, x2, y2 = card["box"]
        assert 0 <= x1 < x2 and 0 <= y1 < y2
        assert 0 < card["confidence"] <= 1 and isinstance(card["uncertain"], bool)
    assert sorted(i for g in body["groups"] for i in g) == list(range(len(body["cards"])))
    wanted = expected_cards().get(path.name)
    if wanted is not None:
        found = Counter(c["card"] for c in body["cards"])
        sure = Counter(c["card"] for c in body["cards"] if not c["uncertain"])
        assert not sure - Counter(wanted), f"cards reported as sure that are not in the photo: {sure - Counter(wanted)}"
        hits = sum((found & Counter(wanted)).values())
        print(f"{path.name}: {hits}/{len(wanted)} cards found, {sum((found - Counter(wanted)).values())} extra")


def test_a_phones_full_size_photo_of_a_whole_table_is_read(client: FlaskClient) -> None:
    """A 12-megapixel JPEG of the declared hand taken from further away: the app reads it in tiles
    and finds all 21 cards' corners, none of them a sure wrong card. A card it is not sure of is
    either read as a doubtful card that offers the right one, or left out with a faint-card doubt
    that names it (v0.6.1 read its 10D as 8D, offering 10D; v0.7 says "perhaps 10D" there)."""
    from vision.training.measure.report import far_photo
    frame = far_photo(cv2.imread(str(SAMPLES / "declared_hand.jpg")))
    ok, jpeg = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 92])
    response = upload(client, jpeg.tobytes(), name="IMG_4032.jpg")
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    cards = body["cards"]
    wanted = Counter(expected_cards()["declared_hand.jpg"])
    found = Counter(c["card"] for c in cards)
    sure = Counter(c["card"] for c in cards if not c["uncertain"])
    assert not sure - wanted, "a wrong card is marked for the player to check"
    missing = wanted - found
    for wrong in (found - wanted).elements():
        [card] = [c for c in cards if c["card"] == wrong]
        offered = sorted(missing.keys() & {a["card"] for a in card["alternatives"]})
        assert offered, f"{wrong} is read where no such card lies, and offers none of the cards missed"
        missing[offered[0]] -= 1
    named = Counter(d["card"] for d in body["doubts"] if d["kind"] == "faint_card")
    assert not +missing - named, f"missed without a doubt that names them: {+missing - named}"
    assert sum((+missing).values()) <= 1 and len(cards) >= sum(wanted.values()) - 1
    assert all(c["box"][0] > 1000 and c["box"][2] < 3000 for c in cards), "boxes are in the big photo's pixels"


def stored_rows(app: Flask) -> list[tuple[Any, ...]]:
    from web.db import connect
    db = connect(app.config["DATABASE"])
    try:
        return db.execute("SELECT id, session_id, round_id, seat, purpose, width, height FROM photos").fetchall()
    finally:
        db.close()


def test_a_sessions_photo_is_read_under_its_rules(client: FlaskClient, make_session: Callable[..., int]) -> None:
    """The declared-hand sample holds three 6H. A Nepali session (3 decks) keeps them; a two-deck rummy
    session reads two and says a third cannot be, at the place of the one left out: the reading follows
    the session's rules, by the same pairing as everywhere (:func:`vision.pairing.copy_limits`)."""
    data = (SAMPLES / "declared_hand.jpg").read_bytes()
    three = upload(client, data, session=str(make_session())).get_json()
    assert [c["card"] for c in three["cards"]].count("6H") == 3
    assert not [d for d in three["doubts"] if d["kind"] == "too_many_copies"]
    two = upload(client, data, session=str(make_session(rules="rummy", options={"two_decks": True}))).get_json()
    assert [c["card"] for c in two["cards"]].count("6H") == 2
    [doubt] = [d for d in two["doubts"] if d["kind"] == "too_many_copies"]
    assert doubt["message"].startswith("3 cards read as 6H, but 2 decks hold 2") and len(doubt["box"]) == 4
    plain = upload(client, data).get_json()  # no session: the most any rule family holds
    assert [c["card"] for c in plain["cards"]].count("6H") == 3


def test_a_photo_is_kept_under_a_generated_name(client: FlaskClient, app: Flask,
                                                make_session: Callable[..., int]) -> None:
    sid = make_session()
    data = jpeg_bytes(400, 300, seed=3)
    response = upload(client, data, name="../../etc/passwd.jpg", session=str(sid), purpose="maal", seat="1")
    assert response.status_code == 200, response.get_json()
    photo = response.get_json()["photo"]
    folder = photos.photo_folder(app)
    assert folder == Path(app.config["DATABASE"]).parent / "photos"
    assert sorted(os.listdir(folder)) == [f"{photo['id']}.jpg"]
    assert photos.PHOTO_ID.match(photo["id"])
    assert stored_rows(app) == [(photo["id"], sid, None, 1, "maal", 400, 300)]
    kept = cv2.imread(str(folder / f"{photo['id']}.jpg"))
    assert kept.shape == (300, 400, 3)
    served = client.get(photo["url"])
    assert served.status_code == 200 and served.mimetype == "image/jpeg"
    assert "no-store" in served.headers["Cache-Control"]
    assert b"passwd" not in served.data


def test_the_photo_follows_its_round(client: FlaskClient, app: Flask, make_session: Callable[..., int]) -> None:
    sid = make_session()
    other = make_session(players=["Eve", "Fay", "Gus"])
    mine = upload(client, jpeg_bytes(), session=str(sid), purpose="maal", seat="2").get_json()["photo"]["id"]
    theirs = upload(client, jpeg_bytes(), session=str(other)).get_json()["photo"]["id"]
    form = {"tiplu": "JC", "winner": "Anna", "finish": "melds", "p0_seen": "on", "p1_seen": "on", "p2_seen": "on",
            "p2_cards": "10C JC QC", "photo": [mine, theirs, "not-a-photo"]}
    response = client.post(f"/sessions/{sid}/rounds/new", data=form)
    assert response.status_code == 302, response.get_data(as_text=True)[:500]
    rows = {r[0]: r for r in stored_rows(app)}
    assert rows[mine][2] is not None, "linked to the saved round"
    assert rows[theirs][2] is None, "another session's photo is not moved"
    page = client.get(f"/sessions/{sid}/rounds/1").get_data(as_text=True)
    assert f"/sessions/{sid}/photos/{mine}.jpg" in page
    assert client.get(f"/sessions/{other}/photos/{mine}.jpg").status_code == 404
    client.post(f"/api/sessions/{sid}/rounds", json={"tiplu": "5H", "winner": None, "players": {
        p: {"seen": True, "maal": 0} for p in PLAYERS}})
    assert client.delete(f"/api/sessions/{sid}/rounds/1", headers=if_match(client, f"/api/sessions/{sid}/rounds/1")).status_code == 204
    assert {r[0]: r for r in stored_rows(app)}[mine][2] is None, "a deleted round lets go of its photo"
    assert client.delete(f"/api/sessions/{sid}").status_code == 204
    assert [r[0] for r in stored_rows(app)] == [theirs]
    assert sorted(os.listdir(photos.photo_folder(app))) == [f"{theirs}.jpg"]


@pytest.fixture
def guarded(db_path: Path) -> FlaskClient:
    app = create_app({"TESTING": True, "DATABASE": str(db_path), "SECRET_KEY": "s", "WTF_CSRF_ENABLED": False,
                      "TABLE_CODE": "4711", "CAMERA": "none"})
    return app.test_client()


def test_photos_need_the_table_code_from_the_network(guarded: FlaskClient) -> None:
    guarded.set_cookie("tiplu_table_code", "4711")
    sid = guarded.post("/api/sessions", json={"players": PLAYERS}).get_json()["id"]
    photo = guarded.post("/api/detect", data={"image": (io.BytesIO(jpeg_bytes()), "photo.jpg"), "session": str(sid)},
                         content_type="multipart/form-data", headers={"Origin": "http://localhost"}).get_json()["photo"]
    guarded.delete_cookie("tiplu_table_code")
    url = photo["url"]
    assert guarded.get(url).status_code == 403, "the machine itself needs the code too"
    assert guarded.get(url, environ_base=LAN).status_code == 403
    assert guarded.get(url, environ_base=LAN, headers={"X-Table-Code": "1234"}).status_code == 403
    assert guarded.get(url, environ_base=LAN, headers={"X-Table-Code": "4711"}).status_code == 200
    guarded.set_cookie("tiplu_table_code", "4711")
    assert guarded.get(url, environ_base=LAN).status_code == 200
    guarded.delete_cookie("tiplu_table_code")
    denied = guarded.post("/api/detect", data={"image": (io.BytesIO(jpeg_bytes()), "a.jpg"), "session": str(sid)},
                          content_type="multipart/form-data", environ_base=LAN)
    assert denied.status_code == 403
    assert guarded.post(f"/sessions/{sid}/photos", data={"image": (io.BytesIO(jpeg_bytes()), "a.jpg")},
                        content_type="multipart/form-data", environ_base=LAN).status_code == 403
    assert len(stored_rows(guarded.application)) == 1, "nothing stored without the code"


@pytest.mark.parametrize("photo_id", ["0" * 32, "..%2F..%2Fledger.db", "x" * 32, "ABCDEF" + "0" * 26])
def test_unknown_photo_addresses_are_404(client: FlaskClient, make_session: Callable[..., int], photo_id: str) -> None:
    sid = make_session()
    assert client.get(f"/sessions/{sid}/photos/{photo_id}.jpg").status_code == 404


def test_page_upload_answers_json(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    path = sample_photos()[0]
    response = upload(client, path.read_bytes(), url=f"/sessions/{sid}/photos", purpose="hand")
    assert response.status_code == 201
    body = response.get_json()
    assert body["reading"]["image"] == f"{body['photo']['id']}.jpg"
    assert [c["card"] for c in body["reading"]["cards"]] == [c["card"] for c in direct_reading(path.read_bytes())["cards"]]
    bad = upload(client, b"", url=f"/sessions/{sid}/photos")
    assert bad.status_code == 400 and "empty" in bad.get_json()["error"]


def check(client: FlaskClient, sid: int, **payload: Any) -> Any:
    return client.post(f"/sessions/{sid}/cards/check", json=payload)


def test_check_a_photographed_hand(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    cards = VALID_HAND.split()
    body = check(client, sid, cards=cards, purpose="hand", tiplu="JS").get_json()
    expected = check_hand(parse_cards(cards), get_rules("nepali"), tiplu=parse_card("JS"), players=4)
    assert body["verdict"]["valid"] is expected.valid is True
    assert [[cards[i] for i in group] for group in body["outline"]] == body["verdict"]["melds"]
    assert sorted(i for g in body["outline"] for i in g) == list(range(len(cards)))
    broken = check(client, sid, cards=cards[:-3] + ["KC", "AH", "9S"], purpose="hand", tiplu="JS").get_json()
    assert broken["verdict"]["valid"] is False and broken["verdict"]["reason"]


def test_check_maal_from_a_photo(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    cards = ["JC", "JC", "QC", "10C", "5H"]
    body = check(client, sid, cards=cards, purpose="maal", tiplu="JC", seen=True).get_json()
    expected = maal_points(parse_cards(cards), get_rules("nepali"), parse_card("JC")).to_dict()
    assert body["maal"] == expected
    for group, item in zip(body["outline"], expected["items"]):
        assert sorted(cards[i] for i in group) == sorted(item["cards"])


@pytest.mark.parametrize("payload, words", [
    ({"cards": ["7H"], "purpose": "maal"}, "tiplu first"),
    ({"cards": ["7H"], "purpose": "hand"}, "tiplu first"),
    ({"cards": ["7H", "XX"], "purpose": "hand"}, "XX"),
    ({"cards": ["7H"], "purpose": "selfie"}, "purpose"),
    ({"cards": ["7H"], "purpose": "penalty", "turned": "7D"}, "rummy"),
    ({"cards": 7, "purpose": "hand"}, "list"),
])
def test_check_explains_bad_input(client: FlaskClient, make_session: Callable[..., int], payload: dict[str, Any],
                                  words: str) -> None:
    response = check(client, make_session(), **payload)
    assert response.status_code == 400
    assert words in response.get_json()["error"]


def test_verify_page(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    page = client.get(f"/sessions/{sid}/verify").get_data(as_text=True)
    assert 'capture="environment"' in page and 'data-target="hand"' in page
    valid = client.post(f"/sessions/{sid}/verify", data={"hand": VALID_HAND, "tiplu": "JS"})
    assert valid.status_code == 200 and 'class="panel verdict valid"' in valid.get_data(as_text=True)
    invalid = client.post(f"/sessions/{sid}/verify", data={"hand": VALID_HAND.replace("5S", "9H"), "tiplu": "JS"})
    assert 'class="panel verdict invalid"' in invalid.get_data(as_text=True)
    empty = client.post(f"/sessions/{sid}/verify", data={"hand": ""})
    assert empty.status_code == 400


def test_no_camera_hides_the_button_and_answers_404(guarded: FlaskClient) -> None:
    guarded.set_cookie("tiplu_table_code", "4711")
    sid = guarded.post("/api/sessions", json={"players": PLAYERS}).get_json()["id"]
    page = guarded.get(f"/sessions/{sid}/rounds/new").get_data(as_text=True)
    assert page.count('class="photo-tools"') == 1 + len(PLAYERS)
    assert "camera-open" not in page
    preview = guarded.get("/camera/preview.jpg")
    assert preview.status_code == 404 and "no camera" in preview.get_json()["error"]
    assert guarded.post(f"/sessions/{sid}/photos/camera").status_code == 404
    guarded.delete_cookie("tiplu_table_code")
    assert guarded.get("/camera/preview.jpg", environ_base=LAN).status_code == 403


@pytest.mark.parametrize("setting, source", [("none", None), ("off", None), ("2", 2), ("/dev/video7", "/dev/video7")])
def test_camera_setting(setting: str, source: Any) -> None:
    camera = find_camera(setting)
    assert (camera.source if camera else None) == source


def test_a_missing_camera_device_is_an_error_not_a_crash() -> None:
    camera = find_camera("/dev/video-does-not-exist")
    assert camera is not None
    with pytest.raises(OSError):
        camera.frame()


@pytest.mark.parametrize("cards, groups, expected", [
    (["7H", "8H", "7H", "9H"], [["7H", "8H", "9H"]], [[0, 1, 3]]),
    (["JC", "JC", "QC"], [["JC"], ["JC", "QC"]], [[0], [1, 2]]),
    (["AS"], [["KS"]], [[]]),
])
def test_cards_to_indexes(cards: list[str], groups: list[list[str]], expected: list[list[int]]) -> None:
    assert photos.cards_to_indexes(cards, groups) == expected


def test_the_detector_is_loaded_once_across_threads() -> None:
    key = str(ROOT / "models")
    photos._detectors.pop(key, None)
    seen: list[Any] = []
    threads = [threading.Thread(target=lambda: seen.append(photos.get_detector(key))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 4 and all(d is seen[0] for d in seen)


def test_a_missing_model_is_a_clear_error(client: FlaskClient, app: Flask, tmp_path: Path) -> None:
    app.config["MODEL_PATH"] = str(tmp_path / "no-model")
    response = upload(client, jpeg_bytes())
    assert response.status_code == 400
    assert "corners.onnx" in response.get_json()["error"]


def test_check_rummy_penalty_from_a_photo(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session(players=["Anna", "Ben", "Carla"], rules="rummy")
    cards = ["3H", "4H", "5H", "KS", "9D"]
    body = check(client, sid, cards=cards, purpose="penalty", turned="7D").get_json()
    from scorer.rummy import penalty_points
    expected = penalty_points(parse_cards(cards), get_rules("rummy"), parse_card("7D")).to_dict()
    assert body["penalty"] == expected
    assert [[cards[i] for i in g] for g in body["outline"]] == expected["melds"]
    page = client.get(f"/sessions/{sid}/rounds/new").get_data(as_text=True)
    assert 'data-target="turned" data-purpose="turned"' in page
    assert page.count('data-purpose="penalty"') == 3


def multipart(data: bytes, mimetype: str = "image/jpeg") -> tuple[bytes, str]:
    boundary = "tiplu-test-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"p.jpg\"\r\n"
            f"Content-Type: {mimetype}\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


@pytest.mark.server
def test_a_real_server_survives_every_bad_photo(tmp_path: Path) -> None:
    import http.client
    from urllib.parse import urlsplit
    from web_support import Server
    server = Server(tmp_path / "photos.db")
    try:
        address = urlsplit(server.base)
        for label, make, mimetype, status, words in BAD_IMAGES:
            body, content_type = multipart(make(), mimetype)
            connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
            try:
                connection.request("POST", "/api/detect", body=body, headers={"Content-Type": content_type})
                response = connection.getresponse()
                answer = json.loads(response.read())
            except (BrokenPipeError, ConnectionResetError):
                assert status == 413, f"{label}: the server hung up"
                continue
            finally:
                connection.close()
            assert response.status == status, (label, answer)
            assert words.lower() in answer["error"].lower()
        body, content_type = multipart(jpeg_bytes())
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        connection.request("POST", "/api/detect", body=body, headers={"Content-Type": content_type})
        response = connection.getresponse()
        assert response.status == 200 and "cards" in json.loads(response.read())
        assert server.process.poll() is None
        assert "Traceback" not in "".join(server.output)
    finally:
        server.kill()


def laid_out(hand: list[str], sizes: list[int]) -> list[list[int]]:
    groups, start = [], 0
    for size in sizes:
        groups.append(list(range(start, start + size)))
        start += size
    return groups


@pytest.mark.parametrize("hand, sizes, valid, words", [
    (VALID_HAND.split(), [3] * 7, True, None),
    (VALID_HAND.split() + ["9C"], [3] * 7 + [1], True, None),
    (VALID_HAND.split()[3:] + VALID_HAND.split()[:3], [3] * 7, True, None),
    ("3S 4S 6H 5S 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D".split(), [3] * 7, False, "group 1"),
    (VALID_HAND.split(), [3] * 6 + [1, 1, 1], False, "JH 5C 5D"),
])
def test_a_hand_judged_as_laid_out(client: FlaskClient, make_session: Callable[..., int], hand: list[str],
                                   sizes: list[int], valid: bool, words: str | None) -> None:
    sid = make_session()
    body = check(client, sid, cards=hand, purpose="hand", tiplu="JS", groups=laid_out(hand, sizes)).get_json()
    assert body["as_laid"]["valid"] is valid, body
    if words:
        assert words in body["as_laid"]["reason"]
    assert "verdict" in body, "the search verdict comes too"


@pytest.mark.parametrize("sizes", [[3] * 7 + [1], [3] * 6 + [2, 2], [3] * 6 + [1, 1, 2]])
def test_the_photo_review_judges_as_tiplu_score_does(client: FlaskClient, make_session: Callable[..., int],
                                                     sizes: list[int]) -> None:
    """One path: the page's headline is the one tiplu score shows (vision.score.judge_hand's ``declare``:
    the hand as laid when the photo shows a declaration, else the free search); tests/test_one_verdict.py
    runs both paths on the same cards."""
    hand = VALID_HAND.split() + ["9C"]
    groups = laid_out(hand, sizes)
    body = check(client, make_session(), cards=hand, purpose="hand", tiplu="JS", groups=groups).get_json()
    verdict = judge_hand(parse_cards(hand), get_rules("nepali"), groups=groups, tiplu=parse_card("JS"), players=4)
    assert verdict.declare is not None and verdict.as_laid is not None and verdict.laid is not None
    assert body["grouping"] == verdict.grouping
    assert {k: body["verdict"][k] for k in verdict.declare.to_dict()} == verdict.declare.to_dict()
    assert body["as_laid"] == {"valid": verdict.as_laid.valid, "groups": [list(m) for m in verdict.laid.melds],
                               "discard": None if verdict.as_laid.discard is None else str(verdict.as_laid.discard),
                               "reason": verdict.as_laid.reason}


@pytest.mark.parametrize("groups", [[[0, 0]], [[0, 99]], [[-1]], "0 1 2", [[0, True]]])
def test_bad_groups_are_explained(client: FlaskClient, make_session: Callable[..., int], groups: Any) -> None:
    response = check(client, make_session(), cards=VALID_HAND.split(), purpose="hand", tiplu="JS", groups=groups)
    assert response.status_code == 400
    assert "groups" in response.get_json()["error"]


def with_metadata(jpeg: bytes, orientation: int) -> bytes:
    """``jpeg`` as a phone sends it: an EXIF segment (``orientation``, and a place), a comment, and a motion-photo
    video after the end marker."""
    tiff = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01" + struct.pack(">HHIHH", 0x0112, 3, 1, orientation, 0)
    exif = b"Exif\x00\x00" + tiff + b"\x00\x00\x00\x00" + b"GPS 27.7172 N 85.3240 E"
    comment = b"taken at home"
    return (jpeg[:2] + b"\xff\xe1" + struct.pack(">H", 2 + len(exif)) + exif
            + b"\xff\xfe" + struct.pack(">H", 2 + len(comment)) + comment + jpeg[2:] + b"motion video")


@pytest.mark.parametrize("orientation, size, same_bytes", [(1, (400, 300), True), (6, (300, 400), False)],
                         ids=["as stored", "turned by its EXIF"])
def test_a_kept_photo_shows_what_was_read_without_its_metadata(client: FlaskClient, app: Flask,
                                                               make_session: Callable[..., int], orientation: int,
                                                               size: tuple[int, int], same_bytes: bool) -> None:
    """A phone's JPEG shown as stored is kept as its own compressed pixels (nothing encoded again); one its EXIF
    turns is kept turned, as it was read. Neither keeps the place, the comment or the video."""
    jpeg = jpeg_bytes(400, 300, seed=5)
    sent = with_metadata(jpeg, orientation)
    response = upload(client, sent, session=str(make_session()))
    assert response.status_code == 200, response.get_json()
    photo = response.get_json()["photo"]
    kept = (photos.photo_folder(app) / f"{photo['id']}.jpg").read_bytes()
    assert (photo["width"], photo["height"]) == size
    assert (kept == jpeg) is same_bytes
    assert not any(words in kept for words in (b"GPS", b"taken at home", b"motion video", b"Exif"))
    read = photos.decode_photo(sent, max_bytes=len(sent), max_pixels=10**6)
    stored = cv2.imdecode(np.frombuffer(kept, np.uint8), cv2.IMREAD_COLOR)
    assert stored.shape == read.shape
    if same_bytes:
        assert np.array_equal(stored, read)
