"""What each stage-1 pass costs: photo to reading with every pass, with one left out, and with each profile.

Why: a small machine (a Raspberry Pi) wants the passes that cost most for least left out
(``--profile fast``, :data:`vision.settings.PROFILES`); this measures the cost of each, in turns
in one run, on a close-up, a 1280x960 table and the same table in a 4000x3000 frame. With
``--report`` it also writes the model card's evaluation of each variant (``tiplu report``: real
val upright, the held-out tables, far tables), which says what each pass adds to the readings::

    .venv/bin/python bench/bench_profiles.py [--runs 5] [--rounds 2] [--report --real-val data/real/val]

It also estimates a Raspberry Pi's times (labelled as estimates, never measured here): stage 1 alone,
YOLO11n at 640 px through ONNX Runtime, is timed on this machine and set against the published
figure for a Pi 5 (:data:`PI5_YOLO11N_640_MS`); every reading is assumed to scale as that network
does, and a Pi 4 to take :data:`PI4_OVER_PI5` times a Pi 5's (:data:`PI4_OVER_PI5_SPREAD` the
range that figure comes from).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: YOLO11n at 640 px, ONNX, on a Raspberry Pi 5 (Ultralytics' Raspberry Pi benchmark, as issue #45 quotes it).
PI5_YOLO11N_640_MS = 168.0
#: A Pi 4 against a Pi 5 on YOLO at 640 px, the median of the 8 such rows of Q-engineering's ncnn FPS table
#: (github.com/Qengineering/YoloV10-ncnn-Raspberry-Pi-4, "RPi 4 1950" against "RPi 5 2900": both overclocked;
#: YoloV8 nano 3.1 against 20.0 FPS). The whole table's 18 rows give 3.3x to 9.1x.
PI4_OVER_PI5 = 6.2
#: The lowest and highest of those 8 rows (YoloV5 small 3.9x, YoloV5 nano 8.5x).
PI4_OVER_PI5_SPREAD = (3.9, 8.5)


def _timed(work: Callable[[], object], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        work()
        times.append((time.perf_counter() - t0) * 1000)
    return times


def stage1_ms(detector: object, runs: int = 5, rounds: int = 2) -> float:
    """Stage 1 alone at 640 px on this machine (ms, median of ``runs``, best of ``rounds``): the network the
    Pi estimates are scaled by."""
    import cv2
    import numpy as np

    blank = [cv2.resize(np.full((960, 1280, 3), 128, np.uint8), (640, 640))]
    detector.stage1(blank, 640, 0.1)  # type: ignore[attr-defined]
    return min(statistics.median(_timed(lambda: detector.stage1(blank, 640, 0.1), runs))  # type: ignore[attr-defined]
               for _ in range(rounds))


def pi_factors(yolo_ms: float) -> dict[str, float]:
    """How many times slower than this machine a Pi 5 and a Pi 4 run these networks (estimates), from stage 1's
    time here (:func:`stage1_ms`) against the published Pi 5 figure."""
    pi5 = PI5_YOLO11N_640_MS / yolo_ms
    return {"Pi 5": pi5, "Pi 4": pi5 * PI4_OVER_PI5}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="timed readings of each photo per round")
    ap.add_argument("--rounds", type=int, default=2, help="turns of the variants")
    ap.add_argument("--report", action="store_true", help="also run tiplu report on each variant (slow)")
    ap.add_argument("--real-val", type=Path, default=ROOT / "data" / "real" / "val")
    args = ap.parse_args()

    import cv2

    from vision.detector import CardDetector
    from vision.pipeline import read_photo
    from vision.settings import PASS_NAMES, PROFILES
    from vision.training.measure.report import far_photo

    variants = {"full": PROFILES["full"]} | {f"without {p}": tuple(q for q in PASS_NAMES if q != p)
                                             for p in PASS_NAMES[1:]}
    variants |= {f"profile {name}": passes for name, passes in PROFILES.items() if name != "full"}
    table = cv2.imread(str(ROOT / "sample_images" / "declared_hand.jpg"))
    photos = {"close-up": cv2.imread(str(ROOT / "sample_images" / "tunnela.jpg")), "table 1280x960": table,
              "far table 4000x3000": far_photo(table)}
    detectors = {}
    for name, passes in variants.items():
        detectors[name] = CardDetector()
        detectors[name].settings = dataclasses.replace(detectors[name].settings, passes=passes)
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for name, detector in detectors.items():
            for photo, image in photos.items():
                read_photo(image, detector)
                runs = []
                for _ in range(args.runs):
                    t0 = time.perf_counter()
                    read_photo(image, detector)
                    runs.append((time.perf_counter() - t0) * 1000)
                times.setdefault((name, photo), []).append(statistics.median(runs))
    yolo_ms = stage1_ms(detectors["full"], args.runs, args.rounds)
    pi5 = pi_factors(yolo_ms)["Pi 5"]
    print(f"photo to reading (read_photo), ms: median of {args.runs}, best of {args.rounds} rounds in turns; "
          f"stage 1 at 640 px here {yolo_ms:.0f} ms, so a Pi 5 about {pi5:.1f}x and a Pi 4 about "
          f"{pi5 * PI4_OVER_PI5:.1f}x ({pi5 * PI4_OVER_PI5_SPREAD[0]:.0f}x to {pi5 * PI4_OVER_PI5_SPREAD[1]:.0f}x) "
          f"this machine (estimates)")
    print(f"{'variant':<22}" + "".join(f"{p:>22}" for p in photos) + f"{'/ full (geo. mean)':>20}")
    for name in variants:
        best = [min(times[name, p]) for p in photos]
        ratio = statistics.geometric_mean([b / min(times["full", p]) for b, p in zip(best, photos)])
        print(f"{name:<22}" + "".join(f"{b:>22.0f}" for b in best) + f"{ratio:>20.2f}")
    print("estimated Pi 5 / Pi 4 seconds (photo to reading):")
    for name in variants:
        print(f"{name:<22}" + "".join(f"{min(times[name, p]) * pi5 / 1000:>13.1f} / {min(times[name, p]) * pi5 * PI4_OVER_PI5 / 1000:<6.1f}"
                                      for p in photos))
    if args.report:
        for name, passes in variants.items():
            with tempfile.TemporaryDirectory() as folder:
                model = Path(folder) / "model"
                model.mkdir()
                for f in (ROOT / "models").iterdir():
                    if f.suffix in (".onnx", ".txt"):
                        (model / f.name).write_bytes(f.read_bytes())
                info = json.loads((ROOT / "models" / "model.json").read_text()) | {"passes": list(passes)}
                (model / "model.json").write_text(json.dumps(info))
                subprocess.run([sys.executable, "-m", "web.cli", "report", str(model), "--real-val", str(args.real_val),
                                "--angles", "0", "--scenes", "30", "--far-scenes", "4", "--out", str(Path(folder) / "r")],
                               cwd=ROOT, check=False, capture_output=True)
                out = Path(folder) / "r" / "report.md"
                print(f"\n### {name}\n\n{out.read_text() if out.is_file() else 'no report (see tiplu report)'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
