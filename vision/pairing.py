"""From corner detections to physical cards: pair the two indices of one card, count copies.

A card shows its index twice, top-left and bottom-right, the second turned 180 degrees.
Marriage uses three decks, so a photo often holds several cards of the same face (a
tunnela is three 6H stacked). Two corners of one name are taken as one card when:

* they do not **face the same way**: the second crop matches the first clearly better
  unturned than turned 180 degrees (:data:`AMBIGUOUS_FACING`) only for two copies lying
  the same way, as in a meld row or a stacked tunnela; one card's two indices face
  opposite ways, though on small indices the score is often near 0 either way. Where the
  detector gives each corner's angle (:mod:`vision.orientation`) the test is
  surer: each index must see the other along its card's diagonal (:func:`corner_facing`), and
* they lie a **card diagonal apart**: the centre distance is :data:`PAIR_RATIO` index
  sizes (a stacked tunnela's indices lie nearer), about the photo's typical pair distance
  (:data:`RATIO_SPREAD`), and, for a name seen three times or more, about as many pixels
  apart as the neighbouring cards' two indices (:data:`SPAN_SPREAD`): two copies each
  showing one index, as in a meld row whose top card hides the other's corners, lie
  further apart than one card's. Near that limit both are kept and marked uncertain
  (:data:`SPAN_UNSURE`, :attr:`Pairing.apart`).

Stage 1 sometimes finds one index twice (the rank alone and the rank with its pip, as
on a card turned 45 degrees): a same-name corner lying mostly inside a surer one
(:data:`REPEAT_COVER`, :func:`repeated_indices`) is that index again and is left out; so is
one of another name lying almost wholly inside (:data:`REPEAT_COVER_RENAMED`): the same index
boxed twice and named two ways.
Pairs are chosen greedily, most clearly opposite-facing first, each corner used once.
Two lone corners of different names facing clearly opposite ways at the photo's pair
distance are one card read two ways (:func:`split_pairs`): one card, marked uncertain.
Every other corner is a card on its own. A face counted more often than the decks in play
hold (:func:`copy_limits`, from the scorer's rule sets) is clamped (the least confident
extras dropped); the copies kept are flagged ``clamped`` and ``uncertain``.

Faint corners the pipeline offers as ``tentative`` (:meth:`Calibration.may_vouch`) are
paired among themselves only (a counted card keeps its own box and confidence), and a card
made of them is kept only where the angles vouch for it (:func:`vouched_groups`), always
marked uncertain by the pipeline.

Four-index decks (an index in all four corners): the two extra corners lie on the
circle whose diameter is the card's diagonal pair and are joined to it
(:func:`merge_four_index`). This helps single cards and spreads; in overlapped melds of
a four-index deck a card whose diagonal pair is hidden is still over-counted.

:func:`pair_corners` runs these as named steps, in this order:

1. :func:`corners_by_name`: which corners take part (repeated indices left out), by name;
2. :func:`candidate_pairs`: which two corners of one name may be one card;
3. :func:`photo_scale`: the photo's card size, from its clearest candidates;
4. :func:`choose_pairs`: the gates (:func:`ratio_off`, :func:`span_gate`) and the greedy choice;
5. :func:`merge_four_index` and :func:`vouched_groups`: four-index cards joined, faint cards vouched for;
6. :func:`counted_cards`: names read two ways joined, pairs kept apart marked, copies clamped.

>>> from vision.detector import Corner
>>> cards = pair_corners([Corner("7H", 0.9, (10, 10, 20, 25)), Corner("KS", 0.4, (50, 10, 60, 25))])
>>> [(c.card, c.uncertain) for c in cards.cards]
[('7H', False), ('KS', True)]
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, NamedTuple

import cv2
import numpy as np

from scorer import JOKER, RULE_FAMILIES, RuleSet, get_rules
from vision.calibration import Calibration
from vision.geometry import MAX_ALTERNATIVES, PROB_DIGITS, Corner, PhysicalCard
from vision.orientation import diagonal_error, wrap_degrees

# --- Which corners take part (:func:`corners_by_name`) ------------------------------------------

#: Share of a same-name corner's box inside a surer one's that makes it the same index
#: seen twice. A stacked tunnela's indices, 0.5 index sizes apart or more, cover at most
#: about 0.6 of each other.
REPEAT_COVER = 0.7
#: The same for a corner of another name: stage 1 boxed one index twice (rank alone, rank and
#: pip) and stage 2 named the two boxes differently (3S and 3C).
REPEAT_COVER_RENAMED = 0.8

# --- Candidates: which two corners of one name may be one card (:func:`candidate_pairs`) ------

#: Centre distance of a card's two indices, in index sizes (the square root of an index box's
#: area): the range of every design's cards, from big indices on a small card (the low end) to
#: small indices on a big one (the high end). A stacked tunnela's indices mostly lie nearer.
PAIR_RATIO = (1.3, 8.0)
#: Some indices look alike both ways up (8, A, 0), and small ones are blurred: a facing
#: score down to minus this is no evidence that two corners face the same way, and the pair
#: stays a candidate. One card's two indices refused as facing the same way would be read
#: as two cards; the cards read twice that way mostly score a little below 0.
AMBIGUOUS_FACING = 0.3
#: The facing score of a candidate that nothing can test (no photo, and not both angles):
#: the pair is taken on distance alone, as if clearly opposite-facing (at least
#: :data:`CLEAR_FACING`).
UNTESTED_FACING = 1.0
#: The facing score of two corners with angles (:func:`corner_facing`): an index that sees the
#: other off its card's diagonal by this many degrees scores 0, less scores above 0 (one card's
#: two indices), more below 0 (two copies side by side or head to toe).
DIAGONAL_MID = 25.0
#: Degrees off the card's diagonal per unit of facing score with angles (:data:`DIAGONAL_MID`):
#: it puts the angles' score on the crops' scale (:func:`facing_score`), so that one card's two
#: indices seeing each other along the diagonal score as clearly opposite-facing crops do.
DIAGONAL_SCALE = 50.0
#: Side (px) of the square an index crop is resized to for the facing test (:func:`facing_score`).
CROP_SIDE = 32
#: An index crop with a side under this many pixels is too small to compare: no crop, facing score 0.
MIN_CROP_SIDE = 3
#: Gaussian kernel (px) smoothing a resized crop before the comparison, so that print grain and
#: the resize's aliasing count less than the index's shape.
CROP_BLUR = (3, 3)
#: Added to a crop's norm before it is divided by it, so that a blank crop stays 0, not NaN.
CROP_NORM_FLOOR = 1e-6
#: The least side (px) a box is taken to have, so that a box of no width or height has a size.
MIN_SIDE = 1e-6

# --- Scale: the photo's card size (:func:`photo_scale`) --------------------------------------

#: How much better the 180-degree-turned crop must match than the unturned one for two corners to
#: face clearly opposite ways: such pairs set the photo's scale (:func:`photo_scale`), and the only
#: two corners of a name facing so may lie up to :data:`RATIO_SPREAD_CLEAR` off it.
FLIP_MARGIN = 0.1
#: The photo's typical index distance, in index sizes, when no candidate pair gives one: a mid
#: value over all designs.
DEFAULT_RATIO = 3.5
#: Points on the log-ratio axis, from the least candidate ratio to the greatest, at which
#: :func:`typical_ratio` weighs the candidates' density to find its mode.
MODE_GRID = 64
#: Width (in log units) of the Gaussian kernel each candidate ratio adds to that density: narrow
#: enough that one card size is one peak, wide enough that its pairs' small spread adds up.
MODE_WIDTH = 0.12

# --- Gates: a candidate's distance limits (:func:`ratio_off`, :func:`span_gate`) -------------

#: One photo shows one card size: pairs whose index distance is this factor off the photo's
#: typical pair distance are refused, and nearer ones preferred (:data:`SCALE_WEIGHT`).
RATIO_SPREAD = 1.4
#: A facing score of at least this is clearly opposite-facing: such a pair may lie up to
#: :data:`RATIO_SPREAD_CLEAR` off the photo's typical pair distance.
CLEAR_FACING = 0.3
#: Clearly opposite-facing indices, or the only two of their name on the photo, may lie this factor
#: off the photo's typical pair distance (face cards' indices differ in size from the others').
RATIO_SPREAD_CLEAR = 1.6
#: Cards lying near each other show about the same size, so one card's two indices lie about as
#: many pixels apart as its neighbours' do (in index sizes they spread more: the box of an index
#: turned 45 degrees is up to 1.4 times bigger), while two copies each showing one index lie
#: further apart. A name seen at least this many times (a second copy shows itself by a third
#: corner) has its pairs gated by the local span (:func:`local_span`, :func:`span_gate`). A pair
#: of a name seen twice keeps the index-size test alone: there the gate would split more true
#: cards than copies, on tilted tables.
SPAN_GATED = 3
#: The local span (:func:`local_span`) needs at least this many pairs of other names to ask.
SPAN_PAIRS = 3
#: The local span is the median span of this many pairs of other names nearest the pair: a photo
#: taken across the table shows near cards bigger than far ones.
SPAN_NEAREST = 6
#: Only names seen at most this many times give a span to ask: a four-index card's four corners
#: would mix its sides in.
SPAN_CORNERS = 3
#: A gated pair (:data:`SPAN_GATED`) lying more than this factor further apart than the local span
#: is two cards.
SPAN_SPREAD = 1.15
#: A gated pair lying more than this factor nearer than the local span is two cards too.
SPAN_SPREAD_SHORT = 1.5
#: Kept apart by distance alone and within this factor of the local span, two corners are
#: sometimes one card: both are marked for the player to check (:attr:`Pairing.apart`).
SPAN_UNSURE = 1.25

# --- Choice: which pairs are taken, and which cards counted (:func:`choose_pairs` and after) --

#: How much a candidate's distance off the photo's typical one (log of the factor) costs against
#: its facing score when pairs compete for a corner: of two candidates, the one at the photo's
#: scale wins unless the other faces clearly better.
SCALE_WEIGHT = 1.5
#: A card shows its index in at most this many corners (a four-index deck: :func:`merge_four_index`).
MOST_INDICES = 4
#: How far off the Thales circle (share of the diagonal) a four-index card's other corners may lie.
THALES_TOL = 0.08
#: A four-index card's other corner lies at least this share of the diagonal from each of the
#: diagonal pair's corners: nearer, it is next to one of them, not in a third corner of the card.
THALES_APART = 0.3
#: Two lone corners of different names are one card read two ways when they face clearly
#: opposite ways (at least this: :func:`split_pairs`).
SPLIT_FACING = 0.3
#: ... and lie at the photo's typical pair distance, within this factor.
SPLIT_SPREAD = 1.2
#: A faint corner alone is a card when it faces the way its nearest counted corner does, within
#: this many degrees (cards laid together in a meld row or fan lie alike; :func:`vouched_groups`).
VOUCH_TURN = 10.0
#: ... and no counted corner of its name lies within this many of the photo's card diagonals (it
#: would be that card's other index).
VOUCH_APART = 2.0
#: A corner lying on a card read is still a place to look (:func:`vision.doubts.faint_doubts`) where it
#: lies stacked on one of the reading's corners of its name, as a tunnela's or dublee's lower copy shows
#: its index beside the top one's: facing the same way, within this many degrees (:func:`stacked_on`).
STACK_TURN = 15.0
#: ... and its centre this many of that corner's index sizes off (nearer, it is the same index boxed again).
STACK_APART = (0.5, 1.2)

#: A name and whether its corners are tentative: the corners of one key pair among themselves.
NameKey = tuple[str, bool]


@dataclass(frozen=True)
class Pairing:
    """The physical cards, the faces whose count was clamped to the decks, and the copies dropped.

    ``apart`` holds the pairs of corners (indexes) kept as two cards, both marked
    uncertain, that may be one card's two indices (:data:`SPAN_UNSURE`).
    """

    cards: tuple[PhysicalCard, ...]
    clamped: tuple[str, ...] = field(default=())
    dropped: tuple[PhysicalCard, ...] = field(default=())
    apart: tuple[tuple[int, int], ...] = field(default=())

    def taken(self) -> set[int]:
        """The corner indexes its cards and its dropped copies were read from; any other corner no card took."""
        return {i for card in self.cards + self.dropped for i in card.corners}

    def counts(self) -> dict[str, int]:
        """Copies per face, e.g. ``{"6H": 3}``."""
        out: dict[str, int] = defaultdict(int)
        for c in self.cards:
            out[c.card] += 1
        return dict(out)


def _size(box: Sequence[float]) -> float:
    """Index size: the square root of the box area (the long side measured no better)."""
    return math.sqrt(max(box[2] - box[0], MIN_SIDE) * max(box[3] - box[1], MIN_SIDE))


def _distance(a: Sequence[float], b: Sequence[float]) -> float:
    """Centre distance of two index boxes, in pixels (:data:`SPAN_SPREAD`)."""
    return float(np.linalg.norm(_centre(a) - _centre(b)))


def _midpoint(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    return (_centre(a) + _centre(b)) / 2


def local_span(spans: Sequence[tuple[str, np.ndarray, float]], name: str, at: np.ndarray) -> float | None:
    """The index distance of the cards around ``at``: the median of the nearest other names' pairs.

    A photo taken across the table shows near cards bigger than far ones, so the cards
    nearest a pair say what its span should be. Pairs of ``name`` itself are left out (two
    copies would vote for each other). None with fewer than :data:`SPAN_PAIRS` to ask.

    >>> spans = [("AS", np.array([0.0, 0.0]), 100.0), ("2S", np.array([10.0, 0.0]), 110.0),
    ...          ("3S", np.array([500.0, 0.0]), 200.0), ("9C", np.array([5.0, 0.0]), 150.0)]
    >>> local_span(spans, "9C", np.array([0.0, 0.0])), local_span(spans[1:], "9C", np.array([0.0, 0.0]))
    (110.0, None)
    """
    others = [(float(np.linalg.norm(mid - at)), span) for other, mid, span in spans if other != name]
    if len(others) < SPAN_PAIRS:
        return None
    others.sort()
    return float(np.median([span for _, span in others[:SPAN_NEAREST]]))


def _pair_ratio(a: Sequence[float], b: Sequence[float]) -> float:
    """Centre distance of two index boxes, in index sizes (:data:`PAIR_RATIO`)."""
    return _distance(a, b) / ((_size(a) + _size(b)) / 2)


def _span(parts: Sequence[Corner]) -> tuple[float, float, float, float]:
    """The box around a card's corners."""
    return (float(min(p.box[0] for p in parts)), float(min(p.box[1] for p in parts)),
            float(max(p.box[2] for p in parts)), float(max(p.box[3] for p in parts)))


