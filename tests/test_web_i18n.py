"""The ``_()`` wrapper really translates: a compiled gettext catalogue changes pages and API errors."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Iterator

import pytest
from flask.testing import FlaskClient

from web import i18n

GERMAN = {"Sessions": "Partien", "send a JSON object in the request body": "sende ein JSON-Objekt",
          "Round %(n)s": "Runde %(n)s"}


def write_mo(path: Path, messages: dict[str, str]) -> None:
    """A GNU .mo file (the format msgfmt writes), built here so no tool is needed."""
    entries = sorted({"": "Content-Type: text/plain; charset=UTF-8\n", **messages}.items())
    ids = [k.encode() for k, _ in entries]
    strs = [v.encode() for _, v in entries]
    header = 7 * 4
    table = header + 16 * len(entries)
    offsets_id: list[tuple[int, int]] = []
    offsets_str: list[tuple[int, int]] = []
    blob = b""
    for data, offsets in ((ids, offsets_id), (strs, offsets_str)):
        for item in data:
            offsets.append((len(item), table + len(blob)))
            blob += item + b"\0"
    out = struct.pack("<7I", 0x950412DE, 0, len(entries), header, header + 8 * len(entries), 0, 0)
    out += b"".join(struct.pack("<2I", *o) for o in offsets_id)
    out += b"".join(struct.pack("<2I", *o) for o in offsets_str)
    path.parent.mkdir(parents=True)
    path.write_bytes(out + blob)


@pytest.fixture
def german(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    write_mo(tmp_path / "de" / "LC_MESSAGES" / f"{i18n.DOMAIN}.mo", GERMAN)
    monkeypatch.setattr(i18n, "TRANSLATIONS", tmp_path)
    i18n._catalogue.cache_clear()
    yield
    i18n._catalogue.cache_clear()


@pytest.mark.parametrize("language, sessions, body_error", [
    ("de", "Partien", "sende ein JSON-Objekt"),
    ("fr", "Sessions", "send a JSON object in the request body"),
])
def test_pages_and_errors_follow_accept_language(german: None, client: FlaskClient, language: str,
                                                 sessions: str, body_error: str) -> None:
    headers = {"Accept-Language": language}
    assert f">{sessions}</a>" in client.get("/", headers=headers).get_data(as_text=True)
    response = client.post("/api/sessions", data=b"", headers=headers)
    assert response.get_json()["error"] == body_error
    assert i18n.available_languages() == ["en", "de"]


def test_placeholders_are_filled_after_translation(german: None, app) -> None:
    with app.test_request_context(headers={"Accept-Language": "de"}):
        assert i18n._("Round %(n)s", n=4) == "Runde 4"
    assert i18n._("Round %(n)s", n=4) == "Round 4"
