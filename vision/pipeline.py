"""Photo to cards: detect corners, pair them into physical cards, group the cards into melds.

``tiplu detect PHOTO... [--conf X]`` and ``POST /api/detect`` print one JSON object per photo::

    {"image": "hand.jpg", "cards": [{"card": "10C", "confidence": 0.93, "box": [x1, y1, x2, y2],
      "corners": [0, 4], "uncertain": false, "clamped": false,
      "alternatives": [{"card": "10S", "p": 0.04}]}],
     "corners": [{"card", "confidence", "box", "alternatives"}],
     "groups": [[0, 1, 2], [3]],
     "doubts": [{"kind": "short_meld", "cards": [3, 4], "box": [...], "message": "..."}]}

Boxes are in the photo's pixels. ``corners`` are the detections down to ``--conf`` and the
fainter ones counted as cards (:func:`counted_corners`, :func:`tentative_corners`);
each card lists the corner indexes it was built from; ``groups`` hold card indexes.
``uncertain`` and ``alternatives`` are the detector's doubt (:mod:`vision.calibration`),
``doubts`` what the rules add (:mod:`vision.doubts`; the verdict's own doubts come with
``tiplu score``).

>>> from vision.detector import load_detector
>>> reading = read_photo(np.full((240, 320, 3), 90, np.uint8), load_detector())
>>> sorted(reading.to_dict()), reading.cards
(['cards', 'corners', 'doubts', 'groups', 'image'], ())
"""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from scorer import JOKER, RuleSet
from vision.calibration import Calibration
from vision.detector import Detector
from vision.doubt_score import feature_rows
from vision.doubts import Doubt, apart_doubts, copy_doubts, faint_doubts, layout_doubts
from vision.geometry import Corner, centre_inside
from vision.layout import group_cards
from vision.pairing import Pairing, PhysicalCard, copy_limits, pair_corners
from vision.settings import DETECTOR_FILE, ReaderSettings, fingerprint

DEFAULT_CONF = 0.25


@dataclass(frozen=True)
class PhotoReading:
    """What one photo shows: raw corners, physical cards, their groups, and stage timings (ms).

    ``clamped`` names faces seen more often than the decks hold (the extras were dropped
    and the kept copies marked uncertain); ``doubts`` are what the rules find
    (:mod:`vision.doubts`).
    """

    image: str | None
    corners: tuple[Corner, ...]
    cards: tuple[PhysicalCard, ...]
    groups: tuple[tuple[int, ...], ...]
    clamped: tuple[str, ...] = ()
    timings: dict[str, float] = field(default_factory=dict, compare=False)
    doubts: tuple[Doubt, ...] = ()

    def card_names(self) -> list[str]:
        return [c.card for c in self.cards]

    def grouped_names(self) -> list[list[str]]:
        """The groups as card names, e.g. ``[["3S", "4S", "5S"], ["KD"]]``."""
        return [[self.cards[i].card for i in g] for g in self.groups]

    @property
    def uncertain(self) -> list[int]:
        return [i for i, c in enumerate(self.cards) if c.uncertain]

    def to_dict(self) -> dict[str, Any]:
        """The ``tiplu detect`` / ``POST /api/detect`` JSON shape (exactly these five keys and ``doubts``)."""
        return {"image": self.image,
                "cards": [c.to_dict() for c in self.cards],
                "corners": [{"card": c.card, "confidence": round(float(c.confidence), 4),
                             "box": [round(float(v), 1) for v in c.box],
                             "alternatives": [{"card": n, "p": p} for n, p in c.alternatives]}
                            for c in self.corners],
                "groups": [list(g) for g in self.groups],
                "doubts": [d.to_dict() for d in self.doubts]}


