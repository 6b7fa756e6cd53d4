"""A property over every API endpoint: whatever is sent, no 5xx, every 4xx says
``{"error": ...}``, and a refused request changes nothing in the ledger or on disk.

Payloads are valid ones with one field replaced by something hostile (huge or
negative numbers, floats, ``"²"``, nested lists, wrong types), or whole bodies that
are not what the endpoint takes; text includes lone surrogates (escaped in JSON),
unicode digits (``"٣"``, ``"８"``, ``"1_0"``) and thousands of nested brackets; ids in
the URL include 30 digits, foreign digits and 2^63. The seed is fixed, so a failure
here reproduces. The page routes that the photo review's script calls (``cards/check``),
the round and check-a-hand forms and the history's restore are driven too; off
``/api/`` an unknown session answers a page, like every page. Rounds are edited and
deleted with or without ``If-Match`` (a right, a stale or a made-up version).

Issue 55 adds two more: crafted JPEG headers (markers a decoder skips, reserved ones,
hidden and second frames of any size, lengths that lie), uploaded and decoded: each
is decoded within the pixel limit or refused with a message; and raw request lines and
headers sent to a real ``tiplu serve`` over a socket: each gets an answer below 500
(or 501/505, which name what the server does not do), and a player is served after every one.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import select
import socket
import struct
import time
import tempfile
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from web import photos
from web.app import create_app
from vision.images import MAX_PIXELS, ImageError, decode_image
from web_support import PLAYERS, Server, nepali_round

FORM_TEXT = st.sampled_from(["", " ", "²", "٣", "８", "1_0", "--5", "9" * 30, "9" * 5000, "-1", "1e3", "JC", "JOKER",
                             "Anna", "anna", "melds", "dublees", "nepali", "rummy", "true", "null", "<script>", "\x00",
                             "ñ" * 50, "10C JC QC", "[" * 2000, "[[[[]]]]", '{"photo": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}'])
#: Lone surrogates can travel only inside JSON (escaped); a form cannot carry them.
HOSTILE_TEXT = FORM_TEXT | st.sampled_from(["\ud800", "a\udc00b", "\udbff\udbff"])
SCALARS = (st.none() | st.booleans() | st.integers(-(10**30), 10**30) | st.integers(-3, 12)
           | st.floats(allow_nan=True, allow_infinity=True) | HOSTILE_TEXT | st.text(max_size=12))
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=8) | HOSTILE_TEXT, inner, max_size=4), max_leaves=12)
IDS = st.sampled_from(["{sid}", "{sid}", "{sid}", "{rummy}", "0", "-1", "9" * 30, "²", "٣", "abc", "1.5",
                       str(2**63), str(2**63 - 1)])
AUDITS = st.sampled_from(["1", "2", "0", str(2**63), str(2**63 - 1), "9" * 30, "²", "٣"])
ROUND_FORM_FIELDS = ("tiplu", "winner", "finish", "no_winner", "p0_maal", "p1_maal", "p1_seen", "p2_cards",
                     "p3_tunnelas", "correction", "photo", "submission")
ROUNDS = st.sampled_from(["1", "1", "2", "0", "-1", "9" * 30, "²", "x"])


def base_payloads() -> dict[str, dict[str, Any]]:
    return {
        "session": {"players": ["Anna", "Ben", "Carla"], "rules": "nepali", "options": {"tiplu_pair": 8},
                    "rounds_planned": 4, "title": "Friday", "first_dealer": 1},
        "changes": {"title": "Saturday", "rounds_planned": 6},
        "round": nepali_round(),
        "end": {"ended": True},
        "check": {"cards": ["10C", "JC", "QC"], "purpose": "maal", "tiplu": "JC"},
    }


ENDPOINTS = [
    ("POST", "/api/sessions", "session"),
    ("GET", "/api/sessions/{id}", None),
    ("PATCH", "/api/sessions/{id}", "changes"),
    ("POST", "/api/sessions/{id}/end", "end"),
    ("POST", "/api/sessions/{id}/rounds", "round"),
    ("POST", "/api/sessions/{id}/rounds/preview", "round"),
    ("GET", "/api/sessions/{id}/rounds/{n}", None),
    ("PUT", "/api/sessions/{id}/rounds/{n}", "round"),
    ("DELETE", "/api/sessions/{id}/rounds/{n}", None),
    ("DELETE", "/api/sessions/{id}", None),
    ("GET", "/api/sessions/{id}/history", None),
    ("GET", "/api/sessions/{id}/export.csv", None),
    ("GET", "/api/sessions/{id}/export.json", None),
    ("GET", "/api/sessions", None),
    ("GET", "/api/rules", None),
    ("POST", "/api/detect", "photo"),
    ("POST", "/sessions/{id}/cards/check", "check"),
    ("POST", "/api/sessions/{id}/history/{audit}/restore", None),
    ("POST", "/sessions/{id}/history/{audit}/restore", None),
    ("POST", "/sessions/{id}/rounds/new", "form"),
    ("POST", "/sessions/{id}/verify", "form"),
]


@st.composite
def mutated(draw: st.DrawFn, payload: Any) -> Any:
    """``payload`` with one value somewhere inside replaced (or a key added or dropped)."""
    if not isinstance(payload, (dict, list)) or not payload or draw(st.integers(0, 4)) == 0:
        return draw(VALUES)
    copy = json.loads(json.dumps(payload))
    if isinstance(copy, dict):
        key = draw(st.sampled_from(sorted(copy)) | st.text(max_size=8))
        action = draw(st.integers(0, 3))
        if action == 0:
            copy.pop(key, None)
        elif action == 1 or key not in copy:
            copy[key] = draw(VALUES)
        else:
            copy[key] = draw(mutated(copy[key]))
    else:
        index = draw(st.integers(0, len(copy) - 1))
        copy[index] = draw(mutated(copy[index]))
    return copy


def _segment(marker: int, body: bytes, length: int | None = None) -> bytes:
    return bytes([0xFF, marker]) + struct.pack(">H", (len(body) + 2 if length is None else length) & 0xFFFF) + body


def _frame(marker: int, width: int, height: int) -> bytes:
    return _segment(marker, struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x11\x00\x02\x11\x01\x03\x11\x01")


@functools.lru_cache(maxsize=2)
def small_jpeg(progressive: bool) -> bytes:
    image = np.full((48, 64, 3), 170, np.uint8)
    params = [cv2.IMWRITE_JPEG_PROGRESSIVE, 1] if progressive else []
    return cv2.imencode(".jpg", image, params)[1].tobytes()


SIDES = st.integers(0, 65535) | st.sampled_from([0, 1, 15, 16, 48, 64, 8192, 20000, 65535])


@st.composite
def crafted_jpegs(draw: st.DrawFn) -> bytes:
    """A real 64 x 48 JPEG with crafted segments put before, among or instead of its own: ``FF 00`` and
    reserved markers with a length, frames of any size (hidden in an APPn, or a second one), lengths
    that run past the end or are under 2, fill bytes, and its own frame's size changed."""
    jpeg = small_jpeg(draw(st.booleans()))
    scan = jpeg.index(b"\xff\xda")
    head, rest = bytearray(jpeg[2:scan]), jpeg[scan:]
    frame_at = max(head.find(b"\xff\xc0"), head.find(b"\xff\xc2"))
    if draw(st.booleans()):  # the frame's own size: kept small enough to decode quickly
        head[frame_at + 5:frame_at + 9] = struct.pack(">HH", draw(st.integers(0, 1200)), draw(st.integers(0, 1600)))
    pieces = []
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["ff00", "reserved", "frame", "hidden", "lying", "short", "fill", "app"]))
        if kind == "ff00":
            pieces.append(_segment(0x00, _frame(0xC0, draw(SIDES), draw(SIDES))))
        elif kind == "reserved":
            marker = draw(st.sampled_from([0x02, 0x4F, 0xBF, 0xC8, 0xDE, 0xDF, 0xF0, 0xF7, 0xFD]))
            pieces.append(_segment(marker, draw(st.binary(max_size=12))))
        elif kind == "frame":
            pieces.append(_frame(draw(st.sampled_from([0xC0, 0xC1, 0xC2, 0xC3, 0xC9])), draw(SIDES), draw(SIDES)))
        elif kind == "hidden":
            pieces.append(_segment(0xE1, b"Exif\x00\x00" + _frame(0xC0, draw(SIDES), draw(SIDES))))
        elif kind == "lying":
            pieces.append(_segment(0xE0, draw(st.binary(max_size=8)), draw(st.integers(0, 65535))))
        elif kind == "short":
            pieces.append(bytes([0xFF, draw(st.sampled_from([0xC0, 0xDB, 0xE0, 0xFE]))]) + b"\x00"
                          + bytes([draw(st.integers(0, 1))]))
        elif kind == "fill":
            pieces.append(b"\xff" * draw(st.integers(1, 4)))
        else:
            pieces.append(_segment(draw(st.integers(0xE0, 0xEF)), draw(st.binary(max_size=20))))
    at = draw(st.sampled_from([0, frame_at, len(head)]))
    return b"\xff\xd8" + bytes(head[:at]) + b"".join(pieces) + bytes(head[at:]) + rest


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    method, path, kind = draw(st.sampled_from(ENDPOINTS))
    url = path.replace("{id}", draw(IDS)).replace("{n}", draw(ROUNDS)).replace("{audit}", draw(AUDITS))
    request: dict[str, Any] = {"method": method, "url": url, "headers": {}}
    if kind == "form":
        request["form"] = {name: draw(FORM_TEXT | st.sampled_from(["Anna", "JC", "5", "on"]))
                           for name in draw(st.sets(st.sampled_from(ROUND_FORM_FIELDS), min_size=1))}
        return request
    if kind == "photo":
        fields = {name: draw(FORM_TEXT | st.sampled_from(["{sid}", "hand", "maal", "1"]))
                  for name in draw(st.sets(st.sampled_from(["session", "purpose", "seat"])))}
        image = draw(st.sampled_from(["png", "garbage", "empty", "none", "crafted"]))
        request["photo"] = (fields, draw(crafted_jpegs()) if image == "crafted" else image)
        return request
    if kind is not None:
        body = draw(mutated(base_payloads()[kind]))
        shape = draw(st.integers(0, 9))
        if shape == 0:
            request["data"], request["content_type"] = draw(st.binary(max_size=40)), "application/json"
        elif shape == 1:
            request["data"], request["content_type"] = json.dumps(body), "text/plain"
        else:
            request["data"], request["content_type"] = json.dumps(body), "application/json"
    if method == "POST" and kind == "round" and draw(st.booleans()):
        request["headers"]["Idempotency-Key"] = draw(st.sampled_from(["k1", "k2", "x" * 201]))
    if method in ("PUT", "DELETE") and "/rounds/" in path and draw(st.integers(0, 3)):
        request["headers"]["If-Match"] = draw(st.sampled_from(["{etag}", "{etag}", '"1.1"', '"9.9"', "*", "x" * 300,
                                                               'W/"{etag}"', '"\u00e9"', '""']))
    return request


