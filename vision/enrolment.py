"""Enrolment at run time: the checks the app makes before it learns a deck, without training code.

For enrolment a family lays out one suit at a time, A, 2, ... 10, J, Q, K in reading
order (rows from the top, each left to right), face up and not touching, and
photographs it. The cards do not overlap, so their outlines are found from the picture
alone (:func:`find_cards`), even for a design whose corners the detector does not know.
A photo that does not show 13 cards is refused with a message naming the photo and what
was seen (:class:`EnrolError`); a jokers photo shows 1 to :data:`MAX_JOKERS` printed jokers
(:func:`find_jokers`).

The page checks a teach form's photos with these before it keeps anything, checks its
calibration setting (:func:`verify_calibration_scenes`) and asks whether the ``train``
extra is installed (:func:`missing_train_extra`); the learning itself is
:mod:`vision.training.fit.enrol`'s, reached through :mod:`vision.training.api`. This module
imports nothing of :mod:`vision.training`, nor torch, so ``tiplu serve`` stays light.

>>> [card_names("S")[k] for k in (0, 9, 12)]
['AS', '10S', 'KS']
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from scorer import Message, N_, TipluError
from scorer.cards import SUITS

SUIT_NAMES = {"S": Message(N_("spades")), "H": Message(N_("hearts")), "D": Message(N_("diamonds")),
              "C": Message(N_("clubs"))}
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKER = "JOKER"
MAX_JOKERS = 6
#: A card is 63 x 88 mm; outlines whose long/short ratio is far from that are not cards.
CARD_RATIO = (1.2, 1.75)
#: The size review keeps a corrected corner at (w, h): the biggest crop a tiplu classifier takes;
#: "Improve from corrections" resizes it to the size of the model it improves.
KEPT_CROP = (48, 72)
#: Whole-table scenes of the enrolled cards that doubt is recalibrated on (half to choose, half to test).
CALIBRATION_SCENES = 100


class EnrolError(TipluError):
    """An enrolment photo or setting that cannot be used; the message names it and says what was seen."""


@dataclass(frozen=True)
class FoundCard:
    """One card of an enrolment photo: its name (from its position) and outline (4 points, photo px)."""

    card: str
    outline: tuple[tuple[float, float], ...]


def card_names(suit: str) -> list[str]:
    """The 13 cards of a suit in enrolment order, A to K."""
    return [rank + suit for rank in RANKS]


def _card_rectangle(contour: np.ndarray, area: float) -> np.ndarray | None:
    """The 4-point rotated rectangle about ``contour`` where it is card-shaped in a photo of ``area`` px: a card's
    size (0.4% to 20% of the photo), its long/short ratio (:data:`CARD_RATIO`) and filling its rectangle; else None.

    >>> _card_rectangle(np.array([[[0, 0]], [[60, 0]], [[60, 84]], [[0, 84]]], np.int32), 100_000).shape
    (4, 2)
    >>> _card_rectangle(np.array([[[0, 0]], [[84, 0]], [[84, 84]], [[0, 84]]], np.int32), 100_000) is None
    True
    """
    rect = cv2.minAreaRect(contour)
    w, h = rect[1]
    if not 0.004 * area <= w * h <= 0.2 * area:
        return None
    ratio = max(w, h) / max(min(w, h), 1e-6)
    if not CARD_RATIO[0] <= ratio <= CARD_RATIO[1] or cv2.contourArea(contour) < 0.85 * w * h:
        return None
    return cv2.boxPoints(rect)


def _outlines(image_bgr: np.ndarray) -> list[np.ndarray]:
    """Card-shaped blobs, as 4-point rotated rectangles: the cards stand out from the table."""
    gray = cv2.GaussianBlur(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    edges = cv2.Canny(gray, 40, 120)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8), iterations=2)
    filled = np.zeros_like(gray)
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    cv2.drawContours(filled, contours, -1, 255, thickness=cv2.FILLED)
    filled = cv2.erode(filled, np.ones((3, 3), np.uint8), iterations=2)
    contours, _ = cv2.findContours(filled, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    area = image_bgr.shape[0] * image_bgr.shape[1]
    return [box for box in (_card_rectangle(contour, area) for contour in contours) if box is not None]


#: Canny thresholds (the low one; the high one is three times it) of the edges that part a card from the table
#: in :func:`_parted_outlines`: the usual one, then fainter ones for a card about as pale as its table.
PARTING_EDGES = (40, 20, 10, 5)
#: How far (px) the edges are thickened before the regions between them are taken, each in turn: the least
#: keeps a card's thin margin whole, more seals a gap in a faint edge where a pale square of the cloth meets it.
PARTING_GROWTH = (1, 3)
#: A region is a card's margin only where what it surrounds (the card's print) is at least this share of the card.
PRINTED = 0.05


def _parted_outlines(image_bgr: np.ndarray) -> list[np.ndarray]:
    """Card-shaped regions that edges part from the rest of the photo, as 4-point rotated rectangles.

    Why: a card's plain margin, between its edge and its print, is one region whose outside is the card's
    outline, even on a striped or checked cloth whose edges run into the card's (where :func:`_outlines`, which
    fills what edges enclose, sees one blob of card and cloth), and, with fainter edges, on a white table. The
    edges are those of any Lab channel, so a pink stripe as bright as the card still parts from it; a region
    is grown back by what its edges were thickened by.
    """
    lab = cv2.cvtColor(cv2.GaussianBlur(image_bgr, (5, 5), 0), cv2.COLOR_BGR2LAB)
    area = image_bgr.shape[0] * image_bgr.shape[1]
    found = []
    for low in PARTING_EDGES:
        edges = np.zeros(lab.shape[:2], np.uint8)
        for channel in range(3):
            edges |= cv2.Canny(lab[..., channel], low, 3 * low)
        for growth in PARTING_GROWTH:
            free = (cv2.dilate(edges, np.ones((2 * growth + 1, 2 * growth + 1), np.uint8)) == 0).astype(np.uint8)
            count, labels, stats, _ = cv2.connectedComponentsWithStats(free, connectivity=4)
            for k in range(1, count):
                x, y, w, h, _ = stats[k]
                if not 0.003 * area <= w * h <= 0.25 * area:
                    continue
                region = cv2.copyMakeBorder((labels[y:y + h, x:x + w] == k).astype(np.uint8), growth, growth, growth,
                                            growth, cv2.BORDER_CONSTANT, value=0)
                region = cv2.dilate(region, np.ones((2 * growth - 1, 2 * growth - 1), np.uint8))
                contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
                outside = max(contours, key=cv2.contourArea)
                if cv2.contourArea(outside) - region.sum() < PRINTED * cv2.contourArea(outside):
                    continue  # a plain patch of the cloth: a card's margin holds its print
                box = _card_rectangle(outside + np.array([x - growth, y - growth], np.int32), area)
                if box is not None:
                    found.append(box)
    return found


def card_outlines(image_bgr: np.ndarray) -> list[np.ndarray]:
    """The outlines of the cards that stand out from the table (:func:`_outlines`) or that edges part from it
    (:func:`_parted_outlines`), largest first, one each: an outline half inside a larger one is the frame
    printed on that card, or the same card found twice.

    >>> table = np.full((480, 640, 3), (40, 110, 50), np.uint8)
    >>> card = cv2.fillConvexPoly(table, np.int32([[200, 100], [300, 100], [300, 240], [200, 240]]), (245, 245, 245))
    >>> [np.ptp(o, axis=0).round().tolist() for o in card_outlines(cv2.rectangle(card, (220, 120), (280, 220), 0, 2))]
    [[101.0, 141.0]]
    """
    candidates = sorted(_outlines(image_bgr) + _parted_outlines(image_bgr), key=lambda o: -cv2.contourArea(o))
    kept: list[np.ndarray] = []
    for outline in candidates:
        if _covered(outline, kept) < 0.5:
            kept.append(outline)
    return kept


# ---- the corner cue: each card shows two corner indices -------------------------------------------------

#: Corners of a card: the two corner indices the detector boxes, turned 180 degrees from each other; a pair's
#: facing angles may differ from that by this much (degrees) and its offset from the design's by this share.
PAIR_FACING = 40.0
PAIR_OFFSET = 0.2
#: The offset between a card's two indices is the shortest that at least this share of the most common one's
#: pairs agree with (two neighbouring cards' indices make a longer one, as common where glare hides indices).
PAIR_SUPPORT = 0.5
#: The photo is searched at most this many pixels on its long side (a phone's 12 megapixels are shrunk first).
SEARCH_SIDE = 1600
#: The corner detector's score from which an index counts, and the lower one a photo short of cards is searched
#: again with (taken only where it gives the cards wanted).
SEARCH_CONF, RETRY_CONF = 0.2, 0.12
#: A card's outline found from the picture alone replaces the rectangle fitted about its indices where their
#: centres lie within this share of a card's width, and their areas within this share of each other.
SNAP = 0.1
#: Share of a card's width between the inside and outside samples of its edge.
EDGE_STEP = 0.03
#: A card holds its two indices whole: its sides lie at least this many index sizes beyond the two indices' centres.
INDEX_ROOM = 1.1
#: An index left alone pairs with another as far away as a card's (within this share) and turned as the other
#: cards are (within this many degrees); a card of one index alone is searched as far turned from the others.
LONE_SPAN = 0.15
LONE_TURN = 24.0
#: How much less a lone card's sides count the further it is turned from the other cards (at LONE_TURN): on a
#: plain cloth as pale as the cards, the sides of a card turned wrongly can look as sharp as the right ones.
LONE_PRIOR = 0.5
#: A lone card laid at its index's facing end is laid at the other end instead where it would cover more than
#: this share of its area with a card of two indices (and the other end does not): the 13 cards lie apart.
LONE_COVER = 0.2


def _box_overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """The share of the smaller of two boxes (x1, y1, x2, y2) that the other covers.

    >>> _box_overlap((0, 0, 10, 10), (5, 0, 15, 10))
    0.5
    """
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return float(max(w, 0) * max(h, 0) / smaller) if smaller > 0 else 0.0


def _covered(outline: np.ndarray, others: Sequence[np.ndarray]) -> float:
    """The largest share of a convex ``outline``'s area that any one of ``others`` covers.

    >>> square = np.float32([[0, 0], [10, 0], [10, 10], [0, 10]])
    >>> _covered(square, [square + np.float32([5, 0]), square + np.float32([20, 0])])
    0.5
    """
    area = cv2.contourArea(outline)
    shares = [cv2.intersectConvexConvex(outline, other)[0] / area for other in others] if area > 0 else []
    return float(max(shares, default=0.0))


def _turn_apart(a: float, b: float) -> float:
    """How far apart two turns are, in degrees (0 to 180).

    >>> _turn_apart(350, 10), _turn_apart(0, 180)
    (20.0, 180.0)
    """
    return float(abs((a - b + 180) % 360 - 180))


def _half_turn(degrees: Any) -> Any:
    """A rectangle's turn (degrees, a number or an array) in (-90, 90]: one turned half round lies the same.

    >>> _half_turn(-185.0), _half_turn(170.0), _half_turn(90.0), _half_turn(-90.0)
    (-5.0, -10.0, 90.0, 90.0)
    """
    return 90 - (90 - degrees) % 180


def _laid_prior(turns: np.ndarray, laid: float) -> np.ndarray:
    """How much a card's sides count when it is turned ``turns`` (degrees) and the other cards ``laid``: 1 laid as
    they are, less the further it is turned from them (half round is the same), :data:`LONE_PRIOR` less at
    :data:`LONE_TURN`.

    >>> _laid_prior(np.array([0.0, 12.0, 180.0, 204.0]), 0.0).round(3).tolist()
    [1.0, 0.875, 1.0, 0.5]
    """
    return 1 - LONE_PRIOR * (np.abs(_half_turn(turns - laid)) / LONE_TURN) ** 2


def _rotation(degrees: np.ndarray | float) -> np.ndarray:
    """2x2 rotation matrices (image axes: y down) for angles in degrees."""
    r = np.radians(degrees)
    c, s = np.cos(r), np.sin(r)
    return np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], -2)


@dataclass(frozen=True)
class CardFrame:
    """A card laid on the table as a rectangle: centre (px), turn (degrees, image axes), width and height (px).

    >>> CardFrame((10.0, 20.0), 0.0, 4.0, 6.0).outline().tolist()
    [[8.0, 17.0], [12.0, 17.0], [12.0, 23.0], [8.0, 23.0]]
    """

    centre: tuple[float, float]
    turn: float
    width: float
    height: float

    def outline(self) -> np.ndarray:
        half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], float) * (self.width / 2, self.height / 2)
        return (half @ _rotation(self.turn).T + self.centre).astype(np.float32)


def _edge_contrast(lab: np.ndarray, centres: np.ndarray, turns: np.ndarray, widths: np.ndarray,
                   heights: np.ndarray, samples: int = 16) -> np.ndarray:
    """How sharply each rectangle's sides part the card from the table: per rectangle, the mean over its four
    sides of the median colour difference (Lab) between points just inside and just outside the side."""
    n = len(centres)
    t = np.linspace(-0.35, 0.35, samples)
    sides = []
    for normal, along in (((0, -1), (1, 0)), ((1, 0), (0, 1)), ((0, 1), (1, 0)), ((-1, 0), (0, 1))):
        half = np.where(normal[0] != 0, widths, heights)[:, None] / 2  # distance of this side from the centre
        span = np.where(along[0] != 0, widths, heights)[:, None] * 2 * t[None]
        step = EDGE_STEP * widths[:, None]
        local_in = np.stack([normal[0] * (half - step) + along[0] * span, normal[1] * (half - step) + along[1] * span], -1)
        local_out = np.stack([normal[0] * (half + step) + along[0] * span, normal[1] * (half + step) + along[1] * span], -1)
        rot = _rotation(turns)
        inside = np.einsum("nij,nsj->nsi", rot, local_in) + centres[:, None]
        outside = np.einsum("nij,nsj->nsi", rot, local_out) + centres[:, None]
        h, w = lab.shape[:2]
        xi, yi = (np.clip(np.rint(inside[..., k]), 0, (w, h)[k] - 1).astype(int) for k in (0, 1))
        xo, yo = (np.clip(np.rint(outside[..., k]), 0, (w, h)[k] - 1).astype(int) for k in (0, 1))
        sides.append(np.median(np.linalg.norm(lab[yi, xi] - lab[yo, xo], axis=-1), axis=1))
    return np.mean(sides, axis=0) if n else np.zeros(0)


def _pair_corners(centres: np.ndarray, angles: np.ndarray) -> tuple[list[tuple[int, int]], np.ndarray | None]:
    """Pairs of corner indices that are one card's two (indices of ``centres``), and the offset of a card's
    second index from its first in the first's own upright frame (the same for every card of a design)."""
    n = len(centres)
    if n < 2:
        return [], None
    delta = centres[None, :, :] - centres[:, None, :]  # [i, j]: from i to j
    local = np.einsum("nij,nmj->nmi", _rotation(-angles), delta)  # j as i's upright view sees it
    facing = np.abs((angles[None, :] - angles[:, None] - 180 + 180) % 360 - 180) < PAIR_FACING
    candidate = facing & (local[..., 0] > 0) & (local[..., 1] > 0)
    offsets = local[candidate]
    if not len(offsets):
        return [], None
    near = np.linalg.norm(offsets[:, None] - offsets[None], axis=-1) < PAIR_OFFSET * np.linalg.norm(offsets, axis=1)[:, None]
    support = near.sum(1)  # a card's own two indices lie closer than one index and the next card's other one:
    strong = np.flatnonzero(support >= PAIR_SUPPORT * support.max())  # the shortest well-supported offset
    anchor = offsets[strong[int(np.linalg.norm(offsets[strong], axis=1).argmin())]]
    agree = offsets[np.linalg.norm(offsets - anchor, axis=1) < PAIR_OFFSET * np.linalg.norm(anchor)]
    offset = np.median(agree, axis=0)
    error = np.linalg.norm(local - offset, axis=-1) / np.linalg.norm(offset)
    error = np.where(candidate, np.maximum(error, error.T), np.inf)  # each must see the other where a card's would
    pairs, used = [], set()
    for flat in np.argsort(error, axis=None):
        i, j = divmod(int(flat), n)
        if error[i, j] > PAIR_OFFSET:
            break
        if i not in used and j not in used:
            pairs.append((i, j))
            used |= {i, j}
    return pairs, offset


