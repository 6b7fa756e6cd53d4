"""One settings schema for ``model.json``: the shipped values in one dataclass, older folders upgraded,
every pass switchable, and a calibration that knows what it was fitted on.

Real shipped model and real photos; older folders are the shipped files with an older ``model.json``.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from vision import pairing
from vision.detector import MODELS_DIR, CardDetector, ModelError, load_detector
from vision.passes import PhotoContext, input_sizes, photo_passes, read_passes
from vision.pipeline import read_photo, reader_constants, reading_fingerprint
from vision.settings import (BEFORE_SCHEMA_2, PASS_NAMES, SCHEMA, SKIP_NAMES, ReaderSettings, read_settings,
                             read_settings_json, upgrade, write_settings)
from vision.training.measure.report import far_photo
from web_support import shipped_model_files

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = json.loads((MODELS_DIR / "model.json").read_text())


def test_the_shipped_values_stand_in_one_place() -> None:
    """The dataclass's defaults are what ships: the shipped model.json reads as ``ReaderSettings()``."""
    assert SHIPPED["schema"] == SCHEMA
    assert read_settings(MODELS_DIR) == ReaderSettings()
    assert {k: v for k, v in SHIPPED.items() if k in ReaderSettings().to_json()} == ReaderSettings().to_json()


def test_every_setting_is_explained_where_it_is_defined() -> None:
    """Each field of :class:`ReaderSettings` has a ``#:`` comment right above it (as Ultralytics'
    ``cfg/default.yaml`` explains each setting once)."""
    source = (ROOT / "vision" / "settings.py").read_text().splitlines()
    tree = ast.parse("\n".join(source))
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ReaderSettings"]
    fields = [n for n in cls.body if isinstance(n, ast.AnnAssign)]
    assert len(fields) == len(dataclasses.fields(ReaderSettings))
    undocumented = []
    for node in fields:
        above = node.lineno - 2
        while not source[above].strip().startswith("#:"):
            if not source[above].strip().startswith(("#", "crop_w:", "crop_h:")):
                undocumented.append(node.target.id)  # type: ignore[attr-defined]
                break
            above -= 1
    assert undocumented == []


@pytest.mark.parametrize("older, expected", [
    # a folder written before any of the newer keys: one pass at 320, upright 32x48 crops of one network
    ({"imgsz": 320}, {"passes": ("base",), "big_share": 0.5, "crop_w": 32, "crop_h": 48, "crop_turns": (0.0,),
                      "classifiers": ("corner_classifier.onnx",), "orientation": None, "max_imgsz": 320}),
    # the big pass at half the long side
    ({"imgsz": 320, "max_imgsz": 960}, {"passes": ("base", "big"), "big_share": 0.5}),
    # an older spelling of the mirrored view
    ({"imgsz": 320, "mirror_view": True}, {"passes": ("base", "views"), "views": ("mirror",)}),
    ({"imgsz": 320, "mirror_view": False}, {"passes": ("base",), "views": ()}),
    # tiles and windows where the keys said so
    ({"imgsz": 320, "max_imgsz": 960, "tile_below": 18.0, "look_window": 8.0},
     {"passes": ("base", "big", "tiles", "look_around"), "look_size": 320}),
    # the shipped file as it was written before schema 2: every key given, so it reads as shipped
    ({k: v for k, v in SHIPPED.items() if k not in ("schema", "passes")}, dataclasses.asdict(ReaderSettings())),
])
def test_an_older_model_json_reads_as_it_was_measured(older: dict[str, Any], expected: dict[str, Any]) -> None:
    settings = read_settings_json(older)
    assert {k: getattr(settings, k) for k in expected} == expected


def test_an_upgraded_model_json_reads_the_same_and_says_its_schema() -> None:
    older = {"imgsz": 320, "max_imgsz": 960, "crop_turns": [0, 45], "opset": 17}
    upgraded = write_settings(dict(older), read_settings_json(older))
    assert upgraded["schema"] == SCHEMA and upgraded["opset"] == 17
    assert read_settings_json(upgraded) == read_settings_json(older)
    assert upgrade(upgraded) == upgraded
    assert set(BEFORE_SCHEMA_2) <= set(upgraded)


