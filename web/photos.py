"""Photographs at the table: decode an upload, find the cards, keep the photo with its round.

Why here and not in :mod:`vision`: the web app adds what a server shared by a
table needs. The detector is loaded once per process, lazily and under a lock
(waitress runs several threads). Memory is bounded by :func:`photo_slot`: the
header's pixel count is checked before anything is decoded, at most
:data:`MAX_PARALLEL` photos are decoded, read and stored at once, at most
:data:`MAX_ADMITTED` wait or work, and the next one is refused (503, ``Retry-After``)
so a burst of uploads cannot exhaust a Raspberry Pi's memory. A photo is stored
only under a generated name (``<uuid>.jpg``, re-encoded, so no uploaded file name
or metadata is kept), its file and its row in one unit of work, and linked to its
session and, once the round is saved, to that round (table ``photos``, migration 4).

>>> cards_to_indexes(["7H", "8H", "7H", "9H"], [["7H", "8H", "9H"]])
[[0, 1, 3]]
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import os
import re
import shutil
import threading
import uuid
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import cv2
import numpy as np
import sqlite_utils
from flask import Flask, current_app, has_app_context

from scorer import Card, RuleSet, TipluError, parse_card, parse_cards
from scorer.kinds import Scoring, WildSource
from scorer.wilds import copies_in_play, wild_cards
from vision.detector import Detector, ModelError, load_detector
from vision.images import ImageError, decode_image, decode_memory, jpeg_without_metadata, read_header
from vision.pipeline import DEFAULT_CONF, PhotoReading, read_photo
from vision.doubts import FAINT_CARD, PLACE_KINDS, Doubt, place_doubt, short_meld_doubt, short_meld_doubts
from vision.score import DoubtfulCard, judge_cards
from web.db import folder_beside_ledger, write
from web.errors import InsufficientStorage, NotFound, Unavailable, free_bytes
from web.i18n import _, translate
from web.ledger import rules_of

PURPOSES = ("hand", "maal", "tiplu", "turned", "penalty")
PHOTO_ID = re.compile(r"^[0-9a-f]{32}$")
DEFAULT_MAX_PIXELS = 40_000_000
MAX_PARALLEL = 2
#: Photos in the server at once, decoding or waiting for a turn; the next is refused. Fewer than
#: waitress's threads (:data:`web.serve.DEFAULT_THREADS`, 8), so the ledger always has threads left.
MAX_ADMITTED = 4
#: Seconds a photo waits for a turn (``PHOTO_WAIT_SECONDS``) before it is refused instead.
SLOT_WAIT = 5.0
#: Seconds a refused upload is told to wait.
BUSY_RETRY_AFTER = 5
JPEG_QUALITY = 88
#: The long side a photo is read and kept at, at most: a 12-megapixel phone photo (4032 x 3024)
#: as it is; a 40-megapixel one is shrunk to it first (the reader gains nothing from more).
MAX_SIDE = 4096
#: Hours a kept photo that no saved round uses (and no correction) stays (``PHOTO_UNLINKED_HOURS``).
UNLINKED_HOURS = 24
#: Megabytes the photos folder may hold (``MAX_PHOTO_STORE_MB``); a photo beyond it is refused (507).
DEFAULT_STORE_MB = 2048
#: Megabytes the disk keeps free (``PHOTO_FREE_MB``): under them no photo is kept (507, before it is
#: decoded), so that rounds, which take a few kilobytes, can still be saved.
DEFAULT_FREE_MB = 64

_detector_lock = threading.Lock()
_detectors: dict[str, Detector] = {}
#: Bytes the photos being decoded may hold together (``PHOTO_MEMORY_MB``, counted by
#: :func:`vision.images.decode_memory`): two 40-megapixel baseline photos (120 MB each) at once, but
#: one progressive 4:4:4 JPEG of that size (360 MB) at a time. A photo alone always has its turn.
DEFAULT_MEMORY_MB = 400


class PhotoTurns:
    """:data:`MAX_PARALLEL` turns to decode, read and store a photo, and a budget of the bytes they decode.

    >>> turns = PhotoTurns(parallel=2)
    >>> turns.take(300, budget=400, timeout=0), turns.take(200, budget=400, timeout=0)
    (True, False)
    >>> turns.take(100, budget=400, timeout=0), turns.take(1, budget=400, timeout=0)
    (True, False)
    >>> turns.give(300); turns.give(100); turns.take(900, budget=400, timeout=0)
    True
    """

    def __init__(self, parallel: int = MAX_PARALLEL) -> None:
        self.parallel = parallel
        self.working = 0
        self.decoding = 0
        self._changed = threading.Condition()

    def _room(self, cost: int, budget: int) -> bool:
        return self.working < self.parallel and (self.working == 0 or self.decoding + cost <= budget)

    def take(self, cost: int, *, budget: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for a turn for a photo that decodes ``cost`` bytes; False if none came."""
        with self._changed:
            if not self._changed.wait_for(lambda: self._room(cost, budget), timeout=timeout):
                return False
            self.working += 1
            self.decoding += cost
            return True

    def give(self, cost: int) -> None:
        with self._changed:
            self.working -= 1
            self.decoding -= cost
            self._changed.notify_all()


