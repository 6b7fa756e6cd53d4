"""Doubt in a reading: alternatives, calibrated ``uncertain``, and the doubts the rules find.

The verdict is always the reading's: a doubt names the card it hangs on, it never picks
the valid reading. Real scorer, real shipped model, real Flask app on a SQLite file.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from dataclasses import replace
from typing import Any, Callable

import pytest
from flask.testing import FlaskClient

from scorer import get_rules, parse_card
from vision.calibration import Calibration, CalibrationError
from vision.detector import MODELS_DIR, ModelError, load_detector, read_model_json
from vision.geometry import MAX_ALTERNATIVES, Corner
from vision.doubts import (FAINT_CARD, HAND_COUNT, PLACE_KINDS, SHORT_MELD, STACKED_COPY, TOO_MANY_COPIES, VERDICT_HINGES,
                           copy_doubts, count_doubt, faint_doubts, layout_doubts)
from vision.doubt_score import FEATURES
from vision.images import read_image
from vision.pairing import PhysicalCard, pair_corners
from vision.pipeline import PhotoReading, in_play, read_photo
from vision.score import score_reading
from web_support import calibration_folders, expected_uncertain, shipped_model_files
from web_support import tiplu_in_process as tiplu

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
VALID_HAND = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D".split()
LAID = tuple(tuple(range(i, i + 3)) for i in range(0, 21, 3))
DOUBTFUL = 16  # the 8D of the 7D 8D JC meld


def laid_reading(names: list[str], doubtful: dict[int, tuple[tuple[str, float], ...]]) -> PhotoReading:
    """A reading of a hand laid in melds of three, some cards doubtful with their alternatives."""
    cards = tuple(PhysicalCard(name, 0.4 if i in doubtful else 0.95, (40.0 * i, 0.0, 40.0 * i + 30, 45.0), (i,),
                               uncertain=i in doubtful, alternatives=doubtful.get(i, ()))
                  for i, name in enumerate(names))
    return PhotoReading("laid.jpg", (), cards, LAID)


def test_a_false_declaration_stays_false_and_names_the_deciding_card() -> None:
    names = list(VALID_HAND)
    names[DOUBTFUL] = "8S"  # read wrong: the hand as read does not finish
    reading = laid_reading(names, {DOUBTFUL: (("6S", 0.3), ("8D", 0.2))})
    verdict = score_reading(reading, get_rules(), tiplu=parse_card("JS"), players=4)
    assert verdict.valid is False, "the verdict is the reading's, never the alternative's"
    [hinge] = [d for d in verdict.doubts if d.kind == VERDICT_HINGES]
    assert hinge.cards == (DOUBTFUL,) and (hinge.card, hinge.instead) == ("8S", "8D")
    assert hinge.message == "the hand finishes only if this is 8D, not 8S: please check"
    assert verdict.to_dict()["doubts"][-1]["instead"] == "8D"


def test_a_valid_declaration_names_the_card_that_would_break_it() -> None:
    reading = laid_reading(list(VALID_HAND), {DOUBTFUL: (("8S", 0.3),)})
    verdict = score_reading(reading, get_rules(), tiplu=parse_card("JS"), players=4)
    assert verdict.valid is True
    [hinge] = [d for d in verdict.doubts if d.kind == VERDICT_HINGES]
    assert hinge.message == "the hand finishes only if this is 8D, not 8S: please check"


def test_a_sure_card_or_a_harmless_alternative_raises_no_verdict_doubt() -> None:
    sure = laid_reading(list(VALID_HAND), {})
    harmless = laid_reading(list(VALID_HAND), {0: (("3S", 0.2),)})  # another 3S changes nothing
    for reading in (sure, harmless):
        verdict = score_reading(reading, get_rules(), tiplu=parse_card("JS"), players=4)
        assert verdict.valid and not verdict.doubts


def test_a_fourth_copy_flags_every_copy_and_points_at_the_one_left_out() -> None:
    corners = [Corner("8H", conf, (100.0 * k, 0.0, 100.0 * k + 10, 15.0)) for k, conf in enumerate((0.9, 0.8, 0.7, 0.6))]
    pairing = pair_corners(corners)
    assert [c.card for c in pairing.cards] == ["8H"] * 3 and all(c.uncertain for c in pairing.cards)
    [doubt] = copy_doubts(pairing.cards, pairing.dropped, 3)
    assert doubt.kind == TOO_MANY_COPIES and doubt.cards == (0, 1, 2)
    assert doubt.box == (300.0, 0.0, 310.0, 15.0)
    assert "4 cards read as 8H" in doubt.message
    jokers = [Corner("JOKER", conf, (100.0 * k, 0.0, 100.0 * k + 10, 15.0)) for k, conf in enumerate((0.9, 0.8, 0.7, 0.6))]
    pairing = pair_corners(jokers, rules=get_rules("nepali", {"printed_jokers": 3}))
    [doubt] = copy_doubts(pairing.cards, pairing.dropped, 3, jokers=3)
    assert doubt.message == ("4 printed jokers are read, but this game has 3: one of them is another card; "
                             "check these and the one marked")


def test_a_meld_of_two_hints_at_a_missed_card_and_the_count_says_where() -> None:
    names = VALID_HAND[:19]  # the last meld lost a card: 6 melds and JH 5C
    cards = [PhysicalCard(n, 0.9, (40.0 * i, 0.0, 40.0 * i + 30, 45.0), (i,)) for i, n in enumerate(names)]
    groups = [list(g) for g in LAID[:6]] + [[18]]
    assert layout_doubts(cards, groups) == []
    groups = [list(g) for g in LAID[:6]]
    cards = cards[:18] + [PhysicalCard("JH", 0.9, (720.0, 0.0, 750.0, 45.0), (18,)),
                          PhysicalCard("5C", 0.9, (760.0, 0.0, 790.0, 45.0), (19,))]
    [short] = layout_doubts(cards, groups + [[18, 19]])
    assert short.kind == SHORT_MELD and short.cards == (18, 19) and short.box == (720.0, 0.0, 790.0, 45.0)
    count = count_doubt(20, (21, 22), [short])
    assert count is not None and count.kind == HAND_COUNT and count.box == short.box
    assert "reads 20 cards" in count.message and "melds of two" in count.message
    many = count_doubt(23, (21, 22), uncertain=[4])
    assert many is not None and many.cards == (4,) and "read twice" in many.message
    assert count_doubt(21, (21, 22)) is None and count_doubt(22, (21, 22)) is None


def test_dublees_are_no_short_melds() -> None:
    cards = [PhysicalCard(n, 0.9, (40.0 * i, 0.0, 40.0 * i + 30, 45.0), (i,)) for i, n in enumerate("7H 7H 9C 9C".split())]
    assert layout_doubts(cards, [[0, 1], [2, 3]]) == []


@pytest.mark.parametrize("names, groups, flagged", [
    ("2D 2D 7S", [[0, 1], [2]], [(0, 1)]),                         # two copies together: a tunnela's third missed?
    ("2D 2D", [[0, 1]], []),                                       # a photo of a pair
    ("2D 2D 7S 8S", [[0, 1], [2, 3]], [(0, 1)]),                   # no melds: only the copies are asked about
    ("7H 7H 9C 9C 4S 4S", [[0, 1], [2, 3], [4, 5]], []),           # a dublee show
    ("3S 4S 5S 2D 2D", [[0, 1, 2], [3, 4]], [(3, 4)]),             # copies beside a meld
    ("3S 4S 5S 2D 9H", [[0, 1, 2], [3, 4]], [(3, 4)]),             # a meld of two
])
def test_two_copies_together_ask_for_the_third(names: str, groups: list[list[int]],
                                               flagged: list[tuple[int, ...]]) -> None:
    cards = [PhysicalCard(n, 0.9, (40.0 * i, 0.0, 40.0 * i + 30, 45.0), (i,)) for i, n in enumerate(names.split())]
    doubts = layout_doubts(cards, groups)
    assert [d.cards for d in doubts] == flagged and all(d.kind == SHORT_MELD for d in doubts)
    for d in doubts:
        same = cards[d.cards[0]].card == cards[d.cards[1]].card
        assert ("a tunnela is three" in str(d.message)) == same


def test_calibration_comes_from_model_json() -> None:
    shipped = Calibration.from_model_json(read_model_json(MODELS_DIR))
    detector = load_detector()
    assert getattr(detector, "calibration") == shipped
    assert shipped.score is not None
    typical = dict(zip(FEATURES, shipped.score.mean))  # a lone card at 0.1, the rest of it as the average card
    assert shipped.score.flags([math.log(0.1 / 0.9) if name == "confidence_logit" else 1.0 if name == "lone"
                                else typical[name] for name in FEATURES])
    with pytest.raises(CalibrationError, match="alternative_above"):
        Calibration.from_model_json({"calibration": {"alternative_above": 2}})


def test_a_model_with_bad_calibration_is_a_clear_error(tmp_path: Path) -> None:
    shipped_model_files(tmp_path)
    info = read_model_json(MODELS_DIR)
    info["calibration"] = {"uncertain_below": "high"}
    (tmp_path / "model.json").write_text(json.dumps(info))
    with pytest.raises(ModelError, match="uncertain_below"):
        load_detector(tmp_path)


def test_every_card_carries_its_alternatives_and_calibrated_doubt() -> None:
    detector = load_detector()
    calibration = Calibration.from_model_json(read_model_json(MODELS_DIR))
    seen = 0
    for photo in sorted(SAMPLES.glob("*.jpg")):
        reading = read_photo(read_image(photo), detector, name=photo.name)
        assert [c.uncertain for c in reading.cards] == expected_uncertain(reading, calibration)
        for card in reading.cards:
            names = [n for n, _ in card.alternatives]
            probs = [p for _, p in card.alternatives]
            assert len(names) <= MAX_ALTERNATIVES and card.card not in names
            assert probs == sorted(probs, reverse=True) and all(0 < p <= 1 for p in probs)
            seen += bool(names)
    assert seen, "the classifier offers alternatives for some cards"


def test_tiplu_detect_and_score_print_alternatives_and_doubts() -> None:
    photo = str(SAMPLES / "declared_hand.jpg")
    detect = tiplu("detect", photo)
    assert detect.returncode == 0, detect.stderr
    reading = json.loads(detect.stdout)
    assert all("alternatives" in card for card in reading["cards"]) and "doubts" in reading
    score = tiplu("score", photo, "--tiplu", "5D", "--json")
    verdict = json.loads(score.stdout)
    count = len(verdict["cards"])
    assert any(d["kind"] == HAND_COUNT for d in verdict["doubts"]) is (count not in (21, 22))
    text = tiplu("score", photo, "--tiplu", "5D").stdout
    faint = [d for d in verdict["doubts"] if d["kind"] == FAINT_CARD]
    assert all(f"check: {d['message']}" in text for d in verdict["doubts"] if d not in faint or len(faint) == 1)
    assert all(d["card"] in text for d in faint)


def check(client: FlaskClient, sid: int, **payload: Any) -> Any:
    return client.post(f"/sessions/{sid}/cards/check", json=payload)


def test_the_review_check_keeps_a_false_declaration_and_names_the_deciding_card(
        client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    names = list(VALID_HAND)
    names[DOUBTFUL] = "8S"
    alternatives: list[list[str]] = [[] for _ in names]
    alternatives[DOUBTFUL] = ["6S", "8D"]
    body = check(client, sid, cards=names, purpose="hand", tiplu="JS", groups=[list(g) for g in LAID],
                 alternatives=alternatives).get_json()
    assert body["verdict"]["valid"] is False and body["as_laid"]["valid"] is False
    assert body["doubts"] == [{"kind": VERDICT_HINGES, "cards": [DOUBTFUL], "card": "8S", "instead": "8D",
                               "message": "the hand finishes only if this is 8D, not 8S: please check"}]
    confirmed = check(client, sid, cards=names, purpose="hand", tiplu="JS", groups=[list(g) for g in LAID]).get_json()
    assert confirmed["doubts"] == [] and confirmed["verdict"]["valid"] is False
    short = check(client, sid, cards=VALID_HAND[:20], purpose="hand", tiplu="JS").get_json()
    assert [d["kind"] for d in short["doubts"]] == [HAND_COUNT]
    assert short["verdict"]["valid"] is False and "this one has 20" in short["verdict"]["reason"]


@pytest.mark.parametrize("alternatives, words", [
    ("8D", "one list of card names per card"),
    ([["8D"]], "one list of card names per card"),
    ([["XX"]] + [[]] * 20, "XX"),
])
def test_bad_alternatives_are_explained(client: FlaskClient, make_session: Callable[..., int], alternatives: Any,
                                        words: str) -> None:
    response = check(client, make_session(), cards=VALID_HAND, purpose="hand", tiplu="JS", alternatives=alternatives)
    assert response.status_code == 400
    assert words in response.get_json()["error"]


def test_faint_corners_mark_places_to_look_but_are_no_cards() -> None:
    detector = load_detector()
    for photo in ("maal_spread.jpg", "tunnela.jpg"):
        image = read_image(SAMPLES / photo)
        plain = read_photo(image, detector, 0.25, calibration=Calibration(faint_above=1.0))
        looking = read_photo(image, detector, 0.25, calibration=Calibration(faint_above=0.1))
        assert looking.card_names() == plain.card_names() and looking.corners == plain.corners
        places = [d for d in looking.doubts if d.kind in PLACE_KINDS]
        assert places or photo == "tunnela.jpg", "the maal spread has faint corners the shipped model reads"
        assert not [d for d in plain.doubts if d.kind in PLACE_KINDS]
        taken = {i for card in looking.cards for i in card.corners}
        left_out = [c.box for i, c in enumerate(looking.corners) if i not in taken]
        for doubt in places:
            assert doubt.box is not None and doubt.confidence is not None and 0.1 <= doubt.confidence
            assert doubt.confidence < 0.25 or doubt.box in left_out, "a counted corner is a place only if no card took it"
            x, y = (doubt.box[0] + doubt.box[2]) / 2, (doubt.box[1] + doubt.box[3]) / 2
            on_card = any(c.box[0] <= x <= c.box[2] and c.box[1] <= y <= c.box[3] for c in looking.cards)
            assert doubt.kind == (STACKED_COPY if on_card else FAINT_CARD)
            assert looking.card_names().count(doubt.card) < 3 or not on_card, "no fourth copy of a card is looked for"
            assert doubt.to_dict()["message"].startswith(f"another {doubt.card} may lie under" if on_card
                                                         else "a card may lie here")


#: A tunnela of 7H: the top copy read from both its indices, the copies under it showing their top-left
#: index 0.7 index sizes down and right of the one above (rendered scenes put them 0.3 to 1.5 apart).
TOP = [Corner("7H", 0.9, (100, 100, 120, 130), angle=0.0), Corner("7H", 0.9, (180, 220, 200, 250), angle=180.0)]


@pytest.mark.parametrize("corner, copies_read, decks, place", [
    (Corner("7H", 0.2, (112, 112, 132, 142), angle=4.0), 1, 3, True),       # a lower copy, boxed faintly
    (Corner("7H", 0.6, (112, 112, 132, 142), angle=-6.0), 1, 3, True),      # one pairing left out
    (Corner("7H", 0.2, (112, 112, 132, 142), angle=4.0), 2, 3, True),       # two read, a third may lie under
    (Corner("7H", 0.2, (112, 112, 132, 142), angle=4.0), 3, 3, False),      # the three decks' 7H all read
    (Corner("7H", 0.2, (112, 112, 132, 142), angle=4.0), 2, 2, False),      # a two-deck game
    (Corner("7H", 0.2, (103, 103, 121, 130), angle=0.0), 1, 3, False),      # the top index boxed again
    (Corner("7H", 0.2, (112, 112, 132, 142), angle=90.0), 1, 3, False),     # facing another way: no copy here
    (Corner("8H", 0.2, (112, 112, 132, 142), angle=0.0), 1, 3, False),      # another name on the card: its pip, say
    (Corner("7H", 0.2, (150, 160, 170, 190), angle=0.0), 1, 3, False),      # mid-card, far from either index
])
def test_a_corner_stacked_on_a_card_of_its_name_marks_a_place(corner: Corner, copies_read: int, decks: int,
                                                               place: bool) -> None:
    """A tunnela's lower copy whose index stage 1 boxed faintly lies on the top copy's card, where a
    faint corner is otherwise no place to look: stacked on an index of its name it still is one,
    unless the decks in play hold no more copies of that card than were read."""
    cards = [PhysicalCard("7H", 0.9, (100.0, 100.0, 200.0, 250.0), (0, 1))]
    cards += [PhysicalCard("7H", 0.9, (400.0 + 50 * k, 0.0, 420.0 + 50 * k, 30.0), ()) for k in range(copies_read - 1)]
    named = in_play(corner, decks, 0, Counter(c.card for c in cards))  # as the pipeline names faint corners
    doubts = faint_doubts(cards, [named] if named else [], TOP)
    assert [(d.kind, d.card, d.box) for d in doubts] == ([(STACKED_COPY, "7H", corner.box)] if place else [])
    assert all(d.to_dict()["message"] == "another 7H may lie under the one read here: count them, and add it from "
               "the grid if so" for d in doubts)


def test_a_hand_one_card_short_names_the_faint_card_that_would_finish_it(
        client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    short = VALID_HAND[:16] + VALID_HAND[17:]  # the 8D of 7D 8D JC was too faint to read
    faint = [{"card": "KC", "box": [10, 10, 40, 60]}, {"card": "8D", "box": [500, 300, 530, 350]}]
    body = check(client, sid, cards=short, purpose="hand", tiplu="JS", faint=faint).get_json()
    assert body["verdict"]["valid"] is False, "the verdict is the cards', not the guess's"
    hinges = [d for d in body["doubts"] if d["kind"] == VERDICT_HINGES]
    assert hinges == [{"kind": VERDICT_HINGES, "cards": [], "box": [500.0, 300.0, 530.0, 350.0], "card": "8D",
                       "message": "the hand finishes only if the card framed here is 8D, too faint to read: "
                                  "please check"}]


def test_a_hand_one_copy_short_asks_to_count_the_stack_that_would_finish_it(
        client: FlaskClient, make_session: Callable[..., int]) -> None:
    sid = make_session()
    short = VALID_HAND[:16] + VALID_HAND[17:]  # the 8D of 7D 8D JC lay under another card
    faint = [{"card": "8D", "box": [500, 300, 530, 350], "kind": "stacked_copy"}]
    body = check(client, sid, cards=short, purpose="hand", tiplu="JS", faint=faint).get_json()
    assert body["verdict"]["valid"] is False, "the verdict is the cards', not the guess's"
    assert [d for d in body["doubts"] if d["kind"] == VERDICT_HINGES] == [
        {"kind": VERDICT_HINGES, "cards": [], "box": [500.0, 300.0, 530.0, 350.0], "card": "8D",
         "message": "the hand finishes only if another 8D lies under the one framed here: please count them"}]


@pytest.mark.parametrize("faint", ["10S", [{"card": "10S"}], [{"card": "XX", "box": [1, 2, 3, 4]}],
                                   [{"card": "10S", "box": [1, 2, True, 4]}],
                                   [{"card": "10S", "box": [1, 2, 3, 4], "kind": "short_meld"}]])
def test_bad_faint_places_are_explained(client: FlaskClient, make_session: Callable[..., int], faint: Any) -> None:
    response = check(client, make_session(), cards=VALID_HAND[:20], purpose="hand", tiplu="JS", faint=faint)
    assert response.status_code == 400
    assert "faint" in response.get_json()["error"]


def test_a_clearly_named_faint_corner_counts_as_a_doubtful_card() -> None:
    """Stage 1 scores a small or half-covered index low even when the classifier is sure of it: with
    ``named_above``, such a corner is a card, always one to check, unless it lies on a counted corner."""
    detector = load_detector()
    off = Calibration(uncertain_below=0.5, faint_above=0.1)
    every = replace(off, named_above=0.0, named_floor=0.1)
    image = read_image(SAMPLES / "maal_spread.jpg")
    plain = read_photo(image, detector, 0.25, calibration=off)
    lifted = read_photo(image, detector, 0.25, calibration=every)
    added = [c for c in lifted.corners if c not in plain.corners]
    assert set(plain.corners) < set(lifted.corners) and len(added) == 1
    assert added[0].confidence < 0.25 and 0 < added[0].card_p <= 1
    k = lifted.corners.index(added[0])
    [holder] = [card for card in lifted.cards if k in card.corners]
    # Here it is the other index of a 5D read surely (0.68): the card is as sure as that corner.
    assert holder.uncertain or any(lifted.corners[i].confidence >= 0.25 for i in holder.corners)
    assert [d.card for d in plain.doubts if d.kind == FAINT_CARD] == [added[0].card]
    assert not [d for d in lifted.doubts if d.kind == FAINT_CARD], "it is a card now, not a place to look"
    trusting = read_photo(image, detector, 0.7, calibration=every, uncertain_below=0.01)
    lifted_only = [card for card in trusting.cards if all(trusting.corners[i].confidence < 0.7 for i in card.corners)]
    assert lifted_only and all(card.uncertain for card in lifted_only), "a card of lifted corners alone is never sure"
    strict = replace(off, named_above=min(1.0, added[0].card_p + 0.01), named_floor=0.1)
    assert read_photo(image, detector, 0.25, calibration=strict).corners == plain.corners

    hand = read_image(SAMPLES / "declared_hand.jpg")
    faint = [c for c in detector.detect(hand, 0.1) if c.confidence < 0.25]
    assert faint, "the sample holds faint boxes: each is an index already counted, boxed again"
    assert read_photo(hand, detector, 0.25, calibration=every).corners == read_photo(hand, detector, 0.25,
                                                                                        calibration=off).corners


@pytest.mark.parametrize("args, error", [
    (["calibrate", "--calibrate", "a", "--test", "b", "--write", "nowhere/model.json"], "not a readable model.json"),
    (["report", "--angles", "--scenes", "0", "--far-scenes", "0", "--webcam-scenes", "0", "--no-samples", "--write-metrics",
      "nowhere/model.json"], "not a readable model.json"),
    (["report", "--angles", "--scenes", "0", "--far-scenes", "0", "--webcam-scenes", "0", "--no-samples", "--write-metrics", "LIST"],
     "expected a JSON object"),
])
def test_a_model_json_to_write_is_checked_before_any_work(tmp_path: Path, args: list[str], error: str) -> None:
    listed = tmp_path / "list.json"
    listed.write_text("[]")
    done = tiplu(*[str(listed) if a == "LIST" else a for a in args])
    assert done.returncode == 2 and error in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == "", "refused before a report was measured"
    assert listed.read_text() == "[]"


@pytest.mark.parametrize("named, error", [
    ("0.9", "give two numbers from 0 to 1"),
    ("0.9,high", "give two numbers from 0 to 1"),
    ("1.5,0.1", "give two numbers from 0 to 1"),
])
def test_calibrate_refuses_a_bad_named_setting(named: str, error: str) -> None:
    done = tiplu("calibrate", "--calibrate", "a", "--test", "b", "--named", named)
    assert done.returncode == 2 and error in done.stderr and "Traceback" not in done.stderr


def test_calibrate_keeps_the_named_setting_it_read_with(tmp_path: Path) -> None:
    model = calibration_folders(tmp_path, (5, 6), "meld_row")
    done = tiplu("calibrate", "--model", str(model), "--calibrate", str(tmp_path / "calib"), "--test",
                 str(tmp_path / "test"), "--named", "0.85,0.12", "--write", str(model / "model.json"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["named_above"], report["named_floor"]) == (0.85, 0.12)
    written = getattr(load_detector(model), "calibration")
    assert (written.named_above, written.named_floor) == (0.85, 0.12)
    assert written.uncertain_below == report["uncertain_below"]
    shipped = read_model_json(MODELS_DIR)["calibration"]["vouched_above"]
    assert report["vouched_above"] == written.vouched_above == shipped < 1, "read as the app reads, and kept"


def test_a_place_looked_around_for_never_renames_a_place_the_photo_showed() -> None:
    """Corners found by looking around (``later``) are places only where the photo's own faint corners are not."""
    read = [PhysicalCard("7H", 0.9, (0.0, 0.0, 60.0, 90.0), (0,))]
    faint = [Corner("5D", 0.12, (200, 10, 210, 25))]
    later = [Corner("5H", 0.3, (202, 12, 212, 27)), Corner("KS", 0.2, (400, 10, 410, 25))]
    places = faint_doubts(read, faint, [Corner("7H", 0.9, (0, 0, 10, 15))], later)
    assert [(d.card, d.confidence) for d in places] == [("5D", 0.12), ("KS", 0.2)]
    assert [d.card for d in faint_doubts(read, [], [], later)] == ["5H", "KS"]


