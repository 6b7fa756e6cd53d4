"""How ``tiplu calibrate`` judges a reading against the labels: which card a found corner is, and
what points at a missed card. The figures of issue #12 (wrong cards, silent errors) rest on it.

Real shipped model on a rendered scene of a held-out design; no mocks.
"""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest

from scorer import CLASS_NAMES, get_rules
from vision.detector import load_detector
from vision.doubts import FAINT_CARD, Doubt
from vision.images import read_image
from vision.pipeline import PhotoReading, read_photo
from vision.training.measure.calibrate import NOTHING_FLAGGED, match_boxes, photo_case, real_case, scene_rules
from vision.training.data.dataset import Box, Sample
from web.cli import main
from web_support import calibration_folders


@pytest.mark.parametrize("found, expected", [
    ((0, 0, 20, 30), 0),        # the label itself
    ((3, 4, 17, 26), 0),        # a tighter box on the glyphs (IoU 0.51)
    ((4, 6, 16, 24), 0),        # tighter still (IoU 0.36), centre inside: the same index
    ((6, 9, 14, 21), -1),       # a pip's worth (IoU 0.16): not the index
    ((12, 0, 32, 30), -1),      # shifted off (IoU 0.25, centre outside)
    ((15, 20, 35, 50), -1),     # centre outside, barely touching
])
def test_a_found_box_matches_the_label_it_lies_in(found: tuple[float, ...], expected: int) -> None:
    assert match_boxes([found], [(0, 0, 20, 30), (100, 100, 120, 130)]) == [expected]


def grown(box: list[float], factor: float) -> list[float]:
    cx, cy, w, h = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2, box[2] - box[0], box[3] - box[1]
    return [cx - factor * w / 2, cy - factor * h / 2, cx + factor * w / 2, cy + factor * h / 2]


def test_labels_drawn_looser_than_stage_1_boxes_judge_the_same_cards(tmp_path: Path) -> None:
    """A design whose labelled index takes in more card than stage 1 boxes (nicu-white's) must not
    turn right cards into extras and their cards into misses."""
    out, err = StringIO(), StringIO()
    assert main(["generate", str(tmp_path / "scenes"), "--count", "2", "--seed", "5", "--decks", "holdout",
                 "--scenes", "meld_row"], stdout=out, stderr=err) == 0, err.getvalue()
    detector = load_detector(None)
    judged = 0
    for path in sorted((tmp_path / "scenes" / "geometry").glob("*.json")):
        geometry = json.loads(path.read_text())
        reading = read_photo(read_image(tmp_path / "scenes" / geometry["image"]), detector, 0.25,
                             rules=get_rules("nepali"), calibration=NOTHING_FLAGGED)
        loose = {**geometry, "boxes": [{**b, "bbox": grown(b["bbox"], 1.45)} for b in geometry["boxes"]]}
        tight, wide = photo_case(reading, geometry), photo_case(reading, loose)
        assert [c.right for c in wide.cards] == [c.right for c in tight.cards]
        assert wide.missed == tight.missed
        judged += sum(c.right for c in tight.cards)
    assert judged >= 10, "the scenes' cards are read right, so the comparison means something"


def test_a_rendered_table_with_a_printed_joker_is_read_under_rules_that_have_them(tmp_path: Path) -> None:
    """The generator lays printed jokers on some tables. Read under the default rules (no printed
    jokers) the joker is left out with a doubt, and the judge would count it as a missed card; the
    table is read under the rules it is possible under, as ``tiplu report`` and the real photos are."""
    out, err = StringIO(), StringIO()
    assert main(["generate", str(tmp_path / "scenes"), "--count", "1", "--seed", "2", "--decks", "holdout",
                 "--scenes", "table"], stdout=out, stderr=err) == 0, err.getvalue()
    path = next((tmp_path / "scenes" / "geometry").glob("*.json"))
    geometry = json.loads(path.read_text())
    assert "JOKER" in [card["card"] for card in geometry["cards"]], "the scene lays a printed joker"
    assert scene_rules(geometry).printed_jokers == 3
    assert scene_rules({**geometry, "cards": [c for c in geometry["cards"] if c["card"] != "JOKER"]}).printed_jokers == 0
    image, detector = read_image(tmp_path / "scenes" / geometry["image"]), load_detector(None)
    default = photo_case(read_photo(image, detector, 0.25, rules=get_rules("nepali"), calibration=NOTHING_FLAGGED),
                         geometry)
    reading = read_photo(image, detector, 0.25, rules=scene_rules(geometry), calibration=NOTHING_FLAGGED)
    judged = photo_case(reading, geometry)
    assert "JOKER" in reading.card_names()
    assert judged.missed == default.missed - 1
    assert sum(c.right for c in judged.cards) == sum(c.right for c in default.cards) + 1


def test_a_faint_corner_on_a_missed_real_card_points_at_it() -> None:
    """Real photos are matched by name; a missed name under a faint-corner doubt counts as pointed at."""
    ks, qh = CLASS_NAMES.index("KS"), CLASS_NAMES.index("QH")
    sample = Sample(Path("photo.jpg"), (Box(ks, 0.10, 0.10, 0.15, 0.18), Box(qh, 0.60, 0.60, 0.65, 0.68)))
    faint = Doubt(FAINT_CARD, (), "a card may lie here", box=(95.0, 95.0, 160.0, 185.0), card="KS", confidence=0.18)
    case = real_case(PhotoReading("photo.jpg", (), (), (), doubts=(faint,)), sample, 1000, 1000)
    assert sorted(case.missed_cover) == [-1.0, 0.18]  # KS pointed at by the faint corner, QH by nothing
    assert case.faint == ((0.18, True),)
    assert case.pointed(0.1) == 1 and case.pointed(0.2) == 0


def test_keep_measures_the_models_own_thresholds_again(tmp_path: Path) -> None:
    model = calibration_folders(tmp_path, (7, 8), "meld_row", count=1)
    own = getattr(load_detector(model), "calibration")
    out, err = StringIO(), StringIO()
    code = main(["calibrate", "--model", str(model), "--calibrate", str(tmp_path / "calib"), "--test",
                 str(tmp_path / "test"), "--keep", "--write", str(model / "model.json")], stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    report = json.loads(out.getvalue())
    assert (report["uncertain_below"], report["alternative_above"], report["faint_above"]) == (
        own.uncertain_below, own.alternative_above, own.faint_above)
    assert report["method"].endswith("kept and measured again (not chosen on these splits)")
    assert set(report["test_splits"]) == {f"{tmp_path.name}/test"}
    assert getattr(load_detector(model), "calibration") == own
