"""Cards a player confirmed or changed in a photo review, kept to improve the deck that read them.

Why: each tap in the review says what a card really is. When the round is saved, or the
hand checked on "Check a hand", every card the player confirmed or changed is kept as the
corner crops the classifier saw (cut from the stored photo with the reading's boxes,
:func:`vision.detector.crop_corner`, at :data:`vision.enrolment.KEPT_CROP`) and the right card name, beside the photo::

    photos/<photo id>/corrections/<card>_<n>.png

with one row per crop in the ``corrections`` table (migration 8), the index that
"Improve from corrections" (:mod:`web.decks`) reads; both pages keep them through
:func:`keep_review`. Crops and rows are written with the round (or the check) in one unit
of work (:func:`saved_with`): a failed save leaves neither, and a crash between a file's
rename and the commit leaves a file with no row, which ``tiplu check-ledger --repair``
removes, as for photos.

>>> read_corrections(['{"photo": "' + "ab" * 16 + '", "cards": [[3, "8H"]]}'])
[Correction(photo_id='abababababababababababababababab', position=3, card='8H')]
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import cv2
import sqlite_utils

from scorer import TipluError, parse_card
from vision.detector import crop_corner
from vision.enrolment import KEPT_CROP
from web.db import write
from web.errors import BadRequest
from web.i18n import _
from web.photos import PHOTO_ID

CORRECTIONS_DIR = "corrections"
#: At most this many corrected cards per photo (a whole table holds about 60 cards).
MAX_PER_PHOTO = 80


@dataclass(frozen=True)
class Correction:
    """One card of a photo's reading (its ``position``) and the card the player said it is."""

    photo_id: str
    position: int
    card: str


def read_corrections(fields: Sequence[str]) -> list[Correction]:
    """The round form's ``correction`` fields: one JSON object per photo, ``{"photo": id, "cards": [[position, card], ...]}``."""
    found: list[Correction] = []
    message = _('correction: give {"photo": "<photo id>", "cards": [[0, "8H"], ...]}')
    for text in fields:
        try:
            item = json.loads(text)
        except ValueError:
            raise BadRequest(message) from None
        if not isinstance(item, dict) or not PHOTO_ID.match(str(item.get("photo", ""))):
            raise BadRequest(message)
        cards = item.get("cards")
        if not isinstance(cards, list) or len(cards) > MAX_PER_PHOTO:
            raise BadRequest(message)
        for pair in cards:
            if (not isinstance(pair, list) or len(pair) != 2 or isinstance(pair[0], bool)
                    or not isinstance(pair[0], int) or not isinstance(pair[1], str)):
                raise BadRequest(message)
            try:
                card = str(parse_card(pair[1]))
            except TipluError as error:
                raise BadRequest(f"correction: {error}") from None
            found.append(Correction(item["photo"], pair[0], card))
    return found


@contextlib.contextmanager
def saved_with(db: sqlite_utils.Database) -> Iterator[list[Path]]:
    """One write transaction for a ledger change and the files written with it.

    Whoever writes a file inside appends its final path to the list it yields; if
    anything fails before the commit, those files are removed and the transaction
    rolled back, so a failed save leaves no file behind.
    """
    written: list[Path] = []
    try:
        with write(db):
            yield written
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise


def _reading_boxes(reading: Any, position: int) -> tuple[str, list[list[float]]] | None:
    """The card read at ``position`` and its corner boxes (its card box when no corner is named)."""
    if not isinstance(reading, dict) or not 0 <= position < len(reading.get("cards") or []):
        return None
    card = reading["cards"][position]
    corners = reading.get("corners") or []
    boxes = [corners[k]["box"] for k in card.get("corners") or [] if 0 <= k < len(corners)]
    return str(card.get("card", "")), boxes or [card["box"]]


