"""``tiplu train NETWORK|STEP ...``: train each network by its one recipe, and prepare its data.

    tiplu train corners data/mix.yaml --epochs 2           stage 1 (the corner YOLO), from models/ or the resume point
    tiplu train corners data/mix.yaml --device cuda --set batch=64     the same recipe on a GPU
    tiplu train names data/real data/synth_dr --epochs 2   stage 2 (the crop classifier)
    tiplu train orientation data/synth_dr3 data/table_dr --check data/calib --out runs/corner_orientation.onnx
    tiplu train loop --corners-data D.yaml --names-data data/real data/synth_dr --rounds 100   a background campaign
    tiplu train extend corners --epochs 20 --lr-max 0.002 --lr-min 0.0001 --reason WHY   a new phase
    tiplu train export --out runs/candidate                a model folder from the resume point
    tiplu train status | init [--from models]
    tiplu train import-real PATH/cards-real-dev data/real  the real photos, split burst-wise
    tiplu train import-photos SRC data/webcam/val --name N --url U --licence CC0-1.0 --author A --camera webcam
    tiplu train turn-real | decks | pack | tile | stage1-crops | average-classifier | ensemble
    tiplu train quantize models runs/int8 --real data/real/train --rendered 8   int8 copies of the networks

Each network's run goes on from the resume point in ``--resume-dir`` (``runs/train/resume/``, git-ignored)
where there is one, else starts from ``--from`` (default ``models/``: the shipped ONNX turned back into
weights; a checkpoint; or ``scratch``). ``--set KEY=VALUE`` changes a setting of the recipe
(:mod:`vision.training.fit.settings`, each explained in ``tiplu train NETWORK --help``). The work is done
in :mod:`vision.training` through :mod:`vision.training.api` (the networks need the ``train`` extra).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, TextIO

import cv2

from vision.detector import MODELS_DIR
from vision.training.api import (NETWORKS, PHOTO_CAMERAS, PHOTO_LABELS, PHOTO_LICENCES, QUANTIZABLE, REAL, RESUME_DIR,
                                 STATE_KEYS, TRAIN, DatasetError, DeckError, OrientationError, PhotoSource,
                                 QuantizeError, TrainError, average_classifiers, campaign, contact_sheet,
                                 ensemble_model, export_resume_point, extend_plan, hard_crops, import_photos,
                                 import_real, init_from_onnx, installed_svg_decks, load_hard_crops, load_svg_faces,
                                 pack_yolo, quantize_model, read_state, render_deck, save_hard_crops, setting_help,
                                 shared_source, svg_deck, tile_yolo, train_corners, train_names, train_orientation,
                                 turned_copies, with_overrides)
from web.cli._common import ExitCode, Streams, parse_size

#: What each network's recipe trains, for ``tiplu train --help``.
NETWORK_HELP = {"corners": "stage 1: the YOLO that boxes every corner index (corners.onnx)",
                "names": "stage 2: the crop classifier that names each corner (corner_classifier.onnx)",
                "orientation": "which way each corner index faces (corner_orientation.onnx)"}


def settings_epilog(network: str) -> str:
    """Every setting of ``network``'s recipe with its value and its explanation (``--set KEY=VALUE``)."""
    settings = TRAIN.of(network)
    helps = setting_help(type(settings))
    lines = [f"settings (--set KEY=VALUE; defaults are tiplu train's):"]
    for f in dataclasses.fields(settings):
        lines.append(f"  {f.name}={getattr(settings, f.name)}: {helps.get(f.name, '')}")
    return "\n".join(lines)


