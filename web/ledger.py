"""The session ledger: sessions, rounds, totals, standings and the audit trail in SQLite.

Every write is one transaction (:func:`web.db.write`): a round, its player
lines, its payments, the recomputed running totals, its idempotency key and its
audit entry commit together or not at all, so a failed request leaves the data
as it was. Totals are stored per round (``round_players.total``) and recomputed
from the changed round onwards whenever a round is added, edited or deleted.

Its functions take checked, typed input (:mod:`web.payloads`), never a raw request.

>>> from web.db import open_db
>>> from web.payloads import new_session
>>> db = open_db(":memory:")
>>> sid = create_session(db, new_session({"players": ["Anna", "Ben"], "rules": "nepali"}))
>>> get_session(db, sid)["players"]
['Anna', 'Ben']
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

import sqlite_utils

from scorer import RuleSet, get_rules
from scorer.kinds import Scoring
from web.bounds import MAX_ID, MAX_TOTAL
from web.db import write
from web.errors import BadRequest, Conflict, Gone, KeyReused, NotFound, RoundChanged, StaleRound
from web.i18n import _
from web.payloads import NewSession, Rate, RoundEntry, SessionChanges, check_seat_count, round_entry
from web.rounds import ScoredRound, score_round


@dataclass(frozen=True)
class SessionSetup:
    """What a round is checked against: the session's id, its players in seat order and its rules
    (and the deck its photos are read with, None for the shipped model)."""

    id: int
    players: tuple[str, ...]
    rules: RuleSet
    deck: str | None = None


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _last_id(cursor: sqlite3.Cursor) -> int:
    if cursor.lastrowid is None:
        raise RuntimeError("SQLite returned no row id for an insert")
    return int(cursor.lastrowid)


def _player_id(db: sqlite_utils.Database, name: str) -> int:
    db.execute("INSERT OR IGNORE INTO players(name, created_at) VALUES (?, ?)", [name, now()])
    return db.execute("SELECT id FROM players WHERE name = ?", [name]).fetchone()[0]


def _audit(db: sqlite_utils.Database, session_id: int, action: str, *, round_number: int | None = None,
           before: Any = None, after: Any = None, source: str = "", undoes: int | None = None) -> int:
    return _last_id(db.execute(
        "INSERT INTO audit(at, session_id, round_number, action, source, before, after, undoes) "
        "VALUES (?,?,?,?,?,?,?,?)",
        [now(), session_id, round_number, action, source,
         None if before is None else _dumps(before), None if after is None else _dumps(after), undoes]))


def create_session(db: sqlite_utils.Database, new: NewSession, *, demo: bool = False, source: str = "") -> int:
    """Create a session with its seats (in clockwise order) and rules; returns its id.

    Players are found by name (ignoring case) and reused across sessions.
    """
    with write(db):
        cursor = db.execute(
            "INSERT INTO sessions(title, rules, options, rounds_planned, first_dealer, demo, created_at, deck, "
            "rate_hundredths, rate_currency) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [new.title, new.rules.name, _dumps(dict(new.rules.options)), new.rounds_planned, new.first_dealer,
             int(demo), now(), new.deck, *_rate_columns(new.rate)])
        session_id = _last_id(cursor)
        _seat_players(db, session_id, new.players)
        _audit(db, session_id, "create session", source=source,
               after={"players": list(new.players), "rules": new.rules.name, "options": dict(new.rules.options),
                      "rounds_planned": new.rounds_planned, "title": new.title, "deck": new.deck,
                      "rate": None if new.rate is None else new.rate.to_dict()})
    return session_id


def _rate_columns(rate: Rate | None) -> tuple[int | None, str]:
    """A rate as the sessions table keeps it: hundredths (NULL: points only) and the currency."""
    return (None, "") if rate is None else (rate.hundredths, rate.currency)


def session_rate(row: Mapping[str, Any]) -> Rate | None:
    """The money a point is worth in a session row, None for points only (every session saved before rates).

    >>> session_rate({"rate_hundredths": 1000, "rate_currency": "Rs"}), session_rate({"rate_hundredths": None})
    (Rate(hundredths=1000, currency='Rs'), None)
    """
    hundredths = row.get("rate_hundredths")
    return None if hundredths is None else Rate(int(hundredths), row.get("rate_currency") or "")


def _seat_players(db: sqlite_utils.Database, session_id: int, players: Sequence[str]) -> None:
    for seat, name in enumerate(players):
        db.execute("INSERT INTO session_players(session_id, seat, player_id) VALUES (?,?,?)",
                   [session_id, seat, _player_id(db, name)])


def _first(db: sqlite_utils.Database, sql: str, params: Sequence[Any]) -> dict[str, Any] | None:
    rows = list(db.query(sql, params))
    return rows[0] if rows else None


def _session_row(db: sqlite_utils.Database, session_id: int) -> dict[str, Any]:
    row = _first(db, "SELECT * FROM sessions WHERE id = ?", [session_id])
    if row is not None:
        return row
    raise NotFound(_("session %(id)s does not exist", id=session_id))


def session_players(db: sqlite_utils.Database, session_id: int) -> list[str]:
    rows = db.execute("SELECT p.name FROM session_players sp JOIN players p ON p.id = sp.player_id "
                      "WHERE sp.session_id = ? ORDER BY sp.seat", [session_id]).fetchall()
    return [r[0] for r in rows]


def session_rules(row: Mapping[str, Any]) -> RuleSet:
    return get_rules(row["rules"], json.loads(row["options"]))


def rules_of(session: Mapping[str, Any]) -> RuleSet:
    """The rules of a session as :func:`get_session` gives it (its options already decoded)."""
    return get_rules(session["rules"], session["options"])


def session_setup(db: sqlite_utils.Database, session_id: int) -> SessionSetup:
    """The players and rules a round of this session is checked against (404 for an unknown session)."""
    row = _session_row(db, session_id)
    return SessionSetup(row["id"], tuple(session_players(db, row["id"])), session_rules(row), row["deck"])


def dealer_for(players: Sequence[str], first_dealer: int, number: int, direction: str) -> str:
    """Who deals round ``number`` (1-based): seats are listed clockwise.

    >>> dealer_for(["A", "B", "C"], 0, 2, "clockwise"), dealer_for(["A", "B", "C"], 0, 2, "counter-clockwise")
    ('B', 'C')
    """
    step = -1 if direction == "counter-clockwise" else 1
    return players[(first_dealer + step * (number - 1)) % len(players)]


def _round_rows(db: sqlite_utils.Database, session_id: int) -> list[dict[str, Any]]:
    return list(db.query("SELECT * FROM rounds WHERE session_id = ? ORDER BY number", [session_id]))


def _json_or_none(text: str | None) -> Any:
    return json.loads(text) if text else None


def _round_dict(db: sqlite_utils.Database, row: Mapping[str, Any], scoring: Scoring) -> dict[str, Any]:
    players: dict[str, Any] = {}
    totals: dict[str, int] = {}
    for line in db.query("SELECT p.name, rp.* FROM round_players rp JOIN players p ON p.id = rp.player_id "
                         "WHERE rp.round_id = ? ORDER BY rp.seat", [row["id"]]):
        totals[line["name"]] = line["total"]
        if scoring == Scoring.PENALTY:
            players[line["name"]] = {
                "penalty": line["penalty"], "cards": _json_or_none(line["penalty_cards"]),
                "penalty_detail": _json_or_none(line["penalty_detail"]),
                "wrong_close": bool(line["wrong_close"]), "net": line["net"], "total": line["total"]}
        else:
            players[line["name"]] = {
                "seen": bool(line["seen"]), "seen_by": line["seen_by"], "maal": line["maal"],
                "cards": _json_or_none(line["maal_cards"]), "maal_items": _json_or_none(line["maal_items"]) or [],
                "dealt_tunnelas": _json_or_none(line["dealt_tunnelas"]) or [],
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


def get_session(db: sqlite_utils.Database, session_id: int) -> dict[str, Any]:
    """Everything about a session: players, rules, options, rounds with settlements, totals."""
    row = _session_row(db, session_id)
    players = session_players(db, row["id"])
    rules = session_rules(row)
    rounds = [_round_dict(db, r, rules.scoring) for r in _round_rows(db, row["id"])]
    totals = dict(rounds[-1]["totals"]) if rounds else {p: 0 for p in players}
    table, winners = standings(players, totals, rules.lower_is_better, bool(rounds))
    direction = str(rules.options.get("direction", "clockwise"))
    rate = session_rate(row)
    return {
        "id": row["id"], "title": row["title"], "rules": rules.name, "options": dict(rules.options),
        "players": players, "rounds_planned": row["rounds_planned"], "first_dealer": row["first_dealer"],
        "direction": direction, "demo": bool(row["demo"]), "deck": row["deck"],
        "rate": None if rate is None else rate.to_dict(), "created_at": row["created_at"],
        "ended_at": row["ended_at"], "options_locked": bool(rounds), "lower_is_better": rules.lower_is_better,
        "rounds": rounds, "totals": totals, "standings": table, "winners": winners,
        "next_dealer": dealer_for(players, row["first_dealer"], len(rounds) + 1, direction),
    }


def list_sessions(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Sessions newest first, with their players and how many rounds they have."""
    sessions = list(db.query(
        "SELECT s.id, s.title, s.rules, s.demo, s.created_at, s.ended_at, s.rounds_planned, "
        "(SELECT count(*) FROM rounds r WHERE r.session_id = s.id) AS rounds "
        "FROM sessions s ORDER BY s.id DESC"))
    for item in sessions:
        item["players"] = session_players(db, item["id"])
        item["demo"] = bool(item["demo"])
    return sessions


