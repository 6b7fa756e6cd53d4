"""The session ledger: sessions, rounds, totals, standings and the audit trail in SQLite.

Every write is one transaction (:func:`web.db.write`): a round, its player
lines, its payments, the recomputed running totals, its idempotency key and its
audit entry commit together or not at all, so a failed request leaves the data
as it was. Totals are stored per round (``round_players.total``) and recomputed
from the changed round onwards whenever a round is added, edited or deleted.

>>> from web.db import open_db
>>> db = open_db(":memory:")
>>> sid = create_session(db, ["Anna", "Ben"], "nepali", {})
>>> get_session(db, sid)["players"]
['Anna', 'Ben']
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
import unicodedata
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

import sqlite_utils

from scorer import RuleSet, TipluError, get_rules
from web.db import write
from web.i18n import _
from web.rounds import InputError, ScoredRound, player_dict, score_round

MAX_NAME_LENGTH = 40
MAX_ROUNDS_PLANNED = 1000


class NotFoundError(TipluError):
    """An unknown session or round number (HTTP 404)."""


class ConflictError(TipluError):
    """A change the session's state forbids, e.g. new rules after the first round (HTTP 409)."""


class KeyReusedError(ConflictError):
    """An ``Idempotency-Key`` (or a form's submission token) already used for a different round."""


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def clean_name(name: Any) -> str:
    """A player's name as stored: trimmed, printable, at most 40 characters.

    >>> clean_name("  Anna ")
    'Anna'
    """
    if not isinstance(name, str):
        raise InputError(_("player name %(name)r: write it as text", name=name))
    text = " ".join(name.split())
    if not text:
        raise InputError(_("player name is empty: give every player a name"))
    if len(text) > MAX_NAME_LENGTH:
        raise InputError(_("player name '%(name)s…' is too long (at most %(n)s characters)",
                           name=text[:MAX_NAME_LENGTH], n=MAX_NAME_LENGTH))
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise InputError(_("player name %(name)r: remove control characters", name=text))
    return text


def check_players(names: Any, rules: RuleSet) -> list[str]:
    """Clean the seat list and check its size against the family's 2-6 limits."""
    if not isinstance(names, list):
        raise InputError(_('players: give a list of names in seat order, e.g. ["Anna", "Ben", "Carla"]'))
    cleaned = [clean_name(n) for n in names]
    seen: set[str] = set()
    for name in cleaned:
        if name.casefold() in seen:
            raise InputError(_("players: '%(name)s' is given twice (names must differ)", name=name))
        seen.add(name.casefold())
    low, high = rules.players_min, rules.players_max
    if not low <= len(cleaned) <= high:
        hint = _(" (set players_max to 6 for six)") if high < 6 and len(cleaned) == 6 else ""
        raise InputError(_("players: the %(rules)s rules need %(low)s to %(high)s players, got %(n)s",
                           rules=rules.name, low=low, high=high, n=len(cleaned)) + hint)
    return cleaned


def _rounds_planned(value: Any) -> int | None:
    if value in (None, ""):
        return None
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit())):
        raise InputError(_("rounds_planned: '%(value)s' is not a whole number", value=value))
    number = int(value)
    if not 1 <= number <= MAX_ROUNDS_PLANNED:
        raise InputError(_("rounds_planned: %(n)s is not between 1 and %(max)s", n=number, max=MAX_ROUNDS_PLANNED))
    return number


def _options(value: Any) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InputError(_('options: give an object of house-rule options, e.g. {"tiplu_pair": 8}'))
    return value


def _last_id(cursor: sqlite3.Cursor) -> int:
    if cursor.lastrowid is None:
        raise RuntimeError("SQLite returned no row id for an insert")
    return int(cursor.lastrowid)


def _player_id(db: sqlite_utils.Database, name: str) -> int:
    db.execute("INSERT OR IGNORE INTO players(name, created_at) VALUES (?, ?)", [name, now()])
    return db.execute("SELECT id FROM players WHERE name = ?", [name]).fetchone()[0]


