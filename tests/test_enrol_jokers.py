"""Jokers photos: a deck's printed jokers found by their outlines on a family's cloths, even where the joker
prints no rank index (a star in its corner, so the corner detector has nothing to box), straightened, and
their corners cut where the deck's indices are; a photo with no card refused with what to fix.

The jokers photos are rendered by :func:`vision.training.data.enrol_photos.jokers_photo` from the held-out
designs' jokers with their indices painted out and a star drawn in each corner
(:func:`vision.training.data.faces.with_corner_star`), on the cloths of the enrolment test set.
"""

from __future__ import annotations

import json
from io import BytesIO, StringIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import given, settings, strategies as st

from vision.enrolment import CardsNotFound, find_jokers
from vision.training.data.enrol_photos import TABLECLOTHS, TEST_DESIGNS, design_faces, found_right, jokers_photo
from vision.training.data.faces import with_corner_star
from vision.training.fit.enrol import CARD_PX, read_enrolment
from web import decks
from web.app import create_app
from web.cli import main
from web_support import suit_photos, write_suit_photos

#: The jokers photo each cloth is checked with: a design in turn (as ``test_enrol_backgrounds.py`` does), seed 0.
JOKER_CASES = [(cloth, TEST_DESIGNS[k % len(TEST_DESIGNS)]) for k, cloth in enumerate(TABLECLOTHS)]
GLARE = pytest.mark.xfail(strict=True, reason="a lamp's glare washes out one joker's top and left edges on the pale "
                                               "stone: no outline is left to find")
REFUSED = ("0 cards found, 1 to 6 jokers needed: lay out the deck's printed jokers face up, not touching, on a "
           "plain table, and photograph them from above")


def outline_area(outline: object) -> float:
    return float(cv2.contourArea(np.asarray(outline, np.float32)))


@pytest.mark.parametrize("cloth, design", [pytest.param(*case, marks=GLARE) if case[0] == "stone" else case
                                           for case in JOKER_CASES])
def test_jokers_without_an_index_are_found_by_their_outline(cloth: str, design: str) -> None:
    photo = jokers_photo(design, cloth, seed=0)
    found = find_jokers(photo.image, f"{photo.name}.jpg")
    assert [c.card for c in found] == ["JOKER", "JOKER"]
    assert found_right([c.outline for c in found], photo), f"{photo.name}: a joker found where none lies"
    for card, true in zip(found, photo.outlines):  # the card's edge (or a border printed at it), not a frame inside
        assert 0.8 < outline_area(card.outline) / outline_area(true) < 1.2, photo.name


@pytest.mark.parametrize("cloth", ["stripes", "white-cloth", "checks"])
def test_a_jokers_photo_without_a_card_says_what_to_fix(cloth: str) -> None:
    table = TABLECLOTHS[cloth](np.random.default_rng(5), 1280, 960)
    with pytest.raises(CardsNotFound) as refused:
        find_jokers(table, "jokers.jpg")
    assert str(refused.value).startswith(f"jokers.jpg: {REFUSED}")
    assert refused.value.search.outlines == ()


@settings(max_examples=15, deadline=None)
@given(cloth=st.sampled_from(list(TABLECLOTHS)), seed=st.integers(0, 10_000), width=st.integers(320, 1800),
       shape=st.floats(0.6, 1.4))
def test_no_joker_is_found_on_a_bare_cloth(cloth: str, seed: int, width: int, shape: float) -> None:
    """Whatever the cloth, its pattern and the photo's size, a table without cards shows no card."""
    table = TABLECLOTHS[cloth](np.random.default_rng(seed), width, int(width * shape))
    with pytest.raises(CardsNotFound, match=r"^bare.jpg: 0 cards found, 1 to 6 jokers needed"):
        find_jokers(table, "bare.jpg")


def star_centres(design: str) -> list[tuple[float, float]]:
    """Where the star joker's two corner stars lie on the card straightened to :data:`CARD_PX`."""
    star = with_corner_star(design_faces(design)["JOKER"])
    sx, sy = CARD_PX[0] / star.size[0], CARD_PX[1] / star.size[1]
    return [((b[0] + b[2]) / 2 * sx, (b[1] + b[3]) / 2 * sy) for b in (star.index_tl, star.index_br)]


