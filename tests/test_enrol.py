"""Enrolment: the 13 cards of a suit photo found, named by place, their corners cut; then
``tiplu enrol`` learns the design and writes a model folder that the detector loads.

The photos are composed from a design's rendered faces (the held-out nicu-white when its
package is installed, else an OpenCV-drawn deck) by :func:`compose_suit_photo`, laid
5-5-3 and a little turned on a felt-like table; the shipped classifier reads the corners
that were cut. The enrolment run here is tiny (1 epoch, 2 crops per index): it checks the
whole path, not the accuracy (that is measured in the model card).
"""

from __future__ import annotations

import json
import re
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision.calibration import CALIBRATION_FIELDS, Calibration
from vision.detector import INFO_FILE, MODELS_DIR, CardDetector, load_detector, model_crop_size
from vision.enrolment import EnrolError, card_names, find_cards
from vision.training.fit.enrol import (corner_crops, correction_crops, improve, read_enrolment, table_crops,
                                   tuned_networks)
from web.cli import main
from web_support import suit_photos as make_suit_photos, write_suit_photos

#: Share of the enrolment corners the shipped classifier must name right (nicu-white: 89 of 104).
CLASSIFIED_FLOOR = 0.85
#: Scenes the tiny enrolment recalibrates doubt on (3 to choose, 3 to test).
CALIBRATION_SCENES = 6
#: The shipped model's version, which enrolment and the crops record as their origin.
SHIPPED_VERSION = json.loads((MODELS_DIR / "model.json").read_text())["metrics"]["version"]


@pytest.fixture(scope="module")
def suit_photos() -> list[tuple[str, np.ndarray, list[tuple[float, float]]]]:
    return make_suit_photos()


def test_the_cards_are_found_in_reading_order(suit_photos: list[tuple[str, np.ndarray, list[tuple[float, float]]]]) -> None:
    for suit, photo, centres in suit_photos:
        found = find_cards(photo, suit, f"{suit}.jpg")
        assert [c.card for c in found] == card_names(suit)
        for card, (cx, cy) in zip(found, centres):
            x, y = np.mean(card.outline, axis=0)
            assert abs(x - cx) < 20 and abs(y - cy) < 20, f"{card.card} found at {x:.0f},{y:.0f}, laid at {cx:.0f},{cy:.0f}"


def test_the_shipped_classifier_reads_the_corners_cut(suit_photos: list[tuple[str, np.ndarray, list[tuple[float, float]]]]) -> None:
    detector = CardDetector()
    crops, wanted = [], []
    for suit, photo, _ in suit_photos:
        for card in find_cards(photo, suit):
            for crop in corner_crops(photo, card.outline, model_crop_size(MODELS_DIR)):
                crops.append(crop)
                wanted.append(card.card)
    probs = detector.classify_crops(np.stack(crops))
    named = [detector.classes[k] if k < len(detector.classes) else None for k in probs.argmax(axis=1)]
    right = sum(a == b for a, b in zip(named, wanted))
    print(f"\nenrolment corners named by the shipped classifier: {right} of {len(wanted)}")
    assert right >= CLASSIFIED_FLOOR * len(wanted)


def test_a_photo_without_13_cards_is_refused_by_name(suit_photos: list[tuple[str, np.ndarray, list[tuple[float, float]]]]) -> None:
    suit, photo, _ = suit_photos[3]
    with pytest.raises(EnrolError, match=r"^clubs.jpg: \d+ cards found, 13 needed: lay out the clubs A to K"):
        find_cards(photo[:, :700], suit, "clubs.jpg")
    with pytest.raises(EnrolError, match=r"^blank.jpg: 0 cards found"):
        find_cards(np.full((480, 640, 3), 200, np.uint8), "S", "blank.jpg")
    with pytest.raises(EnrolError, match="suit 'X'"):
        find_cards(photo, "X", "clubs.jpg")


SuitPhotos = list[tuple[str, np.ndarray, list[tuple[float, float]]]]


