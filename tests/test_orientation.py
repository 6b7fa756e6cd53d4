"""Which way each corner index faces: the shipped network on real photos and renders, and pairing by it.

Real shipped model (``models/corner_orientation.onnx``) on the real sample photos and on
freshly rendered scenes of drawn designs (whose labels carry each index's angle); pairing
of corners that carry angles; model folders that name a missing or bad network.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from vision.detector import INFO_FILE, MODELS_DIR, CardDetector, Corner, ModelError, read_model_json
from vision.images import read_image
from vision.orientation import DIAGONAL, ORIENTATION_FILE, diagonal_error, inside_photo
from vision.pairing import AMBIGUOUS_FACING, corner_facing, pair_corners
from vision.training.generate import generate_dataset
from vision.training.orientation import angle_errors, orientation_samples
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
    """Turned 90 degrees counter-clockwise, an index facing ``a`` faces ``a - 90``: the network must agree."""
    image = read_image(SAMPLES / sample)
    corners = [c for c in detector.detect(image) if c.confidence >= 0.5 and c.angle is not None]
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
    ("../corner_orientation.onnx", "must name an .onnx file"),
    (3, "must name an .onnx file"),
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
    del info["orientation"]
    (folder / INFO_FILE).write_text(json.dumps(info))
    (folder / ORIENTATION_FILE).unlink()
    corners = CardDetector(folder).detect(read_image(SAMPLES / "tunnela.jpg"))
    assert corners and all(c.angle is None for c in corners)


def test_an_ensemble_folder_carries_the_orientation_network(tmp_path: Path) -> None:
    from vision.training.train import ensemble_model

    ensemble_model(MODELS_DIR, [MODELS_DIR / "corner_classifier.onnx"], tmp_path / "ens")
    assert (tmp_path / "ens" / ORIENTATION_FILE).read_bytes() == (MODELS_DIR / ORIENTATION_FILE).read_bytes()
    corners = CardDetector(tmp_path / "ens").detect(read_image(SAMPLES / "tunnela.jpg"))
    assert corners and all(c.angle is not None for c in corners)


@pytest.mark.train
def test_train_orientation_writes_a_network_the_detector_runs(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from vision.training.orientation import train_orientation

    generate_dataset(tmp_path / "scenes", 3, seed=5, size=(480, 360), decks="drawn")
    said: list[str] = []
    wrote = train_orientation([tmp_path / "scenes"], tmp_path / "model" / ORIENTATION_FILE,
                              check=[tmp_path / "scenes"], epochs=1, copies=6, say=said.append)
    assert wrote.is_file() and said[-1].startswith("epoch 1/1: loss ") and "median error" in said[-1]
    folder = shipped_model_files(tmp_path / "model", with_json=True)
    found = CardDetector(folder).angles(read_image(SAMPLES / "tunnela.jpg"), np.array([[10.0, 10, 40, 60]]))
    assert found is not None and found.shape == (1,) and 0 <= found[0] < 360


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