def _recompute(db: sqlite_utils.Database, session: Mapping[str, Any], players: Sequence[str],
               rules: RuleSet, from_number: int = 1) -> None:
    """Renumber rounds from ``from_number`` on, reassign their dealers and rebuild their running totals.

    Rounds before ``from_number`` are unchanged, so their totals are the starting point.
    """
    direction = str(rules.options.get("direction", "clockwise"))
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
            if abs(running[seat]) > MAX_TOTAL:
                raise BadRequest(_("round %(n)s would take %(name)s's total beyond %(max)s points; nothing was "
                                   "saved (check the numbers)", n=position, name=players[seat], max=MAX_TOTAL))
            db.execute("UPDATE round_players SET total = ? WHERE round_id = ? AND seat = ?",
                       [running[seat], row["id"], seat])


def _store_lines(db: sqlite_utils.Database, session_id: int, round_id: int, scored: ScoredRound) -> None:
    ids = dict(db.execute("SELECT seat, player_id FROM session_players WHERE session_id = ?",
                          [session_id]).fetchall())
    net = scored.settlement["net"]
    if set(net) != {line.name for line in scored.lines}:
        raise BadRequest(_("the settlement does not name every player; nothing was saved"))
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


def _round_row(db: sqlite_utils.Database, session_id: int, number: int) -> dict[str, Any]:
    row = _first(db, "SELECT * FROM rounds WHERE session_id = ? AND number = ?", [session_id, number])
    if row is not None:
        return row
    raise NotFound(_("session %(id)s has no round %(n)s", id=session_id, n=number))


