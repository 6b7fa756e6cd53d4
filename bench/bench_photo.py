"""Photo to verdict against the last release, in one run: the sample hand, 12-megapixel photos and the page.

Each case runs in two worker processes at once, this tree and the baseline's (``--baseline``, a git
revision, exported with ``git archive`` into a temporary folder: its code and its weights), each
importing only its own tree. The parent asks them in turns, one call of each per round, so the
machine's load falls on both alike; it prints the medians and this tree's time over the baseline's.

- ``hand``: ``sample_images/declared_hand.jpg`` (1280 x 960): decode, read, verdict
  (:func:`vision.score.score_reading`).
- ``12mp``: the same hand photographed closer by a 12-megapixel phone (4032 x 3024, the cards
  filling most of it, sensor noise, JPEG 92), decoded as the page decodes it, read, verdict.
- ``far``: the hand in the middle of a 4000 x 3000 frame (the far tables of ``tiplu report``: read
  in tiles), decoded as the page decodes it, read, verdict.
- ``page``: the 12-megapixel JPEG uploaded to the session page (``POST /sessions/<id>/photos``, the
  real app on a real SQLite file, in process), then its verdict (``POST .../cards/check``, as the
  page's script asks it). ``page adds`` is that minus the reading inside it; its CPU time (the
  process's, so the load of other programs does not count) beside it. The CPU time of the verdict
  cases counts every thread of the process (ONNX Runtime's too).

With ``--passes`` it prints instead what each of stage 1's passes (:mod:`vision.passes`), stage 2 and the
orientation network cost in this tree, in CPU ms (every thread's, so the machine's other load counts
little), on a real close-up, the tunnela sample, the sample hand and the far table.

Figures only, no asserts: timings depend on the machine and its load; compare the ratios::

    .venv/bin/python bench/bench_photo.py [--baseline 59a2c94] [--runs 5] [--cases hand 12mp far page]
    .venv/bin/python bench/bench_photo.py --passes [--model runs/cand]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
#: The commit the int8 and page work started from (v0.8.6's code and weights).
LAST_RELEASE = "59a2c94"
CASES = ("hand", "12mp", "far", "page")
PHONE_SIZE = (4032, 3024)


def phone_photo(image: Any, size: tuple[int, int] = PHONE_SIZE, fill: float = 0.64, seed: int = 0) -> bytes:
    """``image`` enlarged to ``fill`` of a ``size`` frame of its top edge's colour, with sensor noise, as a
    JPEG of quality 92: a 12-megapixel phone's photo of the same table taken closer."""
    import cv2
    import numpy as np

    (w, h), (ih, iw) = size, image.shape[:2]
    scale = fill * w / iw
    big = cv2.resize(image, (round(iw * scale), round(ih * scale)), interpolation=cv2.INTER_CUBIC)
    frame = np.empty((h, w, 3), np.uint8)
    frame[:] = np.median(image[:20].reshape(-1, 3), 0)
    y, x = (h - big.shape[0]) // 2, (w - big.shape[1]) // 2
    frame[y:y + big.shape[0], x:x + big.shape[1]] = big
    noisy = frame + np.random.default_rng(seed).normal(0, 3, frame.shape)
    return cv2.imencode(".jpg", np.clip(noisy, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()


def far_jpeg(image: Any) -> bytes:
    """``image`` in the middle of a 4000 x 3000 frame (:func:`vision.training.measure.report.far_photo`), JPEG 92."""
    import cv2

    from vision.training.measure.report import far_photo

    return cv2.imencode(".jpg", far_photo(image), [cv2.IMWRITE_JPEG_QUALITY, 92])[1].tobytes()


class Worker:
    """One tree's worker process: it answers each case's name with its timings (JSON, one line)."""

    def __init__(self, tree: Path, photos: Path, threads: int | None) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree), "YOLO_OFFLINE": "1"}
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", str(photos)]
        command += ["--threads", str(threads)] if threads else []
        self.tree = tree
        self.process = subprocess.Popen(command, cwd=tree, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        self.ready = json.loads(self.ask("ready"))

    def ask(self, line: str) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        if not answer:
            raise RuntimeError(f"the worker of {self.tree} stopped")
        return answer

    def close(self) -> None:
        if self.process.poll() is None:
            self.ask("quit")
            self.process.wait(timeout=30)


def exported_tree(revision: str, folder: Path) -> Path:
    """The files of ``revision`` (code and weights) written into ``folder`` with ``git archive``."""
    archive = subprocess.run(["git", "archive", "--format=tar", revision], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", default=LAST_RELEASE, metavar="REV", help="the git revision to compare with")
    ap.add_argument("--runs", type=int, default=5, help="rounds of turns")
    ap.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    ap.add_argument("--threads", type=int, default=None, help="ONNX Runtime threads (default: all cores)")
    ap.add_argument("--passes", action="store_true", help="what each pass costs in this tree, instead")
    ap.add_argument("--model", type=Path, default=None, help="the model folder for --passes (default models/)")
    ap.add_argument("--worker", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker is not None:
        return work(args.worker, args.threads)
    if args.passes:
        return pass_costs(args.model, args.runs, args.threads)

    import cv2

    sample = ROOT / "sample_images" / "declared_hand.jpg"
    with tempfile.TemporaryDirectory() as folder:
        photos = Path(folder) / "photos"
        photos.mkdir()
        image = cv2.imread(str(sample))
        (photos / "hand.jpg").write_bytes(sample.read_bytes())
        (photos / "12mp.jpg").write_bytes(phone_photo(image))
        (photos / "far.jpg").write_bytes(far_jpeg(image))
        base_tree = exported_tree(args.baseline, Path(folder) / "baseline")
        workers = {"this tree": Worker(ROOT, photos, args.threads), f"baseline {args.baseline}":
                   Worker(base_tree, photos, args.threads)}
        try:
            times: dict[tuple[str, str], list[dict[str, float]]] = {}
            for case in args.cases:  # one call of each first: loads, caches, the session's first row
                for worker in workers.values():
                    worker.ask(case)
            for _ in range(args.runs):
                for case in args.cases:
                    for name, worker in workers.items():
                        times.setdefault((case, name), []).append(json.loads(worker.ask(case)))
            report(args, workers, times)
        finally:
            for worker in workers.values():
                worker.close()
    return 0


def report(args: argparse.Namespace, workers: dict[str, Worker], times: dict[tuple[str, str], list[dict[str, float]]]
           ) -> None:
    """Medians per case and tree, and this tree's over the baseline's."""
    this, base = list(workers)
    print(f"{os.cpu_count()} CPUs, {args.runs} rounds in turns; medians in ms; ratio = this tree / baseline")
    for name, worker in workers.items():
        print(f"  {name}: {worker.ready}")
    print(f"{'case':<10}{'figure':<22}{this:>14}{base:>22}{'ratio':>8}")
    for case in args.cases:
        for figure in times[case, this][0]:
            mine = statistics.median(t[figure] for t in times[case, this])
            theirs = statistics.median(t[figure] for t in times[case, base])
            print(f"{case:<10}{figure:<22}{mine:>14.1f}{theirs:>22.1f}{mine / theirs if theirs else float('nan'):>8.2f}")


def work(photos: Path, threads: int | None) -> int:
    """The worker's loop: build everything once, then answer each case's name with its timings."""
    import numpy as np

    from scorer import get_rules, parse_card
    from vision.detector import CardDetector
    from vision.pipeline import read_photo
    from vision.score import score_reading
    from web import photos as page_photos

    detector = CardDetector(threads=threads)
    rules, tiplu = get_rules("nepali"), parse_card("5D")
    data = {name: (photos / f"{name}.jpg").read_bytes() for name in ("hand", "12mp", "far")}
    decode = page_decoder(page_photos)

    def verdict(name: str) -> dict[str, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        image = decode(data[name])
        t1 = time.perf_counter()
        reading = read_photo(image, detector)
        t2 = time.perf_counter()
        score_reading(reading, rules, tiplu=tiplu)
        t3, c3 = time.perf_counter(), time.process_time()
        return {"photo to verdict": (t3 - t0) * 1000, "photo to verdict, CPU": (c3 - c0) * 1000,
                "decode": (t1 - t0) * 1000, "read": (t2 - t1) * 1000,
                "verdict": (t3 - t2) * 1000, "cards read": float(len(reading.cards))}

    page = page_path(data["12mp"], page_photos)
    cases: dict[str, Callable[[], dict[str, float]]] = {"hand": lambda: verdict("hand"),
                                                        "12mp": lambda: verdict("12mp"),
                                                        "far": lambda: verdict("far"), "page": page}
    weights = sum(p.stat().st_size for p in (Path.cwd() / "models").glob("*.onnx"))
    out = sys.stdout
    for line in sys.stdin:
        command = line.strip()
        if command == "quit":
            print("{}", file=out, flush=True)
            break
        if command == "ready":
            answer: Any = {"weights MB": round(weights / 1e6, 1), "numpy": np.__version__}
        else:
            answer = cases[command]()
        print(json.dumps(answer), file=out, flush=True)
    return 0


def page_decoder(page_photos: Any) -> Callable[[bytes], Any]:
    """How the page turns an upload's bytes into the pixels it reads, in the worker's tree."""
    if hasattr(page_photos, "decode_for_reading"):
        return lambda data: page_photos.decode_for_reading(data, max_bytes=len(data) + 1,
                                                           max_pixels=page_photos.DEFAULT_MAX_PIXELS).image
    return lambda data: page_photos.fit_for_reading(page_photos.decode_photo(
        data, max_bytes=len(data) + 1, max_pixels=page_photos.DEFAULT_MAX_PIXELS))


def page_path(jpeg: bytes, page_photos: Any) -> Callable[[], dict[str, float]]:
    """The session page's photo, timed: upload and read (``POST /sessions/<id>/photos``), then its verdict
    (``POST /sessions/<id>/cards/check``), on the real app and a real SQLite file in a temporary folder."""
    from web.app import create_app

    folder = tempfile.mkdtemp(prefix="tiplu-bench-page-")
    app = create_app({"TESTING": True, "DATABASE": f"{folder}/bench.db", "SECRET_KEY": "bench",
                      "WTF_CSRF_ENABLED": False, "MAX_CONTENT_LENGTH": 25 * 1024 * 1024})
    client = app.test_client()
    session = client.post("/api/sessions", json={"players": ["Anna", "Ben", "Carla", "Dan"]}).get_json()["id"]
    inside: dict[str, float] = {}
    read = page_photos.read_photo

    def timed_read(*args: Any, **kwargs: Any) -> Any:  # the reading inside the page, timed apart
        w0, c0 = time.perf_counter(), time.process_time()
        try:
            return read(*args, **kwargs)
        finally:
            inside["wall"], inside["cpu"] = time.perf_counter() - w0, time.process_time() - c0

    page_photos.read_photo = timed_read

    def run() -> dict[str, float]:
        w0, c0 = time.perf_counter(), time.process_time()
        answer = client.post(f"/sessions/{session}/photos", data={"image": (io.BytesIO(jpeg), "photo.jpg")},
                             content_type="multipart/form-data")
        if answer.status_code != 201:
            raise RuntimeError(f"upload answered {answer.status_code}: {answer.get_data(as_text=True)[:200]}")
        reading = answer.get_json()["reading"]
        checked = client.post(f"/sessions/{session}/cards/check",
                              json={"cards": [c["card"] for c in reading["cards"]], "purpose": "hand", "tiplu": "5D",
                                    "groups": reading["groups"]})
        if checked.status_code != 200:
            raise RuntimeError(f"check answered {checked.status_code}: {checked.get_data(as_text=True)[:200]}")
        wall, cpu = time.perf_counter() - w0, time.process_time() - c0
        return {"photo to verdict": wall * 1000, "page adds": (wall - inside["wall"]) * 1000,
                "page adds, CPU": (cpu - inside["cpu"]) * 1000}

    return run


class _TimedSession:
    """An ONNX Runtime session whose runs' CPU time goes to the pass ``where`` names at the time."""

    def __init__(self, session: Any, costs: dict[str, float], where: Callable[[Any], str]) -> None:
        self.session, self.costs, self.where = session, costs, where

    def get_inputs(self) -> Any:
        return self.session.get_inputs()

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        batch = next(iter(feed.values()))
        c0 = time.process_time()
        try:
            return self.session.run(outputs, feed)
        finally:
            spent = time.process_time() - c0
            name = self.where(batch)
            if name == "base and views":  # one batch: the photo, then its views
                self.costs["base"] = self.costs.get("base", 0.0) + spent / len(batch)
                self.costs["views"] = self.costs.get("views", 0.0) + spent * (len(batch) - 1) / len(batch)
            else:
                self.costs[name] = self.costs.get(name, 0.0) + spent


def pass_costs(model: Path | None, runs: int, threads: int | None) -> int:
    """CPU ms of each pass, stage 2 and the orientation network on four kinds of photo (see the module doc)."""
    import cv2

    from vision.detector import CardDetector
    from vision.pipeline import read_photo
    from vision.training.measure.report import far_photo

    table = cv2.imread(str(ROOT / "sample_images" / "declared_hand.jpg"))
    close = sorted((ROOT / "tests" / "data" / "real_val" / "images").glob("*.jpg"))[0]
    photos = {"real close-up 640x640": cv2.imread(str(close)),
              "tunnela sample": cv2.imread(str(ROOT / "sample_images" / "tunnela.jpg")),
              "hand 1280x960": table, "far 4000x3000": far_photo(table)}
    detector = CardDetector(model, threads=threads)
    costs: dict[str, float] = {}
    state = {"looking around": False, "big read": False}

    def stage1_pass(batch: Any) -> str:
        if state["looking around"]:
            return "look_around"
        if batch.shape[2] == detector.settings.imgsz and not state["big read"]:
            return "base and views" if len(batch) > 1 else "base"
        if not state["big read"]:
            state["big read"] = True
            return "big"
        return "tiles"

    detector._det = _TimedSession(detector._det, costs, stage1_pass)
    detector._members = [(_TimedSession(s, costs, lambda _: "stage 2"), n) for s, n in detector._members]
    if detector._orientation is not None:
        detector._orientation = (_TimedSession(detector._orientation[0], costs, lambda _: "orientation"),
                                 detector._orientation[1])
    look_around = detector.look_around

    def looking(*args: Any, **kwargs: Any) -> Any:
        state["looking around"] = True
        try:
            return look_around(*args, **kwargs)
        finally:
            state["looking around"] = False

    detector.look_around = looking  # type: ignore[method-assign]
    print(f"CPU ms per photo (every thread's), mean of {runs}; model {model or 'models/'}")
    for name, image in photos.items():
        read_photo(image, detector)
        costs.clear()
        c0 = time.process_time()
        for _ in range(runs):
            state["big read"] = False
            read_photo(image, detector)
        total = (time.process_time() - c0) / runs * 1000
        parts = ", ".join(f"{k} {v / runs * 1000:.0f}" for k, v in sorted(costs.items(), key=lambda kv: -kv[1]))
        print(f"{name:<24} reading {total:5.0f}: {parts}, the rest {total - sum(costs.values()) / runs * 1000:.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
