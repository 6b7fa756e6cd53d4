"""The shapes every stage of the reader shares: a detected :class:`Corner`, a :class:`PhysicalCard` and pixel boxes.

Boxes are ``(x1, y1, x2, y2)`` in the photo's pixels. Nothing here reads an image or runs a
network, so every module of :mod:`vision` (and the training code) may import it without
pulling in another stage.

>>> corner = Corner("10C", 0.9, (0.0, 0.0, 20.0, 32.0))
>>> centre(corner.box), centre_inside(corner.box, [(5, 5, 40, 40)])
((10.0, 16.0), True)
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

Box = tuple[float, float, float, float]

#: How many other cards a corner (and so a card) offers as what it may be instead.
MAX_ALTERNATIVES = 3
#: Decimals an alternative's probability keeps, and a card's confidence in :meth:`PhysicalCard.to_dict`.
PROB_DIGITS = 4
#: Decimals a card's box keeps in :meth:`PhysicalCard.to_dict`.
BOX_DIGITS = 1


@dataclass(frozen=True)
class Corner:
    """One detected corner index: card name, confidence 0..1, box (x1, y1, x2, y2) in photo pixels.

    >>> Corner("10C", 0.9, (1.0, 2.0, 30.0, 50.0)).card
    '10C'
    """

    card: str
    confidence: float
    box: Box
    #: The next most likely cards by the classifier, ``(("8D", 0.21), ...)``, at most
    #: :data:`MAX_ALTERNATIVES`, each with its class probability (not times the box score).
    alternatives: tuple[tuple[str, float], ...] = ()
    #: The classifier's probability of ``card`` alone (``confidence`` is it times the box
    #: score); 0 where the backend has no separate classifier.
    card_p: float = 0.0
    #: Which way the index faces (degrees, :mod:`vision.orientation`); None where the model
    #: folder has no orientation network.
    angle: float | None = None


def centre(box: Sequence[float]) -> tuple[float, float]:
    """The centre of a box.

    >>> centre((0, 0, 10, 4))
    (5.0, 2.0)
    """
    return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2


def centre_inside(box: Sequence[float], around: Iterable[Sequence[float]]) -> bool:
    """Whether ``box``'s centre lies inside one of the boxes ``around`` (edges included).

    >>> centre_inside((0, 0, 10, 10), [(4, 4, 20, 20)]), centre_inside((0, 0, 10, 10), [(6, 6, 20, 20)])
    (True, False)
    """
    return bool(centres_inside([box], list(around))[0])


def centres_inside(boxes: npt.ArrayLike, around: npt.ArrayLike) -> np.ndarray:
    """For each of (N, 4) ``boxes``, whether its centre lies inside one of the (M, 4) boxes ``around``
    (edges included): :func:`centre_inside` for many boxes at once.

    >>> centres_inside([(0, 0, 10, 10), (0, 0, 2, 2)], [(4, 4, 20, 20)]).tolist()
    [True, False]
    """
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    a = np.asarray(around, dtype=float).reshape(-1, 4)
    x, y = (b[:, None, 0] + b[:, None, 2]) / 2, (b[:, None, 1] + b[:, None, 3]) / 2
    return ((a[None, :, 0] <= x) & (x <= a[None, :, 2]) & (a[None, :, 1] <= y) & (y <= a[None, :, 3])).any(1)


def union_box(boxes: Sequence[Sequence[float]]) -> Box:
    """The smallest box around all of ``boxes``.

    >>> union_box([(0, 0, 5, 5), (3, 1, 9, 4)])
    (0.0, 0.0, 9.0, 5.0)
    """
    return (float(min(b[0] for b in boxes)), float(min(b[1] for b in boxes)),
            float(max(b[2] for b in boxes)), float(max(b[3] for b in boxes)))


def box_iou(a: npt.ArrayLike, b: npt.ArrayLike) -> np.ndarray:
    """Pairwise IoU of (N, 4) and (M, 4) x1y1x2y2 boxes: one rule for suppression, training and evaluation.

    >>> box_iou(np.array([[0, 0, 2, 2]], float), np.array([[1, 0, 3, 2]], float)).round(3).tolist()
    [[0.333]]
    """
    a = np.asarray(a, float).reshape(-1, 4)
    b = np.asarray(b, float).reshape(-1, 4)
    if len(a) == 0 or len(b) == 0:
        return np.zeros((len(a), len(b)))
    x1 = np.maximum(a[:, None, 0], b[None, :, 0]); y1 = np.maximum(a[:, None, 1], b[None, :, 1])
    x2 = np.minimum(a[:, None, 2], b[None, :, 2]); y2 = np.minimum(a[:, None, 3], b[None, :, 3])
    inter = np.clip(x2 - x1, 0, None) * np.clip(y2 - y1, 0, None)
    aa = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]); ab = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    return inter / np.maximum(aa[:, None] + ab[None, :] - inter, 1e-9)


def nms(boxes: np.ndarray, scores: np.ndarray, iou: float) -> np.ndarray:
    """Greedy non-maximum suppression; indices of kept boxes, best first.

    >>> nms(np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]], float), np.array([0.9, 0.8, 0.7]), 0.5)
    array([0, 2])
    """
    order = np.argsort(-scores)
    keep: list[int] = []
    while order.size:
        i = int(order[0])
        keep.append(i)
        rest = order[1:]
        order = rest[box_iou(boxes[i], boxes[rest])[0] <= iou]
    return np.array(keep, dtype=np.int64)


def long_sides(boxes: np.ndarray) -> np.ndarray:
    """The long side of each pixel box (N, 4): how big a corner index is, whichever way it lies.

    >>> long_sides(np.array([[0, 0, 10, 30.], [5, 5, 45, 25]])).tolist()
    [30.0, 40.0]
    """
    return np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])


def flipped_boxes(boxes: np.ndarray, width: int, height: int, flip_x: bool, flip_y: bool) -> np.ndarray:
    """(N, 4) x1y1x2y2 boxes of a photo ``width`` x ``height`` flipped on the axes asked, as boxes
    of the photo itself (flipping is its own inverse).

    >>> flipped_boxes(np.array([[10.0, 20.0, 30.0, 60.0]]), 100, 80, True, True).tolist()
    [[70.0, 20.0, 90.0, 60.0]]
    """
    boxes = np.asarray(boxes, float).reshape(-1, 4)
    x1, y1, x2, y2 = boxes.T
    if flip_x:
        x1, x2 = width - x2, width - x1
    if flip_y:
        y1, y2 = height - y2, height - y1
    return np.stack([x1, y1, x2, y2], 1)


def tile_starts(length: int, tile: int, overlap: int) -> list[int]:
    """Where tiles of ``tile`` px start along a side of ``length`` px, overlapping by at least ``overlap``.

    The tiles are evenly spread, the first at 0 and the last ending at the edge, so every tile is
    whole; a side no longer than a tile is one tile.

    >>> tile_starts(3000, 960, 96), tile_starts(900, 960, 96), tile_starts(1824, 960, 96)
    ([0, 680, 1360, 2040], [0], [0, 864])
    """
    if length <= tile:
        return [0]
    count = int(np.ceil((length - overlap) / (tile - overlap)))
    return [int(round(v)) for v in np.linspace(0, length - tile, count)]


@dataclass(frozen=True)
class PhysicalCard:
    """One card on the table: its name, confidence, box, and which corners (indexes) it came from.

    ``box`` is the union of its corner boxes (for a paired card it spans the card's
    diagonal). ``uncertain`` asks the user to confirm the card (:mod:`vision.calibration`);
    ``alternatives`` are the cards it may be instead, likeliest first.

    >>> PhysicalCard("8D", 0.93, (1.0, 2.0, 30.0, 50.0), (0,), alternatives=(("8H", 0.21),)).to_dict()["alternatives"]
    [{'card': '8H', 'p': 0.21}]
    """

    card: str
    confidence: float
    box: tuple[float, float, float, float]
    corners: tuple[int, ...]
    uncertain: bool = False
    clamped: bool = False
    alternatives: tuple[tuple[str, float], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"card": self.card, "confidence": round(self.confidence, PROB_DIGITS),
                "box": [round(v, BOX_DIGITS) for v in self.box], "corners": list(self.corners),
                "uncertain": self.uncertain, "clamped": self.clamped,
                "alternatives": [{"card": name, "p": p} for name, p in self.alternatives]}