def _check_open(session: Mapping[str, Any]) -> None:
    if session["ended_at"]:
        raise Conflict(_("session %(id)s has ended; reopen it to change its rounds", id=session["id"]))


def _scored(db: sqlite_utils.Database, session: Mapping[str, Any], entry: RoundEntry) -> ScoredRound:
    """Score ``entry``, which must have been checked against the session as it is now."""
    if entry.rules != session_rules(session) or list(entry.names) != session_players(db, session["id"]):
        raise Conflict(_("the players or rules of session %(id)s changed while this round was sent; "
                         "send it again", id=session["id"]))
    return score_round(entry)


def add_round(db: sqlite_utils.Database, session_id: int, entry: RoundEntry, *,
              idempotency_key: str | None = None, source: str = "") -> tuple[dict[str, Any], bool]:
    """Score and store a new round; returns ``(round, replayed)``.

    With an ``idempotency_key`` a repeated request returns that round as it is now
    (``replayed`` is True; its number may have moved up) and adds nothing; the key is
    stored in the same transaction as the round. A replay never returns stale data:
    a round edited since raises :class:`~web.errors.RoundChanged` (409) and a deleted
    one :class:`~web.errors.Gone` (410), each with the current state.
    """
    with write(db):
        session = _session_row(db, session_id)
        if idempotency_key is not None:
            stored = db.execute("SELECT request_hash, response FROM idempotency_keys WHERE session_id = ? AND key = ?",
                                [session["id"], idempotency_key]).fetchone()
            if stored is not None:
                if stored[0] != entry.fingerprint:
                    raise KeyReused(_("Idempotency-Key was already used for a different round; "
                                      "send a new key for a new round"))
                return _replayed(db, session, json.loads(stored[1])), True
        _check_open(session)
        scored = _scored(db, session, entry)
        number = db.execute("SELECT coalesce(max(number), 0) + 1 FROM rounds WHERE session_id = ?",
                            [session["id"]]).fetchone()[0]
        stamp = now()
        cursor = db.execute(
            "INSERT INTO rounds(session_id, number, tiplu, turned, winner, finish, settlement, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [session["id"], number, scored.tiplu, scored.turned, scored.winner, scored.finish,
             _dumps(scored.settlement), stamp, stamp])
        _store_lines(db, session["id"], _last_id(cursor), scored)
        _recompute(db, session, entry.names, entry.rules, number)
        result = _round_dict(db, _round_row(db, session["id"], number), entry.rules.scoring)
        _audit(db, session["id"], "add round", round_number=number, after=result, source=source)
        if idempotency_key is not None:
            db.execute("INSERT INTO idempotency_keys(session_id, key, request_hash, status, response, created_at) "
                       "VALUES (?,?,?,?,?,?)",
                       [session["id"], idempotency_key, entry.fingerprint, 201,
                        _dumps({"round_id": _last_id(cursor), "round": result}), stamp])
    return result, False