def _design_size(lab: np.ndarray, centres: np.ndarray, turns: np.ndarray, spans: np.ndarray,
                 offset: np.ndarray, index: tuple[float, float]) -> tuple[float, float]:
    """The design's card size (px at the offset's length): the index offset plus a margin, found where the
    sides of all the cards about index pairs are sharpest together.

    A card is upright as its indices are (taller than wide) and holds both whole: the margin is at least an
    index (``index``: its typical width and height, px) and at most a third of the offset's length more."""
    length = float(np.linalg.norm(offset))
    scale = spans / length  # a card nearer the camera looks bigger
    best, size = -1.0, (offset[0] + 1.5 * index[0], offset[1] + 1.5 * index[1])
    for extra_x in np.arange(0.0, 0.34, 0.02):
        for extra_y in np.arange(0.0, 0.34, 0.02):
            w, h = offset[0] + INDEX_ROOM * index[0] + extra_x * length, offset[1] + INDEX_ROOM * index[1] + extra_y * length
            if not CARD_RATIO[0] <= h / w <= CARD_RATIO[1]:
                continue
            score = float(np.mean(_edge_contrast(lab, centres, turns, w * scale, h * scale)))
            if score > best:
                best, size = score, (w, h)
    return float(size[0]), float(size[1])


def _fit_frames(lab: np.ndarray, centres: np.ndarray, turns: np.ndarray, scales: np.ndarray,
                size: tuple[float, float]) -> list[CardFrame]:
    """Card rectangles of the design's ``size`` (times each card's scale) about ``centres``, each card's turn
    and scale a little refined to where its sides are sharpest."""
    frames = []
    tries = [(dt, ds) for dt in (-6, -4, -2, 0, 2, 4, 6) for ds in (0.96, 0.98, 1.0, 1.02, 1.04)]
    for centre, turn, s in zip(centres, turns, scales):
        many = len(tries)
        scores = _edge_contrast(lab, np.repeat(centre[None], many, 0), turn + np.array([t for t, _ in tries], float),
                                np.array([size[0] * s * d for _, d in tries]), np.array([size[1] * s * d for _, d in tries]))
        dt, ds = tries[int(scores.argmax())]
        frames.append(CardFrame((float(centre[0]), float(centre[1])), float(turn + dt), size[0] * s * ds,
                                size[1] * s * ds))
    return frames