@pytest.fixture(scope="module")
def enrolment_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The held-out deck's four suit photos and a jokers photo of two star jokers on the striped cloth."""
    folder = tmp_path_factory.mktemp("star-jokers")
    files = write_suit_photos(folder, suit_photos())[:4]
    cv2.imwrite(str(folder / "jokers.jpg"), jokers_photo(TEST_DESIGNS[0], "stripes", seed=0).image,
                [cv2.IMWRITE_JPEG_QUALITY, 90])
    return files + [folder / "jokers.jpg"]


def test_star_jokers_are_learnt_with_their_corners_cut_at_the_stars(enrolment_files: list[Path]) -> None:
    pytest.importorskip("onnxruntime")
    photos, faces = read_enrolment(enrolment_files[:4], enrolment_files[4], "grandma")
    assert (photos[4].shows, photos[4].cards) == ("jokers", ("JOKER", "JOKER"))
    jokers = [face for face in faces if face.card == "JOKER"]
    assert len(jokers) == 2 and len(faces) == 54
    for face in jokers:
        assert face.image.shape[:2] == (CARD_PX[1], CARD_PX[0])  # straightened
        for (x0, y0, x1, y1), (x, y) in zip((face.index_tl, face.index_br), star_centres(TEST_DESIGNS[0])):
            assert x0 <= x <= x1 and y0 <= y <= y1, f"a corner cut at {(x0, y0, x1, y1)}, the star at {(x, y)}"
        assert (face.ink > 0).sum() > 100, "the stars are the corners' ink"


@pytest.fixture
def teach_app(db_path: Path) -> Flask:
    return create_app({"TESTING": True, "DATABASE": str(db_path), "SECRET_KEY": "test-secret",
                       "WTF_CSRF_ENABLED": False, "DECK_EPOCHS": 1, "DECK_COPIES": 2, "DECK_CALIBRATION_SCENES": 0})


def test_the_decks_pages_check_takes_the_star_jokers_photo(teach_app: Flask, enrolment_files: list[Path]) -> None:
    """What the page runs on a teach form's photos before it keeps them (the learning is the CLI test's)."""
    pytest.importorskip("onnxruntime")
    uploads = [decks.Upload(field, path.name, path.read_bytes())
               for field, path in zip((*decks.SUITS, decks.JOKERS), enrolment_files)]
    with teach_app.test_request_context("/decks", method="POST"):
        images = decks.read_uploads(uploads, max_bytes=16 * 1024 * 1024, max_pixels=40_000_000)
    assert [image.shape for image in images[4:]] == [(960, 1280, 3)]


def test_the_decks_page_refuses_a_jokers_photo_without_a_card_with_what_to_fix(
        teach_app: Flask, enrolment_files: list[Path], tmp_path: Path) -> None:
    bare = tmp_path / "jokers.jpg"
    cv2.imwrite(str(bare), TABLECLOTHS["stripes"](np.random.default_rng(2), 1280, 960))
    client: FlaskClient = teach_app.test_client()
    form = {"title": "Grandma"} | {name: (BytesIO(path.read_bytes()), path.name)
                                   for name, path in zip((*decks.SUITS, decks.JOKERS), [*enrolment_files[:4], bare])}
    response = client.post("/decks", data=form, content_type="multipart/form-data")
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    error = page.split('id="deck-error">', 1)[1].split("</p>", 1)[0]
    assert error.startswith("jokers.jpg: " + REFUSED.replace("'", "&#39;") + ". What was seen: ")
    assert "lay the cards on a plain cloth" in error
    assert '<figure id="deck-failed-photo"' in page
    assert not decks.decks_folder(teach_app).exists() or not any(decks.decks_folder(teach_app).iterdir())


def test_tiplu_enrol_learns_a_deck_whose_jokers_have_no_index(enrolment_files: list[Path], tmp_path: Path) -> None:
    """The whole path a family runs, as small as it goes: the star jokers on the striped cloth are learnt too."""
    pytest.importorskip("torch")
    out, err = StringIO(), StringIO()
    code = main([str(a) for a in ("enrol", "--out", tmp_path / "grandma", "--epochs", 1, "--copies", 1,
                                  "--calibration-scenes", 0, "--json", "--jokers", enrolment_files[4],
                                  *enrolment_files[:4])], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    summary = json.loads(out.getvalue())
    assert summary["photos"][4] == {"photo": str(enrolment_files[4]), "shows": "jokers", "cards": ["JOKER", "JOKER"]}
    assert (tmp_path / "grandma" / "model.json").is_file()
