"""The model card's enrolment rows: a held-out design taught as a family would, its tables before and after.

Per design (:data:`vision.training.data.enrol_photos.TEST_DESIGNS` by default), ``tiplu report --enrol``:

1. renders the design's four suit photos on every cloth of the enrolment test set
   (:mod:`vision.training.data.enrol_photos`) and counts those whose 13 cards
   :func:`vision.enrolment.find_cards` finds in the right order (the row's "suit photos found");
2. reads the design's whole tables (:func:`vision.training.measure.report.table_scenes`, the report's seed)
   with the base model: the row "before";
3. enrols the design from its four suit photos on one cloth (``cloth``, the striped one by default,
   where issue #42's photos failed), with :func:`vision.training.fit.enrol.enrol`'s defaults, and reads the
   same tables: the row "enrolled";
4. with ``corrections``, reviews that many other tables of the design (:data:`REVIEW_SEED`) read by the
   enrolled model as a family does (:func:`review_corrections`: each card read wrong changed to the
   right one, each doubtful card confirmed, the crops the page keeps), runs "Improve from corrections"
   (:func:`vision.training.fit.enrol.improve`, the suit photos learnt again) and reads the tables a third
   time: the row "corrected".

>>> list(row_names("nicu-white", "stripes", 44, 44, 201.0, 12, 5))
['before', 'enrolled', 'corrected']
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.detector import CardDetector, Detector
from vision.enrolment import CardsNotFound, find_cards
from vision.pipeline import DEFAULT_CONF
from vision.training.data.review import review_photo
from vision.training.measure.report import ReportError, SetScore, Truth, measure, table_scenes

#: The seed of the tables a family reviews before "Improve from corrections" (never the report's 0,
#: its fresh 1-3 or the calibration's 1001 and 2002).
REVIEW_SEED = 500
#: The cloth the enrolment rows learn from: issue #42's failing photos lay on a striped cloth.
ENROL_CLOTH = "stripes"


def review_corrections(detector: Detector, image: np.ndarray, truth: Truth,
                       conf: float = DEFAULT_CONF) -> list[tuple[np.ndarray, str]]:
    """The crops a family keeps when it reviews ``image`` as the page asks (:func:`vision.training.data.review.review_photo`),
    each with its right name."""
    done = review_photo(detector, image, truth.boxes, truth.names, conf)
    return list(zip(done.crops, done.cards))


def found_suit_photos(design: str, seed: int = 0, cloths: Sequence[str] | None = None) -> tuple[int, int]:
    """How many of ``design``'s suit photos (every suit on each of ``cloths``, by default every cloth of the
    test set, ``seed``) :func:`vision.enrolment.find_cards` finds all 13 cards of in the right order, and how
    many there are."""
    from vision.training.data.enrol_photos import TABLECLOTHS, design_photo, found_right, test_set

    found = total = 0
    for _, cloth, _, suit in test_set([design], tuple(TABLECLOTHS) if cloths is None else cloths, [seed]):
        photo = design_photo(design, cloth, seed, suit)
        total += 1
        try:
            found += found_right([c.outline for c in find_cards(photo.image, suit, photo.name)], photo)
        except CardsNotFound:
            pass
    return found, total


def row_names(design: str, cloth: str, found: int, photos: int, seconds: float, kept: int,
              reviewed: int) -> dict[str, str]:
    """The three rows' names in the table, by key (what each row says of how it was made)."""
    return {"before": f"enrol {design}: before ({found}/{photos} suit photos found)",
            "enrolled": f"enrol {design}: enrolled on {cloth} in {seconds:.0f} s",
            "corrected": f"enrol {design}: + {kept} crops corrected on {reviewed} reviewed tables"}