def _corner_cards(image_bgr: np.ndarray, corners: Sequence[Any]) -> tuple[list[np.ndarray], int]:
    """Card outlines from the detector's corner indices: each pair of a card's two indices (and each index left
    alone, its partner where the design's offset puts it) becomes a rectangle fitted to the card's sides.

    Returns the outlines, surest first (those of two indices first, then by how sharp their sides are), and how
    many of them two indices vouch for."""
    usable: list[Any] = []
    for corner in sorted((c for c in corners if c.angle is not None), key=lambda c: -c.confidence):
        if all(_box_overlap(corner.box, kept.box) < 0.5 for kept in usable):  # one index boxed twice: the surer
            usable.append(corner)
    if len(usable) < 2:
        return [], 0
    centres = np.array([((c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2) for c in usable], float)
    tried = [(sign, *_pair_corners(centres, sign * np.array([c.angle for c in usable], float)))
             for sign in (1.0, -1.0)]  # which way round the orientation network counts its angles
    sign, pairs, offset = max(tried, key=lambda t: len(t[1]))
    if offset is None or not pairs:
        return [], 0
    angles = sign * np.array([c.angle for c in usable], float)
    direction = np.degrees(np.arctan2(offset[1], offset[0]))
    mids: list[np.ndarray] = []
    turns: list[float] = []
    spans: list[float] = []
    for i, j in pairs:
        d = centres[j] - centres[i]
        mids.append((centres[i] + centres[j]) / 2)
        turns.append(float(_half_turn(np.degrees(np.arctan2(d[1], d[0])) - direction)))
        spans.append(float(np.linalg.norm(d)))
    typical, laid = float(np.median(spans)), float(np.median(turns))
    paired = {k for pair in pairs for k in pair}
    alone = sorted(set(range(len(usable))) - paired)
    for i in alone:  # an index whose facing was misread still pairs with one a card's length away, laid as the rest
        for j in alone:  # (its partner's facing, at least, agrees)
            d = centres[j] - centres[i]
            turn = float(np.degrees(np.arctan2(d[1], d[0])) - direction)
            if (i in paired or j in paired or i == j or abs(np.linalg.norm(d) / typical - 1) > LONE_SPAN
                    or _turn_apart(turn, laid) > LONE_TURN
                    or (_turn_apart(angles[i], turn) > 90 and _turn_apart(angles[j], turn + 180) > 90)):
                continue
            mids.append((centres[i] + centres[j]) / 2)
            turns.append(turn)
            spans.append(float(np.linalg.norm(d)))
            paired |= {i, j}
    lab = cv2.cvtColor(cv2.GaussianBlur(image_bgr, (0, 0), 1.2).astype(np.float32) / 255, cv2.COLOR_BGR2LAB)
    known = len(mids)
    sides = np.sort([[c.box[2] - c.box[0], c.box[3] - c.box[1]] for c in usable], axis=1)
    index = (float(np.median(sides[:, 0])), float(np.median(sides[:, 1])))
    size = _design_size(lab, np.array(mids), np.array(turns), np.array(spans), offset, index)
    length = float(np.linalg.norm(offset))
    lone = typical / length  # a card of one index alone: as big as the typical card of two
    guess = np.array(size) * lone
    placed = [CardFrame((float(m[0]), float(m[1])), t, size[0] * s / length, size[1] * s / length).outline()
              for m, t, s in zip(mids, turns, spans)]
    for k in sorted(set(range(len(usable))) - paired):  # an index alone: its card laid as the rest, its sides say
        facing = laid if _turn_apart(angles[k], laid) <= 90 else laid + 180  # which end of the card the index is at,
        options = []  # unless a faded index's facing was misread and that end lays the card on others
        for end in (facing, facing + 180):
            tries = end + np.arange(-LONE_TURN, LONE_TURN + 1, 3.0)
            centres_k = np.array([centres[k] + _rotation(t) @ offset * lone / 2 for t in tries])
            scores = _edge_contrast(lab, centres_k, tries, np.full(len(tries), guess[0]), np.full(len(tries), guess[1]))
            best = int((scores * _laid_prior(tries, laid)).argmax())
            frame = CardFrame((float(centres_k[best][0]), float(centres_k[best][1])), float(tries[best]), *guess)
            options.append((_covered(frame.outline(), placed) > LONE_COVER, centres_k[best], float(tries[best])))
        _, centre, turn = min(options, key=lambda o: o[0])  # the facing's end first (min keeps the first of equals)
        mids.append(centre)
        turns.append(turn)
        spans.append(typical)
    frames = _fit_frames(lab, np.array(mids), np.array(turns), np.array(spans) / length, size)
    sharp = _edge_contrast(lab, np.array([f.centre for f in frames]), np.array([f.turn for f in frames]),
                           np.array([f.width for f in frames]), np.array([f.height for f in frames]))
    sharp = sharp * _laid_prior(np.array([f.turn for f in frames]), laid)
    order = sorted(range(len(frames)), key=lambda k: (k >= known, -sharp[k]))  # pairs first, then sharpest
    kept: list[int] = []
    for k in order:
        frame = frames[k]
        if all(np.hypot(frame.centre[0] - frames[o].centre[0], frame.centre[1] - frames[o].centre[1])
               > 0.6 * min(frames[o].width, frames[o].height) for o in kept):
            kept.append(k)
    return [frames[k].outline() for k in kept], sum(1 for k in kept if k < known)


def reading_order(outlines: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Outlines in reading order: rows from the top (a new row where the centre drops by
    more than half a card height), each row left to right.

    >>> boxes = [np.array([[x, y], [x + 10, y], [x + 10, y + 14], [x, y + 14]], float)
    ...          for x, y in ((50, 2), (0, 0), (0, 30), (30, 31))]
    >>> [b[0].tolist() for b in reading_order(boxes)]
    [[0.0, 0.0], [50.0, 2.0], [0.0, 30.0], [30.0, 31.0]]
    """
    if not outlines:
        return []
    centres = [o.mean(axis=0) for o in outlines]
    height = float(np.median([np.ptp(o[:, 1]) for o in outlines]))
    order = sorted(range(len(outlines)), key=lambda i: centres[i][1])
    rows: list[list[int]] = [[order[0]]]
    for i in order[1:]:
        if centres[i][1] - np.mean([centres[j][1] for j in rows[-1]]) > 0.5 * height:
            rows.append([])
        rows[-1].append(i)
    return [outlines[i] for row in rows for i in sorted(row, key=lambda i: centres[i][0])]


#: What a failed photo showed, as advice (:func:`photo_hints`): each is said only where what was seen calls for it.
BUSY_CLOTH = N_("the cloth has many small edges that hide the cards' outlines: lay the cards on a plain cloth")
MORE_LIGHT = N_("the photo is dark or flat: take it in more light")
CARDS_APART = N_("some cards touch or overlap: lay them apart")
WHOLE_SUIT = N_("some cards are cut off at the photo's edge: get the whole suit in the frame")
WHAT_WAS_SEEN = N_("%(found)s. What was seen: %(hints)s.")
#: Canny edges (share of the pixels) of the table about the cards over which a cloth counts as busy.
BUSY_EDGES = 0.02
#: A photo darker than this mean grey, or with less than this spread between its 5th and 95th percentile grey,
#: needs more light.
DARK_GREY, FLAT_SPREAD = 70.0, 45.0
#: Share of the photo's short side within which a card or index touches the photo's edge.
BORDER = 0.01


@dataclass(frozen=True)
class CardSearch:
    """What the search of one photo found: the card outlines (4 points each, photo px, reading order), the
    corner indices the detector boxed (x1, y1, x2, y2) and how many cards both of a card's indices vouch for."""

    outlines: tuple[tuple[tuple[float, float], ...], ...]
    corners: tuple[tuple[float, float, float, float], ...] = ()
    paired: int = 0


class CardsNotFound(EnrolError):
    """A photo that does not show the cards wanted: the message names it, what was seen and what would help;
    ``search`` is what was found (:func:`annotated` draws it)."""

    def __init__(self, template: str, /, *, search: CardSearch, photo: str = "photo", **params: object) -> None:
        super().__init__(template, **params)
        self.search = search
        self.photo = photo


@lru_cache(maxsize=1)
def _corner_finder() -> Any:
    """The shipped corner detector (or ``$TIPLU_MODEL``'s), loaded once: it boxes the corner indices of any
    design, on the tables it was trained on."""
    from vision.detector import load_detector

    return load_detector()


def _snapped(fitted: np.ndarray, outlines: Sequence[np.ndarray]) -> np.ndarray:
    """The outline of the card where one stands out from the table (it hugs the card's edge), else the rectangle
    fitted about its indices: both cues agree on where the card is, the outline says more exactly.

    >>> box = np.array([[0, 0], [10, 0], [10, 14], [0, 14]], float)
    >>> _snapped(box + 0.5, [box])[0].tolist(), _snapped(box + 5, [box])[0].tolist()
    ([0.0, 0.0], [5.0, 5.0])
    """
    width = float(np.linalg.norm(fitted[1] - fitted[0]))
    area = cv2.contourArea(fitted.astype(np.float32))
    for outline in outlines:
        if (np.linalg.norm(outline.mean(axis=0) - fitted.mean(axis=0)) < SNAP * width
                and abs(cv2.contourArea(outline.astype(np.float32)) / max(area, 1e-6) - 1) < SNAP):
            return outline
    return fitted


def _searched(image_bgr: np.ndarray) -> tuple[np.ndarray, float]:
    """The photo as it is searched, at most :data:`SEARCH_SIDE` px on its long side, and the factor it was shrunk by.

    >>> [(small.shape, shrink) for small, shrink in [_searched(np.zeros((2000, 3200, 3), np.uint8))]]
    [((1000, 1600, 3), 0.5)]
    """
    shrink = min(1.0, SEARCH_SIDE / max(image_bgr.shape[:2]))
    if shrink == 1.0:
        return image_bgr, shrink
    return cv2.resize(image_bgr, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA), shrink


def _in_photo(outlines: Sequence[np.ndarray], shrink: float) -> tuple[tuple[tuple[float, float], ...], ...]:
    """Outlines found in the photo shrunk by ``shrink`` (:func:`_searched`), in the photo's own pixels.

    >>> _in_photo([np.array([[1, 2], [3, 4]])], 0.5)
    (((2.0, 4.0), (6.0, 8.0)),)
    """
    return tuple(tuple((float(x) / shrink, float(y) / shrink) for x, y in outline) for outline in outlines)


def search_cards(image_bgr: np.ndarray, wanted: int = len(RANKS), detector: Any = None) -> CardSearch:
    """The cards of an enrolment photo, combining the cues: the detector's corner indices (each card shows
    two, turned 180 degrees from each other, a design's offset apart), the cards' sides (a rectangle of a
    card's aspect fitted where they are sharpest), and the count wanted; the outlines of cards that stand out
    from a plain table (:func:`_outlines`) where the detector finds no corners.

    A photo is searched at most :data:`SEARCH_SIDE` pixels on its long side. More cards than ``wanted`` are cut
    to the surest, unless both indices of each vouch for them (a real extra card).
    """
    small, shrink = _searched(image_bgr)
    finder = detector or _corner_finder()
    corners = finder.detect(small, SEARCH_CONF)
    by_corners, paired = _corner_cards(small, corners)
    if len(by_corners) < wanted:  # a card whose indices were both boxed faintly (a pale card on a pale cloth)
        fainter = finder.detect(small, RETRY_CONF)
        retried = _corner_cards(small, fainter)
        if len(retried[0]) == wanted:
            corners, (by_corners, paired) = fainter, retried
    if len(by_corners) > wanted and paired <= wanted:
        by_corners = by_corners[:wanted]
    by_outline = _outlines(small)
    found = [_snapped(outline, by_outline) for outline in by_corners]
    if len(by_corners) != wanted and (len(by_outline) == wanted or len(by_corners) < len(by_outline) < wanted):
        found, paired = by_outline, 0
    return CardSearch(_in_photo(reading_order(found), shrink),
                      tuple((c.box[0] / shrink, c.box[1] / shrink, c.box[2] / shrink, c.box[3] / shrink)
                            for c in corners), paired)


def photo_hints(image_bgr: np.ndarray, search: CardSearch) -> list[Message]:
    """What would help a photo whose cards were not all found, decided from what was seen: cards or indices
    at the photo's edge (the whole suit in frame), outlines that touch (apart), a dark or flat photo (more
    light), many small edges on the table about the cards (a plain cloth).

    >>> [str(h) for h in photo_hints(np.full((60, 80, 3), 20, np.uint8), CardSearch(()))]
    ['the photo is dark or flat: take it in more light']
    """
    height, width = image_bgr.shape[:2]
    hints = []
    margin = BORDER * min(height, width)
    points = [p for outline in search.outlines for p in outline] + [
        p for box in search.corners for p in ((box[0], box[1]), (box[2], box[3]))]
    if any(x < margin or y < margin or x > width - margin or y > height - margin for x, y in points):
        hints.append(Message(WHOLE_SUIT))
    outlines = [np.asarray(o, np.float32) for o in search.outlines]
    if any(_covered(a, outlines[k + 1:]) > 0.02 for k, a in enumerate(outlines)):
        hints.append(Message(CARDS_APART))
    gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    low, high = np.percentile(gray, (5, 95))
    if gray.mean() < DARK_GREY or high - low < FLAT_SPREAD:
        hints.append(Message(MORE_LIGHT))
    table = np.full(gray.shape, 255, np.uint8)
    for outline in outlines:
        cv2.fillConvexPoly(table, outline.astype(np.int32), 0)
    for box in search.corners:
        cv2.rectangle(table, (int(box[0]), int(box[1])), (int(box[2]), int(box[3])), 0, -1)
    edges = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), 40, 120)
    if table.any() and float((edges[table > 0] > 0).mean()) > BUSY_EDGES:
        hints.append(Message(BUSY_CLOTH))
    return hints