def _centre(box: Sequence[float]) -> np.ndarray:
    return np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])


def _crop(gray: np.ndarray, box: Sequence[float]) -> np.ndarray | None:
    h, w = gray.shape
    x1, y1 = max(int(round(box[0])), 0), max(int(round(box[1])), 0)
    x2, y2 = min(int(round(box[2])), w), min(int(round(box[3])), h)
    if x2 - x1 < MIN_CROP_SIDE or y2 - y1 < MIN_CROP_SIDE:
        return None
    small = cv2.resize(gray[y1:y2, x1:x2], (CROP_SIDE, CROP_SIDE), interpolation=cv2.INTER_AREA).astype(np.float32)
    g = cv2.GaussianBlur(small, CROP_BLUR, 0)
    g -= g.mean()
    return g / (float(np.linalg.norm(g)) + CROP_NORM_FLOOR)


def facing_score(a: np.ndarray | None, b: np.ndarray | None) -> float:
    """How much better crop ``b`` turned 180 degrees matches ``a`` than ``b`` as it is.

    Positive: the two indices face opposite ways (one card's two corners, or two cards
    lying head to toe). 0 when a crop is missing (too small or off the photo).

    >>> a = np.zeros((32, 32), np.float32); a[2:10, 3:8] = 1; a -= a.mean()
    >>> facing_score(a, a[::-1, ::-1].copy()) > 0 > facing_score(a, a)
    True
    """
    if a is None or b is None:
        return 0.0
    return float((a * b[::-1, ::-1]).sum() - (a * b).sum())


