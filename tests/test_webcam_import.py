"""``tiplu train import-photos``: a source's photos become corner-index labels with their credit,
and the report reads them as the webcam row. Tiny synthetic fixtures, no network."""

from __future__ import annotations

import csv
import json
import shutil
from io import StringIO
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.training.data.dataset import iter_samples
from vision.training.data.photo_import import CARD_DETECTION_URL, Source, card_outline, import_photos
from web.cli import main

REAL = Path(__file__).resolve().parent / "data" / "real_val"
CREDIT = ["--name", "fixture", "--url", "https://example.org/fixture", "--licence", "CC0-1.0",
          "--author", "tiplu tests", "--camera", "webcam"]


def drawn_card(tmp_path: Path, *, polygon: bool) -> Path:
    """A YOLO folder of one 640x480 frame: a white card on green cloth with an inked "7" and a pip in
    its top-left and bottom-right corners, labelled as a whole card (class ``7h``)."""
    frame = np.full((480, 640, 3), (40, 110, 40), np.uint8)
    x0, y0, x1, y1 = 220, 90, 420, 370  # a 200x280 card, upright
    cv2.rectangle(frame, (x0, y0), (x1, y1), (250, 250, 250), -1)
    for flip in (False, True):
        card = frame[y0:y1, x0:x1]
        view = card[::-1, ::-1] if flip else card
        patch = np.ascontiguousarray(view)
        cv2.putText(patch, "7", (8, 34), cv2.FONT_HERSHEY_SIMPLEX, 1.1, (30, 30, 200), 3)
        cv2.circle(patch, (20, 52), 9, (30, 30, 200), -1)
        card[:] = patch[::-1, ::-1] if flip else patch
    root = tmp_path / "source"
    (root / "images").mkdir(parents=True)
    (root / "labels").mkdir()
    cv2.imwrite(str(root / "images" / "frame_001.png"), frame)
    (root / "images" / "frame_002.png").write_bytes((root / "images" / "frame_001.png").read_bytes())
    (root / "classes.txt").write_text("BACK\n7h\n")
    if polygon:
        label = f"1 {x0 / 640} {y0 / 480} {x1 / 640} {y0 / 480} {x1 / 640} {y1 / 480} {x0 / 640} {y1 / 480}\n"
    else:
        label = f"1 {(x0 + x1) / 1280} {(y0 + y1) / 960} {(x1 - x0) / 640} {(y1 - y0) / 480}\n"
    (root / "labels" / "frame_001.txt").write_text(label)
    (root / "labels" / "frame_002.txt").write_text("0 0.5 0.5 0.1 0.1\n")  # a card back only: nothing to read
    return root


@pytest.mark.parametrize("polygon", [False, True])
def test_card_outlines_become_two_corner_index_boxes(tmp_path: Path, polygon: bool) -> None:
    """Each outlined card gives the boxes of its two inked indices, in the card's top-left and
    bottom-right corners, named by the source's class; a photo with no card is skipped."""
    src = drawn_card(tmp_path, polygon=polygon)
    counts = import_photos(src, tmp_path / "val", Source("fixture", "https://example.org/f", "CC0-1.0", "t",
                                                         "webcam"), labels="cards")
    assert counts == {"photos": 1, "corners": 2, "skipped": 1}
    sample, = iter_samples(tmp_path / "val")
    assert sample.image.name == "fixture__frame_001.png"
    top, bottom = sorted(sample.boxes, key=lambda b: b.y1)
    assert {top.name, bottom.name} == {"7H"}
    # the inked index is about 8..40 px x 10..62 px inside each 200x280 card corner
    assert 220 <= top.x1 * 640 <= 232 and 245 <= top.x2 * 640 <= 275 and 90 <= top.y1 * 480 <= 105
    assert 145 <= top.y2 * 480 <= 175
    assert 365 <= bottom.x1 * 640 <= 395 and 408 <= bottom.x2 * 640 <= 420 and 355 <= bottom.y2 * 480 <= 370


def test_outline_of_a_turned_polygon_keeps_its_corners() -> None:
    square = [0.1, 0.1, 0.3, 0.1, 0.3, 0.4, 0.1, 0.4]
    got = card_outline(square, 100, 100)
    assert sorted(map(tuple, got.round().tolist())) == [(10, 10), (10, 40), (30, 10), (30, 40)]


