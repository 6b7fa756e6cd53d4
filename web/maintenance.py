"""The ledger file and its photos folder agree, or are made to (``tiplu check-ledger``).

Why: a photo's file and its row are written in one unit of work
(:func:`web.photos.store_photo`), but a crash at the wrong instant, or a session
deleted while the server died, can still leave a file with no row (an *orphan*,
a private photo nobody can see or delete from the app) or a row whose file is
gone. This check finds both; ``--repair`` deletes the orphans and the leftover
temporary files. Rows whose file is missing are only reported: the round keeps
its reading.

Example::

    tiplu check-ledger --db instance/tiplu.db            # report, exit 1 when something is wrong
    tiplu check-ledger --db instance/tiplu.db --repair   # remove orphan files too

>>> report = check_ledger(":memory:", Path("/nonexistent"))
>>> report.ok, report.orphan_files
(True, ())
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from web import db as ledger_file
from web.corrections import CORRECTIONS_DIR
from web.photos import PHOTO_ID

#: Files younger than this are left alone: an upload may be between its rename and its commit.
SETTLE_SECONDS = 60


@dataclass(frozen=True)
class LedgerReport:
    """What :func:`check_ledger` found: the file's own check, orphan files, rows without files, what it removed."""

    file: Mapping[str, Any]
    orphan_files: tuple[str, ...] = ()
    missing_files: tuple[str, ...] = ()
    removed: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """Nothing left to fix (orphans that were removed count as fixed)."""
        return (self.file.get("integrity") == "ok" and not self.missing_files
                and set(self.orphan_files) <= set(self.removed))

    def lines(self) -> list[str]:
        shown = [f"{key}: {', '.join(value) if isinstance(value, list) else value}" for key, value in self.file.items()]
        shown.append(f"orphan photo files: {len(self.orphan_files)}" +
                     (f" ({', '.join(self.orphan_files)})" if self.orphan_files else ""))
        shown.append(f"photo rows without a file: {len(self.missing_files)}" +
                     (f" ({', '.join(self.missing_files)})" if self.missing_files else ""))
        if self.removed:
            shown.append(f"removed: {len(self.removed)}")
        return shown


def _orphan_corrections(photo_dir: Path, kept: set[str], cutoff: float) -> list[str]:
    """Kept correction crops (``<photo id>/corrections/*.png``) with no row, and leftover temporaries,
    as paths relative to ``photo_dir``."""
    found = []
    for path in sorted(photo_dir.glob(f"*/{CORRECTIONS_DIR}/*")):
        name = path.relative_to(photo_dir).as_posix()
        if (PHOTO_ID.match(path.parent.parent.name) and path.is_file() and (name.endswith(".tmp") or name not in kept)
                and path.stat().st_mtime < cutoff):
            found.append(name)
    return found


def check_ledger(db_path: str | os.PathLike[str], photo_dir: Path, repair: bool = False, *,
                 settle_seconds: float = SETTLE_SECONDS) -> LedgerReport:
    """Check the ledger at ``db_path`` and the photos in ``photo_dir``; with ``repair``, delete orphan files.

    An orphan is a ``<id>.jpg`` with no row, a kept correction crop
    (``<id>/corrections/<card>_<n>.png``) with no row, or a temporary file left by a write
    that never finished, older than ``settle_seconds``.
    """
    file = ledger_file.check_ledger(db_path)
    database = ledger_file.open_db(db_path)
    try:
        rows = {r[0] for r in database.execute("SELECT id FROM photos").fetchall()}
        kept = {r[0] for r in database.execute("SELECT file FROM corrections").fetchall()}
    finally:
        database.close()
    orphans: list[str] = []
    present: set[str] = set()
    if photo_dir.is_dir():
        cutoff = time.time() - settle_seconds
        for path in sorted(photo_dir.iterdir()):
            name = path.name
            photo_id = name[:-4] if name.endswith(".jpg") else name[1:-4] if name.endswith(".tmp") else ""
            if not PHOTO_ID.match(photo_id) or not path.is_file():
                continue
            if name.endswith(".jpg"):
                present.add(photo_id)
            if (name.endswith(".tmp") or photo_id not in rows) and path.stat().st_mtime < cutoff:
                orphans.append(name)
        orphans += _orphan_corrections(photo_dir, kept, cutoff)
    removed: list[str] = []
    if repair:
        for name in orphans:
            (photo_dir / name).unlink(missing_ok=True)
            removed.append(name)
            with contextlib.suppress(OSError):  # an emptied corrections folder, then its photo's folder
                (photo_dir / name).parent.rmdir()
                (photo_dir / name).parent.parent.rmdir()
    return LedgerReport(file, tuple(orphans), tuple(sorted(rows - present)), tuple(removed))