def read_photo(image_bgr: np.ndarray, detector: Detector, conf: float = DEFAULT_CONF, *,
               name: str | None = None, uncertain_below: float | None = None,
               rules: RuleSet | None = None, calibration: Calibration | None = None) -> PhotoReading:
    """Detect, pair and group the cards of one decoded BGR photo (see :mod:`vision.images`): :class:`Reader`.

    The web app calls this with the same detector for every upload. ``rules`` bound the
    copies of each face (:func:`vision.pairing.copy_limits`; default: any rule family).
    ``calibration`` (default: the detector's model's) decides which cards are uncertain
    and which corners under ``conf`` still mark a place to look; ``uncertain_below``
    overrides its confidence threshold.
    """
    return Reader(detector, conf, rules=rules, calibration=calibration or detector.calibration,
                  uncertain_below=uncertain_below).read(image_bgr, name)


@dataclass(frozen=True)
class Reader:
    """What happens to a photo, in order (:meth:`read`; each step a method):

    1. :meth:`detect`: the detector's corners (:meth:`vision.detector.Detector.detect`: stage 1's passes
       over the photo, :mod:`vision.passes`, one NMS, naming by stage 2 and its ensemble, orientation).
    2. :meth:`count`: which corners count as cards, and which faint ones pairing may take where the
       indices' angles vouch for them (:mod:`vision.calibration`).
    3. :meth:`pair`: corners into physical cards (:func:`vision.pairing.pair_corners`), copies bounded by the decks.
    4. :meth:`flag`: the cards the doubt score marks to check (:mod:`vision.doubt_score`).
    5. :meth:`lay_out`: the cards in groups as laid (:func:`vision.layout.group_cards`).
    6. :meth:`look_around`: the look-around pass about the cards read (:class:`vision.passes.LookAroundPass`).
    7. :meth:`doubt`: what the rules find (:mod:`vision.doubts`): copies, cards apart, short melds, places to look.
    """

    detector: Detector
    conf: float = DEFAULT_CONF
    rules: RuleSet | None = None
    calibration: Calibration = field(default_factory=Calibration)
    uncertain_below: float | None = None

    def read(self, image_bgr: np.ndarray, name: str | None = None) -> PhotoReading:
        """Every step, timed (``detect_ms``, ``pair_ms`` with the flagging, ``group_ms``, ``look_ms``)."""
        t0 = time.perf_counter()
        found = self.detect(image_bgr)
        counted, corners = self.count(found)
        t1 = time.perf_counter()
        corners, pairing = self.pair(image_bgr, corners, len(counted))
        read = self.flag(corners, pairing.cards)
        t2 = time.perf_counter()
        groups = group_cards(read, corners)
        t3 = time.perf_counter()
        cards, laid = _renumber(read, groups)
        looked = self.look_around(image_bgr, corners, cards)
        t4 = time.perf_counter()
        doubts = self.doubt(found, corners, cards, laid, pairing, looked)
        timings = {"detect_ms": (t1 - t0) * 1000, "pair_ms": (t2 - t1) * 1000, "group_ms": (t3 - t2) * 1000,
                   "look_ms": (t4 - t3) * 1000}
        return PhotoReading(name, corners, cards, laid, pairing.clamped, timings, tuple(doubts))

    def detect(self, image_bgr: np.ndarray) -> list[Corner]:
        """The detector's corners, down to the faintest the calibration still uses."""
        calibration = self.calibration
        return self.detector.detect(image_bgr, min(self.conf, calibration.faint_above, calibration.named_floor))

    def count(self, found: Sequence[Corner]) -> tuple[tuple[Corner, ...], tuple[Corner, ...]]:
        """The corners counted as cards, and those followed by the tentative ones (:func:`counted_corners`,
        :func:`tentative_corners`)."""
        counted = counted_corners(found, self.conf, self.calibration)
        return counted, counted + tentative_corners(found, counted, self.calibration)

    def pair(self, image_bgr: np.ndarray, corners: Sequence[Corner], counted: int) -> tuple[tuple[Corner, ...],
                                                                                             Pairing]:
        """Corners into cards; the tentative corners no card took are left out (:func:`without_unused`).
        A card read only from corners under ``conf`` is one to check, whatever ``uncertain_below`` says."""
        pairing = pair_corners(corners, image_bgr, rules=self.rules, calibration=self.calibration,
                               uncertain_below=self.uncertain_below, tentative=range(counted, len(corners)))
        kept, pairing = without_unused(corners, pairing, counted)
        cards = tuple(replace(c, uncertain=True) if all(kept[i].confidence < self.conf for i in c.corners) else c
                      for c in pairing.cards)
        return kept, replace(pairing, cards=cards)

    def flag(self, corners: Sequence[Corner], cards: Sequence[PhysicalCard]) -> list[PhysicalCard]:
        """The cards with those the doubt score flags marked uncertain (:func:`scored`)."""
        return scored(corners, cards, self.calibration)

    def look_around(self, image_bgr: np.ndarray, corners: Sequence[Corner],
                    cards: Sequence[PhysicalCard]) -> list[Corner]:
        """Corners found about the cards read that lie on none of ``corners`` (:func:`looked_around`)."""
        return looked_around(image_bgr, self.detector, corners, cards, self.calibration.faint_above)

    def doubt(self, found: Sequence[Corner], corners: Sequence[Corner], cards: Sequence[PhysicalCard],
              laid: Sequence[Sequence[int]], pairing: Pairing, looked: Sequence[Corner]) -> list[Doubt]:
        """What the rules find: more copies than the decks hold, two copies that may be one card, short
        melds, and the places a card may be missed (corners no card took, and those looked around for),
        each named within the decks in play (:func:`in_play`)."""
        card_of = {c.corners[0]: k for k, c in enumerate(cards) if len(c.corners) == 1}
        apart = [(card_of[i], card_of[j]) for i, j in pairing.apart if i in card_of and j in card_of]
        decks, jokers = copy_limits(self.rules)
        taken = pairing.taken()
        used = set(corners)
        untaken = [c for c in found if c not in used] + [c for i, c in enumerate(corners) if i not in taken]
        copies = Counter(c.card for c in cards)
        faint, seen_around = ([c for c in (in_play(c, decks, jokers, copies) for c in candidates
                                           if c.confidence >= self.calibration.faint_above) if c is not None]
                              for candidates in (untaken, looked))
        return (copy_doubts(cards, pairing.dropped, decks, jokers) + apart_doubts(cards, apart)
                + layout_doubts(cards, laid) + faint_doubts(cards, faint, corners, seen_around))