def _listed(items: Sequence[Message]) -> Message | str:
    """Hints one after the other (``a; b; c``), each translatable."""
    if len(items) < 2:
        return items[0] if items else ""
    return Message(N_("%(first)s; %(rest)s"), first=items[0], rest=_listed(items[1:]))


def _refused(found: Message, image_bgr: np.ndarray, search: CardSearch, photo: str) -> CardsNotFound:
    hints = photo_hints(image_bgr, search)
    if not hints:
        return CardsNotFound(found, search=search, photo=photo)
    return CardsNotFound(WHAT_WAS_SEEN, search=search, photo=photo, found=found, hints=_listed(hints))


def annotated(image_bgr: np.ndarray, search: CardSearch, longest: int = 1280) -> np.ndarray:
    """The photo with what was found drawn on it, shrunk to ``longest`` px: each card found outlined in green
    and numbered in reading order, each corner index boxed in orange. Why: a family sees at once which cards
    tiplu did not see.

    >>> annotated(np.zeros((100, 200, 3), np.uint8), CardSearch((((10, 10), (50, 10), (50, 70), (10, 70)),))).shape
    (100, 200, 3)
    """
    shrink = min(1.0, longest / max(image_bgr.shape[:2]))
    out = cv2.resize(image_bgr, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA) if shrink < 1 \
        else image_bgr.copy()
    thick = max(2, int(round(max(out.shape[:2]) / 400)))
    for box in search.corners:
        cv2.rectangle(out, (int(box[0] * shrink), int(box[1] * shrink)), (int(box[2] * shrink), int(box[3] * shrink)),
                      (0, 140, 255), thick)
    for k, outline in enumerate(search.outlines):
        points = (np.asarray(outline) * shrink).astype(np.int32)
        cv2.polylines(out, [points], True, (40, 220, 40), thick + 1)
        x, y = points.mean(axis=0)
        cv2.putText(out, str(k + 1), (int(x) - 10 * thick, int(y) + 5 * thick), cv2.FONT_HERSHEY_SIMPLEX,
                    0.6 * thick, (40, 220, 40), thick + 1, cv2.LINE_AA)
    return out


