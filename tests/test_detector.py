"""The shipped ONNX corner detector, its dataset reader and the eval-model command, tested for real.

The photos under tests/data/real_val come from the real dev validation split (CC BY 4.0,
never used for training); the detector must name the cards in them.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Sequence
from io import StringIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorer import CLASS_NAMES
from vision.detector import (BACKENDS, CardDetector, ModelError, crop_corner, letterbox, load_detector, network_input,
                             read_model_json, turned_crop)
from vision.calibration import Calibration
from vision.geometry import Corner, box_iou, flipped_boxes, long_sides, nms, tile_starts
from vision.passes import input_sizes, tile_scale
from vision.pipeline import read_photo
from vision.settings import VIEW_FLIPS, ReaderSettings
from vision.training.data.dataset import Box, iter_samples, map_class_name, parse_label_line, split_bursts
from vision.training.measure.report import far_photo
from vision.training.measure.evaluate import ap_101, card_set_scores, evaluate, mean_average_precision
from web.cli import main
from web_support import shipped_model_files

ROOT = Path(__file__).resolve().parent.parent


def older_model_json() -> dict[str, object]:
    """The shipped ``model.json`` as a folder written before schema 2 spelled it (no schema, no passes)."""
    info = json.loads((ROOT / "models" / "model.json").read_text())
    return {k: v for k, v in info.items() if k not in ("schema", "passes")}
REAL = ROOT / "tests" / "data" / "real_val"


@pytest.fixture(scope="module")
def detector() -> CardDetector:
    return CardDetector()


@pytest.mark.parametrize("name, expected", [
    ("10C", "10C"), ("10c", "10C"), ("TC", "10C"), ("AS", "AS"), ("qh", "QH"), ("K D", "KD"),
    ("BLACK JOKER", "JOKER"), ("RED JOKER", "JOKER"), ("red_joker", "JOKER"), ("JOKER", "JOKER"),
    ("BACK", None), ("1S", None), ("11H", None), ("", None),
])
def test_class_names_map_by_name(name: str, expected: str | None) -> None:
    idx = map_class_name(name)
    assert (CLASS_NAMES[idx] if idx is not None else None) == expected


@pytest.mark.parametrize("line, mapping, expected", [
    ("0 0.5 0.5 0.2 0.4", [3], Box(3, 0.4, 0.3, 0.6, 0.7)),
    ("0 0.1 0.2 0.3 0.2 0.3 0.6 0.1 0.6", [7], Box(7, 0.1, 0.2, 0.3, 0.6)),
    ("1 0.5 0.5 0.2 0.2", [3, None], None),
    ("0 0.95 0.5 0.2 0.2", [0], Box(0, 0.85, 0.4, 1.0, 0.6)),
    ("0 0.5", [0], None),
])
def test_label_lines_become_boxes(line: str, mapping: list[int | None], expected: Box | None) -> None:
    assert parse_label_line(line, mapping) == expected


def test_real_folder_reads_source_classes_by_name() -> None:
    samples = {s.image.stem.split("_jpg")[0].split("_JPG")[0]: s for s in iter_samples(REAL)}
    source = (REAL / "classes.txt").read_text().split("\n")
    first_label = (REAL / "labels" / (samples["IMG_7753"].image.stem + ".txt")).read_text().split()
    assert source[int(first_label[0])] == samples["IMG_7753"].boxes[0].name
    assert sorted(b.name for b in samples["IMG_7753"].boxes) == ["10C", "2D", "QC", "QC"]
    assert all(0 <= v <= 1 for s in samples.values() for b in s.boxes for v in (b.x1, b.y1, b.x2, b.y2))


def test_data_yaml_names_work_like_classes_txt(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    (tmp_path / "labels").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "a.jpg"), np.zeros((10, 10, 3), np.uint8))
    (tmp_path / "labels" / "a.txt").write_text("1 0.5 0.5 0.2 0.2\n0 0.5 0.5 0.1 0.1\n")
    (tmp_path / "data.yaml").write_text("names:\n  0: BACK\n  1: RED JOKER\n")
    [sample] = list(iter_samples(tmp_path))
    assert [b.name for b in sample.boxes] == ["JOKER"]


def test_burst_split_keeps_near_duplicate_frames_together() -> None:
    stems = [f"IMG_20220921_1940{s:02d}" for s in range(0, 60, 3)] + \
            [f"IMG_20220921_1950{s:02d}" for s in range(0, 60, 3)] + [f"IMG_77{n:02d}" for n in range(40)]
    val = split_bursts(stems, 0.25, seed=3)
    assert 0.15 <= len(val) / len(stems) <= 0.4
    assert any(s.startswith("IMG_77") for s in val) and any(s.startswith("IMG_2022") for s in val)
    ordered = sorted(stems)
    for a, b in zip(ordered, ordered[1:]):
        if a[:16] == b[:16] and a.startswith("IMG_2022") and (a in val) != (b in val):
            assert int(b[-2:]) - int(a[-2:]) > 0 or b.endswith("00")  # only a block edge may split
    assert split_bursts(stems, 0.25, seed=3) == val


def test_real_split_is_reproducible_and_disjoint(tmp_path: Path) -> None:
    from vision.training.data.dataset import import_real
    counts = import_real(REAL, tmp_path / "out", val_fraction=0.34, seed=1)
    assert counts["train"] + counts["val"] == 6
    train = {p.name for p in (tmp_path / "out" / "train" / "images").iterdir()}
    val = {p.name for p in (tmp_path / "out" / "val" / "images").iterdir()}
    assert train and val and not train & val
    assert (tmp_path / "out" / "classes.txt").read_text().split() == list(CLASS_NAMES)


def test_a_packed_folder_keeps_every_label_at_a_smaller_size(tmp_path: Path) -> None:
    """What travels to a GPU machine is the same training data, shrunk: every box at the same place."""
    assert main(["train", "pack", str(REAL), str(tmp_path / "p"), "--max-side", "200"], stdout=StringIO()) == 0
    before, after = list(iter_samples(REAL)), list(iter_samples(tmp_path / "p"))
    assert [s.image.stem for s in before] == [s.image.stem for s in after]
    for a, b in zip(before, after):
        assert [x.cls for x in a.boxes] == [x.cls for x in b.boxes]
        assert np.allclose([dataclasses.astuple(x) for x in a.boxes], [dataclasses.astuple(x) for x in b.boxes],
                           atol=1e-5)
        image = cv2.imread(str(b.image))
        assert b.image.suffix == ".webp" and max(image.shape[:2]) == 200


@pytest.mark.parametrize("argv", [["--max-side", "16"], ["--quality", "0"], ["--limit", "0"]])
def test_a_bad_pack_says_what_to_fix(tmp_path: Path, argv: list[str]) -> None:
    err = StringIO()
    assert main(["train", "pack", str(REAL), str(tmp_path / "p"), *argv], stdout=StringIO(), stderr=err) == 2
    assert "pack needs" in err.getvalue() and not (tmp_path / "p").exists()


def test_tiles_hold_every_whole_box_at_the_scale_asked(tmp_path: Path) -> None:
    """A box that lies whole in a tile is labelled there, at its scaled place; every tile keeps a label.

    Tiles overlap by at least 96 px, so a box smaller than that lies whole in one of them.
    """
    assert main(["train", "tile", str(REAL), str(tmp_path / "t"), "--scale", "0.5", "--tile", "160",
                 "--overlap", "96"], stdout=StringIO()) == 0
    tiles = list(iter_samples(tmp_path / "t"))
    assert tiles and all(t.boxes for t in tiles)
    checked = 0
    for sample in iter_samples(REAL):
        h, w = cv2.imread(str(sample.image)).shape[:2]
        mine = [t for t in tiles if t.image.stem.rsplit("_", 2)[0] == sample.image.stem]
        for box in sample.boxes:
            x1, y1, x2, y2 = box.x1 * w * 0.5, box.y1 * h * 0.5, box.x2 * w * 0.5, box.y2 * h * 0.5
            found = False
            for t in mine:
                x0, y0 = (int(v) for v in t.image.stem.rsplit("_", 2)[1:])
                if not (x0 <= x1 and y0 <= y1 and x2 <= x0 + 160 and y2 <= y0 + 160):
                    continue
                th, tw = cv2.imread(str(t.image)).shape[:2]
                assert max(th, tw) <= 160
                want = np.array([(x1 - x0) / tw, (y1 - y0) / th, (x2 - x0) / tw, (y2 - y0) / th])
                assert any(b.cls == box.cls and np.allclose(dataclasses.astuple(b)[1:], want, atol=0.01)
                           for b in t.boxes)
                found = True
                checked += 1
            assert found or x2 - x1 > 96 or y2 - y1 > 96
    assert checked >= 5


@pytest.mark.parametrize("argv", [["--scale", "0"], ["--tile", "16"], ["--overlap", "320"], ["--min-visible", "0"]])
def test_bad_tiles_say_what_to_fix(tmp_path: Path, argv: list[str]) -> None:
    err = StringIO()
    assert main(["train", "tile", str(REAL), str(tmp_path / "t"), *argv], stdout=StringIO(), stderr=err) == 2
    assert "tile needs" in err.getvalue() and not (tmp_path / "t").exists()


def test_letterbox_and_nms() -> None:
    img, s, pad = letterbox(np.zeros((480, 1280, 3), np.uint8), 320)
    assert img.shape == (320, 320, 3) and s == 0.25 and pad == (0.0, 100.0)
    boxes = np.array([[0, 0, 10, 10], [0, 0, 10, 11], [5, 0, 15, 10]], float)
    assert nms(boxes, np.array([0.9, 0.8, 0.7]), 0.6).tolist() == [0, 2]


@pytest.mark.parametrize("box, shape", [((10, 10, 30, 50), (72, 48, 3)), ((10, 10, 90, 30), (72, 48, 3)),
                                        ((-5, -5, 20, 30), (72, 48, 3))])
def test_crop_is_portrait_classifier_input(box: tuple[float, ...], shape: tuple[int, ...]) -> None:
    img = np.random.default_rng(0).integers(0, 255, (100, 120, 3), np.uint8)
    assert crop_corner(img, box).shape == shape


def _likeness(a: np.ndarray, b: np.ndarray) -> float:
    """Normalised cross-correlation of two crops (1: the same picture)."""
    x, y = a.astype(float).ravel(), b.astype(float).ravel()
    x, y = x - x.mean(), y - y.mean()
    return float(x @ y / np.sqrt((x @ x) * (y @ y)))


@pytest.mark.parametrize("turn", [30, 45, -45, 60])
def test_a_turned_crop_sets_a_turned_index_upright(turn: int) -> None:
    """A real corner turned ``turn`` degrees (clockwise in the picture) and boxed axis-aligned, as
    stage 1 boxes it, comes back upright from ``turned_crop(..., turn)``; the plain crop does not."""
    [sample] = [s for s in iter_samples(REAL) if s.image.name.startswith("IMG_7785_")]
    img = cv2.imread(str(sample.image))
    h, w = img.shape[:2]
    x1, y1, x2, y2 = (sample.boxes[0].x1 * w, sample.boxes[0].y1 * h, sample.boxes[0].x2 * w, sample.boxes[0].y2 * h)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), -turn, 1.0)
    turned = cv2.warpAffine(img, m, (w, h))
    points = np.array([[x1, y1, 1], [x2, y1, 1], [x2, y2, 1], [x1, y2, 1]]) @ m.T
    box = (*points.min(0), *points.max(0))
    upright = crop_corner(img, (x1, y1, x2, y2))
    assert _likeness(turned_crop(turned, box, turn), upright) > 0.9
    assert _likeness(crop_corner(turned, box), upright) < 0.6
    assert turned_crop(turned, box, 0).tobytes() == crop_corner(turned, box).tobytes()


def test_only_squarish_boxes_are_read_turned(detector: CardDetector) -> None:
    """Upright and sideways indices (boxes of about 1:1.6) read exactly as with upright crops only;
    the same index turned 45 degrees (a squarish box) reads as its card again, and surer."""
    import dataclasses
    [sample] = [s for s in iter_samples(REAL) if s.image.name.startswith("IMG_7785_")]
    img = cv2.imread(str(sample.image))
    h, w = img.shape[:2]
    b = sample.boxes[0]
    box = np.array([[b.x1 * w, b.y1 * h, b.x2 * w, b.y2 * h]], np.float32)
    plain = CardDetector()
    plain.settings = dataclasses.replace(detector.settings, crop_turns=(0.0,))
    assert np.array_equal(detector.classify(img, box), plain.classify(img, box))
    m = cv2.getRotationMatrix2D((w / 2, h / 2), -45, 1.0)
    turned = cv2.warpAffine(img, m, (w, h))
    points = np.array([[box[0, 0], box[0, 1], 1], [box[0, 2], box[0, 1], 1], [box[0, 2], box[0, 3], 1],
                       [box[0, 0], box[0, 3], 1]]) @ m.T
    diagonal = np.array([[*points.min(0), *points.max(0)]], np.float32)
    ours, before = detector.classify(turned, diagonal)[0], plain.classify(turned, diagonal)[0]
    card = detector.classes.index(b.name)
    assert ours.argmax() == card and ours[card] > before[card]


def test_crop_turns_come_from_model_json(tmp_path: Path) -> None:
    """The shipped model cuts each box at the turns of its settings; a ``model.json`` of schema 1 without
    the key (an older model, an older enrolled deck) cuts upright only, as it was measured."""
    assert CardDetector().settings.crop_turns == ReaderSettings().crop_turns == (0.0, 45.0, -45.0)
    shipped_model_files(tmp_path)
    info = older_model_json()
    del info["crop_turns"]
    (tmp_path / "model.json").write_text(json.dumps(info))
    assert CardDetector(tmp_path).settings.crop_turns == (0.0,)


@pytest.mark.parametrize("view", ["mirror", "turn180"])
def test_each_view_reads_a_photo_and_its_flipped_image_alike(detector: CardDetector, view: str) -> None:
    """With a view, the pass at ``imgsz`` reads the photo and the photo flipped that way, so a
    close-up flipped gives the same boxes flipped back; one view alone does not (the view adds boxes)."""
    assert set(detector.settings.views) == set(VIEW_FLIPS)
    photo = cv2.imread(str(ROOT / "sample_images" / "tunnela.jpg"))
    photo = cv2.resize(photo, (640, round(640 * photo.shape[0] / photo.shape[1])))
    assert input_sizes(detector.settings, *photo.shape[:2]) == (detector.settings.imgsz,)
    height, width = photo.shape[:2]
    flip_x, flip_y = VIEW_FLIPS[view]

    def boxes(det: CardDetector, image: np.ndarray, flipped: bool = False) -> list[tuple[float, ...]]:
        if flipped:
            image = np.ascontiguousarray(image[::-1 if flip_y else 1, ::-1 if flip_x else 1])
        found = det.find_boxes(image, 0.1).xyxy
        if flipped:
            found = np.stack([width - found[:, 2] if flip_x else found[:, 0],
                              height - found[:, 3] if flip_y else found[:, 1],
                              width - found[:, 0] if flip_x else found[:, 2],
                              height - found[:, 1] if flip_y else found[:, 3]], 1)
        return sorted(tuple(np.round(b, 2)) for b in found)

    one_view, with_view = CardDetector(), CardDetector()
    one_view.settings = dataclasses.replace(one_view.settings, views=())
    with_view.settings = dataclasses.replace(with_view.settings, views=(view,))
    assert boxes(with_view, photo) == boxes(with_view, photo, flipped=True)
    assert boxes(one_view, photo) != boxes(one_view, photo, flipped=True)
    assert set(boxes(one_view, photo)) < set(boxes(with_view, photo)) < set(boxes(detector, photo))


def test_the_looks_in_one_batch_read_as_each_look_alone(detector: CardDetector) -> None:
    """Stage 1 takes the photo and its flipped looks as one batch (session 21, for speed); each look's
    boxes are exactly those of a run on that look alone, and the network input holds the same
    values as the plain numpy conversion."""
    photo = cv2.imread(str(ROOT / "sample_images" / "tunnela.jpg"))
    size = detector.settings.imgsz
    looks = [photo, cv2.flip(photo, 1), cv2.flip(photo, -1)]
    padded = [letterbox(look, size)[0] for look in looks]
    batch = network_input(padded)
    plain = np.stack([lb[:, :, ::-1].transpose(2, 0, 1).astype(np.float32) / 255.0 for lb in padded])
    assert batch.dtype == np.float32 and np.array_equal(batch, plain)
    assert np.array_equal(network_input(np.stack(padded)), plain)  # a stacked batch, as the crops come
    together = detector._det.run(None, {detector._det_input: batch})[0]
    for k in range(len(looks)):
        alone = detector._det.run(None, {detector._det_input: batch[k:k + 1]})[0][0]
        assert np.array_equal(together[k], alone)
    one_view = CardDetector()
    one_view.settings = dataclasses.replace(one_view.settings, views=())
    height, width = photo.shape[:2]
    for look, (flip_x, flip_y) in zip(looks[1:], VIEW_FLIPS.values()):
        back = flipped_boxes(one_view.find_boxes(look, 0.1).xyxy, width, height, flip_x, flip_y)
        assert set(map(tuple, np.round(back, 3))) <= set(map(tuple, np.round(detector.find_boxes(photo, 0.1).xyxy, 3)))


def test_spinning_threads_change_the_speed_not_the_reading(detector: CardDetector) -> None:
    """``spin`` is ONNX Runtime's thread policy between runs (off since session 21: the four networks'
    threads took the cores from each other); a reading is the same either way."""
    photo = cv2.imread(str(ROOT / "sample_images" / "maal_spread.jpg"))
    assert CardDetector(spin=True).detect(photo) == detector.detect(photo)


@pytest.mark.parametrize("setting, views", [({}, ()), ({"mirror_view": True}, ("mirror",)),
                                            ({"mirror_view": False}, ()), ({"views": []}, ()),
                                            ({"views": ["turn180"]}, ("turn180",))])
def test_model_json_says_which_views_stage_one_takes(tmp_path: Path, setting: dict[str, object],
                                                      views: tuple[str, ...]) -> None:
    """Older model folders and enrolled decks (schema 1) keep the views they were measured with: none
    without the key, the mirror where ``"mirror_view": true``."""
    shipped_model_files(tmp_path)
    info = older_model_json()
    del info["views"]
    (tmp_path / "model.json").write_text(json.dumps({**info, **setting}))
    assert CardDetector(tmp_path).settings.views == views


def test_an_old_mirror_view_that_is_no_boolean_is_named(tmp_path: Path) -> None:
    shipped_model_files(tmp_path)
    info = older_model_json()
    del info["views"]
    (tmp_path / "model.json").write_text(json.dumps({**info, "mirror_view": 1}))
    with pytest.raises(ModelError, match='"mirror_view" must be true or false, not 1'):
        CardDetector(tmp_path)


def test_stage_two_averages_the_classifiers_model_json_lists(tmp_path: Path) -> None:
    """An ensemble's probabilities are the mean of its members', each read as a model on its own."""
    shipped = read_model_json(ROOT / "models")
    members = shipped.get("classifiers", ["corner_classifier.onnx"])
    second = members[1] if len(members) > 1 else members[0]
    folders = {}
    for name, files in {"first": [members[0]], "second": [second], "both": [members[0], second]}.items():
        folder = tmp_path / name
        folder.mkdir()
        for shared in ("corners.onnx", "classes.txt", "corner_orientation.onnx"):
            (folder / shared).symlink_to(ROOT / "models" / shared)
        listed = ["corner_classifier.onnx"] + [f"member_{k}.onnx" for k in range(1, len(files))]
        for file, as_name in zip(files, listed):
            (folder / as_name).symlink_to(ROOT / "models" / file)
        (folder / "model.json").write_text(json.dumps(shipped | {"classifiers": listed}))
        folders[name] = CardDetector(folder)
    image = cv2.imread(str(ROOT / "sample_images" / "declared_hand.jpg"))
    boxes = np.array([c.box for c in folders["both"].detect(image)[:12]], np.float32)
    one, two, both = (folders[n].classify(image, boxes) for n in ("first", "second", "both"))
    plain = [folders[n].classify_crops(np.stack([crop_corner(image, b, size=(folders[n].settings.crop_w,
                                                                              folders[n].settings.crop_h))
                                                 for b in boxes])) for n in ("first", "second", "both")]
    assert np.allclose(plain[2], (plain[0] + plain[1]) / 2, atol=1e-5)
    assert both.shape == one.shape == two.shape and np.allclose(both.sum(1), 1, atol=1e-4)


def test_tiplu_train_ensemble_builds_the_shipped_stage_two_again(tmp_path: Path) -> None:
    """``tiplu train ensemble`` puts exported classifiers beside a base folder's detector; given the
    shipped model's own networks it reads a photo exactly as the shipped model does."""
    members = [str(ROOT / "models" / m) for m in read_model_json(ROOT / "models").get("classifiers",
                                                                                      ["corner_classifier.onnx"])]
    out = tmp_path / "ensemble"
    code = main(["train", "ensemble", str(out), "--base", str(ROOT / "models"), *members],
                stdout=StringIO(), stderr=(err := StringIO()))
    assert code == 0, err.getvalue()
    image = cv2.imread(str(ROOT / "sample_images" / "declared_hand.jpg"))
    shipped, rebuilt = CardDetector().detect(image), CardDetector(out).detect(image)
    assert [(c.card, c.confidence, c.box) for c in rebuilt] == [(c.card, c.confidence, c.box) for c in shipped]
    assert len(read_model_json(out)["classifiers"]) == len(members)
    for args, words in (([str(out), *members], "already exists"),
                        ([str(tmp_path / "new"), str(tmp_path / "gone.onnx")], "no such classifier file"),
                        ([str(tmp_path / "new"), "--base", str(tmp_path), *members], "no corners.onnx")):
        code = main(["train", "ensemble", *args], stdout=StringIO(), stderr=(err := StringIO()))
        assert code == 2 and words in err.getvalue() and "Traceback" not in err.getvalue()


