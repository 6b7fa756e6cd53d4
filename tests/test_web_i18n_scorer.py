"""The scorer's and the camera pipeline's texts on Nepali and Hindi pages (issue 13).

Each case sends the same request in English, Nepali and Hindi: a scorer error, a maal
line's label, a declare reason, a payment line (stored in the ledger as English and
recognised again), a house rule's adjustment and a reading's doubt. The English
answer is the scorer's own text, unchanged; the others are the catalogue's, with card
names and player names as they were. The API under ``/api/`` translates its errors
and answers data in English.
"""

from __future__ import annotations

import html
import io
import re
from typing import Any, Callable

import pytest
from flask.testing import FlaskClient

from scorer import TipluError, get_rules, parse_cards, settle_round
from scorer.maal import maal_points
from scorer.settle import PlayerRound
from vision.doubts import count_doubt
from web import i18n

LANGUAGES = ("en", "ne", "hi")

#: A nepali round with maal cards (marriage and tiplu), a seen fee, an unseen fee and kidnap.
ROUND = {"tiplu": "10H", "winner": "Anna", "finish": "melds", "players": {
    "Anna": {"seen": True, "cards": ["9H", "10H", "JH", "10H"]}, "Ben": {"seen": True, "maal": 2},
    "Carla": {"maal": 4}, "Dan": {}}}

#: A hand that finishes only if its 18th card is 9D, not 9H (tiplu 2S).
HINGED_HAND = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D 9H QC QH 5C 5D".split()


def page(client: FlaskClient, path: str, language: str, **kwargs: Any) -> str:
    method = client.post if "data" in kwargs or "json" in kwargs else client.get
    return html.unescape(method(path, headers={"Accept-Language": language}, **kwargs).get_data(as_text=True))


@pytest.fixture
def played(client: FlaskClient, make_session: Callable[..., int]) -> int:
    sid = make_session(options={"kidnap": True})
    response = client.post(f"/api/sessions/{sid}/rounds", json=ROUND)
    assert response.status_code == 201, response.get_json()
    return sid


@pytest.mark.parametrize("language, texts", [
    ("en", ["Ben pays Anna 18", "(maal difference: Anna 17, Ben 2)", "(seen fee)", "(unseen fee)",
            "marriage: 9H 10H JH = 10", "tiplu: 10H = 3",
            "Carla: 4 → 0 (kidnap: Anna takes an unseen player's maal)", "Anna: 13 → 17 (kidnap: takes Carla's maal)"]),
    ("ne", ["Ben ले Anna लाई 18 तिर्ने", "(मालको फरक: Anna 17, Ben 2)", "(सिन शुल्क)", "(अनसिन शुल्क)",
            "म्यारिज: 9H 10H JH = 10", "टिप्लु: 10H = 3",
            "Carla: 4 → 0 (किडन्याप: सिन नभएको खेलाडीको माल Anna ले लिन्छ)", "Anna: 13 → 17 (किडन्याप: Carla को माल लिन्छ)"]),
    ("hi", ["Ben से Anna को 18", "(माल का अंतर: Anna 17, Ben 2)", "(सीन शुल्क)", "(अनसीन शुल्क)",
            "मैरिज: 9H 10H JH = 10", "टिपलू: 10H = 3",
            "Carla: 4 → 0 (किडनैप: अनसीन खिलाड़ी का माल Anna को मिलता है)", "Anna: 13 → 17 (किडनैप: Carla का माल मिलता है)"]),
])
def test_a_stored_round_says_its_maal_payments_and_house_rules_in_the_page_language(
        client: FlaskClient, played: int, language: str, texts: list[str]) -> None:
    shown = re.sub(r"<[^>]+>", "", page(client, f"/sessions/{played}/rounds/1", language))
    for text in texts:
        assert text in shown, text
    if language != "en":
        for english in ("maal difference", "seen fee", "marriage:", "kidnap"):
            assert english not in shown


UNMATCHED = "2S AH 3H 7H JH 4D 6D 8D JD KD AC 6C 7C 9C 10C"


@pytest.mark.parametrize("language, verdict", [
    ("en", f"needs 5 more melds: {UNMATCHED} unmatched; the hand holds only 1 pure melds, 3 needed; tiplu checks the "
           "hand, not its history: a finish needs 3 pure melds among the 7, or 8 dublees, whichever way the player saw"),
    ("ne", f"अझै 5 सेट चाहिन्छ: {UNMATCHED} मिलेनन्; हातमा 1 शुद्ध सेट मात्र छन्, 3 चाहिन्छ; tiplu ले हात जाँच्छ, "
           "त्यसको इतिहास होइन: खेल सकाउन 7 सेटमध्ये 3 शुद्ध सेट, वा 8 डबली चाहिन्छ, खेलाडी जसरी सिन भएको भए पनि"),
    ("hi", f"अभी 5 सेट और चाहिए: {UNMATCHED} बिना मेल के; हाथ में सिर्फ़ 1 शुद्ध सेट हैं, 3 चाहिए; tiplu हाथ को "
           "जाँचता है, उसके इतिहास को नहीं: खेल पूरा करने के लिए 7 सेटों में 3 शुद्ध सेट, या 8 डबली चाहिए, "
           "खिलाड़ी चाहे जैसे भी सीन हुआ हो"),
])
def test_a_declare_reason_built_from_parts_on_the_verify_page(
        client: FlaskClient, make_session: Callable[..., int], language: str, verdict: str) -> None:
    sid = make_session()
    hand = "2S 5S 9S KS 3H 7H JH 4D 8D QD AC 6C 10C 6D 10S 9C KD 5H AH 7C JD"
    shown = page(client, f"/sessions/{sid}/verify", language, data={"tiplu": "QS", "hand": hand})
    assert shown.split('<p class="reason">')[1].split("</p>")[0] == verdict


