"""Stage-2 crops of stage 1's own boxes: the shipped model on the committed real val photos."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import cv2
import numpy as np
import pytest

from scorer import CLASS_NAMES
from vision.detector import MODELS_DIR, CardDetector, crop_corner, model_crop_size
from vision.training.data.dataset import iter_samples
from vision.geometry import box_iou
from vision.training.data.hard_crops import (BACKGROUND_FLOOR, BACKGROUND_IOU, MAX_BACKGROUND, ON_PHOTO, PhotoCrops,
                                        hard_crops, load_hard_crops, photo_crops, read_hard_crops, save_hard_crops,
                                        share_on_photo)
from vision.training.data.dataset import BACKGROUND
from vision.training.fit.settings import TrainError
from vision.training.data.turned import turn_photo
from web.cli import main

REAL = Path(__file__).resolve().parent / "data" / "real_val"
#: The shipped model's version, which enrolment and the crops record as their origin.
SHIPPED_VERSION = json.loads((MODELS_DIR / "model.json").read_text())["metrics"]["version"]
#: A photo, its labelled boxes and classes, and the crops of stage 1's boxes on it.
Photo = tuple[np.ndarray, np.ndarray, list[int], PhotoCrops]


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector(MODELS_DIR)


@pytest.fixture(scope="module")
def photos(detector: CardDetector) -> list[Photo]:
    """Every real val photo upright and turned by 90 and 135 degrees, with its labels and its crops."""
    out: list[Photo] = []
    for sample in iter_samples(REAL):
        image = np.asarray(cv2.imread(str(sample.image)))
        h, w = image.shape[:2]
        boxes = np.array([[b.x1 * w, b.y1 * h, b.x2 * w, b.y2 * h] for b in sample.boxes])
        labels = [b.cls for b in sample.boxes]
        for angle in (0, 90, 135):
            shown, shown_boxes = turn_photo(image, boxes, angle) if angle else (image, boxes)
            mask = turn_photo(np.full((h, w), 255, np.uint8), boxes[:0], angle)[0] > 127 if angle else None
            out.append((shown, shown_boxes, labels, photo_crops(detector, shown, shown_boxes, labels, on_photo=mask)))
    return out


def test_each_card_crop_is_named_by_the_label_it_overlaps(detector: CardDetector, photos: list[Photo]) -> None:
    """A card crop comes from a stage-1 box on a label of that card (IoU >= 0.5), one box per label,
    cut exactly as the detector cuts it at run time."""
    matched = labelled = 0
    for image, truth, labels, found in photos:
        cards = found.labels != BACKGROUND
        ious = box_iou(found.boxes[cards], truth)
        best = ious.argmax(1)
        assert (ious.max(1) >= 0.5).all()
        assert [labels[j] for j in best] == found.labels[cards].tolist()
        assert len(set(best.tolist())) == len(best), "one crop per labelled corner"
        for crop, box in zip(found.crops, found.boxes):
            assert np.array_equal(crop, crop_corner(image, box, detector.settings.crop_margin,
                                                    (detector.settings.crop_w, detector.settings.crop_h)))
        matched += int(cards.sum())
        labelled += len(labels)
    # measured: 49 of 63 (v0.2 misses every small corner of the stacked-hearts photo)
    assert matched >= 0.7 * labelled, f"the shipped stage 1 finds most corners ({matched}/{labelled})"


def test_no_background_crop_overlaps_a_label_or_the_photo_edge(detector: CardDetector, photos: list[Photo]) -> None:
    """Nor is one named as a card labelled in its photo: likely that card's unlabelled other corner."""
    backgrounds = 0
    for image, truth, labels, found in photos:
        bg = found.labels == BACKGROUND
        assert bg.sum() <= MAX_BACKGROUND
        assert (found.scores[bg] >= BACKGROUND_FLOOR).all()
        assert (box_iou(found.boxes[bg], truth) < BACKGROUND_IOU).all()
        assert all(0 <= b[0] and 0 <= b[1] and b[2] <= image.shape[1] and b[3] <= image.shape[0]
                   for b in found.boxes[bg])
        assert not set(detector.classify(image, found.boxes[bg]).argmax(1).tolist()) & set(labels)
        backgrounds += int(bg.sum())
    assert backgrounds >= 2, "the shipped stage 1 has false alarms on these photos (pips, court art)"


def test_a_false_alarm_on_a_cut_off_corner_is_left_out() -> None:
    """Real labels skip corners cut by the frame, so a box there is no sure BACKGROUND."""
    inside = np.ones((100, 100), np.uint8)
    assert share_on_photo(np.array([40, 40, 60, 70.]), inside, 0.15) == 1.0
    assert share_on_photo(np.array([85, 40, 100, 70.]), inside, 0.15) < ON_PHOTO
    inside[:, :50] = 0  # the black corner of a turned canvas
    assert share_on_photo(np.array([40, 40, 60, 70.]), inside, 0.15) < ON_PHOTO


