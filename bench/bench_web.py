"""Time the ledger behind a real ``tiplu serve`` (waitress) process.

Prints rounds per second for N clients posting rounds at once (each round is
scored by the scorer and committed in its own transaction, WAL, synchronous=FULL),
the median latency of one round post, and how long the ledger page and the
session JSON take with that many rounds. No assertions: timings depend on the
machine and its load.

    python bench/bench_web.py [--clients 4] [--rounds 50]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from web_support import PLAYERS, Server, nepali_round  # noqa: E402


def timed_get(url: str) -> float:
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as response:
        response.read()
    return (time.perf_counter() - started) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=50, help="rounds per client")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder) / "bench.db")
        try:
            sid = server.call("POST", "/api/sessions", {"players": PLAYERS})[1]["id"]
            latencies: list[float] = []
            lock = threading.Lock()

            def client(index: int) -> None:
                for n in range(args.rounds):
                    started = time.perf_counter()
                    status, _ = server.call("POST", f"/api/sessions/{sid}/rounds",
                                            nepali_round(Ben={"seen": True, "cards": ["10C", "JC", "QC", "QC"]}),
                                            headers={"Idempotency-Key": f"{index}-{n}"})
                    elapsed = (time.perf_counter() - started) * 1000
                    assert status == 201
                    with lock:
                        latencies.append(elapsed)

            started = time.perf_counter()
            threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - started
            total = args.clients * args.rounds
            print(f"{total} rounds from {args.clients} clients: {wall:.2f} s, {total / wall:.0f} rounds/s, "
                  f"median post {statistics.median(latencies):.1f} ms, worst {max(latencies):.1f} ms")
            page = statistics.median(timed_get(f"{server.base}/sessions/{sid}") for _ in range(5))
            api = statistics.median(timed_get(f"{server.base}/api/sessions/{sid}") for _ in range(5))
            form = statistics.median(timed_get(f"{server.base}/sessions/{sid}/rounds/new") for _ in range(5))
            print(f"with {total} rounds: ledger page {page:.0f} ms, session JSON {api:.0f} ms, "
                  f"round form {form:.0f} ms (medians of 5)")
        finally:
            server.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