def has_angle(corner: Corner) -> bool:
    """Whether pairing may take a corner's angle: the detector gave one, and it is no printed joker
    (whose index is often a word across the card's top, not a corner's)."""
    return corner.angle is not None and corner.card != str(JOKER)


def corner_facing(a: Corner, b: Corner, crop_a: np.ndarray | None, crop_b: np.ndarray | None) -> float:
    """The facing test of two corners: from their angles where the detector gave them, else the crops'.

    With angles (:mod:`vision.orientation`) the score is ``(DIAGONAL_MID - error) /
    DIAGONAL_SCALE``, where ``error`` is how far (degrees) each index sees the other off its
    card's diagonal: two indices that see each other along it score like a clearly
    opposite-facing pair of crops (:data:`CLEAR_FACING` and more), two copies side by side
    or head to toe like a pair facing the same way. Otherwise (:func:`has_angle`): :func:`facing_score`.

    >>> a, b = Corner("7H", 0.9, (0, 0, 10, 16), angle=0.0), Corner("7H", 0.9, (60, 80, 70, 96), angle=180.0)
    >>> round(corner_facing(a, b, None, None), 2), round(corner_facing(a, replace(b, angle=0.0), None, None), 2)
    (0.48, -3.08)
    """
    if has_angle(a) and has_angle(b):
        return (DIAGONAL_MID - diagonal_error(a.box, b.box, a.angle, b.angle)) / DIAGONAL_SCALE  # type: ignore[arg-type]
    return facing_score(crop_a, crop_b)


