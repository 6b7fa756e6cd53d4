"""Peak memory of a real ``tiplu serve`` while phones upload big photos at once.

Why it matters: decoding every upload before the two-photo limit takes the server from
0.41 GB idle to 1.7-1.9 GB with eight concurrent uploads of a 40-megapixel PNG (about
116 KB on disk each). So the header's pixel count is checked first and a photo is
decoded, read and stored only inside one of two slots. This starts a
server, loads the model with one small photo, then posts N copies of a 40 MP PNG
(made here, at run time) at once to ``/api/detect`` with a session, so each is
decoded, read and kept. It prints the idle and peak resident memory of the
server process (the kernel's high-water mark, ``VmHWM``), the peak with one upload
as the baseline, and the ratios. No assertions: the figures depend on the machine.

    python bench/bench_memory.py [--uploads 8] [--megapixels 40]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import cv2
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from web.photos import MAX_PARALLEL  # noqa: E402
from web_support import PLAYERS, Server, multipart  # noqa: E402

MB = 1024 * 1024


def big_png(megapixels: float) -> bytes:
    """A flat PNG of about ``megapixels`` (a few cards' worth of shapes, so it is not all one colour)."""
    width = int((megapixels * 1_000_000 * 4 / 3) ** 0.5)
    height = int(megapixels * 1_000_000) // width
    image = np.full((height, width, 3), 235, np.uint8)
    for i in range(6):
        cv2.rectangle(image, (400 + i * 900, 800), (1100 + i * 900, 1800), (40, 40, 200), -1)
    return cv2.imencode(".png", image, [cv2.IMWRITE_PNG_COMPRESSION, 9])[1].tobytes()


def post(url: str, data: bytes, kind: str) -> int:
    request = urllib.request.Request(url, data=data, method="POST", headers={"Content-Type": kind})
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def memory_mb(pid: int, field: str) -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak so far) of a process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uploads", type=int, default=8, help="photos posted at once (default 8)")
    parser.add_argument("--megapixels", type=float, default=40, help="size of each photo (default 40)")
    args = parser.parse_args()
    png = big_png(args.megapixels)
    small = cv2.imencode(".png", np.full((480, 640, 3), 235, np.uint8))[1].tobytes()
    with tempfile.TemporaryDirectory() as folder:
        server = Server(Path(folder) / "bench.db", "--threads", str(max(8, args.uploads + 1)))
        try:
            sid = server.call("POST", "/api/sessions", {"players": PLAYERS})[1]["id"]
            warm = post(server.base + "/api/detect", *multipart({"session": str(sid)}, small))
            pid = server.process.pid
            idle = memory_mb(pid, "VmRSS")
            idle_peak = memory_mb(pid, "VmHWM")
            data, kind = multipart({"session": str(sid)}, png)
            single = post(server.base + "/api/detect", data, kind)
            one_peak = memory_mb(pid, "VmHWM")
            statuses: list[int] = []
            threads = [threading.Thread(target=lambda: statuses.append(post(server.base + "/api/detect", data, kind)))
                       for _ in range(args.uploads)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            elapsed = time.perf_counter() - started
            peak = memory_mb(pid, "VmHWM")
        finally:
            server.kill()
    print(f"photo: {args.megapixels:g} MP PNG, {len(png) / 1024:.0f} KB on disk; warm-up answered {warm}")
    print(f"{args.uploads} uploads at once: statuses {sorted(statuses)} in {elapsed:.1f} s")
    print(f"server memory: idle {idle:.0f} MB (peak before the uploads {idle_peak:.0f} MB)")
    print(f"  peak with 1 upload:  {one_peak:.0f} MB = {one_peak / idle:.2f}x idle (answered {single})")
    print(f"  peak with {args.uploads} at once: {peak:.0f} MB = {peak / idle:.2f}x idle, "
          f"{peak / one_peak:.2f}x one upload (at most {MAX_PARALLEL} are decoded at a time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
