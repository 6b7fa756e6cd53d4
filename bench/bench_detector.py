"""Time the shipped ONNX corner detector on a 1280x960 photo against Ultralytics' PyTorch predictor.

Prints median milliseconds per photo for: the full ONNX Runtime pipeline (stage 1 + crop
classifier), ONNX stage 1 alone, and Ultralytics' own predictor on the stage-1 PyTorch
checkpoint (same image, same input size), their ratio, and the model file sizes.
No assertions: CPU timings depend on the machine and its load.

    python bench/bench_detector.py [--pt runs/tiplu/detector/weights/best.pt] [--runs 20]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _photo() -> np.ndarray:
    """A 1280x960 photo: the committed sample photos tiled (real cards, realistic load)."""
    files = sorted((ROOT / "tests" / "data" / "real_val" / "images").glob("*.jpg"))[:4]
    if not files:
        rng = np.random.default_rng(0)
        return rng.integers(0, 255, (960, 1280, 3), np.uint8)
    tiles = [cv2.resize(cv2.imread(str(f)), (640, 480)) for f in files]
    while len(tiles) < 4:
        tiles.append(tiles[0])
    return np.vstack([np.hstack(tiles[:2]), np.hstack(tiles[2:4])])


def _time(fn: Callable[[], object], runs: int) -> float:
    fn()
    fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "models")
    ap.add_argument("--pt", type=Path, default=None, help="stage-1 .pt for the Ultralytics comparison")
    ap.add_argument("--imgsz", type=int, default=None)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()

    from vision.detector import CardDetector

    photo = _photo()
    det = CardDetector(args.model, imgsz=args.imgsz)
    sizes = det.context(photo).sizes
    imgsz = sizes[-1]
    corners = det.detect(photo)
    full = _time(lambda: det.detect(photo), args.runs)
    stage1 = _time(lambda: det.stage1([photo], imgsz, 0.1), args.runs)
    print(f"photo 1280x960, detector inputs {' + '.join(map(str, sizes))} px, {len(corners)} corners found: "
          f"{sorted(c.card for c in corners)}")
    print(f"onnxruntime full pipeline (all sizes) : {full:7.1f} ms/photo")
    print(f"onnxruntime stage 1 at {imgsz} px      : {stage1:7.1f} ms/photo")
    files = {p.name: p.stat().st_size for p in sorted(args.model.glob("*")) if p.is_file()}
    for name, size in files.items():
        print(f"  {name:28s} {size / 1e6:6.2f} MB")
    print(f"  total                        {sum(files.values()) / 1e6:6.2f} MB")

    pt = args.pt
    if pt is None:
        found = sorted(ROOT.glob("runs/tiplu/*/weights/best.pt"), key=lambda p: p.stat().st_mtime)
        pt = found[-1] if found else None
    if pt is None or not pt.is_file():
        print("ultralytics comparison skipped: pass --pt with the stage-1 checkpoint")
        return 0
    try:
        from vision.training.fit.networks import offline_environment
        offline_environment()
        from ultralytics import YOLO
    except ImportError:
        print("ultralytics comparison skipped: ultralytics/torch not installed (train extra)")
        return 0
    yolo = YOLO(str(pt))
    ul = _time(lambda: yolo.predict(photo, imgsz=imgsz, conf=0.1, device="cpu", verbose=False), args.runs)
    print(f"ultralytics torch stage 1 : {ul:7.1f} ms/photo  ({pt})")
    print(f"ratio ultralytics / onnx stage 1 at {imgsz} px: {ul / stage1:.2f}x;  / onnx full pipeline: {ul / full:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
