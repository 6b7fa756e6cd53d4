"""Photo to cards: detect corners, pair them into physical cards, group the cards into melds.

``tiplu detect PHOTO... [--conf X]`` and ``POST /api/detect`` print one JSON object per photo::

    {"image": "hand.jpg", "cards": [{"card": "10C", "confidence": 0.93, "box": [x1, y1, x2, y2],
      "corners": [0, 4], "uncertain": false}], "corners": [{"card", "confidence", "box"}],
     "groups": [[0, 1, 2], [3]]}

Boxes are in the photo's pixels. ``corners`` are the raw detections down to ``--conf``;
each card lists the corner indexes it was built from; ``groups`` hold card indexes.

>>> from vision.detector import load_detector
>>> reading = read_photo(np.full((240, 320, 3), 90, np.uint8), load_detector())
>>> sorted(reading.to_dict()), reading.cards
(['cards', 'corners', 'groups', 'image'], ())
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scorer import RuleSet
from vision.detector import Corner, Detector
from vision.layout import group_cards
from vision.pairing import UNCERTAIN_BELOW, PhysicalCard, pair_corners

DEFAULT_CONF = 0.25


@dataclass(frozen=True)
class PhotoReading:
    """What one photo shows: raw corners, physical cards, their groups, and stage timings (ms).

    ``clamped`` names faces seen more often than the decks hold (the extras were dropped
    and the kept copies marked uncertain).
    """

    image: str | None
    corners: tuple[Corner, ...]
    cards: tuple[PhysicalCard, ...]
    groups: tuple[tuple[int, ...], ...]
    clamped: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict, compare=False)

    def card_names(self) -> list[str]:
        return [c.card for c in self.cards]

    def grouped_names(self) -> list[list[str]]:
        """The groups as card names, e.g. ``[["3S", "4S", "5S"], ["KD"]]``."""
        return [[self.cards[i].card for i in g] for g in self.groups]

    @property
    def uncertain(self) -> list[int]:
        return [i for i, c in enumerate(self.cards) if c.uncertain]

    def to_dict(self) -> dict[str, Any]:
        """The ``tiplu detect`` / ``POST /api/detect`` JSON shape (exactly these five keys)."""
        return {"image": self.image,
                "cards": [c.to_dict() for c in self.cards],
                "corners": [{"card": c.card, "confidence": round(float(c.confidence), 4),
                             "box": [round(float(v), 1) for v in c.box]} for c in self.corners],
                "groups": [list(g) for g in self.groups]}


def read_photo(image_bgr: np.ndarray, detector: Detector, conf: float = DEFAULT_CONF, *,
               name: str | None = None, uncertain_below: float = UNCERTAIN_BELOW,
               rules: RuleSet | None = None) -> PhotoReading:
    """Detect, pair and group the cards of one decoded BGR photo (see :mod:`vision.images`).

    The web app calls this with the same detector for every upload. ``rules`` bound the
    copies of each face (:func:`vision.pairing.copy_limits`; default: any rule family).
    """
    t0 = time.perf_counter()
    corners = tuple(detector.detect(image_bgr, conf))
    t1 = time.perf_counter()
    pairing = pair_corners(corners, image_bgr, rules=rules, uncertain_below=uncertain_below)
    t2 = time.perf_counter()
    groups = group_cards(pairing.cards, corners)
    t3 = time.perf_counter()
    cards, laid = _renumber(pairing.cards, groups)
    timings = {"detect_ms": (t1 - t0) * 1000, "pair_ms": (t2 - t1) * 1000, "group_ms": (t3 - t2) * 1000}
    return PhotoReading(name, corners, cards, laid, pairing.clamped, timings)


def _renumber(cards: Sequence[PhysicalCard], groups: list[list[int]]
              ) -> tuple[tuple[PhysicalCard, ...], tuple[tuple[int, ...], ...]]:
    """Cards listed in layout order, so group ``k`` is a run of consecutive card indexes."""
    order = [i for g in groups for i in g]
    new_index = {old: new for new, old in enumerate(order)}
    return (tuple(cards[i] for i in order),
            tuple(tuple(new_index[i] for i in g) for g in groups))
