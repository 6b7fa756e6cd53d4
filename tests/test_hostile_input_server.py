"""Hostile input against a real ``tiplu serve`` process: the failures that were reproduced over HTTP."""

from __future__ import annotations

import http.client
import os
import re
from pathlib import Path
from typing import Any, Iterator

import cv2
import numpy as np
import pytest

from web_support import PLAYERS, Server, multipart

pytestmark = pytest.mark.server

CODE = "97531086"


def send(server: Server, method: str, path: str, data: bytes, headers: dict[str, str]) -> tuple[int, Any, Any]:
    """One request; a server that answers (413) and closes before the whole body is sent still has its say.

    urllib gives up with a broken pipe when the server stops reading early, so the body is
    written here in pieces and the answer read whatever happened to the rest of it.
    """
    host, port = server.base.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.putrequest(method, path)
        for name, value in {**headers, "Content-Length": str(len(data)), "Connection": "close"}.items():
            connection.putheader(name, value)
        connection.endheaders()
        try:
            for start in range(0, len(data), 65536):
                connection.send(data[start:start + 65536])
        except (BrokenPipeError, ConnectionResetError):
            pass
        response = connection.getresponse()
        return response.status, response.headers, response.read()
    finally:
        connection.close()


def test_guessing_the_code_is_throttled_and_reads_need_it(server_factory: Any) -> None:
    server = server_factory("--host", "0.0.0.0", "--table-code", CODE)
    assert server.call("GET", "/api/sessions")[0] == 403, "reading the ledger needs the code"
    assert server.call("GET", "/api/sessions/1/export.json")[0] == 403
    statuses = [server.call("GET", "/api/sessions", headers={"X-Table-Code": f"{n:08d}"})[0] for n in range(8)]
    assert statuses[:6] == [403] * 6 and statuses[-1] == 429
    status, headers, body = send(server, "GET", "/api/sessions", b"", {"X-Table-Code": CODE})
    assert status == 429 and int(headers["Retry-After"]) >= 1 and b"too many wrong table codes" in body
    assert "wrong table code from 127.0.0.1" in "".join(server.output)
    lan = re.search(r"open (http://(?!127\.)[\d.]+:\d+)/", "".join(server.output))
    if lan is None:
        pytest.skip("this machine has no LAN address to test a second address from")
    server.base = lan.group(1)
    assert server.call("GET", "/api/sessions", headers={"X-Table-Code": CODE})[0] == 200, "other addresses go on"


def test_a_longer_code_is_offered(server_factory: Any) -> None:
    server = server_factory("--host", "0.0.0.0", "--table-code-length", "12")
    code = re.search(r"table code: (\d+)", "".join(server.output))
    assert code is not None and len(code.group(1)) == 12


def test_too_large_bodies_answer_json_on_the_api(server_factory: Any) -> None:
    server = server_factory("--max-upload-mb", "1")
    for size in (1_500_000, 3_000_000):
        status, headers, body = send(server, "POST", "/api/sessions", b" " * size,
                                     {"Content-Type": "application/json"})
        assert status == 413 and headers["Content-Type"].startswith("application/json"), (size, body[:80])
        assert b'"error"' in body and b"too large" in body


def test_huge_ids_and_numbers_are_4xx_not_500(server_factory: Any) -> None:
    server = server_factory()
    assert server.call("GET", "/api/sessions/" + "9" * 30)[0] == 404
    sid = server.call("POST", "/api/sessions", {"players": PLAYERS})[1]["id"]
    assert server.call("GET", f"/api/sessions/{sid}/rounds/" + "9" * 30)[0] == 404
    status, body = server.call("POST", f"/api/sessions/{sid}/rounds", {
        "tiplu": "JC", "winner": "Anna", "players": {p: {"maal": 4 * 10**18} for p in PLAYERS}})
    assert status == 400 and "maal" in body["error"]
    status, _headers, raw = send(server, "POST", "/api/sessions", b"[" * 2000 + b"]" * 2000,
                                 {"Content-Type": "application/json"})
    assert status == 400 and b"nests 2000 levels" in raw