#: A corner found by looking around (:func:`looked_around`) overlapping one of the reading's at this IoU or
#: more is that corner boxed again, not a place.
LOOK_NEW_IOU = 0.3


def looked_around(image_bgr: np.ndarray, detector: Detector, corners: Sequence[Corner],
                  cards: Sequence[PhysicalCard], faint_above: float) -> list[Corner]:
    """Corners the detector finds in windows about the cards read (:meth:`vision.detector.Detector.look_around`)
    that lie on none of the reading's ``corners``: more places a card may be missed (where a place the
    photo's own passes showed lies, that place is kept: :func:`vision.doubts.faint_doubts`).
    """
    read = [corners[i] for card in cards for i in card.corners]
    if not read:
        return []
    return list(detector.look_around(image_bgr, read, faint_above, [c.box for c in corners], LOOK_NEW_IOU))


#: The modules whose numbers decide what the reader reads: the calibration is fitted on their output.
READER_MODULES = ("vision.geometry", "vision.passes", "vision.detector", "vision.orientation", "vision.pairing",
                  "vision.layout", "vision.doubt_score", "vision.doubts", "vision.pipeline")


def reader_constants() -> dict[str, Any]:
    """Every number the reader's modules define at module level (upper-case names assigned there), by
    ``module.NAME``.

    >>> constants = reader_constants()
    >>> constants["vision.pipeline.LOOK_NEW_IOU"], "vision.pairing.MAX_ALTERNATIVES" in constants
    (0.3, False)
    """
    import importlib
    import inspect
    import re

    def numeric(value: Any) -> bool:
        if isinstance(value, (tuple, list)):
            return all(numeric(v) for v in value)
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    out: dict[str, Any] = {}
    for name in READER_MODULES:
        module = importlib.import_module(name)
        assigned = set(re.findall(r"^([A-Z][A-Z0-9_]*)\s*[:=]", inspect.getsource(module), re.M))
        out |= {f"{name}.{key}": value for key, value in vars(module).items() if key in assigned and numeric(value)}
    return out