_turns = PhotoTurns()
_admitted = threading.BoundedSemaphore(MAX_ADMITTED)


class PhotoError(TipluError):
    """A photo that cannot be read or stored; the message says what to do instead."""


@dataclass(frozen=True)
class StoredPhoto:
    """A photo kept on disk: its generated id, session, purpose and size.

    >>> StoredPhoto("ab" * 16, 1, "maal", 640, 480).file_name
    'abababababababababababababababab.jpg'
    """

    id: str
    session_id: int
    purpose: str
    width: int
    height: int

    @property
    def file_name(self) -> str:
        return f"{self.id}.jpg"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "session": self.session_id, "purpose": self.purpose,
                "width": self.width, "height": self.height}


def get_detector(model_path: str | None = None) -> Detector:
    """The process's detector for ``model_path`` (:func:`vision.detector.load_detector`), built on first use.

    >>> get_detector() is get_detector()   # doctest: +SKIP
    True
    """
    key = str(model_path or "")
    detector = _detectors.get(key)
    if detector is not None:
        return detector
    with _detector_lock:
        if key not in _detectors:
            try:
                _detectors[key] = load_detector(model_path or None)
            except ModelError as error:
                raise PhotoError(str(error)) from None
        return _detectors[key]


def forget_detectors(folder: Path) -> int:
    """Drop the detectors built from model folders inside ``folder`` (a deck that was removed), so a deck
    taught again under the same name is read with its new model; returns how many were dropped."""
    with _detector_lock:
        inside = [key for key in _detectors if key and Path(key).is_relative_to(folder)]
        for key in inside:
            del _detectors[key]
    return len(inside)


@contextlib.contextmanager
def photo_slot(cost: int = 0) -> Iterator[None]:
    """Hold one of the :data:`MAX_PARALLEL` turns to decode, read and store a photo that decodes ``cost`` bytes.

    Up to :data:`MAX_ADMITTED` photos wait for a turn; one more is refused at once,
    and one that waits longer than :data:`SLOT_WAIT` seconds is refused then, both with
    :class:`~web.errors.Unavailable` (503, ``Retry-After``) instead of queueing without
    end. Fewer photos are admitted than the server has threads, so reading the ledger
    never waits behind photos. A photo also waits while those decoding hold
    ``PHOTO_MEMORY_MB`` (:data:`DEFAULT_MEMORY_MB`) with it, so the bound is on the
    bytes held in memory, not on requests: a progressive 40-megapixel JPEG holds 360 MB.
    Memory freed after the last photo goes back to the system.

    >>> with photo_slot():
    ...     "decode here"
    'decode here'
    """
    if not _admitted.acquire(blocking=False):
        raise Unavailable(_("the server is busy with %(n)s photos; send this one again in a few seconds",
                            n=MAX_ADMITTED), retry_after=BUSY_RETRY_AFTER)
    try:
        if not _turns.take(cost, budget=memory_budget(), timeout=slot_wait()):
            raise Unavailable(_("the server is busy with %(n)s photos; send this one again in a few seconds",
                                n=MAX_ADMITTED), retry_after=BUSY_RETRY_AFTER)
        try:
            yield
        finally:
            _turns.give(cost)
            if _turns.working == 0:
                give_back_memory()
    finally:
        _admitted.release()


def memory_budget() -> int:
    """Bytes the photos being decoded may hold together: the app's ``PHOTO_MEMORY_MB``, else :data:`DEFAULT_MEMORY_MB`."""
    megabytes = current_app.config.get("PHOTO_MEMORY_MB") if has_app_context() else None
    return int(megabytes or DEFAULT_MEMORY_MB) * 1024 * 1024


@functools.lru_cache(maxsize=1)
def _malloc_trim() -> Any:
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None


