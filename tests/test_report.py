"""The evaluation command's maths on tiny cases, and one real run of it with the shipped model."""

from __future__ import annotations

import json
from collections import Counter
from io import StringIO
from pathlib import Path

import numpy as np
import pytest

from vision.training.data.dataset import iter_samples
from vision.training.measure.report import (WEBCAM, PhotoScore, SetScore, Truth, declared_hand, markdown_table,
                                            match_boxes, score_photo, table_scenes)
from vision.training.data.turned import MIN_TURN, turn_photo
from web.cli import main

REAL = Path(__file__).resolve().parent / "data" / "real_val"


def test_turned_training_copies_keep_every_label_on_its_corner(tmp_path: Path) -> None:
    """``tiplu train turn-real`` writes each real photo turned twice, every label inside the new
    canvas and no angle near upright; val photos are never copied."""
    out, err = StringIO(), StringIO()
    assert main(["train", "turn-real", str(REAL), str(tmp_path / "turned"), "--copies", "2"], stdout=out,
                stderr=err) == 0, err.getvalue()
    source = [s for s in iter_samples(REAL) if s.boxes]
    written = sorted(iter_samples(tmp_path / "turned" / "train"), key=lambda s: s.image.name)
    assert json.loads(out.getvalue().replace("'", '"')) == {"photos": 2 * len(source),
                                                           "boxes": 2 * sum(len(s.boxes) for s in source)}
    for sample in written:
        angle = int(sample.image.stem.rsplit("_", 1)[1])
        assert MIN_TURN <= angle <= 360 - MIN_TURN
        assert all(0 <= v <= 1 for b in sample.boxes for v in (b.x1, b.y1, b.x2, b.y2))
        assert all(b.x2 - b.x1 > 0.005 and b.y2 - b.y1 > 0.005 for b in sample.boxes)
    assert not (tmp_path / "turned" / "val").exists()


@pytest.mark.parametrize("args, words", [(["--copies", "0"], "--copies must be at least 1"),
                                         ([], "no labelled photos found")])
def test_turn_real_says_what_is_wrong(tmp_path: Path, args: list[str], words: str) -> None:
    (tmp_path / "empty" / "images").mkdir(parents=True)
    (tmp_path / "empty" / "classes.txt").write_text("AS\n")
    src = REAL if args else tmp_path / "empty"
    err = StringIO()
    assert main(["train", "turn-real", str(src), str(tmp_path / "out"), *args], stdout=StringIO(), stderr=err) == 2
    assert words in err.getvalue()


def test_matching_is_one_to_one_and_needs_iou_half() -> None:
    truth = np.array([[0, 0, 10, 10], [20, 0, 30, 10]], float)
    pred = np.array([[0, 0, 10, 10], [1, 0, 11, 10], [20, 0, 26, 10], [40, 40, 50, 50]], float)
    assert match_boxes(pred, truth) == [(0, 0), (2, 1)]  # the second box of corner 0 is a duplicate
    assert match_boxes(pred[[3]], truth) == []


@pytest.mark.parametrize("angle", [30, 90, 135, 180])
def test_turned_labels_follow_the_content(angle: int) -> None:
    """A white block turned with the photo stays inside its turned label, whose area grows by at
    most the ellipse's bound and which is exact at 90 and 180 degrees."""
    img = np.zeros((60, 80, 3), np.uint8)
    img[10:30, 50:62] = 255
    turned, boxes = turn_photo(img, np.array([[50, 10, 62, 30]], float), angle)
    ys, xs = np.nonzero(turned[..., 0] > 127)
    x0, y0, x1, y1 = boxes[0]
    centre = ((xs.min() + xs.max() + 1) / 2, (ys.min() + ys.max() + 1) / 2)
    assert abs((x0 + x1) / 2 - centre[0]) < 1.5 and abs((y0 + y1) / 2 - centre[1]) < 1.5
    if angle % 90 == 0:
        assert (round(x1 - x0), round(y1 - y0)) == ((12, 20) if angle % 180 == 0 else (20, 12))
    else:
        ink_area = (xs.max() - xs.min() + 1) * (ys.max() - ys.min() + 1)
        assert 0.5 * ink_area < (x1 - x0) * (y1 - y0) < ink_area


def test_set_score_separates_locating_from_naming() -> None:
    photos = [PhotoScore(10, 8, 6, frozenset({"AS", "KH"}), frozenset({"AS", "KH", "2C"}), False, True, 0.2, False),
              PhotoScore(2, 2, 2, frozenset({"QS"}), frozenset({"QS"}), True, None, 0.1),
              PhotoScore(0, 0, 0, frozenset(), frozenset(), None, False, 0.0, True)]
    s = SetScore.from_photos("tiny", photos)
    assert (s.corners, s.locate_recall, s.classify_accuracy) == (12, 10 / 12, 0.8)
    assert (round(s.card_precision, 3), round(s.card_recall, 3)) == (1.0, 0.75)
    assert (s.multiset_rate, s.multiset_photos, s.verdict_accuracy, s.verdict_photos) == (0.5, 2, 0.5, 2)
    assert (s.finishing_read_right, s.finishing_photos) == (0.0, 1), "the finishing hand was misread"
    assert s.ms_per_image == pytest.approx(100.0)
    assert "0.500 (1/2); finishing 0/1" in markdown_table([s])