def test_a_fixed_seed_gives_identical_files(tmp_path: Path) -> None:
    first = save_hard_crops(hard_crops(MODELS_DIR, [REAL], turns=1, seed=3), tmp_path / "a.npz")
    again = save_hard_crops(hard_crops(MODELS_DIR, [REAL], turns=1, seed=3), tmp_path / "b.npz")
    other = save_hard_crops(hard_crops(MODELS_DIR, [REAL], turns=1, seed=4), tmp_path / "c.npz")
    assert first.read_bytes() == again.read_bytes()
    assert first.read_bytes() != other.read_bytes(), "another seed turns the photos otherwise"
    found = read_hard_crops(first)
    w, h = model_crop_size(MODELS_DIR)
    assert found.crops.dtype == np.uint8 and found.crops.shape[1:] == (h, w, 3), "cut at the model's crop size"
    assert found.labels.dtype == np.int64 and set(found.labels.tolist()) <= set(range(len(CLASS_NAMES) + 1))
    summary = found.summary
    assert summary["photos"] == 2 * 6 and summary["model_version"] == SHIPPED_VERSION
    assert summary["matched"] + summary["background"] == len(found.labels) and summary["background"] > 0


def test_cli_writes_the_file_and_its_summary(tmp_path: Path) -> None:
    out, err = StringIO(), StringIO()
    target = tmp_path / "hard.npz"
    code = main(["train", "stage1-crops", str(MODELS_DIR), str(REAL), "--out", str(target), "--max-images", "2",
                 "--turns", "1", "--seed", "5"], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    said = json.loads(out.getvalue())
    assert said["photos"] == 4 and said["out"] == str(target)
    assert read_hard_crops(target).summary == {k: v for k, v in said.items() if k != "out"}
    assert said["crop"] == list(model_crop_size(MODELS_DIR))
    bigger = tmp_path / "bigger.npz"
    code = main(["train", "stage1-crops", str(MODELS_DIR), str(REAL), "--out", str(bigger), "--max-images", "2",
                 "--turns", "1", "--seed", "5", "--crop", "64x96"], stdout=StringIO(), stderr=err)
    assert code == 0, err.getvalue()
    found = read_hard_crops(bigger)
    assert found.crops.shape[1:] == (96, 64, 3) and found.summary["crop"] == [64, 96]
    assert found.labels.tolist() == read_hard_crops(target).labels.tolist(), "the same boxes, cut bigger"


@pytest.mark.parametrize("args, words", [
    (["nowhere", str(REAL)], "nowhere: no model folder"),
    ([str(MODELS_DIR), "no_such_data"], "no_such_data: no such data folder"),
    ([str(REAL), str(REAL)], "no corners.onnx found"),
    ([str(MODELS_DIR), str(REAL), "--turns", "-1"], "--turns must be 0 or more"),
    ([str(MODELS_DIR), str(REAL), "--out", "."], "give a file name ending in .npz"),
    ([str(MODELS_DIR), str(REAL), "--crop", "big"], "write WIDTHxHEIGHT"),
    (["STAGE1_ONLY", str(REAL)], "no corner_classifier.onnx; stage-1 crops need both stages"),
])
def test_cli_bad_input_exits_2_saying_what_to_fix(tmp_path: Path, args: list[str], words: str) -> None:
    if args[0] == "STAGE1_ONLY":
        (tmp_path / "stage1").mkdir()
        (tmp_path / "stage1" / "corners.onnx").symlink_to(MODELS_DIR / "corners.onnx")
        args = [str(tmp_path / "stage1"), *args[1:]]
    err = StringIO()
    out = [] if "--out" in args else ["--out", str(tmp_path / "x.npz")]
    assert main(["train", "stage1-crops", *args, *out], stdout=StringIO(), stderr=err) == 2
    assert words in err.getvalue() and "Traceback" not in err.getvalue()
    assert not (tmp_path / "x.npz").exists()


def test_unreadable_crops_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(TrainError, match="no such crops file; make one with tiplu train stage1-crops"):
        load_hard_crops([tmp_path / "none.npz"])
    (tmp_path / "text.npz").write_text("not a zip")
    with pytest.raises(TrainError, match="not a .npz file"):
        load_hard_crops([tmp_path / "text.npz"])
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(TrainError, match="not a stage1-crops file"):
        load_hard_crops([tmp_path / "other.npz"])
    small = save_hard_crops(hard_crops(MODELS_DIR, [REAL], max_images=1), tmp_path / "ok.npz")
    with pytest.raises(TrainError, match="the classifier takes 20x30"):
        load_hard_crops([small], size=(20, 30))
