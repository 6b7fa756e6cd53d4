"""Benchmark the declare check against the plain brute-force reference, in one process.

Usage: python bench/bench_declare.py [--hands 1000] [--seed 1] [--brute-hands 200]

Reports the median and worst time per hand for random 22-card hands and for hands
loaded with 8 or more wild cards, and the speed ratio against
:mod:`scorer.reference` on the same hands. Target (issue 2): median under 1 ms,
worst under 20 ms per hand on a 2-core machine. Figures only, no pass/fail.
"""

from __future__ import annotations

import argparse
import random
import signal
import statistics
import time
from collections import Counter
from typing import Callable, Sequence

from scorer import ALL_FACES, Card, get_rules
from scorer.declare import check_hand
from scorer.reference import brute_force_finishes
from scorer.wilds import wild_cards

NATURALS = [c for c in ALL_FACES if not c.is_joker]
RULES = get_rules()


def random_hands(rng: random.Random, count: int, min_wilds: int = 0) -> list[tuple[list[Card], Card]]:
    hands = []
    while len(hands) < count:
        tiplu = rng.choice(NATURALS)
        wilds = wild_cards(RULES, tiplu=tiplu)
        pool = [c for c in NATURALS for _ in range(3)]
        pool.remove(tiplu)
        if min_wilds:
            wild_pool = [c for c in pool if wilds.is_wild(c)]
            chosen = rng.sample(wild_pool, rng.randint(min_wilds, min(len(wild_pool), min_wilds + 4)))
            rest = Counter(pool) - Counter(chosen)
            hand = chosen + rng.sample(list(rest.elements()), 22 - len(chosen))
        else:
            hand = rng.sample(pool, 22)
        hands.append((hand, tiplu))
    return hands


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def time_each(check: Callable[[Sequence[Card], Card], bool], hands: list, cap_s: float | None = None
              ) -> tuple[list[float], list[bool | None]]:
    times, answers = [], []
    for hand, tiplu in hands:
        start = time.perf_counter()
        if cap_s:
            signal.setitimer(signal.ITIMER_REAL, cap_s)
        try:
            answers.append(check(hand, tiplu))
        except _Timeout:
            answers.append(None)
        finally:
            if cap_s:
                signal.setitimer(signal.ITIMER_REAL, 0)
        times.append(time.perf_counter() - start)
    return times, answers


def report(name: str, fast: list[float], brute: list[float] | None = None, skipped: int = 0) -> None:
    ms = [t * 1000 for t in fast]
    line = (f"{name:<28} hands {len(ms):>5}  median {statistics.median(ms):7.3f} ms  "
            f"p99 {sorted(ms)[int(len(ms) * 0.99) - 1]:7.3f} ms  worst {max(ms):8.3f} ms")
    print(line)
    if brute:
        n = len(brute)
        ratio = statistics.median(brute[:n]) / statistics.median(fast[:n])
        total = sum(brute[:n]) / sum(fast[:n])
        print(f"{'':<28} brute force on the first {n}: median {statistics.median(brute) * 1000:8.3f} ms, "
              f"worst {max(brute) * 1000:9.1f} ms; speed-up x{ratio:.1f} (median), x{total:.1f} (total)"
              + (f"; {skipped} brute-force runs stopped at the cap" if skipped else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--brute-hands", type=int, default=200, help="hands also run through the brute force")
    parser.add_argument("--brute-cap", type=float, default=2.0, help="seconds before a brute-force run is stopped")
    args = parser.parse_args()
    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(args.seed)

    def fast(hand: Sequence[Card], tiplu: Card) -> bool:
        return check_hand(hand, RULES, tiplu=tiplu).valid

    def brute(hand: Sequence[Card], tiplu: Card) -> bool:
        return brute_force_finishes(hand, RULES, tiplu=tiplu)

    for name, hands in (("random 22-card hands", random_hands(rng, args.hands)),
                        ("hands with 8+ wild cards", random_hands(rng, args.hands, min_wilds=8))):
        time_each(fast, hands[:50])  # warm the meld cache as a table would
        fast_times, fast_answers = time_each(fast, hands)
        subset = hands[:args.brute_hands]
        brute_times, brute_answers = time_each(brute, subset, cap_s=args.brute_cap)
        agree = sum(1 for a, b in zip(fast_answers, brute_answers) if b is not None and a == b)
        decided = sum(1 for b in brute_answers if b is not None)
        report(name, fast_times, [t for t, b in zip(brute_times, brute_answers) if b is not None],
               skipped=len(subset) - decided)
        print(f"{'':<28} valid {sum(fast_answers)} of {len(hands)}; agrees with brute force on {agree} of {decided}")
    print("target: median < 1 ms, worst < 20 ms per hand")


if __name__ == "__main__":
    main()