@pytest.mark.parametrize("language, message", [
    ("en", "a declared hand has 21 cards (already discarded) or 22 (the checker picks the discard); this one has 4"),
    ("ne", "घोषणा गरिएको हातमा 21 पत्ती (पत्ती फालिसकेको) वा 22 पत्ती (फाल्ने पत्ती जाँचले आफैँ छान्छ) हुन्छ; यसमा 4 छन्"),
    ("hi", "घोषित हाथ में 21 पत्ते (पत्ता फेंक चुके) या 22 पत्ते (फेंकने वाला पत्ता जाँच खुद चुनती है) होते हैं; इसमें 4 हैं"),
])
def test_a_scorer_error_as_the_verdict_of_a_hand_that_cannot_be_checked(
        client: FlaskClient, make_session: Callable[..., int], language: str, message: str) -> None:
    sid = make_session()
    assert message in page(client, f"/sessions/{sid}/verify", language, data={"tiplu": "2C", "hand": "3S 4S 5S 6S"})


@pytest.mark.parametrize("language, field_error", [
    ("en", "Anna's cards: 'QS' appears 4 times; 3 decks have 3"),
    ("ne", "Anna का पत्ती: 'QS' 4 पटक आयो; 3 गड्डीमा 3 वटा मात्र हुन्छ"),
    ("hi", "Anna के पत्ते: 'QS' 4 बार आया; 3 गड्डियों में 3 ही होते हैं"),
])
def test_a_scorer_error_under_its_field_of_the_round_form(client: FlaskClient, make_session: Callable[..., int],
                                                          language: str, field_error: str) -> None:
    sid = make_session()
    shown = page(client, f"/sessions/{sid}/rounds/new", language,
                 data={"tiplu": "2C", "winner": "Anna", "p0_seen": "on", "p0_cards": "QS QS QS QS"})
    assert f'<p class="field-error" id="p0_cards-error" role="alert">{field_error}</p>' in shown


@pytest.mark.parametrize("language, error", [
    ("en", "options murder and kidnap exclude each other: turn one of them off"),
    ("ne", "विकल्प murder र kidnap सँगै चल्दैनन्: एउटा बन्द गर्नुहोस्"),
    ("hi", "विकल्प murder और kidnap साथ नहीं चल सकते: इनमें से एक बंद करें"),
])
def test_the_api_says_scorer_errors_in_the_asked_language_like_its_own(client: FlaskClient, language: str,
                                                                       error: str) -> None:
    response = client.post("/api/sessions", json={"players": ["Anna", "Ben"], "options": {"murder": True, "kidnap": True}},
                           headers={"Accept-Language": language})
    assert response.status_code == 400
    assert response.get_json() == {"error": error}


@pytest.mark.parametrize("language", ["ne", "hi"])
def test_the_api_answers_data_in_english(client: FlaskClient, played: int, language: str) -> None:
    asked = client.get(f"/api/sessions/{played}/rounds/1", headers={"Accept-Language": language}).get_json()
    english = client.get(f"/api/sessions/{played}/rounds/1").get_json()
    assert asked == english
    assert {p["reason"] for p in english["payments"]} == {
        "maal difference: Anna 17, Ben 2", "maal difference: Anna 17, Carla 0", "maal difference: Anna 17, Dan 0",
        "maal difference: Ben 2, Carla 0", "maal difference: Ben 2, Dan 0", "seen fee", "unseen fee"}


@pytest.mark.parametrize("language, doubt, verdict", [
    ("en", "the hand finishes only if this is 9D, not 9H: please check",
     "needs one more meld: 9H 5D 7D 8D unmatched"),
    ("ne", "यो 9H होइन 9D भए मात्र हात पुग्छ: जाँच्नुहोस्", "अझै एउटा सेट चाहिन्छ: 9H 5D 7D 8D मिलेनन्"),
    ("hi", "हाथ तभी पूरा होता है जब यह 9H नहीं, 9D हो: कृपया जाँचें", "एक सेट और चाहिए: 9H 5D 7D 8D बिना मेल के"),
])
def test_the_photo_checks_doubts_and_verdict_in_the_page_language(
        client: FlaskClient, make_session: Callable[..., int], language: str, doubt: str, verdict: str) -> None:
    sid = make_session()
    alternatives: list[list[str]] = [[] for _ in HINGED_HAND]
    alternatives[17] = ["9S", "9D"]
    answer = client.post(f"/sessions/{sid}/cards/check", headers={"Accept-Language": language}, json={
        "cards": HINGED_HAND, "purpose": "hand", "tiplu": "2S", "alternatives": alternatives}).get_json()
    assert [d["message"] for d in answer["doubts"]] == [doubt]
    assert answer["doubts"][0]["card"] == "9H" and answer["doubts"][0]["instead"] == "9D"
    assert answer["verdict"]["reason"].startswith(verdict)