def test_map_metrics_on_known_cases() -> None:
    t = [[(0, np.array([0, 0, 10, 10.])), (1, np.array([20, 20, 30, 30.]))]]
    perfect = [[(0, 0.9, np.array([0, 0, 10, 10.])), (1, 0.8, np.array([20, 20, 30, 30.]))]]
    assert mean_average_precision(perfect, t)[:2] == (1.0, 1.0)
    wrong_class = [[(1, 0.9, np.array([0, 0, 10, 10.])), (0, 0.8, np.array([20, 20, 30, 30.]))]]
    assert mean_average_precision(wrong_class, t)[:2] == (0.0, 0.0)
    shifted = [[(0, 0.9, np.array([2, 0, 12, 10.])), (1, 0.8, np.array([20, 20, 30, 30.]))]]
    m50, m5095, _, _ = mean_average_precision(shifted, t)
    assert m50 == 1.0 and 0.5 < m5095 < 1.0
    assert ap_101(np.array([0.5, 1.0]), np.array([1.0, 0.5])) == pytest.approx((51 * 1.0 + 50 * 0.5) / 101)
    assert card_set_scores([{"AS"}, set()], [{"AS"}, {"KH"}]) == (1.0, 0.5, pytest.approx(2 / 3))


def test_detector_module_needs_no_torch() -> None:
    code = ("import sys; sys.modules['torch'] = None; sys.modules['ultralytics'] = None\n"
            "import vision.detector, vision.training.measure.evaluate\n"
            "vision.detector.CardDetector()\nprint('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


RUNTIME_MODULES = ("web.app", "web.cli", "vision.detector", "vision.pairing", "vision.layout", "vision.images",
                   "vision.pipeline", "vision.score")


def test_the_runtime_loads_no_training_code() -> None:
    """The app, the CLI and the runtime vision modules leave training, torch and Ultralytics unloaded."""
    code = (f"import importlib, sys\nfor name in {RUNTIME_MODULES!r}: importlib.import_module(name)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'ultralytics')\n"
            "             or m.startswith('vision.training')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


class FixedCorners:
    """A second backend: the same corners for every photo (as an enrolled deck might give)."""

    def __init__(self, model_path: object = None, *, imgsz: int | None = None) -> None:
        self.model_path = model_path
        self.settings = ReaderSettings(format="fixed-corners", passes=("base",))
        self.calibration = Calibration()

    def detect(self, image_bgr: np.ndarray, conf: float = 0.25) -> list[Corner]:
        return [Corner("7H", 0.9, (10.0, 10.0, 20.0, 25.0)), Corner("KS", 0.8, (60.0, 10.0, 70.0, 25.0))]

    def look_around(self, image_bgr: np.ndarray, corners: Sequence[Corner], conf: float,
                    known: Sequence[Sequence[float]] = (), known_iou: float = 0.3) -> list[Corner]:
        return []


def test_a_second_backend_is_a_new_class_named_by_model_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "fixed-corners", FixedCorners)
    (tmp_path / "model.json").write_text(json.dumps({"format": "fixed-corners"}))
    detector = load_detector(tmp_path)
    assert isinstance(detector, FixedCorners) and detector.model_path == tmp_path
    reading = read_photo(np.full((40, 100, 3), 200, np.uint8), detector, name="x")
    assert reading.card_names() == ["7H", "KS"]


@pytest.mark.parametrize("text, words", [("{", "not readable JSON"), ("[1]", "JSON object"),
                                         ('{"format": "ncnn"}', "format 'ncnn' is not one tiplu runs")])
def test_a_bad_model_json_says_what_is_wrong(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "model.json").write_text(text)
    with pytest.raises(ModelError, match=words):
        load_detector(tmp_path)


@pytest.mark.parametrize("key, value, words", [("crop_turns", "x", '"crop_turns" must be a list of numbers'),
                                               ("crop_turns", [45, "x"], '"crop_turns" must be a list of numbers'),
                                               ("crop_w", "x", '"crop_w" must be a whole number'),
                                               ("big_share", None, '"big_share" must be a number'),
                                               ("tile_below", "18", '"tile_below" must be a number'),
                                               ("passes", ["big", "base"], '"passes" must list passes'),
                                               ("passes", ["base", "zoom"], '"passes" must list passes'),
                                               ("schema", 9, "schema 9 is newer than this tiplu reads"),
                                               ("views", "mirror", '"views" must be a list of names'),
                                               ("views", ["mirror", "x"], '"views" must list distinct views'),
                                               ("views", ["mirror", "mirror"], '"views" must list distinct views'),
                                               ("mirror_view", True, '"mirror_view" is no setting of schema 2'),
                                               ("crop_h", 100, "crops; export the model again"),
                                               ("classifiers", "x", '"classifiers" must be a list of names'),
                                               ("classifiers", ["corner_classifier.onnx", "../x.onnx"],
                                                '"classifiers" must list .onnx file names'),
                                               ("classifiers", ["b.onnx", "corner_classifier.onnx"],
                                                '"classifiers" must list .onnx file names in the model folder, the first being corner_classifier.onnx'),
                                               ("classifiers", ["corner_classifier.onnx", "gone.onnx"],
                                                '"classifiers" names gone.onnx, which is not in')])
def test_a_bad_setting_in_model_json_names_the_key(tmp_path: Path, key: str, value: object, words: str) -> None:
    shipped_model_files(tmp_path)
    info = json.loads((ROOT / "models" / "model.json").read_text()) | {key: value}
    (tmp_path / "model.json").write_text(json.dumps(info))
    with pytest.raises(ModelError, match=words):
        CardDetector(tmp_path)
    code = main(["detect", "--model", str(tmp_path), str(ROOT / "sample_images" / "tiplu.jpg")],
                stdout=StringIO(), stderr=(err := StringIO()))
    assert code == 2 and words in err.getvalue() and "Traceback" not in err.getvalue()


def test_missing_model_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="TIPLU_MODEL"):
        CardDetector(tmp_path)


