"""``tiplu train STAGE ...``: prepare data, train both detector stages, export ONNX.

    tiplu train import-real PATH/cards-real-dev data/real   the real photos, split burst-wise
    tiplu train import-photos SRC data/webcam/val --name N --url U --licence CC0-1.0 --author A --camera webcam
                                                            licensed photos of another source, with their credit
    tiplu train turn-real data/real data/real_turned --copies 2   real train photos at any angle
    tiplu train decks [--sheets DIR]                          render the SVG decks' faces
    tiplu train pack data/real data/gpu/real --max-side 320   shrunk WebP copies to carry to a GPU machine
    tiplu train stage1-crops models data/real --out runs/hard.npz --turns 1   crops of stage 1's own boxes
    tiplu train detector data/real/data.yaml --epochs 60 --imgsz 320
    tiplu train classifier data/real data/synth --epochs 30
    tiplu train export --detector runs/tiplu/detector/weights/best.pt \\
        --classifier runs/tiplu/classifier/best.pt --out models
    tiplu train average-classifier OUT.onnx A/corner_classifier.onnx B/corner_classifier.onnx   a model soup
    tiplu train ensemble OUT --base models A/corner_classifier.onnx B/corner_classifier.onnx   stage 2 of two networks
    tiplu train orientation data/synth_dr3 data/table_dr --check data/calib --out models/corner_orientation.onnx

The work is done in :mod:`vision.training` (detector, classifier and export need the
``train`` extra); ``python -m vision.training.fit.names`` runs this same command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TextIO

import cv2

from vision.training.api import (DEFAULT_DETECTOR_YAML, PHOTO_CAMERAS, PHOTO_LABELS, PHOTO_LICENCES, DatasetError,
                                 DeckError, OrientationError, PhotoSource, TrainError, average_classifiers,
                                 contact_sheet, ensemble_model, export_models, hard_crops, import_photos,
                                 import_real, installed_svg_decks, load_svg_faces, pack_yolo, render_deck,
                                 save_hard_crops, shared_source, svg_deck, tile_yolo, train_classifier, train_detector,
                                 train_orientation, turned_copies)
from web.cli._common import ExitCode, Streams, parse_size


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="stage", required=True, metavar="STAGE")
    det = sub.add_parser("detector", help="stage 1: class-agnostic corner YOLO (Ultralytics)")
    det.add_argument("data", type=Path, nargs="?", default=Path("data/real/data.yaml"), help="data.yaml")
    det.add_argument("--model", type=Path, default=DEFAULT_DETECTOR_YAML, help="architecture yaml")
    det.add_argument("--weights", type=Path, default=None, help="fine-tune from this checkpoint")
    det.add_argument("--resume", type=Path, default=None, help="continue an interrupted run (last.pt)")
    det.add_argument("--epochs", type=int, default=60)
    det.add_argument("--imgsz", type=int, default=320)
    det.add_argument("--batch", type=int, default=16)
    det.add_argument("--device", default="cpu", help="cpu, 0 (first GPU), ...")
    det.add_argument("--workers", type=int, default=2)
    det.add_argument("--fraction", type=float, default=1.0, help="use this share of the train images")
    det.add_argument("--name", default="detector")
    det.add_argument("--multi-class", action="store_true",
                     help="single-stage variant: learn the 53 card classes instead of one 'corner' class")
    det.add_argument("--project", type=Path, default=Path("runs/tiplu"))
    cls = sub.add_parser("classifier", help="stage 2: crop classifier (53 cards + background)")
    cls.add_argument("data", type=Path, nargs="+", help="YOLO folders (their train/ split if present)")
    cls.add_argument("--epochs", type=int, default=20)
    cls.add_argument("--copies", type=int, default=6, help="augmented crops per labelled corner")
    cls.add_argument("--max-images", type=int, default=None, help="sample at most this many images")
    cls.add_argument("--batch", type=int, default=128)
    cls.add_argument("--lr", type=float, default=2e-3)
    cls.add_argument("--weights", type=Path, default=None, help="fine-tune from this checkpoint")
    cls.add_argument("--resume", type=Path, default=None, help="continue from last.pt")
    cls.add_argument("--decks", default=None, choices=("train", "drawn", "svg"),
                     help="also train on crops of rendered card faces (tiplu train decks; holdout deck excluded)")
    cls.add_argument("--face-copies", type=int, default=6, help="augmented crops per face corner")
    cls.add_argument("--device", default="cpu", help="cpu or cuda")
    cls.add_argument("--out", type=Path, default=Path("runs/tiplu/classifier"))
    exp = sub.add_parser("export", help="write the ONNX models, classes.txt and model.json")
    exp.add_argument("--detector", type=Path, required=True, help="stage-1 best.pt")
    exp.add_argument("--classifier", type=Path, default=None, help="stage-2 best.pt")
    exp.add_argument("--imgsz", type=int, default=320, help="smallest inference size, recorded in model.json")
    exp.add_argument("--max-imgsz", type=int, default=None,
                     help="largest inference size for big photos (default three times --imgsz)")
    exp.add_argument("--out", type=Path, default=Path("models"))
    imp = sub.add_parser("import-real", help="copy real photos into train/val with a burst-wise split")
    imp.add_argument("src", type=Path)
    imp.add_argument("dst", type=Path, nargs="?", default=Path("data/real"))
    imp.add_argument("--val-fraction", type=float, default=0.2)
    imp.add_argument("--seed", type=int, default=20240630)
    photos = sub.add_parser("import-photos", help="a public source's licensed photos as corner-index labels, "
                                                  "credited in DST/manifest.csv (the webcam val, data/real2)")
    photos.add_argument("src", type=Path, help="the source's YOLO folder (images/, labels/, classes.txt or data.yaml)")
    photos.add_argument("dst", type=Path, nargs="?", default=Path("data/webcam/val"))
    photos.add_argument("--name", help="a short name of the source (prefixes the file names); the credit options "
                                       "may be left out for the project's shared cards-real-dev and cards-webcam-dev")
    photos.add_argument("--url", help="where the source is published")
    photos.add_argument("--licence", help=f"SPDX id, one of {', '.join(PHOTO_LICENCES)}")
    photos.add_argument("--author", help="who made the photos, as the licence asks to credit")
    photos.add_argument("--camera", choices=PHOTO_CAMERAS)
    photos.add_argument("--labels", default="corners", choices=PHOTO_LABELS,
                        help="corners: the source boxes corner indices; cards: it outlines whole cards, whose "
                             "two indices are found and boxed")
    turn = sub.add_parser("turn-real", help="write the real train photos again, turned to random angles")
    turn.add_argument("src", type=Path, nargs="?", default=Path("data/real"), help="folder from import-real")
    turn.add_argument("dst", type=Path, nargs="?", default=Path("data/real_turned"))
    turn.add_argument("--copies", type=int, default=2, help="turned copies of each photo")
    turn.add_argument("--seed", type=int, default=0)
    pack = sub.add_parser("pack", help="a YOLO folder's images shrunk and saved as WebP (to carry to a GPU machine)")
    pack.add_argument("src", type=Path, help="YOLO folder (images/ and labels/, or train/ and val/)")
    pack.add_argument("dst", type=Path)
    pack.add_argument("--max-side", type=int, default=320, help="long side in px (stage 1 trains at 320)")
    pack.add_argument("--quality", type=int, default=80, help="WebP quality, 1-100")
    pack.add_argument("--limit", type=int, default=None, help="only the first N images")
    tiles = sub.add_parser("tile", help="a YOLO folder's photos scaled and cut into tiles (tables at the big pass's "
                                        "scale for a 320-px stage-1 phase)")
    tiles.add_argument("src", type=Path, help="YOLO folder (images/ and labels/, or train/ and val/)")
    tiles.add_argument("dst", type=Path)
    tiles.add_argument("--scale", type=float, default=0.75,
                       help="scale before cutting (0.75: a 1280x960 table as the big pass reads it)")
    tiles.add_argument("--tile", type=int, default=320, help="tile side in px (stage 1 trains at 320)")
    tiles.add_argument("--overlap", type=int, default=64, help="least overlap of neighbouring tiles, px")
    tiles.add_argument("--min-visible", type=float, default=0.6,
                       help="share of a box that must lie in a tile for it to keep its label")
    hard = sub.add_parser("stage1-crops", help="classifier crops of a model's own stage-1 boxes (hard negatives too)")
    hard.add_argument("model", type=Path, help="model folder whose stage 1 finds the boxes (models, runs/candidate)")
    hard.add_argument("data", type=Path, nargs="+", help="YOLO folders (their train/ split if present)")
    hard.add_argument("--out", type=Path, required=True, help="the .npz file to write")
    hard.add_argument("--turns", type=int, default=0, help="also read each photo this many times turned at random")
    hard.add_argument("--seed", type=int, default=0)
    hard.add_argument("--max-images", type=int, default=None, help="a seeded sample of this many photos")
    hard.add_argument("--crop", type=parse_size, default=None, metavar="WxH",
                      help="cut the crops at this size (default: the size the model's classifier takes)")
    avg = sub.add_parser("average-classifier", help="average exported classifiers of one run (a model soup)")
    avg.add_argument("out", type=Path, help="the ONNX file to write")
    avg.add_argument("classifiers", type=Path, nargs="+", help="corner_classifier.onnx files of one network")
    ens = sub.add_parser("ensemble", help="a model folder whose stage 2 averages several exported classifiers")
    ens.add_argument("out", type=Path, help="the model folder to write (new)")
    ens.add_argument("classifiers", type=Path, nargs="+", help="corner_classifier.onnx files, the first one first")
    ens.add_argument("--base", type=Path, default=Path("models"),
                     help="the folder whose detector and settings to use (default models/)")
    orient = sub.add_parser("orientation", help="the network that says which way a corner index faces (pairing)")
    orient.add_argument("data", type=Path, nargs="+", help="rendered scene folders with geometry/*.json")
    orient.add_argument("--out", type=Path, required=True, help="the ONNX file to write (corner_orientation.onnx)")
    orient.add_argument("--check", type=Path, nargs="*", default=[], help="held-out scene folders measured each epoch")
    orient.add_argument("--epochs", type=int, default=6)
    orient.add_argument("--copies", type=int, default=2, help="crops per labelled index, each turned at random")
    orient.add_argument("--seed", type=int, default=0)
    decks = sub.add_parser("decks", help="render the installed SVG decks' faces and check their corners")
    decks.add_argument("names", nargs="*", help="decks to render (default: all installed)")
    decks.add_argument("--force", action="store_true", help="re-render even if cached")
    decks.add_argument("--sheets", type=Path, help="write a contact sheet PNG per deck here")
    decks.add_argument("--cache", type=Path, default=None)


def run(args: argparse.Namespace, io: Streams) -> int:
    """Run one stage; exit 2 with a message when inputs are missing."""
    out = io.stdout
    try:
        if args.stage == "detector":
            best = train_detector(args.data, epochs=args.epochs, imgsz=args.imgsz, batch=args.batch,
                                  model=args.model, weights=args.weights, resume=args.resume,
                                  project=args.project, name=args.name, device=args.device,
                                  workers=args.workers, fraction=args.fraction,
                                  single_cls=not args.multi_class)
            print(f"detector weights: {best}", file=out)
        elif args.stage == "classifier":
            best = train_classifier(args.data, epochs=args.epochs, copies=args.copies, out=args.out,
                                    resume=args.resume, weights=args.weights, batch=args.batch,
                                    lr=args.lr, max_images=args.max_images, decks=args.decks,
                                    face_copies=args.face_copies, device=args.device)
            print(f"classifier weights: {best}", file=out)
        elif args.stage == "import-real":
            print(import_real(args.src, args.dst, args.val_fraction, args.seed), file=out)
        elif args.stage == "import-photos":
            given = (args.name, args.url, args.licence, args.author, args.camera)
            source = shared_source(args.src) if not any(given) else None
            if source is None and not all(given):
                raise DatasetError("import-photos: give the source's --name, --url, --licence, --author and "
                                   "--camera (every photo keeps its credit)")
            source = source or PhotoSource(*given)
            print(import_photos(args.src, args.dst, source, args.labels), file=out)
        elif args.stage == "turn-real":
            print(turned_copies(args.src, args.dst, args.copies, args.seed), file=out)
        elif args.stage == "pack":
            print(f"{pack_yolo(args.src, args.dst, args.max_side, args.quality, args.limit)} images in {args.dst}",
                  file=out)
        elif args.stage == "tile":
            print(f"{tile_yolo(args.src, args.dst, args.scale, args.tile, args.overlap, args.min_visible)} tiles in "
                  f"{args.dst}", file=out)
        elif args.stage == "stage1-crops":
            if args.turns < 0 or (args.max_images is not None and args.max_images < 1):
                raise TrainError("--turns must be 0 or more and --max-images 1 or more")
            if args.out.suffix != ".npz" or args.out.is_dir():
                raise TrainError(f"--out {args.out}: give a file name ending in .npz, e.g. runs/stage1_crops.npz")
            found = hard_crops(args.model, args.data, turns=args.turns, seed=args.seed, max_images=args.max_images,
                               crop_size=args.crop)
            print(json.dumps({"out": str(save_hard_crops(found, args.out))} | found.summary), file=out)
        elif args.stage == "average-classifier":
            print(f"wrote {average_classifiers(args.classifiers, args.out)}", file=out)
        elif args.stage == "ensemble":
            for p in ensemble_model(args.base, args.classifiers, args.out):
                print(f"wrote {p}", file=out)
        elif args.stage == "orientation":
            if args.epochs < 1 or args.copies < 2 or args.out.suffix != ".onnx":
                raise TrainError("--epochs must be 1 or more, --copies 2 or more and --out a file ending in .onnx")
            wrote = train_orientation(args.data, args.out, check=args.check, epochs=args.epochs, copies=args.copies,
                                      seed=args.seed, say=lambda line: print(line, file=out, flush=True))
            print(f"wrote {wrote}", file=out)
        elif args.stage == "decks":
            render_decks(args.names, args.cache, force=args.force, sheets=args.sheets, out=out)
        else:
            for p in export_models(args.detector, args.classifier, args.out, args.imgsz,
                                   max_imgsz=args.max_imgsz):
                print(f"wrote {p} ({p.stat().st_size / 1e6:.2f} MB)", file=out)
    except (TrainError, DatasetError, OrientationError, FileNotFoundError) as exc:
        io.stderr.write(f"error: {exc}\n")
        return ExitCode.BAD_INPUT
    return ExitCode.OK


def render_decks(names: list[str], cache: Path | None, *, force: bool, sheets: Path | None, out: TextIO) -> None:
    """Render each deck's faces (default: every installed SVG deck), say how many read well."""
    for deck in [svg_deck(n) for n in names] if names else installed_svg_decks():
        try:
            folder = render_deck(deck, cache, force=force)
        except DeckError as err:
            print(f"{deck.name}: FAILED {err}", file=out)
            continue
        meta = json.loads((folder / "faces.json").read_text())
        bad = {c: v["error"] for c, v in meta.items() if "error" in v}
        print(f"{deck.name}: {len(meta) - len(bad)} faces, {len(bad)} failed {sorted(bad)}", file=out)
        if sheets:
            sheets.mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(sheets / f"{deck.name}.png"), contact_sheet(load_svg_faces(deck, cache).values()))
