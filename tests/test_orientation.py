"""Which way each corner index faces: the shipped network on real photos and renders, and pairing by it.

Real shipped model (``models/corner_orientation.onnx``) on the real sample photos and on
freshly rendered scenes of drawn designs (whose labels carry each index's angle); pairing
of corners that carry angles; model folders that name a missing or bad network.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from vision.detector import INFO_FILE, MODELS_DIR, CardDetector, ModelError, read_model_json
from vision.geometry import Corner
from vision.doubts import FAINT_CARD
from vision.images import read_image
from vision.pipeline import counted_corners, read_photo, tentative_corners
from vision.orientation import DIAGONAL, ORIENTATION_FILE, diagonal_error, inside_photo
from vision.pairing import AMBIGUOUS_FACING, corner_facing, pair_corners, vouched_groups
from vision.training.data.generate import generate_dataset
from vision.training.fit.orientation import angle_errors, orientation_samples
from web_support import shipped_model_files

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector(MODELS_DIR)


def test_the_shipped_model_names_its_orientation_network() -> None:
    assert read_model_json(MODELS_DIR)["orientation"] == ORIENTATION_FILE
    assert (MODELS_DIR / ORIENTATION_FILE).is_file()


@pytest.mark.parametrize("sample", ["real_maal.jpg", "declared_hand.jpg", "tunnela.jpg"])
def test_a_photo_turned_a_quarter_turns_every_index_with_it(detector: CardDetector, sample: str) -> None:
    """Turned 90 degrees counter-clockwise, an index facing ``a`` faces ``a - 90``: the network must agree.

    The corners are those read at 0.4 or more (real_maal.jpg's second QC reads at 0.49 since v0.8.4's
    mirrored look boxes it a little differently) whose crop lies inside the photo."""
    image = read_image(SAMPLES / sample)
    corners = [c for c in detector.detect(image) if c.confidence >= 0.4 and c.angle is not None]
    assert len(corners) >= 3
    boxes = np.array([c.box for c in corners])
    h, w = image.shape[:2]
    turned = np.ascontiguousarray(np.rot90(image))
    # (x, y) -> (y, w - x): the same boxes in the turned photo
    moved = np.stack([boxes[:, 1], w - boxes[:, 2], boxes[:, 3], w - boxes[:, 0]], 1)
    before = np.array([c.angle for c in corners], float)
    after = detector.angles(turned, moved)
    assert after is not None
    errors = angle_errors(after, (before - 90) % 360)
    assert np.mean(errors < 20) >= 0.8, errors.round(0).tolist()


def test_rendered_indices_of_unseen_drawn_designs_face_the_labelled_way(detector: CardDetector, tmp_path: Path) -> None:
    generate_dataset(tmp_path / "scenes", 6, seed=31, size=(960, 720), decks="drawn")
    _, angles = orientation_samples([tmp_path / "scenes"], copies=1)
    predicted = []
    for path in sorted((tmp_path / "scenes" / "geometry").glob("*.json")):
        scene = json.loads(path.read_text())
        image = read_image(tmp_path / "scenes" / scene["image"])
        found = detector.angles(image, np.array([b["bbox"] for b in scene["boxes"]], float).reshape(-1, 4))
        assert found is not None
        predicted.extend(found.tolist())
    errors = angle_errors(np.array(predicted), angles)
    assert len(errors) >= 30
    assert np.median(errors) < 15 and np.mean(errors < 45) >= 0.9, np.percentile(errors, [50, 90]).round(1).tolist()


@pytest.mark.parametrize("second, angle, cards", [
    ((60, 80, 70, 96), 180.0, 1),   # the other end of the card's diagonal, turned 180 degrees
    ((60, 80, 70, 96), 0.0, 2),     # there, but facing the same way: another copy
    ((80, 0, 90, 16), 180.0, 2),    # beside it, head to toe: another copy
])
def test_pairing_takes_the_corners_angles(second: tuple[float, ...], angle: float, cards: int) -> None:
    first = Corner("7H", 0.9, (0.0, 0.0, 10.0, 16.0), angle=0.0)
    other = Corner("7H", 0.9, tuple(map(float, second)), angle=angle)  # type: ignore[arg-type]
    assert len(pair_corners([first, other]).cards) == cards


def test_a_printed_jokers_angles_are_not_taken() -> None:
    """A joker's index is often a word across the card's top: its two ends do not lie on a diagonal."""
    first = Corner("JOKER", 0.9, (0.0, 0.0, 30.0, 10.0), angle=0.0)
    other = Corner("JOKER", 0.9, (60.0, 0.0, 90.0, 10.0), angle=180.0)
    assert corner_facing(first, other, None, None) == 0.0
    assert len(pair_corners([first, other]).cards) == 1
    as_hearts = [Corner("7H", c.confidence, c.box, angle=c.angle) for c in (first, other)]
    assert corner_facing(*as_hearts, None, None) < -AMBIGUOUS_FACING


#: A meld row of three 5S-6S-7S, each card showing both indices, facing upright (angle 0).
ROW = [Corner(name, 0.9, (x, 0.0, x + 10.0, 16.0), angle=0.0) for name, x in (("5S", 0.0), ("6S", 40.0), ("7S", 80.0))]
ROW += [Corner(name, 0.9, (x + 60.0, 80.0, x + 70.0, 96.0), angle=180.0)
        for name, x in (("5S", 0.0), ("6S", 40.0), ("7S", 80.0))]


@pytest.mark.parametrize("faint, cards", [
    ([Corner("8S", 0.15, (120.0, 0.0, 130.0, 16.0), angle=2.0)], 4),            # the row's next card, faint
    ([Corner("8S", 0.15, (120.0, 0.0, 130.0, 16.0), angle=60.0)], 3),           # beside it, facing elsewhere
    ([Corner("8S", 0.15, (120.0, 0.0, 130.0, 16.0))], 3),                       # no angle: nothing vouches
    ([Corner("JOKER", 0.15, (120.0, 0.0, 130.0, 16.0), angle=0.0)], 3),         # a joker's angle is not taken
    ([Corner("6S", 0.15, (120.0, 0.0, 130.0, 16.0), angle=0.0)], 3),            # a 6S lies a diagonal away
    ([Corner("6S", 0.15, (400.0, 100.0, 410.0, 116.0), angle=178.0)], 4),       # ... but not this far
    ([Corner("9S", 0.15, (300.0, 0.0, 310.0, 16.0), angle=0.0),                 # two faint indices of one card
      Corner("9S", 0.15, (360.0, 80.0, 370.0, 96.0), angle=180.0)], 4),         # vouch for each other
])
def test_a_faint_corner_counts_where_the_angles_vouch_for_it(faint: list[Corner], cards: int) -> None:
    """A tentative corner joins a meld row when it faces the row's way and is no counted card's other index."""
    corners = ROW + faint
    tentative = range(len(ROW), len(corners))
    assert len(pair_corners(corners, tentative=tentative).cards) == cards
    assert len(pair_corners(corners).cards) == 3 + len({c.card for c in faint}), "counted, each faint corner is a card"


def test_vouched_groups_keep_every_group_with_a_counted_corner() -> None:
    groups = [(0, 3), (1, 4), (2, 5), (6,)]
    faint = Corner("7S", 0.15, (62.0, 82.0, 72.0, 98.0), angle=180.0)
    assert vouched_groups(groups, ROW + [faint], set()) == groups
    assert vouched_groups(groups, ROW + [faint], {6}) == groups[:3], "a 7S's other index, seen faintly"
    assert vouched_groups([(2, 6)], ROW + [faint], {6}) == [(2, 6)]


def test_a_faint_index_the_angles_vouch_for_is_a_card_to_check(tmp_path: Path, detector: CardDetector) -> None:
    """Scene 46 of the test scenes (``data/test``: seed 202, held-out designs), rendered again: a maal spread
    whose sixth card's index the detector scores under the reading's 0.25. Vouched for by the angles, it is
    read, marked for checking; without the rule it was a place to look."""
    generate_dataset(tmp_path, 1, 202, decks="holdout", scenes=["table", "meld_row", "tunnela", "maal_spread"],
                     start=46)
    scene = json.loads((tmp_path / "geometry" / "s202_000046.json").read_text())
    image = read_image(tmp_path / scene["image"])
    assert detector.calibration.vouched_above < 1
    vouched = read_photo(image, detector)
    plain = read_photo(image, detector, calibration=replace(detector.calibration, vouched_above=1.0))
    names = sorted({b["card_id"]: b["name"] for b in scene["boxes"]}.values())
    assert sorted(vouched.card_names()) == names != sorted(plain.card_names())
    seen = {(c.card, c.box) for c in plain.cards}  # the others' marks may move: the doubt score reads each among all
    [added] = [card for card in vouched.cards if (card.card, card.box) not in seen]
    assert added.uncertain and all(vouched.corners[i].confidence < 0.25 for i in added.corners)
    assert added.card in [d.card for d in plain.doubts if d.kind == FAINT_CARD]


def test_a_faint_index_of_a_card_already_read_stays_a_place_to_look(detector: CardDetector) -> None:
    """The maal spread sample's faint 5D lies near a 5D read surely: it would be that card's other index."""
    image = read_image(SAMPLES / "maal_spread.jpg")
    found = detector.detect(image, 0.1)
    offered = tentative_corners(found, counted_corners(found, 0.25, detector.calibration), detector.calibration)
    assert [c.card for c in offered] == ["5D"] and offered[0].confidence < 0.25
    vouched = read_photo(image, detector)
    plain = read_photo(image, detector, calibration=replace(detector.calibration, vouched_above=1.0))
    assert vouched.corners == plain.corners, "a corner no card took is not listed among the reading's corners"
    assert vouched.cards == plain.cards and vouched.groups == plain.groups
    assert [d.card for d in vouched.doubts if d.kind == FAINT_CARD] == ["5D"]


def test_a_corner_whose_crop_reaches_off_the_photo_has_no_angle(detector: CardDetector) -> None:
    image = read_image(SAMPLES / "declared_hand.jpg")
    first = min(detector.detect(image), key=lambda c: c.box[0])
    cut = np.ascontiguousarray(image[:, int(first.box[0] + first.box[2]) // 2 - 12:])
    corners = detector.detect(cut)
    height, width = cut.shape[:2]
    assert any(c.angle is None for c in corners) and any(c.angle is not None for c in corners)
    assert all((c.angle is None) == (not inside_photo(c.box, width, height)) for c in corners)


def test_the_diagonal_error_is_symmetric_and_zero_along_the_diagonal() -> None:
    a = (0.0, 0.0, 10.0, 10.0)
    x, y = 40 * np.cos(np.radians(DIAGONAL)), 40 * np.sin(np.radians(DIAGONAL))
    b = (x, y, x + 10, y + 10)
    assert diagonal_error(a, b, 0.0, 180.0) == pytest.approx(0.0, abs=1e-6)
    assert diagonal_error(a, b, 0.0, 180.0) == diagonal_error(b, a, 180.0, 0.0)


@pytest.mark.parametrize("value, words", [
    ("missing.onnx", "which is not in"),
    ("../corner_orientation.onnx", "must be the name of an .onnx file"),
    (3, "must be the name of an .onnx file"),
])
def test_a_bad_orientation_entry_says_what_to_fix(tmp_path: Path, value: object, words: str) -> None:
    folder = shipped_model_files(tmp_path / "model", with_json=True)
    info = json.loads((folder / INFO_FILE).read_text())
    (folder / INFO_FILE).write_text(json.dumps(info | {"orientation": value}))
    with pytest.raises(ModelError, match=words):
        CardDetector(folder)


def test_a_folder_without_the_network_reads_with_the_crops_facing_test(tmp_path: Path) -> None:
    folder = shipped_model_files(tmp_path / "model", with_json=True)
    info = json.loads((folder / INFO_FILE).read_text())
    (folder / INFO_FILE).write_text(json.dumps(info | {"orientation": None}))
    (folder / ORIENTATION_FILE).unlink()
    corners = CardDetector(folder).detect(read_image(SAMPLES / "tunnela.jpg"))
    assert corners and all(c.angle is None for c in corners)


def test_an_ensemble_folder_carries_the_orientation_network(tmp_path: Path) -> None:
    from vision.training.fit.export import ensemble_model

    ensemble_model(MODELS_DIR, [MODELS_DIR / "corner_classifier.onnx"], tmp_path / "ens")
    assert (tmp_path / "ens" / ORIENTATION_FILE).read_bytes() == (MODELS_DIR / ORIENTATION_FILE).read_bytes()
    corners = CardDetector(tmp_path / "ens").detect(read_image(SAMPLES / "tunnela.jpg"))
    assert corners and all(c.angle is not None for c in corners)


@pytest.mark.parametrize("extra, words", [
    (["--epochs", "0"], "--epochs must be 1 or more"),
    (["--out", "net.pt"], "a file ending in .onnx"),
])
def test_train_orientation_refuses_bad_arguments(tmp_path: Path, extra: list[str], words: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from web.cli import main

    argv = ["train", "orientation", str(tmp_path), "--out", str(tmp_path / "o.onnx"), *extra]
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_train_orientation_on_a_folder_without_scenes_says_what_to_render(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from web.cli import main

    assert main(["train", "orientation", str(tmp_path), "--out", str(tmp_path / "o.onnx")]) == 2
    assert "no geometry/*.json" in capsys.readouterr().err
