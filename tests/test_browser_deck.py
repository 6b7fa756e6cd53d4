"""Teach tiplu a deck on a 360 px phone, play a session with it, correct photos, improve the deck, remove it.

Headless Debian Chromium through Playwright against a real ``tiplu serve`` process, a
real SQLite file and the shipped model as the starting point. The suit photos are
composed from a held-out design as in ``test_enrol.py`` (``web_support``); learning runs
1 epoch on 2 crops per corner (``TIPLU_DECK_EPOCHS``, ``TIPLU_DECK_COPIES``) so the walk
stays quick, and still shows the bar move through the steps (each photo read, each card's crops,
the learning); how well a deck is learnt is measured in the model card.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from test_browser import check_fits, photograph_into_round, tap_cards
from web_support import CHROMIUM, Server, deck_job_shown, phone_page, suit_photos, write_suit_photos

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")]

SAMPLE = Path(__file__).resolve().parent.parent / "sample_images" / "declared_hand.jpg"
LEARNING = 240_000  # ms: a tiny enrolment takes about 15 s alone on 2 cores; CI runs beside other jobs


def doubt_at_least_one(model: Path, photo: Path) -> None:
    """Make the deck's doubt score mark the card of ``photo`` it doubts most, where it marks none.

    Why: the walk taps a doubtful card, and one epoch of learning leaves the hand's doubts to
    chance (the base model's level marks one card or none). The level is the model's own
    setting in ``model.json``; the reading that applies it is the real one, in the server.
    """
    from vision.detector import load_detector
    from vision.doubt_score import feature_rows
    from vision.images import read_image
    from vision.pipeline import read_photo

    detector = load_detector(model)
    reading = read_photo(read_image(photo), detector)
    score = detector.calibration.score
    assert score is not None and reading.cards
    if reading.uncertain:
        return
    level = max(score.probability(row) for row in feature_rows(reading.corners, reading.cards))
    info = json.loads((model / "model.json").read_text())
    info["calibration"]["doubt_score"]["flag_above"] = int(level * 1e6) / 1e6
    (model / "model.json").write_text(json.dumps(info, indent=2) + "\n")


def watch_progress(page: Any, timeout: float = LEARNING / 1000) -> list[tuple[str, float]]:
    """The step messages and bar values the page shows while a job runs, as a family would see them
    (polled every 0.1 s until the page reloads with the job done)."""
    seen: list[tuple[str, float]] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = deck_job_shown(page)
        if shown is None or shown[0] != "running":
            return seen
        if not seen or seen[-1] != (shown[1], shown[2]):
            seen.append((shown[1], shown[2]))
        time.sleep(0.1)
    return seen


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    server = Server(tmp_path / "deck.db", env={"TIPLU_DECK_EPOCHS": "1", "TIPLU_DECK_COPIES": "2",
                                                   "TIPLU_DECK_CALIBRATION_SCENES": "0"})  # the walk taps the
    # base calibration's doubts (thresholds chosen on 1 scene may doubt nothing); recalibration: test_enrol.py
    yield server, tmp_path
    server.kill()


def test_teach_a_deck_use_it_correct_a_photo_and_improve(served: tuple[Server, Path], tmp_path: Path) -> None:
    server, folder = served
    base = server.base
    photos = write_suit_photos(tmp_path / "suits", suit_photos())
    with phone_page() as page:
        page.goto(base + "/")
        page.click("#decks-link")
        page.wait_for_url("**/decks")
        page.fill('input[name="title"]', "Grandma")
        for field, photo in zip(("spades", "hearts", "diamonds", "clubs"), photos):
            page.locator(f'input[name="{field}"]').set_input_files(str(photo))
        check_fits(page, tmp_path, "21-teach-a-deck")
        page.click("#teach-deck")
        page.wait_for_selector('#deck-job[data-state="running"]')
        check_fits(page, tmp_path, "22-learning")
        moves = watch_progress(page)
        assert len({m for m, _ in moves}) >= 2 and len({v for _, v in moves}) >= 2, f"the progress moves: {moves}"
        assert [v for _, v in moves] == sorted(v for _, v in moves), f"the bar never goes back: {moves}"
        assert any("%" in m for m, _ in moves), f"each step says how much of it is done: {moves}"
        page.wait_for_selector('#deck-job[data-state="done"]', timeout=LEARNING)
        assert page.locator("#deck-progress").evaluate("bar => bar.value") == 1
        assert page.inner_text("#deck-job-message").startswith("Learnt Grandma from ")
        assert page.locator('.deck[data-deck="grandma"]').count() == 1
        assert (folder / "decks" / "grandma" / "v1" / "corner_classifier.onnx").is_file()
        doubt_at_least_one(folder / "decks" / "grandma" / "v1", SAMPLE)

        page.goto(base + "/sessions/new")
        for seat, name in enumerate(["Anna", "Ben", "Carla", "Dan"]):
            page.fill(f'input[name="player{seat}"]', name)
        page.locator('input[name="deck"][value="grandma"]').check()
        check_fits(page, tmp_path, "23-session-deck")
        page.click("text=Start session")
        page.wait_for_url("**/sessions/1")
        assert page.request.get(base + "/api/sessions/1").json()["deck"] == "grandma"

        photograph_into_round(page, base + "/sessions/1/rounds/new", SAMPLE)
        doubtful = page.locator("#photo-doubts .doubt-card")
        assert doubtful.count() >= 1, "the enrolled model doubts some card of the declared hand"
        confirmed = int(doubtful.first.get_attribute("data-index"))
        confirmed_card = doubtful.first.locator(".doubt-choice.confirm").get_attribute("data-card")
        doubtful.first.locator(".doubt-choice.confirm").click()
        sure = page.locator("#photo-cards .photo-card:not(.uncertain):not(.fixed)").first
        changed = int(sure.get_attribute("data-index"))
        new_card = "KS" if sure.inner_text() != "KS" else "QS"
        sure.click()
        page.locator(f'#photo-grid .card[data-card="{new_card}"]').click()
        assert page.locator(f'#photo-cards .photo-card[data-index="{changed}"]').inner_text() == new_card
        check_fits(page, tmp_path, "24-corrected")
        page.click("#photo-use")
        page.click("#save-round")
        page.wait_for_url("**/sessions/1/rounds/1")

        ledger = sqlite3.connect(folder / "deck.db")
        rows = ledger.execute("SELECT photo_id, position, deck, card, file FROM corrections ORDER BY id").fetchall()
        assert {(r[1], r[3]) for r in rows} == {(confirmed, confirmed_card), (changed, new_card)}
        assert {r[2] for r in rows} == {"grandma"}, "kept for the deck that read the photo"
        for row in rows:
            kept = folder / "photos" / row[4]
            assert kept.is_file() and kept.parent == folder / "photos" / row[0] / "corrections"
            assert kept.name.startswith(row[3] + "_") and kept.suffix == ".png"

        page.goto(base + "/decks")
        assert "2 corrections kept" in page.inner_text('.deck[data-deck="grandma"]')
        page.locator('.deck[data-deck="grandma"] button.improve').click()
        page.wait_for_selector('#deck-job[data-state="done"]', timeout=LEARNING)
        assert "improved from 2 corrections: version 2 is in use" in page.inner_text("#deck-job-message")
        deck = json.loads((folder / "decks" / "grandma" / "deck.json").read_text())
        assert deck["current"] == "v2" and deck["versions"] == ["v1", "v2"]
        model = json.loads((folder / "decks" / "grandma" / "v2" / "model.json").read_text())
        assert model["enrolled"]["corrected_crops"] == len(rows) and model["metrics"]["version"].endswith("+enrolled+corrected")
        check_fits(page, tmp_path, "25-improved")

        page.goto(base + "/sessions/1/verify")  # "Check a hand" keeps its review's taps too, for the deck
        tap_cards(page, "tiplu", ["JC"])
        page.locator('.photo-tools[data-target="hand"] .photo-input').set_input_files(str(SAMPLE))
        page.wait_for_selector("#photo-body", state="visible")
        tapped = page.locator("#photo-cards .photo-card").first
        tapped_index = int(tapped.get_attribute("data-index"))
        tapped_card = "KS" if tapped.inner_text() != "KS" else "QS"
        tapped.click()
        page.locator(f'#photo-grid .card[data-card="{tapped_card}"]').click()
        page.click("#photo-use")
        page.click("#check-hand")
        page.wait_for_selector("#verdict")
        everything = "SELECT photo_id, position, deck, card, file FROM corrections ORDER BY id"
        checked = [r for r in ledger.execute(everything).fetchall() if r not in rows]
        assert {(r[1], r[2], r[3]) for r in checked} == {(tapped_index, "grandma", tapped_card)}
        assert checked[0][0] not in {r[0] for r in rows}, "the hand's own photo"
        assert all((folder / "photos" / r[4]).is_file() for r in checked)
        page.click("#check-hand")  # the same check posted again (the taps ride along) keeps no card twice
        page.wait_for_selector("#verdict")
        assert ledger.execute(everything).fetchall() == rows + checked

        page.goto(base + "/decks")
        page.locator('.deck[data-deck="grandma"] a.remove').click()
        page.wait_for_url("**/decks/grandma/remove")
        assert "1 session uses it" in page.inner_text("#deck-remove")
        check_fits(page, tmp_path, "26-remove-deck")
        page.click("#remove-deck")
        page.wait_for_url("**/decks")
        assert "Grandma was removed." in page.inner_text(".flash")
        assert page.locator('.deck[data-deck="grandma"]').count() == 0
        assert not (folder / "decks" / "grandma").exists() and not any((folder / "decks").iterdir())
        assert ledger.execute(everything).fetchall() == rows + checked, "the corrections stay with their photos"
        page.goto(base + "/sessions/1/settings")
        assert page.locator("#deck-gone").is_visible()
