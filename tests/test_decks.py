"""Decks taught on the web page, a deck per session, and corrections kept with the round.

A real Flask app on a real SQLite file, the shipped model, and one real (tiny) enrolment
through the page; the photos are composed from a held-out design as in ``test_enrol.py``
(shared through ``web_support``). The browser walk-through is ``test_browser_deck.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
import threading
import time
from io import BytesIO
from pathlib import Path
from typing import Any, Callable, Iterator

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient

from web import corrections, decks
from web.app import create_app
from web.db import connect, migrations, open_db
from web.maintenance import check_ledger
from web_support import PLAYERS, suit_photos, write_suit_photos

SAMPLE = Path(__file__).resolve().parent.parent / "sample_images" / "declared_hand.jpg"


@pytest.fixture(scope="module")
def photo_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return write_suit_photos(tmp_path_factory.mktemp("suits"), suit_photos())


@pytest.fixture
def app(db_path: Path) -> Iterator[Flask]:
    """The app with the tiniest learning schedule (the page's runs are timed in the model card, not here)."""
    app = create_app({"TESTING": True, "DATABASE": str(db_path), "SECRET_KEY": "test-secret",
                      "WTF_CSRF_ENABLED": False, "DECK_EPOCHS": 1, "DECK_COPIES": 2,
                      "DECK_CALIBRATION_SCENES": 2})
    yield app
    decks.runner(app).wait(300)


def teach_form(title: str, files: list[Path], names: tuple[str, ...] = decks.SUITS) -> dict[str, Any]:
    form: dict[str, Any] = {"title": title}
    for name, path in zip(names, files):
        form[name] = (BytesIO(path.read_bytes()), path.name)
    return form


def page_error(response: Any) -> str:
    text = response.get_data(as_text=True)
    assert 'id="deck-error"' in text, text[:2000]
    return text.split('id="deck-error">', 1)[1].split("</p>", 1)[0]


@pytest.mark.parametrize("case, message", [
    ("not an image", "hearts.jpg: not a JPEG, PNG or WebP image"),
    ("six cards", "cards found, 13 needed: lay out the hearts A to K"),
    ("a suit twice", "spades.jpg was chosen for both spades and hearts"),
    ("no clubs", "choose a photo for each suit; missing: clubs"),
    ("no name", "name the deck"),
    ("a joker photo of a suit", "jokers.jpg: 13 cards found, 1 to 6 jokers needed"),
])
def test_bad_photos_get_the_clis_messages_on_the_page(client: FlaskClient, app: Flask, photo_files: list[Path],
                                                     tmp_path: Path, case: str, message: str) -> None:
    files, names, title = list(photo_files[:4]), decks.SUITS, "Grandma"
    if case == "not an image":
        (tmp_path / "hearts.jpg").write_text("not a photo")
        files[1] = tmp_path / "hearts.jpg"
    elif case == "six cards":
        cv2.imwrite(str(tmp_path / "hearts.jpg"), cv2.imread(str(files[1]))[:, :700])
        files[1] = tmp_path / "hearts.jpg"
    elif case == "a suit twice":
        files[1] = files[0]
    elif case == "no clubs":
        files = files[:3]
    elif case == "no name":
        title = "  "
    else:
        cv2.imwrite(str(tmp_path / "jokers.jpg"), cv2.imread(str(files[0])), [cv2.IMWRITE_JPEG_QUALITY, 70])
        files, names = files + [tmp_path / "jokers.jpg"], (*decks.SUITS, decks.JOKERS)
    response = client.post("/decks", data=teach_form(title, files, names), content_type="multipart/form-data")
    assert response.status_code == 400
    assert message in page_error(response)
    assert not decks.decks_folder(app).exists() or not any(decks.decks_folder(app).iterdir())
    assert decks.runner(app).status().state == "idle"


@pytest.mark.parametrize("language, message", [
    ("ne", "पत्ती भेटियो, 13 चाहिन्छ: पान का A देखि K"),
    ("hi", "पत्ते मिले, 13 चाहिए: पान के A से K"),
])
def test_a_photo_without_13_cards_is_explained_in_the_pages_language(client: FlaskClient, photo_files: list[Path],
                                                                     tmp_path: Path, language: str,
                                                                     message: str) -> None:
    files = list(photo_files[:4])
    cv2.imwrite(str(tmp_path / "hearts.jpg"), cv2.imread(str(files[1]))[:, :700])
    files[1] = tmp_path / "hearts.jpg"
    response = client.post("/decks", data=teach_form("Grandma", files, decks.SUITS),
                           content_type="multipart/form-data", headers={"Accept-Language": language})
    assert response.status_code == 400 and message in page_error(response)
    assert page_error(response).startswith("hearts.jpg: ")


def test_a_refused_photo_is_shown_with_the_cards_found_and_what_was_seen(client: FlaskClient, app: Flask,
                                                                         photo_files: list[Path],
                                                                         tmp_path: Path) -> None:
    """The hearts cut in half: the page names the photo and the count, says the suit is cut off at the edge, and
    shows the photo with the cards found outlined, inline; nothing is kept in the instance folder."""
    files = list(photo_files[:4])
    cv2.imwrite(str(tmp_path / "hearts.jpg"), cv2.imread(str(files[1]))[:, :700])
    files[1] = tmp_path / "hearts.jpg"
    response = client.post("/decks", data=teach_form("Grandma", files), content_type="multipart/form-data")
    error = page_error(response)
    assert response.status_code == 400 and error.startswith("hearts.jpg: ") and "cards found, 13 needed" in error
    assert "What was seen: some cards are cut off at the photo&#39;s edge: get the whole suit in the frame." in error
    page = response.get_data(as_text=True)
    assert '<figure id="deck-failed-photo"' in page and 'src="data:image/jpeg;base64,' in page
    assert "hearts.jpg: the cards tiplu found are outlined in green" in page
    assert not decks.decks_folder(app).exists() or not any(decks.decks_folder(app).iterdir())
    assert '<figure id="deck-failed-photo"' not in client.get("/decks").get_data(as_text=True)


@pytest.mark.parametrize("scenes, message", [("1", "calibration scenes: 1 given; give 0"),
                                              ("lots", "&#39;lots&#39; is not a whole number")])
def test_a_bad_calibration_setting_is_refused_before_anything_is_kept(client: FlaskClient, app: Flask,
                                                                     photo_files: list[Path], scenes: str,
                                                                     message: str) -> None:
    app.config["DECK_CALIBRATION_SCENES"] = scenes
    response = client.post("/decks", data=teach_form("Grandma", photo_files[:4]), content_type="multipart/form-data")
    assert response.status_code == 400 and "TIPLU_DECK_CALIBRATION_SCENES: " in page_error(response)
    assert message in page_error(response)
    assert not (decks.decks_folder(app) / "grandma").exists()


def test_without_the_train_extra_the_page_says_what_to_install(client: FlaskClient, photo_files: list[Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # what a core-only install sees
    wanted = ("learning a deck needs the train extra (torch is missing), a few GB to download: "
              ".venv/bin/pip install -e &#39;.[train]&#39;")
    page = client.get("/decks").get_data(as_text=True)
    assert ".venv/bin/pip install -e &#39;.[train]&#39;" in page and "a few GB to download (PyTorch)" in page
    assert 'id="teach-deck" disabled' in page
    response = client.post("/decks", data=teach_form("Grandma", photo_files[:4]), content_type="multipart/form-data")
    assert response.status_code == 400 and wanted in page_error(response)


def wait_done(client: FlaskClient, timeout: float = 240) -> dict[str, Any]:
    """Poll the status endpoint as the page does, until the job is no longer running."""
    deadline = time.monotonic() + timeout
    seen: list[float] = []
    while time.monotonic() < deadline:
        status = client.get("/decks/status").get_json()
        seen.append(status["progress"])
        if status["state"] != "running":
            assert seen == sorted(seen), f"the progress went back: {seen}"
            return status
        time.sleep(0.5)
    raise AssertionError(f"still learning after {timeout} s: {status}")


def upload_photo(client: FlaskClient, sid: int, path: Path = SAMPLE) -> dict[str, Any]:
    response = client.post(f"/sessions/{sid}/photos", data={"image": (BytesIO(path.read_bytes()), path.name),
                                                           "purpose": "maal", "seat": "1"},
                           content_type="multipart/form-data")
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_teach_a_deck_choose_it_and_fall_back_when_it_is_gone(client: FlaskClient, app: Flask,
                                                             photo_files: list[Path]) -> None:
    form = teach_form("Grandma's deck", photo_files[:4])
    first = client.post("/decks", data=form, content_type="multipart/form-data")
    assert first.status_code == 302, first.get_data(as_text=True)[:2000]
    again = client.post("/decks", data=teach_form("Grandma's deck", photo_files[:4]), content_type="multipart/form-data")
    assert again.status_code in (400, 409)  # a double tap: running (409) or, once done, the name is taken (400)
    assert ("tiplu is already learning Grandma&#39;s deck" in page_error(again)
            or "a deck called Grandma&#39;s deck is already here" in page_error(again))
    status = wait_done(client)
    assert status["state"] == "done" and status["progress"] == 1, status
    assert status["message"].startswith("Learnt Grandma's deck from ")
    folder = decks.decks_folder(app) / "grandma-s-deck"
    assert json.loads((folder / "deck.json").read_text())["current"] == "v1"
    assert sorted(p.name for p in (folder / "photos").iterdir()) == ["clubs.jpg", "diamonds.jpg", "hearts.jpg",
                                                                     "spades.jpg"]
    model = json.loads((folder / "v1" / "model.json").read_text())
    assert model["enrolled"]["design"] == "Grandma's deck" and model["enrolled"]["calibration_scenes"] == 2
    assert list(model["calibration"]["calibration_splits"]) == ["Grandma's deck/scenes-seed1001"]
    assert 'data-deck="grandma-s-deck"' in client.get("/decks").get_data(as_text=True)
    assert not (Path(__file__).resolve().parent.parent / "models" / "grandma-s-deck").exists()

    new = client.post("/api/sessions", json={"players": PLAYERS, "deck": "grandma-s-deck"})
    assert new.status_code == 201 and new.get_json()["deck"] == "grandma-s-deck"
    sid = new.get_json()["id"]
    assert 'value="grandma-s-deck" checked' in client.get(f"/sessions/{sid}/settings").get_data(as_text=True)
    read = upload_photo(client, sid)
    assert "notice" not in read
    enrolled = decks.find_deck(decks.decks_folder(app), "grandma-s-deck")
    assert enrolled is not None
    from web.photos import get_detector
    assert get_detector(str(enrolled.model_folder)) is get_detector(str(enrolled.model_folder))

    shutil.rmtree(folder)
    gone = upload_photo(client, sid)
    assert gone["notice"].startswith("The deck grandma-s-deck is missing from the server, so the standard deck")
    standard = upload_photo(client, client.post("/api/sessions", json={"players": PLAYERS}).get_json()["id"])
    assert [c["card"] for c in gone["reading"]["cards"]] == [c["card"] for c in standard["reading"]["cards"]]
    settings = client.get(f"/sessions/{sid}/settings").get_data(as_text=True)
    assert 'id="deck-gone"' in settings
    assert client.patch(f"/api/sessions/{sid}", json={"deck": "grandma-s-deck"}).status_code == 400
    assert client.patch(f"/api/sessions/{sid}", json={"deck": "standard"}).get_json()["deck"] is None


def test_an_old_ledger_upgrades_and_its_sessions_use_the_standard_deck(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = connect(path)
    migrations.apply(old, stop_before="m007_session_deck")
    old.execute("INSERT INTO sessions(title, rules, options, created_at) VALUES ('then', 'nepali', '{}', 'then')")
    for seat, name in enumerate(["Anna", "Ben"]):
        old.execute("INSERT INTO players(name, created_at) VALUES (?, 'then')", [name])
        old.execute("INSERT INTO session_players(session_id, seat, player_id) VALUES (1, ?, ?)", [seat, seat + 1])
    old.conn.commit()
    assert "deck" not in old["sessions"].columns_dict
    old.close()
    upgraded = open_db(path)
    assert "deck" in upgraded["sessions"].columns_dict and "corrections" in upgraded.table_names()
    upgraded.close()
    app = create_app({"TESTING": True, "DATABASE": str(path), "SECRET_KEY": "x", "WTF_CSRF_ENABLED": False})
    client = app.test_client()
    assert client.get("/api/sessions/1").get_json()["deck"] is None
    with app.app_context():
        assert decks.model_for(None) == (None, None)
    response = client.post("/api/detect", data={"image": (BytesIO(SAMPLE.read_bytes()), "hand.jpg"), "session": "1"},
                           content_type="multipart/form-data")
    assert response.status_code == 200 and "notice" not in response.get_json()
    plain = client.post("/api/detect", data={"image": (BytesIO(SAMPLE.read_bytes()), "hand.jpg")},
                        content_type="multipart/form-data").get_json()
    assert [c["card"] for c in response.get_json()["cards"]] == [c["card"] for c in plain["cards"]]


def round_form(photo: dict[str, Any], fixes: list[list[Any]]) -> dict[str, Any]:
    """The round form as the page posts it after a review: RULES.md's round, Ben's maal from the photo."""
    form: dict[str, Any] = {"tiplu": "JC", "winner": "Anna", "p0_maal": "5", "p0_seen": "on", "p1_seen": "on",
                            "p2_maal": "10", "p2_seen": "on", "p3_maal": "3", "p1_maal": "2",
                            "photo": photo["photo"]["id"]}
    if fixes:
        form["correction"] = json.dumps({"photo": photo["photo"]["id"], "cards": fixes})
    return form


def kept_files(app: Flask, photo_id: str) -> list[str]:
    folder = decks.decks_folder(app).parent / "photos" / photo_id / corrections.CORRECTIONS_DIR
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_corrections_are_kept_with_the_round(client: FlaskClient, app: Flask, db_path: Path,
                                            make_session: Callable[..., int]) -> None:
    sid = make_session()
    photo = upload_photo(client, sid)
    cards = photo["reading"]["cards"]
    fixes = [[0, cards[0]["card"]], [1, "KS" if cards[1]["card"] != "KS" else "QS"], [999, "8H"]]
    response = client.post(f"/sessions/{sid}/rounds/new", data=round_form(photo, fixes))
    assert response.status_code == 302, response.get_data(as_text=True)[:2000]
    rows = sqlite3.connect(db_path).execute(
        "SELECT position, deck, card, read, file FROM corrections ORDER BY id").fetchall()
    assert {(r[0], r[2], r[3]) for r in rows} == {(0, fixes[0][1], cards[0]["card"]), (1, fixes[1][1], cards[1]["card"])}
    assert all(deck is None for _, deck, *_ in rows), "read with the standard deck"
    files = kept_files(app, photo["photo"]["id"])
    assert files == sorted(Path(r[4]).name for r in rows) and len(files) >= 2
    crop = cv2.imread(str(decks.decks_folder(app).parent / "photos" / rows[0][4]))
    assert crop.shape == (72, 48, 3) and crop.std() > 10, "a corner cut from the photo (at KEPT_CROP), not a blank"
    with app.app_context():
        read_by = corrections.deck_corrections(connect(db_path), decks.decks_folder().parent / "photos", [None])
    assert [card for _, card in read_by] == [r[2] for r in rows]
    assert check_ledger(db_path, decks.decks_folder(app).parent / "photos").ok


def verify_form(photo: dict[str, Any], fixes: list[list[Any]], tiplu: str = "JC") -> dict[str, Any]:
    """The "Check a hand" form as the page posts it after a review of the photo of the hand."""
    return {"tiplu": tiplu, "hand": " ".join(c["card"] for c in photo["reading"]["cards"]),
            "correction": json.dumps({"photo": photo["photo"]["id"], "cards": fixes})}


def correction_rows(db_path: Path) -> list[tuple[Any, ...]]:
    return sqlite3.connect(db_path).execute(
        "SELECT photo_id, position, deck, card, read, file FROM corrections ORDER BY id").fetchall()


def test_checking_a_hand_keeps_the_review_taps_once(client: FlaskClient, app: Flask, db_path: Path,
                                                    make_session: Callable[..., int]) -> None:
    sid = make_session()
    photo = upload_photo(client, sid)
    cards = photo["reading"]["cards"]
    fixes = [[0, cards[0]["card"]], [1, "KS" if cards[1]["card"] != "KS" else "QS"]]

    failed = client.post(f"/sessions/{sid}/verify", data=verify_form(photo, fixes, tiplu="1X"))
    assert failed.status_code == 400 and 'id="form-error"' in failed.get_data(as_text=True)
    assert correction_rows(db_path) == [] and kept_files(app, photo["photo"]["id"]) == []
    carried = failed.get_data(as_text=True)
    assert '<input type="hidden" name="correction" value="{&#34;photo&#34;: &#34;' in carried, \
        "the taps ride along to the next try"

    checked = client.post(f"/sessions/{sid}/verify", data=verify_form(photo, fixes))
    assert checked.status_code == 200 and 'id="verdict"' in checked.get_data(as_text=True)
    rows = correction_rows(db_path)
    assert {(r[1], r[3], r[4]) for r in rows} == {(0, fixes[0][1], cards[0]["card"]),
                                                  (1, fixes[1][1], cards[1]["card"])}
    assert {r[2] for r in rows} == {None}, "read with the standard deck"
    files = kept_files(app, photo["photo"]["id"])
    assert files == sorted(Path(r[5]).name for r in rows) and len(files) >= 2

    again = client.post(f"/sessions/{sid}/verify", data=verify_form(photo, fixes))
    saved = client.post(f"/sessions/{sid}/rounds/new", data=round_form(photo, fixes))
    assert again.status_code == 200 and saved.status_code == 302
    assert correction_rows(db_path) == rows and kept_files(app, photo["photo"]["id"]) == files, \
        "a repeated check, or the round saved from the same review, keeps no card twice"
    with app.app_context():
        learnt = corrections.deck_corrections(connect(db_path), decks.decks_folder().parent / "photos", [None])
    assert [card for _, card in learnt] == [r[3] for r in rows], "Improve from corrections learns from them"
    assert check_ledger(db_path, decks.decks_folder(app).parent / "photos").ok


@pytest.mark.parametrize("route", ["rounds/new", "verify"])
def test_a_failed_save_keeps_no_correction(client: FlaskClient, app: Flask, db_path: Path,
                                          make_session: Callable[..., int], monkeypatch: pytest.MonkeyPatch,
                                          route: str) -> None:
    """The crops are renamed into place inside the round's (or the check's) transaction; a failure before the
    commit removes them."""
    sid = make_session()
    photo = upload_photo(client, sid)
    keep = corrections.keep_corrections

    written: list[Path] = []

    def keep_then_fail(*args: Any) -> int:
        keep(*args)
        written.extend(args[-1])  # the files are in place ...
        raise OSError("disk full")  # ... and then the save fails

    monkeypatch.setattr(corrections, "keep_corrections", keep_then_fail)
    form = (round_form if route == "rounds/new" else verify_form)(photo, [[0, "KS"], [1, "QS"]])
    response = client.post(f"/sessions/{sid}/{route}", data=form)
    assert response.status_code == 500 and len(written) >= 2
    assert kept_files(app, photo["photo"]["id"]) == [] and not any(p.exists() for p in written)
    ledger = sqlite3.connect(db_path)
    assert ledger.execute("SELECT count(*) FROM corrections").fetchone() == (0,)
    assert ledger.execute("SELECT count(*) FROM rounds").fetchone() == (0,)


def test_check_ledger_removes_correction_files_without_a_row(client: FlaskClient, app: Flask, db_path: Path,
                                                            make_session: Callable[..., int]) -> None:
    sid = make_session()
    photo = upload_photo(client, sid)
    client.post(f"/sessions/{sid}/rounds/new", data=round_form(photo, [[0, "KS"]]))
    photos = decks.decks_folder(app).parent / "photos"
    stray = photos / photo["photo"]["id"] / corrections.CORRECTIONS_DIR / "8H_1.png"
    shutil.copy(next(stray.parent.iterdir()), stray)
    old = time.time() - 3600
    os.utime(stray, (old, old))
    report = check_ledger(db_path, photos)
    assert not report.ok and report.orphan_files == (f"{photo['photo']['id']}/corrections/8H_1.png",)
    assert check_ledger(db_path, photos, repair=True).removed == report.orphan_files
    assert not stray.exists() and check_ledger(db_path, photos).ok
    client.delete(f"/api/sessions/{sid}")
    assert not (photos / photo["photo"]["id"]).exists(), "a deleted session takes its corrections along"


def test_bad_corrections_are_explained(client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    photo = upload_photo(client, sid)
    form = round_form(photo, [])
    form["correction"] = json.dumps({"photo": photo["photo"]["id"], "cards": [[0, "ZZ"]]})
    response = client.post(f"/sessions/{sid}/rounds/new", data=form)
    assert response.status_code == 400 and "correction: " in response.get_data(as_text=True)
    assert client.get(f"/api/sessions/{sid}").get_json()["rounds"] == []


def test_improving_without_corrections_says_what_to_do(client: FlaskClient) -> None:
    response = client.post("/decks/standard/improve")
    assert response.status_code == 400
    assert "No corrections are kept for standard + corrections yet" in page_error(response)
    response = client.post("/decks/nope/improve")
    assert response.status_code == 400 and "there is no deck called nope" in page_error(response)


def copied_deck(app: Flask, title: str = "Grandma") -> decks.Deck:
    """A deck folder as teaching leaves it, its model a copy of the shipped one (removal does not care what
    was learnt; a real enrolment is the first test's)."""
    with app.app_context():
        folder = decks.decks_folder() / decks.deck_name_for(title)
        folder.mkdir(parents=True)
        shutil.copytree(decks.base_model(), folder / ".new")
        return decks.switch_version(folder, title, decks.ENROLLED, folder / ".new")


def test_removing_a_deck_asks_first_then_its_sessions_fall_back(client: FlaskClient, app: Flask, db_path: Path,
                                                              make_session: Callable[..., int]) -> None:
    deck = copied_deck(app)
    sid = make_session(deck="grandma")
    photo = upload_photo(client, sid)
    assert "notice" not in photo
    from web.photos import get_detector
    read_with = get_detector(str(deck.model_folder))
    client.post(f"/sessions/{sid}/rounds/new", data=round_form(photo, [[0, "KS"]]))
    rows = correction_rows(db_path)
    assert {r[2] for r in rows} == {"grandma"} and rows
    listing = client.get("/decks").get_data(as_text=True)
    assert 'href="/decks/grandma/remove"' in listing and "/decks/standard/remove" not in listing
    assert client.get("/decks/standard/remove").status_code == 404

    asked = client.get("/decks/grandma/remove").get_data(as_text=True)
    assert "Remove Grandma?" in asked and "1 session uses it" in asked and "1 correction kept" in asked
    assert '<input type="hidden" name="confirm" value="yes">' in asked
    unconfirmed = client.post("/decks/grandma/remove")
    assert unconfirmed.status_code == 200 and "Remove Grandma?" in unconfirmed.get_data(as_text=True)
    assert deck.folder.is_dir(), "nothing is removed without the confirmation"

    removed = client.post("/decks/grandma/remove", data={"confirm": "yes"})
    assert removed.status_code == 302 and removed.location.endswith("/decks")
    page = client.get("/decks").get_data(as_text=True)
    assert "Grandma was removed. Sessions that used it read their photos with the standard deck" in page
    assert 'data-deck="grandma"' not in page
    assert not deck.folder.exists() and list(deck.folder.parent.iterdir()) == [], "no trash left behind"
    fallback = upload_photo(client, sid)
    assert fallback["notice"].startswith("The deck grandma is missing from the server, so the standard deck")
    assert 'id="deck-gone"' in client.get(f"/sessions/{sid}/settings").get_data(as_text=True)
    assert correction_rows(db_path) == rows, "its corrections belong to the photos and stay"
    assert all((decks.decks_folder(app).parent / "photos" / r[5]).is_file() for r in rows)
    again = client.post("/decks/grandma/remove", data={"confirm": "yes"})
    assert again.status_code == 404 and "there is no deck called grandma" in page_error(again)

    taught_again = copied_deck(app)  # the same name, so the same folder: read with the new model, not the old one
    assert taught_again.model_folder == deck.model_folder
    assert get_detector(str(taught_again.model_folder)) is not read_with


def test_a_deck_being_learnt_is_not_removed(client: FlaskClient, app: Flask) -> None:
    deck = copied_deck(app)
    release = threading.Event()
    job = decks.runner(app)
    job.start("improve", deck.name, deck.title, lambda progress: {"done": release.wait(60)})
    try:
        refused = client.post("/decks/grandma/remove", data={"confirm": "yes"})
        assert refused.status_code == 409
        assert "tiplu is learning Grandma right now: remove it when that is done" in page_error(refused)
        assert decks.find_deck(decks.decks_folder(app), "grandma") == deck
    finally:
        release.set()
    assert job.wait(60).state == "done"
    assert client.post("/decks/grandma/remove", data={"confirm": "yes"}).status_code == 302
    assert not deck.folder.exists()
    assert job.status().state == "idle", "the page no longer reports on a deck that is gone"


def test_a_failed_removal_leaves_the_deck_in_use(client: FlaskClient, app: Flask, make_session: Callable[..., int],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    deck = copied_deck(app)
    stale = deck.folder.parent / f"{decks.TRASH_PREFIX}old-0000"
    (stale / "v1").mkdir(parents=True)  # what a removal that could not finish deleting leaves
    rename = os.replace

    def refuse_the_trash(source: Any, target: Any) -> None:
        if Path(target).name.startswith(decks.TRASH_PREFIX):
            raise PermissionError(13, "Permission denied")
        rename(source, target)

    monkeypatch.setattr(os, "replace", refuse_the_trash)
    failed = client.post("/decks/grandma/remove", data={"confirm": "yes"})
    assert failed.status_code == 503
    assert "Grandma could not be removed (Permission denied); it is still here and in use" in page_error(failed)
    assert decks.find_deck(decks.decks_folder(app), "grandma") == deck
    assert "notice" not in upload_photo(client, make_session(deck="grandma")), "still read with Grandma"
    assert not stale.exists(), "the earlier trash went"
    monkeypatch.undo()
    assert client.post("/decks/grandma/remove", data={"confirm": "yes"}).status_code == 302


def status_in(client: FlaskClient, language: str) -> dict[str, Any]:
    return dict(client.get("/decks/status", headers={"Accept-Language": language}).get_json())


def test_each_step_of_the_learner_is_named_in_the_pages_language(client: FlaskClient, app: Flask) -> None:
    """The real runner follows the learner's real steps (:class:`vision.training.fit.enrol.Steps`): the photos read,
    two rounds of learning, then doubt checked on 60 scenes; each says how much of it is done, and the work
    waits between moves so each can be read."""
    from vision.training.fit.enrol import Steps, plan

    moves_made = 5
    reached = [threading.Event() for _ in range(moves_made)]
    go_on = [threading.Event() for _ in range(moves_made)]

    def work(progress: decks.Progress) -> dict[str, Any]:
        steps = Steps(plan(photos=4, crops=500, networks=1, epochs=2, calibration_scenes=60), 0.0, progress=progress,
                      rounds=2, scenes=60)
        moves: list[Callable[[], None]] = [lambda: None, lambda: steps.photo_read(2, 4),
                                           lambda: steps.epoch_done(1, 2, 0.5), lambda: steps.batch_learnt(1.5, 2),
                                           lambda: steps.calibration_moved(30, 30, 60)]
        for move, here, gate in zip(moves, reached, go_on):
            move()
            here.set()
            gate.wait(60)
        return {"crops": 80, "seconds": 3}

    decks.runner(app).start("enrol", "grandma", "Grandma", work, rounds=2, scenes=60)
    wanted = [("Reading the photos of Grandma… 0%", "Grandma का फोटो पढ्दै… 0%", "Grandma की फ़ोटो पढ़ रहा है… 0%"),
              ("Reading the photos of Grandma… 31%", "Grandma का फोटो पढ्दै… 31%", "Grandma की फ़ोटो पढ़ रहा है… 31%"),
              ("Learning Grandma: round 1 of 2 · 32%", "Grandma सिक्दै: 2 मध्ये 1 चरण · 32%",
               "Grandma सीख रहा है: 2 में से 1 चरण · 32%"),
              ("Learning Grandma: round 1 of 2 · 48%", "Grandma सिक्दै: 2 मध्ये 1 चरण · 48%",
               "Grandma सीख रहा है: 2 में से 1 चरण · 48%"),
              ("Checking doubt on 60 scenes of Grandma… 50%", "Grandma का 60 दृश्यमा शंका जाँच्दै… 50%",
               "Grandma के 60 दृश्यों पर शक जाँच रहा है… 50%")]
    seen = []
    for here, gate, words in zip(reached, go_on, wanted):
        assert here.wait(60)
        said = tuple(status_in(client, language)["message"] for language in ("en", "ne", "hi"))
        assert said == words
        seen.append(status_in(client, "en")["progress"])
        gate.set()
    assert seen == sorted(seen) and len(set(seen)) == len(seen), f"the bar moves at every move: {seen}"
    done = decks.runner(app).wait(60)
    assert done.state == "done" and status_in(client, "ne")["message"].startswith("Grandma 80 टुक्राबाट 3 सेकेन्डमा")


@pytest.mark.parametrize("language, words", [
    ("en", "Learning Grandma stopped: hearts.jpg: 0 cards found, 13 needed"),
    ("ne", "Grandma सिक्न रोकियो: hearts.jpg: 0 पत्ती भेटियो, 13 चाहिन्छ"),
    ("hi", "Grandma सीखना रुक गया: hearts.jpg: 0 पत्ते मिले, 13 चाहिए"),
])
def test_a_failed_job_says_why_in_the_pages_language(client: FlaskClient, app: Flask, language: str,
                                                     words: str) -> None:
    """The learner's own error (here: a blank photo, as :func:`vision.enrolment.find_cards` reads it)."""
    from vision.enrolment import find_cards

    blank = np.full((600, 800, 3), 255, np.uint8)
    decks.runner(app).start("enrol", "grandma", "Grandma", lambda progress: {"cards": find_cards(blank, "H",
                                                                                                "hearts.jpg")})
    assert decks.runner(app).wait(60).state == "failed"
    status = status_in(client, language)
    assert status["message"].startswith(words) and status["error"] in status["message"]
    page = client.get("/decks", headers={"Accept-Language": language}).get_data(as_text=True)
    assert 'id="deck-job-message" class="error"' in page and words in page


def test_an_unexpected_failure_is_worded_too(client: FlaskClient, app: Flask) -> None:
    def work(progress: decks.Progress) -> dict[str, Any]:
        raise OSError("No space left on device")

    decks.runner(app).start("improve", decks.STANDARD_CORRECTED, decks.STANDARD_CORRECTED_TITLE, work)
    assert decks.runner(app).wait(60).state == "failed"
    assert status_in(client, "en")["message"] == ("Learning standard + corrections stopped: OSError: No space left "
                                                  "on device (the server's log has the details); try again")
    assert status_in(client, "ne")["message"] == ("सामान्य + सच्याइ सिक्न रोकियो: OSError: No space left on device "
                                                  "(विवरण सर्भरको लगमा छ); फेरि प्रयास गर्नुहोस्")


def test_corrections_go_to_the_deck_that_read_the_photo(client: FlaskClient, app: Flask, db_path: Path,
                                                        make_session: Callable[..., int]) -> None:
    """The table switches decks between the photos and the save: each photo's taps still teach
    the deck whose model read it, not the one the session uses at save time."""
    copied_deck(app)
    sid = make_session(deck="grandma")
    by_grandma = upload_photo(client, sid)
    assert client.patch(f"/api/sessions/{sid}", json={"deck": None}).get_json()["deck"] is None
    by_standard = upload_photo(client, sid)
    stored = dict(sqlite3.connect(db_path).execute("SELECT id, read_with FROM photos").fetchall())
    assert stored == {by_grandma["photo"]["id"]: "grandma", by_standard["photo"]["id"]: ""}
    assert client.post(f"/sessions/{sid}/verify", data=verify_form(by_grandma, [[0, "KS"]])).status_code == 200
    assert client.patch(f"/api/sessions/{sid}", json={"deck": "grandma"}).get_json()["deck"] == "grandma"
    assert client.post(f"/sessions/{sid}/verify", data=verify_form(by_standard, [[1, "QS"]])).status_code == 200
    kept = {(r[0], r[2]) for r in correction_rows(db_path)}
    assert kept == {(by_grandma["photo"]["id"], "grandma"), (by_standard["photo"]["id"], None)}


def test_photos_kept_before_the_reading_deck_was_recorded_use_the_sessions_deck(
        client: FlaskClient, app: Flask, db_path: Path, make_session: Callable[..., int]) -> None:
    copied_deck(app)
    sid = make_session(deck="grandma")
    photo = upload_photo(client, sid)
    ledger = sqlite3.connect(db_path)
    ledger.execute("UPDATE photos SET read_with = NULL")
    ledger.commit()
    assert client.post(f"/sessions/{sid}/verify", data=verify_form(photo, [[0, "KS"]])).status_code == 200
    assert {r[2] for r in correction_rows(db_path)} == {"grandma"}
