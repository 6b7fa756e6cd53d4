"""Decode uploaded photos safely: check type, size and pixel count before decoding.

A photo reaches tiplu from a phone upload (``POST /api/detect``) or the command line, so
it may be anything: not an image, cut off mid-transfer, empty, huge, or a small file that
claims 20000x20000 pixels (a "decompression bomb" that would allocate over a gigabyte).
:func:`decode_image` reads the width and height from the JPEG, PNG or WebP header first
and only decodes when both the byte size and the pixel count are within limits; every
refusal is an :class:`ImageError` whose message says what to do instead.

>>> import cv2, numpy as np
>>> ok, png = cv2.imencode(".png", np.zeros((30, 40, 3), np.uint8))
>>> decode_image(png.tobytes()).shape
(30, 40, 3)
>>> decode_image(b"hello")  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
vision.images.ImageError: not a JPEG, PNG or WebP image; send a photo from the camera
"""

from __future__ import annotations

import io
import os
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from scorer import TipluError
from vision import OPENCV_MAX_PIXELS
from scorer.messages import N_

#: Default upload limit: a 48-megapixel phone JPEG is about 15 MB.
MAX_BYTES = 25 * 1024 * 1024
#: Default pixel limit (8192 x 6144 = 50 MP): decoding it takes 150 MB of memory.
MAX_PIXELS = OPENCV_MAX_PIXELS
MIN_SIDE = 16


class ImageError(TipluError):
    """A photo that cannot be used; the message says what to send instead."""


@dataclass(frozen=True)
class ImageHeader:
    """What the file header says: ``format`` ("jpeg", "png", "webp"), width and height in pixels.

    >>> ImageHeader("png", 40, 30).pixels
    1200
    """

    format: str
    width: int
    height: int

    @property
    def pixels(self) -> int:
        return self.width * self.height


_JPEG_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}
#: Markers with a length that may come before the first scan (and between scans): frames,
#: tables (DHT, DAC, DQT, DNL, DRI), APPn and comments. Any other is refused, as the decoder
#: (libjpeg) refuses it or, worse, skips it to find a frame the walk never saw.
_JPEG_SEGMENTS = _JPEG_SOF | {0xC4, 0xCC, 0xDB, 0xDC, 0xDD, *range(0xE0, 0xF0), 0xFE}
#: Start-of-scan markers a JPEG may have: a progressive photo has about 10; each scan costs a
#: pass over every pixel, so 2,500 of them in a 690 KB file would hold a photo slot for minutes.
MAX_SCANS = 40
#: How long a side may be against the other: a panorama is 4:1; a 16 x 12000 strip is no photo of cards.
MAX_ASPECT = 12


def _damaged_jpeg(why: str) -> ImageError:
    return ImageError(N_("the JPEG header is damaged (%(why)s); take or export the photo again"), why=why)


#: Start-of-frame markers of progressive JPEGs: their decoder keeps every coefficient until the last scan.
_JPEG_PROGRESSIVE = {0xC2, 0xC6, 0xCA, 0xCE}


class _JpegLayout(NamedTuple):
    """Where a JPEG's header walk found things: (width, height) from the start-of-frame, the offsets of the
    start-of-frame and of the first start-of-scan (None for each when the file ends before it)."""

    size: tuple[int, int] | None
    scan: int | None
    frame: int | None


def _jpeg_segments(data: bytes) -> _JpegLayout:
    """Walk the JPEG marker chain: its :class:`_JpegLayout`.

    Segments are skipped by their length, so an EXIF thumbnail (a whole JPEG inside APP1)
    is never mistaken for the photo. A marker the decoder would not take (``FF 00``, a
    reserved one, a second start-of-frame or start-of-image) is refused: the decoder
    skips what it does not know and would find a frame hidden there, whose size the
    walk never checked.

    >>> _jpeg_segments(b"\\xff\\xd8\\xff\\x00\\x00\\x04")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    vision.images.ImageError: the JPEG header is damaged (marker FF 00); take or export the photo again
    """
    i = 2
    n = len(data)
    size: tuple[int, int] | None = None
    frame: int | None = None
    while i + 4 <= n:
        if data[i] != 0xFF:
            raise _damaged_jpeg(f"byte {i} is no marker")
        marker = data[i + 1]
        if marker == 0xFF:
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker == 0xDA:
            return _JpegLayout(size, i, frame)
        if marker == 0xD9:
            break
        if marker not in _JPEG_SEGMENTS:
            raise _damaged_jpeg(f"marker FF {marker:02X}")
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        if length < 2:
            raise _damaged_jpeg(f"marker FF {marker:02X} of length {length}")
        if marker in _JPEG_SOF:
            if size is not None:
                raise _damaged_jpeg("two frames")
            if length < 8 or i + 9 > n:
                raise _damaged_jpeg("a frame too short to give its size")
            height, width = struct.unpack(">HH", data[i + 5:i + 9])
            size, frame = (width, height), i
        i += 2 + length
    return _JpegLayout(size, None, frame)


