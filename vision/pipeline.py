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

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from scorer import JOKER, RuleSet
from vision.calibration import Calibration, calibration_of
from vision.detector import Detector
from vision.doubt_score import feature_rows
from vision.doubts import Doubt, apart_doubts, copy_doubts, faint_doubts, layout_doubts
from vision.geometry import Corner, centre_inside
from vision.layout import group_cards
from vision.pairing import Pairing, PhysicalCard, copy_limits, pair_corners

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
    """Detect, pair and group the cards of one decoded BGR photo (see :mod:`vision.images`).

    The web app calls this with the same detector for every upload. ``rules`` bound the
    copies of each face (:func:`vision.pairing.copy_limits`; default: any rule family).
    ``calibration`` (default: the detector's model's) decides which cards are uncertain
    and which corners under ``conf`` still mark a place to look; ``uncertain_below``
    overrides its confidence threshold.
    """
    calibration = calibration or calibration_of(detector)
    t0 = time.perf_counter()
    found = detector.detect(image_bgr, min(conf, calibration.faint_above, calibration.named_floor))
    counted = counted_corners(found, conf, calibration)
    corners = counted + tentative_corners(found, counted, calibration)
    t1 = time.perf_counter()
    pairing = pair_corners(corners, image_bgr, rules=rules, calibration=calibration, uncertain_below=uncertain_below,
                           tentative=range(len(counted), len(corners)))
    corners, pairing = without_unused(corners, pairing, len(counted))
    used = set(corners)
    # A card read only from corners under ``conf`` is one to check, whatever ``uncertain_below`` says.
    read = [replace(c, uncertain=True) if all(corners[i].confidence < conf for i in c.corners) else c
            for c in pairing.cards]
    read = scored(corners, read, calibration)
    t2 = time.perf_counter()
    groups = group_cards(read, corners)
    t3 = time.perf_counter()
    cards, laid = _renumber(read, groups)
    card_of = {c.corners[0]: k for k, c in enumerate(cards) if len(c.corners) == 1}
    apart = [(card_of[i], card_of[j]) for i, j in pairing.apart if i in card_of and j in card_of]
    decks, jokers = copy_limits(rules)
    taken = pairing.taken()
    untaken = [c for c in found if c not in used] + [c for i, c in enumerate(corners) if i not in taken]
    looked = looked_around(image_bgr, detector, corners, cards, calibration.faint_above)
    t4 = time.perf_counter()
    copies = Counter(c.card for c in cards)
    faint, seen_around = ([c for c in (in_play(c, decks, jokers, copies) for c in candidates
                                       if c.confidence >= calibration.faint_above) if c is not None]
                          for candidates in (untaken, looked))
    doubts = (copy_doubts(cards, pairing.dropped, decks, jokers) + apart_doubts(cards, apart)
              + layout_doubts(cards, laid) + faint_doubts(cards, faint, corners, seen_around))
    timings = {"detect_ms": (t1 - t0) * 1000, "pair_ms": (t2 - t1) * 1000, "group_ms": (t3 - t2) * 1000,
               "look_ms": (t4 - t3) * 1000}
    return PhotoReading(name, corners, cards, laid, pairing.clamped, timings, tuple(doubts))


#: A corner found by looking around (:func:`looked_around`) overlapping one of the reading's at this IoU or
#: more is that corner boxed again, not a place.
LOOK_NEW_IOU = 0.3


def looked_around(image_bgr: np.ndarray, detector: Detector, corners: Sequence[Corner],
                  cards: Sequence[PhysicalCard], faint_above: float) -> list[Corner]:
    """Corners the detector finds in windows about the cards read (``look_around``, where its model has
    windows) that lie on none of the reading's ``corners``: more places a card may be missed (where a
    place the photo's own passes showed lies, that place is kept: :func:`vision.doubts.faint_doubts`).

    >>> looked_around(np.zeros((10, 10, 3), np.uint8), object(), [], [], 0.1)
    []
    """
    look = getattr(detector, "look_around", None)
    read = [corners[i] for card in cards for i in card.corners]
    if look is None or not read:
        return []
    return list(look(image_bgr, read, faint_above, [c.box for c in corners], LOOK_NEW_IOU))


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