WEBCAM = Path(__file__).resolve().parent / "data" / "webcam_val"


def test_a_small_index_that_may_show_its_twins_pip_is_marked_on_real_webcam_frames() -> None:
    """On a laptop webcam's frames a club's pip passes for a spade's: of the cards read as the twin of the card
    labelled there (clubs for spades, hearts for diamonds), the shipped calibration shows at most one as sure,
    where without the twin rule most of them pass as sure."""
    from vision.calibration import twin_of
    from vision.training.data.dataset import iter_samples, read_sample

    detector = load_detector()
    assert detector.calibration.twin_above < 1, "the shipped calibration marks twins"
    sure = {"shipped": 0, "without the twin rule": 0}
    twins = 0
    for sample in iter_samples(WEBCAM):
        image, _ = read_sample(sample)  # type: ignore[misc]
        labelled = {b.name for b in sample.boxes}
        for how, calibration in (("shipped", detector.calibration),
                                 ("without the twin rule", replace(detector.calibration, twin_above=1.0))):
            for card in read_photo(image, detector, calibration=calibration).cards:
                if card.card not in labelled and twin_of(card.card) in labelled:
                    twins += how == "shipped"
                    sure[how] += not card.uncertain
    assert twins >= 5, "the frames hold clubs read as spades"
    assert sure["shipped"] <= 1 < sure["without the twin rule"], sure