def reading_fingerprint(settings: ReaderSettings, folder: Path) -> str:
    """What a calibration is fitted on, as a short hash: the reader's settings, its modules' numbers
    (:func:`reader_constants`) and the networks' bytes. Where it differs from the one the model's
    calibration recorded (``"fingerprint"``), the reader reads otherwise and the doubt figures are
    no longer measured: calibrate again (``tiplu calibrate``, which records it).

    >>> from vision.detector import MODELS_DIR
    >>> from vision.settings import read_settings
    >>> len(reading_fingerprint(read_settings(MODELS_DIR), MODELS_DIR))
    16
    """
    networks = [DETECTOR_FILE, *settings.classifiers] + ([settings.orientation] if settings.orientation else [])
    files = {name: hashlib.sha256((folder / name).read_bytes()).hexdigest() if (folder / name).is_file() else None
             for name in networks}
    return fingerprint({"settings": settings.to_json(), "classes": list(settings.classes),
                        "constants": reader_constants(), "networks": files})


def scored(corners: Sequence[Corner], cards: Sequence[PhysicalCard],
           calibration: Calibration) -> list[PhysicalCard]:
    """``cards`` with those the calibration's doubt score flags marked uncertain (none without a score).

    The score reads each card among all the others (:mod:`vision.doubt_score`), so it runs
    once the cards are paired.
    """
    if calibration.score is None:
        return list(cards)
    rows = feature_rows(corners, cards)
    return [replace(c, uncertain=True) if not c.uncertain and calibration.score.flags(row) else c
            for c, row in zip(cards, rows)]


def in_play(corner: Corner, decks: int, jokers: int, read: Mapping[str, int]) -> Corner | None:
    """A faint corner as a doubt names it: by its card while the decks in play hold a copy more than
    the ``read`` cards show (``decks`` of a face, ``jokers`` printed jokers), else by its likeliest
    other card that they do (the place may still hold a missed card), or none without one.

    >>> joker = Corner("JOKER", 0.2, (0, 0, 9, 9), alternatives=(("JOKER", 0.1), ("QH", 0.05)))
    >>> in_play(joker, 3, 0, {}).card, in_play(joker, 3, 3, {}).card, in_play(Corner("JOKER", 0.2, (0, 0, 9, 9)), 3, 0, {})
    ('QH', 'JOKER', None)
    >>> six = Corner("6H", 0.2, (0, 0, 9, 9), alternatives=(("5H", 0.1),))
    >>> in_play(six, 3, 0, {"6H": 2}).card, in_play(six, 3, 0, {"6H": 3}).card, in_play(six, 2, 0, {"6H": 2, "5H": 2})
    ('6H', '5H', None)
    """
    def held(card: str) -> int:
        return jokers if card == str(JOKER) else decks

    if read.get(corner.card, 0) < held(corner.card):
        return corner
    others = [(name, p) for name, p in corner.alternatives if name != corner.card and read.get(name, 0) < held(name)]
    return replace(corner, card=others[0][0], alternatives=tuple(others[1:])) if others else None


