"""``tiplu calibrate --calibrate SPLIT... --test SPLIT... [--method score|thresholds] [--keep] [--write models/model.json]``: when a card is doubtful.

:func:`vision.training.measure.calibrate.calibrate` fits the doubt score (or, with ``--method
thresholds``, chooses the two confidence thresholds) on the calibration
splits and measures them on the test splits; this module reads the arguments, prints the
report as JSON and, with ``--write``, stores it in the model's ``model.json``.
"""

from __future__ import annotations

import argparse
import json

from vision.detector import ModelError
from vision.training.api import METHODS, CalibrationSplitError, DatasetError, calibrate, write_calibration
from web.cli._common import ExitCode, Streams, model_json_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--calibrate", nargs="+", required=True, metavar="SPLIT",
                        help="generated folders or REAL/val:0 to choose the thresholds on")
    parser.add_argument("--test", nargs="+", required=True, metavar="SPLIT", help="splits to measure them on")
    parser.add_argument("--model", default=None, help="model folder (default: the shipped models/)")
    parser.add_argument("--catch", type=float, default=0.9, help="share of wrong cards to flag (default 0.9)")
    parser.add_argument("--write", type=model_json_file, default=None,
                        help="model.json to write the calibration into")
    parser.add_argument("--method", choices=METHODS, default=METHODS[0],
                        help="score: fit a doubt score over what the reading shows of each card (default); "
                             "thresholds: choose a confidence and a runner-up threshold")
    parser.add_argument("--keep", action="store_true",
                        help="measure the model's own thresholds again instead of choosing new ones")
    parser.add_argument("--named", type=parse_named, default=None, metavar="P,FLOOR",
                        help="count a corner under the reading's confidence as a card when the classifier gives its "
                             "card at least P and its confidence is at least FLOOR, e.g. 0.9,0.1 "
                             "(default: the model's own; 1,1 counts none)")


def parse_named(text: str) -> tuple[float, float]:
    """``--named 0.9,0.1`` as ``(0.9, 0.1)``; anything else is a usage error that says what to give.

    >>> parse_named("0.9,0.1")
    (0.9, 0.1)
    """
    try:
        above, floor = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give two numbers from 0 to 1, e.g. 0.9,0.1") from None
    if not (0 <= above <= 1 and 0 <= floor <= 1):
        raise argparse.ArgumentTypeError(f"{text!r}: give two numbers from 0 to 1, e.g. 0.9,0.1")
    return above, floor


def run(args: argparse.Namespace, io: Streams) -> int:
    try:
        report = calibrate(args.calibrate, args.test, model=args.model, catch=args.catch, named=args.named,
                           keep=args.keep, method=args.method)
    except (CalibrationSplitError, DatasetError, ModelError, FileNotFoundError) as error:
        return io.fail("calibrate", error)
    io.stdout.write(json.dumps(report, indent=2) + "\n")
    if args.write:
        write_calibration(args.write, report)
    return ExitCode.OK