def add_network(sub: Any, network: str) -> argparse.ArgumentParser:
    """A network's subcommand with the options every recipe takes."""
    parser = sub.add_parser(network, help=NETWORK_HELP[network], epilog=settings_epilog(network),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=None,
                        help="epochs of this run (default: the setting; corners and names: to the phase's end)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, 0 (the first GPU), mps ...")
    parser.add_argument("--from", dest="start", default=str(MODELS_DIR), metavar="START",
                        help="where a network without a resume point starts: a model folder (default the shipped "
                             "models/, its ONNX turned back into weights), a checkpoint (.pt, .onnx), or scratch")
    parser.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="change a setting of the recipe (listed below)")
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="stage", required=True, metavar="NETWORK|STEP")
    corners = add_network(sub, "corners")
    corners.add_argument("data", type=Path, help="data.yaml of a YOLO folder (or a mix of them)")
    corners.add_argument("--real", type=Path, default=REAL,
                         help="photos that calibrate batch norms when starting from ONNX (default data/real; "
                              "else the data's own)")
    names = add_network(sub, "names")
    names.add_argument("data", type=Path, nargs="*", default=[], help="YOLO folders (their train/ split if present)")
    orient = add_network(sub, "orientation")
    orient.add_argument("data", type=Path, nargs="+", help="rendered scene folders with geometry/*.json")
    orient.add_argument("--out", type=Path, required=True, help="the ONNX file to write (corner_orientation.onnx)")
    orient.add_argument("--check", type=Path, nargs="*", default=[], help="held-out scene folders measured each epoch")
    orient.add_argument("--seed", type=int, default=0)
    loop = sub.add_parser("loop", help="a campaign: one epoch of corners and one of names in turn, for hours")
    loop.add_argument("--corners-data", type=Path, default=None, help="data.yaml for stage 1")
    loop.add_argument("--names-data", type=Path, nargs="*", default=[], help="YOLO folders for stage 2")
    loop.add_argument("--rounds", type=int, default=100)
    loop.add_argument("--device", default="cpu")
    loop.add_argument("--from", dest="start", default=str(MODELS_DIR), metavar="START",
                      help="where a network without a resume point starts (default models/)")
    loop.add_argument("--real", type=Path, default=REAL)
    for network in NETWORKS[:2]:
        loop.add_argument(f"--{network}-set", dest=f"{network}_settings", action="append", default=[],
                          metavar="KEY=VALUE", help=f"change a setting of the {network} recipe")
    for p in (names, loop):
        p.add_argument("--extra-crops", type=Path, nargs="+", default=[], metavar="FILE",
                       help="crops of stage 1's own boxes (tiplu train stage1-crops) added to every names epoch")
    init = sub.add_parser("init", help="start a campaign (or restart a network of it) from a model folder's ONNX")
    init.add_argument("--from", dest="models", type=Path, default=MODELS_DIR,
                      help="model folder whose ONNX files the campaign starts from (default: the shipped models/)")
    init.add_argument("--networks", nargs="+", choices=NETWORKS[:2], default=list(NETWORKS[:2]),
                      help="restart only these networks")
    init.add_argument("--reason", default=None, help="why a network restarts (kept in state.json)")
    init.add_argument("--real", type=Path, default=REAL)
    ext = sub.add_parser("extend", help="a new cosine phase for a network whose phase has run out (warm restart)")
    ext.add_argument("network", choices=NETWORKS[:2])
    ext.add_argument("--epochs", type=int, required=True, help="epochs in the new phase")
    ext.add_argument("--lr-max", type=float, required=True, help="learning rate at the phase's start")
    ext.add_argument("--lr-min", type=float, required=True, help="learning rate at its end")
    ext.add_argument("--reason", required=True, help="why (kept in state.json)")
    ext.add_argument("--crop", type=parse_size, metavar="WxH",
                     help="names only: the crop size stage 2 learns at from this phase on")
    exp = sub.add_parser("export", help="a model folder from the resume point (the rest from --base)")
    exp.add_argument("--out", type=Path, required=True)
    exp.add_argument("--base", type=Path, default=MODELS_DIR,
                     help="the folder a network the campaign did not train is taken from (default models/)")
    status = sub.add_parser("status", help="print the resume point's state.json")
    for p in (corners, names, loop, init, ext, exp, status):
        p.add_argument("--resume-dir", type=Path, default=RESUME_DIR,
                       help=f"the campaign's resume folder (default {RESUME_DIR})")
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
    quant = sub.add_parser("quantize", help="a model folder whose networks are int8 (calibrated on real and rendered photos)")
    quant.add_argument("model", type=Path, help="the model folder with the float networks (models, runs/cand)")
    quant.add_argument("out", type=Path, help="the model folder to write")
    quant.add_argument("--real", type=Path, nargs="*", default=[Path("data/real/train")], help="real YOLO folders")
    quant.add_argument("--rendered", type=int, default=8, help="tables rendered in the drawn designs")
    quant.add_argument("--networks", nargs="+", choices=QUANTIZABLE, default=list(QUANTIZABLE))
    quant.add_argument("--seed", type=int, default=0)
    decks = sub.add_parser("decks", help="render the installed SVG decks' faces and check their corners")
    decks.add_argument("names", nargs="*", help="decks to render (default: all installed)")
    decks.add_argument("--force", action="store_true", help="re-render even if cached")
    decks.add_argument("--sheets", type=Path, help="write a contact sheet PNG per deck here")
    decks.add_argument("--cache", type=Path, default=None)


