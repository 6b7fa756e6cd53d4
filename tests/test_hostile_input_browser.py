"""Hostile input in headless Chromium: the table code as a phone meets it, and a cross-site form that carries the cookie."""

from __future__ import annotations

import functools
import http.server
import re
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from test_browser import page  # noqa: F401 - the page fixture
from web_support import CHROMIUM, Server

pytestmark = [pytest.mark.browser, pytest.mark.server,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")]

CODE = "52846913"


@pytest.fixture
def networked(tmp_path: Path) -> Iterator[Server]:
    """``tiplu serve --host 0.0.0.0``: every request needs the code, from this machine too."""
    server = Server(tmp_path / "net.db", "--host", "0.0.0.0", "--table-code", CODE)
    yield server
    server.kill()


@pytest.fixture
def attacker_site(tmp_path: Path, networked: Server) -> Iterator[str]:
    """Another site on the same host, another port: a page that posts a text/plain form to tiplu's API."""
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "index.html").write_text(
        f'<form id="f" method="post" enctype="text/plain" action="{networked.base}/api/sessions">'
        '<input name=\'{"players": ["Mallory", "Eve"], "title": "\' value=\'"}\'></form>'
        "<script>document.getElementById('f').submit()</script>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{site.server_address[1]}/"
    site.shutdown()


def test_a_phone_enters_the_code_once_and_the_printed_link_lets_it_in(networked: Server, page: Any) -> None:
    page.goto(networked.base + "/sessions/new")
    assert "/code" in page.url
    page.fill("input[name=code]", "11111111")
    page.click("button[type=submit]")
    assert "not the table code" in page.inner_text("main") or "not the table code" in page.content()
    page.fill("input[name=code]", CODE)
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r"/sessions/new$"))
    page.fill("input[name=player0]", "Anna")
    page.fill("input[name=player1]", "Ben")
    page.click("form button[type=submit].primary")
    page.wait_for_url(re.compile(r"/sessions/\d+$"))
    link = re.search(r"or open (\S+)", "".join(networked.output))
    assert link is not None
    fresh = page.context.browser.new_context()
    other = fresh.new_page()
    other.goto(networked.base + "/" + link.group(1).split("/", 3)[3])
    assert other.url.rstrip("/") == networked.base and "Anna" in other.content()
    fresh.close()


def test_a_cross_site_form_with_the_cookie_creates_nothing(networked: Server, attacker_site: str, page: Any) -> None:
    page.goto(f"{networked.base}/?table_code={CODE}")
    assert "/code" not in page.url, "the link set the cookie"
    page.goto(attacker_site)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    sessions = networked.call("GET", "/api/sessions", headers={"X-Table-Code": CODE})[1]["sessions"]
    assert sessions == []
    assert "error" in page.content()


def test_a_foreign_page_loading_the_link_as_images_does_not_lock_a_phone_out(networked: Server, tmp_path: Path,
                                                                              page: Any) -> None:
    folder = tmp_path / "images"
    folder.mkdir()
    images = "".join(f'<img src="{networked.base}/?table_code={n:08d}">'
                     f'<img src="{networked.base}/static/tiplu.css?table_code={n + 50:08d}">' for n in range(8))
    (folder / "index.html").write_text(f"<body>{images}</body>")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    try:
        page.goto(f"{networked.base}/?table_code={CODE}")
        assert "/code" not in page.url
        for _ in range(2):
            page.goto(f"http://127.0.0.1:{site.server_address[1]}/")
            page.wait_for_load_state("networkidle")
        answer = page.goto(networked.base + "/sessions/new")
        assert answer is not None and answer.status == 200 and "/code" not in page.url
        assert "wrong table code" not in "".join(networked.output)
    finally:
        site.shutdown()