def tiplu(*argv: object) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def photo_files(suit_photos: SuitPhotos, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The four suit photos as JPEG files, in enrolment order, then a jokers photo."""
    return write_suit_photos(tmp_path_factory.mktemp("enrol-photos"), suit_photos)


@pytest.fixture(scope="module")
def enrolled(photo_files: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    """A tiny enrolment run through the CLI: the model folder, its JSON summary and its stderr."""
    pytest.importorskip("torch")
    out = tmp_path_factory.mktemp("enrolled") / "grandma"
    code, stdout, stderr = tiplu("enrol", "--out", out, "--epochs", 1, "--copies", 2, "--jokers", photo_files[4],
                                 "--calibration-scenes", CALIBRATION_SCENES, "--json", *photo_files[:4])
    assert code == 0, stderr
    return out, json.loads(stdout), stderr


def test_enrol_reports_the_cards_found_per_photo_and_the_time(enrolled: tuple[Path, dict, str],
                                                             photo_files: list[Path]) -> None:
    out, summary, stderr = enrolled
    assert [(p["photo"], p["shows"], len(p["cards"])) for p in summary["photos"]] == [
        (str(photo_files[0]), "spades", 13), (str(photo_files[1]), "hearts", 13),
        (str(photo_files[2]), "diamonds", 13), (str(photo_files[3]), "clubs", 13), (str(photo_files[4]), "jokers", 2)]
    assert summary["photos"][2]["cards"] == card_names("D")
    assert summary["design"] == "grandma" and summary["epochs"] == 1 and summary["crops"] > 54 * 2 * 2
    assert 0 < summary["seconds"] < 600
    networks = tuned_networks(MODELS_DIR)
    assert f"epoch {networks}/{networks} loss" in stderr, "each fine-tuned stage-2 network's epochs are counted"


def test_the_enrolled_folder_is_a_model_the_detector_and_the_cli_load(enrolled: tuple[Path, dict, str],
                                                                      suit_photos: SuitPhotos) -> None:
    out, summary, _ = enrolled
    info = json.loads((out / INFO_FILE).read_text())
    assert info["format"] == "tiplu-corners-v1" and info["enrolled"]["design"] == "grandma"
    assert info["enrolled"]["crops"] == summary["crops"] and info["enrolled"]["base_version"] == SHIPPED_VERSION
    assert (out / "corners.onnx").read_bytes() == (MODELS_DIR / "corners.onnx").read_bytes()
    members = json.loads((MODELS_DIR / INFO_FILE).read_text()).get("classifiers", ["corner_classifier.onnx"])
    assert info.get("classifiers", ["corner_classifier.onnx"]) == members, "as many networks as the base"
    tuned = tuned_networks(MODELS_DIR)
    for k, member in enumerate(members):
        same = (out / member).read_bytes() == (MODELS_DIR / member).read_bytes()
        assert same == (k >= tuned), f"{member}: the first {tuned} fine-tuned, the rest kept as the base has them"
    detector = load_detector(out)
    assert isinstance(detector, CardDetector)
    suit, photo, _ = suit_photos[0]
    size = model_crop_size(MODELS_DIR)
    crops = np.stack([crop for card in find_cards(photo, suit) for crop in corner_crops(photo, card.outline, size)])
    assert detector.classify_crops(crops).shape == (26, 54)
    cv2.imwrite(str(out.parent / "spades.png"), photo)
    code, stdout, stderr = tiplu("detect", "--model", out, out.parent / "spades.png")
    assert code == 0, stderr
    assert json.loads(stdout.splitlines()[0])["corners"]


def test_enrol_recalibrates_doubt_on_scenes_of_its_own_deck(enrolled: tuple[Path, dict, str]) -> None:
    """The thresholds were chosen on a calibration half of the deck's own scenes and measured on a test half
    (another seed), beside the base model's thresholds on that same half; ``tiplu detect`` uses them."""
    out, summary, stderr = enrolled
    base = json.loads((MODELS_DIR / INFO_FILE).read_text())["calibration"]
    calibration = json.loads((out / INFO_FILE).read_text())["calibration"]
    assert summary["calibration_scenes"] == CALIBRATION_SCENES
    terms = "" if base["doubt_score"].get("terms", "linear") == "linear" else " and their products"
    assert calibration["method"].startswith(f"doubt score (logistic regression over 8 features{terms}) kept from "
                                            "the base model")
    assert calibration["doubt_score"]["weights"] == base["doubt_score"]["weights"], "weights kept, level chosen"
    assert calibration["doubt_score"]["terms"] == base["doubt_score"]["terms"]
    assert (calibration["uncertain_below"], calibration["alternative_above"]) == (0.0, 1.0)
    (chosen_on, chosen), = calibration["calibration_splits"].items()
    (tested_on, tested), = calibration["test_splits"].items()
    assert chosen_on.startswith("grandma/") and tested_on.startswith("grandma/") and chosen_on != tested_on
    assert not set(calibration["calibration_splits"]) & set(base["calibration_splits"])
    assert not set(calibration["test_splits"]) & set(base["test_splits"])
    assert chosen["photos"] == CALIBRATION_SCENES // 2 and tested["photos"] == CALIBRATION_SCENES // 2
    assert chosen["cards"] > 0 and tested["cards"] > 0
    assert tested["before"] == scores_with(out, tested_on, base)
    for name in CALIBRATION_FIELDS:
        assert 0 <= calibration[name] <= 1
    assert ((calibration["named_above"], calibration["named_floor"], calibration["vouched_above"])
            == (base["named_above"], base["named_floor"], base["vouched_above"]))
    assert Calibration.from_model_json({"calibration": calibration}) == load_detector(out).calibration
    assert "recalibrating doubt: 6/6 scenes read" in stderr and "doubt recalibrated: doubt score from" in stderr


def scores_with(model: Path, split: str, calibration: dict[str, Any]) -> dict[str, float]:
    """The test half rendered again (the same seed gives the same scenes) and read with ``model``, scored with
    ``calibration``: what the enrolment's "before" figures must be."""
    import tempfile

    from vision.training.measure.calibrate import read_split, reading_calibration, scores
    from vision.training.fit.enrol import enrolled_decks, read_enrolment, write_scenes

    info = json.loads((model / INFO_FILE).read_text())["enrolled"]
    _, faces = read_enrolment([Path(p["photo"]) for p in info["photos"][:4]], Path(info["photos"][4]["photo"]))
    seed = int(split.rsplit("seed", 1)[1])
    with tempfile.TemporaryDirectory() as folder:
        write_scenes(enrolled_decks(faces), Path(folder), range(CALIBRATION_SCENES // 2), seed)
        detector = load_detector(model)
        cases = read_split(Path(folder), detector, reading=reading_calibration(detector))
    return scores(cases, Calibration.from_model_json({"calibration": calibration}))


def test_improving_an_enrolled_deck_recalibrates_it_too(enrolled: tuple[Path, dict, str], photo_files: list[Path],
                                                        suit_photos: SuitPhotos, tmp_path: Path) -> None:
    out, _, _ = enrolled
    suit, photo, _ = suit_photos[1]
    size = model_crop_size(MODELS_DIR)
    crops = [crop for card in find_cards(photo, suit)[:2] for crop in corner_crops(photo, card.outline, size)]
    improve(out, tmp_path / "v2", crops, ["AH", "AH", "2H", "2H"], suit_photos=photo_files[:4], epochs=1,
            copies=1, correction_copies=2, calibration_scenes=2)
    calibration = json.loads((tmp_path / "v2" / INFO_FILE).read_text())["calibration"]
    assert list(calibration["calibration_splits"]) == ["grandma/scenes-seed1001"]
    assert calibration["calibration_splits"]["grandma/scenes-seed1001"]["photos"] == 1
    assert calibration["test_splits"]["grandma/scenes-seed2002"]["photos"] == 1  # not the enrolment's 3: its own


@pytest.mark.parametrize("scenes", ["1", "-2", "many"])
def test_bad_calibration_scenes_exit_2(scenes: str, photo_files: list[Path], tmp_path: Path) -> None:
    code, stdout, stderr = tiplu("enrol", "--out", tmp_path / "deck", f"--calibration-scenes={scenes}",
                                 *photo_files[:4])
    assert code == 2 and stdout == ""
    assert ("give 0 (keep the base model's calibration) or at least 2" in stderr
            or "--calibration-scenes: invalid int value: 'many'" in stderr), stderr
    assert not (tmp_path / "deck").exists()


@pytest.mark.parametrize("bad, message", [
    ("six", r"six.jpg: \d+ cards found, 13 needed: lay out the hearts A to K"),
    ("missing", r"missing.jpg: no such file"),
    ("text", r"text.jpg: not an image OpenCV can read"),
])
def test_a_bad_photo_exits_2_naming_it(bad: str, message: str, photo_files: list[Path], suit_photos: SuitPhotos,
                                       tmp_path: Path) -> None:
    path = tmp_path / f"{bad}.jpg"
    if bad == "six":
        cv2.imwrite(str(path), suit_photos[1][1][:, :700])
    elif bad == "text":
        path.write_text("not a photo")
    code, stdout, stderr = tiplu("enrol", "--out", tmp_path / "deck", photo_files[0], path, *photo_files[2:4])
    assert code == 2 and stdout == ""
    assert re.search(r"^tiplu enrol: .*" + message, stderr), stderr
    assert not (tmp_path / "deck").exists()
    if bad == "six":  # what was seen, and the photo with the cards found outlined, beside the (unwritten) folder
        assert "What was seen: some cards are cut off at the photo's edge: get the whole suit in the frame." in stderr
        saved = tmp_path / "deck-failed-six.jpg"
        assert f"The photo with the cards found outlined: {saved}" in stderr
        shown = cv2.imread(str(saved))
        assert shown is not None and shown.shape[1] == 700
        assert (np.abs(shown.astype(int) - cv2.imread(str(path)).astype(int)).max(axis=2) > 60).mean() > 0.002


def test_bad_enrolment_arguments_exit_2(photo_files: list[Path], tmp_path: Path) -> None:
    code, _, stderr = tiplu("enrol", "--out", tmp_path / "deck", *photo_files[:3])
    assert code == 2 and "the following arguments are required: CLUBS" in stderr
    code, _, stderr = tiplu("enrol", "--out", MODELS_DIR, *photo_files[:4])
    assert code == 2 and "that is the base model's folder" in stderr
    code, _, stderr = tiplu("enrol", "--out", tmp_path / "deck", "--jokers", photo_files[0], *photo_files[:4])
    assert code == 2 and "13 cards found, 1 to 6 jokers needed" in stderr
    code, _, stderr = tiplu("enrol", "--out", tmp_path / "deck", "--table-scenes", -1, *photo_files[:4])
    assert code == 2 and "table scenes (-1) at least 0" in stderr and "Traceback" not in stderr


def test_enrol_can_fine_tune_the_corner_finder_too(photo_files: list[Path], tmp_path: Path) -> None:
    """``--detector-epochs``: stage 1 trained on scenes of the enrolled cards, exported to ONNX, JSON still clean."""
    pytest.importorskip("ultralytics")
    out = tmp_path / "deck"
    code, stdout, stderr = tiplu("enrol", "--out", out, "--epochs", 1, "--copies", 1, "--detector-epochs", 1,
                                 "--scenes", 4, "--calibration-scenes", 0, "--json", *photo_files[:4])
    assert code == 0, stderr
    base = json.loads((MODELS_DIR / INFO_FILE).read_text())["calibration"]
    assert json.loads((out / INFO_FILE).read_text())["calibration"] == base  # 0: the base calibration kept
    assert "recalibrating" not in stderr
    assert json.loads(stdout)["epochs"] == 1 and "detector epoch 1/1 loss" in stderr
    assert json.loads((out / INFO_FILE).read_text())["enrolled"]["detector_epochs"] == 1
    assert (out / "corners.onnx").read_bytes() != (MODELS_DIR / "corners.onnx").read_bytes()
    photo = cv2.imread(str(photo_files[0]))
    for size in (320, 640):  # exported with a dynamic input size, as the app needs
        assert isinstance(load_detector(out, imgsz=size).detect(photo), list)


def test_stage_one_boxes_on_tables_of_the_deck_are_cut_as_crops(photo_files: list[Path], tmp_path: Path) -> None:
    """:func:`table_crops`: the shipped stage 1's boxes on two tables of the enrolled cards, named by the
    scenes' labels (cards of this deck) or "not a corner", at the classifier's size; the same seed, the same crops."""
    _, faces = read_enrolment(photo_files[:4], photo_files[4], "grandma")
    seen: list[tuple[int, int]] = []
    crops, labels = table_crops(MODELS_DIR, faces, 2, tmp_path / "a", progress=lambda done, n: seen.append((done, n)))
    assert seen == [(1, 2), (2, 2)]
    width, height = model_crop_size(MODELS_DIR)
    assert crops.shape[1:] == (height, width, 3) and len(crops) == len(labels) >= 10
    classes = CardDetector().classes
    deck = {face.card for face in faces}
    named = {classes[k] for k in labels if k < len(classes)}
    assert named and named <= deck, named - deck
    again, again_labels = table_crops(MODELS_DIR, faces, 2, tmp_path / "b")
    assert np.array_equal(again, crops) and np.array_equal(again_labels, labels)


def test_without_the_train_extra_enrol_says_what_to_install(photo_files: list[Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # what a core-only install sees: import torch fails
    code, _, stderr = tiplu("enrol", "--out", tmp_path / "deck", *photo_files[:4])
    assert code == 2 and "needs the train extra (torch is missing), a few GB to download: .venv/bin/pip install -e '.[train]'" in stderr


def test_report_enrol_teaches_a_design_on_a_cloth_and_measures_its_tables_before_and_after(tmp_path: Path) -> None:
    """``tiplu report --enrol``'s rows: the design's suit photos on a striped cloth found, enrolled, its tables
    read before and after, then reviewed tables corrected and the deck improved from them."""
    pytest.importorskip("torch")
    from vision.training.measure.enrol_report import enrolled_rows
    rows = enrolled_rows(None, ["proc-gold-on-black"], tmp_path, scenes=2, epochs=1, copies=2, calibration_scenes=0,
                         corrections=2, cloths=["stripes"])
    assert [r.name for r in rows][0] == "enrol proc-gold-on-black: before (4/4 suit photos found)"
    assert rows[1].name.startswith("enrol proc-gold-on-black: enrolled on stripes in ")
    assert all(r.images == 2 and r.corners > 0 and 0 <= r.card_f1 <= 1 for r in rows)
    photos = sorted(p.name for p in (tmp_path / "proc-gold-on-black" / "photos").iterdir())
    assert photos == ["clubs.jpg", "diamonds.jpg", "hearts.jpg", "jokers.jpg", "spades.jpg"]  # the design has a joker
    info = json.loads((tmp_path / "proc-gold-on-black" / "model" / INFO_FILE).read_text())
    assert info["enrolled"]["design"] == "proc-gold-on-black" and info["enrolled"]["epochs"] == 1
    if len(rows) == 3:  # one epoch on 2 copies misreads some card of the 2 reviewed tables, or doubts it
        assert re.fullmatch(r"enrol proc-gold-on-black: \+ \d+ crops corrected on 2 reviewed tables", rows[2].name)
        corrected = json.loads((tmp_path / "proc-gold-on-black" / "corrected" / INFO_FILE).read_text())
        assert corrected["enrolled"]["corrected_crops"] == int(rows[2].name.split()[3])


def test_a_review_keeps_the_wrong_and_the_doubtful_cards_with_their_right_names() -> None:
    """What the report's "corrected" row learns from: each card read wrong gets its right name, a right and
    sure card gives nothing."""
    from vision.detector import load_detector
    from vision.training.measure.enrol_report import review_corrections
    from vision.training.measure.report import Truth, table_scenes

    detector = load_detector()
    image, truth = next(table_scenes("proc-gold-on-black", 1, 0))
    wrong = Truth(truth.boxes, tuple("AS" if name != "AS" else "KS" for name in truth.names))
    right = review_corrections(detector, image, truth)
    every = review_corrections(detector, image, wrong)
    assert len(every) > len(right), "every card read is now wrong, so each is corrected"
    assert all(crop.shape == (72, 48, 3) for crop, _ in every)
    assert {name for _, name in every} <= {"AS", "KS"}


def test_report_enrol_names_an_unknown_design(tmp_path: Path) -> None:
    code, _, stderr = tiplu("report", "--angles", "--no-samples", "--designs", "no-such-design", "--enrol",
                            "--scenes", 1)
    assert code == 2 and "no-such-design" in stderr and "Traceback" not in stderr


@pytest.mark.parametrize("size", [(32, 48), (48, 72)])
def test_corrections_are_learnt_at_the_crop_size_of_the_model_they_improve(size: tuple[int, int]) -> None:
    """A correction kept at one size (the review cuts 32x48) trains a classifier that takes another."""
    x, y = correction_crops([np.zeros((48, 32, 3), np.uint8)], ["8H"], copies=2, crop_size=size)
    assert x.shape == (2, size[1], size[0], 3) and len(y) == 2