def test_declared_hands_are_seven_melds_some_invalid() -> None:
    from scorer import get_rules, parse_card
    from scorer.declare import check_grouping
    verdicts = []
    for i in range(12):
        melds, tiplu = declared_hand(np.random.default_rng(i))
        assert [len(m) for m in melds] == [3] * 7
        verdicts.append(check_grouping([[parse_card(c) for c in m] for m in melds], get_rules("nepali"),
                                       tiplu=parse_card(tiplu)).valid)
    assert True in verdicts and False in verdicts


def test_shipped_model_on_a_held_out_scene_and_the_command(tmp_path: Path) -> None:
    """Real model, real renders: a whole-table scene is scored, then the command writes its files."""
    from vision.detector import CardDetector
    image, truth = next(iter(table_scenes("proc-gold-on-black", 1)))
    assert image.shape == (960, 1280, 3) and isinstance(truth, Truth) and truth.valid is not None
    score = score_photo(CardDetector(), image, truth)
    assert score.corners == len(truth.names) > 20 and 0 <= score.named_right <= score.located <= score.corners
    from io import StringIO

    from web.cli import main
    out, err = StringIO(), StringIO()
    args = ["report", "--no-webcam", "--real-val", str(REAL), "--max-real", "2", "--angles", "0", "90", "--scenes", "1",
            "--far-scenes", "1", "--webcam-scenes", "2", "--designs", "proc-gold-on-black", "--no-samples",
            "--out", str(tmp_path)]
    assert main(args, stdout=out, stderr=err) == 0, err.getvalue()
    assert out.getvalue().startswith("| set | photos |")
    report = json.loads((tmp_path / "report.json").read_text())
    assert [s["name"] for s in report["sets"]] == ["real val 0°", "real val 90°", "table proc-gold-on-black",
                                                  "far table proc-gold-on-black",
                                                  "webcam fans and stacks proc-gold-on-black"]
    assert report["sets"][-2]["images"] == 1 and report["meta"]["far_scenes"] == 1
    assert report["sets"][-1]["images"] == 2 and report["meta"]["webcam_scenes"] == 2
    assert (tmp_path / "report.md").read_text().startswith("| set | photos |")
    model_json = tmp_path / "model.json"
    model_json.write_text(json.dumps({"format": "tiplu-corners-v1", "metrics": {"version": "x", "report": {
        "samples": {"card_f1": 1.0}, "real_val_0deg": {"card_f1": 0.5}}}}))
    args = ["report", "--no-webcam", "--real-val", str(REAL), "--max-real", "2", "--angles", "0", "--scenes", "0",
            "--far-scenes", "0", "--webcam-scenes", "0", "--no-samples", "--write-metrics", str(model_json)]
    assert main(args, stdout=out, stderr=err) == 0, err.getvalue()
    metrics = json.loads(model_json.read_text())["metrics"]
    assert metrics["version"] == "x" and metrics["report"]["samples"] == {"card_f1": 1.0}
    assert set(metrics["report"]["real_val_0deg"]) == {"locate_recall", "classify_accuracy", "card_precision",
                                                       "card_recall", "card_f1"}
    assert metrics["report"]["real_val_0deg"]["card_f1"] == report["sets"][0]["card_f1"]
    assert main(["report", "--real-val", str(tmp_path / "nothing")], stdout=out, stderr=err) == 2
    assert err.getvalue().startswith("tiplu report: ")


def test_fresh_tables_are_other_scenes_in_a_row_of_their_own(tmp_path: Path) -> None:
    """Tables no model was chosen on (session 22): their own row, other renders than seed 0's."""
    base = ["report", "--no-webcam", "--angles", "--scenes", "1", "--far-scenes", "0", "--webcam-scenes", "0",
            "--designs", "proc-gold-on-black", "--no-samples"]
    out, err = StringIO(), StringIO()
    assert main([*base, "--fresh-seeds", "1", "2", "--out", str(tmp_path)], stdout=out, stderr=err) == 0, err.getvalue()
    sets = json.loads((tmp_path / "report.json").read_text())["sets"]
    assert [(s["name"], s["images"]) for s in sets] == [("table proc-gold-on-black", 1),
                                                         ("fresh table proc-gold-on-black", 2)]
    seed0, = (img for img, _ in table_scenes("proc-gold-on-black", 1, 0))
    fresh = [img for s in (1, 2) for img, _ in table_scenes("proc-gold-on-black", 1, s)]
    assert not any(np.array_equal(seed0, img) for img in fresh) and not np.array_equal(*fresh)
    err = StringIO()
    assert main([*base, "--fresh-seeds", "0", "1"], stdout=StringIO(), stderr=err) == 2
    assert "--fresh-seeds must leave out --seed 0" in err.getvalue()


def test_webcam_framing_lays_a_tight_hand_of_13_and_tunnela_stacks_in_a_small_frame() -> None:
    """Issue #52's misses, rendered: a 640x480 frame holding a fan of 13 (one index showing per card, most of
    them) and then tunnela stacks (copies of one card, each copy's index showing), corners of webcam size."""
    fan, stacks = table_scenes("nicu-white", 2, 0, framing=WEBCAM)
    for image, truth in (fan, stacks):
        sides = np.maximum(truth.boxes[:, 2] - truth.boxes[:, 0], truth.boxes[:, 3] - truth.boxes[:, 1])
        assert image.shape == (480, 640, 3) and 12 <= float(np.median(sides)) <= 45
    assert len(fan[1].cards) == 13 == len(set(fan[1].cards))
    copies = Counter(stacks[1].names)
    assert max(copies.values()) >= 2  # a stack shows each copy's index
    assert [img.shape for img, _ in table_scenes("nicu-white", 1, 0)] == [(960, 1280, 3)]  # the tables as before
