"""Helpers shared by the web, API and ledger tests (imported as ``web_support``)."""

from __future__ import annotations

from typing import Any

PLAYERS = ["Anna", "Ben", "Carla", "Dan"]


def nepali_round(winner: str | None = "Anna", finish: str | None = "melds", tiplu: str | None = "JC",
                 **players: dict[str, Any]) -> dict[str, Any]:
    """RULES.md example 1 by default; keyword arguments replace a player's entry."""
    entries: dict[str, Any] = {"Anna": {"seen": True, "maal": 5}, "Ben": {"seen": True, "maal": 2},
                               "Carla": {"seen": True, "maal": 10}, "Dan": {"seen": False, "maal": 3}}
    entries.update(players)
    return {"tiplu": tiplu, "winner": winner, "finish": finish, "players": entries}