def copy_limits(rules: RuleSet | None = None) -> tuple[int, int]:
    """How many copies of each face, and how many printed jokers, the decks in play hold.

    A photo is often read before anyone says which rules the table plays (``tiplu
    detect``, ``POST /api/detect``), so without ``rules`` the limits are the most that any
    rule family holds with its defaults.

    >>> copy_limits(), copy_limits(get_rules("nepali")), copy_limits(get_rules("rummy", {"two_decks": True}))
    ((3, 3), (3, 0), (2, 2))
    """
    if rules is not None:
        return rules.decks, rules.printed_jokers
    every = [get_rules(name) for name in RULE_FAMILIES]
    return max(r.decks for r in every), max(r.printed_jokers for r in every)


def pair_corners(corners: Sequence[Corner], image: np.ndarray | None = None, *, rules: RuleSet | None = None,
                 calibration: Calibration | None = None, uncertain_below: float | None = None,
                 tentative: Collection[int] = ()) -> Pairing:
    """Physical cards from corner detections (photo pixels), best-known pairs first.

    ``image`` (BGR, the photo the corners came from) enables the facing test; without it
    two corners are paired on distance alone, which over-pairs copies lying in a row.
    Card confidence: a paired card is as sure as its surer corner, raised a little by the
    second corner agreeing (1 - (1-a)(1-b)), capped at 1; its alternatives are its
    corners' averaged. ``rules`` bound the copies of each face (:func:`copy_limits`).
    ``calibration`` says which cards are doubtful; ``uncertain_below`` overrides its
    confidence threshold. ``tentative`` corners (indexes) pair only with each other, and
    make a card only where :func:`vouched_groups` keeps it.

    The steps, each its own function: the corners that take part, by name
    (:func:`corners_by_name`); the pairs that may be one card (:func:`candidate_pairs`); the
    photo's card size (:func:`photo_scale`); the pairs taken, through the gates
    (:func:`choose_pairs`); four-index cards joined and faint cards vouched for
    (:func:`merge_four_index`, :func:`vouched_groups`); and the cards counted
    (:func:`counted_cards`).
    """
    calibration = calibration or Calibration()
    if uncertain_below is not None:
        calibration = replace(calibration, uncertain_below=uncertain_below)
    faint = set(tentative)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY) if image is not None else None
    by_name = corners_by_name(corners, faint)
    candidates = candidate_pairs(corners, by_name, gray)
    scale = photo_scale(corners, by_name, candidates)
    groups, unsure = choose_pairs(corners, by_name, candidates, scale)
    groups = vouched_groups(merge_four_index(groups, corners), corners, faint)
    return counted_cards(corners, groups, unsure, gray, scale.ratio, calibration, copy_limits(rules))


def corners_by_name(corners: Sequence[Corner], faint: set[int]) -> dict[NameKey, list[int]]:
    """Step 1: the corners (indexes) that take part in pairing, by name and by whether they are tentative.

    Counted corners pair as if the tentative (``faint``) ones were not there, and these pair
    among themselves: a counted card keeps its own box and confidence. A corner that repeats a
    surer one (:func:`repeated_indices`) is the same index seen twice and takes no part: a
    counted corner is compared with the counted ones only, a tentative one with all. The keys
    come in the order of their first corner, each key's corners in photo order.

    >>> cs = [Corner("7H", 0.9, (0, 0, 10, 16)), Corner("7H", 0.5, (1, 1, 10, 15)),
    ...       Corner("KS", 0.8, (90, 0, 100, 16)), Corner("7H", 0.3, (60, 80, 70, 96))]
    >>> corners_by_name(cs, {3})
    {('7H', False): [0], ('KS', False): [2], ('7H', True): [3]}
    """
    sure = [i for i in range(len(corners)) if i not in faint]
    repeated = {sure[k] for k in repeated_indices([corners[i] for i in sure])}
    if faint:
        repeated |= repeated_indices(corners) & faint
    by_name: dict[NameKey, list[int]] = defaultdict(list)
    for i, c in enumerate(corners):
        if i not in repeated:
            by_name[c.card, i in faint].append(i)
    return dict(by_name)


class Candidate(NamedTuple):
    """Two corners (indexes ``i`` < ``j`` in photo order) of one name that may be one card's two indices."""

    #: How clearly the two face opposite ways (:func:`corner_facing`; :data:`UNTESTED_FACING` untested).
    facing: float
    #: Their centre distance in index sizes (:func:`_pair_ratio`).
    ratio: float
    i: int
    j: int


def candidate_pairs(corners: Sequence[Corner], by_name: dict[NameKey, list[int]],
                    gray: np.ndarray | None) -> dict[NameKey, list[Candidate]]:
    """Step 2: which two corners of one name may be one card, by name (names with none left out).

    One card's two indices lie a card diagonal apart (:data:`PAIR_RATIO` index sizes) and do
    not clearly face the same way (a facing score down to -:data:`AMBIGUOUS_FACING`). The facing
    test takes the corners' angles where the detector gave both, else their crops of ``gray``;
    with neither the pair is untested (:data:`UNTESTED_FACING`).

    >>> cs = [Corner("7H", 0.9, (0, 0, 10, 16)), Corner("7H", 0.9, (60, 80, 70, 96)),
    ...       Corner("7H", 0.9, (12, 0, 22, 16)), Corner("KS", 0.9, (90, 0, 100, 16))]
    >>> found = candidate_pairs(cs, corners_by_name(cs, set()), None)
    >>> {key: [(c.i, c.j, round(c.ratio, 1), c.facing) for c in cands] for key, cands in found.items()}
    {('7H', False): [(0, 1, 7.9, 1.0), (1, 2, 7.4, 1.0)]}
    """
    candidates: dict[NameKey, list[Candidate]] = {}
    for key, idxs in by_name.items():
        crops = _crops(gray, corners, idxs) if gray is not None and len(idxs) > 1 else {}
        found = []
        for a_pos, i in enumerate(idxs):
            for j in idxs[a_pos + 1:]:
                ratio = _pair_ratio(corners[i].box, corners[j].box)
                if not PAIR_RATIO[0] <= ratio <= PAIR_RATIO[1]:
                    continue
                known = gray is not None or (corners[i].angle is not None and corners[j].angle is not None)
                facing = corner_facing(corners[i], corners[j], crops.get(i), crops.get(j)) if known else UNTESTED_FACING
                if facing >= -AMBIGUOUS_FACING:
                    found.append(Candidate(facing, ratio, i, j))
        if found:
            candidates[key] = found
    return candidates


