"""``tiplu report [MODEL] [--out DIR]``: one evaluation of a detector for the model card.

Real val upright and turned (30/90/135 degrees), the webcam val (``--webcam-val``),
whole-table scenes of the held-out designs, and the sample images: stage-1 localisation recall apart from stage-2
accuracy, card F1, exact multiset and verdict accuracy, as ``report.json`` and a
markdown table (:mod:`vision.training.measure.report` does the work). With ``--enrol`` it also
teaches the model each design of the enrolment test set from its suit photos on a cloth, as
``tiplu enrol`` would, and measures that design's tables before, after, and after "Improve from
corrections" (:mod:`vision.training.measure.enrol_report`: the enrolment rows of the model card).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import tempfile
import time
from pathlib import Path

from vision.detector import ModelError
from vision.pipeline import DEFAULT_CONF
from vision.training.api import (ANGLES, ENROL_CLOTH, FAR_SCENES, HELD_OUT_DESIGNS, LOCATE_CONF, MATCH_IOU,
                                 TABLECLOTHS, TEST_DESIGNS, WEBCAM_CORRECTIONS, WEBCAM_SCENES, DatasetError,
                                 EnrolError, ReportError, build_report, enrolled_rows, markdown_table,
                                 webcam_improved_rows, write_report_metrics)
from web.cli._common import ExitCode, Streams, model_json_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("model", type=Path, nargs="?", default=None, help="model folder (default: shipped models/)")
    parser.add_argument("--real-val", type=Path, default=Path("data/real/val"), help="real val YOLO folder")
    parser.add_argument("--webcam-val", type=Path, default=None, metavar="PATH",
                        help=f"the webcam row's real webcam frames (a YOLO folder from tiplu train import-photos; "
                             f"default {WEBCAM_VAL} where it exists)")
    parser.add_argument("--no-webcam", action="store_true", help="leave out the webcam row")
    parser.add_argument("--webcam-corrections", type=int, nargs="*", default=None, metavar="N",
                        help="also the curve of a family's camera learnt from its corrections: for each N the first "
                             "N webcam frames reviewed and tiplu improve run on them, then the frames after the "
                             f"largest N, real val and the tables read again (train extra; bare: "
                             f"{' '.join(map(str, WEBCAM_CORRECTIONS))}); models under OUT/improved")
    parser.add_argument("--angles", type=int, nargs="*", default=list(ANGLES),
                        help="turns of real val (degrees; none: skip real val)")
    parser.add_argument("--max-real", type=int, default=None, help="seeded sample of this many real val photos")
    parser.add_argument("--scenes", type=int, default=30, help="whole-table scenes per held-out design (0: none)")
    parser.add_argument("--far-scenes", type=int, default=FAR_SCENES,
                        help=f"far tables (4000x3000) per held-out design (default {FAR_SCENES}; 0: none)")
    parser.add_argument("--webcam-scenes", type=int, default=WEBCAM_SCENES,
                        help=f"rendered 640x480 webcam frames of a fan of 13 and of tunnela stacks per held-out design "
                             f"(default {WEBCAM_SCENES}; 0: none)")
    parser.add_argument("--designs", nargs="+", default=list(HELD_OUT_DESIGNS), help="held-out designs")
    parser.add_argument("--no-samples", action="store_true", help="skip sample_images/")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fresh-seeds", type=int, nargs="+", default=[], metavar="SEED",
                        help="also a row per design of --scenes tables from each of these seeds (tables no model "
                             "was chosen on; the model card uses 1 2 3)")
    parser.add_argument("--out", type=Path, default=None, help="folder for report.json and report.md")
    parser.add_argument("--write-metrics", type=model_json_file, default=None, metavar="MODEL_JSON",
                        help="also store the figures in this model.json under \"metrics\" (the shipped model's card)")
    parser.add_argument("--enrol", action="store_true",
                        help="also teach the model each design of --enrol-designs from its suit photos on "
                             "--enrol-cloth (tiplu enrol, train extra) and measure its tables before and after; "
                             "models under OUT/enrolled")
    parser.add_argument("--enrol-designs", nargs="+", default=list(TEST_DESIGNS), metavar="DESIGN",
                        help="with --enrol: the designs taught (default: the enrolment test set's)")
    parser.add_argument("--enrol-cloth", choices=sorted(TABLECLOTHS), default=ENROL_CLOTH,
                        help=f"with --enrol: the cloth the suit photos lie on (default {ENROL_CLOTH})")
    parser.add_argument("--enrol-corrections", type=int, default=5, metavar="N",
                        help="with --enrol: review N other tables of the design as a family does, improve from "
                             "the corrections and measure again (0: no such row)")
    parser.add_argument("--enrol-detector-epochs", type=int, default=0, metavar="N",
                        help="with --enrol: also fine-tune stage 1 for N epochs (as tiplu enrol --detector-epochs)")
    parser.add_argument("--enrol-table-scenes", type=int, default=None, metavar="N",
                        help="with --enrol: tables of the deck whose stage-1 boxes stage 2 also learns "
                             "(as tiplu enrol --table-scenes; default: enrol's)")


#: Where ``tiplu train import-photos PATH/cards-webcam-dev`` puts the webcam frames: the report's webcam row.
WEBCAM_VAL = Path("data/webcam/val")


def webcam_val(args: argparse.Namespace) -> Path | None:
    """The webcam row's folder: ``--webcam-val``, else :data:`WEBCAM_VAL` where it was imported."""
    if args.no_webcam:
        return None
    return args.webcam_val if args.webcam_val is not None else (WEBCAM_VAL if WEBCAM_VAL.is_dir() else None)