def test_model_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIPLU_MODEL", str(tmp_path))
    with pytest.raises(ModelError, match=str(tmp_path)):
        CardDetector()


def test_shipped_model_is_small_and_complete() -> None:
    files = {p.name: p.stat().st_size for p in (ROOT / "models").iterdir() if p.is_file()}
    assert {"corners.onnx", "corner_classifier.onnx", "classes.txt", "model.json", "README.md"} <= set(files)
    assert sum(files.values()) < 15e6
    assert (ROOT / "models" / "classes.txt").read_text().split("\n")[:53] == list(CLASS_NAMES)


# Photos in tests/data/real_val that the shipped model reads fully, with the cards they show.
# IMG_7785's source label calls the right-hand card 4S; the photo shows the ace of spades.
SOLVED = [
    ("IMG_7785", {"3H", "8D", "AS"}),
    ("IMG_7753", {"10C", "QC", "2D"}),
    ("IMG_20220921_195401", {"3D"}),
]


@pytest.mark.parametrize("stem, cards", SOLVED)
def test_shipped_model_names_the_cards_in_real_photos(detector: CardDetector, stem: str, cards: set[str]) -> None:
    [sample] = [s for s in iter_samples(REAL) if s.image.name.startswith(stem + "_")]
    img = cv2.imread(str(sample.image))
    corners = detector.detect(img)
    assert {c.card for c in corners} == cards
    h, w = img.shape[:2]
    for c in corners:
        assert isinstance(c, Corner) and 0.25 <= c.confidence <= 1
        x1, y1, x2, y2 = c.box
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
        best = box_iou(c.box, [(b.x1 * w, b.y1 * h, b.x2 * w, b.y2 * h) for b in sample.boxes]).max()
        assert best > 0.4, (c, best)