def test_a_cross_site_text_plain_post_creates_nothing(server_factory: Any) -> None:
    server = server_factory("--host", "0.0.0.0", "--table-code", CODE)
    cookie = {"Cookie": f"tiplu_table_code={CODE}"}
    body = b'{"players": ["Anna", "Ben"]}'
    assert send(server, "POST", "/api/sessions", body, {**cookie, "Content-Type": "text/plain"})[0] == 415
    foreign = {**cookie, "Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}
    assert send(server, "POST", "/api/sessions", body, foreign)[0] == 403
    assert server.call("GET", "/api/sessions", headers={"X-Table-Code": CODE})[1]["sessions"] == []


def test_a_failed_upload_leaves_no_photo_on_disk(server_factory: Any, tmp_path: Path) -> None:
    server = server_factory()
    sid = server.call("POST", "/api/sessions", {"players": PLAYERS})[1]["id"]
    png = cv2.imencode(".png", np.full((60, 80, 3), 180, np.uint8))[1].tobytes()
    data, kind = multipart({"session": str(sid), "seat": "9" * 25}, png)
    status, _headers, body = send(server, "POST", "/api/detect", data, {"Content-Type": kind})
    assert status == 400 and b"seat" in body
    folder = tmp_path / "photos"
    assert not folder.exists() or os.listdir(folder) == []
    assert server.call("DELETE", f"/api/sessions/{sid}")[0] == 204


def test_behind_a_reverse_proxy_on_loopback_the_given_code_is_still_asked(server_factory: Any) -> None:
    server = server_factory("--table-code", CODE)
    assert "table code: " + CODE in "".join(server.output)
    assert server.call("GET", "/api/sessions")[0] == 403
    assert server.call("GET", "/api/sessions", headers={"X-Table-Code": CODE})[0] == 200


# --- issue 44, rows 1 and 15: slow clients, and waitress's own answers ------------------------------

def half_sent(port: int, source: str, count: int) -> list[Any]:
    """``count`` connections from ``source`` to 127.0.0.1 that each send half a request line and wait."""
    import socket
    held = []
    for _ in range(count):
        conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        conn.settimeout(5)
        conn.bind((source, 0))
        try:
            conn.connect(("127.0.0.1", port))
            conn.sendall(b"GET /api/sessions HT")
        except OSError:
            conn.close()
            continue
        held.append(conn)
    return held


def closed_by_server(held: list[Any], wait: float) -> int:
    """How many of ``held`` the server has closed within ``wait`` seconds."""
    import select
    import time
    closed: set[Any] = set()
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and len(closed) < len(held):
        readable, _, _ = select.select([c for c in held if c not in closed], [], [], 0.2)
        for conn in readable:
            try:
                if conn.recv(1024) == b"":
                    closed.add(conn)
            except OSError:
                closed.add(conn)
    return len(closed)


def test_a_hundred_half_sent_requests_do_not_keep_players_out(tmp_path: Path) -> None:
    import time
    server = Server(tmp_path / "slow.db", env={"TIPLU_CHANNEL_TIMEOUT": "3"})
    port = int(server.base.rsplit(":", 1)[1])
    held: list[Any] = []
    try:
        held = half_sent(port, "127.0.0.2", 110)
        assert len(held) == 110
        started = time.monotonic()
        status, _body = server.call("GET", "/api/sessions")
        assert status == 200 and time.monotonic() - started < 2, "a player is served at once"
        assert closed_by_server(held, 1.5) >= 110 - 24, "one address gets its share of connections, no more"
        assert closed_by_server(held, 8) == len(held), "half-sent requests are closed after the channel timeout"
    finally:
        for conn in held:
            conn.close()
        server.kill()


def test_the_answers_waitress_gives_itself_carry_the_security_headers(server_factory: Any) -> None:
    server = server_factory("--max-upload-mb", "1")
    for path, kind in (("/sessions/new", "application/x-www-form-urlencoded"), ("/api/sessions", "application/json")):
        status, headers, _body = send(server, "POST", path, b" " * 3_000_000, {"Content-Type": kind})
        assert status == 413, path
        assert "default-src 'self'" in headers["Content-Security-Policy"], path
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "same-origin"
