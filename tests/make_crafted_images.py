"""Write the crafted photos of issue 55 into ``tests/data/crafted/`` (run it again to remake them).

Each file is small and refused before it is decoded; what each one does to a decoder
that trusts it is said beside it.

    python tests/make_crafted_images.py
"""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np

FOLDER = Path(__file__).resolve().parent / "data" / "crafted"


def segments(jpeg: bytes) -> list[tuple[int, int]]:
    """(offset, marker) of every marker before the first scan, and of every scan."""
    found, i = [], 2
    while i < len(jpeg) - 1:
        marker = jpeg[i + 1]
        found.append((i, marker))
        if marker == 0xDA:
            break
        i += 2 + struct.unpack(">H", jpeg[i + 2:i + 4])[0]
    return found


def small_jpeg(progressive: bool = False, width: int = 64, height: int = 48) -> bytes:
    image = np.full((height, width, 3), 200, np.uint8)
    cv2.rectangle(image, (8, 8), (width // 2, height // 2), (30, 30, 180), -1)
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] + ([cv2.IMWRITE_JPEG_PROGRESSIVE, 1] if progressive else [])
    return cv2.imencode(".jpg", image, params)[1].tobytes()


def frame(width: int, height: int) -> bytes:
    """A start-of-frame (baseline, 3 components, 4:4:4) of the given size."""
    body = struct.pack(">BHHB", 8, height, width, 3) + b"\x01\x11\x00\x02\x11\x01\x03\x11\x01"
    return b"\xff\xc0" + struct.pack(">H", len(body) + 2) + body


def hidden_frame(width: int = 9000, height: int = 9000) -> bytes:
    """A 64 x 48 JPEG whose header walk (before issue 55) saw 64 x 48, while libjpeg decodes
    ``width`` x ``height``: a frame behind ``FF 00`` (the old walk skipped it by a length; libjpeg
    skips the two bytes and finds it) and the real frame inside an APP1 that libjpeg skips."""
    jpeg = small_jpeg()
    (sof_at, _), = [(i, m) for i, m in segments(jpeg) if m == 0xC0]
    sof_len = 2 + struct.unpack(">H", jpeg[sof_at + 2:sof_at + 4])[0]
    real_sof = jpeg[sof_at:sof_at + sof_len]
    big = frame(width, height)
    app1_head = b"\xff\xe1" + struct.pack(">H", len(real_sof) + 2)
    hidden = big + app1_head
    fake = b"\xff\x00" + struct.pack(">H", len(hidden) + 2) + hidden
    return jpeg[:2] + fake + real_sof + jpeg[2:sof_at] + jpeg[sof_at + sof_len:]


def many_scans(scans: int = 300) -> bytes:
    """A 64 x 48 progressive JPEG whose last refinement scan is repeated up to ``scans`` scans in all
    (each scan is a pass over every pixel: 2,500 of them on a big frame held a photo slot for minutes)."""
    jpeg = small_jpeg(progressive=True)
    end = jpeg.rindex(b"\xff\xd9")
    last = jpeg.rindex(b"\xff\xda", 0, end)
    have = jpeg.count(b"\xff\xda")
    return jpeg[:end] + jpeg[last:end] * (scans - have) + b"\xff\xd9"


def unknown_marker() -> bytes:
    """A 64 x 48 JPEG with a reserved marker (``FF 02``) before its frame."""
    jpeg = small_jpeg()
    return jpeg[:2] + b"\xff\x02\x00\x04\x00\x00" + jpeg[2:]


def two_frames() -> bytes:
    """A 64 x 48 JPEG with a second frame (16000 x 16000) after its first."""
    jpeg = small_jpeg()
    (sof_at, _), = [(i, m) for i, m in segments(jpeg) if m == 0xC0]
    return jpeg[:sof_at] + jpeg[sof_at:sof_at + 19] + frame(16000, 16000) + jpeg[sof_at + 19:]


def thin_png() -> bytes:
    """16 x 12000 pixels: a strip, not a photo of cards (it tripped a resize assertion in the detector)."""
    return cv2.imencode(".png", np.full((12000, 16, 3), 220, np.uint8))[1].tobytes()


CRAFTED = {"hidden_frame.jpg": hidden_frame, "many_scans.jpg": many_scans, "unknown_marker.jpg": unknown_marker,
           "two_frames.jpg": two_frames, "thin_16x12000.png": thin_png}


def main() -> None:
    FOLDER.mkdir(parents=True, exist_ok=True)
    for name, make in CRAFTED.items():
        (FOLDER / name).write_bytes(make())
        print(name, (FOLDER / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