def find_cards(image_bgr: np.ndarray, suit: str, photo: str = "photo", detector: Any = None) -> list[FoundCard]:
    """The 13 cards of one suit photo, named A to K by their place in reading order (:func:`search_cards`).

    Raises :class:`CardsNotFound` naming ``photo``, how many cards were seen and what would help
    (:func:`photo_hints`) when it does not show exactly 13 cards.
    """
    if suit not in SUITS:
        raise EnrolError(f"{photo}: suit {suit!r}: use one of {', '.join(SUITS)}")
    search = search_cards(image_bgr, len(RANKS), detector)
    if len(search.outlines) != len(RANKS):
        raise _refused(Message(N_("%(photo)s: %(n)s cards found, 13 needed: lay out the %(suit)s A to K face up in "
                                  "rows, not touching, on a plain table, and photograph them from above"),
                               photo=photo, n=len(search.outlines), suit=SUIT_NAMES[suit]), image_bgr, search, photo)
    return [FoundCard(name, outline) for name, outline in zip(card_names(suit), search.outlines)]


def find_jokers(image_bgr: np.ndarray, photo: str = "photo") -> list[FoundCard]:
    """The printed jokers of a jokers photo (1 to :data:`MAX_JOKERS`, not touching), in reading order: found by
    their outlines alone (:func:`card_outlines`), as many jokers print no rank index for the corner detector
    to box (a star or a jester in the corner).

    Raises :class:`CardsNotFound` naming ``photo``, how many cards were seen and what would help.
    """
    small, shrink = _searched(image_bgr)
    search = CardSearch(_in_photo(reading_order(card_outlines(small)), shrink))
    if not 1 <= len(search.outlines) <= MAX_JOKERS:
        raise _refused(Message(N_("%(photo)s: %(n)s cards found, 1 to %(most)s jokers needed: lay out the deck's "
                                  "printed jokers face up, not touching, on a plain table, and photograph them from "
                                  "above"), photo=photo, n=len(search.outlines), most=MAX_JOKERS),
                       image_bgr, search, photo)
    return [FoundCard(JOKER, outline) for outline in search.outlines]


