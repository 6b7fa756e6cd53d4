"""The model card's enrolment rows: a held-out design taught as a family would, its tables before and after.

Per design (:data:`vision.training.enrol_photos.TEST_DESIGNS` by default), ``tiplu report --enrol``:

1. renders the design's four suit photos on every cloth of the enrolment test set
   (:mod:`vision.training.enrol_photos`) and counts those whose 13 cards
   :func:`vision.enrolment.find_cards` finds in the right order (the row's "suit photos found");
2. reads the design's whole tables (:func:`vision.training.report.table_scenes`, the report's seed)
   with the base model: the row "before";
3. enrols the design from its four suit photos on one cloth (``cloth``, the striped one by default,
   where issue #42's photos failed), with :func:`vision.training.enrol.enrol`'s defaults, and reads the
   same tables: the row "enrolled";
4. with ``corrections``, reviews that many other tables of the design (:data:`REVIEW_SEED`) read by the
   enrolled model as a family does (:func:`review_corrections`: each card read wrong changed to the
   right one, each doubtful card confirmed, the crops the page keeps), runs "Improve from corrections"
   (:func:`vision.training.enrol.improve`, the suit photos learnt again) and reads the tables a third
   time: the row "corrected".

>>> list(row_names("nicu-white", "stripes", 44, 44, 201.0, 12, 5))
['before', 'enrolled', 'corrected']
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vision.detector import CardDetector, Detector, crop_corner
from vision.enrolment import KEPT_CROP, CardsNotFound, find_cards
from vision.pipeline import DEFAULT_CONF, read_photo
from vision.training.calibrate import match_boxes
from vision.training.report import SetScore, Truth, measure, table_scenes

#: The seed of the tables a family reviews before "Improve from corrections" (never the report's 0,
#: its fresh 1-3 or the calibration's 1001 and 2002).
REVIEW_SEED = 500
#: The cloth the enrolment rows learn from: issue #42's failing photos lay on a striped cloth.
ENROL_CLOTH = "stripes"


def review_corrections(detector: Detector, image: np.ndarray, truth: Truth,
                       conf: float = DEFAULT_CONF) -> list[tuple[np.ndarray, str]]:
    """What a family keeps when it reviews ``image`` as the page asks: each card read under a wrong
    name is changed to its right one, each card marked doubtful and right is confirmed; each kept
    card gives the crops of its corners as the page cuts them (:data:`vision.enrolment.KEPT_CROP`),
    with the right name. A missed card is tapped in by hand and gives no crop; a card on no
    labelled corner (a false alarm) is removed and gives none either.
    """
    reading = read_photo(image, detector, conf)
    owner = match_boxes([c.box for c in reading.corners], truth.boxes.tolist())
    kept: list[tuple[np.ndarray, str]] = []
    for card in reading.cards:
        names = Counter(truth.names[owner[k]] for k in card.corners if owner[k] >= 0)
        if not names:
            continue
        right = names.most_common(1)[0][0]
        if right != card.card or card.uncertain:
            kept += [(crop_corner(image, reading.corners[k].box, size=KEPT_CROP), right) for k in card.corners]
    return kept


def found_suit_photos(design: str, seed: int = 0, cloths: Sequence[str] | None = None) -> tuple[int, int]:
    """How many of ``design``'s suit photos (every suit on each of ``cloths``, by default every cloth of the
    test set, ``seed``) :func:`vision.enrolment.find_cards` finds all 13 cards of in the right order, and how
    many there are."""
    from vision.training.enrol_photos import TABLECLOTHS, design_photo, found_right, test_set

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
    from vision.training.enrol import CALIBRATION_SCENES, COPIES, EPOCHS, TABLE_SCENES, enrol, improve
    from vision.training.enrol_photos import write_design_photos
    from vision.training.report import held_out_design

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
