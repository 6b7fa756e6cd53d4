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

    python bench/bench_memory.py [--uploads 8] [--megapixels 40] [--kind png|progressive] [--bursts 1]

``--kind progressive`` posts a progressive 4:4:4 JPEG instead (the decoder then holds every
coefficient of the photo until the last scan: the heaviest photo per pixel), and
``--bursts 2`` posts the burst again, since freed memory that the allocator keeps shows
only in the second one.
"""

from __future__ import annotations

import argparse
import http.client
import sys
import tempfile
import threading
import time
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


def big_progressive_jpeg(megapixels: float) -> bytes:
    """The same picture as :func:`big_png`, as a progressive JPEG without chroma subsampling (4:4:4)."""
    image = cv2.imdecode(np.frombuffer(big_png(megapixels), np.uint8), cv2.IMREAD_COLOR)
    return cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1, cv2.IMWRITE_JPEG_QUALITY, 90,
                                        cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444]
                        )[1].tobytes()


def post(url: str, data: bytes, kind: str, source: str = "127.0.0.1") -> int:
    """POST one upload from the loopback address ``source`` (each phone has its own address); its status, or
    0 when the server closed the connection instead."""
    host, port = url.removeprefix("http://").split("/", 1)[0].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=600, source_address=(source, 0))
    try:
        connection.request("POST", "/" + url.split("/", 3)[3], body=data, headers={"Content-Type": kind})
        response = connection.getresponse()
        response.read()
        return int(response.status)
    except OSError:
        return 0
    finally:
        connection.close()


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
    parser.add_argument("--kind", choices=("png", "progressive"), default="png",
                        help="the photo: a PNG, or a progressive 4:4:4 JPEG (default png)")
    parser.add_argument("--bursts", type=int, default=1, help="bursts posted one after the other (default 1)")
    args = parser.parse_args()
    png = big_png(args.megapixels) if args.kind == "png" else big_progressive_jpeg(args.megapixels)
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
            peaks: list[float] = []
            for _burst in range(args.bursts):
                statuses: list[int] = []
                threads = [threading.Thread(target=lambda n=n: statuses.append(
                               post(server.base + "/api/detect", data, kind, f"127.0.1.{n + 2}")))
                           for n in range(args.uploads)]
                started = time.perf_counter()
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                elapsed = time.perf_counter() - started
                peaks.append(memory_mb(pid, "VmHWM"))
                print(f"burst {len(peaks)}: {args.uploads} uploads at once: statuses {sorted(statuses)} in "
                      f"{elapsed:.1f} s; peak so far {peaks[-1]:.0f} MB")
            peak = peaks[-1]
        finally:
            server.kill()
    print(f"photo: {args.megapixels:g} MP {args.kind}, {len(png) / 1024:.0f} KB on disk; warm-up answered {warm}")
    print(f"server memory: idle {idle:.0f} MB (peak before the uploads {idle_peak:.0f} MB)")
    print(f"  peak with 1 upload:  {one_peak:.0f} MB = {one_peak / idle:.2f}x idle (answered {single})")
    print(f"  peak with {args.uploads} at once: {peak:.0f} MB = {peak / idle:.2f}x idle, "
          f"{peak / one_peak:.2f}x one upload (at most {MAX_PARALLEL} are decoded at a time)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
