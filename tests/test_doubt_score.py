"""The doubt score (issue #12): what a card's place in the reading says about it, fitted on held-out
photos, kept in ``model.json``, and applied by the reading the app makes.

Real shipped model and real rendered scenes where a reading is involved; no mocks.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vision.calibration import Calibration, CalibrationError
from vision.detector import MODELS_DIR, load_detector, read_model_json
from vision.geometry import Corner
from vision.doubt_score import FEATURES, FORMS, DoubtScore, card_features, expanded, fit_doubt_score, term_count
from vision.images import read_image
from vision.pairing import PhysicalCard
from vision.pipeline import read_photo
from vision.training.measure.calibrate import NOTHING_FLAGGED, CardCase, PhotoCase, choose_score, scores
from web_support import calibration_folders, expected_uncertain, shipped_model_files
from web_support import tiplu_in_process as tiplu

SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"
N = len(FEATURES)


def lone(card: str, box: tuple[float, float, float, float], confidence: float = 0.9) -> tuple[Corner, PhysicalCard]:
    return Corner(card, confidence, box), PhysicalCard(card, confidence, box, ())


def reading_of(*items: tuple[Corner, PhysicalCard]) -> tuple[list[Corner], list[PhysicalCard]]:
    corners = [corner for corner, _ in items]
    cards = [replace(card, corners=(k,)) for k, (_, card) in enumerate(items)]
    return corners, cards


@pytest.mark.parametrize("items, feature, expected", [
    # one index boxed twice under one name, a third card far off: the two are near, the third is not
    ([lone("8D", (0, 0, 10, 16)), lone("8D", (3, 0, 13, 16)), lone("KS", (60, 0, 70, 16))],
     "same_name_nearby", [0.88, 0.88, 0.0]),
    ([lone("8D", (0, 0, 10, 16)), lone("8H", (0, 0, 10, 16)), lone("KS", (60, 0, 70, 16))],
     "overlap", [1.0, 1.0, 0.0]),
    ([lone("8D", (0, 0, 10, 16)), lone("KS", (0, 0, 20, 32)), lone("KS", (90, 0, 110, 32))],
     "relative_size_log", [round(math.log(0.5), 2), 0.0, 0.0]),
    ([lone("8D", (0, 0, 10, 16))], "cards_log", [0.0]),
    ([lone("8D", (0, 0, 10, 16), 0.5)], "confidence_logit", [0.0]),
])
def test_card_features(items: list[tuple[Corner, PhysicalCard]], feature: str, expected: list[float]) -> None:
    corners, cards = reading_of(*items)
    assert [round(f[feature], 2) for f in card_features(corners, cards)] == expected


def test_a_paired_card_is_not_lone() -> None:
    corners = [Corner("7H", 0.9, (0, 0, 10, 16)), Corner("7H", 0.9, (60, 90, 70, 106))]
    card = PhysicalCard("7H", 0.99, (0, 0, 70, 106), (0, 1))
    [features] = card_features(corners, [card])
    assert features["lone"] == 0.0 and features["same_name_nearby"] == 0.0


def test_fit_learns_which_way_a_feature_points() -> None:
    rows = [(c,) + (0.0,) * (N - 1) for c in range(-5, 6) for _ in range(3)]
    wrong = [c < 0 for c in range(-5, 6) for _ in range(3)]
    score = fit_doubt_score(rows, wrong)
    assert score.weights[0] < 0
    probabilities = [score.probability(r) for r in rows]
    assert probabilities == sorted(probabilities, reverse=True)
    assert score.probability(rows[0]) > 0.9 > 0.1 > score.probability(rows[-1])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=N, max_size=N), st.floats(0, 1), st.floats(0, 1))
def test_a_lower_level_flags_everything_a_higher_one_does(row: list[float], low: float, high: float) -> None:
    low, high = sorted((low, high))
    score = DoubtScore((0.0,) * N, (1.0,) * N, tuple(0.3 * (k - 3) for k in range(N)), -1.0, high)
    assert not score.flags(row) or score.at(low).flags(row)


def interaction_cases() -> list[PhotoCase]:
    """Cards wrong only where two features are both high (a lone card that is also small, say):
    no weight per feature says that, a product of the two does."""
    cards = []
    for a in range(6):
        for b in range(6):
            for k in range(3):
                row = (float(a), float(b)) + (float(k),) * (N - 2)
                cards.append(CardCase(0.9, 0.0, not (a >= 4 and b >= 4), False, False, row))
    return [PhotoCase(tuple(cards), ())]


def test_products_of_features_flag_fewer_where_doubt_lies_in_two_at_once() -> None:
    linear = fit_doubt_score([c.features for c in interaction_cases()[0].cards],
                             [not c.right for c in interaction_cases()[0].cards])
    chosen = choose_score(interaction_cases(), 1.0)
    assert chosen.score is not None and chosen.score.terms == "quadratic"
    found = scores(interaction_cases(), chosen)
    assert found["wrong_flagged"] == 1.0
    at_linear = choose_score(interaction_cases(), 1.0, weights=linear)
    assert found["all_flagged"] < scores(interaction_cases(), at_linear)["all_flagged"]


def test_a_linear_form_is_kept_where_products_flag_no_fewer() -> None:
    chosen = choose_score(CASES, 0.9)
    assert chosen.score is not None and chosen.score.terms == "linear" and FORMS[0][0] == "linear"


@pytest.mark.parametrize("terms", ["linear", "quadratic"])
def test_the_score_travels_through_model_json_in_each_form(terms: str) -> None:
    rows = [(c,) + (1.0 + c % 3,) * (N - 1) for c in range(12)]
    score = fit_doubt_score(rows, [c < 4 for c in range(12)], flag_above=0.2, terms=terms)
    assert len(score.weights) == len(expanded(rows[0], terms)) == term_count(terms)
    raw = {"calibration": {"uncertain_below": 0.0, "doubt_score": score.to_json()}}
    back = Calibration.from_model_json(json.loads(json.dumps(raw))).score
    assert back is not None and back.terms == terms and back.flag_above == 0.2
    assert all(abs(back.probability(r) - score.probability(r)) < 1e-4 for r in rows)


def test_a_score_written_before_terms_existed_reads_as_linear() -> None:
    old = {k: v for k, v in GOOD.items() if k != "terms"}
    back = Calibration.from_model_json({"calibration": {"doubt_score": old}}).score
    assert back is not None and back.terms == "linear" and back.to_json() == GOOD


def test_the_score_travels_through_model_json() -> None:
    score = fit_doubt_score([(c,) + (1.0,) * (N - 1) for c in range(10)], [c < 4 for c in range(10)], flag_above=0.2)
    raw = {"calibration": {"uncertain_below": 0.0, "doubt_score": score.to_json()}}
    back = Calibration.from_model_json(json.loads(json.dumps(raw))).score
    assert back is not None and back.flag_above == 0.2
    assert all(abs(back.probability(r) - score.probability(r)) < 1e-5 for r in [(c,) * N for c in range(5)])


GOOD = DoubtScore((0.0,) * N, (1.0,) * N, (0.5,) * N, 0.0, 0.5).to_json()


@pytest.mark.parametrize("change, needle", [
    ({"features": ["confidence_logit"]}, "calibrate the model again"),
    ({"weights": [1.0] * (N - 1)}, f"give {N} numbers"),
    ({"mean": [float("nan")] * N}, f"give {N} numbers"),
    ({"scale": [0.0] * N}, "above 0"),
    ({"flag_above": 1.5}, "from 0 to 1"),
    ({"bias": "high"}, "bias"),
    ({"terms": "cubic"}, "give one of ['linear', 'quadratic']"),
    ({"terms": "quadratic"}, f"give {term_count('quadratic')} numbers, one per quadratic term"),
])
def test_a_bad_doubt_score_is_a_clear_error(change: dict[str, object], needle: str) -> None:
    with pytest.raises(CalibrationError, match="doubt_score") as raised:
        Calibration.from_model_json({"calibration": {"doubt_score": {**GOOD, **change}}})
    assert needle in str(raised.value)


def test_a_model_folder_with_a_bad_doubt_score_names_it(tmp_path: Path) -> None:
    model = shipped_model_files(tmp_path / "model", with_json=True)
    info = read_model_json(model)
    info["calibration"]["doubt_score"] = {**GOOD, "weights": [1]}
    (model / "model.json").write_text(json.dumps(info))
    done = tiplu("detect", "--model", str(model), str(SAMPLES / "tiplu.jpg"))
    assert done.returncode == 2 and "doubt_score.weights" in done.stderr and "Traceback" not in done.stderr


def test_the_reading_marks_what_the_score_flags() -> None:
    """Flag everything, flag nothing, or the shipped score: the cards are the same, only ``uncertain`` moves."""
    detector = load_detector()
    image = read_image(SAMPLES / "real_maal.jpg")
    plain = read_photo(image, detector, 0.25, calibration=NOTHING_FLAGGED)
    every = replace(NOTHING_FLAGGED, score=DoubtScore((0.0,) * N, (1.0,) * N, (0.0,) * N, 0.0, 0.0))
    none = replace(NOTHING_FLAGGED, score=DoubtScore((0.0,) * N, (1.0,) * N, (0.0,) * N, 0.0, 1.0))
    flagged_all = read_photo(image, detector, 0.25, calibration=every)
    flagged_none = read_photo(image, detector, 0.25, calibration=none)
    assert plain.card_names() == flagged_all.card_names() == flagged_none.card_names() and plain.cards
    assert all(c.uncertain for c in flagged_all.cards)
    assert [c.uncertain for c in flagged_none.cards] == [c.uncertain for c in plain.cards]
    shipped = detector.calibration
    assert shipped.score is not None, "the shipped model brings its doubt score"
    read = read_photo(image, detector, 0.25)
    assert [c.uncertain for c in read.cards] == expected_uncertain(read, shipped)


def case(confidence: float, right: bool) -> CardCase:
    return CardCase(confidence, 0.0, right, False, False, (math.log(confidence / (1 - confidence)),) + (0.0,) * (N - 1))


CASES = [PhotoCase(tuple(case(c / 20, c >= 8) for c in range(1, 20)), ())]


@pytest.mark.parametrize("catch", [0.5, 0.9, 1.0])
def test_choose_score_flags_at_least_what_it_is_asked_with_the_fewest(catch: float) -> None:
    chosen = choose_score(CASES, catch)
    assert chosen.score is not None and (chosen.uncertain_below, chosen.alternative_above) == (0.0, 1.0)
    found = scores(CASES, chosen)
    assert found["wrong_flagged"] >= catch
    levels = [chosen.score.probability(c.features) for c in CASES[0].cards]
    above = [p for p in levels if p > chosen.score.flag_above + 1e-6]
    if above:  # the next level up flags too few: none flags fewer cards and still enough
        assert scores(CASES, replace(chosen, score=chosen.score.at(min(above))))["wrong_flagged"] < catch


def test_choose_score_keeps_weights_it_is_given() -> None:
    given = DoubtScore((0.0,) * N, (1.0,) * N, (-2.0,) + (0.0,) * (N - 1), 0.0, 0.5)
    chosen = choose_score(CASES, 0.9, weights=given)
    assert chosen.score is not None and chosen.score.weights == given.weights and chosen.score.bias == 0.0


def test_calibrate_fits_a_score_that_the_model_then_uses(tmp_path: Path) -> None:
    model = calibration_folders(tmp_path, (3, 4), "table")
    done = tiplu("calibrate", "--model", str(model), "--calibrate", str(tmp_path / "calib"), "--test",
                 str(tmp_path / "test"), "--write", str(model / "model.json"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["method"].startswith("doubt score (logistic regression over 8 features")
    assert " fitted on the calibration splits' cards" in report["method"]
    assert report["doubt_score"]["features"] == list(FEATURES)
    written = load_detector(model).calibration
    assert written.score is not None and written.score.to_json() == report["doubt_score"]
    assert (written.uncertain_below, written.alternative_above) == (0.0, 1.0)
    thresholds = tiplu("calibrate", "--model", str(model), "--calibrate", str(tmp_path / "calib"), "--test",
                       str(tmp_path / "test"), "--method", "thresholds")
    assert thresholds.returncode == 0 and "doubt_score" not in json.loads(thresholds.stdout)


def test_the_shipped_score_is_the_one_its_report_measured() -> None:
    calibration = read_model_json(MODELS_DIR)["calibration"]
    assert calibration["method"].startswith("doubt score")
    assert DoubtScore.from_json(calibration["doubt_score"]).to_json() == calibration["doubt_score"]
    for split in calibration["test_splits"].values():
        assert 0 <= split["all_flagged"] <= 1 and 0 <= split["wrong_flagged"] <= 1
