"""Photo to verdict, this tree against another revision of tiplu, in the same run.

Why: a reshaping of the reader must not make a photo slower, and these machines are too noisy
for figures from different runs to compare. Both trees time the same thing in their own
process (load the shipped model, then :func:`vision.score.score_photo` on each sample photo,
``--runs`` times, median), in turns (``--rounds``), and the ratio is printed::

    .venv/bin/python bench/bench_against.py --ref da3a4f7
    .venv/bin/python bench/bench_against.py --ref HEAD~5 --runs 5 --rounds 3

The other revision is unpacked with ``git archive`` into a temporary folder (its own
``models/``); it runs with this tree's virtualenv.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_photo import exported_tree  # noqa: E402  (the other revision's files, as bench_photo takes them)

PHOTOS = ("declared_hand.jpg", "maal_spread.jpg", "tunnela.jpg", "real_maal.jpg", "tiplu.jpg")

#: Run in each tree (its own ``vision`` and ``models``): median ms of photo to verdict per sample photo.
TIMER = """
import json, sys, time, statistics
sys.path.insert(0, ".")
import cv2
from scorer import get_rules, parse_card
from vision.detector import load_detector
from vision.score import score_photo
runs, photos = int(sys.argv[1]), sys.argv[2:]
detector, rules = load_detector(), get_rules("nepali")
expected = json.load(open("sample_images/expected.json"))
out = {}
for name in photos:
    image = cv2.imread("sample_images/" + name)
    tiplu = parse_card(expected.get(name, {}).get("tiplu") or "5D")
    score_photo(image, detector, rules, tiplu=tiplu)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        score_photo(image, detector, rules, tiplu=tiplu)
        times.append((time.perf_counter() - t0) * 1000)
    out[name] = statistics.median(times)
print(json.dumps(out))
"""


def time_tree(tree: Path, runs: int, photos: list[str]) -> dict[str, float]:
    """Median ms of photo to verdict per photo, measured in ``tree``'s own process."""
    done = subprocess.run([sys.executable, "-c", TIMER, str(runs), *photos], cwd=tree, capture_output=True,
                          text=True, check=False, env={**os.environ, "YOLO_OFFLINE": "1"})
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the timer failed:\n{done.stderr[-2000:]}")
    return {k: float(v) for k, v in json.loads(done.stdout.strip().splitlines()[-1]).items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ref", required=True, help="the git revision to compare with (e.g. the last release)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs of each photo per round")
    ap.add_argument("--rounds", type=int, default=2, help="turns of the two trees")
    ap.add_argument("--photos", nargs="+", default=list(PHOTOS), help="sample photos (in sample_images/)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tiplu-ref-") as folder:
        try:
            ref = exported_tree(args.ref, Path(folder))
        except subprocess.CalledProcessError as failed:
            raise SystemExit(f"git archive {args.ref}: {failed.stderr.decode()[-500:]}") from None
        results: dict[str, list[dict[str, float]]] = {"ref": [], "this": []}
        for _ in range(args.rounds):
            results["ref"].append(time_tree(ref, args.runs, args.photos))
            results["this"].append(time_tree(ROOT, args.runs, args.photos))
    print(f"photo to verdict (score_photo), median of {args.runs} runs, best of {args.rounds} rounds; "
          f"ref = {args.ref}")
    print(f"{'photo':<20}{'ref ms':>10}{'this ms':>10}{'this / ref':>12}")
    ratios = []
    for name in args.photos:
        before = min(r[name] for r in results["ref"])
        after = min(r[name] for r in results["this"])
        ratios.append(after / before)
        print(f"{name:<20}{before:>10.1f}{after:>10.1f}{after / before:>12.3f}")
    print(f"{'geometric mean':<40}{statistics.geometric_mean(ratios):>12.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