def counted_corners(found: Sequence[Corner], conf: float, calibration: Calibration) -> tuple[Corner, ...]:
    """The corners that count as cards: those at ``conf`` or more, and the fainter ones the
    classifier names clearly (:meth:`Calibration.named_clearly`) that lie on none of those.

    A faint box whose centre lies inside a counted corner is that index boxed again (the
    rank alone, or rank and pip), not another card.

    >>> cal = Calibration(named_above=0.9, named_floor=0.1)
    >>> found = [Corner("9S", 0.8, (0, 0, 10, 16)), Corner("9S", 0.15, (2, 2, 10, 10), card_p=0.95),
    ...          Corner("4C", 0.14, (50, 0, 60, 16), card_p=0.93), Corner("KD", 0.2, (90, 0, 100, 16), card_p=0.5)]
    >>> [c.card for c in counted_corners(found, 0.25, cal)]
    ['9S', '4C']
    """
    counted = [c.box for c in found if c.confidence >= conf]
    return tuple(c for c in found if c.confidence >= conf or (
        calibration.named_clearly(c.confidence, c.card_p) and not centre_inside(c.box, counted)))


def without_unused(corners: Sequence[Corner], pairing: Pairing, keep: int) -> tuple[tuple[Corner, ...], Pairing]:
    """The corners without those from index ``keep`` on that no card took (tentative corners the
    angles did not vouch for), and the pairing's corner indexes renumbered to match.

    >>> cs = [Corner("7H", 0.9, (0, 0, 9, 9)), Corner("8H", 0.2, (50, 0, 59, 9)), Corner("9H", 0.2, (90, 0, 99, 9))]
    >>> kept, pairing = without_unused(cs, Pairing((PhysicalCard("7H", 0.9, cs[0].box, (0,)),
    ...                                             PhysicalCard("9H", 0.2, cs[2].box, (2,)))), 1)
    >>> [c.card for c in kept], [card.corners for card in pairing.cards]
    (['7H', '9H'], [(0,), (1,)])
    """
    taken = pairing.taken()
    order = [i for i in range(len(corners)) if i < keep or i in taken]
    new = {old: k for k, old in enumerate(order)}

    def renumbered(cards: Sequence[PhysicalCard]) -> tuple[PhysicalCard, ...]:
        return tuple(replace(c, corners=tuple(new[i] for i in c.corners)) for c in cards)

    return tuple(corners[i] for i in order), replace(
        pairing, cards=renumbered(pairing.cards), dropped=renumbered(pairing.dropped),
        apart=tuple((new[i], new[j]) for i, j in pairing.apart))


def tentative_corners(found: Sequence[Corner], counted: Sequence[Corner],
                      calibration: Calibration) -> tuple[Corner, ...]:
    """The faint corners pairing may take as cards where the angles vouch for them
    (:meth:`Calibration.may_vouch`, :func:`vision.pairing.vouched_groups`): not counted, and on no counted corner.

    >>> cal = Calibration(named_floor=0.1, vouched_above=0.5)
    >>> found = [Corner("9S", 0.8, (0, 0, 10, 16)), Corner("4C", 0.14, (50, 0, 60, 16), card_p=0.6),
    ...          Corner("9S", 0.15, (2, 2, 10, 10), card_p=0.7), Corner("KD", 0.2, (90, 0, 100, 16), card_p=0.3)]
    >>> [c.card for c in tentative_corners(found, found[:1], cal)]
    ['4C']
    """
    boxes = [k.box for k in counted]
    return tuple(c for c in found if c not in counted and calibration.may_vouch(c.confidence, c.card_p)
                 and not centre_inside(c.box, boxes))


def _renumber(cards: Sequence[PhysicalCard], groups: list[list[int]]
              ) -> tuple[tuple[PhysicalCard, ...], tuple[tuple[int, ...], ...]]:
    """Cards listed in layout order, so group ``k`` is a run of consecutive card indexes."""
    order = [i for g in groups for i in g]
    new_index = {old: new for new, old in enumerate(order)}
    return (tuple(cards[i] for i in order),
            tuple(tuple(new_index[i] for i in g) for g in groups))