def give_back_memory() -> None:
    """Return the memory freed by decoding to the system (glibc's ``malloc_trim``; elsewhere nothing).

    glibc keeps freed blocks for the next allocation, split among its arenas, so a second
    burst of big photos would otherwise start from the first one's peak.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def slot_wait() -> float:
    """Seconds a photo may wait for its turn: the app's ``PHOTO_WAIT_SECONDS``, else :data:`SLOT_WAIT`."""
    if has_app_context():
        return float(current_app.config.get("PHOTO_WAIT_SECONDS") or SLOT_WAIT)
    return SLOT_WAIT


def photos_admitted() -> int:
    """How many photos hold or wait for a turn right now (for tests and the memory bench)."""
    return MAX_ADMITTED - _admitted._value


def image_limits(app: Flask | None = None) -> tuple[int, int]:
    """(max bytes, max pixels) for one photo: the request limit and ``MAX_PHOTO_PIXELS``."""
    config = (app or current_app).config
    return int(config.get("MAX_CONTENT_LENGTH") or 16 * 1024 * 1024), \
        int(config.get("MAX_PHOTO_PIXELS") or DEFAULT_MAX_PIXELS)


def decode_cost(data: bytes) -> int:
    """Bytes decoding the upload will hold (:func:`vision.images.decode_memory`), for :func:`photo_slot`.

    0 for a file that will be refused before any pixel is decoded (no header, or more
    pixels than allowed): it should not wait for a turn to be told so.

    >>> decode_cost(b"not a photo")
    0
    """
    _bytes, max_pixels = image_limits() if has_app_context() else (0, DEFAULT_MAX_PIXELS)
    try:
        return decode_memory(data) if read_header(data).pixels <= max_pixels else 0
    except ImageError:
        return 0


def decode_photo(data: bytes, *, max_bytes: int, max_pixels: int) -> np.ndarray:
    """Bytes of a JPEG/PNG/WebP photo as a BGR image, or :class:`TipluError` saying what is wrong.

    The vision side's :func:`vision.images.decode_image` reads the header before
    decoding, so a 20000x20000 image is refused without allocating it.

    >>> png = cv2.imencode(".png", np.zeros((30, 40, 3), np.uint8))[1].tobytes()
    >>> decode_photo(png, max_bytes=10_000, max_pixels=10_000).shape
    (30, 40, 3)
    """
    return decode_image(data, max_bytes=max_bytes, max_pixels=max_pixels)


@dataclass(frozen=True)
class PhotoToKeep:
    """A photo's pixels as they are read, and, where the upload's own JPEG shows exactly those pixels, its
    bytes without metadata (:func:`vision.images.jpeg_without_metadata`), which :func:`store_photo` keeps
    instead of encoding the pixels again.

    >>> PhotoToKeep(np.zeros((2, 2, 3), np.uint8)).jpeg is None
    True
    """

    image: np.ndarray
    jpeg: bytes | None = None


def decode_for_reading(data: bytes, *, max_bytes: int, max_pixels: int) -> PhotoToKeep:
    """An upload's pixels as they are read and kept (:func:`decode_photo`, then :func:`fit_for_reading`),
    with the upload's JPEG to keep where those are its pixels as stored.

    >>> jpeg = cv2.imencode(".jpg", np.zeros((30, 40, 3), np.uint8))[1].tobytes()
    >>> photo = decode_for_reading(jpeg, max_bytes=10_000, max_pixels=10_000)
    >>> photo.image.shape, photo.jpeg == jpeg
    ((30, 40, 3), True)
    """
    decoded = decode_photo(data, max_bytes=max_bytes, max_pixels=max_pixels)
    image = fit_for_reading(decoded)
    return PhotoToKeep(image, jpeg_without_metadata(data) if image is decoded else None)


def read_image(image: np.ndarray, *, name: str = "upload", conf: float = DEFAULT_CONF,
               model_path: str | None = None, rules: RuleSet | None = None) -> PhotoReading:
    """One photo's reading (``to_dict()`` is what ``tiplu detect`` prints).

    ``rules`` (a session's) bound the copies of each card and the printed jokers
    (:func:`vision.pairing.copy_limits`). Call it inside :func:`photo_slot`, which also
    covers the decoding before it.
    """
    return read_photo(image, get_detector(model_path), conf, name=name, rules=rules)


