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
:mod:`vision.training.enrol`'s, reached through :mod:`vision.training.api`. This module
imports nothing of :mod:`vision.training`, nor torch, so ``tiplu serve`` stays light.

>>> [card_names("S")[k] for k in (0, 9, 12)]
['AS', '10S', 'KS']
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from scorer import Message, N_, TipluError

SUITS = ("S", "H", "D", "C")
SUIT_NAMES = {"S": Message(N_("spades")), "H": Message(N_("hearts")), "D": Message(N_("diamonds")),
              "C": Message(N_("clubs"))}
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKER = "JOKER"
MAX_JOKERS = 6
#: A card is 63 x 88 mm; outlines whose long/short ratio is far from that are not cards.
CARD_RATIO = (1.2, 1.75)
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
        raise EnrolError(N_("%(photo)s: %(n)s cards found, 13 needed: lay out the %(suit)s A to K face up in rows, "
                            "not touching, on a plain table, and photograph them from above"),
                         photo=photo, n=len(outlines), suit=SUIT_NAMES[suit])
    return [FoundCard(name, tuple((float(x), float(y)) for x, y in outline))
            for name, outline in zip(card_names(suit), outlines)]


def find_jokers(image_bgr: np.ndarray, photo: str = "photo") -> list[FoundCard]:
    """The printed jokers of a jokers photo (1 to :data:`MAX_JOKERS`, not touching)."""
    outlines = reading_order(_outlines(image_bgr))
    if not 1 <= len(outlines) <= MAX_JOKERS:
        raise EnrolError(N_("%(photo)s: %(n)s cards found, 1 to %(most)s jokers needed: lay out the deck's printed "
                            "jokers face up, not touching, on a plain table, and photograph them from above"),
                         photo=photo, n=len(outlines), most=MAX_JOKERS)
    return [FoundCard(JOKER, tuple((float(x), float(y)) for x, y in outline)) for outline in outlines]


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
    "learning a deck needs the train extra (torch is missing): pip install -e '.[train]'"
    """
    return f"learning a deck needs the train extra ({missing} is missing): pip install -e '.[train]'"


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
