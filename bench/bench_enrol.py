"""Enrolment's photo step on the test set: every suit photo of the held-out designs on every cloth, found or not.

Renders :mod:`vision.training.data.enrol_photos`' set (each design of ``--designs`` on each cloth
of ``--cloths``, one photo of each suit of ``--suits`` per seed), runs :func:`vision.enrolment.find_cards` on
each and prints, per cloth, how many photos had all 13 cards found in the right order, then
per design, and the seconds to render and to find (median and worst). A photo that fails is
saved with the cards found outlined (``--failed DIR``). No assertions: the test is
``tests/test_enrol_backgrounds.py``; CPU timings depend on the machine and its load.

``--steps`` instead runs one default enrolment (:func:`vision.training.fit.enrol.enrol`) of the
first design's four suit photos on the first cloth and prints the seconds of each part
(finding the cards, cutting crops, learning, export, rendering and reading the calibration
scenes, choosing the level), the whole, the machine's load, the longest wait between two
moves of the progress bar, and the estimate for a Pi 5 and a Pi 4 (the whole scaled as stage 1
is, measured in the same run against the published Pi 5 figure, ``bench/bench_profiles.py``: an
estimate, not a measurement).

    python bench/bench_enrol.py [--seeds 0 1 2] [--designs nicu-white] [--suits H] [--failed /tmp/failed]
    nice python bench/bench_enrol.py --steps [--designs nicu-ornamental] [--cloths green-felt]
    nice python bench/bench_enrol.py --page

``--page`` times the same enrolment as a family starts it on the web page: a real ``tiplu serve``
process with its defaults, Debian's Chromium (Playwright) filling "Teach tiplu a deck" with the
four suit photos and watching the bar until the deck is learnt; it prints the whole time, the
page's own promise, and the longest wait between two moves of the bar or its message.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import cv2

from vision.enrolment import CardsNotFound, annotated, find_cards
from vision.training.data.enrol_photos import (TABLECLOTHS, TEST_DESIGNS, design_photo, found_right, test_set,
                                         write_design_photos)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--designs", nargs="+", default=list(TEST_DESIGNS))
    parser.add_argument("--cloths", nargs="+", default=list(TABLECLOTHS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--suits", default="SHDC", help="the suits photographed (letters, default SHDC)")
    parser.add_argument("--failed", type=Path, default=None, help="save each failed photo here, annotated")
    parser.add_argument("--steps", action="store_true", help="time each part of one default enrolment instead")
    parser.add_argument("--page", action="store_true", help="time one default enrolment on the web page instead")
    args = parser.parse_args()
    if args.steps:
        enrolment_steps(args.designs[0], args.cloths[0], args.seeds[0])
        return
    if args.page:
        enrolment_page(args.designs[0], args.cloths[0], args.seeds[0])
        return
    by_cloth: dict[str, list[bool]] = defaultdict(list)
    by_design: dict[str, list[bool]] = defaultdict(list)
    render, find = [], []
    for design, cloth, seed, suit in test_set(args.designs, args.cloths, args.seeds, args.suits):
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


def enrolment_steps(design: str, cloth: str, seed: int) -> None:
    """One default enrolment of ``design``'s four suit photos on ``cloth``, each part timed."""
    from vision.training.fit.enrol import Progress, enrol

    moves: list[float] = []
    shown: list[tuple[str, float]] = []

    def moved(now: Progress) -> None:
        if (now.step, now.fraction) != (shown[-1] if shown else None):
            shown.append((now.step, now.fraction))
            moves.append(time.monotonic())

    with tempfile.TemporaryDirectory() as folder:
        paths = write_design_photos(design, cloth, seed, Path(folder), quality=92)
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
    print_pi_estimate(whole)


def print_pi_estimate(seconds: float) -> None:
    """The time ``seconds`` here would take on a Pi 5 and a Pi 4, scaled as stage 1 is (bench_profiles.py's
    estimate, measured in this run: an estimate, never a measurement)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_profiles import pi_factors, stage1_ms

    from vision.detector import CardDetector

    factors = pi_factors(stage1_ms(CardDetector()))
    print("  estimated: " + ", ".join(f"{name} about {seconds * factor / 60:.0f} min ({factor:.1f}x)"
                                      for name, factor in factors.items()))


def enrolment_page(design: str, cloth: str, seed: int) -> None:
    """One default enrolment started on the Decks page of a real server, timed as the family waits for it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from web_support import Server, deck_job_shown, phone_page

    with tempfile.TemporaryDirectory() as folder:
        paths = write_design_photos(design, cloth, seed, Path(folder), quality=92)
        server = Server(Path(folder) / "bench.db")
        try:
            with phone_page(timeout_ms=60_000) as page:
                page.goto(server.base + "/decks")
                promise = page.inner_text("#teach-promise")
                page.fill('input[name="title"]', "Bench")
                for field, photo in zip(("spades", "hearts", "diamonds", "clubs"), paths):
                    page.locator(f'input[name="{field}"]').set_input_files(str(photo))
                load = os.getloadavg()[0]
                started = time.monotonic()
                page.click("#teach-deck")
                moves, shown = [started], None
                while True:
                    now = deck_job_shown(page)
                    if now is not None and now[0] in ("done", "failed"):
                        break
                    if now is not None and now[1:] != shown:
                        shown = now[1:]
                        moves.append(time.monotonic())
                    time.sleep(0.2)
                whole = time.monotonic() - started
                print(f"{design} on {cloth}, on the page: {now[0]} in {whole:.1f} s ({whole / 60:.1f} min); "
                      f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, on {os.cpu_count()} cores")
                print(f"  the bar or its message moved {len(moves) - 1} times, the longest wait "
                      f"{max(b - a for a, b in zip(moves, [*moves[1:], started + whole])):.1f} s")
                print(f"  the page's promise: {promise.strip()}")
                print_pi_estimate(whole)
                print(f"  the page's message at the end: {page.inner_text('#deck-job-message').strip()}")
        finally:
            server.kill()


if __name__ == "__main__":
    main()