def fingerprint(app: Flask) -> tuple[str, tuple[str, ...]]:
    """The ledger's whole content and the photo folder's listing."""
    import sqlite3
    with sqlite3.connect(app.config["DATABASE"]) as conn:
        dump = "\n".join(line for line in conn.iterdump())
    folder = photos.photo_folder(app)
    files = tuple(sorted(os.listdir(folder))) if folder.is_dir() else ()
    return hashlib.sha256(dump.encode()).hexdigest(), files


@pytest.fixture(scope="module")
def table() -> dict[str, Any]:
    folder = Path(tempfile.mkdtemp(prefix="tiplu-property-"))
    app = create_app({"TESTING": True, "DATABASE": str(folder / "p.db"), "SECRET_KEY": "k",
                      "WTF_CSRF_ENABLED": False, "CAMERA": "none"})
    png = cv2.imencode(".png", np.full((48, 64, 3), 190, np.uint8))[1].tobytes()
    return {"app": app, "client": app.test_client(), "png": png}


def ensure_sessions(client: FlaskClient) -> dict[str, str]:
    """A nepali session with a round and a rummy one, made again when a request deleted them."""
    sessions = client.get("/api/sessions").get_json()["sessions"]
    nepali = [s["id"] for s in sessions if s["rules"] == "nepali" and s["players"] == PLAYERS and not s["ended_at"]]
    rummy = [s["id"] for s in sessions if s["rules"] == "rummy"]
    if not nepali:
        nepali = [client.post("/api/sessions", json={"players": PLAYERS}).get_json()["id"]]
        client.post(f"/api/sessions/{nepali[0]}/rounds", json=nepali_round())
    if not rummy:
        rummy = [client.post("/api/sessions", json={"players": ["A", "B", "C"], "rules": "rummy"}).get_json()["id"]]
    return {"sid": str(nepali[0]), "rummy": str(rummy[0])}


