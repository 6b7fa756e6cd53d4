"""Corners -> physical cards -> melds -> verdict, tested on generated scenes with known truth,
and ``tiplu detect`` / ``tiplu score`` run (in process, through the CLI's ``main``) on the
committed samples.

Pairing is tested by itself: the generator's ground-truth corner boxes (with 4 % jitter)
go in, so a miss is the pairing's fault, not the detector's. The held-out design is used
when its Debian package is installed, else the drawn designs (always available;
``TIPLU_TEST_DECKS=drawn`` forces them).
Run with ``-s`` to see the exact-count accuracy per scene type.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np
import pytest

from scorer import Card, RuleSet, get_rules, parse_card, parse_cards
from vision.calibration import Calibration
from vision.detector import MODELS_DIR, CardDetector, read_model_json
from vision.doubts import FAINT_CARD, ONE_OR_TWO, TOO_MANY_COPIES
from vision.geometry import Corner
from vision.layout import group_cards
from vision.pairing import PhysicalCard, facing_score, pair_corners, typical_ratio
from vision.pipeline import PhotoReading, read_photo
from vision.score import FREE, PLAYER, judge_hand, lay_out, score_reading
from vision.settings import ReaderSettings
from vision.training.data.decks import Deck, load_decks
from vision.training.data.scenes import RenderedScene, render_scene
from web_support import expected_uncertain
from web_support import tiplu_in_process as _run

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_images"
EXPECTED = json.loads((SAMPLES / "expected.json").read_text())
SCENES_PER_CASE = 10


@lru_cache(maxsize=1)
def decks() -> tuple[Deck, ...]:
    try:
        return tuple(load_decks(os.environ.get("TIPLU_TEST_DECKS", "holdout")))
    except ValueError:
        return tuple(load_decks("drawn"))


@lru_cache(maxsize=None)
def scenes(scene: str, copies: int) -> tuple[RenderedScene, ...]:
    cards = ["6H"] * copies if copies else None
    return tuple(render_scene(np.random.default_rng([31, copies, i]), scene, size=(640, 480), decks=list(decks()),
                              cards=cards, distractors=False) for i in range(SCENES_PER_CASE))


def truth_corners(shot: RenderedScene, rng: np.random.Generator, jitter: float = 0.04) -> list[Corner]:
    out = []
    for b in shot.geometry["boxes"]:
        x1, y1, x2, y2 = b["bbox"]
        w, h = x2 - x1, y2 - y1
        box = (x1 + rng.normal(0, jitter * w), y1 + rng.normal(0, jitter * h),
               x2 + rng.normal(0, jitter * w), y2 + rng.normal(0, jitter * h))
        out.append(Corner(b["name"], float(rng.uniform(0.6, 1.0)), tuple(float(v) for v in box)))
    return out


def true_counts(shot: RenderedScene) -> Counter[str]:
    """Cards with at least one visible corner, per face (a card with none cannot be counted)."""
    by_id = {c["id"]: c["card"] for c in shot.geometry["cards"]}
    return Counter(by_id[i] for i in {b["card_id"] for b in shot.geometry["boxes"]})


# scene, identical copies laid (0 = the generator's own mix), least exact-count share of faces
CASES = [("single", 0, 0.95), ("tunnela", 1, 0.9), ("tunnela", 2, 0.9), ("tunnela", 3, 0.9),
         ("meld_row", 0, 0.93), ("fan", 0, 0.95), ("maal_spread", 0, 0.9), ("table", 0, 0.93)]


@pytest.mark.parametrize("scene, copies, least", CASES)
def test_pairing_counts_cards_on_true_corners(scene: str, copies: int, least: float) -> None:
    rng = np.random.default_rng(5)
    faces_ok = faces = scenes_ok = 0
    for shot in scenes(scene, copies):
        truth = true_counts(shot)
        found = pair_corners(truth_corners(shot, rng), shot.image).counts()
        faces += len(truth)
        faces_ok += sum(found.get(card, 0) == n for card, n in truth.items())
        scenes_ok += found == dict(truth)
    share = faces_ok / faces
    print(f"\n{scene} x{copies or 'mix'} ({decks()[0].name}): exact count {faces_ok}/{faces} faces, "
          f"{scenes_ok}/{SCENES_PER_CASE} scenes")
    assert share >= least


def rank_only(corner: Corner, rng: np.random.Generator) -> Corner:
    """The same index found again as a tighter box (the rank without its pip), a little less sure."""
    x1, y1, x2, y2 = corner.box
    w, h = x2 - x1, y2 - y1
    return Corner(corner.card, corner.confidence * 0.7, (x1 + rng.uniform(0, 0.1) * w, y1 + rng.uniform(0, 0.1) * h,
                                                         x2 - rng.uniform(0.1, 0.3) * w, y2 - rng.uniform(0.2, 0.4) * h))


@pytest.mark.parametrize("scene, copies", [("tunnela", 2), ("tunnela", 3), ("meld_row", 0), ("maal_spread", 0)])
def test_an_index_found_twice_is_still_one_card(scene: str, copies: int) -> None:
    """Stage 1 may box one index twice (IoU under its NMS threshold); the count must not change,
    while stacked copies, whose indices also overlap, are still told apart."""
    rng = np.random.default_rng(12)
    once = twice = 0
    for shot in scenes(scene, copies):
        corners = truth_corners(shot, rng)
        doubled = corners + [rank_only(c, rng) for c in corners]
        once += pair_corners(corners, shot.image).counts() == dict(true_counts(shot))
        twice += pair_corners(doubled, shot.image).counts() == dict(true_counts(shot))
    assert twice >= once - 1 and twice >= SCENES_PER_CASE - 2


def test_four_index_cards_count_once() -> None:
    """Dondorf prints an index in all four corners; single cards must still count once."""
    try:
        four = load_decks("svg", names=["dondorf"])
    except ValueError:
        four = []
    if not four:
        pytest.skip("the dondorf deck (kdegames-card-data-kf5 + rsvg-convert) is not installed")
    rng = np.random.default_rng(8)
    ok = faces = 0
    for i in range(SCENES_PER_CASE):
        shot = render_scene(np.random.default_rng([37, i]), "single", size=(640, 480), decks=four,
                            distractors=False)
        truth = true_counts(shot)
        found = pair_corners(truth_corners(shot, rng), shot.image).counts()
        faces += len(truth)
        ok += sum(found.get(card, 0) == n for card, n in truth.items())
    print(f"\nfour-index singles: exact count {ok}/{faces} faces")
    assert ok / faces >= 0.85


@pytest.mark.parametrize("copies", [1, 2, 3])
def test_identical_copies_need_the_facing_test(copies: int) -> None:
    """With the photo, stacked copies are never merged; on distance alone they can be."""
    rng = np.random.default_rng(9)
    with_photo = without = 0
    for shot in scenes("tunnela", copies):
        corners = truth_corners(shot, rng)
        with_photo += pair_corners(corners, shot.image).counts() == dict(true_counts(shot))
        without += pair_corners(corners).counts() == dict(true_counts(shot))
    assert with_photo >= without
    assert with_photo >= SCENES_PER_CASE - 1


# Without rules a face is kept as often as any rule family holds it: 3 copies, 3 printed jokers (rummy).
@pytest.mark.parametrize("name, seen, kept, rules", [
    ("JOKER", 4, 3, None), ("JOKER", 3, 3, None), ("2C", 3, 3, None), ("2C", 4, 3, None),
    ("2C", 3, 2, get_rules("rummy", {"two_decks": True})), ("JOKER", 3, 2, get_rules("rummy", {"two_decks": True})),
    ("JOKER", 2, 1, get_rules("nepali", {"printed_jokers": 1})),
])
def test_copy_limits(name: str, seen: int, kept: int, rules: RuleSet | None) -> None:
    corners = [Corner(name, 0.9, (200.0 * i, 0.0, 200.0 * i + 10, 15.0)) for i in range(seen)]
    result = pair_corners(corners, rules=rules)
    assert result.counts() == {name: kept}
    assert result.clamped == ((name,) if seen > kept else ())


def test_counts_above_the_decks_are_clamped_and_flagged() -> None:
    corners = [Corner("7H", 0.9 - 0.1 * i, (100.0 * i, 0.0, 100.0 * i + 20, 30.0)) for i in range(4)]
    image = np.full((60, 420, 3), 255, np.uint8)
    for i in range(4):
        cv2.putText(image, "7", (100 * i + 3, 25), cv2.FONT_HERSHEY_SIMPLEX, 0.8, (0, 0, 200), 2)
    result = pair_corners(corners, image)
    assert result.counts() == {"7H": 3}
    assert result.clamped == ("7H",)
    assert all(c.uncertain and c.clamped for c in result.cards)
    assert 0.6 not in {c.confidence for c in result.cards}  # the least sure copy was dropped


# One index boxed twice: the rank alone inside the box of rank and pip. Same name from 0.7 of the
# smaller box inside, another name (stage 2 read the two boxes two ways) from 0.8; the surer box stays.
@pytest.mark.parametrize("second, inner, cards", [
    ("3S", (2.0, 2.0, 18.0, 22.0), ["3S"]),          # wholly inside
    ("3C", (2.0, 2.0, 18.0, 22.0), ["3S"]),          # wholly inside, named another way
    ("3S", (4.0, 12.0, 20.0, 36.0), ["3S"]),         # 0.75 inside
    ("3C", (4.0, 12.0, 20.0, 36.0), ["3C", "3S"]),   # 0.75 inside: another card's index may lie there
    ("3C", (30.0, 0.0, 50.0, 30.0), ["3C", "3S"]),   # beside it
])
def test_an_index_boxed_twice_is_one_card(second: str, inner: tuple[float, ...], cards: list[str]) -> None:
    corners = [Corner("3S", 0.6, (0.0, 0.0, 20.0, 30.0)), Corner(second, 0.4, inner)]  # type: ignore[arg-type]
    assert sorted(c.card for c in pair_corners(corners).cards) == cards


@pytest.mark.parametrize("conf, below, uncertain", [(0.9, 0.5, False), (0.49, 0.5, True), (0.6, 0.7, True),
                                                    (0.5, 0.5, False)])
def test_low_confidence_cards_are_marked_uncertain(conf: float, below: float, uncertain: bool) -> None:
    [card] = pair_corners([Corner("KS", conf, (0.0, 0.0, 10.0, 15.0))], uncertain_below=below).cards
    assert card.uncertain is uncertain and card.confidence == pytest.approx(conf)


def test_a_pair_is_surer_than_either_corner_and_spans_the_card() -> None:
    shot = render_scene(np.random.default_rng(3), "single", size=(400, 300), decks=list(decks()), cards=["QS"],
                        effects=False)
    corners = [Corner("QS", 0.6, tuple(b["bbox"])) for b in shot.geometry["boxes"]]
    assert len(corners) == 2
    [card] = pair_corners(corners, shot.image).cards
    assert card.confidence == pytest.approx(0.84)
    assert card.corners == (0, 1)
    outline = np.array(shot.geometry["cards"][0]["outline"])
    card_w = np.ptp(outline[:, 0])
    assert card.box[2] - card.box[0] > 0.6 * card_w


def test_facing_score_on_a_real_card() -> None:
    shot = render_scene(np.random.default_rng(4), "single", size=(400, 300), decks=list(decks()), cards=["9H"],
                        effects=False)
    gray = cv2.cvtColor(shot.image, cv2.COLOR_BGR2GRAY)
    from vision.pairing import _crop
    tl, br = (_crop(gray, b["bbox"]) for b in shot.geometry["boxes"])
    assert facing_score(tl, br) > 0.1 > facing_score(tl, tl)


@pytest.mark.parametrize("ratios, expected", [([], 3.5), ([2.0], 2.0), ([2.0, 2.1, 2.2, 7.0], 2.1),
                                              ([4.0, 4.2, 1.4], 4.1)])
def test_typical_ratio_is_the_mode(ratios: list[float], expected: float) -> None:
    assert typical_ratio(ratios) == pytest.approx(expected, rel=0.06)


def cards_and_two_nines(factor: float, others: int = 6) -> list[Corner]:
    """``others`` cards whose two indices lie 120 px apart along their diagonal, two 9C
    indices ``factor`` times that far apart (one card at 1.0; further, two copies each
    showing one index, as in a meld row whose top card hides the other copy's corners),
    and a third 9C index far off (a third copy: the distance test asks only of names seen
    three times or more)."""
    corners = []
    for k, name in enumerate("AS 2S 3S 4S 5S 6S 7S 8S".split()[:others]):
        x = 150.0 * k
        corners += [Corner(name, 0.9, (x, 0.0, x + 20, 30.0)), Corner(name, 0.9, (x + 72, 96.0, x + 92, 126.0))]
    dx, dy = 72 * factor, 96 * factor
    return corners + [Corner("9C", 0.9, (0.0, 400.0, 20.0, 430.0)),
                      Corner("9C", 0.9, (dx, 400 + dy, dx + 20, 430 + dy)),
                      Corner("9C", 0.9, (860.0, 560.0, 880.0, 590.0))]


# distance factor, cards around, 9Cs read (the third copy's lone index included), both marked uncertain
@pytest.mark.parametrize("factor, others, nines, unsure", [
    (1.0, 6, 2, False), (1.1, 6, 2, False), (1.2, 6, 3, True), (1.4, 6, 3, False), (0.6, 6, 3, False),
    (1.4, 1, 2, False),  # too few pairs to know the photo's card size: the index sizes decide, as before
])
def test_a_pair_off_the_photos_card_size_is_two_copies(factor: float, others: int, nines: int, unsure: bool) -> None:
    corners = cards_and_two_nines(factor, others)
    for found in pair_corners(corners), pair_corners(corners, drawn_indices(corners)):
        nine = [c for c in found.cards if c.card == "9C"]
        assert len(nine) == nines and len(found.cards) == others + nines
        two = (2 * others, 2 * others + 1)
        assert found.apart == ((two,) if unsure else ())
        assert [c.corners for c in found.cards if c.uncertain] == ([(two[0],), (two[1],)] if unsure else [])


def drawn_indices(corners: list[Corner]) -> np.ndarray:
    """A photo with a mark in each corner box: top-left in the first corner of each pair, turned
    180 degrees (bottom-right) in the second, so the facing test sees each pair face opposite ways."""
    image = np.full((600, 900, 3), 235, np.uint8)
    for k, corner in enumerate(corners):
        x1, y1, x2, y2 = (int(v) for v in corner.box)
        w, h = (x2 - x1) // 2, (y2 - y1) // 2
        x, y = (x1, y1) if k % 2 == 0 else (x2 - w, y2 - h)
        cv2.rectangle(image, (x + 2, y + 2), (x + w, y + h), (20, 20, 20), -1)
    return image


class CornersGiven:
    """A detector backend that reports the corners it is given, whatever the photo (the pairing's input)."""

    def __init__(self, corners: list[Corner]) -> None:
        self.corners = corners
        self.settings = ReaderSettings(format="corners-given", passes=("base",))
        self.calibration = Calibration()

    def detect(self, image_bgr: np.ndarray, conf: float = 0.25) -> list[Corner]:
        return [c for c in self.corners if c.confidence >= conf]

    def look_around(self, image_bgr: np.ndarray, corners: Sequence[Corner], conf: float,
                    known: Sequence[Sequence[float]] = (), known_iou: float = 0.3) -> list[Corner]:
        return []


def test_two_copies_that_may_be_one_card_are_both_marked_with_a_doubt() -> None:
    """Two copies are what a Marriage table most often shows, so the reading keeps both; the
    player is asked, and the doubt frames both."""
    corners = cards_and_two_nines(1.2)
    reading = read_photo(drawn_indices(corners), CornersGiven(corners), 0.25)
    apart = [i for i, c in enumerate(reading.cards) if c.card == "9C" and c.corners[0] in (12, 13)]
    [doubt] = [d for d in reading.doubts if d.kind == ONE_OR_TWO]
    assert reading.card_names().count("9C") == 3 and doubt.cards == tuple(apart) and reading.uncertain == apart
    assert doubt.box == (0.0, 400.0, corners[-2].box[2], corners[-2].box[3])
    assert doubt.to_dict()["message"] == ("two 9C are read here, but they may be the two corners of one 9C: "
                                          "if it is one card, remove one of them")
    far = cards_and_two_nines(1.5)
    sure = read_photo(drawn_indices(far), CornersGiven(far), 0.25)
    assert sure.card_names().count("9C") == 3 and not sure.uncertain
    assert not [d for d in sure.doubts if d.kind == ONE_OR_TWO]


def test_a_printed_joker_in_a_game_without_them_is_left_out_and_says_so() -> None:
    """A laptop's "Lenovo" sticker was read as a JOKER corner on a real photo. Nepali rules play without
    printed jokers: the reading leaves it out, says why at its place (not "3 decks hold 3"), and a faint
    corner that looks like a joker is named by its likeliest other card (the place may hold a missed
    card), or is no doubt when it has none. Without rules (or with the option on) the joker stays a
    card to check."""
    corners = [Corner("9H", 0.86, (300.0, 300.0, 320.0, 330.0)), Corner("JOKER", 0.55, (4.0, 160.0, 118.0, 231.0)),
               Corner("JOKER", 0.19, (500.0, 100.0, 520.0, 130.0)),
               Corner("JOKER", 0.18, (200.0, 400.0, 220.0, 430.0), alternatives=(("QH", 0.3),))]
    image = np.full((640, 640, 3), 200, np.uint8)
    faint = Calibration(faint_above=0.1)
    nepali = read_photo(image, CornersGiven(corners), 0.25, rules=get_rules("nepali"), calibration=faint)
    assert nepali.card_names() == ["9H"]
    [doubt] = [d for d in nepali.doubts if d.kind == TOO_MANY_COPIES]
    assert doubt.box == (4.0, 160.0, 118.0, 231.0) and doubt.cards == ()
    assert str(doubt.message).startswith("a printed joker seems to lie at the place marked, but this game is "
                                         "played without printed jokers, so it is left out")
    assert [(d.card, d.box) for d in nepali.doubts if d.kind == FAINT_CARD] == [("QH", (200.0, 400.0, 220.0, 430.0))]
    for rules in (None, get_rules("nepali", {"printed_jokers": 3})):
        kept = read_photo(image, CornersGiven(corners), 0.25, rules=rules, calibration=faint)
        assert sorted(kept.card_names()) == ["9H", "JOKER"] and not [d for d in kept.doubts if d.kind == TOO_MANY_COPIES]
        assert [d.card for d in kept.doubts if d.kind == FAINT_CARD] == ["JOKER", "JOKER"]


def test_melds_are_grouped_as_laid() -> None:
    rng = np.random.default_rng(2)
    exact = total = 0
    for shot in scenes("meld_row", 0):
        corners = truth_corners(shot, rng, jitter=0.02)
        cards = pair_corners(corners, shot.image).cards
        groups = group_cards(cards, corners)
        assert sorted(i for g in groups for i in g) == list(range(len(cards)))
        ids = [frozenset().union(*({shot.geometry["boxes"][k]["card_id"] for k in cards[i].corners}
                                   for i in g)) for g in groups]
        by_id = {c["id"]: c["group"] for c in shot.geometry["cards"]}
        truth: dict[str, set[int]] = {}
        for b in shot.geometry["boxes"]:
            truth.setdefault(by_id[b["card_id"]], set()).add(b["card_id"])
        exact += sum(frozenset(g) in ids for g in truth.values())
        total += len(truth)
    print(f"\nmelds grouped exactly: {exact}/{total}")
    assert exact / total >= 0.9


def test_group_order_follows_the_row() -> None:
    corners = [Corner(n, 0.9, (x, 10.0, x + 10, 25.0)) for n, x in
               (("5S", 24.0), ("3S", 0.0), ("4S", 12.0), ("KD", 100.0), ("KH", 112.0), ("KC", 124.0))]
    cards = pair_corners(corners).cards
    groups = group_cards(cards, corners)
    assert [[cards[i].card for i in g] for g in groups] == [["3S", "4S", "5S"], ["KD", "KH", "KC"]]


def _expected_reading(name: str) -> PhotoReading:
    """What the pipeline builds from the sample's true corners (no detector involved)."""
    entry = EXPECTED[name]
    image = cv2.imread(str(SAMPLES / name))
    corners = tuple(Corner(c["card"], 0.9, tuple(c["box"])) for c in entry["corners"])
    pairing = pair_corners(corners, image)
    groups = group_cards(pairing.cards, corners)
    order = [i for g in groups for i in g]
    cards = tuple(pairing.cards[i] for i in order)
    renum = {old: new for new, old in enumerate(order)}
    return PhotoReading(name, corners, cards, tuple(tuple(renum[i] for i in g) for g in groups))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_samples_true_corners_give_the_expected_cards(name: str) -> None:
    reading = _expected_reading(name)
    assert sorted(reading.card_names()) == EXPECTED[name]["cards"]


def test_declared_sample_is_judged_on_the_players_melds() -> None:
    entry = EXPECTED["declared_hand.jpg"]
    reading = _expected_reading("declared_hand.jpg")
    assert sorted(map(sorted, reading.grouped_names())) == sorted(map(sorted, entry["groups"]))
    verdict = score_reading(reading, get_rules("nepali", {}), tiplu=parse_card(entry["tiplu"]))
    assert verdict.grouping == PLAYER
    assert verdict.valid is entry["valid"] is True
    assert verdict.maal is not None and verdict.maal.total == entry["maal"]


@pytest.mark.parametrize("name", ["maal_spread.jpg", "tunnela.jpg", "tiplu.jpg"])
def test_other_samples_get_their_maal(name: str) -> None:
    entry = EXPECTED[name]
    verdict = score_reading(_expected_reading(name), get_rules("nepali", {}), tiplu=parse_card(entry["tiplu"]))
    assert verdict.maal is not None and verdict.maal.total == entry["maal"]
    assert not verdict.valid


@pytest.mark.parametrize("sizes, melds, discard", [
    ([3, 1, 3], 2, 3),
    ([2, 2], 2, None),
    ([3, 1, 1], None, None),
    ([2, 3], None, None),
    ([3], None, None),
])
def test_groups_that_look_like_melds(sizes: list[int], melds: int | None, discard: int | None) -> None:
    groups, start = [], 0
    for size in sizes:
        groups.append(list(range(start, start + size)))
        start += size
    laid = lay_out(groups, start)
    if melds is None:
        assert not laid.shows_declaration
    else:
        assert laid.shows_declaration and len(laid.melds) == melds
        assert laid.discard == discard


VALID_HAND = parse_cards("3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D")
SEVEN_MELDS = [list(range(i, i + 3)) for i in range(0, 21, 3)]


@pytest.mark.parametrize("cards, groups, grouping, valid, reason", [
    (VALID_HAND, SEVEN_MELDS, PLAYER, True, None),
    (VALID_HAND + parse_cards("9C"), SEVEN_MELDS + [[21]], PLAYER, True, None),
    (VALID_HAND, SEVEN_MELDS[:6] + [[18], [19], [20]], FREE, True, None),
    (VALID_HAND, SEVEN_MELDS[:6] + [[18, 19], [20]], FREE, True, None),
    (VALID_HAND[3:6] + VALID_HAND[:3] + VALID_HAND[6:], SEVEN_MELDS, PLAYER, True, None),
    (parse_cards("3S 4S 6H 5S 6H 6H") + VALID_HAND[6:], SEVEN_MELDS, PLAYER, False, "group 1"),
])
def test_judge_hand_takes_the_hand_as_laid_when_the_photo_shows_a_declaration(
        cards: list[Card], groups: list[list[int]], grouping: str, valid: bool, reason: str | None) -> None:
    verdict = judge_hand(cards, get_rules(), groups=groups, tiplu=parse_card("JS"))
    assert verdict.grouping == grouping
    assert verdict.declare is (verdict.as_laid if grouping == PLAYER else verdict.search)
    assert verdict.declare is not None and verdict.declare.valid is valid
    assert (verdict.declare.reason or "").startswith(reason or "")


def test_cards_lying_apart_are_named_as_laid() -> None:
    verdict = judge_hand(VALID_HAND, get_rules(), groups=SEVEN_MELDS[:6] + [[18], [19]], tiplu=parse_card("JS"))
    assert verdict.laid is not None and verdict.laid.apart == (18, 19, 20)
    assert verdict.as_laid is not None and not verdict.as_laid.valid
    assert verdict.as_laid.reason == "JH 5C 5D lie apart from the melds; only the discard may"
    assert verdict.grouping == FREE and verdict.search is not None and verdict.search.valid


def test_free_check_when_the_photo_shows_no_melds() -> None:
    reading = _expected_reading("maal_spread.jpg")
    verdict = score_reading(reading, get_rules("nepali", {}), tiplu=parse_card("5D"))
    assert verdict.grouping == FREE
    assert verdict.declare is None and "21 cards" in (verdict.declare_error or "")
    assert verdict.to_dict()["declare"]["valid"] is False


def _recall(found: list[str], expected: list[str]) -> float:
    return sum((Counter(found) & Counter(expected)).values()) / len(expected)


#: Share of the samples' cards the shipped model names right at the default --conf, and
#: how many cards it may add that are not there. Model v0.5 names all 36 and adds none; v0.4
#: missed 3C of the declared hand and added a 5D to the maal spread; v0.3 named 34 of 36 (it
#: missed 10S and 10D in the declared hand) and added none; v0.2 named 34 too (missing 10S and
#: the maal spread's 6D) and added 2; v0.1 named 6 of 36. See models/HISTORY.md.
SAMPLE_RECALL_FLOOR = 0.9
SAMPLE_EXTRA_CARDS = 3
CALIBRATION = Calibration.from_model_json(read_model_json(MODELS_DIR))


def test_tiplu_detect_on_the_samples() -> None:
    photos = sorted(SAMPLES.glob("*.jpg"))
    proc = _run("detect", "--json", *map(str, photos))
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [Path(r["image"]).name for r in lines] == [p.name for p in photos]
    found: list[str] = []
    expected: list[str] = []
    for result, photo in zip(lines, photos):
        assert list(result) == ["image", "cards", "corners", "groups", "doubts"]
        h, w = cv2.imread(str(photo)).shape[:2]
        for item in result["corners"] + result["cards"]:
            x1, y1, x2, y2 = item["box"]
            assert 0 <= x1 <= x2 <= w and 0 <= y1 <= y2 <= h
        # a faint corner (from named_floor) counts where the classifier names it clearly: since v0.8.4's
        # mirrored look, tiplu.jpg's 5D has its top-left index at 0.12 beside the sure one
        assert all(CALIBRATION.named_floor <= c["confidence"] <= 1 for c in result["corners"])
        assert all(0.25 <= c["confidence"] <= 1 for c in result["cards"])
        for card in result["cards"]:
            assert all(result["corners"][k]["card"] == card["card"] for k in card["corners"])
            assert not card["clamped"] or card["uncertain"]
        assert sorted(i for g in result["groups"] for i in g) == list(range(len(result["cards"])))
        direct = read_photo(cv2.imread(str(photo)), shipped_detector(), 0.25, name=str(photo))
        assert [c["uncertain"] for c in result["cards"]] == expected_uncertain(direct, CALIBRATION), "the core's doubt"
        assert max(Counter(c["card"] for c in result["cards"]).values(), default=0) <= 3
        found += [c["card"] for c in result["cards"]]
        expected += EXPECTED[photo.name]["cards"]
    recall = _recall(found, expected)
    extra = sum((Counter(found) - Counter(expected)).values())
    print(f"\nshipped model on the samples: {recall:.0%} of {len(expected)} cards named, {extra} extra")
    assert recall >= SAMPLE_RECALL_FLOOR
    assert extra <= SAMPLE_EXTRA_CARDS


@lru_cache(maxsize=1)
def shipped_detector() -> CardDetector:
    return CardDetector()


@pytest.mark.parametrize("name", ["tunnela.jpg", "tiplu.jpg", "real_maal.jpg"])
def test_samples_the_shipped_model_reads_exactly(name: str) -> None:
    reading = read_photo(cv2.imread(str(SAMPLES / name)), shipped_detector(), 0.25, name=name)
    assert sorted(reading.card_names()) == sorted(EXPECTED[name]["cards"])


def test_detect_prints_one_line_per_photo_even_at_low_conf() -> None:
    proc = _run("detect", str(SAMPLES / "tiplu.jpg"), "--conf", "0.05")
    assert proc.returncode == 0
    [line] = proc.stdout.splitlines()
    assert list(json.loads(line)) == ["image", "cards", "corners", "groups", "doubts"]


@pytest.mark.parametrize("args, code, needle", [
    (["--tiplu", "5D", "--json"], None, None),
    ([], 2, "--tiplu"),
    (["--tiplu", "XX"], 2, "XX"),
    (["--tiplu", "5D", "--option", "nonsense=1"], 2, "nonsense"),
    (["--rules", "rummy"], 2, "--turned"),
    (["--tiplu", "5D", "--conf", "3"], 2, "--conf"),
])
def test_tiplu_score_exit_codes(args: list[str], code: int | None, needle: str | None) -> None:
    proc = _run("score", str(SAMPLES / "declared_hand.jpg"), *args)
    assert "Traceback" not in proc.stderr
    if code is None:
        verdict = json.loads(proc.stdout)
        assert proc.returncode == (0 if verdict["declare"]["valid"] else 1)
        assert verdict["grouping"] in (PLAYER, FREE)
        assert verdict["maal"] is None or isinstance(verdict["maal"]["total"], int)
    else:
        assert proc.returncode == code and needle in proc.stderr


def test_read_photo_api_on_a_sample() -> None:
    image = cv2.imread(str(SAMPLES / "tunnela.jpg"))
    reading = read_photo(image, shipped_detector(), 0.25, name="tunnela.jpg")
    data = reading.to_dict()
    assert list(data) == ["image", "cards", "corners", "groups", "doubts"]
    assert set(reading.timings) == {"detect_ms", "pair_ms", "group_ms", "look_ms"}
    assert all(isinstance(c, PhysicalCard) for c in reading.cards)


@pytest.mark.parametrize("names_the_other, cards", [(True, 3), (False, 4)])
def test_a_card_read_two_ways_is_one_doubtful_card(names_the_other: bool, cards: int) -> None:
    """One index of a card read as another suit (as a light-on-dark deck's gold ink invites): joined
    to its partner when one names the other, the card marked uncertain with the other name offered."""
    shot = render_scene(np.random.default_rng(9), "maal_spread", size=(900, 600), decks=list(decks()),
                        cards=["AS", "7H", "KC"], effects=False)
    corners = [Corner(b["name"], 0.8, tuple(b["bbox"])) for b in shot.geometry["boxes"]]
    assert len(corners) == 6 and pair_corners(corners, shot.image).counts() == {"AS": 1, "7H": 1, "KC": 1}
    k = next(i for i, c in enumerate(corners) if c.card == "AS")
    corners[k] = Corner("AD", 0.7, corners[k].box, (("AS", 0.3),) if names_the_other else ())
    found = pair_corners(corners, shot.image)
    assert len(found.cards) == cards
    if names_the_other:
        [ace] = [c for c in found.cards if c.card.startswith("A")]
        assert ace.uncertain and len(ace.corners) == 2
        assert {ace.card, ace.alternatives[0][0]} == {"AS", "AD"}