def run(args: argparse.Namespace, io: Streams) -> int:
    """Print the markdown table (and write the files with ``--out``); exit 2 on unusable input."""
    t0 = time.time()
    webcam = webcam_val(args)
    try:
        rows = build_report(args.model, args.real_val, angles=args.angles, max_real=args.max_real,
                            scenes=args.scenes, designs=args.designs, samples=not args.no_samples,
                            seed=args.seed, progress=True, far_scenes=args.far_scenes,
                            fresh_seeds=args.fresh_seeds, webcam_val=webcam, webcam_scenes=args.webcam_scenes)
        if args.enrol:
            with contextlib.ExitStack() as stack:
                work = (args.out / "enrolled" if args.out is not None
                        else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tiplu-enrol-"))))
                rows += enrolled_rows(args.model, args.enrol_designs, work, scenes=args.scenes, seed=args.seed,
                                      detector_epochs=args.enrol_detector_epochs, tables=args.enrol_table_scenes,
                                      cloth=args.enrol_cloth, corrections=args.enrol_corrections, progress=True)
        if args.webcam_corrections is not None:
            if webcam is None:
                raise ReportError(f"--webcam-corrections needs the webcam frames: import them into {WEBCAM_VAL} "
                                  f"(tiplu train import-photos PATH/cards-webcam-dev) or give --webcam-val")
            with contextlib.ExitStack() as stack:
                work = (args.out / "improved" if args.out is not None
                        else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="tiplu-improve-"))))
                rows += webcam_improved_rows(args.model, webcam, args.webcam_corrections or WEBCAM_CORRECTIONS, work,
                                             real_val=args.real_val if args.angles else None, designs=args.designs,
                                             scenes=args.scenes, seed=args.seed, progress=True)
    except (ReportError, DatasetError, ModelError, EnrolError, FileNotFoundError) as exc:
        return io.fail("report", exc)
    table = markdown_table(rows)
    io.stdout.write(table)
    if args.write_metrics is not None:
        write_report_metrics(args.write_metrics, rows)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        meta = {"model": str(args.model or "models"), "angles": args.angles, "max_real": args.max_real,
                "scenes": args.scenes, "far_scenes": args.far_scenes, "webcam_scenes": args.webcam_scenes, "designs": args.designs, "seed": args.seed,
                "fresh_seeds": args.fresh_seeds,
                "webcam_val": None if webcam is None else str(webcam),
                "enrol": args.enrol, "enrol_designs": args.enrol_designs, "enrol_cloth": args.enrol_cloth,
                "enrol_corrections": args.enrol_corrections,
                "enrol_detector_epochs": args.enrol_detector_epochs,
                "enrol_table_scenes": args.enrol_table_scenes, "webcam_corrections": args.webcam_corrections,
                "locate_conf": LOCATE_CONF, "match_iou": MATCH_IOU, "conf": DEFAULT_CONF,
                "seconds": round(time.time() - t0, 1)}
        (args.out / "report.json").write_text(json.dumps({"meta": meta, "sets": [r.to_dict() for r in rows]},
                                                         indent=1) + "\n")
        (args.out / "report.md").write_text(table)
    return ExitCode.OK
