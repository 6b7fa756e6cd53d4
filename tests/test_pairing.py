"""Pairing's named steps (:mod:`vision.pairing`), case by case: the gates, the scale, the choice."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.geometry import Corner
from vision.pairing import (AMBIGUOUS_FACING, DEFAULT_RATIO, PAIR_RATIO, RATIO_SPREAD, RATIO_SPREAD_CLEAR,
                            SPAN_SPREAD, SPAN_SPREAD_SHORT, SPAN_UNSURE, UNTESTED_FACING, Candidate, Span,
                            candidate_pairs, choose_pairs, corner_facing, corners_by_name, pair_corners, photo_scale, ratio_off,
                            span_gate, take_greedily, typical_ratio)

SIDE = (10, 16)  # an index box's width and height, px
DIAGONAL = (36, 48)  # from a card's top-left index to its bottom-right one, px: 60 px apart


def card(name: str, x: float, y: float, apart: float = 1.0, turned: bool = False) -> list[Corner]:
    """One card's two indices, the second ``apart`` times the usual diagonal off the first."""
    dx, dy = DIAGONAL[0] * apart, DIAGONAL[1] * apart
    angles = (0.0, 180.0) if turned else (None, None)
    return [Corner(name, 0.9, (x, y, x + SIDE[0], y + SIDE[1]), angle=angles[0]),
            Corner(name, 0.9, (x + dx, y + dy, x + dx + SIDE[0], y + dy + SIDE[1]), angle=angles[1])]


@pytest.mark.parametrize(("facing", "ratio", "only_two", "taken"), [
    (0.0, 3.0 * RATIO_SPREAD * 0.99, False, True),  # within the spread
    (0.0, 3.0 * RATIO_SPREAD * 1.01, False, False),  # beyond it
    (0.0, 3.0 / RATIO_SPREAD / 1.01, False, False),  # nearer counts alike
    (0.5, 3.0 * RATIO_SPREAD * 1.01, False, True),  # clearly opposite-facing: the wider spread
    (0.5, 3.0 * RATIO_SPREAD_CLEAR * 1.01, False, False),
    (0.2, 3.0 * RATIO_SPREAD * 1.01, True, True),  # the only two of their name, facing opposite ways
    (0.05, 3.0 * RATIO_SPREAD * 1.01, True, False),  # ... but not facing clearly enough
])
def test_the_ratio_gate_allows_one_card_size_per_photo(facing: float, ratio: float, only_two: bool,
                                                       taken: bool) -> None:
    off = ratio_off(Candidate(facing, ratio, 0, 1), 3.0, only_two)
    assert (off is not None) == taken
    if off is not None:
        assert off == pytest.approx(abs(math.log(ratio / 3.0)))


@pytest.mark.parametrize(("factor", "verdict"), [
    (1.0, Span.ONE_CARD),
    (SPAN_SPREAD * 0.99, Span.ONE_CARD),
    (SPAN_SPREAD * 1.01, Span.TWO_UNSURE),
    (SPAN_UNSURE * 0.99, Span.TWO_UNSURE),
    (SPAN_UNSURE * 1.01, Span.TWO_CARDS),
    (1 / SPAN_SPREAD_SHORT * 1.01, Span.ONE_CARD),
    (1 / SPAN_SPREAD_SHORT * 0.99, Span.TWO_CARDS),
])
def test_the_span_gate_splits_pairs_lying_off_their_neighbours_span(factor: float, verdict: Span) -> None:
    assert span_gate(80.0 * factor, 80.0) is verdict


@pytest.mark.parametrize(("ratios", "expected"), [
    ([], DEFAULT_RATIO),
    ([4.0], 4.0),
    ([2.0, 2.05, 2.1, 6.0], 2.05),
])
def test_the_photo_scale_is_the_commonest_ratio(ratios: list[float], expected: float) -> None:
    assert typical_ratio(ratios) == pytest.approx(expected, rel=0.03)


def test_pairs_are_taken_best_first_each_corner_once() -> None:
    assert take_greedily([(0.1, 0, 1), (0.5, 1, 2), (0.3, 0, 2), (0.2, 0, 3)], range(5)) == [(1, 2), (0, 3), (4,)]
    assert take_greedily([], [3, 1]) == [(3,), (1,)]


