"""Choose when a card is doubtful, on a calibration split; measure it on a test split.

Two kinds of split. Rendered scenes of designs held out of training (``tiplu generate
OUT --decks holdout``, a different seed for each split), whose ``geometry/*.json`` say
which card each corner index belongs to; and the real photos' ``val`` folder (``tiplu
train import-real``), cut in two by file name (``REAL/val:0`` the first half, ``REAL/val:1``
the second; photos of one burst sit together). Each photo is read once with nothing
flagged; every card read is then matched to what it shows (its corners against the
labelled boxes, IoU 0.5, or 0.3 with the corner's centre inside the label: :func:`match_boxes`):

* **right**: the card named as it is; **wrong**: another name, a second reading of a card
  already read (scenes only), or nothing at all (an extra);
* **missed**: a labelled card with no card read on it (real photos: a labelled name that
  no card read carries).

The thresholds of :class:`vision.calibration.Calibration` are searched on the
calibration splits: the pair that flags at least ``--catch`` of the wrong cards with
the fewest cards flagged (or, if none does, the most wrong cards). On the test splits
the report gives the share of wrong cards flagged, of right cards flagged and of all
cards flagged, and the share of photos with no **silent error** (every wrong card
flagged, by the detector or by a doubt that marks it (a fourth copy, two copies that may
be one card), and ``no_silent_error``: nothing
missed; ``no_silent_error_pointed``: every missed card inside a doubt's box, a faint
corner's included), the share of missed cards pointed at, and how many places to look
(:data:`vision.doubts.PLACE_KINDS`: faint corners and stacked copies; the ``faint_doubts_*``
figures) a photo gets and how many of them lie on a missed card.

Every split is read counting the corners the app counts: the model's ``named_above`` and
``named_floor`` (faint corners the classifier names clearly, :meth:`Calibration.named_clearly`),
or ``--named P,FLOOR``; those two are written back beside the thresholds chosen, and so is
the model's ``vouched_above`` (fainter corners pairing counts where their angles vouch for them,
:meth:`Calibration.may_vouch`).
``--keep`` measures the model's own thresholds again instead of choosing new ones (after a
change to how the splits are judged, or to the reading).

Usage::

    tiplu calibrate --calibrate data/calib data/real/val:0 \
        --test data/test data/real/val:1 [--named 0.9,0.1] [--keep] [--write models/model.json]

>>> match_boxes([(0, 0, 10, 10)], [(1, 1, 10, 10), (30, 30, 40, 40)])
[0]
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from scorer import JOKER, RuleSet, get_rules
from vision.calibration import CALIBRATION_FIELDS, Calibration
from vision.detector import Detector, load_detector, model_folder, read_model_json
from vision.doubt_score import FEATURES, FORMS, DoubtScore, feature_rows, fit_doubt_score
from vision.doubts import FAINT_CARD, ONE_OR_TWO, PLACE_KINDS, SHORT_MELD, TOO_MANY_COPIES, Doubt, count_doubt
from vision.geometry import box_iou
from vision.images import read_image
from vision.pipeline import DEFAULT_CONF, PhotoReading, read_photo, reading_fingerprint
from vision.score import lay_out
from vision.settings import read_settings
from vision.training.data.dataset import Sample, iter_samples

#: Nothing flagged, every faint corner down to the detector's floor kept as a place to look.
NOTHING_FLAGGED = Calibration(uncertain_below=0.0, alternative_above=1.0, faint_above=0.1)
FAINT_GRID = (0.1, 0.125, 0.15, 0.175, 0.2, 0.225)
#: Share of the places to look (faint corners, stacked copies) that must lie on a missed card for them to be shown.
FAINT_PRECISION = 0.4
ALWAYS = float("inf")
#: Doubts that mark their cards for checking whatever the detector's numbers say.
RULE_FLAGS = (TOO_MANY_COPIES, ONE_OR_TWO)
BELOW_GRID = (0.0,) + tuple(round(float(x), 3) for x in np.arange(0.25, 0.951, 0.025))
#: The IoU at which a found box whose centre lies inside a labelled one still matches it.
LOOSE_IOU = 0.3
ABOVE_GRID = tuple(round(float(x), 3) for x in np.arange(0.02, 0.501, 0.02)) + (1.0,)


#: The thresholds fixed before the doubt thresholds are chosen, written back beside them: which corners count
#: as cards (how the splits are read), and when a small index's twin makes its card doubtful (kept as the model
#: has it: the calibration splits hold no webcam frames to choose it on).
READING_FIELDS = ("named_above", "named_floor", "vouched_above", "twin_above")


def counting_as(calibration: Calibration, reading: Calibration) -> Calibration:
    """``calibration`` with the corners counted as ``reading`` counts them (:data:`READING_FIELDS`).

    >>> counting_as(Calibration(uncertain_below=0.6), Calibration(named_above=0.9, vouched_above=0.5))
    Calibration(uncertain_below=0.6, alternative_above=1.0, faint_above=1.0, named_above=0.9, named_floor=1.0, vouched_above=0.5, twin_above=1.0, score=None, fingerprint=None)
    """
    return replace(calibration, **{name: getattr(reading, name) for name in READING_FIELDS})


def reading_calibration(detector: Detector, named: tuple[float, float] | None = None) -> Calibration:
    """How the splits are read: :data:`NOTHING_FLAGGED`, with the corners counted as the app counts
    them: ``named`` (``named_above``, ``named_floor``), else the model's own.

    Which faint corners count as cards changes which cards are read, so it is fixed before the
    doubt thresholds are chosen, and kept with them in ``model.json``.

    >>> from vision.detector import load_detector
    >>> reading_calibration(load_detector(), (0.9, 0.1)).named_above
    0.9
    """
    reading = counting_as(NOTHING_FLAGGED, detector.calibration)
    return reading if named is None else replace(reading, named_above=named[0], named_floor=named[1])


@dataclass(frozen=True)
class CardCase:
    """One card read: its confidence, runner-up probability, right or not, rule-flagged or not,
    marked by the reading itself whatever the thresholds (a card of faint corners only, two
    copies that may be one card, a clamped copy), and its doubt-score features
    (:data:`vision.doubt_score.FEATURES`)."""

    confidence: float
    runner_up: float
    right: bool
    rule_flagged: bool
    marked: bool = False
    features: tuple[float, ...] = ()

    def flagged(self, calibration: Calibration) -> bool:
        """Would the app ask the player to check this card under ``calibration``?

        >>> case = CardCase(0.4, 0.0, False, False)
        >>> case.flagged(Calibration(uncertain_below=0.5)), case.flagged(NOTHING_FLAGGED)
        (True, False)
        """
        if self.rule_flagged or self.marked or calibration.doubtful(self.confidence, (("?", self.runner_up),)):
            return True
        return calibration.score is not None and bool(self.features) and calibration.score.flags(self.features)


@dataclass(frozen=True)
class PhotoCase:
    """One photo: its cards; per missed card what points at it (:data:`ALWAYS`: a rule
    doubt's box, a number: the surest faint corner on it, -1: nothing); and per place to look
    (:data:`vision.doubts.PLACE_KINDS`) its confidence and whether it lies on a missed card."""

    cards: tuple[CardCase, ...]
    missed_cover: tuple[float, ...]
    faint: tuple[tuple[float, bool], ...] = ()

    @property
    def missed(self) -> int:
        return len(self.missed_cover)

    def pointed(self, faint_above: float) -> int:
        """Missed cards a doubt points at when faint corners from ``faint_above`` are shown."""
        return sum(1 for cover in self.missed_cover if cover >= faint_above)


def match_boxes(found: Sequence[Sequence[float]], truth: Sequence[Sequence[float]], iou: float = 0.5,
                loose: float = LOOSE_IOU) -> list[int]:
    """For each found box, the index of the labelled box it overlaps most, else -1.

    It matches at IoU ``iou``, or at ``loose`` when the found box's centre lies inside the
    labelled one: a held-out design's labelled index can take in more card around the glyphs
    than stage 1 boxes (nicu-white's rank and pip, boxed at about 0.7 of the label's size), and
    such a card, named right, is no extra.

    >>> match_boxes([(0, 0, 10, 10), (2, 2, 8, 8), (8, 8, 16, 16)], [(0, 0, 10, 10)])
    [0, 0, -1]
    """
    if not len(found) or not len(truth):
        return [-1] * len(found)
    found_arr, truth_arr = np.asarray(found, float), np.asarray(truth, float)
    ious = box_iou(found_arr, truth_arr)
    best = ious.argmax(1)
    cx, cy = (found_arr[:, 0] + found_arr[:, 2]) / 2, (found_arr[:, 1] + found_arr[:, 3]) / 2
    t = truth_arr[best]
    inside = (t[:, 0] <= cx) & (cx <= t[:, 2]) & (t[:, 1] <= cy) & (cy <= t[:, 3])
    return [int(b) if ious[k, b] >= iou or (inside[k] and ious[k, b] >= loose) else -1
            for k, b in enumerate(best)]


def _inside(box: Sequence[float], around: Sequence[float], grow: float = 0.5) -> bool:
    w, h = around[2] - around[0], around[3] - around[1]
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return (around[0] - grow * w <= cx <= around[2] + grow * w) and (around[1] - grow * h <= cy <= around[3] + grow * h)


def photo_case(reading: PhotoReading, geometry: dict[str, Any]) -> PhotoCase:
    """Match a reading (read with :data:`NOTHING_FLAGGED`) to the photo's labelled cards."""
    boxes = geometry["boxes"]
    owner = match_boxes([c.box for c in reading.corners], [b["bbox"] for b in boxes])
    names = {b["card_id"]: b["name"] for b in boxes}
    doubts = list(reading.doubts)
    if lay_out(reading.groups, len(reading.cards)).shows_declaration or len(reading.cards) in (20, 22, 23):
        extra = count_doubt(len(reading.cards), (21, 22), [d for d in doubts if d.kind == SHORT_MELD])
        doubts += [extra] if extra else []
    rule_flagged = {i for d in doubts if d.kind in RULE_FLAGS for i in d.cards}
    taken: set[int] = set()
    cases = []
    order = sorted(range(len(reading.cards)), key=lambda i: -reading.cards[i].confidence)
    right_of: dict[int, bool] = {}
    for i in order:
        card = reading.cards[i]
        ids = Counter(boxes[owner[k]]["card_id"] for k in card.corners if owner[k] >= 0)
        card_id = ids.most_common(1)[0][0] if ids else None
        right_of[i] = card_id is not None and card_id not in taken and names[card_id] == card.card
        if card_id is not None:
            taken.add(card_id)
    for i, (card, row) in enumerate(zip(reading.cards, feature_rows(reading.corners, reading.cards))):
        runner_up = card.alternatives[0][1] if card.alternatives else 0.0
        cases.append(CardCase(card.confidence, runner_up, right_of[i], i in rule_flagged, card.uncertain, row))
    missed_ids = set(names) - taken
    cover, faint = pointed_at(doubts, [[b["bbox"] for b in boxes if b["card_id"] == cid] for cid in missed_ids])
    return PhotoCase(tuple(cases), cover, faint)


def pointed_at(doubts: Sequence[Doubt], missed: Sequence[Sequence[Sequence[float]]],
               ) -> tuple[tuple[float, ...], tuple[tuple[float, bool], ...]]:
    """What points at each missed card (its labelled boxes in ``missed``), and each place's aim.

    Per missed card, the surest doubt whose box holds one of its labelled boxes
    (:data:`ALWAYS` for a rule's doubt, a place's corner confidence, -1 for none); per
    place to look (:data:`~vision.doubts.PLACE_KINDS`), its confidence and whether it lies on a missed card.

    >>> faint = Doubt(FAINT_CARD, (), "a card may lie here", box=(0, 0, 10, 10), confidence=0.2)
    >>> pointed_at([faint], [[(2, 2, 8, 8)], [(50, 50, 60, 60)]])
    ((0.2, -1.0), ((0.2, True),))
    """
    places = [(d.box, ALWAYS if d.confidence is None else d.confidence) for d in doubts if d.box is not None]
    cover = tuple(max((level for place, level in places for box in card if _inside(box, place)), default=-1.0)
                  for card in missed)
    faint = tuple((d.confidence, any(_inside(box, d.box, 0.0) or _inside(d.box, box, 0.0)
                                     for card in missed for box in card))
                  for d in doubts if d.kind in PLACE_KINDS and d.box is not None and d.confidence is not None)
    return cover, faint


def real_case(reading: PhotoReading, sample: Sample, width: int, height: int) -> PhotoCase:
    """Match a reading of a real photo to its labelled corners (no card links: by name)."""
    truth = [(b.name, (b.x1 * width, b.y1 * height, b.x2 * width, b.y2 * height)) for b in sample.boxes]
    owner = match_boxes([c.box for c in reading.corners], [box for _, box in truth])
    flagged = {i for d in reading.doubts if d.kind in RULE_FLAGS for i in d.cards}
    cases = []
    for i, (card, row) in enumerate(zip(reading.cards, feature_rows(reading.corners, reading.cards))):
        named = [truth[owner[k]][0] for k in card.corners if owner[k] >= 0]
        runner_up = card.alternatives[0][1] if card.alternatives else 0.0
        cases.append(CardCase(card.confidence, runner_up, bool(named) and set(named) == {card.card}, i in flagged,
                              card.uncertain, row))
    missed = {name for name, _ in truth} - set(reading.card_names())
    cover, faint = pointed_at(reading.doubts, [[box for name, box in truth if name == card] for card in sorted(missed)])
    return PhotoCase(tuple(cases), cover, faint)


def read_real(spec: str, detector: Detector, conf: float = DEFAULT_CONF,
              reading: Calibration = NOTHING_FLAGGED) -> list[PhotoCase]:
    """Half of a real YOLO folder (``FOLDER:0`` or ``FOLDER:1``), read and matched by name."""
    folder, _, half = spec.rpartition(":")
    samples = list(iter_samples(folder))
    cut = len(samples) // 2
    chosen = samples[:cut] if half == "0" else samples[cut:]
    cases = []
    for sample in chosen:
        image = read_image(sample.image)
        read = read_photo(image, detector, conf, name=sample.image.name, calibration=reading)
        cases.append(real_case(read, sample, image.shape[1], image.shape[0]))
    return cases


def read_any(spec: str, detector: Detector, reading: Calibration = NOTHING_FLAGGED) -> list[PhotoCase]:
    """A split by its spec: a generated folder, or ``REAL_FOLDER:0`` / ``:1``."""
    if spec[-2:] in (":0", ":1"):
        return read_real(spec, detector, reading=reading)
    return read_split(Path(spec), detector, reading=reading)


def scene_rules(geometry: Mapping[str, Any]) -> RuleSet:
    """The rules a rendered table is read under: Nepali Marriage's defaults, with printed jokers
    turned on where the scene lays one (a family that plays without them takes them out of the decks).

    Read under the defaults, a rendered joker is left out with a doubt (this game has none) and
    would count as a missed card; ``tiplu report`` and the real photos admit jokers too.

    >>> scene_rules({"cards": [{"card": "5H"}]}).printed_jokers, scene_rules({"cards": [{"card": "JOKER"}]}).printed_jokers
    (0, 3)
    """
    jokers = any(card["card"] == str(JOKER) for card in geometry.get("cards", ()))
    return get_rules("nepali", {"printed_jokers": 3} if jokers else None)


def read_split(folder: Path, detector: Detector, conf: float = DEFAULT_CONF, limit: int | None = None, *,
               progress: Callable[[int, int], None] | None = None,
               reading: Calibration = NOTHING_FLAGGED) -> list[PhotoCase]:
    """Every photo of a generated folder, read once (with ``reading``) and matched to its labels.

    ``progress(done, photos)`` after each photo; without it, a line on stderr every 20 photos.
    """
    cases = []
    files = sorted((folder / "geometry").glob("*.json"))[:limit]
    for k, path in enumerate(files):
        geometry = json.loads(path.read_text())
        image = read_image(folder / geometry["image"])
        read = read_photo(image, detector, conf, name=path.stem, rules=scene_rules(geometry), calibration=reading)
        cases.append(photo_case(read, geometry))
        if progress is not None:
            progress(k + 1, len(files))
        elif (k + 1) % 20 == 0:
            print(f"{folder}: {k + 1}/{len(files)} photos", file=sys.stderr, flush=True)
    return cases


def scores(cases: Sequence[PhotoCase], calibration: Calibration) -> dict[str, float]:
    """Shares of wrong, right and all cards flagged, and of photos without a silent error."""
    wrong = right = wrong_flagged = right_flagged = 0
    clean_strict = clean_pointed = 0
    for photo in cases:
        silent = False
        for c in photo.cards:
            flagged = c.flagged(calibration)
            if c.right:
                right += 1
                right_flagged += flagged
            else:
                wrong += 1
                wrong_flagged += flagged
                silent |= not flagged
        clean_strict += not silent and photo.missed == 0
        clean_pointed += not silent and photo.missed == photo.pointed(calibration.faint_above)
    cards = max(wrong + right, 1)
    faint = [on_missed for p in cases for level, on_missed in p.faint if level >= calibration.faint_above]
    return {"photos": len(cases), "cards": wrong + right, "wrong": wrong,
            "missed": sum(p.missed for p in cases),
            "missed_pointed": round(sum(p.pointed(calibration.faint_above) for p in cases)
                                    / max(sum(p.missed for p in cases), 1), 4),
            "faint_doubts_per_photo": round(len(faint) / max(len(cases), 1), 2),
            "faint_doubts_on_a_missed_card": round(sum(faint) / max(len(faint), 1), 4),
            "wrong_flagged": round(wrong_flagged / max(wrong, 1), 4),
            "right_flagged": round(right_flagged / max(right, 1), 4),
            "all_flagged": round((wrong_flagged + right_flagged) / cards, 4),
            "no_silent_error": round(clean_strict / max(len(cases), 1), 4),
            "no_silent_error_pointed": round(clean_pointed / max(len(cases), 1), 4)}


def choose(cases: Sequence[PhotoCase], catch: float, reading: Calibration = NOTHING_FLAGGED) -> Calibration:
    """The thresholds that flag at least ``catch`` of the wrong cards with the fewest flagged.

    If no pair catches that many, the pair that catches the most (then flags the fewest).
    Faint corners are shown from the lowest level at which :data:`FAINT_PRECISION` of
    them lie on a missed card (never, if none does). The corners counted as cards are
    those the cases were read with (``reading``'s ``named_above`` and ``named_floor``).
    """
    best: tuple[bool, float, float] | None = None
    counted = counting_as(Calibration(), reading)
    chosen = counted
    for below in BELOW_GRID:
        for above in ABOVE_GRID:
            cal = replace(counted, uncertain_below=below, alternative_above=above)
            s = scores(cases, cal)
            enough = s["wrong_flagged"] >= catch
            key = (enough, -s["all_flagged"] if enough else s["wrong_flagged"], -s["all_flagged"])
            if best is None or key > best:
                best, chosen = key, cal
    return with_faint(chosen, cases)


def with_faint(chosen: Calibration, cases: Sequence[PhotoCase]) -> Calibration:
    """``chosen`` showing faint corners from the lowest level at which :data:`FAINT_PRECISION` of
    them lie on a missed card (never, if none does)."""
    for faint_above in FAINT_GRID:
        shown = [on_missed for p in cases for level, on_missed in p.faint if level >= faint_above]
        if shown and sum(shown) / len(shown) >= FAINT_PRECISION:
            return replace(chosen, faint_above=faint_above)
    return chosen


def choose_score(cases: Sequence[PhotoCase], catch: float, reading: Calibration = NOTHING_FLAGGED,
                 weights: DoubtScore | None = None) -> Calibration:
    """A doubt score (:mod:`vision.doubt_score`) fitted on the cases' cards (or ``weights``, kept),
    flagging from the probability that flags at least ``catch`` of the wrong cards with the
    fewest flagged; the confidence thresholds off. Faint corners as :func:`choose` shows them.

    Each form of :data:`~vision.doubt_score.FORMS` (linear, or with the features' products at
    several ridge penalties) is fitted and set so; the one that flags the fewest of the cases'
    cards is kept, the earlier on a tie. A card the reading or a rule marks anyway counts as
    flagged whatever its score.
    """
    cards = [c for p in cases for c in p.cards]
    counted = counting_as(Calibration(), reading)
    off = replace(counted, uncertain_below=0.0, alternative_above=1.0)
    if not cards:
        return with_faint(off, cases)
    wrong = np.array([not c.right for c in cards])
    already = np.array([c.flagged(off) for c in cards])
    rows = [c.features for c in cards]
    fitted = [weights] if weights else [fit_doubt_score(rows, wrong.tolist(), ridge, terms=terms)
                                        for terms, ridge in FORMS]
    best: tuple[float, DoubtScore] | None = None
    for score in fitted:
        probability = np.array([score.probability(row) for row in rows])
        flag_above = 1.0
        if wrong.any():
            for level in np.unique(probability)[::-1]:
                flag_above = float(level)
                if (already | (probability >= level))[wrong].mean() >= catch:
                    break
        # Stored to 6 places: rounded down, so the card at the chosen level stays flagged.
        flag_above = math.floor(flag_above * 1e6) / 1e6
        flagged = float((already | (probability >= flag_above)).mean())
        if best is None or flagged < best[0]:
            best = (flagged, score.at(flag_above))
    assert best is not None
    return with_faint(replace(off, score=best[1]), cases)


def split_name(spec: str) -> str:
    """A split's name in the report: the folder and its parent, and the half of a real folder.

    >>> split_name("data/real/val:0"), split_name("/tmp/data/calib")
    ('real/val:0', 'data/calib')
    """
    return "/".join(Path(spec).parts[-2:])


class CalibrationSplitError(ValueError):
    """A split given both to choose the thresholds and to test them."""


#: How ``tiplu calibrate`` chooses, the default first: a fitted doubt score (:func:`choose_score`),
#: or two thresholds (:func:`choose`).
METHODS = ("score", "thresholds")


def calibrate(calibration_splits: Sequence[str], test_splits: Sequence[str], *, model: str | None = None,
              catch: float = 0.9, named: tuple[float, float] | None = None, keep: bool = False,
              method: str = METHODS[0]) -> dict[str, Any]:
    """Choose the thresholds on ``calibration_splits`` and measure them on ``test_splits`` (never the same).

    ``named`` (``named_above``, ``named_floor``) sets which faint corners count as cards;
    by default the model's own. With ``keep`` the model's own thresholds are measured
    again instead of chosen (after a change to how the splits are judged, say). Returns
    the report that goes into ``model.json`` under ``"calibration"``. ``method`` is one of
    :data:`METHODS`.
    """
    if set(calibration_splits) & set(test_splits):
        raise CalibrationSplitError("a split cannot be both a calibration and a test split")
    detector = load_detector(model)
    reading = reading_calibration(detector, named)
    calib = {split_name(spec): read_any(spec, detector, reading) for spec in calibration_splits}
    test = {split_name(spec): read_any(spec, detector, reading) for spec in test_splits}
    if keep:
        kept = counting_as(detector.calibration, reading)
        before = read_model_json(model_folder(model)).get("calibration")
        chosen_by = before.get("method") if isinstance(before, dict) else None
        return calibration_report(calib, test, catch, reading=reading, kept=(kept, kept_method(chosen_by)))
    return calibration_report(calib, test, catch, reading=reading, method=method)


KEPT = "kept and measured again (not chosen on these splits)"


def kept_method(chosen_by: Any) -> str:
    """The ``method`` of thresholds kept (``--keep``): how they were once chosen, and that they were kept.

    >>> kept_method("flag >= 90% of wrong cards")
    'flag >= 90% of wrong cards; kept and measured again (not chosen on these splits)'
    >>> kept_method(kept_method("flag >= 90% of wrong cards")) == kept_method("flag >= 90% of wrong cards")
    True
    >>> kept_method(None)
    "the model's own thresholds, kept and measured again (not chosen on these splits)"
    """
    if not isinstance(chosen_by, str) or not chosen_by:
        return f"the model's own thresholds, {KEPT}"
    return chosen_by if chosen_by.endswith(KEPT) else f"{chosen_by}; {KEPT}"


def calibration_report(calib: Mapping[str, Sequence[PhotoCase]], test: Mapping[str, Sequence[PhotoCase]],
                       catch: float = 0.9, before: Calibration = Calibration(), *,
                       reading: Calibration = NOTHING_FLAGGED,
                       kept: tuple[Calibration, str] | None = None, method: str = METHODS[0],
                       weights: DoubtScore | None = None) -> dict[str, Any]:
    """Thresholds chosen (:func:`choose`) on the named calibration splits' cases, and their
    :func:`scores` on every split, the test splits' beside those of ``before`` (the
    defaults, or for an enrolled deck its base model's calibration): ``model.json``'s
    ``"calibration"``. ``reading`` is the calibration the cases were read with. ``kept``
    (thresholds and their method) measures those instead of choosing. ``method`` ``"score"``
    fits a doubt score (:func:`choose_score`; ``weights`` keeps those and chooses only where it
    flags), ``"thresholds"`` chooses the two thresholds (:func:`choose`).
    """
    faint = f"faint corners where >= {FAINT_PRECISION:.0%} of them lie on a missed card"
    if kept is not None:
        cal, how = kept
    elif method == "score":
        cal = choose_score([p for cases in calib.values() for p in cases], catch, reading, weights)
        fitted = "kept from the base model" if weights else "fitted on the calibration splits' cards"
        terms = " and their products" if cal.score is not None and cal.score.terms == "quadratic" else ""
        how = (f"doubt score (logistic regression over {len(FEATURES)} features{terms}) {fitted}, flagging from "
               f"the probability that flags >= {catch:.0%} of wrong cards there, fewest cards flagged; {faint}")
    else:
        cal = choose([p for cases in calib.values() for p in cases], catch, reading)
        how = f"flag >= {catch:.0%} of wrong cards on the calibration splits, fewest cards flagged; {faint}"
    score = {"doubt_score": cal.score.to_json()} if cal.score is not None else {}
    return {
        **{name: getattr(cal, name) for name in CALIBRATION_FIELDS}, **score, "method": how,
        "calibration_splits": {name: scores(cases, cal) for name, cases in calib.items()},
        "test_splits": {name: {**scores(cases, cal), "before": scores(cases, before)}
                        for name, cases in test.items()}}


def write_calibration(model_json: Path, report: dict[str, Any]) -> None:
    """Put ``report`` into a model folder's ``model.json`` under ``"calibration"``, with the fingerprint
    of the reader it was fitted on (:func:`vision.pipeline.reading_fingerprint`)."""
    folder = model_json.parent
    info = json.loads(model_json.read_text())
    info["calibration"] = dict(report) | {"fingerprint": reading_fingerprint(read_settings(folder), folder)}
    model_json.write_text(json.dumps(info, indent=2) + "\n")

