"""The photo review on a 360 px phone, light and dark: readable, in the order a player reads it, tappable.

Headless Debian Chromium through Playwright against a real ``tiplu serve`` and the shipped
detector, on the declared-hand sample photo. Screenshots go to ``tests/screenshots/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from test_browser import live_url, page, tap_cards  # noqa: F401  (fixtures)
from test_browser_table import SHOTS
from test_photos import SAMPLES
from test_pipeline import EXPECTED
from web_support import CHROMIUM

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")]

#: Every visible element that holds text of its own in ``root``: its text, colour and the colour behind it
#: (the nearest ancestor's opaque background), with the WCAG contrast ratio between the two.
CONTRAST = """(root) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
                                      .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const behind = (el) => { for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor); if (c.length === 3 || c[3] > 0.5) return c; }
    return rgb(getComputedStyle(document.body).backgroundColor); };
  const found = [];
  document.querySelectorAll(root + ' *').forEach((el) => {
    if (el.closest('svg')) return;
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
    const box = el.getBoundingClientRect();
    if (!own || !box.width || !box.height || getComputedStyle(el).visibility === 'hidden') return;
    const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(behind(el))];
    found.push([el.textContent.trim().slice(0, 40), (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)]);
  });
  return found;
}"""


def open_review(page: Any, base: str, scheme: str, hinge: bool = False) -> None:  # noqa: F811
    """A 3-player session's Check-a-hand page with the declared hand photographed, in ``scheme``.

    With ``hinge``, the first answer of the check also names the first doubtful card as the one the
    verdict hangs on (as the scorer does when an alternative flips it); later answers are the server's.
    """
    page.emulate_media(color_scheme=scheme)
    page.request.post(base + "/api/sessions", data={"players": ["Anna", "Ben", "Carla"]})
    sid = len(page.request.get(base + "/api/sessions").json())
    if hinge:
        answers: list[int] = []

        def named(route: Any) -> None:
            response = route.fetch()
            body = response.json()
            sent = json.loads(route.request.post_data)
            doubtful = [i for i, alternatives in enumerate(sent["alternatives"]) if alternatives]
            if not answers and doubtful and not any(d["kind"] == "verdict_hinges" for d in body["doubts"]):
                i = doubtful[0]
                body["doubts"].insert(0, {"kind": "verdict_hinges", "cards": [i], "card": sent["cards"][i],
                                          "instead": sent["alternatives"][i][0],
                                          "message": f"the hand finishes only if this is {sent['cards'][i]}, "
                                                     f"not {sent['alternatives'][i][0]}: please check"})
            answers.append(1)
            route.fulfill(response=response, json=body)
        page.route("**/check", named)
    page.goto(f"{base}/sessions/{sid}/verify")
    tap_cards(page, "tiplu", [EXPECTED["declared_hand.jpg"]["tiplu"]])
    page.locator('.photo-tools[data-target="hand"] .photo-input').set_input_files(str(SAMPLES / "declared_hand.jpg"))
    page.wait_for_selector("#photo-doubts .doubt-card")
    page.wait_for_selector("#photo-answer .verdict")
    page.wait_for_function("() => document.getElementById('photo-image').complete")


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_review_reads_in_order_and_every_text_has_contrast(page: Any, live_url: str,  # noqa: F811
                                                               scheme: str) -> None:
    open_review(page, live_url, scheme)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / f"photo-review-{scheme}.png"), full_page=False)
    texts = page.evaluate(CONTRAST, "#photo-review")
    assert any(text.startswith("✓") for text, _ratio in texts), "the confirm buttons are measured"
    low = [(text, round(ratio, 2)) for text, ratio in texts if ratio < 4.5]
    assert low == [], f"{scheme}: text under 4.5:1 in the photo review"

    grid = page.locator("#photo-grid").bounding_box()
    for above in ("#photo-answer .verdict", "#photo-doubts .doubt-head"):
        assert page.locator(above).bounding_box()["y"] < grid["y"], f"{above} stands above the card grid"
    doubtful = page.locator("#photo-doubts .doubt-card").count()
    head = page.inner_text("#photo-doubts .doubt-head")
    assert head.startswith("Check this card first" if doubtful == 1 else f"Check these {doubtful} cards first")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 360


def test_the_photo_opens_larger_at_a_tap_until_every_box_is_32_px(page: Any, live_url: str) -> None:  # noqa: F811
    open_review(page, live_url, "light")
    boxes = "ds => ds.map(d => { const r = d.querySelector('rect').getBoundingClientRect(); return [r.width, r.height]; })"
    page.locator("#photo-zoom").tap()
    assert page.get_attribute("#photo-zoom", "aria-pressed") == "true"
    sizes = page.locator("#photo-overlay .detection").evaluate_all(boxes)
    assert sizes and min(min(w, h) for w, h in sizes) >= 32, sizes
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 360, "the photo scrolls in its own box"
    labels = page.locator("#photo-overlay .detection text").evaluate_all(
        "ts => ts.map(t => { const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })")
    crossing = [(a, b) for i, a in enumerate(labels) for b in labels[i + 1:]
                if min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1]
    assert crossing == [], "labels on the photo run into each other"
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SHOTS / "photo-review-larger.png"))
    index = page.locator("#photo-overlay .detection").first.get_attribute("data-index")
    page.locator("#photo-overlay .detection").first.click()
    assert page.locator(f'#photo-cards .photo-card[data-index="{index}"]').get_attribute("aria-pressed") == "true"
    page.locator("#photo-zoom").tap()
    assert page.get_attribute("#photo-zoom", "aria-pressed") == "false"


def test_the_legend_names_only_what_is_drawn(page: Any, live_url: str) -> None:  # noqa: F811
    open_review(page, live_url, "light")
    page.wait_for_function("() => document.getElementById('photo-legend').textContent.length > 0")
    legend = page.inner_text("#photo-legend")
    melds = page.locator("#photo-overlay .meld-outline")
    assert ("Coloured frames" in legend) == (melds.count() > 0)
    assert melds.evaluate_all("rs => rs.filter(r => r.getAttribute('stroke-dasharray')).length") == 0, \
        "only the places to look are dashed"
    assert ("Red dashed" in legend) == (page.locator("#photo-overlay .look-here").count() > 0)
    assert ("Orange" in legend) == (page.locator("#photo-overlay .detection.uncertain").count() > 0)
    faint = page.locator("#photo-doubts .doubt-note.faint_card")
    if faint.count():
        assert page.locator("#photo-overlay .look-here").count() > 0, "the faint note points at frames drawn"


def test_after_a_wrong_tap_the_deciding_card_is_still_named(page: Any, live_url: str) -> None:  # noqa: F811
    open_review(page, live_url, "light", hinge=True)
    note = page.locator("#photo-doubts .doubt-note.verdict_hinges").first
    message = note.inner_text()
    row = page.locator("#photo-doubts .doubt-card").first
    index = row.get_attribute("data-index")
    read = page.locator(f'#photo-cards .photo-card[data-index="{index}"]').inner_text().split()[0]
    wrong = row.locator(".doubt-choice.instead").first
    assert wrong.get_attribute("data-card") in message
    wrong.tap()  # the wrong tap: the note said the card as read decides
    page.wait_for_function("(i) => document.querySelector(`#photo-cards .photo-card[data-index=\"${i}\"]`)"
                           ".classList.contains('fixed')", arg=index)
    page.wait_for_timeout(300)
    assert page.locator("#photo-doubts .doubt-note.verdict_hinges", has_text=message).count() == 1
    assert page.locator("#photo-doubts .doubt-none").count() == 0, "not 'No card is in doubt'"
    page.wait_for_selector("#photo-answer .verdict.invalid")
    assert page.locator("#photo-doubts .doubt-note.verdict_hinges", has_text=message).count() == 1
    back = page.locator(f'#photo-doubts .doubt-choice[data-index="{index}"][data-card="{read}"]')
    assert back.count() == 1, "one tap puts the card as read back"
    back.tap()
    page.wait_for_selector("#photo-answer .verdict.valid")
    assert page.locator(f'#photo-cards .photo-card[data-index="{index}"]').inner_text() == read
    # the note the wrong tap was about is gone; the server's own answer may still name other doubtful cards the
    # verdict hangs on (a small index's twin suit, say)
    assert page.locator("#photo-doubts .doubt-note.verdict_hinges", has_text=message).count() == 0


def test_the_photograph_button_shows_no_file_chooser(page: Any, live_url: str) -> None:  # noqa: F811
    page.request.post(live_url + "/api/sessions", data={"players": ["Anna", "Ben", "Carla"]})
    page.goto(live_url + "/sessions/1/verify")
    field = page.locator('.photo-tools[data-target="hand"] .photo-input')
    assert field.evaluate("f => getComputedStyle(f).display") == "none"
    button = page.locator('.photo-tools[data-target="hand"] .photo-pick').bounding_box()
    assert 44 <= button["height"] < 60, button