def _as_entered(rnd: Mapping[str, Any]) -> dict[str, Any]:
    """A round without what moves when an earlier round changes (its number, dealer and running totals)."""
    kept = {k: v for k, v in rnd.items() if k not in ("number", "dealer", "totals", "updated_at")}
    kept["players"] = {name: {k: v for k, v in line.items() if k != "total"} for name, line in rnd["players"].items()}
    return kept


def _replayed(db: sqlite_utils.Database, session: Mapping[str, Any], stored: Mapping[str, Any]) -> dict[str, Any]:
    """The round a key made, as it is now; keys stored before rounds were tracked by id answer what they stored."""
    if "round_id" not in stored:
        return dict(stored)
    first = stored["round"]
    row = _first(db, "SELECT * FROM rounds WHERE id = ?", [stored["round_id"]])
    if row is None:
        current = get_session(db, session["id"])
        raise Gone(_("the round this Idempotency-Key added (round %(n)s) was deleted since; nothing was added",
                     n=first["number"]),
                   details={"session": current["id"], "rounds": len(current["rounds"]), "totals": current["totals"]})
    now_round = _round_dict(db, row, session_rules(session).scoring)
    if row["updated_at"] != first["updated_at"] or _as_entered(now_round) != _as_entered(first):
        raise RoundChanged(_("the round this Idempotency-Key added (now round %(n)s) was edited since; "
                             "nothing was added", n=row["number"]), details={"round": now_round})
    return now_round


def get_round(db: sqlite_utils.Database, session_id: int, number: int) -> dict[str, Any]:
    session = _session_row(db, session_id)
    return _round_dict(db, _round_row(db, session["id"], number), session_rules(session).scoring)


def version_of(row: Mapping[str, Any]) -> str:
    """A round's version as an edit or a delete names it: its id and its edit count (``"12.3"``).

    The id makes it name *that* round: after an earlier round is deleted, round 3 is
    another round, and a delete of "round 3" read before must not remove it.
    """
    return f"{row['id']}.{row['version']}"


def round_version(db: sqlite_utils.Database, session_id: int, number: int) -> str:
    """The version of round ``number`` now (:class:`NotFound` when there is none)."""
    return version_of(_round_row(db, session_id, number))


def _read_round(db: sqlite_utils.Database, session: Mapping[str, Any], number: int,
                version: str | None) -> dict[str, Any]:
    """Round ``number``'s row, when it is still the round at ``version`` (None: no check).

    Otherwise :class:`~web.errors.StaleRound`, with the round as it is now: the round
    the version named, wherever it moved, else the one now at ``number`` (None if gone).
    """
    row = _first(db, "SELECT * FROM rounds WHERE session_id = ? AND number = ?", [session["id"], number])
    if version is None:
        if row is None:
            raise NotFound(_("session %(id)s has no round %(n)s", id=session["id"], n=number))
        return row
    if row is not None and version_of(row) == version.strip():
        return row
    named_id = version.strip().split(".")[0]
    known = named_id.isascii() and named_id.isdigit() and len(named_id) < 19
    named = _first(db, "SELECT * FROM rounds WHERE session_id = ? AND id = ?",
                   [session["id"], int(named_id)]) if known else None
    current = named or row
    now_round = None if current is None else _round_dict(db, current, session_rules(session).scoring)
    details = {"round": now_round, "version": None if current is None else version_of(current)}
    if named is None and known:
        raise StaleRound(_("the round you read was deleted since; nothing was changed. Look at the ledger "
                           "as it is now"), details=details)
    if named is not None and named["number"] != number:
        raise StaleRound(_("the round you read is round %(now)s now (an earlier one was deleted); nothing was "
                           "changed. Look at it again", now=named["number"]), details=details)
    raise StaleRound(_("round %(n)s was changed on another phone since you read it; nothing was changed. "
                       "Look at it as it is now, and change it again if you still mean to", n=number),
                     details=details)


