"""``tiplu enrol --out DIR SPADES HEARTS DIAMONDS CLUBS``: teach tiplu a family's deck.

Each photo shows one suit's 13 cards face up, A, 2, ... 10, J, Q, K in reading order
(rows from the top, each left to right), not touching; ``--jokers`` adds a photo of the
deck's printed jokers. The crop classifier is fine-tuned from the base model (needs the
``train`` extra) and DIR becomes a model folder that ``tiplu detect --model DIR`` and the
app (``TIPLU_MODEL=DIR``) read; doubt is then recalibrated for the deck on scenes of its cards
(``--calibration-scenes``, 0 keeps the base model's). A progress line per step goes to stderr;
:func:`vision.training.fit.enrol.enrol` does the work.

    tiplu enrol --out decks/grandma --jokers jokers.jpg spades.jpg hearts.jpg diamonds.jpg clubs.jpg
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vision.detector import MODELS_DIR
import cv2

from scorer import Message, N_
from vision.enrolment import CALIBRATION_SCENES, SUIT_NAMES, CardsNotFound, EnrolError, annotated
from vision.training.api import COPIES, EPOCHS, SCENES, TABLE_SCENES, enrol
from web.cli._common import ExitCode, Streams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for suit in SUIT_NAMES.values():
        parser.add_argument(suit, type=Path, metavar=suit.upper(), help=f"the photo of the 13 {suit}, A to K")
    parser.add_argument("--out", type=Path, required=True, help="model folder to write (created)")
    parser.add_argument("--jokers", type=Path, default=None, metavar="PHOTO", help="a photo of the deck's jokers")
    parser.add_argument("--name", default=None, help="the design's name (default: the folder's name)")
    parser.add_argument("--base", type=Path, default=MODELS_DIR, help="model folder to start from (default models/)")
    parser.add_argument("--epochs", type=int, default=EPOCHS, help=f"fine-tuning epochs (default {EPOCHS})")
    parser.add_argument("--copies", type=int, default=COPIES,
                        help=f"augmented crops per corner index (default {COPIES})")
    parser.add_argument("--detector-epochs", type=int, default=0, metavar="N",
                        help="also fine-tune stage 1 (the corner finder) for N epochs on scenes of the enrolled cards, "
                             "for a design whose corners it misses (about 30 s an epoch on 2 cores; default 0)")
    parser.add_argument("--scenes", type=int, default=SCENES, help=f"scenes for --detector-epochs (default {SCENES})")
    parser.add_argument("--calibration-scenes", type=int, default=CALIBRATION_SCENES, metavar="N",
                        help="recalibrate doubt for the deck on N whole-table scenes of it, half to choose the "
                             f"thresholds and half to test them (about 0.7 s a scene on 2 cores; default "
                             f"{CALIBRATION_SCENES}; 0 keeps the base model's calibration)")
    parser.add_argument("--table-scenes", type=int, default=TABLE_SCENES, metavar="N",
                        help="also teach the card namer the corners as the corner finder boxes them on N whole-table "
                             f"scenes of the deck (about 1 s a scene on 2 cores; default {TABLE_SCENES}: none; "
                             "measured in models/HISTORY.md)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def save_failed_photo(error: CardsNotFound, out: Path) -> Path:
    """Save the photo ``error`` refused, with the cards found outlined, beside the model folder ``out`` (which
    is never started): ``<out>-failed-<photo>.jpg``; its path."""
    photo = Path(error.photo)
    saved = out.parent / f"{out.name}-failed-{photo.stem}.jpg"
    image = cv2.imread(str(photo))
    if image is not None:
        saved.parent.mkdir(parents=True, exist_ok=True)
        cv2.imwrite(str(saved), annotated(image, error.search), [cv2.IMWRITE_JPEG_QUALITY, 85])
    return saved


def run(args: argparse.Namespace, io: Streams) -> int:
    """Learn the deck; the summary (cards found per photo, time taken) on stdout."""
    def say(line: str) -> None:
        io.stderr.write(f"tiplu enrol: {line}\n")
        io.stderr.flush()

    photos = [getattr(args, suit) for suit in SUIT_NAMES.values()]
    try:
        done = enrol(photos, args.out, jokers=args.jokers, base=args.base, design=args.name, epochs=args.epochs,
                     copies=args.copies, seed=args.seed, detector_epochs=args.detector_epochs,
                     scenes=args.scenes, calibration_scenes=args.calibration_scenes,
                     table_scenes=args.table_scenes, say=say)
    except CardsNotFound as error:
        raise EnrolError(Message(N_("%(why)s The photo with the cards found outlined: %(path)s"), why=error.message,
                                 path=save_failed_photo(error, args.out))) from None
    io.show(args.json, done.to_dict(),
            [f"{p.photo}: {len(p.cards)} {p.shows}" for p in done.photos]
            + [f"learnt '{done.design}' from {done.crops} crops in {done.epochs} epochs, {done.seconds:.0f} s",
               (f"doubt recalibrated on {done.calibration_scenes} scenes of the deck" if done.calibration_scenes
                else "doubt: the base model's calibration kept"),
               "seconds by step: " + ", ".join(f"{part} {seconds:.0f}" for part, seconds in done.timings.items()),
               f"model folder: {done.folder} (tiplu detect --model {done.folder}, or TIPLU_MODEL={done.folder})"])
    return ExitCode.OK
