"""When a card read from a photo is doubtful: numbers fitted on held-out photos, kept in ``model.json``.

A card is ``uncertain`` (the review asks the player to check it) when its confidence is
under :attr:`Calibration.uncertain_below`, or when the classifier's next most likely card
is more likely than :attr:`Calibration.alternative_above` (an 8D that could well be an
8H is worth one tap even when the box itself is sure), or when the fitted
:class:`vision.doubt_score.DoubtScore` (``score``) gives its probability of being wrong at
least its ``flag_above`` (the confidence thresholds are then off, 0 and 1). Corners too faint to
count as a card (under the reading's ``conf``) but at least :attr:`Calibration.faint_above` are
shown as places where a card may have been missed (:data:`vision.doubts.FAINT_CARD`), except
those the classifier names clearly (its probability of the card at least
:attr:`Calibration.named_above`, the corner's confidence at least :attr:`Calibration.named_floor`):
those count as cards, always uncertain (their confidence is under the reading's). A faint corner
from ``named_floor`` that the classifier names less clearly (from :attr:`Calibration.vouched_above`)
is offered to pairing too, and counts as a card to check only where the corners' angles vouch
for it (:func:`vision.pairing.vouched_groups`).

The numbers are chosen on a calibration split of held-out photos and measured on a separate
test split (``tiplu calibrate``, :mod:`vision.training.measure.calibrate`), and live in the model
folder's ``model.json`` under ``"calibration"`` with the fingerprint of the reader they were
fitted on, so a new model brings its own. A model without them gets the defaults (no faint
corner counts).

>>> cal = Calibration(uncertain_below=0.5, alternative_above=0.2)
>>> cal.doubtful(0.9, (("8H", 0.05),)), cal.doubtful(0.9, (("8H", 0.3),)), cal.doubtful(0.4, ())
(False, True, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vision.doubt_score import DoubtScore, DoubtScoreError

UNCERTAIN_BELOW = 0.5
ALTERNATIVE_ABOVE = 1.0
TWIN_ABOVE = 1.0
FAINT_ABOVE = 1.0
NAMED_ABOVE = 1.0
NAMED_FLOOR = 1.0
VOUCHED_ABOVE = 1.0


#: The thresholds ``model.json``'s ``"calibration"`` may hold.
CALIBRATION_FIELDS = ("uncertain_below", "alternative_above", "faint_above", "named_above", "named_floor",
                      "vouched_above", "twin_above")

#: The suit a small index's pip passes for: a club's three lobes blur into a spade's round top, and a heart's
#: two into a diamond's point, while the rank reads the same.
TWIN_SUITS = {"S": "C", "C": "S", "H": "D", "D": "H"}
#: An index whose longest side in the photo is under this many pixels is small enough for its pip to pass for
#: its twin's (a laptop webcam's index is about 50 px long, a phone close-up's about 100).
SMALL_INDEX = 80.0


def twin_of(card: str) -> str | None:
    """The card a small index of ``card`` may really be: the same rank in the look-alike suit.

    >>> twin_of("10C"), twin_of("QH"), twin_of("JOKER")
    ('10S', 'QD', None)
    """
    suit = TWIN_SUITS.get(card[-1:])
    return None if suit is None or card == "JOKER" else card[:-1] + suit


class CalibrationError(ValueError):
    """``model.json`` holds calibration numbers tiplu cannot use; the message names them."""


@dataclass(frozen=True)
class Calibration:
    """The thresholds that make a card doubtful, count a faint but clearly named corner, or
    point at a missed one (see the module doc)."""

    uncertain_below: float = UNCERTAIN_BELOW
    alternative_above: float = ALTERNATIVE_ABOVE
    faint_above: float = FAINT_ABOVE
    named_above: float = NAMED_ABOVE
    named_floor: float = NAMED_FLOOR
    vouched_above: float = VOUCHED_ABOVE
    #: A card read from a small index (:data:`SMALL_INDEX`) is doubtful when the classifier gives its twin
    #: (:func:`twin_of`) at least this probability: on a new camera such a reading is not sure.
    twin_above: float = TWIN_ABOVE
    #: The fitted doubt score (None: the thresholds alone decide).
    score: DoubtScore | None = None
    #: What the numbers were fitted on: :func:`vision.pipeline.reading_fingerprint` of the reader then
    #: (None: not recorded). A reader whose fingerprint differs reads otherwise: calibrate again.
    fingerprint: str | None = None

    def doubtful(self, confidence: float, alternatives: Sequence[tuple[str, float]]) -> bool:
        """Should the player check this card?"""
        runner_up = alternatives[0][1] if alternatives else 0.0
        return confidence < self.uncertain_below or runner_up > self.alternative_above

    def twin_doubtful(self, card: str, alternatives: Sequence[tuple[str, float]], side: float) -> bool:
        """Should the player check a card whose index, ``side`` pixels long, may show its twin's pip?

        >>> cal = Calibration(twin_above=0.02)
        >>> cal.twin_doubtful("5S", (("5C", 0.03),), 50), cal.twin_doubtful("5S", (("5C", 0.03),), 120)
        (True, False)
        >>> cal.twin_doubtful("5S", (("6S", 0.3),), 50), Calibration().twin_doubtful("5S", (("5C", 0.4),), 50)
        (False, False)
        """
        twin = twin_of(card)
        return side < SMALL_INDEX and any(name == twin and p >= self.twin_above for name, p in alternatives)

    def named_clearly(self, confidence: float, card_p: float) -> bool:
        """Does a corner under the reading's confidence still count, because the classifier names it clearly?

        Stage 1 scores a small or half-covered index low even when the classifier is sure
        what it shows; the product of the two then drops a card that is there.

        >>> Calibration(named_above=0.9, named_floor=0.12).named_clearly(0.14, 0.93)
        True
        >>> Calibration(named_above=0.9, named_floor=0.12).named_clearly(0.14, 0.6)
        False
        """
        return card_p >= self.named_above and confidence >= self.named_floor

    def may_vouch(self, confidence: float, card_p: float) -> bool:
        """Is a faint corner, not counted, one that pairing may take as a card if the angles vouch for it?

        >>> Calibration(named_floor=0.1, vouched_above=0.5).may_vouch(0.12, 0.6)
        True
        >>> Calibration(named_floor=0.1, vouched_above=0.5).may_vouch(0.08, 0.6), Calibration().may_vouch(0.2, 0.9)
        (False, False)
        """
        return card_p >= self.vouched_above and confidence >= self.named_floor

    @classmethod
    def from_model_json(cls, info: Mapping[str, Any]) -> Calibration:
        """The ``"calibration"`` of a model's ``model.json`` (defaults where it has none).

        >>> Calibration.from_model_json({"calibration": {"uncertain_below": 0.6}}).uncertain_below
        0.6
        >>> Calibration.from_model_json({"calibration": {"uncertain_below": "high"}})
        Traceback (most recent call last):
        ...
        vision.calibration.CalibrationError: model.json calibration.uncertain_below: give a number from 0 to 1, not 'high'
        """
        raw = info.get("calibration") or {}
        values: dict[str, float] = {}
        for name in CALIBRATION_FIELDS:
            if name in raw:
                value = raw[name]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
                    raise CalibrationError(f"model.json calibration.{name}: give a number from 0 to 1, not {value!r}")
                values[name] = float(value)
        score = None
        if raw.get("doubt_score") is not None:
            try:
                score = DoubtScore.from_json(raw["doubt_score"])
            except DoubtScoreError as exc:
                raise CalibrationError(str(exc)) from None
        fingerprint = raw.get("fingerprint")
        if fingerprint is not None and not isinstance(fingerprint, str):
            raise CalibrationError(f"model.json calibration.fingerprint: give the text tiplu calibrate wrote, "
                                   f"not {fingerprint!r}")
        return cls(**values, score=score, fingerprint=fingerprint)

