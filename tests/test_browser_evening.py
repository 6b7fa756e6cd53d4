"""Issue 54: a whole evening on a 360 px phone in headless Chromium, against a real ``tiplu serve``.

Rounds typed, with maal tapped as cards and with maal photographed (``sample_images/real_maal.jpg``
through the shipped model), a deletion restored from History after a round was added since,
and a form whose CSRF token went stale. Every stored payment is checked against the scorer
fed the same inputs, and no page shows a raw message. Items 1, 7 and 11 are checked on the
way; item 13 has its own short walk.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import pytest

from scorer import get_rules
from scorer.settle import PlayerRound, settle_round
from web_support import CHROMIUM, Server

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")]

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
PLAYERS = ["Hari", "Sita", "Ram", "Gita"]
#: What a family must never read: a traceback, a token's or an errno's name, a payload's field path, a script's hole.
RAW = ("Traceback", "CSRF", "csrf", "Errno", "players.", "undefined", "NaN", "[object", "None")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = Server(tmp_path / "evening.db")
    yield running
    running.kill()


def no_raw_message(page: Any) -> None:
    shown = page.inner_text("body")
    for raw in RAW:
        assert raw not in shown, f"{page.url} shows {raw!r}: {shown[:400]}"


def expected_net(winner: str, lines: dict[str, tuple[int, bool]]) -> dict[str, int]:
    """The scorer's net for a round typed as ``{name: (maal, seen)}``, the winner seen."""
    players = [PlayerRound(name, maal, seen=seen) for name, (maal, seen) in lines.items()]
    return dict(settle_round(get_rules("nepali"), players, winner, "melds").net)


def tap_tiplu(page: Any, rank: str, suit: str) -> None:
    page.locator(f'.card-grid[data-target="tiplu"] .rank[data-rank="{rank}"]').tap()
    page.locator(f'.card-grid[data-target="tiplu"] .suit[data-suit="{suit}"]').tap()


def save(page: Any, number: int) -> None:
    page.locator("#save-round").tap()
    page.wait_for_url(re.compile(rf".*/rounds/{number}(#.*)?$"))
    no_raw_message(page)


def open_more(page: Any, player: str) -> None:
    page.locator(f'.player-row[data-player="{player}"] details.more > summary').tap()