def verify_calibration_scenes(scenes: int) -> None:
    """Raise :class:`EnrolError` unless ``scenes`` is 0 (keep the base calibration) or at least 2.

    >>> verify_calibration_scenes(0); verify_calibration_scenes(40)
    >>> verify_calibration_scenes(1)
    Traceback (most recent call last):
    ...
    vision.enrolment.EnrolError: calibration scenes: 1 given; give 0 (keep the base model's calibration) or at least 2 (half to choose the thresholds, half to test them)
    """
    if scenes != 0 and scenes < 2:
        raise EnrolError(f"calibration scenes: {scenes} given; give 0 (keep the base model's calibration) or at "
                         "least 2 (half to choose the thresholds, half to test them)")


def train_extra_message(missing: str) -> str:
    """What to install when ``missing`` (torch or onnx) cannot be imported: ``tiplu enrol`` and the web page say it.

    >>> train_extra_message("torch")
    "learning a deck needs the train extra (torch is missing), a few GB to download: .venv/bin/pip install -e '.[train]'"
    """
    return (f"learning a deck needs the train extra ({missing} is missing), a few GB to download: "
            f".venv/bin/pip install -e '.[train]'")


def missing_train_extra() -> str | None:
    """:func:`train_extra_message` when torch or onnx is not installed, else None; imports neither
    (a page can ask cheaply)."""
    for name in ("onnx", "torch"):
        if name in sys.modules:
            if sys.modules[name] is None:
                return train_extra_message(name)
        elif importlib.util.find_spec(name) is None:
            return train_extra_message(name)
    return None
