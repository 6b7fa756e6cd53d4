"""Nepali and Hindi through Flask-Babel: pages and errors follow Accept-Language or the footer's switch.

The catalogues are checked against a fresh extraction of every marked string, so a
new string without a translation fails here, and the committed ``.mo`` files must
match their ``.po`` sources.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path
from typing import Callable

import pytest
from flask.testing import FlaskClient

from web import i18n

pytest.importorskip("babel")
from babel.messages.mofile import read_mo  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

HERE = Path(i18n.__file__).with_name("translations")
sys.path.insert(0, str(HERE))
import update  # type: ignore[import-not-found]  # noqa: E402  (web/translations/update.py)

PLACEHOLDER = re.compile(r"%\(\w+\)[sr]")


def catalogue(language: str) -> object:
    with open(HERE / language / "LC_MESSAGES" / f"{i18n.DOMAIN}.po", "rb") as source:
        return read_po(source, locale=language)


@pytest.mark.parametrize("language, sessions, body_error", [
    ("ne", "खेलहरू", "अनुरोधको body मा JSON object पठाउनुहोस्"),
    ("hi-IN,hi;q=0.9,en;q=0.5", "खेल", "अनुरोध के body में JSON object भेजें"),
    ("fr", "Sessions", "send a JSON object in the request body"),
])
def test_pages_and_errors_follow_accept_language(client: FlaskClient, language: str, sessions: str,
                                                 body_error: str) -> None:
    headers = {"Accept-Language": language}
    page = client.get("/", headers=headers).get_data(as_text=True)
    assert f">{sessions}</a>" in page
    assert f'<html lang="{language[:2] if language != "fr" else "en"}">' in page
    response = client.post("/api/sessions", data=b"", headers=headers)
    assert response.get_json()["error"] == body_error
    assert i18n.available_languages() == ["en", "hi", "ne"]


def test_the_footer_switch_wins_over_the_phone(client: FlaskClient) -> None:
    chosen = client.get("/language/ne?next=/sessions/new", headers={"Accept-Language": "hi"})
    assert chosen.status_code == 302 and chosen.location.endswith("/sessions/new")
    page = client.get("/sessions/new", headers={"Accept-Language": "hi"}).get_data(as_text=True)
    assert '<html lang="ne">' in page and "नयाँ खेल" in page and "घरायसी नियम (सामान्य)" in page
    assert client.get("/language/xx?next=https://evil.example/").location.endswith("/")


def test_a_round_page_in_nepali_keeps_card_names(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json={"tiplu": "10H", "winner": "Anna", "finish": "melds", "players": {
        "Anna": {"seen": True, "cards": ["10H", "10H"]}, "Ben": {"seen": True, "maal": 2}, "Carla": {}, "Dan": {}}})
    page = client.get(f"/sessions/{sid}/rounds/1", headers={"Accept-Language": "ne"}).get_data(as_text=True)
    assert "राउन्ड 1" in page and "कसले कसलाई तिर्ने" in page
    assert '<span class="cardname">10H</span>' in page and "10H 10H" in page
    form = client.post(f"/sessions/{sid}/rounds/new", data={"tiplu": "1X", "winner": "Anna"},
                       headers={"Accept-Language": "hi"}).get_data(as_text=True)
    assert "'1X' पत्ता नहीं है: इसके बजाय नीचे से चुनें" in form.replace("&#39;", "'")


@pytest.mark.parametrize("language", ["ne", "hi"])
def test_every_string_is_translated_with_its_placeholders(language: str) -> None:
    wanted = {m.id for m in update.template() if m.id}
    po = catalogue(language)
    have = {m.id: m for m in po if m.id}  # type: ignore[attr-defined]
    assert sorted(map(str, wanted - set(have))) == [], "run python web/translations/update.py and translate"
    for msgid in wanted:
        message = have[msgid]
        assert message.string and not message.fuzzy, msgid
        pairs = zip(msgid, message.string) if isinstance(msgid, tuple) else [(msgid, message.string)]
        for source, translated in pairs:
            if PLACEHOLDER.search(translated) or not isinstance(msgid, tuple):
                assert sorted(PLACEHOLDER.findall(source)) == sorted(PLACEHOLDER.findall(translated)), msgid
            assert not re.search(r"\b(10|[2-9JQKA])[SHDC]\b", source) or \
                set(re.findall(r"\b(?:10|[2-9JQKA])[SHDC]\b", source)) <= set(re.findall(
                    r"\b(?:10|[2-9JQKA])[SHDC]\b", translated)), f"card names stay as they are: {msgid}"


def test_the_catalogues_are_extracted_from_the_scorer_and_vision_too() -> None:
    """scorer/ and vision/ mark their Messages with N_(); web/babel.cfg must extract them."""
    from scorer import TipluError, get_rules
    from scorer.declare import history_note
    from vision.doubts import count_doubt
    from vision.images import decode_image
    wanted = {m.id for m in update.template() if m.id}
    assert set(i18n.STORED_TEXTS) <= wanted
    raised = []
    for fail in (lambda: get_rules("poker"), lambda: decode_image(b"")):
        with pytest.raises(TipluError) as error:
            fail()
        raised.append(error.value.message.template)
    doubt = count_doubt(20, (21, 22))
    assert doubt is not None
    assert {*raised, doubt.message.template, history_note(get_rules()).template} <= wanted


@pytest.mark.parametrize("language", ["ne", "hi"])
def test_the_committed_mo_matches_its_po(language: str) -> None:
    po = catalogue(language)
    with open(HERE / language / "LC_MESSAGES" / f"{i18n.DOMAIN}.mo", "rb") as compiled:
        mo = read_mo(compiled)
    def strings(messages: object) -> dict[object, object]:
        def plain(value: object) -> object:
            return tuple(value) if isinstance(value, (list, tuple)) else value
        return {plain(m.id): plain(m.string) for m in messages if m.id}  # type: ignore[attr-defined]
    assert strings(mo) == strings(po)
    assert any(m.user_comments for m in po), "uncertain wording is marked for a reviewer"  # type: ignore[attr-defined]


def test_placeholders_are_filled_after_translation(client: FlaskClient) -> None:
    with client.application.test_request_context(headers={"Accept-Language": "ne"}):
        assert i18n._("Round %(n)s", n=4) == "राउन्ड 4"
        assert i18n.ngettext("%(n)s round", "%(n)s rounds", 3) == "3 राउन्ड"
    assert i18n._("Round %(n)s", n=4) == "Round 4"