def test_a_whole_evening_pays_right_and_says_everything_in_plain_words(phone: Any, server: Server) -> None:
    status, body = server.call("POST", "/api/sessions", {"players": PLAYERS, "rules": "nepali",
                                                         "rate": {"per_point": 10, "currency": "Rs"}})
    assert status == 201, body
    sid = int(body["id"])
    form = f"{server.base}/sessions/{sid}/rounds/new"
    nets: list[dict[str, int]] = []

    # Round 1, typed. The skip link is the first Tab and lands on the form (item 11).
    phone.goto(form)
    phone.keyboard.press("Tab")
    assert phone.evaluate("document.activeElement.className") == "skip-link"
    phone.keyboard.press("Enter")
    phone.keyboard.press("Tab")
    assert phone.evaluate("!!document.activeElement.closest('#round-form')"), "one Tab after the skip link"
    assert phone.get_attribute('input[name="p1_seen"]', "aria-label") == "Sita has seen"
    assert "47 maal" in phone.inner_text("#maal-help")
    tap_tiplu(phone, "J", "C")
    phone.locator('.player-row[data-player="Hari"] .win-pick').tap()
    for seat, typed in ((1, "3"), (2, "10"), (3, "2")):
        phone.fill(f'input[name="p{seat}_maal"]', typed)
    save(phone, 1)
    nets.append(expected_net("Hari", {"Hari": (0, True), "Sita": (3, True), "Ram": (10, True), "Gita": (2, True)}))
    marker = phone.evaluate("getComputedStyle(document.querySelector('#round-payments summary'), '::before').content")
    assert marker == '"▸"', "the payment breakdown shows that it opens (item 7)"
    assert re.search(r"\w+ pays \w+ \d+ points \(Rs \d+\)", phone.inner_text("#round-payments")), "item 8"

    # Round 2, Hari's maal tapped as cards: seen is ticked and the box shows the count (item 1).
    phone.goto(form)
    tap_tiplu(phone, "J", "C")
    phone.locator('.player-row[data-player="Sita"] .win-pick').tap()
    open_more(phone, "Hari")
    phone.locator('.cards-entry[data-field="p0_cards"] .card-picker > summary').tap()
    grid = '.card-grid[data-target="p0_cards"]'
    for rank in ("10", "J", "Q"):
        phone.locator(f'{grid} .rank[data-rank="{rank}"]').tap()
        phone.locator(f'{grid} .suit[data-suit="C"]').tap()
    assert phone.locator('input[name="p0_seen"]').is_checked(), "tapped maal cards tick seen"
    phone.wait_for_function("() => document.querySelector('input[name=\"p0_maal\"]').placeholder === '10'")
    save(phone, 2)
    nets.append(expected_net("Sita", {"Hari": (10, True), "Sita": (0, True), "Ram": (0, False), "Gita": (0, False)}))

    # Round 3, Ram's maal photographed (10C 2D QC with the tiplu JC: jhiplu and poplu, 4).
    phone.goto(form)
    tap_tiplu(phone, "J", "C")
    phone.locator('.player-row[data-player="Gita"] .win-pick').tap()
    phone.fill('input[name="p0_maal"]', "1")
    open_more(phone, "Ram")
    phone.locator('.photo-tools[data-target="p2_cards"] .photo-input').set_input_files(str(SAMPLES / "real_maal.jpg"))
    phone.wait_for_selector("#photo-body", state="visible")
    assert phone.evaluate("document.activeElement.id") == "photo-review", "the review takes focus (item 11)"
    assert phone.get_attribute("#photo-review", "role") == "dialog"
    phone.wait_for_selector("#photo-answer .verdict")
    no_raw_message(phone)
    phone.locator("#photo-use").tap()
    assert sorted(phone.input_value('input[name="p2_cards"]').split()) == ["10C", "2D", "QC"]
    assert phone.locator('input[name="p2_seen"]').is_checked(), "photographed maal cards tick seen"
    save(phone, 3)
    nets.append(expected_net("Gita", {"Hari": (1, True), "Sita": (0, False), "Ram": (4, True), "Gita": (0, True)}))

    # Round 1 deleted, a round added since, then round 1 restored from History: it asks first (item 4).
    phone.on("dialog", lambda dialog: dialog.accept())
    phone.goto(f"{server.base}/sessions/{sid}/rounds/1/edit")
    phone.locator(".delete-form button").tap()
    phone.wait_for_url(re.compile(rf".*/sessions/{sid}$"))
    phone.goto(form)
    tap_tiplu(phone, "5", "D")
    phone.locator('.player-row[data-player="Ram"] .win-pick').tap()
    phone.fill('input[name="p3_maal"]', "6")
    save(phone, 3)
    fourth = expected_net("Ram", {"Hari": (0, False), "Sita": (0, False), "Ram": (0, True), "Gita": (6, True)})
    phone.goto(f"{server.base}/sessions/{sid}/history")
    phone.locator("a.restore").first.tap()
    plan = phone.inner_text("#restore-plan")
    assert "It goes back in as round 1, and the 3 rounds now numbered 1 to 3 each move down one number." in plan
    no_raw_message(phone)
    phone.locator("#restore-confirm").tap()
    phone.wait_for_url(re.compile(r".*/rounds/1$"))
    nets = [nets[0], nets[1], nets[2], fourth]

    # A stale form (the session cookie gone, so its CSRF token too): the typed round is kept, one tap sends it.
    phone.goto(form)
    tap_tiplu(phone, "J", "C")
    phone.locator('.player-row[data-player="Sita"] .win-pick').tap()
    phone.fill('input[name="p0_maal"]', "2")
    phone.fill('input[name="p3_maal"]', "5")
    phone.context.clear_cookies()
    phone.locator("#save-round").tap()
    phone.wait_for_selector("#stale-form")
    no_raw_message(phone)
    phone.locator("#resend").tap()
    phone.wait_for_url(re.compile(r".*/rounds/5$"))
    nets.append(expected_net("Sita", {"Hari": (2, True), "Sita": (0, True), "Ram": (0, False), "Gita": (5, True)}))

    status, session = server.call("GET", f"/api/sessions/{sid}")
    assert status == 200
    assert [r["net"] for r in session["rounds"]] == nets, "every round pays what the scorer says"
    totals = {name: sum(net[name] for net in nets) for name in PLAYERS}
    assert session["totals"] == totals
    for page in (f"/sessions/{sid}", f"/sessions/{sid}/history", f"/sessions/{sid}/end"):
        phone.goto(server.base + page)
        no_raw_message(phone)