def _audit(db: sqlite_utils.Database, session_id: int, action: str, *, round_number: int | None = None,
           before: Any = None, after: Any = None, source: str = "") -> None:
    db.execute(
        "INSERT INTO audit(at, session_id, round_number, action, source, before, after) VALUES (?,?,?,?,?,?,?)",
        [now(), session_id, round_number, action, source,
         None if before is None else _dumps(before), None if after is None else _dumps(after)])


def create_session(db: sqlite_utils.Database, players: Any, rules: Any = "nepali",
                   options: Any = None, *, rounds_planned: Any = None, title: Any = "",
                   first_dealer: int = 0, demo: bool = False, source: str = "") -> int:
    """Create a session with its seats (in clockwise order) and rules; returns its id.

    Players are found by name (ignoring case) and reused across sessions.
    """
    if not isinstance(rules, str):
        raise InputError(_('rules: give the rule family\'s name, e.g. "nepali" or "rummy"'))
    ruleset = get_rules(rules, _options(options))
    names = check_players(players, ruleset)
    planned = _rounds_planned(rounds_planned)
    title_text = " ".join(str(title or "").split())[:80]
    if not 0 <= first_dealer < len(names):
        raise InputError(_("first_dealer: seat %(seat)s does not exist (0 to %(last)s)", seat=first_dealer,
                           last=len(names) - 1))
    with write(db):
        cursor = db.execute(
            "INSERT INTO sessions(title, rules, options, rounds_planned, first_dealer, demo, created_at) "
            "VALUES (?,?,?,?,?,?,?)",
            [title_text, ruleset.name, _dumps(dict(ruleset.options)), planned, first_dealer, int(demo), now()])
        session_id = _last_id(cursor)
        for seat, name in enumerate(names):
            db.execute("INSERT INTO session_players(session_id, seat, player_id) VALUES (?,?,?)",
                       [session_id, seat, _player_id(db, name)])
        _audit(db, session_id, "create session", source=source,
               after={"players": names, "rules": ruleset.name, "options": dict(ruleset.options),
                      "rounds_planned": planned, "title": title_text})
    return session_id


def _session_row(db: sqlite_utils.Database, session_id: Any) -> dict[str, Any]:
    try:
        key = int(session_id)
    except (TypeError, ValueError):
        raise NotFoundError(_("session '%(id)s' does not exist", id=session_id)) from None
    row = db.execute("SELECT * FROM sessions WHERE id = ?", [key]).fetchone()
    if row is None:
        raise NotFoundError(_("session %(id)s does not exist", id=key))
    columns = [d[0] for d in db.execute("SELECT * FROM sessions LIMIT 0").description]
    return dict(zip(columns, row))


def session_players(db: sqlite_utils.Database, session_id: int) -> list[str]:
    rows = db.execute("SELECT p.name FROM session_players sp JOIN players p ON p.id = sp.player_id "
                      "WHERE sp.session_id = ? ORDER BY sp.seat", [session_id]).fetchall()
    return [r[0] for r in rows]


def session_rules(row: Mapping[str, Any]) -> RuleSet:
    return get_rules(row["rules"], json.loads(row["options"]))


def dealer_for(players: Sequence[str], first_dealer: int, number: int, direction: str) -> str:
    """Who deals round ``number`` (1-based): seats are listed clockwise.

    >>> dealer_for(["A", "B", "C"], 0, 2, "clockwise"), dealer_for(["A", "B", "C"], 0, 2, "counter-clockwise")
    ('B', 'C')
    """
    step = -1 if direction == "counter-clockwise" else 1
    return players[(first_dealer + step * (number - 1)) % len(players)]


def _round_rows(db: sqlite_utils.Database, session_id: int) -> list[dict[str, Any]]:
    cursor = db.execute("SELECT * FROM rounds WHERE session_id = ? ORDER BY number", [session_id])
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, r)) for r in cursor.fetchall()]