@pytest.mark.parametrize("language, doubt", [
    ("en", "the hand reads 20 cards; a declared hand has 21 or 22: a card was missed, count the cards in each meld"),
    ("ne", "हातमा 20 पत्ती पढियो; घोषणा गरिएको हातमा 21 वा 22 पत्ती हुन्छ: एउटा पत्ती छुट्यो, हरेक सेटका पत्ती गन्नुहोस्"),
    ("hi", "हाथ में 20 पत्ते पढ़े गए; घोषित हाथ में 21 या 22 पत्ते होते हैं: एक पत्ता छूट गया, हर सेट के पत्ते गिनें"),
])
def test_a_count_doubt_in_the_page_language(client: FlaskClient, make_session: Callable[..., int], language: str,
                                           doubt: str) -> None:
    sid = make_session()
    answer = client.post(f"/sessions/{sid}/cards/check", headers={"Accept-Language": language}, json={
        "cards": HINGED_HAND[:20], "purpose": "hand", "tiplu": "2S"}).get_json()
    assert [d["message"] for d in answer["doubts"]] == [doubt]


@pytest.mark.parametrize("language, labels", [
    ("en", ["marriage", "tiplu"]), ("ne", ["म्यारिज", "टिप्लु"]), ("hi", ["मैरिज", "टिपलू"])])
def test_the_round_forms_live_preview_labels_maal_in_the_page_language(
        client: FlaskClient, make_session: Callable[..., int], language: str, labels: list[str]) -> None:
    sid = make_session()
    answer = client.post(f"/sessions/{sid}/rounds/preview", headers={"Accept-Language": language},
                         data={"tiplu": "10H", "winner": "Anna", "p0_seen": "on", "p0_cards": "9H 10H JH 10H"}).get_json()
    anna = answer["round"]["players"]["Anna"]
    assert [item["label"] for item in anna["maal_items"]] == labels
    assert [item["cards"] for item in anna["maal_items"]] == [["9H", "10H", "JH"], ["10H"]]


def test_an_image_refusal_in_the_page_language(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    for language, error in (("en", "this is a GIF file, not a JPEG, PNG or WebP image; send a photo from the camera"),
                            ("hi", "यह GIF फ़ाइल है, JPEG, PNG या WebP तस्वीर नहीं; कैमरे से ली गई फ़ोटो भेजें")):
        response = client.post(f"/sessions/{sid}/photos", headers={"Accept-Language": language},
                               data={"image": (io.BytesIO(b"GIF89a" + bytes(64)), "x.gif")},
                               content_type="multipart/form-data")
        assert response.status_code == 400 and response.get_json() == {"error": error}


def test_every_scorer_text_is_a_message_whose_english_is_unchanged(app: Any) -> None:
    """Outside a request and in English, translate() gives the scorer's English byte for byte."""
    rules = get_rules()
    items = maal_points(parse_cards("9H 10H JH 10H 2H 2H"), rules, parse_cards("10H")[0]).items
    settlement = settle_round(get_rules("nepali", {"murder": True}), [
        PlayerRound("Anna", maal=13, seen=True), PlayerRound("Ben", maal=4)], winner="Anna")
    with pytest.raises(TipluError) as error:
        get_rules("nepali", {"players_max": 7})
    texts = [*(i.label for i in items), *(p.reason for p in settlement.payments),
             *(a.reason for a in settlement.adjustments), error.value, count_doubt(20, (21, 22)).message]
    with app.test_request_context(headers={"Accept-Language": "en"}):
        assert [i18n.translate(t) for t in texts] == [str(t) for t in texts]
    assert [i18n.translate(t) for t in texts] == [str(t) for t in texts]
    with app.test_request_context(headers={"Accept-Language": "ne"}):
        assert i18n.translate(error.value) == "विकल्प players_max: '7', 5, 6 मध्ये होइन"
        assert i18n.translate("poplu ×2") == "पोप्लु ×2" and i18n.translate("Anna") == "Anna"


@pytest.mark.parametrize("language, error", [
    ("en", "tiplu: '1X': unknown suit 'X' (use S, H, D, C or ♠ ♥ ♦ ♣)"),
    ("ne", "टिप्लु: '1X': 'X' कुनै रङ होइन (S, H, D, C वा ♠ ♥ ♦ ♣ लेख्नुहोस्)"),
])
def test_a_card_error_names_its_field_in_the_page_language(client: FlaskClient, make_session: Callable[..., int],
                                                           language: str, error: str) -> None:
    sid = make_session()
    shown = page(client, f"/sessions/{sid}/verify", language, data={"tiplu": "1X", "hand": "3S 4S 5S"})
    assert f'<p class="error" role="alert" id="form-error">{error}</p>' in shown