def fit_for_reading(image: np.ndarray, max_side: int = MAX_SIDE) -> np.ndarray:
    """``image`` with its long side at most ``max_side`` (shrunk evenly), as it is read and kept.

    An 11 MB 40-megapixel photo would be kept at 23 MB; shrunk to a phone camera's usual
    12 megapixels it reads the same and takes a third of the disk and memory.

    >>> fit_for_reading(np.zeros((3000, 8000, 3), np.uint8), 4000).shape, fit_for_reading(np.zeros((30, 40, 3), np.uint8)).shape
    ((1500, 4000, 3), (30, 40, 3))
    """
    height, width = image.shape[:2]
    if max(height, width) <= max_side:
        return image
    scale = max_side / max(height, width)
    size = (max(1, round(width * scale)), max(1, round(height * scale)))
    return cv2.resize(image, size, interpolation=cv2.INTER_AREA)


def store_limit(app: Flask | None = None) -> int:
    """Bytes the photos folder may hold: ``MAX_PHOTO_STORE_MB`` megabytes."""
    return int((app or current_app).config.get("MAX_PHOTO_STORE_MB") or DEFAULT_STORE_MB) * 1024 * 1024


def folder_bytes(folder: Path) -> int:
    """What the photos folder holds on disk: the photos and their folders of kept corrections."""
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += (Path(root) / name).stat().st_size
            except OSError:
                continue
    return total


def expire_photos(db: sqlite_utils.Database, folder: Path, *, hours: float = UNLINKED_HOURS,
                  now: datetime | None = None) -> int:
    """Remove photos kept with a session but used by no saved round and no correction, older than ``hours``.

    A photo from ``/api/detect`` with ``session=`` or from a round form never saved is
    used by nothing; one that a round or a kept correction uses is never removed here.
    Rows go in one transaction, files after; returns how many photos went.
    """
    cutoff = ((now or datetime.now(timezone.utc)) - timedelta(hours=hours)).isoformat(timespec="seconds")
    with write(db):
        ids = [r[0] for r in db.execute(
            "SELECT id FROM photos p WHERE round_id IS NULL AND created_at < ? "
            "AND NOT EXISTS (SELECT 1 FROM corrections c WHERE c.photo_id = p.id)", [cutoff]).fetchall()]
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            db.execute(f"DELETE FROM photos WHERE id IN ({','.join('?' * len(chunk))})", chunk)
    remove_files(folder, ids)
    return len(ids)


