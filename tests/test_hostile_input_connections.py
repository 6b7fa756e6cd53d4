"""Issue 55 against a real ``tiplu serve`` process: broken request lines, trickling clients, many addresses.

Every socket here talks to 127.0.0.1 from addresses in 127.0.0.0/8 (Linux answers them all
on loopback); counts and times are bounded so the file runs in well under a minute.
"""

from __future__ import annotations

import select
import socket
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from web_support import Server

pytestmark = pytest.mark.server

#: Request lines and headers waitress cannot parse (issue 55 row 1).
BROKEN_REQUESTS = [
    b"get / HTTP/1.1\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nno colon here\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: a\x00b\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost : 127.0.0.1\r\n\r\n",
    b"GET /a b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -1\r\n\r\n",
]


def port_of(server: Server) -> int:
    return int(server.base.rsplit(":", 1)[1])


def connect(port: int, source: str = "127.0.0.1", timeout: float = 5) -> socket.socket:
    conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    conn.bind((source, 0))
    conn.connect(("127.0.0.1", port))
    return conn


def answer_and_close(conn: socket.socket, wait: float = 3) -> tuple[bytes, bool]:
    """Everything the server sends within ``wait`` seconds, and whether it closed the socket then."""
    data = b""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        readable, _, _ = select.select([conn], [], [], 0.1)
        if not readable:
            continue
        try:
            chunk = conn.recv(65536)
        except OSError:
            return data, True
        if not chunk:
            return data, True
        data += chunk
    return data, False


@pytest.fixture
def open_server(tmp_path: Path) -> Iterator[Server]:
    server = Server(tmp_path / "third.db", env={"TIPLU_REQUEST_SECONDS": "3"})
    yield server
    server.kill()


@pytest.mark.parametrize("raw", BROKEN_REQUESTS)
def test_a_request_line_waitress_cannot_parse_gets_400_and_a_closed_socket(open_server: Server, raw: bytes) -> None:
    conn = connect(port_of(open_server))
    try:
        conn.sendall(raw)
        data, closed = answer_and_close(conn)
    finally:
        conn.close()
    assert data.startswith(b"HTTP/1.") and b" 400 " in data.split(b"\r\n", 1)[0], data[:200]
    assert closed, "the connection is closed after the 400"
    assert b"Traceback" not in data


def test_players_are_served_through_many_broken_requests_from_many_addresses(open_server: Server) -> None:
    port = port_of(open_server)
    answered = 0
    for n in range(264):
        conn = connect(port, f"127.0.{n % 11 + 1}.{n // 11 % 200 + 2}")
        try:
            conn.sendall(BROKEN_REQUESTS[n % len(BROKEN_REQUESTS)])
            data, closed = answer_and_close(conn)
            answered += data.startswith(b"HTTP/1.") and closed
        finally:
            conn.close()
        if n % 66 == 0:
            started = time.monotonic()
            assert open_server.call("GET", "/api/sessions")[0] == 200 and time.monotonic() - started < 2
    assert answered == 264
    assert "Traceback" not in "".join(open_server.output)


def trickle(socks: list[socket.socket]) -> int:
    """One more byte of a never-ending header on each socket still open; how many took it."""
    alive = 0
    for conn in socks:
        try:
            conn.send(b"X")
            alive += 1
        except OSError:
            pass
    return alive


def test_a_trickle_from_twelve_addresses_keeps_no_player_waiting(open_server: Server) -> None:
    port = port_of(open_server)
    socks: list[Any] = []
    try:
        for address in range(12):
            for _ in range(24):
                conn = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                conn.setblocking(False)
                conn.bind((f"127.0.{address + 1}.9", 0))
                conn.connect_ex(("127.0.0.1", port))
                socks.append(conn)
        time.sleep(0.5)
        trickle(socks)
        for _ in range(3):
            started = time.monotonic()
            status, _body = open_server.call("GET", "/api/sessions")
            assert status == 200 and time.monotonic() - started < 2, "a player is answered within 2 s"
            time.sleep(1)
            trickle(socks)
        held = [conn for conn in socks if answer_and_close(conn, 0.01)[1] is False]
        assert len(held) <= 12 * 8, "at most 8 connections from each address"
        time.sleep(3)
        trickle(socks)
        still = [conn for conn in socks if answer_and_close(conn, 0.05)[1] is False]
        assert still == [], f"{len(still)} trickling connections outlived the request deadline"
    finally:
        for conn in socks:
            conn.close()


# --- row 9: a full disk ------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 6 MB file system (tmpfs), mounted for this test and unmounted after it; needs root."""
    import os
    import subprocess
    folder = tmp_path / "small-disk"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte; the file that does it."""
    filler = folder / "filler"
    with open(filler, "wb") as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_answers_507_for_writes_and_reads_go_on(small_disk: Path) -> None:
    import cv2
    import numpy as np
    from web_support import PLAYERS, multipart, nepali_round
    server = Server(small_disk / "ledger.db")
    try:
        sid = server.call("POST", "/api/sessions", {"players": PLAYERS})[1]["id"]
        assert server.call("POST", f"/api/sessions/{sid}/rounds", nepali_round())[0] == 201
        png = cv2.imencode(".png", np.full((60, 80, 3), 180, np.uint8))[1].tobytes()
        import urllib.error
        import urllib.request
        data, kind = multipart({"session": str(sid)}, png)
        request = urllib.request.Request(server.base + "/api/detect", data=data, headers={"Content-Type": kind})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 507 and b"nearly full" in refused.value.read(), "photos stop early"
        filler = fill(small_disk)
        for method, path, body in (("POST", f"/api/sessions/{sid}/rounds", nepali_round()),
                                   ("POST", "/api/sessions", {"players": PLAYERS})):
            status, answer = server.call(method, path, body)
            assert status == 507 and "disk is full" in answer["error"], (path, status, answer)
        for path in ("/api/sessions", f"/api/sessions/{sid}", f"/api/sessions/{sid}/rounds/1"):
            assert server.call("GET", path)[0] == 200, f"{path} is read on a full disk"
        with urllib.request.urlopen(server.base + f"/sessions/{sid}", timeout=30) as page:
            assert page.status == 200
        import http.cookiejar
        import re
        import urllib.parse
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with browser.open(server.base + f"/sessions/{sid}/rounds/new", timeout=30) as page:
            token = re.search(r'name="csrf_token" value="([^"]+)"', page.read().decode())
        assert token, "the round form carries its CSRF token"
        fields = {"csrf_token": token.group(1), "winner": "Anna", "tiplu": "JC", "finish": "melds",
                  **{f"p{seat}_maal": "1" for seat in range(4)}, **{f"p{seat}_seen": "on" for seat in range(4)}}
        form = urllib.request.Request(server.base + f"/sessions/{sid}/rounds/new", method="POST",
                                      data=urllib.parse.urlencode(fields).encode(),
                                      headers={"Content-Type": "application/x-www-form-urlencoded",
                                               "Origin": server.base})
        with pytest.raises(urllib.error.HTTPError) as page_refused:
            browser.open(form, timeout=30)
        assert page_refused.value.code == 507 and b"disk is full" in page_refused.value.read()
        filler.unlink()
        assert server.call("POST", f"/api/sessions/{sid}/rounds", nepali_round())[0] == 201, "room again: saved"
        assert len(server.call("GET", f"/api/sessions/{sid}")[1]["rounds"]) == 2, "nothing recorded was lost"
        assert "Traceback" not in "".join(server.output)
    finally:
        server.kill()