def update_round(db: sqlite_utils.Database, session_id: int, number: int, entry: RoundEntry, *,
                 version: str | None = None, source: str = "") -> dict[str, Any]:
    """Replace a round's entries, re-settle it and recompute every total after it.

    With ``version`` (:func:`version_of` the round as it was read) a round changed or
    deleted since is left as it is: :class:`~web.errors.StaleRound` (409) with it as it is now.
    """
    with write(db):
        session = _session_row(db, session_id)
        _check_open(session)
        row = _read_round(db, session, number, version)
        scoring = entry.rules.scoring
        before = _round_dict(db, row, scoring)
        scored = _scored(db, session, entry)
        db.execute("DELETE FROM round_players WHERE round_id = ?", [row["id"]])
        db.execute("DELETE FROM payments WHERE round_id = ?", [row["id"]])
        db.execute("UPDATE rounds SET tiplu = ?, turned = ?, winner = ?, finish = ?, settlement = ?, updated_at = ?, "
                   "version = version + 1 WHERE id = ?", [scored.tiplu, scored.turned, scored.winner, scored.finish,
                                    _dumps(scored.settlement), now(), row["id"]])
        _store_lines(db, session["id"], row["id"], scored)
        _recompute(db, session, entry.names, entry.rules, row["number"])
        after = _round_dict(db, _round_row(db, session["id"], row["number"]), scoring)
        _audit(db, session["id"], "edit round", round_number=row["number"], before=before, after=after, source=source)
    return after


def delete_round(db: sqlite_utils.Database, session_id: int, number: int, *, version: str | None = None,
                 source: str = "") -> int:
    """Remove a round; later rounds move up one number and every total after it is recomputed.

    Returns the id of the audit entry that keeps the round, which :func:`restore_round` takes.
    With ``version``, only the round read at that version is removed (see :func:`update_round`):
    the same delete sent twice removes one round, not two.
    """
    with write(db):
        session = _session_row(db, session_id)
        _check_open(session)
        row = _read_round(db, session, number, version)
        rules = session_rules(session)
        before = _round_dict(db, row, rules.scoring)
        db.execute("DELETE FROM rounds WHERE id = ?", [row["id"]])
        _recompute(db, session, session_players(db, session["id"]), rules, row["number"])
        return _audit(db, session["id"], "delete round", round_number=row["number"], before=before, source=source)


def entry_from_round(stored: Mapping[str, Any], players: Sequence[str], rules: RuleSet) -> RoundEntry:
    """A stored round (as :func:`get_round` gives it) as the entry it was made from, to score it again."""
    lines: dict[str, Any] = {}
    for name, line in stored["players"].items():
        if rules.scoring == Scoring.PENALTY:
            entry: dict[str, Any] = {"wrong_close": line.get("wrong_close", False)}
            entry.update({"cards": line["cards"]} if line.get("cards") else
                         {} if line.get("penalty") is None else {"penalty": line["penalty"]})
        else:
            entry = {"seen": line.get("seen", False), "seen_by": line.get("seen_by"),
                     "false_declaration": line.get("false_declaration", False)}
            if line.get("cards") or line.get("dealt_tunnelas"):
                entry.update(cards=line.get("cards") or [], dealt_tunnelas=line.get("dealt_tunnelas") or [])
            else:
                entry["maal"] = line.get("maal") or 0
        lines[name] = entry
    payload = {"winner": stored.get("winner"), "finish": stored.get("finish"), "players": lines,
               rules.wild_source.value: stored.get(rules.wild_source.value)}
    return round_entry(payload, players, rules)