def _round_dict(db: sqlite_utils.Database, row: Mapping[str, Any], rules: str) -> dict[str, Any]:
    cursor = db.execute(
        "SELECT p.name, rp.* FROM round_players rp JOIN players p ON p.id = rp.player_id "
        "WHERE rp.round_id = ? ORDER BY rp.seat", [row["id"]])
    columns = [d[0] for d in cursor.description]
    players: dict[str, Any] = {}
    totals: dict[str, int] = {}
    for values in cursor.fetchall():
        line = dict(zip(columns, values))
        totals[line["name"]] = line["total"]
        if rules == "rummy":
            players[line["name"]] = {
                "penalty": line["penalty"],
                "cards": json.loads(line["penalty_cards"]) if line["penalty_cards"] else None,
                "penalty_detail": json.loads(line["penalty_detail"]) if line["penalty_detail"] else None,
                "wrong_close": bool(line["wrong_close"]), "net": line["net"], "total": line["total"]}
        else:
            players[line["name"]] = {
                "seen": bool(line["seen"]), "seen_by": line["seen_by"], "maal": line["maal"],
                "cards": json.loads(line["maal_cards"]) if line["maal_cards"] else None,
                "maal_items": json.loads(line["maal_items"]) if line["maal_items"] else [],
                "dealt_tunnelas": json.loads(line["dealt_tunnelas"]) if line["dealt_tunnelas"] else [],
                "false_declaration": bool(line["false_declaration"]), "net": line["net"], "total": line["total"]}
    settlement = json.loads(row["settlement"])
    return {"number": row["number"], "dealer": row["dealer"], "tiplu": row["tiplu"], "turned": row["turned"],
            "winner": row["winner"], "finish": row["finish"], "players": players,
            "net": settlement["net"], "payments": settlement["payments"],
            "adjustments": settlement.get("adjustments", []), "totals": totals,
            "created_at": row["created_at"], "updated_at": row["updated_at"]}