def keep_corrections(db: sqlite_utils.Database, folder: Path, session_id: int, deck: str | None,
                     corrections: Sequence[Correction], written: list[Path]) -> int:
    """Cut and keep the corrected cards' corner crops; returns how many crops were kept.

    Call it inside :func:`saved_with` (``written`` is its list). Photos of other
    sessions, positions outside a photo's reading and cards already kept are skipped:
    a form cannot write into another table's photos, and saving twice keeps a card once.
    Each crop is kept for the deck that read its photo (``photos.read_with``); ``deck``
    stands in for photos kept before that was recorded.
    """
    from web.ledger import now

    kept = 0
    images: dict[str, Any] = {}
    for correction in corrections:
        row = db.execute("SELECT reading, read_with FROM photos WHERE id = ? AND session_id = ?",
                         [correction.photo_id, int(session_id)]).fetchone()
        if row is None or db.execute("SELECT 1 FROM corrections WHERE photo_id = ? AND position = ?",
                                     [correction.photo_id, correction.position]).fetchone():
            continue
        reading, read_with = row
        found = _reading_boxes(json.loads(reading) if reading else None, correction.position)
        if found is None:
            continue
        read, boxes = found
        owner = deck if read_with is None else read_with or None  # '' was the standard model
        if correction.photo_id not in images:
            images[correction.photo_id] = cv2.imread(str(folder / f"{correction.photo_id}.jpg"))
        image = images[correction.photo_id]
        if image is None:
            continue
        target = folder / correction.photo_id / CORRECTIONS_DIR
        target.mkdir(parents=True, exist_ok=True)
        for box in boxes:
            number = 1
            while (target / f"{correction.card}_{number}.png").exists():
                number += 1
            final = target / f"{correction.card}_{number}.png"
            temporary = target / f".{final.name}.tmp"
            try:
                ok, png = cv2.imencode(".png", crop_corner(image, box, size=KEPT_CROP))
                if not ok:
                    raise OSError(f"{final}: the crop could not be encoded as PNG")
                temporary.write_bytes(png.tobytes())
                db.execute("INSERT INTO corrections(photo_id, position, deck, card, read, file, created_at) "
                           "VALUES (?,?,?,?,?,?,?)",
                           [correction.photo_id, correction.position, owner, correction.card, read,
                            final.relative_to(folder).as_posix(), now()])
                os.replace(temporary, final)
            finally:
                temporary.unlink(missing_ok=True)
            written.append(final)
            kept += 1
    return kept


def keep_review(db: sqlite_utils.Database, session: Mapping[str, Any], taps: Sequence[Correction],
                written: list[Path]) -> int:
    """Keep a photo review's taps for the deck that read each photo; returns the crops kept.

    The one way a review's taps are kept, whether the review ended in a saved round or a
    checked hand: call it inside :func:`saved_with` (``written`` is its list). Photos kept
    before the reading deck was recorded go to the deck the session reads with now (a deck
    gone from the server counts as the standard one, :func:`web.decks.deck_in_use`).
    """
    from web.decks import deck_in_use
    from web.photos import photo_folder

    return keep_corrections(db, photo_folder(), session["id"], deck_in_use(session["deck"]), taps, written)


def deck_corrections(db: sqlite_utils.Database, folder: Path, decks: Sequence[str | None]) -> list[tuple[Path, str]]:
    """The kept crops (file, right card) of photos read with any of ``decks`` (None: the shipped model)."""
    named = [d for d in decks if d is not None]
    clauses = (["deck IS NULL"] if None in decks else []) + ([f"deck IN ({','.join('?' * len(named))})"]
                                                             if named else [])
    if not clauses:
        return []
    rows = db.execute(f"SELECT file, card FROM corrections WHERE {' OR '.join(clauses)} ORDER BY id",
                      named).fetchall()
    return [(folder / file, card) for file, card in rows]


def correction_counts(db: sqlite_utils.Database) -> dict[str | None, int]:
    """How many corrected cards are kept per deck (None: read with the shipped model); a card may give two crops."""
    return {deck: count for deck, count in db.execute(
        "SELECT deck, count(DISTINCT photo_id || ':' || position) FROM corrections GROUP BY deck").fetchall()}