def _crops(gray: np.ndarray, corners: Sequence[Corner], idxs: Sequence[int]) -> dict[int, np.ndarray | None]:
    """The crops the facing test compares: those of the corners whose angle pairing may not take (:func:`has_angle`)."""
    return {i: _crop(gray, corners[i].box) for i in idxs if not has_angle(corners[i])}


@dataclass(frozen=True)
class Scale:
    """The photo's card size, as its clearest candidate pairs show it (:func:`photo_scale`).

    ``ratio``: the typical centre distance of a card's two indices, in index sizes
    (:func:`typical_ratio`). ``spans``: the clearly opposite-facing candidates of counted names
    seen at most :data:`SPAN_CORNERS` times, each as its name, its midpoint and its centre
    distance in pixels, for :func:`local_span` to ask.
    """

    ratio: float
    spans: tuple[tuple[str, np.ndarray, float], ...] = ()


def photo_scale(corners: Sequence[Corner], by_name: dict[NameKey, list[int]],
                candidates: dict[NameKey, list[Candidate]]) -> Scale:
    """Step 3: the photo's card size, from the counted names' candidates.

    One photo shows one card size. The clearly opposite-facing candidates (:data:`FLIP_MARGIN`)
    say it best; with none, every candidate votes (:func:`typical_ratio`). Tentative corners
    have no say: they are the photo's least sure.

    >>> cs = [Corner("7H", 0.9, (0, 0, 10, 16)), Corner("7H", 0.9, (30, 40, 40, 56))]
    >>> by_name = corners_by_name(cs, set())
    >>> scale = photo_scale(cs, by_name, candidate_pairs(cs, by_name, None))
    >>> round(scale.ratio, 2), [(name, mid.tolist(), span) for name, mid, span in scale.spans]
    (3.95, [('7H', [20.0, 28.0], 50.0)])
    """
    every = [(c.facing, c.ratio) for (_, tentative), cands in candidates.items() for c in cands if not tentative]
    ratio = typical_ratio([r for f, r in every if f >= FLIP_MARGIN] or [r for _, r in every])
    spans = tuple((name, _midpoint(corners[c.i].box, corners[c.j].box), _distance(corners[c.i].box, corners[c.j].box))
                  for (name, tentative), cands in candidates.items() for c in cands
                  if c.facing >= FLIP_MARGIN and len(by_name[name, tentative]) <= SPAN_CORNERS and not tentative)
    return Scale(ratio, spans)


def typical_ratio(ratios: Sequence[float]) -> float:
    """The most common index distance (in index sizes) among candidate pairs: the photo's scale.

    A mode, not a median, because false candidates (copies lying head to toe) spread
    widely while true pairs agree: the peak of a density of Gaussian kernels
    (:data:`MODE_WIDTH` wide in log units) sought at :data:`MODE_GRID` points.
    :data:`DEFAULT_RATIO` when there are none.

    >>> round(typical_ratio([2.0, 2.1, 2.2, 5.0, 7.5]), 1), typical_ratio([])
    (2.1, 3.5)
    """
    if not ratios:
        return DEFAULT_RATIO
    logs = np.log(np.asarray(ratios, float))
    grid = np.linspace(logs.min(), logs.max(), MODE_GRID)
    density = np.exp(-((grid[:, None] - logs[None, :]) / MODE_WIDTH) ** 2).sum(axis=1)
    return float(np.exp(grid[int(np.argmax(density))]))


def ratio_off(candidate: Candidate, typical: float, only_two: bool) -> float | None:
    """Gate 1: how far a candidate's distance lies off the photo's typical one (the log of the
    factor), or None where that is too far for one card.

    One photo shows one card size (:data:`RATIO_SPREAD`). A clearly opposite-facing pair
    (:data:`CLEAR_FACING`), or the only two corners of their name (``only_two``) facing
    opposite ways (:data:`FLIP_MARGIN`), may lie further off (:data:`RATIO_SPREAD_CLEAR`):
    face cards' indices differ in size from the others'.

    >>> [ratio_off(Candidate(facing, 4.5, 0, 1), 3.0, only_two) is None
    ...  for facing, only_two in ((0.0, False), (0.5, False), (0.2, True), (0.2, False))]
    [True, False, False, True]
    """
    off = abs(math.log(candidate.ratio / typical))
    clear = candidate.facing >= CLEAR_FACING or (only_two and candidate.facing >= FLIP_MARGIN)
    limit = RATIO_SPREAD_CLEAR if clear else RATIO_SPREAD
    return None if off > math.log(limit) else off


class Span(Enum):
    """What the local span (:func:`span_gate`) makes of a candidate pair."""

    #: About the neighbours' span: it may be one card.
    ONE_CARD = "one card"
    #: Too far off the neighbours' span: two cards.
    TWO_CARDS = "two cards"
    #: Off the neighbours' span, but near the limit (:data:`SPAN_UNSURE`): two cards, marked.
    TWO_UNSURE = "two cards, unsure"


