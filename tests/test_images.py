"""Safe photo decoding: good photos decode, every bad one gives a typed ImageError, never a crash.

The 20000x20000 PNG is a real, valid file (1-bit grey, ~60 KB compressed): decoding it
would need 1.2 GB, so the test checks the refusal comes from the header and that the
process' peak memory did not grow.
"""

from __future__ import annotations

import resource
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from scorer import TipluError
from vision.images import MAX_BYTES, ImageError, decode_image, read_header, read_image

ROOT = Path(__file__).resolve().parent.parent
TIPLU = Path(sys.executable).with_name("tiplu")  # the console script of the running venv
SAMPLE = ROOT / "sample_images" / "tiplu.jpg"


def _encoded(ext: str, image: np.ndarray) -> bytes:
    ok, buf = cv2.imencode(ext, image)
    assert ok
    return buf.tobytes()


def _photo(h: int = 60, w: int = 80) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.integers(0, 255, (h, w, 3), np.uint8)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def huge_png(side: int = 20000) -> bytes:
    """A valid 1-bit greyscale PNG of side x side pixels, compressed row by row."""
    comp = zlib.compressobj(9)
    row = b"\x00" + b"\x00" * ((side + 7) // 8)
    idat = b"".join(comp.compress(row) for _ in range(side)) + comp.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", idat) + _png_chunk(b"IEND", b"")


def jpeg_claiming(width: int, height: int) -> bytes:
    """A real small JPEG whose start-of-frame header is patched to claim another size."""
    data = bytearray(_encoded(".jpg", _photo()))
    i = 2
    while data[i + 1] not in (0xC0, 0xC1, 0xC2):
        i += 2 + struct.unpack(">H", data[i + 2:i + 4])[0]
    data[i + 5:i + 9] = struct.pack(">HH", height, width)
    return bytes(data)


@pytest.mark.parametrize("ext, channels", [(".jpg", 3), (".png", 3), (".webp", 3), (".png", 1), (".png", 4)])
def test_good_images_decode_to_bgr(ext: str, channels: int) -> None:
    image = _photo(48, 64)
    if channels == 1:
        image = image[:, :, 0]
    elif channels == 4:
        image = np.dstack([image, np.full((48, 64), 255, np.uint8)])
    out = decode_image(_encoded(ext, image))
    assert out.shape == (48, 64, 3) and out.dtype == np.uint8


def test_jpeg_with_data_after_the_end_marker_decodes() -> None:
    """Motion photos append a video after the JPEG's end marker; the photo must still decode."""
    data = _encoded(".jpg", _photo(48, 64)) + b"\x00\x00\x00\x18ftypmp42" + bytes(range(256)) * 40
    assert decode_image(data).shape == (48, 64, 3)


def test_png_pixels_come_back_exactly() -> None:
    image = _photo()
    assert np.array_equal(decode_image(_encoded(".png", image)), image)


@pytest.mark.parametrize("ext, fmt", [(".jpg", "jpeg"), (".png", "png"), (".webp", "webp")])
def test_header_gives_size_without_decoding(ext: str, fmt: str) -> None:
    data = _encoded(ext, _photo(37, 91))
    assert read_header(data[:4096]) == read_header(data)
    header = read_header(data)
    assert (header.format, header.width, header.height) == (fmt, 91, 37)


def _bad_inputs() -> list[tuple[str, bytes, str]]:
    jpg = _encoded(".jpg", _photo(200, 300))
    png = _encoded(".png", _photo(200, 300))
    return [
        ("empty", b"", "empty"),
        ("text", b"hello, this is not a photo\n", "not a JPEG, PNG or WebP"),
        ("gif", b"GIF89a" + b"\x00" * 100, "GIF"),
        ("pdf", b"%PDF-1.4\n" + b"\x00" * 100, "PDF"),
        ("bmp", _encoded(".bmp", _photo()), "BMP"),
        ("heic", b"\x00\x00\x00\x18ftypheic" + b"\x00" * 100, "HEIC"),
        ("truncated jpeg", jpg[: len(jpg) // 2], "cut off"),
        ("jpeg header only", jpg[:120], "cut off"),
        ("truncated png", png[: len(png) // 2], "cut off"),
        ("png signature only", png[:12], "cut off"),
        ("tiny image", _encoded(".png", _photo(8, 8)), "at least 16 px"),
        ("50 MB", b"\xff\xd8\xff\xe0" + b"\x00" * (50 * 1024 * 1024), "over the"),
        ("jpeg claiming 20000x20000", jpeg_claiming(20000, 20000), "MP limit"),
        ("png 20000x20000", huge_png(), "MP limit"),
        ("broken scan header", jpg[:jpg.index(b"\xff\xda")] + b"\xff\xda\x00\x02\xff\xd9", "cannot be decoded"),
    ]


@pytest.mark.parametrize("label, data, needle", _bad_inputs(), ids=[b[0] for b in _bad_inputs()])
def test_bad_images_give_typed_errors(label: str, data: bytes, needle: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ImageError, match=needle) as info:
        decode_image(data)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert isinstance(info.value, TipluError) and isinstance(info.value, ValueError)
    assert grown_mb < 200, f"{label}: peak memory grew {grown_mb:.0f} MB"


def test_limits_are_parameters() -> None:
    data = _encoded(".jpg", _photo(100, 100))
    with pytest.raises(ImageError, match="over the"):
        decode_image(data, max_bytes=len(data) - 1)
    with pytest.raises(ImageError, match="MP limit"):
        decode_image(data, max_pixels=9999)
    assert decode_image(data, max_pixels=10000).shape == (100, 100, 3)
    assert MAX_BYTES >= 15 * 1024 * 1024


@pytest.mark.parametrize("value", ["a string", None, 12])
def test_wrong_argument_type(value: object) -> None:
    with pytest.raises(ImageError, match="bytes"):
        decode_image(value)  # type: ignore[arg-type]


def test_read_image_files(tmp_path: Path) -> None:
    assert read_image(SAMPLE).shape == (768, 1024, 3)
    with pytest.raises(ImageError, match="no such file"):
        read_image(tmp_path / "missing.jpg")
    with pytest.raises(ImageError, match="folder"):
        read_image(tmp_path)
    big = tmp_path / "big.jpg"
    big.write_bytes(b"\xff\xd8\xff" + b"\x00" * 4096)
    with pytest.raises(ImageError, match="limit"):
        read_image(big, max_bytes=1024)


@pytest.mark.parametrize("command", ["detect", "score"])
def test_cli_reports_bad_photos_without_a_traceback(tmp_path: Path, command: str) -> None:
    bad = tmp_path / "broken.jpg"
    bad.write_bytes(SAMPLE.read_bytes()[:5000])
    args = [str(TIPLU), command, str(bad)] + (["--tiplu", "JC"] if command == "score" else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "cut off" in proc.stderr and str(bad) in proc.stderr
    assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_detect_goes_on_after_a_bad_photo(tmp_path: Path) -> None:
    empty = tmp_path / "empty.png"
    empty.write_bytes(b"")
    proc = subprocess.run([str(TIPLU), "detect", str(empty), str(SAMPLE)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "empty" in proc.stderr
    assert len(proc.stdout.splitlines()) == 1 and str(SAMPLE) in proc.stdout
