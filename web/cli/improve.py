"""``tiplu improve MODEL --reviewed DIR --out NEW``: what the Decks page's "Improve from corrections" runs,
from labelled photos.

Each photo of DIR (a YOLO folder: ``images/``, ``labels/`` per corner index, ``classes.txt``) is read by
MODEL and reviewed as a family reviews it on the page (:mod:`vision.training.data.review`): a card read on a
labelled corner takes the label's name, a card read where no label lies is deleted, a labelled card never
read is added by name. The crops of the cards changed or confirmed are what the page keeps; MODEL's card
namer is fine-tuned on them (:func:`vision.training.fit.enrol.improve`, the page's own call) and NEW becomes a
model folder that ``tiplu detect --model NEW`` and the app (``TIPLU_MODEL=NEW``) read. MODEL may be the
shipped ``models/`` or an enrolled deck (``--suit-photos`` then learns its suit photos again, as the page
does). A progress line per step goes to stderr, as ``tiplu enrol`` shows it.

    tiplu improve models --reviewed data/webcam/first-evening --out decks/webcam
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vision.detector import MODELS_DIR, CardDetector, ModelError
from vision.training.api import COPIES, EPOCHS, REHEARSAL_COPIES, DatasetError, improve, review_folder
from web.cli._common import ExitCode, Streams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, nargs="?", default=MODELS_DIR,
                        help="model folder to improve (default: the shipped models/)")
    parser.add_argument("--reviewed", type=Path, required=True, metavar="DIR",
                        help="labelled photos read with MODEL and reviewed from their labels (a YOLO folder)")
    parser.add_argument("--out", type=Path, required=True, help="model folder to write (created; never MODEL)")
    parser.add_argument("--limit", type=int, default=None, metavar="N", help="review only the first N photos")
    parser.add_argument("--suit-photos", type=Path, nargs=4, default=(), metavar="PHOTO",
                        help="an enrolled deck's four suit photos (spades hearts diamonds clubs), learnt again")
    parser.add_argument("--jokers", type=Path, default=None, metavar="PHOTO", help="with --suit-photos: its jokers")
    parser.add_argument("--epochs", type=int, default=EPOCHS, help=f"fine-tuning epochs (default {EPOCHS})")
    parser.add_argument("--copies", type=int, default=COPIES,
                        help=f"with --suit-photos: augmented crops per corner index (default {COPIES})")
    parser.add_argument("--rehearsal-copies", type=int, default=REHEARSAL_COPIES, metavar="N",
                        help=f"without --suit-photos: crops per corner of the drawn decks learnt again beside the "
                             f"corrections, so the model keeps the cards it knows (default {REHEARSAL_COPIES}; 0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def run(args: argparse.Namespace, io: Streams) -> int:
    """Review, improve, and print what was learnt; exit 2 with what to fix on unusable input."""
    def say(line: str) -> None:
        io.stderr.write(f"tiplu improve: {line}\n")
        io.stderr.flush()

    if args.out.resolve() == Path(args.model).resolve():
        return io.fail("improve", f"{args.out}: that is the model being improved; write the new version to a new "
                                  f"folder")
    try:
        review = review_folder(CardDetector(args.model), args.reviewed, limit=args.limit, say=say)
    except (ModelError, DatasetError) as error:
        return io.fail("improve", error)
    say(review.summary())
    if not review.crops:
        return io.fail("improve", f"{review.photos} photos reviewed and every card was read right and sure: "
                                  f"nothing to learn from")
    done = improve(args.model, args.out, list(review.crops), list(review.cards), suit_photos=args.suit_photos,
                   jokers=args.jokers, epochs=args.epochs, copies=args.copies, seed=args.seed,
                   rehearsal_copies=args.rehearsal_copies, say=say)
    io.show(args.json, done.to_dict() | {"review": {"photos": review.photos, "changed": review.changed,
                                                    "confirmed": review.confirmed, "deleted": review.deleted,
                                                    "added": review.added}},
            [review.summary(),
             f"learnt from {done.crops} crops ({done.corrected_crops} corrected, {done.rehearsal_crops} of the drawn "
             f"decks again) in {done.epochs} epochs, {done.seconds:.0f} s",
             f"model folder: {done.folder} (tiplu detect --model {done.folder}, or TIPLU_MODEL={done.folder})"])
    return ExitCode.OK