def span_gate(distance: float, typical_span: float) -> Span:
    """Gate 2: a pair of a name seen :data:`SPAN_GATED` times or more is two cards where its two
    corners lie further apart (:data:`SPAN_SPREAD`) or nearer (:data:`SPAN_SPREAD_SHORT`), in
    pixels, than the neighbouring cards' two indices (``typical_span``, :func:`local_span`).

    Two copies each showing one index, as in a meld row whose top card hides the other's
    corners, lie further apart than one card's. Near the limit (:data:`SPAN_UNSURE`) the two
    may still be one card: both are kept, and marked.

    >>> [span_gate(d, 100.0).name for d in (100.0, 112.0, 120.0, 130.0, 60.0)]
    ['ONE_CARD', 'ONE_CARD', 'TWO_UNSURE', 'TWO_CARDS', 'TWO_CARDS']
    """
    span_off = math.log(distance / typical_span)
    if span_off > math.log(SPAN_SPREAD) or span_off < -math.log(SPAN_SPREAD_SHORT):
        return Span.TWO_UNSURE if abs(span_off) <= math.log(SPAN_UNSURE) else Span.TWO_CARDS
    return Span.ONE_CARD


def choose_pairs(corners: Sequence[Corner], by_name: dict[NameKey, list[int]],
                 candidates: dict[NameKey, list[Candidate]],
                 scale: Scale) -> tuple[list[tuple[int, ...]], list[tuple[int, int]]]:
    """Step 4: the groups (one or two corner indexes each) taken as cards, name by name, and
    the pairs kept apart by the span gate near its limit (unsure).

    Each candidate passes the gates (:func:`ratio_off`, then :func:`span_gate` for names seen
    :data:`SPAN_GATED` times or more) and is scored by its facing less its distance off the
    photo's scale (:data:`SCALE_WEIGHT`). Pairs are taken best first, each corner used once
    (:func:`take_greedily`); every corner left is a card on its own.

    >>> cs = [Corner("7H", 0.9, (0, 0, 10, 16)), Corner("7H", 0.9, (30, 40, 40, 56)), Corner("KS", 0.9, (90, 0, 100, 16))]
    >>> by_name = corners_by_name(cs, set())
    >>> candidates = candidate_pairs(cs, by_name, None)
    >>> choose_pairs(cs, by_name, candidates, photo_scale(cs, by_name, candidates))
    ([(0, 1), (2,)], [])
    """
    groups: list[tuple[int, ...]] = []
    unsure: list[tuple[int, int]] = []
    for key, idxs in by_name.items():
        scored: list[tuple[float, int, int]] = []
        for c in candidates.get(key, []):
            off = ratio_off(c, scale.ratio, len(idxs) == 2)
            if off is None:
                continue
            typical_span = (local_span(scale.spans, key[0], _midpoint(corners[c.i].box, corners[c.j].box))
                            if len(idxs) >= SPAN_GATED else None)
            if typical_span is not None:
                verdict = span_gate(_distance(corners[c.i].box, corners[c.j].box), typical_span)
                if verdict is not Span.ONE_CARD:
                    if verdict is Span.TWO_UNSURE:
                        unsure.append((c.i, c.j))
                    continue
            scored.append((c.facing - SCALE_WEIGHT * off, c.i, c.j))
        groups.extend(take_greedily(scored, idxs))
    return groups, unsure


def take_greedily(scored: Sequence[tuple[float, int, int]], idxs: Sequence[int]) -> list[tuple[int, ...]]:
    """The pairs taken from ``scored`` (score, corner, corner), best first, each corner used once;
    then every corner of ``idxs`` left over, alone.

    >>> take_greedily([(0.2, 0, 1), (0.9, 1, 2), (0.1, 0, 3)], [0, 1, 2, 3, 4])
    [(1, 2), (0, 3), (4,)]
    """
    used: set[int] = set()
    groups: list[tuple[int, ...]] = []
    for _, i, j in sorted(scored, reverse=True):
        if i in used or j in used:
            continue
        used |= {i, j}
        groups.append((i, j))
    groups.extend((i,) for i in idxs if i not in used)
    return groups


def counted_cards(corners: Sequence[Corner], groups: Sequence[tuple[int, ...]], unsure: Sequence[tuple[int, int]],
                  gray: np.ndarray | None, typical: float, calibration: Calibration,
                  limits: tuple[int, int]) -> Pairing:
    """Step 6: the cards the groups make, counted against the decks in play.

    Two lone corners read as two names may be one card read two ways (:func:`split_pairs`, with
    the photo only): one card, uncertain. The unsure pairs (:func:`span_gate`) still both alone
    are kept as two cards, each marked uncertain (:attr:`Pairing.apart`). A face counted more
    often than ``limits`` (copies per face, printed jokers: :func:`copy_limits`) allow is
    clamped (:func:`_clamp`).

    >>> cs = [Corner("7H", 0.9, (0, 0, 10, 16)), Corner("7H", 0.9, (300, 0, 310, 16)), Corner("7H", 0.6, (30, 40, 40, 56))]
    >>> pairing = counted_cards(cs, [(0,), (1,), (2,)], [(0, 1)], None, 3.5, Calibration(), (2, 0))
    >>> [(c.card, c.corners, c.uncertain) for c in pairing.cards], pairing.clamped, pairing.apart
    ([('7H', (0,), True), ('7H', (1,), True)], ('7H',), ((0, 1),))
    """
    splits = split_pairs(groups, corners, gray, typical) if gray is not None else []
    joined = {i for pair in splits for i in pair}
    lone = {g[0] for g in groups if len(g) == 1} - joined
    apart = tuple((i, j) for i, j in unsure if i in lone and j in lone)
    marked = {i for pair in apart for i in pair}
    cards = [_card(corners, g, calibration, g[0] in marked) for g in groups if not set(g) & joined]
    cards += [_split_card(corners, pair) for pair in splits]
    return replace(_clamp(cards, *limits), apart=apart)