@seed(int(os.environ.get("TIPLU_PROPERTY_SEED", "20261201")))
@settings(max_examples=int(os.environ.get("TIPLU_PROPERTY_EXAMPLES", "600")), deadline=None, derandomize=False, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(requests())
def test_no_request_to_the_api_fails_the_server_or_half_changes_the_ledger(table: dict[str, Any],
                                                                          request: dict[str, Any]) -> None:
    client: FlaskClient = table["client"]
    ids = ensure_sessions(client)
    url = request["url"].format(**ids)
    before = fingerprint(table["app"])
    if "photo" in request:
        fields, image = request["photo"]
        form: dict[str, Any] = {name: value.replace("{sid}", ids["sid"]) for name, value in fields.items()}
        content = image if isinstance(image, bytes) else {"png": table["png"], "garbage": b"not an image" * 10,
                                                          "empty": b""}.get(image)
        if content is not None:
            form["image"] = (io.BytesIO(content), "p.png")
        response = client.post(url, data=form, content_type="multipart/form-data")
    elif "form" in request:
        response = client.post(url, data=request["form"])
    else:
        headers = dict(request["headers"])
        if "{etag}" in headers.get("If-Match", ""):
            current = client.get(url).headers.get("ETag", '"0.0"').strip('"')
            headers["If-Match"] = headers["If-Match"].replace("{etag}", current)
        response = client.open(url, method=request["method"], data=request.get("data"),
                               content_type=request.get("content_type"), headers=headers)
    assert response.status_code < 500, (url, request, response.get_data(as_text=True)[:300])
    if response.status_code >= 400 and url.startswith("/api/"):
        body = response.get_json(silent=True)
        assert isinstance(body, dict) and isinstance(body.get("error"), str) and body["error"], \
            (url, response.status_code, response.get_data(as_text=True)[:200])
    if response.status_code >= 400:
        assert fingerprint(table["app"]) == before, ("a refused request changed something", url, request)


@seed(int(os.environ.get("TIPLU_PROPERTY_SEED", "20261201")))
@settings(max_examples=int(os.environ.get("TIPLU_PROPERTY_EXAMPLES", "600")), deadline=None, database=None)
@given(crafted_jpegs())
def test_a_crafted_jpeg_header_is_decoded_within_the_limit_or_refused(data: bytes) -> None:
    try:
        image = decode_image(data, max_pixels=2_000_000)
    except ImageError as error:
        assert str(error)
        return
    assert image.shape[0] * image.shape[1] <= 2_000_000 and image.shape[2] == 3
    assert image.size <= MAX_PIXELS * 3


METHODS = st.sampled_from(["GET", "get", "POST", "PUT", "DELETE", "G ET", "GET\x00", "", "\x16\x03\x01", "GE\tT",
                           "OPTIONS", "CONNECT", "X" * 300])
TARGETS = st.sampled_from(["/", "/api/sessions", "/a b", "/\x00", "*", "http://evil.example/", "//x", "/%00",
                           "/api/sessions/1/rounds/1", "/" + "a" * 9000, "", "/code?next=%0d%0a"])
VERSIONS = st.sampled_from(["HTTP/1.1", "HTTP/1.0", "HTTP/2.0", "HTTP/1.1 extra", "http/1.1", "HTTP/1.x", "",
                            "HTTP/9.9"])
HEADER_LINES = st.sampled_from([
    "Host: 127.0.0.1", "no colon here", "X-A: a\x00b", "Host : 127.0.0.1", " folded: continuation", "X-B:\tok",
    "Content-Length: -1", "Content-Length: 1, 2", "Content-Length: abc", "Transfer-Encoding: chunked, gzip",
    "Transfer-Encoding: xchunked", "X-Table-Code: " + "9" * 5000, "Expect: 100-continue", ": empty name",
    "X-\u00e9: caf\u00e9", "Connection: close", "Connection: keep-alive", "Content-Type: application/json",
    "Cookie: tiplu_table_code=" + "a" * 300, "If-Match: \"1.1\"", "Host: evil.example", "X-C: \r"])


@st.composite
def raw_requests(draw: st.DrawFn) -> bytes:
    """One request as bytes: a request line and headers drawn from broken and odd ones, ended by an empty line."""
    line = f"{draw(METHODS)} {draw(TARGETS)} {draw(VERSIONS)}"
    if draw(st.integers(0, 5)) == 0:
        line = draw(st.sampled_from([line.replace(" ", "  "), line.replace(" ", "\t"), " " + line, line + " "]))
    headers = draw(st.lists(HEADER_LINES, max_size=5))
    text = "\r\n".join([line, *headers]) + "\r\n\r\n"
    return text.encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def served() -> Any:
    folder = Path(tempfile.mkdtemp(prefix="tiplu-raw-"))
    server = Server(folder / "raw.db", env={"TIPLU_REQUEST_SECONDS": "2"})
    yield server
    server.kill()


def answer_of(port: int, raw: bytes, wait: float = 4.0) -> bytes:
    """What the server answers ``raw`` within ``wait`` seconds (it may close the connection after)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as conn:
        conn.sendall(raw)
        data, deadline = b"", time.monotonic() + wait
        while b"\r\n" not in data and time.monotonic() < deadline:
            readable, _, _ = select.select([conn], [], [], 0.1)
            if readable:
                chunk = conn.recv(4096)
                if not chunk:
                    break
                data += chunk
        return data


@seed(int(os.environ.get("TIPLU_PROPERTY_SEED", "20261201")))
@settings(max_examples=int(os.environ.get("TIPLU_RAW_EXAMPLES", "150")), deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(raw_requests())
def test_a_malformed_request_line_or_header_gets_an_answer_below_500_and_players_go_on(served: Any,
                                                                                       raw: bytes) -> None:
    port = int(served.base.rsplit(":", 1)[1])
    data = answer_of(port, raw)
    status = data.split(b"\r\n", 1)[0]
    # 501 (a transfer coding waitress does not do) and 505 (an HTTP version it does not speak) are answers too
    assert status.startswith(b"HTTP/1.") and (int(status.split()[1]) < 500 or int(status.split()[1]) in (501, 505)), \
        (raw[:200], data[:200])
    started = time.monotonic()
    assert served.call("GET", "/api/sessions")[0] == 200 and time.monotonic() - started < 2