def standings(players: Sequence[str], totals: Mapping[str, int], lower_is_better: bool,
              played: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """Rank players by total (ties share a rank) and name the winners (all tied leaders).

    >>> standings(["A", "B", "C"], {"A": 5, "B": 5, "C": -10}, False, True)[1]
    ['A', 'B']
    """
    order = sorted(players, key=lambda p: (totals.get(p, 0) if lower_is_better else -totals.get(p, 0)))
    table: list[dict[str, Any]] = []
    for index, name in enumerate(order):
        if index and totals.get(name, 0) == totals.get(order[index - 1], 0):
            rank = table[-1]["rank"]
        else:
            rank = index + 1
        table.append({"name": name, "total": totals.get(name, 0), "rank": rank})
    winners = [row["name"] for row in table if row["rank"] == 1] if played else []
    return table, winners


def get_session(db: sqlite_utils.Database, session_id: Any) -> dict[str, Any]:
    """Everything about a session: players, rules, options, rounds with settlements, totals."""
    row = _session_row(db, session_id)
    players = session_players(db, row["id"])
    rules = session_rules(row)
    rounds = [_round_dict(db, r, row["rules"]) for r in _round_rows(db, row["id"])]
    totals = dict(rounds[-1]["totals"]) if rounds else {p: 0 for p in players}
    table, winners = standings(players, totals, rules.lower_is_better, bool(rounds))
    direction = rules.options.get("direction", "clockwise")
    return {
        "id": row["id"], "title": row["title"], "rules": rules.name, "options": dict(rules.options),
        "players": players, "rounds_planned": row["rounds_planned"], "first_dealer": row["first_dealer"],
        "direction": direction, "demo": bool(row["demo"]), "created_at": row["created_at"],
        "ended_at": row["ended_at"], "options_locked": bool(rounds), "lower_is_better": rules.lower_is_better,
        "rounds": rounds, "totals": totals, "standings": table, "winners": winners,
        "next_dealer": dealer_for(players, row["first_dealer"], len(rounds) + 1, direction),
    }


def list_sessions(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Sessions newest first, with their players and how many rounds they have."""
    cursor = db.execute(
        "SELECT s.id, s.title, s.rules, s.demo, s.created_at, s.ended_at, s.rounds_planned, "
        "(SELECT count(*) FROM rounds r WHERE r.session_id = s.id) AS rounds "
        "FROM sessions s ORDER BY s.id DESC")
    columns = [d[0] for d in cursor.description]
    sessions = [dict(zip(columns, r)) for r in cursor.fetchall()]
    for item in sessions:
        item["players"] = session_players(db, item["id"])
        item["demo"] = bool(item["demo"])
    return sessions


def _recompute(db: sqlite_utils.Database, session: Mapping[str, Any], players: Sequence[str],
               rules: RuleSet, from_number: int = 1) -> None:
    """Renumber rounds from ``from_number`` on, reassign their dealers and rebuild their running totals.

    Rounds before ``from_number`` are unchanged, so their totals are the starting point.
    """
    direction = rules.options.get("direction", "clockwise")
    running = {seat: 0 for seat in range(len(players))}
    if from_number > 1:
        for seat, total in db.execute(
                "SELECT rp.seat, rp.total FROM round_players rp JOIN rounds r ON r.id = rp.round_id "
                "WHERE r.session_id = ? AND r.number = ?", [session["id"], from_number - 1]).fetchall():
            running[seat] = total
    rows = [r for r in _round_rows(db, session["id"]) if r["number"] >= from_number]
    for position, row in enumerate(rows, start=from_number):
        db.execute("UPDATE rounds SET number = ?, dealer = ? WHERE id = ?",
                   [position, dealer_for(players, session["first_dealer"], position, direction), row["id"]])
        for seat, net in db.execute("SELECT seat, net FROM round_players WHERE round_id = ? ORDER BY seat",
                                    [row["id"]]).fetchall():
            running[seat] += net
            db.execute("UPDATE round_players SET total = ? WHERE round_id = ? AND seat = ?",
                       [running[seat], row["id"], seat])


def _store_lines(db: sqlite_utils.Database, session_id: int, round_id: int, scored: ScoredRound) -> None:
    ids = dict(db.execute("SELECT seat, player_id FROM session_players WHERE session_id = ?",
                          [session_id]).fetchall())
    net = scored.settlement["net"]
    if set(net) != {line.name for line in scored.lines}:
        raise InputError(_("the settlement does not name every player; nothing was saved"))
    for line in scored.lines:
        db.execute(
            "INSERT INTO round_players(round_id, seat, player_id, seen, seen_by, maal, maal_cards, maal_items, "
            "penalty, penalty_cards, penalty_detail, wrong_close, false_declaration, dealt_tunnelas, net, total) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,0)",
            [round_id, line.seat, ids[line.seat], int(line.seen), line.seen_by, line.maal,
             None if line.maal_cards is None else _dumps(list(line.maal_cards)),
             _dumps(list(line.maal_items)) if line.maal_items else None,
             line.penalty, None if line.penalty_cards is None else _dumps(list(line.penalty_cards)),
             None if line.penalty_detail is None else _dumps(line.penalty_detail),
             int(line.wrong_close), int(line.false_declaration),
             _dumps(list(line.dealt_tunnelas)) if line.dealt_tunnelas else None, int(net[line.name])])
    for position, payment in enumerate(scored.settlement["payments"]):
        db.execute("INSERT INTO payments(round_id, position, payer, payee, points, reason) VALUES (?,?,?,?,?,?)",
                   [round_id, position, payment["from"], payment["to"], int(payment["points"]), payment["reason"]])


def _round_row(db: sqlite_utils.Database, session_id: int, number: Any) -> dict[str, Any]:
    try:
        key = int(number)
    except (TypeError, ValueError):
        raise NotFoundError(_("round '%(n)s' does not exist", n=number)) from None
    cursor = db.execute("SELECT * FROM rounds WHERE session_id = ? AND number = ?", [session_id, key])
    values = cursor.fetchone()
    if values is None:
        raise NotFoundError(_("session %(id)s has no round %(n)s", id=session_id, n=key))
    return dict(zip([d[0] for d in cursor.description], values))


def _check_open(session: Mapping[str, Any]) -> None:
    if session["ended_at"]:
        raise ConflictError(_("session %(id)s has ended; reopen it to change its rounds", id=session["id"]))


def request_hash(payload: Any) -> str:
    return hashlib.sha256(_dumps(payload).encode()).hexdigest()


def preview_round(db: sqlite_utils.Database, session_id: Any, payload: Any) -> dict[str, Any]:
    """Score a round without storing it (what the round-entry page shows before saving)."""
    session = _session_row(db, session_id)
    players = session_players(db, session["id"])
    return score_round(session_rules(session), players, payload).to_dict()


def add_round(db: sqlite_utils.Database, session_id: Any, payload: Any, *,
              idempotency_key: str | None = None, source: str = "") -> tuple[dict[str, Any], bool]:
    """Score and store a new round; returns ``(round, replayed)``.

    With an ``idempotency_key`` a repeated request returns the round stored the
    first time (``replayed`` is True) and adds nothing; the key is stored in the
    same transaction as the round.
    """
    if idempotency_key is not None and not (0 < len(idempotency_key) <= 200):
        raise InputError(_("Idempotency-Key: use 1 to 200 characters"))
    digest = request_hash(payload)
    with write(db):
        session = _session_row(db, session_id)
        if idempotency_key is not None:
            stored = db.execute("SELECT request_hash, response FROM idempotency_keys WHERE session_id = ? AND key = ?",
                                [session["id"], idempotency_key]).fetchone()
            if stored is not None:
                if stored[0] != digest:
                    raise KeyReusedError(_("Idempotency-Key was already used for a different round; "
                                          "send a new key for a new round"))
                return json.loads(stored[1]), True
        _check_open(session)
        players = session_players(db, session["id"])
        rules = session_rules(session)
        scored = score_round(rules, players, payload)
        number = db.execute("SELECT coalesce(max(number), 0) + 1 FROM rounds WHERE session_id = ?",
                            [session["id"]]).fetchone()[0]
        stamp = now()
        cursor = db.execute(
            "INSERT INTO rounds(session_id, number, tiplu, turned, winner, finish, settlement, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [session["id"], number, scored.tiplu, scored.turned, scored.winner, scored.finish,
             _dumps(scored.settlement), stamp, stamp])
        _store_lines(db, session["id"], _last_id(cursor), scored)
        _recompute(db, session, players, rules, number)
        result = _round_dict(db, _round_row(db, session["id"], number), session["rules"])
        _audit(db, session["id"], "add round", round_number=number, after=result, source=source)
        if idempotency_key is not None:
            db.execute("INSERT INTO idempotency_keys(session_id, key, request_hash, status, response, created_at) "
                       "VALUES (?,?,?,?,?,?)", [session["id"], idempotency_key, digest, 201, _dumps(result), stamp])
    return result, False


def get_round(db: sqlite_utils.Database, session_id: Any, number: Any) -> dict[str, Any]:
    session = _session_row(db, session_id)
    return _round_dict(db, _round_row(db, session["id"], number), session["rules"])


def update_round(db: sqlite_utils.Database, session_id: Any, number: Any, payload: Any, *,
                 source: str = "") -> dict[str, Any]:
    """Replace a round's entries, re-settle it and recompute every total after it."""
    with write(db):
        session = _session_row(db, session_id)
        _check_open(session)
        row = _round_row(db, session["id"], number)
        before = _round_dict(db, row, session["rules"])
        players = session_players(db, session["id"])
        rules = session_rules(session)
        scored = score_round(rules, players, payload)
        db.execute("DELETE FROM round_players WHERE round_id = ?", [row["id"]])
        db.execute("DELETE FROM payments WHERE round_id = ?", [row["id"]])
        db.execute("UPDATE rounds SET tiplu = ?, turned = ?, winner = ?, finish = ?, settlement = ?, updated_at = ? "
                   "WHERE id = ?", [scored.tiplu, scored.turned, scored.winner, scored.finish,
                                    _dumps(scored.settlement), now(), row["id"]])
        _store_lines(db, session["id"], row["id"], scored)
        _recompute(db, session, players, rules, row["number"])
        after = _round_dict(db, _round_row(db, session["id"], row["number"]), session["rules"])
        _audit(db, session["id"], "edit round", round_number=row["number"], before=before, after=after, source=source)
    return after


def delete_round(db: sqlite_utils.Database, session_id: Any, number: Any, *, source: str = "") -> None:
    """Remove a round; later rounds move up one number and every total after it is recomputed."""
    with write(db):
        session = _session_row(db, session_id)
        _check_open(session)
        row = _round_row(db, session["id"], number)
        before = _round_dict(db, row, session["rules"])
        db.execute("DELETE FROM rounds WHERE id = ?", [row["id"]])
        _recompute(db, session, session_players(db, session["id"]), session_rules(session), row["number"])
        _audit(db, session["id"], "delete round", round_number=row["number"], before=before, source=source)


def update_session(db: sqlite_utils.Database, session_id: Any, changes: Any, *, source: str = "") -> dict[str, Any]:
    """Change a session's title or planned rounds any time; rules, options and players only before round 1."""
    if not isinstance(changes, Mapping):
        raise InputError(_('send the changes as a JSON object, e.g. {"rounds_planned": 8}'))
    allowed = {"title", "rounds_planned", "rules", "options", "players", "first_dealer"}
    unknown = set(changes) - allowed
    if unknown:
        raise InputError(_("unknown field %(fields)s (use %(allowed)s)", fields=", ".join(sorted(map(repr, unknown))),
                           allowed=", ".join(sorted(allowed))))
    with write(db):
        session = _session_row(db, session_id)
        before = get_session(db, session["id"])
        has_rounds = bool(before["rounds"])
        locked = {"rules", "options", "players", "first_dealer"} & set(changes)
        if locked and has_rounds:
            raise ConflictError(_("%(fields)s are fixed once the first round is played "
                                  "(start a new session to change them)", fields=", ".join(sorted(locked))))
        if "title" in changes:
            db.execute("UPDATE sessions SET title = ? WHERE id = ?",
                       [" ".join(str(changes["title"] or "").split())[:80], session["id"]])
        if "rounds_planned" in changes:
            db.execute("UPDATE sessions SET rounds_planned = ? WHERE id = ?",
                       [_rounds_planned(changes["rounds_planned"]), session["id"]])
        if locked:
            name = changes.get("rules", session["rules"])
            if not isinstance(name, str):
                raise InputError(_('rules: give the rule family\'s name, e.g. "nepali" or "rummy"'))
            options = changes["options"] if "options" in changes else (
                json.loads(session["options"]) if name == session["rules"] else {})
            ruleset = get_rules(name, _options(options))
            names = check_players(changes.get("players", before["players"]), ruleset)
            first = changes.get("first_dealer", session["first_dealer"])
            if isinstance(first, bool) or not isinstance(first, int) or not 0 <= first < len(names):
                raise InputError(_("first_dealer: give a seat number from 0 to %(last)s", last=len(names) - 1))
            db.execute("UPDATE sessions SET rules = ?, options = ?, first_dealer = ? WHERE id = ?",
                       [ruleset.name, _dumps(dict(ruleset.options)), first, session["id"]])
            db.execute("DELETE FROM session_players WHERE session_id = ?", [session["id"]])
            for seat, name in enumerate(names):
                db.execute("INSERT INTO session_players(session_id, seat, player_id) VALUES (?,?,?)",
                           [session["id"], seat, _player_id(db, name)])
        after = get_session(db, session["id"])
        _audit(db, session["id"], "edit session", source=source,
               before={k: before[k] for k in ("title", "rounds_planned", "rules", "options", "players")},
               after={k: after[k] for k in ("title", "rounds_planned", "rules", "options", "players")})
    return after


def end_session(db: sqlite_utils.Database, session_id: Any, *, ended: bool = True, source: str = "") -> dict[str, Any]:
    """Mark a session ended (no more rounds) or reopen it."""
    with write(db):
        session = _session_row(db, session_id)
        db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", [now() if ended else None, session["id"]])
        _audit(db, session["id"], "end session" if ended else "reopen session", source=source)
    return get_session(db, session["id"])


def delete_session(db: sqlite_utils.Database, session_id: Any, *, source: str = "") -> None:
    """Delete a whole session (the audit keeps a copy of it)."""
    with write(db):
        session = get_session(db, session_id)
        db.execute("DELETE FROM sessions WHERE id = ?", [session["id"]])
        _audit(db, session["id"], "delete session", before=session, source=source)


def audit_trail(db: sqlite_utils.Database, session_id: Any) -> list[dict[str, Any]]:
    """What changed in a session and when, newest first."""
    session = _session_row(db, session_id)
    cursor = db.execute("SELECT id, at, round_number, action, source, before, after FROM audit "
                        "WHERE session_id = ? ORDER BY id DESC", [session["id"]])
    entries = []
    for entry_id, at, number, action, source, before, after in cursor.fetchall():
        entries.append({"id": entry_id, "at": at, "round": number, "action": action, "source": source,
                        "before": json.loads(before) if before else None,
                        "after": json.loads(after) if after else None})
    return entries


def _cell(value: Any) -> Any:
    """Keep spreadsheet programs from running text that starts like a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


CSV_COLUMNS = ("round", "dealer", "tiplu", "turned", "winner", "finish", "player", "seen", "maal",
               "maal_cards", "penalty", "penalty_cards", "wrong_close", "net", "total")


def export_csv(db: sqlite_utils.Database, session_id: Any) -> str:
    """One row per player per round, with the running total."""
    session = get_session(db, session_id)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rnd in session["rounds"]:
        for name, line in rnd["players"].items():
            writer.writerow([_cell(v) for v in (
                rnd["number"], rnd["dealer"], rnd["tiplu"] or "", rnd["turned"] or "", rnd["winner"] or "",
                rnd["finish"] or "", name,
                "" if "seen" not in line else ("yes" if line["seen"] else "no"),
                "" if line.get("maal") is None else line["maal"],
                " ".join(line["cards"]) if line.get("cards") and "maal" in line else "",
                "" if line.get("penalty") is None else line["penalty"],
                " ".join(line["cards"]) if line.get("cards") and "penalty" in line else "",
                "" if "wrong_close" not in line else ("yes" if line["wrong_close"] else "no"),
                line["net"], line["total"])])
    return out.getvalue()


def export_json(db: sqlite_utils.Database, session_id: Any) -> dict[str, Any]:
    """The whole session plus its audit trail, for backup or another program."""
    session = get_session(db, session_id)
    return {"format": "tiplu-session", "version": 1, "session": session,
            "audit": audit_trail(db, session_id)}


__all__ = [
    "ConflictError", "InputError", "KeyReusedError", "NotFoundError", "add_round", "audit_trail", "create_session",
    "delete_round", "delete_session", "end_session", "export_csv", "export_json", "get_round", "get_session",
    "list_sessions", "player_dict", "preview_round", "standings", "update_round", "update_session",
]