def test_corner_labels_are_copied_with_a_manifest_row_each(tmp_path: Path) -> None:
    """``--labels corners`` copies the source's corner boxes (classes by name) and credits every photo;
    importing again replaces the rows instead of adding them."""
    for _ in range(2):
        out, err = StringIO(), StringIO()
        assert main(["train", "import-photos", str(REAL), str(tmp_path / "val"), *CREDIT], stdout=out,
                    stderr=err) == 0, err.getvalue()
    counts = json.loads(out.getvalue().replace("'", '"'))
    source = [s for s in iter_samples(REAL) if s.boxes]
    assert counts == {"photos": len(source), "corners": sum(len(s.boxes) for s in source), "skipped": 0}
    written = {s.image.name: s for s in iter_samples(tmp_path / "val")}
    for s in source:
        got = written[f"fixture__{s.image.name}"].boxes
        assert [b.name for b in got] == [b.name for b in s.boxes]
        assert np.allclose([(b.x1, b.y1, b.x2, b.y2) for b in got], [(b.x1, b.y1, b.x2, b.y2) for b in s.boxes],
                           atol=1e-5)
    with open(tmp_path / "val" / "manifest.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(source)
    assert {(r["licence"], r["author"], r["camera"], r["labels"]) for r in rows} == {
        ("CC0-1.0", "tiplu tests", "webcam", "corners")}


@pytest.mark.parametrize("change, words", [
    (["--url", "https://github.com/MrKeSuu/bidly"], "independent checks"),
    (["--name", "poker-cards-cxcvz"], "independent checks"),
    (["--licence", "unknown"], "clear licence"),
])
def test_forbidden_sources_and_unclear_licences_are_refused(tmp_path: Path, change: list[str], words: str) -> None:
    err = StringIO()
    assert main(["train", "import-photos", str(REAL), str(tmp_path / "val"), *CREDIT, *change], stdout=StringIO(),
                stderr=err) == 2
    assert words in err.getvalue() and not (tmp_path / "val").exists()


def test_the_report_reads_the_webcam_val_as_a_row_of_its_own(tmp_path: Path) -> None:
    """``tiplu report --webcam-val`` adds a "webcam val" row with stage-1 recall, naming accuracy, card
    F1 and exact photos (distinct cards read = distinct cards labelled), and names the folder in its meta."""
    assert main(["train", "import-photos", str(REAL), str(tmp_path / "val"), *CREDIT], stdout=StringIO(),
                stderr=StringIO()) == 0
    out, err = StringIO(), StringIO()
    args = ["report", "--angles", "--webcam-val", str(tmp_path / "val"), "--scenes", "0", "--far-scenes", "0",
            "--webcam-scenes", "0", "--no-samples", "--out", str(tmp_path / "report")]
    assert main(args, stdout=out, stderr=err) == 0, err.getvalue()
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    row, = report["sets"]
    assert row["name"] == "webcam val" and row["images"] == len([s for s in iter_samples(REAL) if s.boxes])
    assert row["multiset_photos"] == row["images"] and row["multiset_rate"] is not None
    assert 0 < row["locate_recall"] <= 1 and 0 < row["card_f1"] <= 1
    assert report["meta"]["webcam_val"] == str(tmp_path / "val")
    assert "| webcam val |" in out.getvalue()


WEBCAM = Path(__file__).resolve().parent / "data" / "webcam_val"


def test_the_shared_folders_come_in_with_their_credit_and_the_rest_of_their_source_stays_out(tmp_path: Path) -> None:
    """The project's shared cards-webcam-dev is let in by its folder name, credited without options; the
    same publication under any other folder is refused, and so is a shared name with half a credit."""
    shared = tmp_path / "cards-webcam-dev"
    shutil.copytree(WEBCAM, shared)
    out, err = StringIO(), StringIO()
    assert main(["train", "import-photos", str(shared), str(tmp_path / "val")], stdout=out, stderr=err) == 0, \
        err.getvalue()
    rows = list(csv.DictReader(open(tmp_path / "val" / "manifest.csv")))
    assert len(rows) == 3 and {(r["licence"], r["camera"]) for r in rows} == {("CC-BY-4.0", "webcam")}
    assert all("card-detection-zk7wu" in r["url"] and "cadyzedevelopmenthub" in r["author"] for r in rows)
    other = tmp_path / "more-frames"
    shutil.copytree(WEBCAM, other)
    credit = ["--name", "more", "--url", CARD_DETECTION_URL, "--licence", "CC-BY-4.0", "--author", "x",
              "--camera", "webcam"]
    err = StringIO()
    assert main(["train", "import-photos", str(other), str(tmp_path / "other"), *credit], stdout=StringIO(),
                stderr=err) == 2
    assert "independent checks" in err.getvalue() and not (tmp_path / "other").exists()
    err = StringIO()
    assert main(["train", "import-photos", str(other), str(tmp_path / "other"), "--name", "more"],
                stdout=StringIO(), stderr=err) == 2
    assert "--url" in err.getvalue()


def test_the_webcam_row_counts_name_swaps_and_wrong_cards_shown_as_sure(tmp_path: Path) -> None:
    """On real webcam frames the row names its commonest swaps (labelled -> read) and counts the wrong
    cards the reading showed as sure; the same figures reach report.json and the markdown table."""
    out, err = StringIO(), StringIO()
    args = ["report", "--angles", "--webcam-val", str(WEBCAM), "--scenes", "0", "--far-scenes", "0",
            "--webcam-scenes", "0", "--no-samples", "--out", str(tmp_path / "report")]
    assert main(args, stdout=out, stderr=err) == 0, err.getvalue()
    row, = json.loads((tmp_path / "report" / "report.json").read_text())["sets"]
    assert row["name"] == "webcam val" and row["images"] == 3
    assert 0 <= row["wrong_sure"] <= row["wrong_cards"]
    for labelled, read, count in row["swaps"]:
        assert labelled != read and count >= 1
    assert f"| {row['wrong_sure']}/{row['wrong_cards']} |" in out.getvalue()
    if row["swaps"]:
        assert f"{row['swaps'][0][0]} read as {row['swaps'][0][1]}" in out.getvalue()