def test_a_bigger_photo_finds_the_same_cards(detector: CardDetector) -> None:
    """The same photo at twice the size is read at 320 and 960 px (two passes) and still
    finds every corner in the same place. The second pass may add a corner, so only the
    small photo's cards are required."""
    [sample] = [s for s in iter_samples(REAL) if s.image.name.startswith("IMG_7753_")]
    img = cv2.imread(str(sample.image))
    big = cv2.resize(img, (1280, 1280), interpolation=cv2.INTER_CUBIC)
    assert input_sizes(detector.settings, *big.shape[:2]) == (320, 960)
    small, large = detector.detect(img), detector.detect(big)
    assert {c.card for c in large} >= {c.card for c in small} == {"10C", "QC", "2D"}
    for a in small:
        assert any(b.card == a.card and box_iou([v * 2 for v in a.box], b.box)[0, 0] > 0.7 for b in large)


@pytest.mark.parametrize("height, width, fixed, expected", [
    (640, 640, None, (320,)),         # a close photo like the real dev set: corners are big already
    (960, 1280, None, (320, 960)),    # a whole table: also at 3/4 of the long side
    (768, 1024, None, (320, 768)),
    (3024, 4032, None, (320, 960)),   # a phone photo: capped at max_imgsz
    (200, 300, None, (320,)),         # never below imgsz
    (960, 1280, 416, (416,)),         # --imgsz is the only size
])
def test_input_sizes_follow_the_photo(height: int, width: int, fixed: int | None, expected: tuple[int, ...]) -> None:
    info = json.loads((ROOT / "models" / "model.json").read_text())
    assert (info["imgsz"], info["max_imgsz"], info["big_share"]) == (320, 960, 0.75)
    assert CardDetector(imgsz=fixed).context(np.zeros((height, width, 3), np.uint8)).sizes == expected


