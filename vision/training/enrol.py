"""Teach tiplu a deck, first half: find the 13 cards of a suit photo and cut their corners.

For enrolment a family lays out one suit at a time, A, 2, ... 10, J, Q, K in reading
order (rows from the top, each left to right), face up and not touching, and
photographs it. The cards do not overlap, so their outlines are found from the picture
alone (:func:`find_cards`), even for a design whose corners the detector does not know;
each card is then straightened and its two corner indices cut out as the classifier sees
them (:func:`corner_crops`), labelled by position. Those crops are what the classifier
is fine-tuned on (the second half, not built yet: see the report of issue 12).

A photo that does not show 13 cards is refused with a message naming the photo and
what was seen (:class:`EnrolError`).

>>> [card_names("S")[k] for k in (0, 9, 12)]
['AS', '10S', 'KS']
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scorer import TipluError
from vision.detector import CROP_H, CROP_MARGIN, CROP_W, crop_corner

SUITS = ("S", "H", "D", "C")
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
#: A card is 63 x 88 mm; outlines whose long/short ratio is far from that are not cards.
CARD_RATIO = (1.2, 1.75)
#: Share of the straightened card (width, height) that holds the corner index.
INDEX_REGION = (0.2, 0.3)
CARD_PX = (250, 350)
#: Share of the card width cut off each edge when straightening (rounded corners, table).
EDGE_INSET = 0.025
#: How far apart (share of the card width) the rank and the suit pip of one index may lie.
INDEX_GAP = 0.1
#: How much a photographed card is padded for the index finder (see :func:`index_box`).
PAD = 0.2


class EnrolError(TipluError):
    """An enrolment photo that cannot be used; the message names it and says what was seen."""


@dataclass(frozen=True)
class FoundCard:
    """One card of an enrolment photo: its name (from its position) and outline (4 points, photo px)."""

    card: str
    outline: tuple[tuple[float, float], ...]


def card_names(suit: str) -> list[str]:
    """The 13 cards of a suit in enrolment order, A to K."""
    return [rank + suit for rank in RANKS]


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
    found = []
    for contour in contours:
        (cx, cy), (w, h), angle = rect = cv2.minAreaRect(contour)
        if not 0.004 * area <= w * h <= 0.2 * area:
            continue
        ratio = max(w, h) / max(min(w, h), 1e-6)
        if not CARD_RATIO[0] <= ratio <= CARD_RATIO[1] or cv2.contourArea(contour) < 0.85 * w * h:
            continue
        found.append(cv2.boxPoints(rect))
    return found


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


def find_cards(image_bgr: np.ndarray, suit: str, photo: str = "photo") -> list[FoundCard]:
    """The 13 cards of one suit photo, named A to K by their place in reading order.

    Raises :class:`EnrolError` naming ``photo`` when it does not show exactly 13 cards.
    """
    if suit not in SUITS:
        raise EnrolError(f"{photo}: suit {suit!r}: use one of {', '.join(SUITS)}")
    outlines = reading_order(_outlines(image_bgr))
    if len(outlines) != len(RANKS):
        raise EnrolError(f"{photo}: {len(outlines)} cards found, 13 needed: lay out the {SUIT_NAMES[suit]} "
                         f"A to K face up in rows, not touching, on a plain table, and photograph them from above")
    return [FoundCard(name, tuple((float(x), float(y)) for x, y in outline))
            for name, outline in zip(card_names(suit), outlines)]


def card_transform(outline: Sequence[Sequence[float]]) -> np.ndarray:
    """The perspective matrix from the photo to the card upright at :data:`CARD_PX`
    (portrait; which end is up is unknown, and does not matter: both corners are read)."""
    points = np.asarray(outline, np.float32)
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    points = points[np.argsort(angles)]  # clockwise from the top-left in image coordinates
    points = np.roll(points, -int(np.argmin(points.sum(axis=1))), axis=0)
    if np.linalg.norm(points[1] - points[0]) > np.linalg.norm(points[3] - points[0]):
        points = np.roll(points, -1, axis=0)  # a card lying sideways: its short side on top
    w, h = CARD_PX
    inset = EDGE_INSET * w  # the outline hugs the card edge: keep the table out of the picture
    target = np.array([[-inset, -inset], [w + inset, -inset], [w + inset, h + inset], [-inset, h + inset]], np.float32)
    return cv2.getPerspectiveTransform(points, target)


def straighten(image_bgr: np.ndarray, outline: Sequence[Sequence[float]]) -> np.ndarray:
    """The card warped upright to :data:`CARD_PX` (see :func:`card_transform`)."""
    return cv2.warpPerspective(image_bgr, card_transform(outline), CARD_PX)


def index_box(card: np.ndarray) -> tuple[float, float, float, float]:
    """The top-left corner index (rank and suit pip) of a straightened card.

    The face renderer's finder (:func:`vision.training.faces.find_corner_index`) does it
    on printed faces, where an index glyph is at most a fifth of the card wide; a
    photographed card's ink is fatter (camera blur), so the card is padded right and
    below by :data:`PAD` (its own edge repeated) to keep the glyphs within those bounds.
    Where it finds nothing, the usual place of an index (:data:`INDEX_REGION`).
    """
    from vision.training.faces import FaceError, find_corner_index

    h, w = card.shape[:2]
    padded = cv2.copyMakeBorder(card, 0, int(PAD * h), 0, int(PAD * w), cv2.BORDER_REPLICATE)
    try:
        box, _ = find_corner_index(np.dstack([padded, np.full(padded.shape[:2], 255, np.uint8)]), gap=INDEX_GAP)
        return float(box[0]), float(box[1]), float(min(box[2], w)), float(min(box[3], h))
    except FaceError:
        return 0.03 * w, 0.03 * h, INDEX_REGION[0] * w, INDEX_REGION[1] * h


def index_boxes(image_bgr: np.ndarray, outline: Sequence[Sequence[float]]) -> list[tuple[float, float, float, float]]:
    """The card's two corner indices as boxes in photo pixels (x1, y1, x2, y2): the labels
    a detector is fine-tuned on, and where :func:`vision.detector.crop_corner` cuts them."""
    matrix = card_transform(outline)
    card = cv2.warpPerspective(image_bgr, matrix, CARD_PX)
    w, h = CARD_PX
    x0, y0, x1, y1 = index_box(card)
    x2, y2, x3, y3 = index_box(np.ascontiguousarray(card[::-1, ::-1]))
    boxes = []
    for bx0, by0, bx1, by1 in ((x0, y0, x1, y1), (w - x3, h - y3, w - x2, h - y2)):
        quad = np.array([[[bx0, by0], [bx1, by0], [bx1, by1], [bx0, by1]]], np.float32)
        back = cv2.perspectiveTransform(quad, np.linalg.inv(matrix))[0]
        boxes.append((float(back[:, 0].min()), float(back[:, 1].min()),
                      float(back[:, 0].max()), float(back[:, 1].max())))
    return boxes


def corner_crops(image_bgr: np.ndarray, outline: Sequence[Sequence[float]]) -> list[np.ndarray]:
    """The card's two corner crops, cut from the photo as the detector cuts a corner it found."""
    return [crop_corner(image_bgr, box, CROP_MARGIN, (CROP_W, CROP_H)) for box in index_boxes(image_bgr, outline)]