def test_an_enrolled_deck_of_an_older_tiplu_still_loads(tmp_path: Path) -> None:
    """An enrolled deck's folder of schema 1 (written by an older tiplu) loads and reads a sample as its settings say."""
    folder = shipped_model_files(tmp_path / "deck")
    (folder / "model.json").write_text(json.dumps({"format": "tiplu-corners-v1", "imgsz": 320, "max_imgsz": 960,
                                                   "crop_w": 48, "crop_h": 72, "calibration": {"faint_above": 0.1}}))
    detector = load_detector(folder)
    assert detector.settings.passes == ("base", "big") and detector.settings.classifiers == ("corner_classifier.onnx",)
    assert detector.calibration.faint_above == 0.1 and detector.calibration.fingerprint is None
    image = cv2.imread(str(ROOT / "sample_images" / "tunnela.jpg"))
    assert [c.card for c in read_photo(image, detector).cards] == ["6H", "6H", "6H"]


def passes_read(detector: CardDetector, image: np.ndarray) -> list[str]:
    seen: list[str] = []
    context = PhotoContext(image, detector.settings, input_sizes(detector.settings, *image.shape[:2]))
    read_passes(detector, photo_passes(detector.settings), context, 0.1, lambda name, _: seen.append(name))
    return seen


@pytest.fixture(scope="module")
def far_table() -> np.ndarray:
    return far_photo(cv2.imread(str(ROOT / "sample_images" / "declared_hand.jpg")))


@pytest.mark.parametrize("off", PASS_NAMES[1:])
def test_each_pass_can_be_switched_off(off: str, far_table: np.ndarray) -> None:
    """A 12-megapixel table runs every photo pass; with one left out of ``passes`` that one is not read
    and the others are (the look-around reads after pairing: :meth:`CardDetector.look_around` finds nothing)."""
    shipped = CardDetector()
    shipped.settings = dataclasses.replace(shipped.settings, skips=())
    assert passes_read(shipped, far_table) == ["base", "views", "big", "tiles"]
    without = CardDetector()
    without.settings = dataclasses.replace(shipped.settings, passes=tuple(p for p in PASS_NAMES if p != off))
    expected = [p for p in ("base", "views", "big", "tiles") if p != off]
    if off == "big":
        expected.remove("tiles")  # the tiles read the corners the big pass found too small
    assert passes_read(without, far_table) == expected
    reading = read_photo(far_table, shipped)
    read = [reading.corners[i] for card in reading.cards for i in card.corners]
    assert (without.look_around(far_table, read, 0.1) == []) == (off == "look_around")


def test_a_pass_switched_off_in_model_json(tmp_path: Path, far_table: np.ndarray) -> None:
    folder = shipped_model_files(tmp_path / "model")
    (folder / "model.json").write_text(json.dumps(SHIPPED | {"passes": ["base", "views", "big", "look_around"],
                                                              "skips": []}))
    assert passes_read(CardDetector(folder), far_table) == ["base", "views", "big"]


@pytest.mark.parametrize("photo, skipped", [("tunnela.jpg", "big"), ("tiplu.jpg", "big"),
                                            ("declared_hand.jpg", "views"), ("maal_spread.jpg", "views"),
                                            ("far table", "views")])
def test_a_pass_that_would_add_nothing_is_skipped(photo: str, skipped: str, far_table: np.ndarray,
                                                  tmp_path: Path) -> None:
    """``"skips"``: a close-up whose 320-px looks found only big corners, one sure, is not read by the big pass;
    a table whose base look found no big corner is read by the big pass without the views. Either way the
    cards read are those read with every pass; with the skip left out of ``model.json``'s ``"skips"``, the
    pass reads again."""
    image = far_table if photo == "far table" else cv2.imread(str(ROOT / "sample_images" / photo))
    folder = shipped_model_files(tmp_path / "model")
    (folder / "model.json").write_text(json.dumps(SHIPPED | {"skips": [s for s in SKIP_NAMES if s != skipped]}))
    skipping, everything = CardDetector(), CardDetector(folder)
    assert skipped in passes_read(everything, image)
    assert skipped not in passes_read(skipping, image)
    assert ("big" if skipped == "views" else "views") in passes_read(skipping, image)
    if photo != "far table":
        assert read_photo(image, skipping).card_names() == read_photo(image, everything).card_names()


