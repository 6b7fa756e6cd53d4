"""``tiplu detect PHOTO... [--conf X]``: the cards in each photo, one JSON object per line.

The shape is :meth:`vision.pipeline.PhotoReading.to_dict`, the same as ``POST /api/detect``:
each card with its ``alternatives``, and the ``doubts`` the rules find. A photo that cannot
be read is reported on stderr and the command exits 2 after the others.
"""

from __future__ import annotations

import argparse

from vision.detector import Detector, ModelError, load_detector
from vision.images import ImageError, read_image
from vision.pipeline import DEFAULT_CONF, read_photo
from vision.settings import PROFILES
from web.cli._common import ExitCode, Streams


def add_detector_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``tiplu detect`` and ``tiplu score``."""
    parser.add_argument("--conf", type=float, default=DEFAULT_CONF,
                        help=f"lowest corner confidence to keep (default {DEFAULT_CONF})")
    parser.add_argument("--uncertain-below", type=float, default=None,
                        help="cards under this confidence are marked uncertain (default: the model's calibration)")
    parser.add_argument("--model", default=None,
                        help="model folder or detector .onnx (default: $TIPLU_MODEL or the shipped models/)")
    parser.add_argument("--imgsz", type=int, default=None, help="detector input size (default: the model's)")
    parser.add_argument("--profile", choices=sorted(PROFILES), default=None,
                        help="the stage-1 passes to read with: full, or fast for a small machine "
                             "(default: $TIPLU_PROFILE, else the model's own)")


def detector_from(args: argparse.Namespace) -> Detector:
    """The detector ``--model`` and ``--imgsz`` ask for, once ``--conf`` is checked too."""
    if not 0.0 <= args.conf <= 1.0:
        raise ModelError(f"--conf {args.conf}: give a confidence between 0 and 1, e.g. 0.25")
    if args.uncertain_below is not None and not 0.0 <= args.uncertain_below <= 1.0:
        raise ModelError(f"--uncertain-below {args.uncertain_below}: give a confidence between 0 and 1, e.g. 0.5")
    if args.imgsz is not None and not 32 <= args.imgsz <= 4096:
        raise ModelError(f"--imgsz {args.imgsz}: give an input size between 32 and 4096, e.g. 640")
    return load_detector(args.model, imgsz=args.imgsz, profile=args.profile)


def photo_error(path: str, error: ImageError) -> str:
    """The image error, naming the photo once."""
    return str(error) if str(error).startswith(str(path)) else f"{path}: {error}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Find the cards in photos; prints one JSON object per photo, one per line."
    parser.add_argument("photos", nargs="+", metavar="PHOTO", help="JPEG, PNG or WebP photos")
    parser.add_argument("--json", action="store_true", help="JSON lines (the only output format; kept for scripts)")
    add_detector_arguments(parser)


def run(args: argparse.Namespace, io: Streams) -> int:
    """Exit 0 when every photo was read, 2 when any photo or option was bad."""
    try:
        detector = detector_from(args)
    except ModelError as error:
        return io.fail("detect", error)
    status = ExitCode.OK
    for path in args.photos:
        try:
            image = read_image(path)
        except ImageError as error:
            status = io.fail("detect", photo_error(path, error))
            continue
        io.emit(read_photo(image, detector, args.conf, name=path, uncertain_below=args.uncertain_below).to_dict())
        io.stdout.flush()
    return status
