"""Measure an NCNN backend against ONNX Runtime on this machine (issue #45, item 4): same readings, and faster?

Converts the shipped stage 1 (``models/corners.onnx``) with pnnx to NCNN, one model per input size (pnnx's
dynamic-shape conversion of this YOLO11n fails, see below), and a stage-2 classifier at one 48x72 crop.
Then, on the sample photos letterboxed as :func:`vision.detector.letterbox` does (RGB float 0-1, NCHW):

* agreement: the raw output's max abs difference, and whether the decoded boxes over score 0.05
  (:meth:`vision.detector.CardDetector._decode`) are the same anchors, with their box (photo px) and
  score differences;
* time per call: the median of ``--runs`` calls, ONNX Runtime and NCNN called in turns, at each thread
  count; the whole timing is repeated ``--rounds`` times to show the noise.

ONNX Runtime runs as the app runs it (no spinning). NCNN has no batch axis, so the classifier's batch of
32 crops is 32 extractions. Converted files go to ``--work`` (default a temporary folder) and are never
committed. Needs ``pip install ncnn pnnx`` (not dependencies of tiplu); not run by the tests.

    nice python bench/bench_ncnn.py [--sizes 320 960] [--threads 2 1] [--runs 30] [--rounds 2] [--fp16]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: The score the decoded boxes are compared over.
COMPARE_CONF = 0.05


def _pnnx() -> str | None:
    """The pnnx converter: on PATH, or next to this Python (a venv's bin/)."""
    found = shutil.which("pnnx")
    if found:
        return found
    local = Path(sys.executable).parent / "pnnx"
    return str(local) if local.is_file() else None


def convert(pnnx: str, onnx_file: Path, work: Path, shape: tuple[int, ...], fp16: bool,
            shape2: tuple[int, ...] | None = None) -> tuple[Path, Path] | str:
    """``onnx_file`` converted by pnnx at ``shape`` into its own folder under ``work``: (param, bin), or why not."""
    tag = "x".join(map(str, shape)) + ("_dyn" if shape2 else "") + ("_fp16" if fp16 else "_fp32")
    folder = work / f"{onnx_file.stem}_{tag}"
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / onnx_file.name
    if not src.exists():
        shutil.copyfile(onnx_file, src)
    param, weights = folder / f"{onnx_file.stem}.ncnn.param", folder / f"{onnx_file.stem}.ncnn.bin"
    if param.is_file() and weights.is_file():
        return param, weights
    args = [pnnx, src.name, f"inputshape=[{','.join(map(str, shape))}]f32", f"fp16={int(fp16)}"]
    if shape2:
        args.append(f"inputshape2=[{','.join(map(str, shape2))}]f32")
    done = subprocess.run(args, cwd=folder, capture_output=True, text=True)
    if done.returncode != 0 or not param.is_file():
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return f"pnnx exit {done.returncode}: {tail[0]}"
    return param, weights


class NcnnNet:
    """One converted network (input ``in0``, output ``out0``, as pnnx names them) at a thread count."""

    def __init__(self, files: tuple[Path, Path], threads: int) -> None:
        import ncnn

        self._ncnn = ncnn
        self.net = ncnn.Net()
        self.net.opt.use_vulkan_compute = False
        self.net.opt.num_threads = threads
        self.net.load_param(str(files[0]))
        self.net.load_model(str(files[1]))

    def __call__(self, chw: np.ndarray) -> np.ndarray:
        """The output for one float32 image (3, H, W)."""
        with self.net.create_extractor() as ex:
            ex.input("in0", self._ncnn.Mat(np.ascontiguousarray(chw)).clone())
            _, out = ex.extract("out0")
            return np.array(out)


def ort_session(onnx_file: Path, threads: int) -> Any:
    """An ONNX Runtime session as :class:`vision.detector.CardDetector` builds it."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.log_severity_level = 3
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(onnx_file), opts, providers=["CPUExecutionProvider"])


def photos() -> list[tuple[str, np.ndarray]]:
    """The sample photos (1280x960, 1024x768, 640x640): real and generated tables."""
    found = [(f.name, cv2.imread(str(f))) for f in sorted((ROOT / "sample_images").glob("*.jpg"))]
    return [(name, image) for name, image in found if image is not None]


def in_turns(fns: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median ms per call of each function, called in turns (one of each, ``runs`` times), after two warm-ups."""
    for fn in fns.values():
        fn()
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def stage1_agreement(det_onnx: Path, nets: dict[int, NcnnNet], label: str) -> bool:
    """Print, per size and photo, how NCNN's stage-1 output and decoded boxes differ from ONNX Runtime's."""
    from vision.detector import CardDetector, letterbox, network_input

    session = ort_session(det_onnx, 1)
    name_in = session.get_inputs()[0].name
    same_everywhere = True
    for size, net in nets.items():
        worst_raw = worst_box = worst_score = 0.0
        rows = []
        for name, image in photos():
            boxed, s, pad = letterbox(image, size)
            blob = network_input([boxed])
            ref = session.run(None, {name_in: blob})[0][0]
            got = net(blob[0]).reshape(ref.shape)
            worst_raw = max(worst_raw, float(np.abs(got - ref).max()))
            h, w = image.shape[:2]
            keep_ref = ref[4:].max(0) >= COMPARE_CONF
            keep_got = got[4:].max(0) >= COMPARE_CONF
            same = bool(np.array_equal(keep_ref, keep_got))
            b_ref, s_ref, _ = CardDetector._decode(ref, COMPARE_CONF, s, pad, w, h)
            b_got, s_got, _ = CardDetector._decode(got, COMPARE_CONF, s, pad, w, h)
            if same:
                worst_box = max(worst_box, float(np.abs(b_got - b_ref).max(initial=0.0)))
                worst_score = max(worst_score, float(np.abs(s_got - s_ref).max(initial=0.0)))
            same_everywhere &= same
            rows.append(f"{name} {len(b_ref)}/{len(b_got)}{'' if same else ' DIFFERENT ANCHORS'}")
        print(f"  {label} {size:4d} px: raw output max |diff| {worst_raw:.2e}; boxes over {COMPARE_CONF} "
              f"(onnx/ncnn) {', '.join(rows)}; box max |diff| {worst_box:.2e} px, score max |diff| {worst_score:.2e}")
    return same_everywhere


def stage1_timing(det_onnx: Path, files: dict[int, tuple[Path, Path]], threads: int, runs: int) -> None:
    """Print ONNX Runtime's and NCNN's median ms per stage-1 call on the 1280x960 sample photo, per size."""
    from vision.detector import letterbox, network_input

    image = cv2.imread(str(ROOT / "sample_images" / "maal_spread.jpg"))
    assert image is not None, "sample_images/maal_spread.jpg is missing"
    session = ort_session(det_onnx, threads)
    name_in = session.get_inputs()[0].name
    for size, pair in files.items():
        net = NcnnNet(pair, threads)
        blob = network_input([letterbox(image, size)[0]])
        n = runs if size <= 480 else max(5, runs // 4)
        ms = in_turns({"onnxruntime": lambda: session.run(None, {name_in: blob}), "ncnn": lambda: net(blob[0])}, n)
        print(f"  stage 1 {size:4d} px, {threads} thread(s), {n} calls each: onnxruntime {ms['onnxruntime']:7.1f} ms, "
              f"ncnn {ms['ncnn']:7.1f} ms, ncnn speed-up x{ms['onnxruntime'] / ms['ncnn']:.2f}", flush=True)


def classifier_crops(count: int = 32) -> np.ndarray:
    """``count`` real 48x72 corner crops (BGR), cut where stage 1 boxes the sample photos."""
    from vision.detector import MODELS_DIR, CardDetector, crop_corner

    det = CardDetector(MODELS_DIR, threads=1)
    crops = []
    for _, image in photos():
        for box in det.stage1([image], det.settings.imgsz, 0.25)[0].xyxy:
            crops.append(crop_corner(image, box, det.settings.crop_margin, (det.settings.crop_w, det.settings.crop_h)))
    while len(crops) < count:
        crops += crops or [np.full((72, 48, 3), 114, np.uint8)]
    return np.stack(crops[:count])


def classifier_bench(cls_onnx: Path, files: tuple[Path, Path], threads_list: list[int], runs: int) -> None:
    """Agreement and time of one stage-2 classifier on a batch of 32 crops."""
    from vision.detector import network_input

    blob = network_input(classifier_crops())
    session = ort_session(cls_onnx, 1)
    name_in = session.get_inputs()[0].name
    ref = session.run(None, {name_in: blob})[0]
    net = NcnnNet(files, 1)
    got = np.stack([net(crop).reshape(-1) for crop in blob])
    print(f"  classifier, {len(blob)} crops: logits max |diff| {np.abs(got - ref).max():.2e}, "
          f"same argmax {int((got.argmax(1) == ref.argmax(1)).sum())}/{len(blob)}")
    for threads in threads_list:
        session = ort_session(cls_onnx, threads)
        net = NcnnNet(files, threads)
        ms = in_turns({"onnxruntime": lambda: session.run(None, {name_in: blob}),
                       "ncnn": lambda: [net(crop) for crop in blob]}, runs)
        print(f"  classifier, batch {len(blob)}, {threads} thread(s), {runs} calls each: onnxruntime "
              f"{ms['onnxruntime']:6.1f} ms, ncnn {ms['ncnn']:6.1f} ms, ncnn speed-up x{ms['onnxruntime'] / ms['ncnn']:.2f}",
              flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", type=Path, default=ROOT / "models")
    ap.add_argument("--sizes", type=int, nargs="+", default=[320, 960])
    ap.add_argument("--threads", type=int, nargs="+", default=[2, 1])
    ap.add_argument("--runs", type=int, default=30, help="calls per engine for a timing (a quarter of it over 480 px)")
    ap.add_argument("--rounds", type=int, default=2, help="times the whole timing is repeated, to see the noise")
    ap.add_argument("--fp16", action="store_true", help="also measure pnnx's default fp16-stored weights")
    ap.add_argument("--no-classifier", action="store_true")
    ap.add_argument("--work", type=Path, default=None, help="where converted files go (default: a temporary folder)")
    args = ap.parse_args()

    try:
        import ncnn
    except ImportError:
        print("bench_ncnn: the ncnn package is not installed; `pip install ncnn pnnx` (not tiplu dependencies)")
        return 2
    pnnx = _pnnx()
    if pnnx is None:
        print("bench_ncnn: the pnnx converter is not installed; `pip install pnnx` (not a tiplu dependency)")
        return 2

    det_onnx, cls_onnx = args.model / "corners.onnx", args.model / "corner_classifier.onnx"
    work = args.work or Path(tempfile.mkdtemp(prefix="tiplu-ncnn-"))
    print(f"ncnn {ncnn.__version__}, pnnx {pnnx}; converted files in {work}")
    weights = [False, True] if args.fp16 else [False]

    dynamic = convert(pnnx, det_onnx, work, (1, 3, 320, 320), False, shape2=(1, 3, 960, 960))
    print(f"stage 1 with a dynamic input size (inputshape 320, inputshape2 960): "
          f"{'converted' if isinstance(dynamic, tuple) else 'failed, ' + dynamic}")
    files: dict[bool, dict[int, tuple[Path, Path]]] = {}
    for fp16 in weights:
        files[fp16] = {}
        for size in args.sizes:
            got = convert(pnnx, det_onnx, work, (1, 3, size, size), fp16)
            if isinstance(got, str):
                print(f"stage 1 at {size} px did not convert: {got}")
                return 1
            files[fp16][size] = got
            print(f"stage 1 at {size} px, {'fp16' if fp16 else 'fp32'} weights: "
                  f"{got[1].stat().st_size / 1e6:.1f} MB .bin (onnx {det_onnx.stat().st_size / 1e6:.1f} MB)")

    print("Agreement with onnxruntime (1 thread each):")
    for fp16 in weights:
        stage1_agreement(det_onnx, {size: NcnnNet(f, 1) for size, f in files[fp16].items()},
                         "fp16 weights" if fp16 else "fp32 weights")

    for round_no in range(1, args.rounds + 1):
        print(f"Timing, round {round_no} of {args.rounds} (fp32 weights):")
        for threads in args.threads:
            stage1_timing(det_onnx, files[False], threads, args.runs)

    if not args.no_classifier:
        got = convert(pnnx, cls_onnx, work, (1, 3, 72, 48), False)
        if isinstance(got, str):
            print(f"classifier did not convert: {got}")
        else:
            print(f"Stage 2 ({cls_onnx.name}):")
            classifier_bench(cls_onnx, got, args.threads, args.runs)
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