def vouched_groups(groups: Sequence[tuple[int, ...]], corners: Sequence[Corner],
                   tentative: set[int]) -> list[tuple[int, ...]]:
    """The groups to keep as cards: every group with a counted corner, and of those made of
    ``tentative`` corners alone the ones the angles vouch for.

    Two tentative corners paired (they passed pairing's own tests, on their angles where
    the detector gave them) are a card. One alone is a card when it faces the way its nearest
    counted corner does (within :data:`VOUCH_TURN`) and no counted corner of its name lies
    within :data:`VOUCH_APART` of the photo's typical index distance (the median over its
    counted pairs): there it would be that card's other index, seen faintly.

    >>> row = [Corner("5S", 0.9, (0, 0, 10, 16), angle=0.0), Corner("5S", 0.9, (60, 80, 70, 96), angle=180.0),
    ...        Corner("7S", 0.2, (20, 0, 30, 16), angle=3.0), Corner("9S", 0.2, (40, 0, 50, 16), angle=90.0)]
    >>> vouched_groups([(0, 1), (2,), (3,)], row, {2, 3})
    [(0, 1), (2,)]
    """
    if not tentative:
        return list(groups)
    counted = [k for k in range(len(corners)) if k not in tentative]
    spans = [_distance(corners[g[0]].box, corners[g[1]].box) for g in groups if len(g) == 2 and not set(g) & tentative]
    typical = float(np.median(spans)) if spans else None
    kept = []
    for g in groups:
        if not set(g) <= tentative or len(g) > 1:
            kept.append(g)
            continue
        lone = corners[g[0]]
        if not has_angle(lone) or not counted:
            continue
        nearest = corners[min(counted, key=lambda k: _distance(corners[k].box, lone.box))]
        if nearest.angle is None or abs(wrap_degrees(nearest.angle - lone.angle)) > VOUCH_TURN:  # type: ignore[operator]
            continue
        if typical is not None and any(corners[k].card == lone.card
                                       and _distance(corners[k].box, lone.box) <= VOUCH_APART * typical
                                       for k in counted):
            continue
        kept.append(g)
    return kept


def split_pairs(groups: Sequence[tuple[int, ...]], corners: Sequence[Corner], gray: np.ndarray,
                typical: float) -> list[tuple[int, int]]:
    """Lone corners of different names that are the two indices of one card, read two ways.

    Stage 2 sometimes names a card's two indices differently (AS and AD on a light-on-dark
    deck whose gold ink hides the suit's colour). Left apart they count two cards, one of
    them not on the table. Two lone corners are joined when they face clearly opposite
    ways (:data:`SPLIT_FACING`), lie at the photo's typical pair distance
    (:data:`SPLIT_SPREAD`) and one names the other among its alternatives.
    """
    lone = [g[0] for g in groups if len(g) == 1]
    found: list[tuple[float, int, int]] = []
    for a_pos, i in enumerate(lone):
        for j in lone[a_pos + 1:]:
            a, b = corners[i], corners[j]
            if a.card == b.card or (b.card not in dict(a.alternatives) and a.card not in dict(b.alternatives)):
                continue
            ratio = _pair_ratio(a.box, b.box)
            if abs(math.log(ratio / typical)) > math.log(SPLIT_SPREAD):
                continue
            with_angles = has_angle(a) and has_angle(b)
            facing = corner_facing(a, b, *((None, None) if with_angles else (_crop(gray, a.box), _crop(gray, b.box))))
            if facing >= SPLIT_FACING:
                found.append((facing, i, j))
    used: set[int] = set()
    pairs = []
    for _, i, j in sorted(found, reverse=True):
        if i not in used and j not in used:
            used |= {i, j}
            pairs.append((i, j))
    return pairs


def _own_probability(corner: Corner) -> float:
    """A corner's class probability for its own card: what its alternatives leave (at most)."""
    return max(0.0, 1.0 - sum(p for _, p in corner.alternatives))


def _split_card(corners: Sequence[Corner], pair: tuple[int, int]) -> PhysicalCard:
    """One card from two corners read as different cards: the name both make likelier, always
    uncertain, the other name first among its alternatives.

    >>> a = Corner("AS", 0.6, (0, 0, 10, 15), (("AD", 0.3),))
    >>> b = Corner("AD", 0.5, (40, 60, 50, 75), (("AS", 0.45),))
    >>> card = _split_card([a, b], (0, 1))
    >>> card.card, card.uncertain, card.alternatives[0][0], card.corners
    ('AS', True, 'AD', (0, 1))
    """
    parts = [corners[k] for k in pair]
    likely: dict[str, float] = defaultdict(float)
    for part in parts:
        likely[part.card] += _own_probability(part) / 2
        for name, prob in part.alternatives:
            likely[name] += prob / 2
    ranked = sorted(likely.items(), key=lambda item: -item[1])
    name = ranked[0][0]
    box = _span(parts)
    return PhysicalCard(name, min(p.confidence for p in parts), box, tuple(sorted(pair)), True,
                        alternatives=tuple((n, round(p, PROB_DIGITS)) for n, p in ranked[1:1 + MAX_ALTERNATIVES]))


def cover(inner: Sequence[float], outer: Sequence[float]) -> float:
    """The share of box ``inner`` that lies inside box ``outer``.

    >>> cover((0, 0, 10, 10), (5, 0, 20, 10)), cover((0, 0, 10, 10), (20, 20, 30, 30))
    (0.5, 0.0)
    """
    w = min(inner[2], outer[2]) - max(inner[0], outer[0])
    h = min(inner[3], outer[3]) - max(inner[1], outer[1])
    area = max(inner[2] - inner[0], MIN_SIDE) * max(inner[3] - inner[1], MIN_SIDE)
    return max(w, 0.0) * max(h, 0.0) / area


def stacked_on(corner: Corner, under: Corner) -> bool:
    """Whether ``corner`` lies where a stacked copy of ``under``'s card shows its index
    (:data:`STACK_TURN`, :data:`STACK_APART`): same name, same facing, a little off.

    >>> top = Corner("7H", 0.9, (100, 100, 120, 130), angle=0.0)
    >>> [stacked_on(Corner("7H", 0.2, (x, 112, x + 20, 142), angle=5.0), top) for x in (102, 112, 160)]
    [False, True, False]
    """
    if corner.card != under.card or corner.angle is None or under.angle is None:
        return False
    if abs(wrap_degrees(corner.angle - under.angle)) > STACK_TURN:
        return False
    return STACK_APART[0] <= _distance(corner.box, under.box) / _size(under.box) <= STACK_APART[1]