def _jpeg_frame(data: bytes) -> tuple[int, list[tuple[int, int]]]:
    """The start-of-frame's marker and each component's sampling factors (h, v), from a JPEG whose
    header :func:`_jpeg_segments` accepted."""
    i = _jpeg_segments(data).frame
    if i is None:
        return 0, []
    count = data[i + 9] if i + 9 < len(data) else 0
    factors = [(data[i + 11 + 3 * c] >> 4, data[i + 11 + 3 * c] & 15) for c in range(count)
               if i + 11 + 3 * c < len(data)]
    return data[i + 1], factors


def decode_memory(data: bytes) -> int:
    """Bytes decoding ``data`` holds at its peak: the BGR pixels, and for a progressive JPEG every
    coefficient of every component (2 bytes each) until the last scan is read.

    A 40-megapixel progressive 4:4:4 JPEG of 470 KB takes 360 MB to decode, three times
    as much as a baseline one of the same size; :func:`web.photos.photo_slot` counts it so.

    >>> import cv2, numpy as np
    >>> image = np.zeros((480, 640, 3), np.uint8)
    >>> decode_memory(cv2.imencode(".png", image)[1].tobytes())
    921600
    >>> decode_memory(cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1,
    ...     cv2.IMWRITE_JPEG_SAMPLING_FACTOR, cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444])[1].tobytes())
    2764800
    """
    header = read_header(data)
    total = header.pixels * 3
    if header.format == "jpeg":
        marker, factors = _jpeg_frame(data)
        if marker in _JPEG_PROGRESSIVE and factors:
            h_max, v_max = max(h for h, _v in factors) or 1, max(v for _h, v in factors) or 1
            for h, v in factors:
                width, height = -(-header.width * h // h_max), -(-header.height * v // v_max)
                total += -(-width // 8) * -(-height // 8) * 64 * 2
    return total


#: Seconds a progressive JPEG's scans may take to read (``decode_image(..., deadline=)``): a 40 MP one
#: with 10 scans takes 1.3 s on a laptop, a few times that on a Raspberry Pi.
DECODE_SECONDS = 20.0


def read_scans_in_time(data: bytes, seconds: float) -> None:
    """Read a progressive JPEG's scans one at a time, at an eighth of its size, and stop with
    :class:`ImageError` once they take more than ``seconds``.

    OpenCV's decoder cannot be stopped half way, and a progressive JPEG makes it pass
    over every pixel once per scan: a few thousand scans hold a photo slot for minutes.
    So the scans are read first with Pillow's decoder (libjpeg too, fed one scan at a
    time, the clock looked at after each; the eighth-size output costs little memory),
    and only a file whose scans are read in time is decoded for real.
    """
    from PIL import Image

    started = time.monotonic()
    try:
        with Image.open(io.BytesIO(data)) as picture:
            picture.draft(picture.mode, (max(1, picture.width // 8), max(1, picture.height // 8)))
            picture.load_prepare()
            name, extents, offset, args = picture.tile[0]
            decoder = Image._getdecoder(picture.mode, name, args, picture.decoderconfig)
            try:
                decoder.setimage(picture.im, extents)
                pending, position, cut = b"", offset, data.find(b"\xff\xda", offset + 1)
                while position < len(data):
                    end = cut if cut > position else len(data)
                    pending += data[position:end]
                    position = end
                    cut = data.find(b"\xff\xda", end + 2)
                    consumed, _status = decoder.decode(pending)
                    if time.monotonic() - started > seconds:
                        raise ImageError(N_("the JPEG takes over %(s)s seconds to read (too many or too heavy scans); "
                                            "export the photo again as a plain JPEG"), s=f"{seconds:g}")
                    if consumed < 0:
                        break
                    pending = pending[consumed:]
            finally:
                decoder.cleanup()
    except ImageError:
        raise
    except (OSError, ValueError, SyntaxError):
        return  # what Pillow cannot read, OpenCV's decoder judges next


def jpeg_scans(data: bytes, first_scan: int) -> int:
    """Start-of-scan markers from ``first_scan`` to the end marker.

    Inside compressed data every ``FF`` byte is followed by ``00`` or a restart marker,
    so ``FF DA`` there is always a scan; what a phone appends after the end (a motion
    photo's video) is not counted.

    >>> jpeg_scans(b"\\xff\\xda..\\xff\\x00\\xff\\xda.\\xff\\xd9\\xff\\xda", 0)
    2
    """
    end = data.find(b"\xff\xd9", first_scan)
    return data.count(b"\xff\xda", first_scan, end if end >= 0 else len(data))


def _jpeg_size(data: bytes) -> tuple[int, int]:
    size = _jpeg_segments(data).size
    if size is None:
        raise ImageError(N_("the JPEG is cut off before its size is given; upload the whole file again"))
    return size


def _png_size(data: bytes) -> tuple[int, int]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ImageError(N_("the PNG is cut off or damaged (no IHDR header); upload the whole file again"))
    return struct.unpack(">II", data[16:24])


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return (int.from_bytes(data[24:27], "little") + 1, int.from_bytes(data[27:30], "little") + 1)
    if chunk == b"VP8 " and len(data) >= 30:
        w, h = struct.unpack("<HH", data[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    raise ImageError(N_("the WebP header is damaged or cut off; upload the whole file again"))


def read_header(data: bytes) -> ImageHeader:
    """Format and size from the first bytes, without decoding any pixels.

    >>> read_header(b"\\x89PNG\\r\\n\\x1a\\n" + b"\\x00\\x00\\x00\\rIHDR" + (640).to_bytes(4, "big")
    ...             + (480).to_bytes(4, "big"))
    ImageHeader(format='png', width=640, height=480)
    """
    if data[:3] == b"\xff\xd8\xff":
        fmt, (w, h) = "jpeg", _jpeg_size(data)
    elif data[:8] == b"\x89PNG\r\n\x1a\n":
        fmt, (w, h) = "png", _png_size(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        fmt, (w, h) = "webp", _webp_size(data)
    else:
        raise _unknown_kind(data)
    return ImageHeader(fmt, int(w), int(h))


def _unknown_kind(data: bytes) -> ImageError:
    """The refusal of a file that is no JPEG, PNG or WebP, naming what it is where the first bytes tell."""
    for magic, name in ((b"GIF8", "GIF"), (b"%PDF", "PDF"), (b"BM", "BMP"), (b"II*\x00", "TIFF"),
                        (b"MM\x00*", "TIFF"), (b"PK\x03\x04", "ZIP")):
        if data.startswith(magic):
            return ImageError(N_("this is a %(kind)s file, not a JPEG, PNG or WebP image; send a photo from the camera"),
                              kind=name)
    if data[4:12] in (b"ftypheic", b"ftypheix", b"ftypmif1", b"ftyphevc"):
        return ImageError(N_("this is a HEIC photo (set the camera to 'most compatible' / JPEG), not a JPEG, PNG or "
                             "WebP image; send a photo from the camera"))
    return ImageError(N_("not a JPEG, PNG or WebP image; send a photo from the camera"))


def _check_complete(header: ImageHeader, data: bytes) -> None:
    if header.format == "jpeg":
        # the end marker follows the compressed data (which never holds FF D9); phones may
        # append more after it (motion photos add a video), so it need not be the last bytes
        scan = _jpeg_segments(data).scan
        if scan is None or b"\xff\xd9" not in data[scan:]:
            raise ImageError(N_("the JPEG is cut off (no end marker); upload the whole file again"))
        scans = jpeg_scans(data, scan)
        if scans > MAX_SCANS:
            raise ImageError(N_("the JPEG has %(scans)s scans, over the %(limit)s a camera writes; export the "
                                "photo again as a plain JPEG"), scans=scans, limit=MAX_SCANS)
    if header.format == "png" and b"IEND" not in data[-64:]:
        raise ImageError(N_("the PNG is cut off (no IEND chunk); upload the whole file again"))
    if header.format == "webp":
        declared = int.from_bytes(data[4:8], "little") + 8
        if declared > len(data):
            raise ImageError(N_("the WebP is cut off; upload the whole file again"))


def decode_image(data: bytes, *, max_bytes: int = MAX_BYTES, max_pixels: int = MAX_PIXELS,
                 deadline: float = DECODE_SECONDS) -> np.ndarray:
    """A BGR ``uint8`` image (H, W, 3) from JPEG/PNG/WebP bytes, or :class:`ImageError`.

    Checks, in order: not empty, at most ``max_bytes``, a known header (a JPEG's markers
    all known, one frame), sides of at least 16 px and no more than :data:`MAX_ASPECT`
    times the other, at most ``max_pixels`` (read from the header, before any pixel is
    decoded), the file not cut off, at most :data:`MAX_SCANS` scans (a progressive JPEG's
    read within ``deadline`` seconds, :func:`read_scans_in_time`), and that the decoder
    accepts it (within OpenCV's own ceiling, :data:`vision.OPENCV_MAX_PIXELS`). EXIF
    rotation is applied, so the image is upright as the phone showed it; grey and alpha
    images become 3-channel BGR.

    >>> decode_image(b"")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    vision.images.ImageError: the file is empty (0 bytes); choose a photo and try again
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ImageError(N_("expected the file's bytes, got %(type)s"), type=type(data).__name__)
    data = bytes(data)
    if not data:
        raise ImageError(N_("the file is empty (0 bytes); choose a photo and try again"))
    if len(data) > max_bytes:
        raise ImageError(N_("the file is %(mb)s MB, over the %(limit)s MB limit; "
                            "send a smaller photo (the camera's normal size is plenty)"),
                         mb=f"{len(data) / 1e6:.1f}", limit=f"{max_bytes / 1e6:.0f}")
    header = read_header(data)
    if min(header.width, header.height) < MIN_SIDE:
        raise ImageError(N_("the image is only %(width)sx%(height)s pixels; send a photo at least %(side)s px on "
                            "each side"), width=header.width, height=header.height, side=MIN_SIDE)
    if max(header.width, header.height) > MAX_ASPECT * min(header.width, header.height):
        raise ImageError(N_("the image is %(width)sx%(height)s pixels: too thin to be a photo of cards; send a photo "
                            "of the table"), width=header.width, height=header.height)
    if header.pixels > max_pixels:
        raise ImageError(N_("the image is %(width)sx%(height)s pixels (%(mp)s MP), over the %(limit)s MP limit; "
                            "resize it or use the camera's normal size"), width=header.width, height=header.height,
                         mp=f"{header.pixels / 1e6:.0f}", limit=f"{max_pixels / 1e6:.0f}")
    _check_complete(header, data)
    if header.format == "jpeg" and _jpeg_frame(data)[0] in _JPEG_PROGRESSIVE:
        read_scans_in_time(data, deadline)
    try:
        image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    except cv2.error:  # OpenCV's own pixel ceiling (see :mod:`vision`): the frame is larger than the header said
        raise ImageError(N_("the %(format)s data holds a larger image than its header says; take or export the "
                            "photo again"), format=header.format.upper()) from None
    if image is None or image.ndim != 3 or image.shape[2] != 3 or image.size == 0:
        raise ImageError(N_("the %(format)s data cannot be decoded (damaged file); take or export the photo again"),
                         format=header.format.upper())
    return np.ascontiguousarray(image)


def read_image(path: str | os.PathLike[str], *, max_bytes: int = MAX_BYTES,
               max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """:func:`decode_image` on a file, reading at most ``max_bytes + 1`` bytes of it.

    >>> read_image("/nonexistent.jpg")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    vision.images.ImageError: /nonexistent.jpg: no such file
    """
    p = Path(path)
    try:
        if p.is_dir():
            raise ImageError(N_("%(path)s: is a folder; give a photo file"), path=p)
        with p.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except FileNotFoundError:
        raise ImageError(N_("%(path)s: no such file"), path=p) from None
    except PermissionError:
        raise ImageError(N_("%(path)s: not readable (permission denied)"), path=p) from None
    except OSError as error:
        raise ImageError(N_("%(path)s: cannot be read (%(why)s)"), path=p, why=error.strerror or error) from None
    if len(data) > max_bytes:
        raise ImageError(N_("%(path)s: the file is over the %(limit)s MB limit; send a smaller photo"), path=p,
                         limit=f"{max_bytes / 1e6:.0f}")
    return decode_image(data, max_bytes=max_bytes, max_pixels=max_pixels)


#: The segments before the image data that a kept copy keeps: JFIF (APP0) and Adobe's colour transform (APP14),
#: which say how to decode it. The others (EXIF with its place and thumbnail, XMP, ICC, makers' notes, comments)
#: are dropped.
KEPT_JPEG_MARKERS = frozenset({0xE0, 0xEE})


def jpeg_without_metadata(data: bytes) -> bytes | None:
    """A JPEG's own compressed pixels without its metadata, to keep instead of encoding the pixels again; None
    where that would not show what :func:`decode_image` decodes (an EXIF orientation turns the pixels, an
    unreadable EXIF, a damaged header): encode those.

    Why: encoding a 12-megapixel photo again costs about as much as decoding it; copying its bytes costs
    nothing, loses no quality, and drops the same metadata (the place it was taken). Anything after
    the end marker (a phone's motion-photo video) is dropped too.

    >>> ok, jpeg = cv2.imencode(".jpg", np.zeros((30, 40, 3), np.uint8))
    >>> kept = jpeg_without_metadata(jpeg.tobytes() + b"trailing video")
    >>> kept.endswith(b"\\xff\\xd9"), decode_image(kept).shape
    (True, (30, 40, 3))
    >>> turned = b"\\xff\\xd8\\xff\\xe1\\x00\\x22Exif\\x00\\x00MM\\x00\\x2a\\x00\\x00\\x00\\x08\\x00\\x01\\x01\\x12\\x00\\x03"
    >>> jpeg_without_metadata(turned + b"\\x00\\x00\\x00\\x01\\x00\\x06\\x00\\x00" + jpeg.tobytes()[2:]) is None
    True
    """
    if data[:2] != b"\xff\xd8":
        return None
    kept = [b"\xff\xd8"]
    i, n = 2, len(data)
    while i + 4 <= n:
        marker = data[i + 1]
        if data[i] != 0xFF or marker in (0xD8, 0x01, 0xD9) or 0xD0 <= marker <= 0xD7:
            return None
        if marker == 0xFF:
            i += 1
            continue
        if marker == 0xDA:  # the image data: compressed, it holds no end marker (FF is stuffed) until its end
            end = data.find(b"\xff\xd9", i)
            return None if end < 0 else b"".join(kept) + data[i:end + 2]
        length = struct.unpack(">H", data[i + 2:i + 4])[0]
        segment = data[i:i + 2 + length]
        if marker == 0xE1 and exif_orientation(segment[4:]) != 1:
            return None
        if marker in KEPT_JPEG_MARKERS or not (0xE0 <= marker <= 0xEF or marker == 0xFE):
            kept.append(segment)
        i += 2 + length
    return None


def exif_orientation(app1: bytes) -> int:
    """The EXIF orientation an APP1 segment's payload gives (1: as stored; 2-8: mirrored or turned; 0:
    unreadable); 1 for an APP1 that is no EXIF (XMP) or has no orientation.

    >>> exif_orientation(b"Exif\\x00\\x00II\\x2a\\x00\\x08\\x00\\x00\\x00\\x01\\x00\\x12\\x01\\x03\\x00\\x01\\x00\\x00\\x00\\x03\\x00\\x00\\x00")
    3
    >>> exif_orientation(b"http://ns.adobe.com/xap/1.0/"), exif_orientation(b"Exif\\x00\\x00II\\x2a")
    (1, 0)
    """
    if app1[:6] != b"Exif\x00\x00":
        return 1
    tiff = app1[6:]
    order = {b"II": "<", b"MM": ">"}.get(tiff[:2])
    if order is None or len(tiff) < 8:
        return 0
    (ifd,) = struct.unpack(order + "I", tiff[4:8])
    if ifd + 2 > len(tiff):
        return 0
    (count,) = struct.unpack(order + "H", tiff[ifd:ifd + 2])
    for at in range(ifd + 2, ifd + 2 + 12 * count, 12):
        if at + 12 > len(tiff):
            return 0
        tag, kind = struct.unpack(order + "HH", tiff[at:at + 4])
        if tag == 0x0112:
            return struct.unpack(order + "H", tiff[at + 8:at + 10])[0] if kind == 3 else 0
    return 1
