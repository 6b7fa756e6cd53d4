"""Photo-to-verdict time for a 1280x960 photo, stage by stage (median ms over --runs).

Stages: decode (JPEG bytes -> BGR, :func:`vision.images.decode_image`), detect (the shipped
ONNX detector + crop classifier), look around (stage 1 again in windows about the corners found,
for places a card may be missed: :meth:`vision.detector.CardDetector.look_around`), pair (corners -> physical cards), group (melds), declare
(:func:`vision.score.judge_as_laid` on the laid melds, and the free
:func:`scorer.declare.check_hand` search), maal and the verdict doubts
(:func:`vision.score.verdict_doubts`: one declare check per alternative of a doubtful card;
on the true corners as a worst case, 8 doubtful cards with 3 alternatives each). The later stages run twice: on what
the detector found, and on the sample's ground-truth corners (the 21-card declared hand,
what a detector that sees every index would hand over), so their cost is measured even
while the shipped model misses cards. Figures only, no asserts: timings depend on the
machine and its load.

    .venv/bin/python bench/bench_pipeline.py [--photo sample_images/declared_hand.jpg] [--runs 20]
    .venv/bin/python bench/bench_pipeline.py --far        # also a 12-megapixel frame, tiles against none
    .venv/bin/python bench/bench_pipeline.py --nms 100    # NMS study on generated scenes instead

``--nms N`` renders N generated scenes per layout (tunnela, meld_row, table; every installed
design) and runs the detector's class-agnostic NMS on the ground-truth corner boxes: any
box it removes is a corner of another card that perfect boxes would still lose.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _interleaved_ms(fns: Sequence[Callable[[], Any]], runs: int) -> list[tuple[float, Any]]:
    """Median ms and last result of each function, timed in turns (one call of each per round).

    Why: timed one after the other, two models' medians drift apart with the machine's load over
    the run (a ratio of 1.26 between two models that measure 1.01-1.08 in turns); in turns,
    the drift falls on all of them alike and the ratio is what it means.
    """
    results = [fn() for fn in fns]
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for k, fn in enumerate(fns):
            t0 = time.perf_counter()
            results[k] = fn()
            times[k].append(time.perf_counter() - t0)
    return [(statistics.median(t) * 1000, r) for t, r in zip(times, results)]


def _median_ms(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """Median ms and last result of one function (after one call to warm it up)."""
    return _interleaved_ms([fn], runs)[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--photo", type=Path, default=ROOT / "sample_images" / "declared_hand.jpg")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--threads", type=int, default=None, help="ONNX Runtime threads (default: all cores)")
    ap.add_argument("--nms", type=int, default=0, metavar="N", help="run the NMS study on N scenes per layout")
    ap.add_argument("--baseline", type=Path, default=None, metavar="DIR",
                    help="also time another model folder's detect (e.g. the last shipped model) in this run")
    ap.add_argument("--far", action="store_true",
                    help="also time detect on the photo in the middle of a 4000x3000 frame, with and without tiles")
    args = ap.parse_args()
    if args.nms:
        return nms_study(args.nms)

    from scorer import get_rules, parse_card
    from scorer.declare import check_hand
    from scorer.maal import maal_points
    from vision.detector import CardDetector
    from vision.geometry import Corner
    from vision.images import decode_image
    from vision.layout import group_cards
    from vision.pairing import pair_corners
    from vision.doubts import MAX_HINGE_TRIES
    from vision.score import judge_as_laid, lay_out, verdict_doubts

    data = args.photo.read_bytes()
    expected = json.loads((ROOT / "sample_images" / "expected.json").read_text()).get(args.photo.name)
    rules = get_rules("nepali", {})
    tiplu = parse_card(expected["tiplu"] if expected else "5D")
    t0 = time.perf_counter()
    detector = CardDetector(threads=args.threads)
    load_ms = (time.perf_counter() - t0) * 1000

    decode_ms, image = _median_ms(lambda: decode_image(data), args.runs)
    detect_ms, corners = _median_ms(lambda: detector.detect(image, 0.25), args.runs)
    print(f"photo {args.photo.name} {image.shape[1]}x{image.shape[0]}, {len(data) // 1024} KB; "
          f"{os.cpu_count()} CPUs; model load {load_ms:.0f} ms (once per process)")
    print(f"{'stage':<28}{'model corners':>15}{'true corners':>15}")

    truth = [Corner(c["card"], 0.9, tuple(c["box"])) for c in expected["corners"]] if expected else []
    faint_above = detector.calibration.faint_above
    look_ms, looked = _median_ms(lambda: detector.look_around(image, corners, faint_above, [c.box for c in corners]),
                                 args.runs)
    rows: dict[str, list[float]] = {"decode": [decode_ms, decode_ms], "detect": [detect_ms, float("nan")],
                                    "look around (places)": [look_ms, float("nan")]}
    for column, found in enumerate((corners, truth)):
        pair_ms, pairing = _median_ms(lambda: pair_corners(found, image), args.runs)
        group_ms, groups = _median_ms(lambda: group_cards(pairing.cards, found), args.runs)
        cards = [parse_card(c.card) for c in pairing.cards]
        laid = lay_out(groups, len(cards))
        if laid.shows_declaration:
            grouping_ms, _ = _median_ms(lambda: judge_as_laid(cards, laid, rules, tiplu=tiplu), args.runs)
        else:
            grouping_ms = float("nan")
        if len(cards) in (21, 22):
            free_ms, _ = _median_ms(lambda: check_hand(cards, rules, tiplu=tiplu), max(3, args.runs // 4))
        else:
            free_ms = float("nan")
        try:
            maal_ms, _ = _median_ms(lambda: maal_points(cards, rules, tiplu), args.runs)
        except ValueError:
            maal_ms = float("nan")
        names = [c.card for c in pairing.cards]
        if column == 0:
            doubtful = [(i, [n for n, _ in c.alternatives]) for i, c in enumerate(pairing.cards)
                        if c.uncertain and c.alternatives]
        else:
            doubtful = [(i, [names[(i + k) % len(names)] for k in (1, 2, 3)]) for i in range(MAX_HINGE_TRIES)]
        doubts_ms, _ = _median_ms(lambda: verdict_doubts(names, doubtful, rules, groups=groups, tiplu=tiplu),
                                  max(3, args.runs // 4))
        for key, value in (("pair", pair_ms), ("group", group_ms), ("declare (laid melds)", grouping_ms),
                           ("declare (free search)", free_ms), ("maal", maal_ms), ("verdict doubts", doubts_ms)):
            rows.setdefault(key, [float("nan"), float("nan")])[column] = value
        rows.setdefault("cards found", [0, 0])[column] = len(cards)
    for key, (a, b) in rows.items():
        if key == "cards found":
            continue
        print(f"{key:<28}{a:>15.2f}{b:>15.2f}")
    total_model = sum(v[0] for k, v in rows.items() if k not in ("cards found", "declare (free search)")
                      and v[0] == v[0])
    total_truth = rows["decode"][1] + rows["detect"][0] + rows["look around (places)"][0] + sum(
        rows[k][1] for k in ("pair", "group", "declare (laid melds)", "maal", "verdict doubts")
        if rows[k][1] == rows[k][1])
    print(f"{'total (laid-melds route)':<28}{total_model:>15.2f}{total_truth:>15.2f}")
    print(f"{'cards found':<28}{rows['cards found'][0]:>15d}{rows['cards found'][1]:>15d}")
    print(f"target: < 300 ms per photo on a 2-core machine; 'true corners' uses the model's detect and look time "
          f"({len(looked)} corners found looking around)")
    compare_detect(detector, image, detect_ms, len(corners), args.baseline, args.runs, args.threads)
    if args.far:
        compare_far(detector, image, max(3, args.runs // 4), args.threads)
    return 0


def compare_far(detector: Any, image: Any, runs: int, threads: int | None) -> None:
    """Detect on the photo framed at its own resolution in a 12-megapixel frame (the same table from further
    away), with the shipped tiles and without them (``tile_below`` 0), timed in the same run."""
    import dataclasses

    from vision.detector import CardDetector
    from vision.training.measure.report import far_photo

    frame = far_photo(image)
    untiled = CardDetector(threads=threads)
    untiled.settings = dataclasses.replace(untiled.settings, passes=tuple(p for p in untiled.settings.passes if p != "tiles"))
    tiled_ms, tiled = _median_ms(lambda: detector.detect(frame, 0.25), runs)
    plain_ms, plain = _median_ms(lambda: untiled.detect(frame, 0.25), runs)
    print(f"far photo {frame.shape[1]}x{frame.shape[0]}: detect with tiles {tiled_ms:.0f} ms, {len(tiled)} corners; "
          f"without {plain_ms:.0f} ms, {len(plain)} corners; tiles / without = {tiled_ms / plain_ms:.2f}")


def compare_detect(detector: Any, image: Any, detect_ms: float, found: int, baseline: Path | None, runs: int,
                   threads: int | None) -> None:
    """Detect time against baselines timed in turns with the shipped model (:func:`_interleaved_ms`):
    the same model cutting upright crops only (what ``crop_turns`` costs), the same model with ONNX
    Runtime's threads left spinning between runs (what ``spin=False`` saves), and ``baseline`` (another
    model folder) when given."""
    import dataclasses

    from vision.detector import CardDetector

    upright = CardDetector(threads=threads)
    upright.settings = dataclasses.replace(upright.settings, crop_turns=(0.0,))
    rows = [("upright crops only", upright)]
    if baseline is not None:
        rows.append((f"baseline {baseline}", CardDetector(baseline, threads=threads)))
    timed = _interleaved_ms([partial(model.detect, image, 0.25) for model in [detector, *(m for _, m in rows)]], runs)
    shipped_ms = timed[0][0]
    print(f"detect, shipped (crop_turns {list(detector.settings.crop_turns)}): {shipped_ms:.1f} ms in turns with the "
          f"rows below ({detect_ms:.1f} ms alone above), {found} corners")
    for (name, _), (ms, theirs) in zip(rows, timed[1:]):
        print(f"detect, {name}: {ms:.1f} ms, {len(theirs)} corners; shipped / this = {shipped_ms / ms:.2f}")
    spinning = CardDetector(threads=threads, spin=True)
    spin_ms, theirs = _median_ms(partial(spinning.detect, image, 0.25), runs)
    print(f"detect, threads spinning between runs (ONNX Runtime's default), timed alone "
          f"(in turns its spinning threads would slow the shipped one): {spin_ms:.1f} ms, {len(theirs)} corners; "
          f"shipped alone / this = {detect_ms / spin_ms:.2f}")


def nms_study(per_layout: int) -> int:
    """How many true corners class-agnostic NMS (IoU 0.6 and stricter) would merge away."""
    import numpy as np

    from vision.geometry import box_iou, nms
    from vision.settings import ReaderSettings
    from vision.training.data.decks import load_decks
    from vision.training.data.scenes import render_scene

    NMS_IOU = ReaderSettings().nms_iou

    decks = load_decks("all")
    thresholds = (NMS_IOU, 0.5, 0.45, 0.7)
    print(f"NMS on ground-truth corner boxes, {per_layout} scenes per layout, {len(decks)} designs")
    print(f"{'layout':<10}{'corners':>9}" + "".join(f"{'lost@' + str(t):>11}" for t in thresholds)
          + f"{'same-face lost@' + str(NMS_IOU):>20}{'max IoU':>9}")
    for layout in ("tunnela", "meld_row", "table"):
        total = 0
        lost = dict.fromkeys(thresholds, 0)
        same_face = 0
        worst = 0.0
        for i in range(per_layout):
            shot = render_scene(np.random.default_rng([41, i]), layout, size=(960, 720), decks=decks)
            boxes = np.array([b["bbox"] for b in shot.geometry["boxes"]], float).reshape(-1, 4)
            if not len(boxes):
                continue
            names = [b["name"] for b in shot.geometry["boxes"]]
            scores = np.random.default_rng(i).uniform(0.5, 1.0, len(boxes))
            total += len(boxes)
            ious = box_iou(boxes, boxes)
            worst = max([worst] + [float(ious[a, b]) for a in range(len(boxes)) for b in range(a + 1, len(boxes))])
            for t in thresholds:
                kept = set(nms(boxes, scores, t).tolist())
                lost[t] += len(boxes) - len(kept)
                if t == NMS_IOU:
                    dropped = [k for k in range(len(boxes)) if k not in kept]
                    same_face += sum(1 for k in dropped if any(names[j] == names[k] for j in kept
                                                               if ious[j, k] > t))
        print(f"{layout:<10}{total:>9}" + "".join(f"{lost[t]:>6} {100 * lost[t] / max(total, 1):>3.1f}%"
                                                   for t in thresholds) + f"{same_face:>20}{worst:>9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