def check_free_space(folder: Path) -> None:
    """Before a photo is kept: refuse it (:class:`~web.errors.InsufficientStorage`) when the disk that holds
    ``folder`` has less than ``PHOTO_FREE_MB`` megabytes free."""
    margin = int((current_app.config.get("PHOTO_FREE_MB") if has_app_context() else None) or DEFAULT_FREE_MB)
    free = free_bytes(folder)
    if free is not None and free < margin * 1024 * 1024:
        raise InsufficientStorage(_("the server's disk is nearly full (%(free)s MB free, photos need %(margin)s MB): "
                                    "no photo is kept until space is freed; rounds can still be saved by hand",
                                    free=free // (1024 * 1024), margin=margin))


def make_room(db: sqlite_utils.Database, folder: Path, needed: int) -> None:
    """Before a photo of ``needed`` bytes is kept: expire unused photos, then refuse it if the folder or the disk
    is full."""
    check_free_space(folder)
    config = current_app.config if has_app_context() else {}
    expire_photos(db, folder, hours=float(config.get("PHOTO_UNLINKED_HOURS") or UNLINKED_HOURS))
    limit = store_limit() if has_app_context() else DEFAULT_STORE_MB * 1024 * 1024
    used = folder_bytes(folder) if folder.is_dir() else 0
    if used + needed > limit:
        raise InsufficientStorage(_("the photos folder is full (%(used)s of %(limit)s MB): delete old sessions, or "
                                    "raise TIPLU_PHOTO_STORE_MB where tiplu serve runs",
                                    used=used // (1024 * 1024), limit=limit // (1024 * 1024)))


def photo_folder(app: Flask | None = None) -> Path:
    """Where photos live: ``PHOTO_DIR``, else ``photos/`` next to the ledger file (``instance/photos``)."""
    return folder_beside_ledger("PHOTO_DIR", "photos", app)


def _check_purpose(purpose: Any) -> str:
    purpose = (purpose or "hand").strip() if isinstance(purpose, (str, type(None))) else purpose
    if purpose not in PURPOSES:
        raise PhotoError(_("purpose: use one of %(purposes)s", purposes=", ".join(PURPOSES)))
    return purpose


def new_photo_id() -> str:
    """A fresh photo id (the file is ``<id>.jpg``): 32 hex digits, nothing from the upload."""
    return uuid.uuid4().hex


def store_photo(db: sqlite_utils.Database, folder: Path, image: np.ndarray, *, session_id: int,
                purpose: str = "hand", seat: int | None = None, reading: Mapping[str, Any] | None = None,
                photo_id: str | None = None, read_with: str | None = None, jpeg: bytes | None = None) -> StoredPhoto:
    """Write ``image`` as ``<id>.jpg`` in ``folder`` and link it to the session, as one unit of work.

    The JPEG is ``jpeg`` (the upload's own, without metadata: :class:`PhotoToKeep`) or encoded from the
    pixels, so nothing of the uploaded file (name, EXIF location) is kept. It is written to a temporary name, the row is added and
    the file renamed into place inside the same transaction; if anything fails, both
    files are removed and the row rolled back, so a failed request leaves nothing
    on disk. Only a crash between the rename and the commit can leave a file without
    a row, which ``tiplu check-ledger --repair`` removes. ``read_with`` names the deck
    whose model read ``reading`` ('' for the standard one).
    """
    purpose = _check_purpose(purpose)
    ok, encoded = (True, np.frombuffer(jpeg, np.uint8)) if jpeg is not None else \
        cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise PhotoError(_("the photo could not be saved as JPEG; try another photo"))
    photo = StoredPhoto(photo_id or new_photo_id(), int(session_id), purpose, int(image.shape[1]),
                        int(image.shape[0]))
    temporary, final = folder / f".{photo.id}.tmp", folder / photo.file_name
    from web.ledger import now
    make_room(db, folder, len(encoded))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(encoded.tobytes())
        del encoded
        with write(db):
            db.execute("INSERT INTO photos(id, session_id, round_id, seat, purpose, width, height, reading, "
                       "created_at, read_with) VALUES (?,?,?,?,?,?,?,?,?,?)",
                       [photo.id, photo.session_id, None, seat, purpose, photo.width, photo.height,
                        json.dumps(reading) if reading is not None else None, now(), read_with])
            os.replace(temporary, final)
    except BaseException:
        temporary.unlink(missing_ok=True)
        final.unlink(missing_ok=True)
        raise
    return photo


def save_reading(db: sqlite_utils.Database, photo_id: str, reading: Mapping[str, Any]) -> None:
    """Keep what the detector read on a stored photo (the cards before any correction)."""
    with write(db):
        db.execute("UPDATE photos SET reading = ? WHERE id = ?", [json.dumps(reading), photo_id])


def find_photo(db: sqlite_utils.Database, session_id: int, photo_id: str) -> dict[str, Any]:
    """The stored row of one photo of this session (:class:`~web.errors.NotFound`, a 404, otherwise)."""
    if not PHOTO_ID.match(photo_id or ""):
        raise NotFound(_("no such photo: check the address"))
    photo = next(db.query("SELECT * FROM photos WHERE id = ? AND session_id = ?", [photo_id, int(session_id)]), None)
    if photo is None:
        raise NotFound(_("no such photo in session %(id)s", id=session_id))
    photo["reading"] = json.loads(photo["reading"]) if photo["reading"] else None
    return photo


def link_photos(db: sqlite_utils.Database, session_id: int, round_number: int, photo_ids: Sequence[str]) -> int:
    """Attach the session's photos to a saved round; returns how many were linked.

    Ids that are malformed or belong to another session are ignored: a form
    field cannot move another table's photo.
    """
    ids = [p for p in dict.fromkeys(photo_ids) if PHOTO_ID.match(p or "")]
    if not ids:
        return 0
    with write(db):
        row = db.execute("SELECT id FROM rounds WHERE session_id = ? AND number = ?",
                         [int(session_id), int(round_number)]).fetchone()
        if row is None:
            return 0
        marks = ",".join("?" * len(ids))
        cursor = db.execute(f"UPDATE photos SET round_id = ? WHERE session_id = ? AND id IN ({marks})",
                            [row[0], int(session_id), *ids])
        return int(cursor.rowcount)


def round_photos(db: sqlite_utils.Database, session_id: int, round_number: int) -> list[dict[str, Any]]:
    """The photos kept with one round, oldest first: ``[{"id", "purpose", "seat", "width", "height"}]``."""
    rows = db.execute(
        "SELECT p.id, p.purpose, p.seat, p.width, p.height FROM photos p JOIN rounds r ON r.id = p.round_id "
        "WHERE r.session_id = ? AND r.number = ? ORDER BY p.created_at, p.id",
        [int(session_id), int(round_number)]).fetchall()
    return [{"id": r[0], "purpose": r[1], "seat": r[2], "width": r[3], "height": r[4]} for r in rows]


def session_photo_ids(db: sqlite_utils.Database, session_id: int) -> list[str]:
    """Ids of every photo kept with a session (to remove their files when the session goes)."""
    return [r[0] for r in db.execute("SELECT id FROM photos WHERE session_id = ?", [int(session_id)]).fetchall()]


def remove_files(folder: Path, photo_ids: Sequence[str]) -> int:
    """Delete these photos' files and their folders of kept corrections (after their rows are gone);
    returns how many photos were removed."""
    removed = 0
    for photo_id in photo_ids:
        if PHOTO_ID.match(photo_id):
            path = folder / f"{photo_id}.jpg"
            shutil.rmtree(folder / photo_id, ignore_errors=True)
            if path.is_file():
                path.unlink()
                removed += 1
    return removed


def cards_to_indexes(cards: Sequence[str], groups: Sequence[Sequence[str]]) -> list[list[int]]:
    """Map groups of card names back to positions in ``cards`` (each position used once).

    This is how melds or maal items found by the scorer are outlined on the photo:
    the n-th copy of a name in a group takes the next unused detection of that name.

    >>> cards_to_indexes(["JC", "JC", "QC"], [["JC"], ["JC", "QC"]])
    [[0], [1, 2]]
    """
    used: set[int] = set()
    result: list[list[int]] = []
    for group in groups:
        indexes: list[int] = []
        for name in group:
            for position, card in enumerate(cards):
                if position not in used and card == name:
                    used.add(position)
                    indexes.append(position)
                    break
        result.append(indexes)
    return result


def _one_card(text: Any, what: str) -> Card | None:
    text = str(text or "").strip()
    if not text:
        return None
    try:
        return parse_card(text)
    except TipluError as error:
        raise PhotoError(f"{what}: {translate(error)}") from None


def check_cards(session: Mapping[str, Any], payload: Mapping[str, Any]) -> dict[str, Any]:
    """The scorer's answer for cards read from a photo (and corrected by taps).

    ``payload``: ``{"cards": ["7H", ...], "purpose": "hand"|"maal"|"penalty"|"tiplu"|"turned",
    "tiplu": "JC", "turned": "7D", "seen": true, "groups": [[0, 1, 2], ...],
    "alternatives": [["8H", "6D"], [], ...], "confidences": [0.91, null, ...],
    "short_melds": [{"cards": [18, 19], "box": [x1, y1, x2, y2]}],
    "faint": [{"card": "10S", "box": [x1, y1, x2, y2], "confidence": 0.2}]}``: per card, what a
    card not yet confirmed may be instead and how sure the reading was of it (the least sure is
    tried first; without confidences, in position order); the reading's melds of two still open
    (without ``short_melds``, found from ``groups`` as the reading finds them); and its places to
    look still open (a stacked copy's with ``"kind": "stacked_copy"``).

    A hand is judged by :func:`vision.score.judge_cards`, as ``tiplu score`` judges it:
    ``verdict`` is the headline (the hand as laid when ``groups`` show a declaration, else
    the free search; ``grouping`` says which), with ``outline``, for each meld, the positions
    in ``cards`` to draw around; with ``groups``, ``as_laid`` is the verdict on the hand as
    laid; ``doubts`` are the same as ``tiplu score`` gives for these cards (the melds of two,
    the places to look, a card count no declared hand has, the doubtful cards whose
    alternative would flip the verdict, and the place whose card would finish a hand one
    card short). ``maal`` (:func:`scorer.maal.maal_points`) or ``penalty``
    (:func:`scorer.rummy.penalty_points`) answer the other purposes.
    """
    purpose = _check_purpose(payload.get("purpose"))
    raw = payload.get("cards") or []
    if not isinstance(raw, (list, str)):
        raise PhotoError(_('cards: give a list of card names, e.g. ["10C", "JC"]'))
    cards = parse_cards(raw)
    names = [str(c) for c in cards]
    rules = rules_of(session)
    tiplu = _one_card(payload.get("tiplu"), _("tiplu"))
    turned = _one_card(payload.get("turned"), _("turned card"))
    answer: dict[str, Any] = {"purpose": purpose, "cards": names, "outline": []}
    if not cards or purpose in ("tiplu", "turned"):
        return answer
    if purpose == "hand":
        if rules.wild_source is WildSource.TURNED and turned is None:
            raise PhotoError(_("enter the turned card first: it sets the joker rank"))
        if rules.wild_source is WildSource.TIPLU and tiplu is None:
            raise PhotoError(_("enter the tiplu first: it decides the wild cards"))
        laid = _laid_groups(payload.get("groups"), len(cards))
        confidences = _confidences(payload.get("confidences"), len(cards))
        doubtful = [DoubtfulCard(i, tuple(others), confidences[i])
                    for i, others in _doubtful(payload.get("alternatives"), len(cards))]
        short = _short_melds(payload.get("short_melds"), names, laid) if "short_melds" in payload else \
            short_meld_doubts(names, laid)
        places = places_still_open(_faint(payload.get("faint")), cards, rules, tiplu=tiplu, turned=turned)
        judged = judge_cards(cards, rules, tiplu=tiplu, turned=turned, groups=laid or None, doubtful=doubtful,
                             reading_doubts=short + places,
                             players=len(session["players"]))
        hand = judged.hand
        answer["grouping"] = judged.grouping
        answer["verdict"] = judged.declare_dict()
        answer["outline"] = cards_to_indexes(names, answer["verdict"]["melds"])
        answer["doubts"] = [d.to_dict() for d in judged.doubts]
        if hand.laid is not None:
            as_laid = hand.as_laid
            answer["as_laid"] = {"valid": bool(as_laid and as_laid.valid), "groups": [list(m) for m in hand.laid.melds],
                                 "discard": None if as_laid is None or as_laid.discard is None else str(as_laid.discard),
                                 "reason": hand.as_laid_error if as_laid is None else as_laid.reason}
    elif purpose == "maal":
        if rules.scoring is not Scoring.MAAL:
            raise PhotoError(_("maal belongs to the nepali rules; photograph the cards left in hand instead"))
        if tiplu is None:
            raise PhotoError(_("enter the tiplu first: maal is valued from it"))
        from scorer.maal import maal_points
        maal = maal_points(cards, rules, tiplu, seen=bool(payload.get("seen", True))).to_dict()
        answer["maal"] = maal
        answer["doubts"] = [d.to_dict() for d in
                            places_still_open(_faint(payload.get("faint")), cards, rules, tiplu=tiplu)]
        answer["outline"] = cards_to_indexes(names, [item["cards"] for item in maal["items"]])
    else:
        if rules.scoring is not Scoring.PENALTY:
            raise PhotoError(_("penalty points belong to the rummy rules; photograph maal cards instead"))
        if turned is None:
            raise PhotoError(_("enter the turned card first: it sets the joker rank"))
        from scorer.rummy import penalty_points
        penalty = penalty_points(cards, rules, turned).to_dict()
        answer["penalty"] = penalty
        answer["doubts"] = [d.to_dict() for d in
                            places_still_open(_faint(payload.get("faint")), cards, rules, turned=turned)]
        answer["outline"] = cards_to_indexes(names, penalty["melds"])
    return answer


def _doubtful(raw: Any, count: int) -> list[tuple[int, list[str]]]:
    """(index, alternatives) of the cards not yet confirmed, from the payload's ``alternatives``.

    >>> _doubtful([[], ["8H", "6D"]], 2)
    [(1, ['8H', '6D'])]
    """
    if not raw:
        return []
    if (not isinstance(raw, list) or len(raw) != count
            or not all(isinstance(a, list) and all(isinstance(n, str) for n in a) for a in raw)):
        raise PhotoError(_('alternatives: give one list of card names per card, e.g. [["8H"], []] for 2 cards'))
    for names in raw:
        for name in names:
            _one_card(name, "alternatives")
    return [(i, list(names)) for i, names in enumerate(raw) if names]


def _box(raw: Any) -> tuple[float, float, float, float] | None:
    """Four numbers (x1, y1, x2, y2), else None.

    >>> _box([1, 2, 3.5, 4]), _box([1, 2, 3]), _box([1, 2, 3, True])
    ((1.0, 2.0, 3.5, 4.0), None, None)
    """
    if (not isinstance(raw, list) or len(raw) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw)):
        return None
    x1, y1, x2, y2 = (float(v) for v in raw)
    return x1, y1, x2, y2


def _faint(raw: Any) -> list[Doubt]:
    """The payload's places to look (``[{"card": "10S", "box": [x1, y1, x2, y2], "confidence": 0.2}]``, a
    stacked copy's with ``"kind": "stacked_copy"``) as doubts of :data:`~vision.doubts.PLACE_KINDS`, in the
    reading's words.

    >>> [(d.kind, d.card, d.box) for d in _faint([{"card": "10S", "box": [1, 2, 3, 4]},
    ...                                           {"card": "6H", "box": [5, 6, 7, 8], "kind": "stacked_copy"}])]
    [('faint_card', '10S', (1.0, 2.0, 3.0, 4.0)), ('stacked_copy', '6H', (5.0, 6.0, 7.0, 8.0))]
    """
    if not raw:
        return []
    message = _('faint: give a list like [{"card": "10S", "box": [x1, y1, x2, y2]}]')
    if not isinstance(raw, list) or not all(isinstance(f, dict) for f in raw):
        raise PhotoError(message)
    found = []
    for item in raw:
        box = _box(item.get("box"))
        card = _one_card(item.get("card"), "faint")
        confidence = item.get("confidence")
        if box is None or card is None or not (confidence is None or _is_number(confidence)):
            raise PhotoError(message)
        kind = item.get("kind", FAINT_CARD)
        if kind not in PLACE_KINDS:
            raise PhotoError(_('faint: a place\'s "kind" is "faint_card" or "stacked_copy"'))
        found.append(place_doubt(kind, str(card), box, None if confidence is None else float(confidence)))
    return found


def places_still_open(places: Sequence[Doubt], cards: Sequence[Card], rules: RuleSet, *,
                      tiplu: Card | None = None, turned: Card | None = None) -> list[Doubt]:
    """The places to look whose card could still be there: not those whose count is met already.

    A faint corner that looks like 5D, on a photo that shows both 5D in play (the tiplu's
    third copy lies under the stock), cannot be another 5D: its red frame goes.

    >>> from scorer import get_rules
    >>> place = place_doubt(FAINT_CARD, "5D", (0.0, 0.0, 4.0, 4.0))
    >>> len(places_still_open([place], parse_cards("5D 5D KS"), get_rules(), tiplu=parse_card("5D")))
    0
    >>> len(places_still_open([place], parse_cards("5D KS"), get_rules(), tiplu=parse_card("5D")))
    1
    """
    try:
        wilds = wild_cards(rules, tiplu=tiplu, turned=turned)
    except TipluError:
        wilds = None
    counts = Counter(cards)
    return [place for place in places if place.card is None
            or counts[parse_card(place.card)] < copies_in_play(parse_card(place.card), rules, wilds)]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _confidences(raw: Any, count: int) -> list[float | None]:
    """Per card, how sure the reading was (None for a card added by hand); all None when not sent.

    >>> _confidences([0.9, None], 2), _confidences(None, 2)
    ([0.9, None], [None, None])
    """
    if raw is None:
        return [None] * count
    if not isinstance(raw, list) or len(raw) != count or not all(v is None or _is_number(v) for v in raw):
        raise PhotoError(_("confidences: give one number (or null) per card, e.g. [0.91, null] for 2 cards"))
    return [None if v is None else float(v) for v in raw]


def _short_melds(raw: Any, names: Sequence[str], groups: Sequence[Sequence[int]]) -> list[Doubt]:
    """The reading's melds of two still open (``[{"cards": [18, 19], "box": [x1, y1, x2, y2]}]``), in the
    reading's words: each two positions of one group of ``groups``.

    >>> [d.message for d in _short_melds([{"cards": [1, 2]}], ["3S", "7H", "8H"], [[0], [1, 2]])]
    ['7H 8H lie together as a meld of two; a meld needs three: is a card of it hidden or missed here?']
    """
    if raw is None:
        return []
    message = _('short_melds: give a list like [{"cards": [18, 19], "box": [x1, y1, x2, y2]}], '
                'each two cards that lie together')
    if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
        raise PhotoError(message)
    pairs = {tuple(group) for group in groups if len(group) == 2}
    found = []
    for item in raw:
        pair, box = item.get("cards"), item.get("box")
        if (not isinstance(pair, list) or not all(isinstance(i, int) and not isinstance(i, bool) for i in pair)
                or tuple(pair) not in pairs or not (box is None or _box(box) is not None)):
            raise PhotoError(message)
        found.append(replace(short_meld_doubt(names, pair), box=_box(box)))
    return found


def _laid_groups(raw: Any, count: int) -> list[list[int]]:
    """The photo's groups (lists of card positions), checked: each position once, in range."""
    if not raw:
        return []
    if not isinstance(raw, list) or not all(isinstance(g, list) for g in raw):
        raise PhotoError(_("groups: give lists of card positions, e.g. [[0, 1, 2], [3, 4, 5]]"))
    seen: set[int] = set()
    for group in raw:
        for index in group:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count or index in seen:
                raise PhotoError(_("groups: %(index)r is not a card position (0 to %(last)s, each once)",
                                   index=index, last=count - 1))
            seen.add(index)
    return [list(g) for g in raw if g]
