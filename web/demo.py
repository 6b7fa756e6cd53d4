"""Optional demo data: one sample 4-player session, clearly marked ``demo``.

Why: a new user who starts ``tiplu serve --demo`` sees a ledger, a chart and
round results before entering their own game. The rounds go through the same
scorer and ledger code as real ones. Nothing is added to a ledger that already
has sessions.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "demo.db")
>>> create_demo_session(path), create_demo_session(path)
(True, False)
"""

from __future__ import annotations

import os
from typing import Any

from web import ledger
from web.db import open_db
from web.payloads import new_session, round_entry

DEMO_PLAYERS = ["Anna", "Ben", "Carla", "Dan"]
DEMO_ROUNDS: list[dict[str, Any]] = [
    {"tiplu": "JC", "winner": "Anna", "finish": "melds",
     "players": {"Anna": {"seen": True, "maal": 5}, "Ben": {"seen": True, "maal": 2},
                 "Carla": {"seen": True, "cards": ["10C", "JC", "QC"]}, "Dan": {"seen": False, "maal": 3}}},
    {"tiplu": "5H", "winner": "Carla", "finish": "melds",
     "players": {"Anna": {"seen": True, "cards": ["5H", "6H"]}, "Ben": {"seen": False, "maal": 0},
                 "Carla": {"seen": True, "maal": 4}, "Dan": {"seen": True, "maal": 7}}},
    {"tiplu": "KS", "winner": "Ben", "finish": "dublees",
     "players": {"Anna": {"seen": True, "maal": 2}, "Ben": {"seen": True, "seen_by": "dublees", "maal": 10},
                 "Carla": {"seen": False, "maal": 0}, "Dan": {"seen": True, "cards": ["QS", "AS"]}}},
]


def create_demo_session(path: str | os.PathLike[str]) -> bool:
    """Add the demo session to the ledger at ``path`` if it has no sessions; True if added."""
    db = open_db(path)
    try:
        if db.execute("SELECT count(*) FROM sessions").fetchone()[0]:
            return False
        demo = new_session({"players": DEMO_PLAYERS, "rules": "nepali", "rounds_planned": 8,
                            "title": "Demo: a sample evening"})
        session_id = ledger.create_session(db, demo, demo=True, source="demo")
        for payload in DEMO_ROUNDS:
            ledger.add_round(db, session_id, round_entry(payload, demo.players, demo.rules), source="demo")
        return True
    finally:
        db.close()