def restore_round(db: sqlite_utils.Database, session_id: int, audit_id: int, *, source: str = "") -> dict[str, Any]:
    """Put a deleted round back where it was (later rounds move down one) and recompute the totals.

    ``audit_id`` is the "delete round" entry that kept it; a round comes back once. It is
    scored again with the session's rules, so its figures are the scorer's, as when it was saved.
    """
    with write(db):
        session = _session_row(db, session_id)
        _check_open(session)
        found = db.execute("SELECT action, round_number, before FROM audit WHERE id = ? AND session_id = ?",
                           [audit_id, session["id"]]).fetchone() if 0 < audit_id <= MAX_ID else None
        if found is None or found[0] != "delete round":
            raise NotFound(_("history entry %(id)s of session %(sid)s is no deleted round", id=audit_id,
                             sid=session["id"]))
        if db.execute("SELECT 1 FROM audit WHERE undoes = ?", [audit_id]).fetchone():
            raise Conflict(_("that round was already restored; see the ledger"))
        players = session_players(db, session["id"])
        rules = session_rules(session)
        stored = json.loads(found[2])
        if sorted(stored["players"]) != sorted(players):
            raise Conflict(_("the players changed since the round was deleted (%(then)s); it cannot come back",
                             then=", ".join(stored["players"])))
        scored = _scored(db, session, entry_from_round(stored, players, rules))
        count = db.execute("SELECT count(*) FROM rounds WHERE session_id = ?", [session["id"]]).fetchone()[0]
        number = min(int(found[1]), count + 1)
        # two steps keep UNIQUE(session_id, number) true at every row
        db.execute("UPDATE rounds SET number = -(number + 1) WHERE session_id = ? AND number >= ?",
                   [session["id"], number])
        db.execute("UPDATE rounds SET number = -number WHERE session_id = ? AND number < 0", [session["id"]])
        stamp = now()
        cursor = db.execute(
            "INSERT INTO rounds(session_id, number, tiplu, turned, winner, finish, settlement, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?)",
            [session["id"], number, scored.tiplu, scored.turned, scored.winner, scored.finish,
             _dumps(scored.settlement), stored.get("created_at") or stamp, stamp])
        _store_lines(db, session["id"], _last_id(cursor), scored)
        _recompute(db, session, players, rules, number)
        result = _round_dict(db, _round_row(db, session["id"], number), rules.scoring)
        _audit(db, session["id"], "restore round", round_number=number, after=result, source=source,
               undoes=audit_id)
    return result


#: What an "edit session" entry of the audit trail keeps, before and after.
AUDITED_SESSION_FIELDS = ("title", "rounds_planned", "rules", "options", "players", "deck", "rate")


def update_session(db: sqlite_utils.Database, session_id: int, changes: SessionChanges, *,
                   source: str = "") -> dict[str, Any]:
    """Change a session's title, planned rounds, deck or rate any time; rules, options and players only before
    the first round."""
    with write(db):
        session = _session_row(db, session_id)
        before = get_session(db, session["id"])
        if changes.locked and before["rounds"]:
            raise Conflict(_("%(fields)s are fixed once the first round is played "
                             "(start a new session to change them)", fields=", ".join(sorted(changes.locked))))
        if "title" in changes.given:
            db.execute("UPDATE sessions SET title = ? WHERE id = ?", [changes.title, session["id"]])
        if "rounds_planned" in changes.given:
            db.execute("UPDATE sessions SET rounds_planned = ? WHERE id = ?", [changes.rounds_planned, session["id"]])
        if "deck" in changes.given:
            db.execute("UPDATE sessions SET deck = ? WHERE id = ?", [changes.deck, session["id"]])
        if "rate" in changes.given:
            db.execute("UPDATE sessions SET rate_hundredths = ?, rate_currency = ? WHERE id = ?",
                       [*_rate_columns(changes.rate), session["id"]])
        if changes.locked:
            name = session["rules"] if changes.rules is None else changes.rules
            options = changes.options if changes.options is not None else (
                json.loads(session["options"]) if name == session["rules"] else {})
            rules = get_rules(name, options)
            players = tuple(before["players"]) if changes.players is None else changes.players
            check_seat_count(players, rules)
            first = session["first_dealer"] if changes.first_dealer is None else changes.first_dealer
            if not 0 <= first < len(players):
                raise BadRequest(_("first_dealer: give a seat number from 0 to %(last)s", last=len(players) - 1))
            db.execute("UPDATE sessions SET rules = ?, options = ?, first_dealer = ? WHERE id = ?",
                       [rules.name, _dumps(dict(rules.options)), first, session["id"]])
            db.execute("DELETE FROM session_players WHERE session_id = ?", [session["id"]])
            _seat_players(db, session["id"], players)
        after = get_session(db, session["id"])
        _audit(db, session["id"], "edit session", source=source,
               before={k: before[k] for k in AUDITED_SESSION_FIELDS}, after={k: after[k] for k in AUDITED_SESSION_FIELDS})
    return after


