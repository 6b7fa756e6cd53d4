"""``tiplu eval-model DATASET [--json] [--imgsz N]``: measure a detector on a YOLO folder.

:func:`vision.training.measure.evaluate.evaluate` does the work (its module explains the metrics);
``python -m vision.training.measure.evaluate`` runs this same command.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scorer import CLASS_NAMES
from vision.detector import ModelError
from vision.training.api import DatasetError, evaluate
from web.cli._common import ExitCode, Streams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", type=Path, help="YOLO folder (images/, labels/, classes.txt or data.yaml)")
    parser.add_argument("--model", type=Path, default=None, help="model folder or corners.onnx (default: shipped)")
    parser.add_argument("--imgsz", type=int, default=None, help="detector input size (default: model.json)")
    parser.add_argument("--json", action="store_true", help="print only the JSON summary")


def run(args: argparse.Namespace, io: Streams) -> int:
    """Print the metrics; exit 2 when the folder or the model is unusable."""
    try:
        res = evaluate(args.dataset, args.model, args.imgsz, progress=not args.json)
    except (DatasetError, ModelError, FileNotFoundError) as exc:
        io.stderr.write(f"error: {exc}\n")
        return ExitCode.BAD_INPUT
    if args.json:
        io.stdout.write(json.dumps(res.summary()) + "\n")
        return ExitCode.OK
    s = res.summary()
    out = io.stdout
    print(f"images {s['images']}  mAP50 {s['map50']:.3f}  mAP50-95 {s['map50_95']:.3f}  "
          f"{res.seconds_per_image * 1000:.0f} ms/image", file=out)
    print(f"distinct cards per photo: precision {s['card_precision']:.3f}  recall {s['card_recall']:.3f}  "
          f"F1 {s['card_f1']:.3f}", file=out)
    print("per-class recall (conf 0.25, IoU 0.5) / AP50:", file=out)
    names = [n for n in CLASS_NAMES if n in res.class_recall]
    for i in range(0, len(names), 6):
        print("  " + "  ".join(f"{n:>5} {res.class_recall[n]:.2f}/{res.class_ap50[n]:.2f}" for n in names[i:i + 6]),
              file=out)
    return ExitCode.OK
