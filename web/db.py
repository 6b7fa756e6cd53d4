"""The SQLite file behind the ledger: connection settings, schema migrations, Flask glue.

Why these settings: several phones post rounds at once through a threaded
server, and a laptop may be closed or killed mid-write. WAL lets readers go on
while one writer commits, the busy timeout makes a second writer wait instead
of failing, ``synchronous=FULL`` makes every committed round survive a crash,
and :func:`write` takes the write lock up front (``BEGIN IMMEDIATE``) so two
writers never deadlock on a lock upgrade.

>>> db = open_db(":memory:")
>>> "rounds" in db.table_names()
True
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

import sqlite_utils
from flask import Flask, current_app, g
from sqlite_utils import Migrations

BUSY_TIMEOUT_MS = 15_000

migrations = Migrations("tiplu")


@migrations()
def m001_initial(db: sqlite_utils.Database) -> None:
    """Players, sessions with seats, rounds, per-player lines, payments, keys and audit."""
    db.execute("""
        CREATE TABLE players (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE COLLATE NOCASE,
            created_at TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE sessions (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL DEFAULT '',
            rules TEXT NOT NULL,
            options TEXT NOT NULL,
            rounds_planned INTEGER,
            first_dealer INTEGER NOT NULL DEFAULT 0,
            demo INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            ended_at TEXT
        )""")
    db.execute("""
        CREATE TABLE session_players (
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            player_id INTEGER NOT NULL REFERENCES players(id),
            PRIMARY KEY (session_id, seat),
            UNIQUE (session_id, player_id)
        )""")
    db.execute("""
        CREATE TABLE rounds (
            id INTEGER PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            dealer TEXT,
            tiplu TEXT,
            turned TEXT,
            winner TEXT,
            finish TEXT,
            settlement TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (session_id, number)
        )""")
    db.execute("""
        CREATE TABLE round_players (
            round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
            seat INTEGER NOT NULL,
            player_id INTEGER NOT NULL REFERENCES players(id),
            seen INTEGER NOT NULL DEFAULT 0,
            seen_by TEXT,
            maal INTEGER,
            maal_cards TEXT,
            maal_items TEXT,
            penalty INTEGER,
            penalty_cards TEXT,
            penalty_detail TEXT,
            wrong_close INTEGER NOT NULL DEFAULT 0,
            net INTEGER NOT NULL,
            total INTEGER NOT NULL,
            PRIMARY KEY (round_id, seat)
        )""")
    db.execute("""
        CREATE TABLE payments (
            id INTEGER PRIMARY KEY,
            round_id INTEGER NOT NULL REFERENCES rounds(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            payer TEXT NOT NULL,
            payee TEXT NOT NULL,
            points INTEGER NOT NULL,
            reason TEXT NOT NULL
        )""")
    db.execute("""
        CREATE TABLE idempotency_keys (
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            status INTEGER NOT NULL,
            response TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (session_id, key)
        )""")
    db.execute("""
        CREATE TABLE audit (
            id INTEGER PRIMARY KEY,
            at TEXT NOT NULL,
            session_id INTEGER NOT NULL,
            round_number INTEGER,
            action TEXT NOT NULL,
            source TEXT NOT NULL DEFAULT '',
            before TEXT,
            after TEXT
        )""")
    db.execute("CREATE INDEX rounds_session ON rounds(session_id, number)")
    db.execute("CREATE INDEX payments_round ON payments(round_id, position)")
    db.execute("CREATE INDEX audit_session ON audit(session_id, id)")


@migrations()
def m002_false_declaration(db: sqlite_utils.Database) -> None:
    """Remember a nepali player's false declaration (the ``invalid_declaration_fine`` option)."""
    db.execute("ALTER TABLE round_players ADD COLUMN false_declaration INTEGER NOT NULL DEFAULT 0")


@migrations()
def m003_dealt_tunnelas(db: sqlite_utils.Database) -> None:
    """Keep the tunnelas a player showed at the deal (they change the maal bonus)."""
    db.execute("ALTER TABLE round_players ADD COLUMN dealt_tunnelas TEXT")


@migrations()
def m004_photos(db: sqlite_utils.Database) -> None:
    """Photos kept with their session and, once it is saved, their round (files under generated names)."""
    db.execute("""
        CREATE TABLE photos (
            id TEXT PRIMARY KEY,
            session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            round_id INTEGER REFERENCES rounds(id) ON DELETE SET NULL,
            seat INTEGER,
            purpose TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            reading TEXT,
            created_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX photos_session ON photos(session_id, round_id)")


@migrations()
def m005_audit_undoes(db: sqlite_utils.Database) -> None:
    """A restore names the audit entry it undoes, so a deleted round comes back once and History can say so."""
    db.execute("ALTER TABLE audit ADD COLUMN undoes INTEGER REFERENCES audit(id)")


@migrations()
def m006_murder_or_kidnap(db: sqlite_utils.Database) -> None:
    """``murder`` and ``kidnap`` now exclude each other (RULES.md), so a session saved with both is kept readable.

    Murder is kept and kidnap turned off; the recorded rounds keep their settlements,
    and the audit says what changed so the table can decide again in its settings.
    """
    rows = db.execute("SELECT id, options FROM sessions").fetchall()
    for session_id, text in rows:
        options = json.loads(text)
        if options.get("murder") is True and options.get("kidnap") is True:
            changed = {**options, "kidnap": False}
            db.execute("UPDATE sessions SET options = ? WHERE id = ?",
                       [json.dumps(changed, ensure_ascii=False, sort_keys=True), session_id])
            db.execute("INSERT INTO audit(at, session_id, action, source, before, after) VALUES (?, ?, ?, ?, ?, ?)",
                       [datetime.now(timezone.utc).isoformat(timespec="seconds"), session_id, "edit session",
                        "upgrade: murder and kidnap exclude each other", json.dumps({"options": options}),
                        json.dumps({"options": changed})])


@migrations()
def m007_session_deck(db: sqlite_utils.Database) -> None:
    """The deck a session's photos are read with: an enrolled deck's folder name, NULL for the shipped model.

    Sessions saved before decks could be chosen keep NULL: they go on with the standard deck.
    """
    db.execute("ALTER TABLE sessions ADD COLUMN deck TEXT")


@migrations()
def m008_corrections(db: sqlite_utils.Database) -> None:
    """Cards a player confirmed or changed in a photo review: the card's place in the photo's reading,
    each corner crop's file (under the photo's folder), the card read and the right one, and the deck
    that read it (NULL: the shipped model)."""
    db.execute("""
        CREATE TABLE corrections (
            id INTEGER PRIMARY KEY,
            photo_id TEXT NOT NULL REFERENCES photos(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            deck TEXT,
            card TEXT NOT NULL,
            read TEXT NOT NULL,
            file TEXT NOT NULL UNIQUE,
            created_at TEXT NOT NULL
        )""")
    db.execute("CREATE INDEX corrections_deck ON corrections(deck, id)")


@migrations()
def m009_photo_read_with(db: sqlite_utils.Database) -> None:
    """The deck that read each photo: an enrolled deck's folder name, '' for the standard model.

    A review's corrections are kept for that deck, even when the session's deck changed
    between the photo and the save. Photos kept before keep NULL: their corrections go to
    the session's deck at save time, as before.
    """
    db.execute("ALTER TABLE photos ADD COLUMN read_with TEXT")


@migrations()
def m010_devices(db: sqlite_utils.Database) -> None:
    """The phones and programs let in with the table code, each with its own revocable cookie.

    The cookie holds a signed device id, not the code: one device can be shut out
    (``revoked_at``) without a new code for everyone. ``label`` and ``address`` are what
    the join page shows to tell devices apart.
    """
    db.execute("""
        CREATE TABLE devices (
            id TEXT PRIMARY KEY,
            label TEXT NOT NULL DEFAULT '',
            address TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            revoked_at TEXT
        )""")


@migrations()
def m011_session_rate(db: sqlite_utils.Database) -> None:
    """What a point is worth in money, as the table agreed: hundredths of the currency, and its word or symbol.

    Only shown beside the points at settle-up; the points stay the score. Sessions saved
    before keep NULL (points only), and the empty currency.
    """
    db.execute("ALTER TABLE sessions ADD COLUMN rate_hundredths INTEGER")
    db.execute("ALTER TABLE sessions ADD COLUMN rate_currency TEXT NOT NULL DEFAULT ''")

@migrations()
def m012_round_version(db: sqlite_utils.Database) -> None:
    """A round's version, one more at each edit: an edit or a delete names the version it was read at, so
    a stale one (another phone changed the round since) is refused rather than overwriting that change."""
    db.execute("ALTER TABLE rounds ADD COLUMN version INTEGER NOT NULL DEFAULT 1")


def connect(path: str | os.PathLike[str]) -> sqlite_utils.Database:
    """Open the file with the ledger's pragmas, without migrating it."""
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    db = sqlite_utils.Database(conn)
    db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    db.execute("PRAGMA foreign_keys = ON")
    if str(path) != ":memory:":
        mode = db.execute("PRAGMA journal_mode").fetchone()[0]
        if mode.lower() != "wal":
            db.enable_wal()
    db.execute("PRAGMA synchronous = FULL")
    return db


def open_db(path: str | os.PathLike[str]) -> sqlite_utils.Database:
    """Open (creating if needed) and migrate the ledger file at ``path``."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    db = connect(path)
    if migrations.pending(db):
        with write(db):
            migrations.apply(db)
    return db


@contextlib.contextmanager
def write(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    """One write transaction: everything inside commits together or not at all.

    ``BEGIN IMMEDIATE`` takes the write lock at the start, so a concurrent
    writer waits (busy timeout) instead of failing half way.

    >>> db = open_db(":memory:")
    >>> with write(db):
    ...     _ = db.execute("INSERT INTO players(name, created_at) VALUES ('Anna', '')")
    >>> db.execute("SELECT count(*) FROM players").fetchone()[0]
    1
    """
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise


def database_path(app: Flask) -> str:
    """Where the app keeps its ledger: config ``DATABASE``, else ``TIPLU_DB``, else the instance folder."""
    configured = app.config.get("DATABASE") or os.environ.get("TIPLU_DB")
    if configured:
        return str(configured)
    return os.path.join(app.instance_path, "tiplu.db")


def folder_beside_ledger(setting: str, name: str, app: Flask | None = None) -> Path:
    """A folder the app keeps files in (photos, decks): config ``setting`` if set, else ``name``
    next to the ledger file, else ``name`` in the instance folder (an in-memory ledger)."""
    app = app or current_app
    configured = app.config.get(setting)
    if configured:
        return Path(configured)
    database = str(app.config.get("DATABASE") or "")
    if database and database != ":memory:":
        return Path(database).resolve().parent / name
    return Path(app.instance_path) / name


def get_db() -> sqlite_utils.Database:
    """The request's connection (one per request, kept on ``flask.g``)."""
    if "db" not in g:
        g.db = connect(current_app.config["DATABASE"])
    return g.db


def close_db(_error: BaseException | None = None) -> None:
    db = g.pop("db", None)
    if db is not None:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        db.close()


def check_ledger(path: str | os.PathLike[str]) -> dict[str, object]:
    """What to look at after a crash: SQLite's integrity check, migrations and row counts.

    >>> check_ledger(":memory:")["integrity"]
    'ok'
    """
    db = open_db(path)
    try:
        return {
            "path": str(path),
            "integrity": db.execute("PRAGMA integrity_check").fetchone()[0],
            "journal_mode": db.execute("PRAGMA journal_mode").fetchone()[0],
            "migrations": [m.name for m in migrations.applied(db)],
            "sessions": db.execute("SELECT count(*) FROM sessions").fetchone()[0],
            "rounds": db.execute("SELECT count(*) FROM rounds").fetchone()[0],
        }
    finally:
        db.close()


def init_app(app: Flask) -> None:
    """Resolve the file, migrate it once at start-up and close connections after each request.

    One connection stays open while the app lives: it keeps SQLite's shared-memory
    index (``-shm``, 32 KB) in place. Were every connection closed between requests, the
    next one would have to write that file anew, which fails on a full disk, and then
    even reading the ledger would fail.
    """
    app.config["DATABASE"] = database_path(app)
    keeper = open_db(app.config["DATABASE"])
    if app.config["DATABASE"] != ":memory:":
        keeper.execute("SELECT count(*) FROM sqlite_master").fetchone()
        app.extensions["tiplu_ledger_keeper"] = keeper
    else:
        keeper.close()
    app.teardown_appcontext(close_db)

    @app.cli.command("check-ledger")
    def check_ledger_command() -> None:
        """Check the ledger file (integrity, schema version, counts)."""
        import click
        report = check_ledger(app.config["DATABASE"])
        for key, value in report.items():
            click.echo(f"{key}: {', '.join(value) if isinstance(value, list) else value}")
        if report["integrity"] != "ok":
            raise SystemExit(1)
