"""``tiplu generate OUT --count N --seed S``: synthetic training photos with YOLO labels.

:func:`vision.training.data.generate.generate_dataset` does the work (its module describes the
layout written); ``python -m vision.training.data.generate`` runs this same command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from vision.training.api import CROP_CARD_PX, HOLDOUT_DECK, MIN_VISIBLE, SCENE_TYPES, SceneError, generate_dataset
from web.cli._common import ExitCode, Streams, parse_size



def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, help="output folder (created)")
    parser.add_argument("--count", type=int, default=100, help="number of images (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--start", type=int, default=0, help="first image index (to extend a set)")
    parser.add_argument("--size", type=parse_size, default=None,
                        help="image size WxH (default 1280x960, or 640x640 with --crop)")
    parser.add_argument("--crop", action="store_true",
                        help="close crops at inference scale (cards --card-px wide)")
    parser.add_argument("--card-px", type=float, nargs=2, metavar=("MIN", "MAX"),
                        default=CROP_CARD_PX, help="card width range in crop mode "
                        f"(default {CROP_CARD_PX[0]:g} {CROP_CARD_PX[1]:g})")
    parser.add_argument("--decks", choices=("train", "holdout", "drawn", "svg"), default="train",
                        help="designs: train = drawn + SVG decks except the holdout one")
    parser.add_argument("--holdout-deck", default=HOLDOUT_DECK,
                        help=f"SVG deck kept out of training (default {HOLDOUT_DECK})")
    parser.add_argument("--val-fraction", type=float, default=0.1)
    parser.add_argument("--scenes", nargs="+", choices=SCENE_TYPES, default=None,
                        help="scene types to draw from (default: a table mix)")
    parser.add_argument("--no-effects", action="store_true",
                        help="clean renders: no camera tilt, shadows, blur or noise")
    parser.add_argument("--min-visible", type=float, default=MIN_VISIBLE,
                        help=f"fraction of an index that must show to get a box ({MIN_VISIBLE})")
    parser.add_argument("--quality", type=int, default=None, help="fixed JPEG quality (default 55-95)")
    parser.add_argument("--randomise", action="store_true",
                        help="domain randomisation: any angle, strong tilt, hands, phones, coins, webcam and "
                             "low-light frames")
    parser.add_argument("--procedural", type=float, default=0.0, metavar="SHARE",
                        help="share of scenes drawn with fresh procedural designs, 0 to 1 (default 0)")
    parser.add_argument("--random-palettes", type=float, default=0.0, metavar="SHARE",
                        help="share of the procedural designs inked in a random palette: stock and inks of any "
                             "hue, suits in one, two or four colours (default 0)")
    parser.add_argument("--words", type=float, default=0.0, metavar="SHARE",
                        help="share of scenes with printed words on the table (laptop and phone brands, labels), "
                             "0 to 1 (default 0)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")


def run(args: argparse.Namespace, io: Streams) -> int:
    """Write the dataset, a progress line every 100 images, then a JSON summary."""
    size = args.size or ((640, 640) if args.crop else (1280, 960))
    try:
        summary = generate_dataset(args.out, args.count, args.seed, size=size, crop=args.crop,
                                   decks=args.decks, holdout=args.holdout_deck,
                                   val_fraction=args.val_fraction, scenes=args.scenes,
                                   effects=not args.no_effects, min_visible=args.min_visible,
                                   quality=args.quality, workers=args.workers, start=args.start,
                                   progress=io.stdout, card_px=tuple(args.card_px),
                                   randomise=args.randomise, procedural=args.procedural,
                                   random_palettes=args.random_palettes, words=args.words)
    except (SceneError, ValueError) as err:
        return io.fail("generate", err)
    io.stdout.write(json.dumps(summary.to_dict()) + "\n")
    return ExitCode.OK

