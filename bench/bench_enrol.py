"""Enrolment's photo step on the test set: every suit photo of the held-out designs on every cloth, found or not.

Renders :mod:`vision.training.enrol_photos`' set (each design of ``--designs`` on each cloth
of ``--cloths``, one hearts photo per seed), runs :func:`vision.enrolment.find_cards` on
each and prints, per cloth, how many photos had all 13 cards found in the right order, then
per design, and the seconds to render and to find (median and worst). A photo that fails is
saved with the cards found outlined (``--failed DIR``). No assertions: the test is
``tests/test_enrol_backgrounds.py``; CPU timings depend on the machine and its load.

``--steps`` instead runs one default enrolment (:func:`vision.training.enrol.enrol`) of the
first design's four suit photos on the first cloth and prints the seconds of each part
(finding the cards, cutting crops, learning, export, rendering and reading the calibration
scenes, choosing the level), the whole, the machine's load, the longest wait between two
moves of the progress bar, and the estimate for a Pi 5 and a Pi 4 (these networks run about
2.2 and 7 times slower there, ``bench/bench_profiles.py``: an estimate, not a measurement).

    python bench/bench_enrol.py [--seeds 0 1] [--designs nicu-white] [--failed /tmp/failed]
    nice python bench/bench_enrol.py --steps [--designs nicu-ornamental] [--cloths green-felt]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import cv2

from vision.enrolment import CardsNotFound, annotated, find_cards
from vision.training.enrol_photos import TABLECLOTHS, TEST_DESIGNS, design_photo, found_right, test_set


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=list(TEST_DESIGNS))
    parser.add_argument("--cloths", nargs="+", default=list(TABLECLOTHS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--failed", type=Path, default=None, help="save each failed photo here, annotated")
    parser.add_argument("--steps", action="store_true", help="time each part of one default enrolment instead")
    args = parser.parse_args()
    if args.steps:
        enrolment_steps(args.designs[0], args.cloths[0], args.seeds[0])
        return
    by_cloth: dict[str, list[bool]] = defaultdict(list)
    by_design: dict[str, list[bool]] = defaultdict(list)
    render, find = [], []
    for design, cloth, seed, suit in test_set(args.designs, args.cloths, args.seeds):
        started = time.perf_counter()
        photo = design_photo(design, cloth, seed, suit)
        render.append(time.perf_counter() - started)
        started = time.perf_counter()
        try:
            found = find_cards(photo.image, suit, photo.name)
            right, why = found_right([c.outline for c in found], photo), "wrong places"
        except CardsNotFound as error:
            right, why = False, str(error)
            if args.failed:
                args.failed.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(args.failed / f"{photo.name}.jpg"), annotated(photo.image, error.search))
        find.append(time.perf_counter() - started)
        by_cloth[cloth].append(right)
        by_design[design].append(right)
        if not right:
            print(f"  FAILED {photo.name}: {why}")
    for name, results in (*by_cloth.items(), *by_design.items()):
        print(f"{name:20s} {sum(results):3d} / {len(results)} found")
    total = [r for results in by_cloth.values() for r in results]
    print(f"{'all':20s} {sum(total):3d} / {len(total)} found")
    print(f"render s: median {statistics.median(render):.2f}, worst {max(render):.2f}; "
          f"find_cards s: median {statistics.median(find):.2f}, worst {max(find):.2f}")


#: How much slower than 2 free x86 cores these networks run on a Pi 5 and a Pi 4 (bench_profiles.py's estimate).
PI_FACTORS = {"Pi 5": 2.2, "Pi 4": 7.0}


def enrolment_steps(design: str, cloth: str, seed: int) -> None:
    """One default enrolment of ``design``'s four suit photos on ``cloth``, each part timed."""
    from vision.training.enrol import Progress, enrol

    moves: list[float] = []
    shown: list[tuple[str, float]] = []

    def moved(now: Progress) -> None:
        if (now.step, now.fraction) != (shown[-1] if shown else None):
            shown.append((now.step, now.fraction))
            moves.append(time.monotonic())

    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for suit in "SHDC":
            paths.append(Path(folder) / f"{suit}.jpg")
            cv2.imwrite(str(paths[-1]), design_photo(design, cloth, seed, suit).image, [cv2.IMWRITE_JPEG_QUALITY, 92])
        load = os.getloadavg()[0]
        started = time.monotonic()
        done = enrol(paths, Path(folder) / "model", design=design, progress=moved)
        whole = time.monotonic() - started
    waits = [b - a for a, b in zip([started, *moves], [*moves, started + whole])]
    print(f"{design} on {cloth}: {done.crops} crops, {done.epochs} epochs, {done.calibration_scenes} calibration scenes")
    for part, seconds in done.timings.items():
        print(f"  {part:20s} {seconds:7.1f} s")
    print(f"  {'whole':20s} {whole:7.1f} s ({whole / 60:.1f} min); load average {load:.2f} before, "
          f"{os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores")
    print(f"  the progress bar moved {len(moves)} times, the longest wait {max(waits):.1f} s")
    print("  estimated: " + ", ".join(f"{name} about {whole * factor / 60:.0f} min"
                                      for name, factor in PI_FACTORS.items()))


if __name__ == "__main__":
    main()
