"""``tiplu improve MODEL --reviewed DIR --out NEW``: labelled photos reviewed as a family reviews them on the
page, and the page's "Improve from corrections" run on what that review keeps. Real webcam frames
(tests/data/webcam_val), the shipped model, a real fine-tune of one epoch (train extra)."""

from __future__ import annotations

import json
import shutil
from io import StringIO
from pathlib import Path

import pytest

from vision.detector import INFO_FILE, MODELS_DIR, CardDetector, load_detector
from vision.pipeline import read_photo
from vision.training.data.dataset import iter_samples, read_sample
from vision.training.data.review import review_folder, review_reading
from web.cli import main

WEBCAM = Path(__file__).resolve().parent / "data" / "webcam_val"


def tiplu(*argv: object) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_a_review_changes_wrong_cards_deletes_strays_and_adds_the_missed_by_name() -> None:
    """Each card read is judged by the label under it: a wrong name is changed (its crops kept with the right
    name), a card on no label is deleted (no crop), a labelled card never read is added (no crop)."""
    sample = next(s for s in iter_samples(WEBCAM) if s.boxes)
    image, boxes = read_sample(sample)  # type: ignore[misc]
    names = [b.name for b in sample.boxes]
    reading = read_photo(image, load_detector())
    honest = review_reading(image, reading, boxes, names)
    # every label renamed to a card no reading can hold: every card read on a label is now wrong
    renamed = review_reading(image, reading, boxes, ["JOKER"] * len(names))
    on_labels = len(reading.cards) - honest.deleted
    assert renamed.changed == on_labels and set(renamed.cards) == {"JOKER"}
    assert len(renamed.crops) >= on_labels and all(c.shape == (72, 48, 3) for c in renamed.crops)
    # labels moved off every card: each card read is a stray, each labelled card is missed
    far = boxes + 10_000
    strays = review_reading(image, reading, far, names)
    assert strays.deleted == len(reading.cards) and not strays.crops and strays.added == len(set(names))


def test_improve_learns_from_reviewed_webcam_frames_into_a_new_model_folder(tmp_path: Path) -> None:
    out = tmp_path / "improved"
    code, stdout, stderr = tiplu("improve", MODELS_DIR, "--reviewed", WEBCAM, "--out", out, "--epochs", 1, "--json")
    assert code == 0, stderr
    summary = json.loads(stdout)
    review = review_folder(load_detector(), WEBCAM)
    assert summary["review"] == {"photos": 3, "changed": review.changed, "confirmed": review.confirmed,
                                 "deleted": review.deleted, "added": review.added}
    assert summary["corrected_crops"] == len(review.crops) > 0
    # the shipped model has no deck photos to learn again: the drawn decks are, beside the corrections
    assert summary["rehearsal_crops"] > 50 * summary["corrected_crops"]
    assert summary["crops"] == 20 * summary["corrected_crops"] + summary["rehearsal_crops"]
    assert stderr.count("tiplu improve: reviewed ") == 3 and "epoch 1/1" in stderr  # progress as tiplu enrol shows it
    info = json.loads((out / INFO_FILE).read_text())
    assert info["enrolled"]["corrected_crops"] == len(review.crops) and info["metrics"]["version"].endswith("+corrected")
    image, _ = read_sample(next(iter_samples(WEBCAM)))  # type: ignore[misc]
    assert read_photo(image, CardDetector(out)).cards  # the new folder is a model the reader loads


@pytest.mark.parametrize("change, words", [
    (["--out", str(MODELS_DIR)], "model being improved"),
    (["--reviewed", "no/such/folder"], "expected an images/ folder"),
])
def test_improve_says_what_to_fix(change: list[str], words: str, tmp_path: Path) -> None:
    args = ["improve", str(MODELS_DIR), "--reviewed", str(WEBCAM), "--out", str(tmp_path / "new")]
    for flag, value in zip(change[::2], change[1::2]):
        args[args.index(flag) + 1] = value
    code, _, stderr = tiplu(*args)
    assert code == 2 and words in stderr and "Traceback" not in stderr
    assert not (tmp_path / "new").exists()


def test_photos_read_right_and_sure_leave_nothing_to_learn(tmp_path: Path) -> None:
    """A folder whose labels are exactly what the model reads sure gives no crop, and improve says so."""
    folder = tmp_path / "reviewed"
    shutil.copytree(WEBCAM, folder)
    detector = load_detector()
    classes = (folder / "classes.txt").read_text().split()
    for sample in iter_samples(folder):
        image, _ = read_sample(sample)  # type: ignore[misc]
        reading = read_photo(image, detector)
        h, w = image.shape[:2]
        lines = [f"{classes.index(c.card)} {(x1 + x2) / 2 / w} {(y1 + y2) / 2 / h} {(x2 - x1) / w} {(y2 - y1) / h}"
                 for card in reading.cards if not card.uncertain
                 for c in [reading.corners[k] for k in card.corners] for x1, y1, x2, y2 in [c.box]]
        (folder / "labels" / f"{sample.image.stem}.txt").write_text("\n".join(lines) + "\n")
    code, _, stderr = tiplu("improve", MODELS_DIR, "--reviewed", folder, "--out", tmp_path / "new")
    assert code == 2 and "nothing to learn" in stderr and not (tmp_path / "new").exists()
