"""The ledger on a real SQLite file: schema, transactions, totals, dealers, audit, standings."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Iterator

import pytest
import sqlite_utils

from scorer import get_rules
from scorer.settle import PlayerRound, settle_round
from web import ledger
from web.db import migrations, open_db
from web.errors import Conflict, NotFound
from web.payloads import RoundEntry, new_session, round_entry, session_changes
from web_support import PLAYERS, nepali_round


@pytest.fixture
def db(tmp_path: Path) -> Iterator[sqlite_utils.Database]:
    database = open_db(tmp_path / "ledger.db")
    yield database
    database.close()


def create(db: sqlite_utils.Database, players: list[str], rules: str = "nepali", options: dict | None = None) -> int:
    return ledger.create_session(db, new_session({"players": players, "rules": rules, "options": options}))


def entry(db: sqlite_utils.Database, sid: int, payload: dict) -> RoundEntry:
    """A round payload checked against the session as the web layer checks it before the ledger."""
    setup = ledger.session_setup(db, sid)
    return round_entry(payload, setup.players, setup.rules)


def scorer_net(payload: dict) -> dict[str, int]:
    players = [PlayerRound(n, maal=e["maal"], seen=e["seen"]) for n, e in payload["players"].items()]
    return settle_round(get_rules("nepali"), players, payload["winner"], payload["finish"]).net


def test_file_is_wal_with_busy_timeout_and_migrated_once(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    first = open_db(path)
    assert first.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert first.execute("PRAGMA busy_timeout").fetchone()[0] >= 5000
    assert first.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    applied = [m.name for m in migrations.applied(first)]
    assert applied == [m.name for m in migrations._migrations]
    first.close()
    second = open_db(path)
    assert [m.name for m in migrations.applied(second)] == applied
    assert migrations.pending(second) == []
    second.close()


def test_players_are_reused_across_sessions(db: sqlite_utils.Database) -> None:
    one = create(db, ["Anna", "Ben"], "nepali", {})
    two = create(db, ["anna", "Carla", "Ben"], "rummy", {})
    assert db.execute("SELECT count(*) FROM players").fetchone()[0] == 3
    assert ledger.get_session(db, two)["players"] == ["Anna", "Carla", "Ben"]
    assert ledger.get_session(db, one)["players"] == ["Anna", "Ben"]


@pytest.mark.parametrize("direction, expected", [
    ("clockwise", ["Anna", "Ben", "Carla", "Dan", "Anna"]),
    ("counter-clockwise", ["Anna", "Dan", "Carla", "Ben", "Anna"]),
])
def test_dealer_rotation_follows_direction(db: sqlite_utils.Database, direction: str, expected: list[str]) -> None:
    sid = create(db, PLAYERS, "nepali", {"direction": direction})
    for _ in expected:
        ledger.add_round(db, sid, entry(db, sid, nepali_round()))
    assert [r["dealer"] for r in ledger.get_session(db, sid)["rounds"]] == expected


def test_totals_are_running_sums_and_recomputed_after_edit_and_delete(db: sqlite_utils.Database) -> None:
    sid = create(db, PLAYERS, "nepali", {})
    payloads = [nepali_round(), nepali_round(winner="Carla"), nepali_round(winner="Ben"), nepali_round()]
    for payload in payloads:
        ledger.add_round(db, sid, entry(db, sid, payload))

    def check(expected_payloads: list[dict]) -> None:
        session = ledger.get_session(db, sid)
        running = {p: 0 for p in PLAYERS}
        assert len(session["rounds"]) == len(expected_payloads)
        for number, (rnd, payload) in enumerate(zip(session["rounds"], expected_payloads), start=1):
            assert rnd["number"] == number
            assert rnd["net"] == scorer_net(payload)
            running = {p: running[p] + rnd["net"][p] for p in PLAYERS}
            assert rnd["totals"] == running
        assert session["totals"] == running

    check(payloads)
    payloads[1] = nepali_round(winner="Ben", Carla={"seen": True, "maal": 0})
    ledger.update_round(db, sid, 2, entry(db, sid, payloads[1]))
    check(payloads)
    ledger.delete_round(db, sid, 1)
    del payloads[0]
    check(payloads)


def test_a_failing_write_changes_nothing(db: sqlite_utils.Database) -> None:
    """A real database error in the middle of a round (here: the audit insert) rolls it all back."""
    sid = create(db, PLAYERS, "nepali", {})
    ledger.add_round(db, sid, entry(db, sid, nepali_round()))
    before = ledger.get_session(db, sid)
    db.execute("CREATE TEMP TRIGGER refuse_audit BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'disk full'); END")
    with pytest.raises(sqlite3.IntegrityError):
        ledger.add_round(db, sid, entry(db, sid, nepali_round(winner="Carla")), idempotency_key="k1")
    with pytest.raises(sqlite3.IntegrityError):
        ledger.update_round(db, sid, 1, entry(db, sid, nepali_round(winner="Carla")))
    with pytest.raises(sqlite3.IntegrityError):
        ledger.delete_round(db, sid, 1)
    assert not db.conn.in_transaction
    db.execute("DROP TRIGGER refuse_audit")
    assert ledger.get_session(db, sid) == before
    assert db.execute("SELECT count(*) FROM idempotency_keys").fetchone()[0] == 0
    assert db.execute("SELECT count(*) FROM round_players").fetchone()[0] == len(PLAYERS)


def test_audit_keeps_every_version(db: sqlite_utils.Database) -> None:
    sid = create(db, PLAYERS, "nepali", {})
    ledger.add_round(db, sid, entry(db, sid, nepali_round()))
    ledger.update_round(db, sid, 1, entry(db, sid, nepali_round(winner="Carla")))
    ledger.delete_round(db, sid, 1)
    trail = ledger.audit_trail(db, sid)
    assert [e["action"] for e in trail] == ["delete round", "edit round", "add round", "create session"]
    assert trail[0]["before"]["winner"] == "Carla"
    assert trail[1]["before"]["winner"] == "Anna"
    assert trail[2]["after"]["net"] == scorer_net(nepali_round())
    assert all(e["at"] for e in trail)


def test_idempotency_key_adds_one_round(db: sqlite_utils.Database) -> None:
    sid = create(db, PLAYERS, "nepali", {})
    first, replayed_first = ledger.add_round(db, sid, entry(db, sid, nepali_round()), idempotency_key="abc")
    second, replayed_second = ledger.add_round(db, sid, entry(db, sid, nepali_round()), idempotency_key="abc")
    assert (replayed_first, replayed_second) == (False, True)
    assert first == second
    assert len(ledger.get_session(db, sid)["rounds"]) == 1


@pytest.mark.parametrize("totals, lower, winners, ranks", [
    ({"A": 10, "B": 10, "C": -20}, False, ["A", "B"], [1, 1, 3]),
    ({"A": 10, "B": 5, "C": -15}, False, ["A"], [1, 2, 3]),
    ({"A": 40, "B": 12, "C": 12}, True, ["B", "C"], [1, 1, 3]),
    ({"A": 0, "B": 0, "C": 0}, True, ["A", "B", "C"], [1, 1, 1]),
])
def test_standings_share_ties(totals: dict[str, int], lower: bool, winners: list[str], ranks: list[int]) -> None:
    table, found = ledger.standings(list(totals), totals, lower, played=True)
    assert found == winners
    assert [row["rank"] for row in table] == ranks
    assert ledger.standings(list(totals), totals, lower, played=False)[1] == []


def test_rummy_lowest_total_wins(db: sqlite_utils.Database) -> None:
    sid = create(db, ["A", "B", "C"], "rummy", {})
    ledger.add_round(db, sid, entry(db, sid, {"turned": "7D", "winner": "A", "finish": "melds",
                                              "players": {"A": {}, "B": {"penalty": 30}, "C": {"penalty": 5}}}))
    session = ledger.get_session(db, sid)
    assert session["totals"] == {"A": 0, "B": 30, "C": 5}
    assert session["winners"] == ["A"]
    assert [row["name"] for row in session["standings"]] == ["A", "C", "B"]


def test_rules_fixed_after_the_first_round(db: sqlite_utils.Database) -> None:
    sid = create(db, PLAYERS, "nepali", {})
    ledger.update_session(db, sid, session_changes({"rules": "rummy", "options": {"wrong_close_penalty": 60}}))
    assert ledger.get_session(db, sid)["rules"] == "rummy"
    ledger.update_session(db, sid, session_changes({"rules": "nepali", "options": {}}))
    ledger.add_round(db, sid, entry(db, sid, nepali_round()))
    with pytest.raises(Conflict, match="fixed once the first round"):
        ledger.update_session(db, sid, session_changes({"options": {"seen_fee": 1}}))
    with pytest.raises(Conflict):
        ledger.update_session(db, sid, session_changes({"players": ["Anna", "Ben"]}))


def test_a_round_checked_against_other_rules_is_refused(db: sqlite_utils.Database) -> None:
    """Rules changed between checking a round and storing it: the ledger stores nothing."""
    sid = create(db, PLAYERS, "nepali", {})
    checked = entry(db, sid, nepali_round())
    ledger.update_session(db, sid, session_changes({"options": {"seen_fee": 4}}))
    with pytest.raises(Conflict, match="changed while this round was sent"):
        ledger.add_round(db, sid, checked)
    assert ledger.get_session(db, sid)["rounds"] == []


def test_csv_escapes_formula_like_names(db: sqlite_utils.Database) -> None:
    sid = create(db, ["=cmd()", "Ben"], "nepali", {})
    ledger.add_round(db, sid, entry(db, sid, {"tiplu": None, "winner": None, "finish": None,
                                              "players": {"=cmd()": {"maal": 1}, "Ben": {"maal": 0}}}))
    text = ledger.export_csv(db, sid)
    assert "'=cmd()" in text
    assert "\n1,=cmd()" not in text


def test_deleting_a_session_keeps_its_audit(db: sqlite_utils.Database) -> None:
    sid = create(db, PLAYERS, "nepali", {})
    ledger.add_round(db, sid, entry(db, sid, nepali_round()))
    ledger.delete_session(db, sid)
    with pytest.raises(NotFound):
        ledger.get_session(db, sid)
    assert db.execute("SELECT count(*) FROM rounds").fetchone()[0] == 0
    row = db.execute("SELECT action FROM audit WHERE session_id = ? ORDER BY id DESC", [sid]).fetchone()
    assert row[0] == "delete session"


def test_check_ledger_command(runner, client, make_session) -> None:
    sid = make_session()
    client.post(f"/api/sessions/{sid}/rounds", json=nepali_round())
    result = runner.invoke(args=["check-ledger"])
    assert result.exit_code == 0
    assert "integrity: ok" in result.output and "journal_mode: wal" in result.output
    assert "rounds: 1" in result.output and "m001_initial" in result.output


def test_an_old_ledger_is_upgraded_in_place(tmp_path: Path) -> None:
    """A file made by the first schema version keeps its rounds when later migrations run."""
    from web.db import connect
    path = tmp_path / "old.db"
    old = connect(path)
    migrations.apply(old, stop_before="m002_false_declaration")
    old.execute("INSERT INTO players(name, created_at) VALUES ('Anna', 'then')")
    old.conn.commit()
    assert "false_declaration" not in old["round_players"].columns_dict
    old.close()
    upgraded = open_db(path)
    assert {"false_declaration", "dealt_tunnelas"} <= set(upgraded["round_players"].columns_dict)
    assert upgraded.execute("SELECT name FROM players").fetchall() == [("Anna",)]
    sid = create(upgraded, ["Anna", "Ben"], "nepali", {})
    assert ledger.get_session(upgraded, sid)["players"] == ["Anna", "Ben"]
    upgraded.close()


def test_a_session_saved_with_murder_and_kidnap_stays_readable_after_the_upgrade(tmp_path: Path) -> None:
    """Both options were allowed before RULES.md made them exclusive; the upgrade keeps murder and says so."""
    path = tmp_path / "old.db"
    old = sqlite_utils.Database(path)
    migrations.apply(old, stop_before="m006_murder_or_kidnap")
    both = {**get_rules().options, "murder": True, "kidnap": True}
    sid = old.execute("INSERT INTO sessions(rules, options, created_at) VALUES ('nepali', ?, 'then')",
                      [json.dumps(both)]).lastrowid
    for seat, name in enumerate(["Anna", "Ben"]):  # as that schema stored them (later columns do not exist yet)
        player = old.execute("INSERT INTO players(name, created_at) VALUES (?, 'then')", [name]).lastrowid
        old.execute("INSERT INTO session_players(session_id, seat, player_id) VALUES (?, ?, ?)", [sid, seat, player])
    old.conn.commit()
    old.close()
    db = open_db(path)
    session = ledger.get_session(db, sid)
    assert (session["options"]["murder"], session["options"]["kidnap"]) == (True, False)
    upgrade = ledger.audit_trail(db, sid)[0]
    assert upgrade["action"] == "edit session" and "murder and kidnap" in upgrade["source"]
    assert (upgrade["before"]["options"]["kidnap"], upgrade["after"]["options"]["kidnap"]) == (True, False)


def test_a_session_from_before_rates_goes_on_with_points_only(tmp_path: Path) -> None:
    """The rate's migration adds its columns in the upgrade's one transaction; an old session
    keeps its rounds and totals, has no rate, and can be given one."""
    path = tmp_path / "old.db"
    legacy = sqlite_utils.Database(path)
    migrations.apply(legacy, stop_before="m011_session_rate")
    assert "rate_hundredths" not in legacy["sessions"].columns_dict
    sid = legacy.execute("INSERT INTO sessions(rules, options, created_at) VALUES ('nepali', ?, 'then')",
                         [json.dumps(dict(get_rules().options))]).lastrowid
    for seat, name in enumerate(PLAYERS):
        player = legacy.execute("INSERT INTO players(name, created_at) VALUES (?, 'then')", [name]).lastrowid
        legacy.execute("INSERT INTO session_players(session_id, seat, player_id) VALUES (?, ?, ?)", [sid, seat, player])
    legacy.conn.commit()
    legacy.close()
    db = open_db(path)
    assert migrations.pending(db) == [] and {"rate_hundredths", "rate_currency"} <= set(db["sessions"].columns_dict)
    assert ledger.get_session(db, sid)["rate"] is None
    ledger.add_round(db, sid, entry(db, sid, nepali_round()))
    assert ledger.export_csv(db, sid).splitlines()[1].endswith(",,")
    changed = ledger.update_session(db, sid, session_changes({"rate": {"per_point": 10, "currency": "Rs"}}))
    assert changed["rate"] == {"per_point": 10, "currency": "Rs"} and changed["rounds"][0]["net"]["Anna"] > 0
    db.close()


def test_the_rate_is_kept_in_exact_hundredths(db: sqlite_utils.Database) -> None:
    sid = ledger.create_session(db, new_session({"players": PLAYERS, "rate": {"per_point": 0.1, "currency": "$"}}))
    assert db.execute("SELECT rate_hundredths, rate_currency FROM sessions WHERE id = ?", [sid]).fetchone() == (10, "$")
    assert ledger.session_rate(db["sessions"].get(sid)).amount(3) == "0.30"