@pytest.mark.parametrize("photo, read", [("real_maal.jpg", "views"), ("declared_hand.jpg", "big")])
def test_a_pass_that_adds_is_not_skipped(photo: str, read: str) -> None:
    """The views are skipped only where the big pass reads the photo (a 640-px close-up has none); the big pass
    only where every corner of the 320-px looks is big (a table's are small)."""
    image = cv2.imread(str(ROOT / "sample_images" / photo))
    assert read in passes_read(CardDetector(), image)


def test_the_calibration_was_fitted_on_this_reader() -> None:
    """The shipped calibration records the fingerprint of the reader it was fitted on. This fails when a
    setting, a number of the reader's modules or a network changes without calibrating again
    (``tiplu calibrate ... --keep --write models/model.json`` measures the figures again and records it)."""
    detector = load_detector()
    assert detector.calibration.fingerprint == reading_fingerprint(detector.settings, MODELS_DIR)


def test_the_fingerprint_changes_with_a_reader_number_or_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = read_settings(MODELS_DIR)
    shipped = reading_fingerprint(settings, MODELS_DIR)
    assert reading_fingerprint(dataclasses.replace(settings, nms_iou=0.7), MODELS_DIR) != shipped
    number = next(name.rpartition(".")[2] for name in reader_constants() if name.startswith("vision.pairing."))
    monkeypatch.setattr(pairing, number, getattr(pairing, number) + 1)
    assert reading_fingerprint(settings, MODELS_DIR) != shipped


@pytest.mark.parametrize("change, words", [({"schema": 0}, '"schema" must be a whole number'),
                                           ({"passes": ["base", "base"]}, '"passes" must list passes'),
                                           ({"imgsz": 0}, '"imgsz" must be a whole number'),
                                           ({"orientation": "../x.onnx"}, '"orientation" must be the name'),
                                           ({"skips": ["tiles"]}, '"skips" must list distinct passes'),
                                           ({"skip_sure": -1}, '"skip_sure" must be a number'),
                                           ({"calibration": {"fingerprint": 7}}, "calibration.fingerprint")])
def test_a_bad_schema_setting_says_what_to_give(tmp_path: Path, change: dict[str, Any], words: str) -> None:
    folder = shipped_model_files(tmp_path / "model")
    (folder / "model.json").write_text(json.dumps(SHIPPED | change))
    with pytest.raises(ModelError, match=words):
        CardDetector(folder)


def test_the_fast_profile_reads_without_the_passes_that_cost_most_for_least(far_table: np.ndarray,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """``--profile fast`` (or ``TIPLU_PROFILE``) reads the photo passes it keeps and no window about the cards;
    the samples' cards stay what the full reader reads."""
    fast = load_detector(profile="fast")
    assert passes_read(fast, far_table) == ["base", "big", "tiles"]
    monkeypatch.setenv("TIPLU_PROFILE", "fast")
    assert load_detector().settings.passes == fast.settings.passes
    monkeypatch.delenv("TIPLU_PROFILE")
    full = load_detector()
    for name in ("declared_hand.jpg", "tunnela.jpg", "real_maal.jpg"):
        image = cv2.imread(str(ROOT / "sample_images" / name))
        assert read_photo(image, fast).card_names() == read_photo(image, full).card_names(), name


def test_an_unknown_profile_is_bad_input() -> None:
    from io import StringIO

    from web.cli import main
    err = StringIO()
    code = main(["detect", "--profile", "slow", str(ROOT / "sample_images" / "tiplu.jpg")], stdout=StringIO(), stderr=err)
    assert code == 2 and "invalid choice: 'slow'" in err.getvalue()
