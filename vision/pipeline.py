"""Photo to cards: detect corners, pair them into physical cards, group the cards into melds.

``tiplu detect PHOTO... [--conf X]`` prints one JSON object per photo, one per line::

    {"image": "hand.jpg", "cards": [{"card": "10C", "confidence": 0.93, "box": [x1, y1, x2, y2],
      "corners": [0, 4], "uncertain": false}], "corners": [{"card", "confidence", "box"}],
     "groups": [[0, 1, 2], [3]]}

Boxes are in the photo's pixels. ``corners`` are the raw detections down to ``--conf``;
each card lists the corner indexes it was built from; ``groups`` hold card indexes.
A photo that cannot be read is reported on stderr and the command exits 2 after the others.

>>> import numpy as np
>>> reading = read_photo(np.full((240, 320, 3), 90, np.uint8), CardDetector())   # doctest: +SKIP
>>> sorted(reading.to_dict())                                                     # doctest: +SKIP
['cards', 'corners', 'groups', 'image']
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scorer import RuleSet, TipluError
from vision.detector import CardDetector, Corner, ModelError
from vision.images import ImageError, read_image
from vision.layout import group_cards
from vision.pairing import UNCERTAIN_BELOW, PhysicalCard, pair_corners

DEFAULT_CONF = 0.25
EXIT_OK, EXIT_BAD_INPUT = 0, 2


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


def read_photo(image_bgr: np.ndarray, detector: CardDetector, conf: float = DEFAULT_CONF, *,
               name: str | None = None, uncertain_below: float = UNCERTAIN_BELOW,
               rules: RuleSet | None = None) -> PhotoReading:
    """Detect, pair and group the cards of one decoded BGR photo (see :mod:`vision.images`).

    The web app calls this with the same detector for every upload.
    """
    t0 = time.perf_counter()
    corners = tuple(detector.detect(image_bgr, conf))
    t1 = time.perf_counter()
    pairing = pair_corners(corners, image_bgr, rules=rules, uncertain_below=uncertain_below)
    t2 = time.perf_counter()
    groups = group_cards(pairing.cards, corners)
    t3 = time.perf_counter()
    cards, groups = _renumber(pairing.cards, groups)
    timings = {"detect_ms": (t1 - t0) * 1000, "pair_ms": (t2 - t1) * 1000, "group_ms": (t3 - t2) * 1000}
    return PhotoReading(name, corners, cards, groups, pairing.clamped, timings)


def _renumber(cards: Sequence[PhysicalCard], groups: list[list[int]]
              ) -> tuple[tuple[PhysicalCard, ...], tuple[tuple[int, ...], ...]]:
    """Cards listed in layout order, so group ``k`` is a run of consecutive card indexes."""
    order = [i for g in groups for i in g]
    new_index = {old: new for new, old in enumerate(order)}
    return (tuple(cards[i] for i in order),
            tuple(tuple(new_index[i] for i in g) for g in groups))


def add_detector_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``tiplu detect`` and ``tiplu score``."""
    parser.add_argument("--conf", type=float, default=DEFAULT_CONF,
                        help=f"lowest corner confidence to keep (default {DEFAULT_CONF})")
    parser.add_argument("--uncertain-below", type=float, default=UNCERTAIN_BELOW,
                        help=f"cards under this confidence are marked uncertain (default {UNCERTAIN_BELOW})")
    parser.add_argument("--model", default=None,
                        help="model folder or detector .onnx (default: $TIPLU_MODEL or the shipped models/)")
    parser.add_argument("--imgsz", type=int, default=None, help="detector input size (default: the model's)")


def make_detector(args: argparse.Namespace) -> CardDetector:
    if not 0.0 <= args.conf <= 1.0:
        raise ModelError(f"--conf {args.conf}: give a confidence between 0 and 1, e.g. 0.25")
    if args.imgsz is not None and not 32 <= args.imgsz <= 4096:
        raise ModelError(f"--imgsz {args.imgsz}: give an input size between 32 and 4096, e.g. 640")
    return CardDetector(args.model, imgsz=args.imgsz)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``tiplu detect PHOTO... [--json] [--conf X]``."""
    parser.description = "Find the cards in photos; prints one JSON object per photo, one per line."
    parser.add_argument("photos", nargs="+", metavar="PHOTO", help="JPEG, PNG or WebP photos")
    parser.add_argument("--json", action="store_true", help="JSON lines (the only output format; kept for scripts)")
    add_detector_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every photo was read, 2 when any photo or option was bad."""
    try:
        detector = make_detector(args)
    except (ModelError, TipluError) as error:
        sys.stderr.write(f"tiplu detect: {error}\n")
        return EXIT_BAD_INPUT
    status = EXIT_OK
    for path in args.photos:
        try:
            image = read_image(path)
        except ImageError as error:
            message = str(error) if str(error).startswith(str(path)) else f"{path}: {error}"
            sys.stderr.write(f"tiplu detect: {message}\n")
            status = EXIT_BAD_INPUT
            continue
        reading = read_photo(image, detector, args.conf, name=path, uncertain_below=args.uncertain_below)
        sys.stdout.write(json.dumps(reading.to_dict(), ensure_ascii=False) + "\n")
        sys.stdout.flush()
    return status
