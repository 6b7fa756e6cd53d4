"""Headless Chromium (Debian's /usr/bin/chromium via Playwright): the pages as a phone uses them.

Set ``TIPLU_SCREENSHOTS=/some/dir`` to keep the 360 px screenshots for a look.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from scorer.payments import net_pairs, read_settlement
from web_support import CHROMIUM, PHONE, Server, phone_page


pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")]


@pytest.fixture
def live_url(tmp_path: Path) -> Iterator[str]:
    """The real app (CSRF on) as a ``tiplu serve`` process."""
    server = Server(tmp_path / "browser.db")
    yield server.base
    server.kill()


@pytest.fixture
def page() -> Iterator[Any]:
    with phone_page() as tab:
        yield tab


def check_fits(page: Any, tmp_path: Path, name: str) -> None:
    """Screenshot at 360 px and check nothing makes the page scroll sideways."""
    shot = tmp_path / f"{name}.png"
    page.screenshot(path=str(shot), full_page=True)
    keep = os.environ.get("TIPLU_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / shot.name)
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= PHONE["width"], f"{name}: the page is {width} px wide"


def tap_cards(page: Any, field: str, cards: list[str]) -> None:
    entry = page.locator(f'.cards-entry[data-field="{field}"]')
    row = page.locator(f'.player-row:has(.cards-entry[data-field="{field}"]) details.more')
    if row.count() and not row.evaluate("d => d.open"):
        row.locator("> summary").click()
    details = entry.locator("details")
    if not details.evaluate("d => d.open"):
        entry.locator("summary").click()
    for card in cards:
        if card == "JOKER":
            entry.locator('.card[data-card="JOKER"]').click()
        else:
            entry.locator(f'.rank[data-rank="{card[:-1]}"]').click()
            entry.locator(f'.suit[data-suit="{card[-1]}"]').click()


def photograph_into_round(page: Any, round_url: str, photo: Path) -> None:
    """Open a new round (tiplu JC, Anna won, seats 0-2 seen) and photograph Ben's maal cards; wait for the review."""
    page.goto(round_url)
    tap_cards(page, "tiplu", ["JC"])
    page.locator('input[name="winner"][value="Anna"]').check()
    for seat in (0, 1, 2):
        page.locator(f'input[name="p{seat}_seen"]').check()
    page.locator('.photo-tools[data-target="p1_cards"] .photo-input').set_input_files(str(photo))
    page.wait_for_selector("#photo-body", state="visible")
    page.wait_for_function("() => document.getElementById('photo-image').complete")


def enter_round(page: Any, tiplu: str, winner: str, seen: list[int], maal: dict[int, str],
                cards: dict[int, list[str]]) -> None:
    tap_cards(page, "tiplu", [tiplu])
    page.locator(f'input[name="winner"][value="{winner}"]').check()
    for seat in range(4):
        box = page.locator(f'input[name="p{seat}_seen"]')
        box.set_checked(seat in seen)
    for seat, value in maal.items():
        page.fill(f'input[name="p{seat}_maal"]', value)
    for seat, faces in cards.items():
        page.fill(f'input[name="p{seat}_maal"]', "")
        tap_cards(page, f"p{seat}_cards", faces)


def api(page: Any, base: str, path: str) -> Any:
    return page.request.get(base + path).json()