@given(length=st.integers(1, 9000), tile=st.integers(64, 1280), share=st.floats(0.0, 0.45))
def test_tiles_cover_the_side_and_overlap_enough(length: int, tile: int, share: float) -> None:
    """Whole tiles, from the first pixel to the last, each overlapping the next by at least ``overlap``."""
    overlap = int(tile * share)
    starts = tile_starts(length, tile, overlap)
    assert starts[0] == 0 and starts == sorted(starts)
    assert starts[-1] + tile >= length and (len(starts) == 1 or starts[-1] + tile == length)
    assert all(b - a <= tile - overlap for a, b in zip(starts, starts[1:]))


def test_a_whole_table_in_a_big_photo_is_read_in_tiles(detector: CardDetector) -> None:
    """At 960 px the declared hand's corners of a 12-megapixel photo shrink to about 10 px and
    half its cards are lost; the tiles read all 21. The same photo without tiles shows the test can fail."""
    expected = json.loads((ROOT / "sample_images" / "expected.json").read_text())["declared_hand.jpg"]["cards"]
    frame = far_photo(cv2.imread(str(ROOT / "sample_images" / "declared_hand.jpg")))
    assert detector.settings.tile_below > 0
    assert sorted(c.card for c in read_photo(frame, detector).cards) == sorted(expected)
    untiled = CardDetector()
    untiled.settings = dataclasses.replace(untiled.settings, tile_below=0.0)
    assert len(read_photo(frame, untiled).cards) < len(expected) - 3


