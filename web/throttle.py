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