def test_ticking_two_decks_sets_the_hand_size_to_13(phone: Any, server: Server) -> None:
    phone.goto(f"{server.base}/sessions/new")
    phone.locator('input[name="rules"][value="rummy"]').check()
    phone.locator('fieldset.options[data-family="rummy"] details.house-rules > summary').tap()
    size = 'select[name="opt_rummy_hand_size"]'
    assert phone.input_value(size) == "21"
    phone.locator('input[name="opt_rummy_two_decks"]').check()
    assert phone.input_value(size) == "13", "item 13: the form follows the decks, as the API does"
    phone.locator('input[name="opt_rummy_two_decks"]').uncheck()
    assert phone.input_value(size) == "21"


def test_the_photo_review_labels_do_not_overlap_and_the_larger_photo_opens_on_the_cards(
        phone: Any, server: Server, tmp_path: Path) -> None:
    """Items 9 and 10 on the sample photos: the 21 labels of ``declared_hand.jpg`` legible and the zoom
    centred on a card; ``maal_spread.jpg``'s faint spot gone once both 5D in play are read; a blank
    photo gets advice."""
    server.call("POST", "/api/sessions", {"players": ["A", "B", "C"]})
    phone.goto(f"{server.base}/sessions/1/verify")
    phone.fill("#tiplu", "5D")
    phone.locator('.photo-tools[data-target="hand"] .photo-input').set_input_files(str(SAMPLES / "declared_hand.jpg"))
    phone.wait_for_selector("#photo-answer .verdict")
    phone.wait_for_function("() => document.getElementById('photo-image').complete")
    labels, overlapping = phone.evaluate("""() => {
        const r = [...document.querySelectorAll('#photo-overlay text.label')].map(t => t.getBoundingClientRect());
        let n = 0;
        for (let i = 0; i < r.length; i++) for (let j = i + 1; j < r.length; j++) {
            const a = r[i], b = r[j];
            if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) n++;
        }
        return [r.length, n]; }""")
    assert labels >= 18 and overlapping == 0, f"{overlapping} pairs of the {labels} labels overlap"
    phone.locator("#photo-zoom").tap()
    centred = phone.evaluate("""() => {
        const view = document.getElementById('photo-scroll').getBoundingClientRect();
        const first = document.querySelector('#photo-overlay g.detection.uncertain rect')
                      || document.querySelector('#photo-overlay g.detection rect');
        const box = first.getBoundingClientRect();
        const x = (box.left + box.right) / 2, y = (box.top + box.bottom) / 2;
        return x > view.left && x < view.right && y > view.top && y < view.bottom; }""")
    assert centred, "the larger photo opens on the first card to check, not on the cloth"

    phone.locator("#photo-cancel").tap()

    phone.goto(f"{server.base}/sessions/1/rounds/new")
    phone.fill("#tiplu", "5D")
    open_more(phone, "A")
    phone.locator('.photo-tools[data-target="p0_cards"] .photo-input').set_input_files(str(SAMPLES / "maal_spread.jpg"))
    phone.wait_for_selector("#photo-answer .verdict")
    assert phone.locator("#photo-overlay .look-here").count() == 0, "the count of 5D is met: no faint frame"
    assert phone.locator("#photo-doubts .doubt-note.faint_card").count() == 0
    phone.locator("#photo-cancel").tap()

    import cv2
    import numpy as np
    blank = tmp_path / "blank.jpg"
    cv2.imwrite(str(blank), np.full((480, 640, 3), 90, np.uint8))
    open_more(phone, "B")
    phone.locator('.photo-tools[data-target="p1_cards"] .photo-input').set_input_files(str(blank))
    phone.wait_for_function("() => document.getElementById('photo-status').textContent.includes('No card was found')")
    assert "photograph them from above" in phone.inner_text("#photo-status")