@pytest.mark.parametrize("name", ["tiplu.jpg", "tunnela.jpg"])
def test_big_corners_in_a_big_photo_are_not_tiled(detector: CardDetector, name: str) -> None:
    """Close-ups must not pay for whole tables: corners already big at the big pass give no tiles."""
    frame = far_photo(cv2.imread(str(ROOT / "sample_images" / name)))
    sizes = input_sizes(detector.settings, *frame.shape[:2])
    boxes = detector.stage1([frame], sizes[-1], 0.1)[0].xyxy
    sides = long_sides(boxes) * sizes[-1] / 4000
    assert len(sides) and tile_scale(detector.settings, 3000, 4000, sides) is None


def test_blank_photo_has_no_cards(detector: CardDetector) -> None:
    assert detector.detect(np.full((960, 1280, 3), 90, np.uint8)) == []


def test_eval_model_json_shape() -> None:
    printed = StringIO()
    assert main(["eval-model", str(REAL), "--json"], stdout=printed) == 0
    out = json.loads(printed.getvalue())
    assert list(out) == ["images", "map50", "map50_95", "card_precision", "card_recall", "card_f1"]
    assert out["images"] == 6
    assert all(0.0 <= out[k] <= 1.0 for k in list(out)[1:])
    assert out["card_precision"] >= 0.75 and out["card_recall"] >= 0.35


def test_eval_model_text_and_bad_folder(tmp_path: Path) -> None:
    err = StringIO()
    assert main(["eval-model", str(tmp_path)], stderr=err) == 2
    assert "images/" in err.getvalue()
    res = evaluate(REAL)
    assert res.images == 6 and set(res.class_recall) <= set(CLASS_NAMES)