def network_settings(args: argparse.Namespace, network: str, pairs: list[str]) -> Any:
    """The recipe's settings of ``network``: ``tiplu train``'s, with ``--set`` pairs and ``--epochs`` put in."""
    settings = with_overrides(TRAIN.of(network), pairs)
    epochs = getattr(args, "epochs", None)
    return settings if epochs is None else dataclasses.replace(settings, epochs=epochs)


def campaign_summary(folder: Path) -> dict[str, Any]:
    """Each network's epochs done and its phase's end, from the resume point."""
    state = read_state(folder)
    return {network: {k: state[key][k] for k in ("epochs_done", "plan_epochs")}
            for network, key in STATE_KEYS.items() if key in state}


def run(args: argparse.Namespace, io: Streams) -> int:
    """Run one network's recipe or one step; exit 2 with a message when an input or a setting is wrong."""
    out = io.stdout
    say = lambda line: print(line, file=out, flush=True)  # noqa: E731
    try:
        if args.stage == "corners":
            settings = network_settings(args, "corners", args.settings)
            train_corners(args.data, settings, start=args.start, resume_dir=args.resume_dir, device=args.device,
                          real=args.real)
            io.emit(campaign_summary(args.resume_dir))
        elif args.stage == "names":
            settings = network_settings(args, "names", args.settings)
            extra = load_hard_crops(args.extra_crops) if args.extra_crops else None
            train_names(args.data, settings, start=args.start, resume_dir=args.resume_dir, device=args.device,
                        extra=extra, say=say)
            io.emit(campaign_summary(args.resume_dir))
        elif args.stage == "orientation":
            settings = network_settings(args, "orientation", args.settings)
            if settings.epochs < 1 or settings.copies < 2 or args.out.suffix != ".onnx":
                raise TrainError("--epochs must be 1 or more, copies 2 or more and --out a file ending in .onnx")
            wrote = train_orientation(args.data, args.out, settings, check=args.check, start=args.start,
                                      device=args.device, seed=args.seed, say=say)
            print(f"wrote {wrote}", file=out)
        elif args.stage == "loop":
            settings = dataclasses.replace(TRAIN, corners=with_overrides(TRAIN.corners, args.corners_settings),
                                           names=with_overrides(TRAIN.names, args.names_settings))
            campaign(args.corners_data, args.names_data, args.rounds, settings=settings, folder=args.resume_dir,
                     start=args.start, device=args.device, extra_crops=args.extra_crops, real=args.real)
            io.emit(campaign_summary(args.resume_dir))
        elif args.stage == "init":
            init_from_onnx(args.models, args.real, args.resume_dir, [STATE_KEYS[n] for n in args.networks],
                           args.reason)
            io.emit(campaign_summary(args.resume_dir))
        elif args.stage == "extend":
            extend_plan(STATE_KEYS[args.network], args.epochs, args.lr_max, args.lr_min, args.reason,
                        args.resume_dir, args.crop)
            io.emit(campaign_summary(args.resume_dir))
        elif args.stage == "export":
            for p in export_resume_point(args.out, args.resume_dir, args.base):
                print(f"wrote {p}", file=out)
        elif args.stage == "status":
            print(json.dumps(read_state(args.resume_dir), indent=1), file=out)
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
        elif args.stage == "quantize":
            done = quantize_model(args.model, args.out, real=args.real, rendered=args.rendered, networks=args.networks,
                                  seed=args.seed, say=lambda line: print(line, file=out, flush=True))
            print(json.dumps(done["networks"]), file=out)
        elif args.stage == "decks":
            render_decks(args.names, args.cache, force=args.force, sheets=args.sheets, out=out)
    except (TrainError, DatasetError, OrientationError, QuantizeError, FileNotFoundError) as exc:
        return io.fail(f"train {args.stage}", exc)
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
