"""``tiplu accumulate STEP``: CPU training that goes on where the last run stopped.

    tiplu accumulate init [--from models]          a resume point from the shipped ONNX models
    tiplu accumulate loop --detector-data D.yaml --classifier-data data/real data/synth
        [--extra-crops runs/stage1_crops.npz]      also crops of stage 1's own boxes (tiplu train stage1-crops)
    tiplu accumulate extend detector --epochs 20 --lr-max 0.002 --lr-min 0.0001 --reason WHY
                                                   a new cosine phase once a stage's plan has run out
    tiplu accumulate extend classifier --epochs 8 --lr-max 0.0005 --lr-min 0.00002 --crop 48x72 --reason WHY
                                                   stage 2 learns at bigger crops from here on
    tiplu accumulate export --out runs/candidate   ONNX files from the resume point
    tiplu accumulate status

The resume point (fp16 weights and ``state.json``) lives in ``runs/accumulate/resume/``
(git-ignored; ``--resume-dir`` picks another folder) and is never committed. Where there is
none, the detector, classifier and loop steps start from the ONNX files in ``models/``, as
``init`` does; :mod:`vision.training.fit.resume` does the work (needs the ``train`` extra).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from vision.detector import MODELS_DIR
from vision.training.api import (REAL, RESUME_DIR, STAGES, TrainError, campaign, continue_classifier,
                                 continue_detector, export_resume_point, extend_plan, init_from_onnx, read_state)
from web.cli._common import ExitCode, Streams, parse_size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Steps: init, detector, classifier, loop, extend, export, status."""
    sub = parser.add_subparsers(dest="step", required=True)
    init = sub.add_parser("init", help="start a campaign from an ONNX model folder")
    init.add_argument("--from", dest="models", type=Path, default=MODELS_DIR,
                      help="model folder whose ONNX files the campaign starts from (default: the shipped models/)")
    init.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES), help="restart only these stages")
    init.add_argument("--reason", default=None, help="why a stage restarts (kept in state.json)")
    det = sub.add_parser("detector", help="train stage 1 for more epochs from the resume point")
    det.add_argument("data", type=Path, help="data.yaml")
    det.add_argument("--epochs", type=int, default=1)
    det.add_argument("--imgsz", type=int, default=320)
    det.add_argument("--batch", type=int, default=16)
    det.add_argument("--workers", type=int, default=2)
    det.add_argument("--fraction", type=float, default=1.0)
    det.add_argument("--device", default="cpu")
    det.add_argument("--snapshot-every", type=int, default=0, metavar="K",
                     help="also keep every K-th epoch's weights in runs/accumulate/snapshots/ (0: none)")
    cls = sub.add_parser("classifier", help="train stage 2 for more epochs from the resume point")
    cls.add_argument("data", type=Path, nargs="+", help="YOLO folders (their train/ split if present)")
    cls.add_argument("--epochs", type=int, default=1)
    cls.add_argument("--decks", default="train", choices=("train", "drawn", "svg", "none"))
    cls.add_argument("--copies", type=int, default=2)
    cls.add_argument("--face-copies", type=int, default=4)
    cls.add_argument("--turn-any", type=float, default=0.5, help="share of face crops turned 0-360 degrees")
    cls.add_argument("--max-images", type=int, default=None)
    cls.add_argument("--device", default="cpu", help="cpu or cuda")
    loop = sub.add_parser("loop", help="alternate detector and classifier epochs (background campaign)")
    loop.add_argument("--detector-data", type=Path, default=None, help="data.yaml for stage 1")
    loop.add_argument("--classifier-data", type=Path, nargs="*", default=[], help="YOLO folders for stage 2")
    loop.add_argument("--rounds", type=int, default=100)
    loop.add_argument("--decks", default="train", choices=("train", "drawn", "svg", "none"))
    loop.add_argument("--max-images", type=int, default=1500, help="images per classifier epoch's crops")
    loop.add_argument("--imgsz", type=int, default=320)
    for p in (cls, loop):
        p.add_argument("--extra-crops", type=Path, nargs="+", default=[], metavar="FILE",
                       help="crops of stage 1's own boxes (tiplu train stage1-crops) added to every classifier epoch")
        p.add_argument("--extra-copies", type=int, default=1, help="augmented copies of each extra crop per epoch")
    ext = sub.add_parser("extend", help="a new cosine phase for a stage whose plan has run out (warm restart)")
    ext.add_argument("stage", choices=STAGES)
    ext.add_argument("--epochs", type=int, required=True, help="epochs in the new phase")
    ext.add_argument("--lr-max", type=float, required=True, help="learning rate at the phase's start")
    ext.add_argument("--lr-min", type=float, required=True, help="learning rate at its end")
    ext.add_argument("--reason", required=True, help="why (kept in state.json)")
    ext.add_argument("--crop", type=parse_size, metavar="WxH",
                     help="classifier only: the crop size stage 2 learns at from this phase on "
                          "(default: the campaign's own, 32x48 if it never set one)")
    exp = sub.add_parser("export", help="write ONNX files from the resume point")
    exp.add_argument("--out", type=Path, required=True)
    status = sub.add_parser("status", help="print state.json")
    for p in (init, det, cls, loop):
        p.add_argument("--real", type=Path, default=REAL,
                       help="photos to calibrate batch norms when a campaign starts from ONNX (default data/real)")
    for p in (init, det, cls, loop, ext, exp, status):
        p.add_argument("--resume-dir", type=Path, default=RESUME_DIR,
                       help=f"the campaign's resume folder (default {RESUME_DIR})")
    parser.set_defaults(resume_dir=RESUME_DIR)


def run(args: argparse.Namespace, io: Streams) -> int:
    """Run one step; exit 2 with a message when an input is missing."""
    try:
        if getattr(args, "extra_copies", 1) < 1:
            raise TrainError(f"--extra-copies must be 1 or more, not {args.extra_copies}")
        if args.step == "init":
            init_from_onnx(args.models, args.real, args.resume_dir, args.stages, args.reason)
        elif args.step == "detector":
            continue_detector(args.data, args.epochs, imgsz=args.imgsz, batch=args.batch, workers=args.workers,
                              device=args.device, folder=args.resume_dir, fraction=args.fraction,
                              snapshot_every=args.snapshot_every, real=args.real)
        elif args.step == "classifier":
            continue_classifier(args.data, args.epochs, decks=None if args.decks == "none" else args.decks,
                                copies=args.copies, face_copies=args.face_copies, turn_any=args.turn_any,
                                max_images=args.max_images, folder=args.resume_dir, device=args.device,
                                extra_crops=args.extra_crops, extra_copies=args.extra_copies, real=args.real)
        elif args.step == "loop":
            campaign(args.detector_data, args.classifier_data, args.rounds, folder=args.resume_dir,
                     decks=None if args.decks == "none" else args.decks, max_images=args.max_images,
                     imgsz=args.imgsz, extra_crops=args.extra_crops, extra_copies=args.extra_copies,
                     real=args.real)
        elif args.step == "extend":
            extend_plan(args.stage, args.epochs, args.lr_max, args.lr_min, args.reason, args.resume_dir,
                        args.crop)
        elif args.step == "export":
            for p in export_resume_point(args.out, args.resume_dir):
                io.stdout.write(f"wrote {p}\n")
        state = read_state(args.resume_dir)
        io.emit({s: {k: state[s][k] for k in ("epochs_done", "plan_epochs")} for s in STAGES})
    except (TrainError, FileNotFoundError) as exc:
        return io.fail("accumulate", exc)
    return ExitCode.OK
