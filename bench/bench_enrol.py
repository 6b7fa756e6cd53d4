"""Enrolment's photo step on the test set: every suit photo of the held-out designs on every cloth, found or not.

Renders :mod:`vision.training.enrol_photos`' set (each design of ``--designs`` on each cloth
of ``--cloths``, one hearts photo per seed), runs :func:`vision.enrolment.find_cards` on
each and prints, per cloth, how many photos had all 13 cards found in the right order, then
per design, and the seconds to render and to find (median and worst). A photo that fails is
saved with the cards found outlined (``--failed DIR``). No assertions: the test is
``tests/test_enrol_backgrounds.py``; CPU timings depend on the machine and its load.

    python bench/bench_enrol.py [--seeds 0 1] [--designs nicu-white] [--failed /tmp/failed]
"""

from __future__ import annotations

import argparse
import statistics
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
