"""Wrong table codes, counted per address: a few free tries, then waits that double.

Why not Flask-Limiter: it counts *requests* per time window, and the same
limit for everyone. What needs limiting here is *wrong codes* from one address,
with a wait that grows each time (1 s, 2 s, 4 s, ... up to an hour), while a right
code from any other address goes straight through and a right code from the
same address clears its record. That is a dictionary and a lock, so it is written
here rather than bent out of a rate limiter (its ``deduct_when`` hook counts only
failed requests, but its windows are fixed and it adds the ``limits`` package).

With the defaults (5 free tries, then 1 s doubling to an hour) one address gets
about 20 guesses in its first hour and then 24 a day, so a 6-digit code holds for
over a hundred years against one address; a longer code
(:func:`web.security.new_table_code`) for a shared network multiplies that.

>>> clock = [0.0]
>>> throttle = CodeThrottle(free_tries=2, first_wait=1, clock=lambda: clock[0])
>>> throttle.failed("10.0.0.9"), throttle.failed("10.0.0.9"), throttle.failed("10.0.0.9")
(0, 0, 1)
>>> throttle.wait_left("10.0.0.9"), throttle.wait_left("10.0.0.7")
(1, 0)
>>> clock[0] = 1.0
>>> throttle.wait_left("10.0.0.9"), throttle.failed("10.0.0.9")
(0, 2)
>>> throttle.succeeded("10.0.0.9"); throttle.failed("10.0.0.9")
0

Counting per address alone is not enough: a guesser with many addresses (a /64 of IPv6,
a botnet, or loopback aliases behind a careless proxy) spends each one's free tries and
moves on, and addresses beyond :data:`MAX_ADDRESSES` are forgotten. So the whole server
also has a :class:`GuessBudget` of wrong codes, whoever sends them: once it is spent no
code is compared at all until it refills, and only devices already let in (their signed
cookie) get through.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass
from typing import Callable

#: How many addresses are remembered at most; the least recently failing are forgotten first.
MAX_ADDRESSES = 10_000


@dataclass
class _Record:
    failures: int = 0
    blocked_until: float = 0.0
    last_failure: float = 0.0


class CodeThrottle:
    """Wrong table codes per address, with growing waits once the free tries are spent.

    ``failed`` records a wrong code and returns the seconds the address must now
    wait; ``wait_left`` says how long it still has to wait (0: it may try);
    ``succeeded`` forgets the address. Safe to share between waitress's threads.
    """

    def __init__(self, *, free_tries: int = 5, first_wait: float = 1.0, max_wait: float = 3600.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.free_tries = free_tries
        self.first_wait = first_wait
        self.max_wait = max_wait
        self._clock = clock
        self._records: dict[str, _Record] = {}
        self._lock = threading.Lock()

    def wait_left(self, address: str) -> int:
        """Whole seconds until ``address`` may try a code again (0 when it may now)."""
        with self._lock:
            record = self._records.get(address)
            if record is None:
                return 0
            return max(0, math.ceil(record.blocked_until - self._clock()))

    def failed(self, address: str) -> int:
        """Record a wrong code from ``address``; returns the wait (seconds) it now has before the next try."""
        with self._lock:
            now = self._clock()
            record = self._records.pop(address, None) or _Record()
            record.failures += 1
            record.last_failure = now
            over = record.failures - self.free_tries
            wait = 0.0 if over <= 0 else min(self.max_wait, self.first_wait * 2 ** min(over - 1, 64))
            record.blocked_until = now + wait
            self._records[address] = record
            while len(self._records) > MAX_ADDRESSES:
                del self._records[next(iter(self._records))]
            return math.ceil(wait)

    def failures(self, address: str) -> int:
        """How many wrong codes ``address`` sent since its last right one."""
        with self._lock:
            record = self._records.get(address)
            return 0 if record is None else record.failures

    def succeeded(self, address: str) -> None:
        """A right code from ``address``: forget its wrong ones."""
        with self._lock:
            self._records.pop(address, None)


#: Wrong codes the whole server takes, all addresses together, before it compares none.
GUESS_BUDGET = 100
#: Seconds for one wrong code of the budget to come back: 100 an hour.
GUESS_REFILL_SECONDS = 36.0


class GuessBudget:
    """Wrong codes the whole server may still take, refilled one every ``refill_seconds`` (a token bucket).

    With the defaults a guesser, however many addresses it has, gets 100 wrong codes at
    once and then 100 an hour: trying every 6-digit code takes 10,000 hours (417 days),
    half of them 208 days on average; a 10-digit code (``--table-code-length 10``) takes
    over 10,000 years.

    >>> clock = [0.0]
    >>> budget = GuessBudget(size=2, refill_seconds=10, clock=lambda: clock[0])
    >>> budget.spend(), budget.spend(), budget.wait_left()
    (0, 10, 10)
    >>> clock[0] = 10.0
    >>> budget.wait_left(), budget.spend(), budget.wait_left()
    (0, 10, 10)
    """

    def __init__(self, *, size: int = GUESS_BUDGET, refill_seconds: float = GUESS_REFILL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.size = size
        self.refill_seconds = refill_seconds
        self._clock = clock
        self._left = float(size)
        self._at = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self._clock()
        self._left = min(float(self.size), self._left + (now - self._at) / self.refill_seconds)
        self._at = now

    def _wait(self) -> int:
        return 0 if self._left >= 1 else math.ceil((1 - self._left) * self.refill_seconds - 1e-6)

    def wait_left(self) -> int:
        """Whole seconds until a code may be compared again (0: now)."""
        with self._lock:
            self._refill()
            return self._wait()

    def spend(self) -> int:
        """Take one wrong code off the budget; returns :meth:`wait_left` after it."""
        with self._lock:
            self._refill()
            self._left = max(0.0, self._left - 1)
            return self._wait()