def test_a_session_on_a_phone(page: Any, live_url: str, tmp_path: Path) -> None:
    page.goto(live_url + "/sessions/new")
    check_fits(page, tmp_path, "01-new-session")
    for seat, name in enumerate(["Anna", "Ben", "Carla", "Dan"]):
        page.fill(f'input[name="player{seat}"]', name)
    assert page.locator('fieldset.options[data-family="rummy"]').is_hidden()
    page.click("text=Start session")
    page.wait_for_url("**/sessions/1")
    page.click("#new-round")
    page.wait_for_url("**/rounds/new")

    enter_round(page, "JC", "Anna", seen=[0, 1, 2], maal={0: "5", 2: "10", 3: "3"}, cards={1: ["10C", "JC", "QC"]})
    assert page.input_value('input[name="p1_cards"]') == "10C JC QC"
    assert page.locator('.card-grid[data-target="tiplu"] .rank[data-rank="J"]').get_attribute("aria-pressed") == "true"
    assert page.locator('.card-grid[data-target="tiplu"] .suit[data-suit="C"]').get_attribute("aria-pressed") == "true"
    page.wait_for_function("() => !document.querySelector('#preview-net li .points').textContent.includes('–')")
    page.wait_for_function("() => document.querySelector('.line-preview[data-player=\"Ben\"]').textContent.length")
    preview = page.locator('.line-preview[data-player="Ben"]').inner_text()
    check_fits(page, tmp_path, "02-round-entry")
    page.click("#save-round")
    page.wait_for_url("**/sessions/1/rounds/1")
    first = api(page, live_url, "/api/sessions/1/rounds/1")
    assert str(first["players"]["Ben"]["maal"]) in preview
    pairs = net_pairs(read_settlement(first).payments)
    assert page.locator("#round-payments > li").count() == len(pairs) < len(first["payments"])
    assert page.locator("#round-payments > li summary").all_inner_texts() == [
        f"{line.payer} pays {line.payee} {line.points}" for line in pairs]
    check_fits(page, tmp_path, "03-round-result")

    page.click("text=Next round")
    page.wait_for_url("**/rounds/new")
    enter_round(page, "5H", "Carla", seen=[0, 2, 3], maal={0: "2", 1: "0", 3: "7"}, cards={2: ["4H", "5H", "6H", "6H"]})
    page.click("#save-round")
    page.wait_for_url("**/sessions/1/rounds/2")

    page.goto(live_url + "/sessions/1/rounds/1/edit")
    assert page.input_value('input[name="p1_cards"]') == "10C JC QC"
    page.locator('input[name="winner"][value="Carla"]').check()
    page.click("#save-round")
    page.wait_for_url("**/sessions/1/rounds/1")
    assert "recomputed" in page.inner_text("main")

    page.goto(live_url + "/sessions/1")
    session = api(page, live_url, "/api/sessions/1")
    assert session["rounds"][0]["winner"] == "Carla"
    assert session["totals"] == {p: sum(r["net"][p] for r in session["rounds"]) for p in session["players"]}
    for name, total in session["totals"].items():
        assert page.inner_text(f'.standings .total[data-player="{name}"]') == str(total)
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('totals-chart'))")
    datasets = page.evaluate("Chart.getChart(document.getElementById('totals-chart')).data.datasets"
                             ".map(d => [d.label, d.data])")
    assert datasets == [[name, [0] + [r["totals"][name] for r in session["rounds"]]]
                        for name in session["players"]]
    painted = page.evaluate("""() => {
        const c = document.getElementById('totals-chart');
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
        return n; }""")
    assert painted > 500, "the chart drew something"
    check_fits(page, tmp_path, "04-ledger")

    page.goto(live_url + "/sessions/1/history")
    check_fits(page, tmp_path, "05-history")
    page.goto(live_url + "/sessions/1/end")
    check_fits(page, tmp_path, "06-end")


def test_a_laptop_sees_the_same_ledger(page: Any, live_url: str, tmp_path: Path) -> None:
    page.request.post(live_url + "/api/sessions", data={"players": ["Anna", "Ben", "Carla"], "rules": "rummy"})
    page.request.post(live_url + "/api/sessions/1/rounds", data={
        "turned": "7D", "winner": "Anna", "players": {"Anna": {}, "Ben": {"penalty": 20}, "Carla": {"penalty": 7}}})
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(live_url + "/sessions/1")
    page.wait_for_function("() => window.Chart && Chart.getChart(document.getElementById('totals-chart'))")
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 1280
    page.goto(live_url + "/sessions/1/rounds/new")
    assert page.locator('input[name="turned"]').count() == 1
    page.screenshot(path=str(tmp_path / "07-laptop-rummy.png"), full_page=True)