def enrolled_rows(model: Path | None, designs: Sequence[str], work: Path, *, scenes: int = 30, seed: int = 0,
                  epochs: int | None = None, copies: int | None = None, detector_epochs: int = 0,
                  calibration_scenes: int | None = None, tables: int | None = None, cloth: str = ENROL_CLOTH,
                  corrections: int = 0, cloths: Sequence[str] | None = None,
                  progress: bool = False) -> list[SetScore]:
    """Teach ``model`` each design from its suit photos on ``cloth`` and measure its tables before, after and
    (with ``corrections`` reviewed tables) after "Improve from corrections"; see the module doc.

    The enrolled folders are ``work/DESIGN/model`` and ``work/DESIGN/corrected``, the suit photos
    ``work/DESIGN/photos`` (with a jokers photo composed on felt where the design has a joker, as
    the report's tables hold printed jokers). ``cloths`` limits the count of suit photos found.
    """
    from vision.detector import MODELS_DIR
    from vision.training.fit.enrol import CALIBRATION_SCENES, COPIES, EPOCHS, TABLE_SCENES, enrol, improve
    from vision.training.data.enrol_photos import write_design_photos
    from vision.training.measure.report import held_out_design

    base = Path(model or MODELS_DIR)
    learning: dict[str, Any] = {
        "epochs": epochs or EPOCHS, "copies": copies or COPIES, "seed": seed,
        "calibration_scenes": CALIBRATION_SCENES if calibration_scenes is None else calibration_scenes}
    rows = []
    for design in designs:
        say: Callable[[str], None] | None = (
            (lambda line, d=design: print(f"  {d}: {line}", file=sys.stderr, flush=True)) if progress else None)
        found, photos = found_suit_photos(design, seed, cloths)
        paths = write_design_photos(design, cloth, seed, work / design / "photos",
                                    held_out_design(design).faces.get("JOKER"))
        jokers = paths[4] if len(paths) > 4 else None
        done = enrol(paths[:4], work / design / "model", jokers=jokers, base=base, design=design, say=say,
                     detector_epochs=detector_epochs, table_scenes=TABLE_SCENES if tables is None else tables,
                     **learning)
        enrolled = CardDetector(Path(done.folder))
        kept: list[tuple[np.ndarray, str]] = []
        for image, truth in table_scenes(design, corrections, REVIEW_SEED + seed):
            kept += review_corrections(enrolled, image, truth)
        names = row_names(design, cloth, found, photos, done.seconds, len(kept), corrections)
        tables_read = list(table_scenes(design, scenes, seed))  # rendered once, read by each model
        rows.append(measure(CardDetector(base), names["before"], tables_read, progress))
        rows.append(measure(enrolled, names["enrolled"], tables_read, progress))
        if corrections:
            if kept:
                better = improve(Path(done.folder), work / design / "corrected", [c for c, _ in kept],
                                 [n for _, n in kept], suit_photos=paths[:4], jokers=jokers, say=say,
                                 **learning)
                rows.append(measure(CardDetector(Path(better.folder)), names["corrected"], tables_read, progress))
            elif say is not None:
                say(f"{corrections} reviewed tables: nothing to correct")
    return rows


#: How many webcam frames a family corrects in the curve of :func:`webcam_improved_rows` (``--webcam-corrections``).
WEBCAM_CORRECTIONS = (5, 10)


def webcam_improved_rows(model: Path | None, webcam_val: Path, counts: Sequence[int], work: Path, *,
                         real_val: Path | None = None, designs: Sequence[str] = (), scenes: int = 0, seed: int = 0,
                         progress: bool = False) -> list[SetScore]:
    """A family's camera learnt from its corrections: for each N of ``counts``, the first N frames of
    ``webcam_val`` (in name order) reviewed as a family does and "Improve from corrections" run on them
    (``tiplu improve``, :func:`vision.training.data.review.review_folder` then :func:`vision.training.fit.enrol.improve`),
    then the frames after the largest N read by the improved model, beside real val and ``designs``' tables.

    The rows before it (the base model on the same frames) come first, so that each N reads against it.
    The improved folders are ``work/webcam-N``.
    """
    from vision.detector import MODELS_DIR
    from vision.training.fit.enrol import improve
    from vision.training.measure.report import real_photos
    from vision.training.data.review import review_folder

    base = Path(model or MODELS_DIR)
    say: Callable[[str], None] | None = (
        (lambda line: print(f"  webcam corrections: {line}", file=sys.stderr, flush=True)) if progress else None)
    frames = real_photos(webcam_val, distinct=True)
    held = max(counts, default=0)
    if len(frames) <= held:
        raise ReportError(f"{webcam_val}: {len(frames)} frames; the curve needs more than {held}")
    rest = frames[held:]
    real = real_photos(real_val) if real_val is not None else []
    tables = {design: list(table_scenes(design, scenes, seed)) for design in designs if scenes}
    detector = CardDetector(base)
    rows = [measure(detector, f"webcam val, frames after the first {held}", rest, progress)]
    for n in counts:
        review = review_folder(detector, webcam_val, limit=n)
        if say is not None:
            say(f"{n} frames: {review.summary()}")
        if not review.crops:
            continue
        done = improve(base, work / f"webcam-{n}", list(review.crops), list(review.cards), say=say, seed=seed)
        improved = CardDetector(Path(done.folder))
        label = f"improved from {n} webcam frames ({len(review.crops)} crops)"
        rows.append(measure(improved, f"webcam val after the first {held}, {label}", rest, progress))
        if real:
            rows.append(measure(improved, f"real val 0°, {label}", real, progress))
        for design, shots in tables.items():
            rows.append(measure(improved, f"table {design}, {label}", shots, progress))
    return rows