def test_counted_and_tentative_corners_of_one_name_are_kept_apart_and_repeats_left_out() -> None:
    corners = card("7H", 0, 0) + card("7H", 200, 0)
    repeat = Corner("7H", 0.5, (1, 1, 10, 15))  # the first index boxed again, less surely
    assert corners_by_name([*corners, repeat], {2, 3}) == {("7H", False): [0, 1], ("7H", True): [2, 3]}


def test_candidates_are_a_card_diagonal_apart_and_not_clearly_facing_alike() -> None:
    near = card("7H", 0, 0, apart=PAIR_RATIO[0] * 0.9 * 12.65 / 60)  # under the least card diagonal
    alike = [replace_angle(c, 0.0) for c in card("8S", 300, 0, turned=True)]  # two copies lying alike
    assert corner_facing(*alike, None, None) < -AMBIGUOUS_FACING
    one = card("KS", 600, 0, turned=True)
    corners = near + alike + one
    found = candidate_pairs(corners, corners_by_name(corners, set()), None)
    assert list(found) == [("KS", False)]
    [candidate] = found["KS", False]
    assert (candidate.i, candidate.j) == (4, 5) and candidate.facing > 0
    assert candidate_pairs(corners[:4], corners_by_name(corners[:4], set()), None) == {}
    untested = card("QD", 0, 0)
    assert candidate_pairs(untested, corners_by_name(untested, set()), None)["QD", False][0].facing == UNTESTED_FACING


def replace_angle(corner: Corner, angle: float) -> Corner:
    return Corner(corner.card, corner.confidence, corner.box, corner.alternatives, angle=angle)


def table_with_copies(apart: float) -> list[Corner]:
    """Three cards of other names in a row, and two copies of 7H: one shows both its indices
    ``apart`` times the usual diagonal apart, the other one index alone, far off."""
    corners = card("2S", 0, 0) + card("3S", 80, 0) + card("4S", 160, 0)
    corners += card("7H", 240, 0, apart) + [Corner("7H", 0.8, (600, 300, 610, 316))]
    return corners


@pytest.mark.parametrize(("apart", "paired", "marked"), [
    (1.0, True, False),  # the neighbours' span: one card
    (1.2, False, True),  # a little further: two cards, both marked
    (1.4, False, False),  # much further: two cards
])
def test_copies_lying_further_apart_than_their_neighbours_cards_are_two_cards(apart: float, paired: bool,
                                                                             marked: bool) -> None:
    corners = table_with_copies(apart)
    by_name = corners_by_name(corners, set())
    candidates = candidate_pairs(corners, by_name, None)
    scale = photo_scale(corners, by_name, candidates)
    assert scale.ratio == pytest.approx(60 / math.sqrt(SIDE[0] * SIDE[1]), rel=0.03)  # the three cards agree
    assert [name for name, _, _ in scale.spans] == ["2S", "3S", "4S", "7H"]  # 7H's own is not asked about 7H
    groups, unsure = choose_pairs(corners, by_name, candidates, scale)
    assert ((6, 7) in groups) == paired and (unsure == [(6, 7)]) == marked
    pairing = pair_corners(corners)
    assert pairing.apart == (((6, 7),) if marked else ())
    sevens = [c for c in pairing.cards if c.card == "7H"]
    assert len(sevens) == (2 if paired else 3)
    if marked:
        assert all(c.uncertain for c in sevens if set(c.corners) & {6, 7})


def test_indices_that_see_each_other_along_the_diagonal_are_paired() -> None:
    rng = np.random.default_rng(0)
    image = (rng.random((200, 400, 3)) * 255).astype(np.uint8)
    corners = card("AS", 10, 10, turned=True) + card("AS", 120, 10, turned=True) + card("9C", 240, 10, turned=True)
    pairing = pair_corners(corners, image)
    assert [(c.card, c.corners) for c in pairing.cards] == [("AS", (0, 1)), ("AS", (2, 3)), ("9C", (4, 5))]