def repeated_indices(corners: Sequence[Corner]) -> set[int]:
    """Corners that repeat a surer corner: the smaller box lies mostly inside the other
    (:data:`REPEAT_COVER`; almost wholly, :data:`REPEAT_COVER_RENAMED`, for another name).

    Stage 1's non-maximum suppression compares boxes by IoU, which lets a box around the
    rank alone survive beside the box around rank and pip. Counting both would add a card.

    >>> cs = [Corner("5D", 0.7, (430, 669, 502, 718)), Corner("5D", 0.5, (431, 674, 485, 710)),
    ...       Corner("5D", 0.6, (430, 700, 502, 749)), Corner("5H", 0.4, (432, 702, 500, 745))]
    >>> sorted(repeated_indices(cs))
    [1, 3]
    """
    repeated: set[int] = set()
    order = sorted(range(len(corners)), key=lambda k: -corners[k].confidence)
    sizes = [_size(c.box) for c in corners]
    for rank, i in enumerate(order):
        for j in order[:rank]:
            if j in repeated:
                continue
            a, b = corners[i].box, corners[j].box
            smaller, larger = (a, b) if sizes[i] <= sizes[j] else (b, a)
            if cover(smaller, larger) >= (REPEAT_COVER if corners[j].card == corners[i].card else REPEAT_COVER_RENAMED):
                repeated.add(i)
                break
    return repeated


def merge_four_index(groups: list[tuple[int, ...]], corners: Sequence[Corner]) -> list[tuple[int, ...]]:
    """Join the extra corners of four-index cards to their card.

    The four index centres of a card form a rectangle, so every one of them lies on the
    circle whose diameter is the card's diagonal pair (Thales). A same-name corner or
    pair on that circle (within :data:`THALES_TOL` of the diameter), and not next to the
    pair's own corners (:data:`THALES_APART`), belongs to the same card. Groups of up to
    :data:`MOST_INDICES` corners.

    >>> cs = [Corner("7H", 0.9, (x, y, x + 10, y + 15)) for x, y in ((0, 0), (60, 90), (60, 0), (0, 90))]
    >>> merge_four_index([(0, 1), (2,), (3,)], cs)
    [(0, 1, 2, 3)]
    """
    centres = [_centre(c.box) for c in corners]
    out = [list(g) for g in groups]
    changed = True
    while changed:
        changed = False
        for a in out:
            if not 2 <= len(a) < MOST_INDICES or changed:
                continue
            p, q = centres[a[0]], centres[a[1]]
            mid, diameter = (p + q) / 2, float(np.linalg.norm(p - q))
            for b in out:
                if b is a or corners[b[0]].card != corners[a[0]].card or len(a) + len(b) > MOST_INDICES:
                    continue
                if all(abs(float(np.linalg.norm(centres[k] - mid)) - diameter / 2) <= THALES_TOL * diameter
                       and min(float(np.linalg.norm(centres[k] - centres[j])) for j in a) >= THALES_APART * diameter
                       for k in b):
                    a.extend(b)
                    out.remove(b)
                    changed = True
                    break
    return [tuple(sorted(g)) for g in out]


def merged_alternatives(parts: Sequence[Corner]) -> tuple[tuple[str, float], ...]:
    """A card's alternatives: its corners' probabilities averaged (a corner not naming one counts 0).

    >>> merged_alternatives([Corner("8D", 0.9, (0, 0, 1, 1), (("8H", 0.3), ("6D", 0.1))),
    ...                      Corner("8D", 0.9, (5, 5, 6, 6), (("8H", 0.1),))])
    (('8H', 0.2), ('6D', 0.05))
    """
    total: dict[str, float] = defaultdict(float)
    for p in parts:
        for name, prob in p.alternatives:
            total[name] += prob / len(parts)
    best = sorted(total.items(), key=lambda item: -item[1])[:MAX_ALTERNATIVES]
    return tuple((name, round(prob, PROB_DIGITS)) for name, prob in best)


def _card(corners: Sequence[Corner], idxs: tuple[int, ...], calibration: Calibration,
          unsure: bool = False) -> PhysicalCard:
    parts = [corners[i] for i in idxs]
    miss = 1.0
    for p in parts:
        miss *= 1.0 - p.confidence
    conf = min(1.0, max(max(p.confidence for p in parts), 1.0 - miss))
    box = _span(parts)
    alternatives = merged_alternatives(parts)
    side = max(max(p.box[2] - p.box[0], p.box[3] - p.box[1]) for p in parts)
    doubtful = calibration.doubtful(conf, alternatives) or calibration.twin_doubtful(parts[0].card, alternatives, side)
    return PhysicalCard(parts[0].card, conf, box, tuple(sorted(idxs)), unsure or doubtful, alternatives=alternatives)


def _clamp(cards: list[PhysicalCard], decks: int, jokers: int) -> Pairing:
    by_name: dict[str, list[PhysicalCard]] = defaultdict(list)
    for c in cards:
        by_name[c.card].append(c)
    keep: list[PhysicalCard] = []
    clamped: list[str] = []
    dropped: list[PhysicalCard] = []
    for name, same in by_name.items():
        same.sort(key=lambda c: -c.confidence)
        limit = jokers if name == str(JOKER) else decks
        if len(same) > limit:
            clamped.append(name)
            dropped.extend(same[limit:])
            same = [replace(c, uncertain=True, clamped=True) for c in same[:limit]]
        keep.extend(same)
    keep.sort(key=lambda c: min(c.corners))
    return Pairing(tuple(keep), tuple(sorted(clamped)), tuple(dropped))