def end_session(db: sqlite_utils.Database, session_id: int, *, ended: bool = True, source: str = "") -> dict[str, Any]:
    """Mark a session ended (no more rounds) or reopen it."""
    with write(db):
        session = _session_row(db, session_id)
        db.execute("UPDATE sessions SET ended_at = ? WHERE id = ?", [now() if ended else None, session["id"]])
        _audit(db, session["id"], "end session" if ended else "reopen session", source=source)
    return get_session(db, session["id"])


def delete_session(db: sqlite_utils.Database, session_id: int, *, source: str = "") -> None:
    """Delete a whole session (the audit keeps a copy of it)."""
    with write(db):
        session = get_session(db, session_id)
        db.execute("DELETE FROM sessions WHERE id = ?", [session["id"]])
        _audit(db, session["id"], "delete session", before=session, source=source)


def audit_trail(db: sqlite_utils.Database, session_id: int) -> list[dict[str, Any]]:
    """What changed in a session and when, newest first; a deleted session keeps its trail.

    A deleted round's entry says whether it was restored since (``restored``).
    """
    entries = [{"id": entry["id"], "at": entry["at"], "round": entry["round_number"], "action": entry["action"],
                "source": entry["source"], "before": _json_or_none(entry["before"]),
                "after": _json_or_none(entry["after"]), "undoes": entry["undoes"]}
               for entry in db.query("SELECT id, at, round_number, action, source, before, after, undoes FROM audit "
                                     "WHERE session_id = ? ORDER BY id DESC", [session_id])]
    if not entries:
        _session_row(db, session_id)
    undone = {entry["undoes"] for entry in entries if entry["undoes"] is not None}
    for entry in entries:
        if entry["action"] == "delete round":
            entry["restored"] = entry["id"] in undone
    return entries


def deleted_sessions(db: sqlite_utils.Database) -> list[dict[str, Any]]:
    """Sessions deleted as a whole, newest first, as the audit kept them (their history stays readable)."""
    return [{"id": row["session_id"], "at": row["at"], "title": (json.loads(row["before"]) or {}).get("title") or "",
             "players": (json.loads(row["before"]) or {}).get("players", [])}
            for row in db.query("SELECT a.session_id, a.at, a.before FROM audit a WHERE a.action = 'delete session' "
                                "AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = a.session_id) "
                                "ORDER BY a.id DESC")]


def _cell(value: Any) -> Any:
    """Keep spreadsheet programs from running text that starts like a formula."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


#: ``rate_per_point`` and ``currency`` repeat the session's rate on every row (empty: points only).
CSV_COLUMNS = ("round", "dealer", "tiplu", "turned", "winner", "finish", "player", "seen", "maal",
               "maal_cards", "penalty", "penalty_cards", "wrong_close", "net", "total", "rate_per_point", "currency")


def export_csv(db: sqlite_utils.Database, session_id: int) -> str:
    """One row per player per round, with the running total (and the session's rate, when it has one)."""
    session = get_session(db, session_id)
    rate = session_rate(_session_row(db, session["id"]))
    money = ("", "") if rate is None else (rate.amount(1), rate.currency)
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
                line["net"], line["total"], *money)])
    return out.getvalue()


def export_json(db: sqlite_utils.Database, session_id: int) -> dict[str, Any]:
    """The whole session plus its audit trail, for backup or another program."""
    session = get_session(db, session_id)
    return {"format": "tiplu-session", "version": 1, "session": session,
            "audit": audit_trail(db, session_id)}


__all__ = [
    "SessionSetup", "add_round", "audit_trail", "create_session", "delete_round", "delete_session",
    "deleted_sessions", "end_session", "entry_from_round", "restore_round", "export_csv", "export_json", "get_round", "get_session", "list_sessions", "now", "session_setup",
    "standings", "update_round", "update_session",
]
