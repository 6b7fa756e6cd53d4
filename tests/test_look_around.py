"""Looking around the cards read (issue #12): stage 1 reads windows about each read corner again,
and what it finds there on no corner of the reading is a place to look, never a card.

Real shipped model, a real rendered table of a held-out design, the committed samples; the same
model with its windows off (``look_window`` 0) is the comparison.
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import numpy as np
import pytest

from vision.detector import MODELS_DIR, CardDetector, ModelError
from vision.doubts import PLACE_KINDS
from vision.images import read_image
from vision.geometry import box_iou, centre_inside
from vision.pipeline import LOOK_NEW_IOU, read_photo
from vision.training.measure.calibrate import photo_case, scene_rules
from web_support import shipped_model_files

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


@pytest.fixture(scope="module")
def detectors() -> tuple[CardDetector, CardDetector]:
    """The shipped model, and the same model with its windows off."""
    shipped = CardDetector()
    plain = CardDetector()
    plain.settings = dataclasses.replace(plain.settings, passes=tuple(p for p in plain.settings.passes
                                                                      if p != "look_around"))
    return shipped, plain


def test_the_shipped_model_looks_around() -> None:
    info = json.loads((MODELS_DIR / "model.json").read_text())
    assert "look_around" in info["passes"] and CardDetector().settings.look_window == info["look_window"] > 0


def test_a_table_of_stacked_melds_gets_more_places_on_its_missed_cards_and_the_same_cards(
        tmp_path: Path, detectors: tuple[CardDetector, CardDetector]) -> None:
    """Meld rows of fanned copies in the held-out nicu-white design (the rows' lower cards show only their
    indices): looking around points at missed cards the photo's own passes left, and reads no other card."""
    from web.cli import main
    assert main(["generate", str(tmp_path), "--count", "1", "--seed", "7", "--decks", "holdout", "--scenes",
                 "tunnela", "meld_row"], stdout=io.StringIO(), stderr=io.StringIO()) == 0
    [path] = sorted((tmp_path / "geometry").glob("*.json"))
    geometry = json.loads(path.read_text())
    image = read_image(tmp_path / geometry["image"])
    shipped, plain = detectors
    looked = read_photo(image, shipped, rules=scene_rules(geometry))
    before = read_photo(image, plain, rules=scene_rules(geometry))
    assert [(c.card, c.uncertain) for c in looked.cards] == [(c.card, c.uncertain) for c in before.cards]
    with_windows, without = photo_case(looked, geometry), photo_case(before, geometry)
    assert with_windows.missed == without.missed > 0
    assert with_windows.pointed(0.1) > without.pointed(0.1)
    places = [d for d in looked.doubts if d.kind in PLACE_KINDS]
    assert len(places) > len([d for d in before.doubts if d.kind in PLACE_KINDS])
    assert all(d.card and d.box is not None and d.confidence is not None for d in places)


def test_what_looking_around_finds_lies_on_no_corner_read_and_near_a_card(
        detectors: tuple[CardDetector, CardDetector]) -> None:
    shipped, _ = detectors
    seen = 0
    for sample in ("declared_hand.jpg", "maal_spread.jpg", "tunnela.jpg"):
        image = read_image(SAMPLES / sample)
        reading = read_photo(image, shipped)
        read = [reading.corners[i] for card in reading.cards for i in card.corners]
        known = np.array([c.box for c in reading.corners], dtype=float)
        found = shipped.look_around(image, read, 0.1, known, LOOK_NEW_IOU)
        side = max(max(c.box[2] - c.box[0], c.box[3] - c.box[1]) for c in read)
        for corner in found:
            assert corner.confidence >= 0.1 and corner.card in shipped.classes
            assert not centre_inside(corner.box, known) and box_iou(np.array([corner.box]), known).max() < LOOK_NEW_IOU
            centre = np.array([(corner.box[0] + corner.box[2]) / 2, (corner.box[1] + corner.box[3]) / 2])
            assert min(np.linalg.norm(centre - [(c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2])
                       for c in read) <= shipped.settings.look_window * side, "found in a window about a corner read"
        everything = shipped.look_around(image, read, 0.1)
        assert len(everything) > len(found), "without known boxes the reading's own corners are found again too"
        seen += len(found)
    assert seen > 0, "the maal spread's faint corner beside its cards is found"


def test_no_windows_without_the_pass_or_without_cards(detectors: tuple[CardDetector, CardDetector]) -> None:
    shipped, plain = detectors
    image = read_image(SAMPLES / "tunnela.jpg")
    reading = read_photo(image, shipped)
    read = [reading.corners[i] for card in reading.cards for i in card.corners]
    assert plain.look_around(image, read, 0.1) == [] and shipped.look_around(image, [], 0.1) == []
    assert "look_ms" in reading.timings


@pytest.mark.parametrize("key, value", [("look_window", "wide"), ("look_size", [320])])
def test_a_bad_look_setting_names_its_key(tmp_path: Path, key: str, value: object) -> None:
    model = shipped_model_files(tmp_path / "model", with_json=True)
    info = json.loads((model / "model.json").read_text())
    info[key] = value
    (model / "model.json").write_text(json.dumps(info))
    with pytest.raises(ModelError, match=f'"{key}" must be a '):
        CardDetector(model)
