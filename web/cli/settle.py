"""``tiplu settle [--json] < round.json``: who pays whom after a round.

The round is one JSON object: ``{"rules", "options", "winner", "finish", "players": [...]}``,
each player ``{"name", "maal", "seen", "seen_by", "penalty", "wrong_close",
"false_declaration"}`` or ``"cards"`` instead of maal or penalty (valued by the scorer with
the round's ``"tiplu"`` or ``"turned"`` card).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from typing import Any

from scorer import Card, RuleSet, get_rules, parse_card, parse_cards
from scorer.kinds import Scoring
from scorer.maal import maal_points
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from web.cli import _json
from web.cli._common import ExitCode, Streams, UsageError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def settlement_players(data: Mapping[str, Any], rules: RuleSet) -> list[PlayerRound]:
    """Read the ``players`` list of a settle request; cards are valued by the scorer."""
    players = data.get("players")
    if not isinstance(players, list) or not players:
        raise UsageError("give \"players\": [{\"name\": ..., \"maal\": ..., \"seen\": ...}, ...]")
    result = []
    for entry in players:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            raise UsageError("each player needs a \"name\"")
        maal = _json.whole(entry, "maal", 0)
        penalty = _json.whole(entry, "penalty", None)
        seen = _json.flag(entry, "seen", False)
        if entry.get("cards") is not None:
            cards = parse_cards(_json.card_list(entry, "cards"))
            if rules.scoring is Scoring.PENALTY:
                penalty = penalty_points(cards, rules, _round_card(data, rules.wild_source)).penalty
            else:
                maal = maal_points(cards, rules, _round_card(data, rules.wild_source), seen=seen).total
        result.append(PlayerRound(name=entry["name"].strip(), maal=maal or 0, seen=seen,
                                  seen_by=_json.text(entry, "seen_by", "melds"), penalty=penalty,
                                  wrong_close=_json.flag(entry, "wrong_close", False),
                                  false_declaration=_json.flag(entry, "false_declaration", False)))
    return result


def _round_card(data: Mapping[str, Any], key: str) -> Card:
    """The round's tiplu or turned card, needed once a player gives cards."""
    card = _json.text(data, key, "JC")
    if card is None:
        raise UsageError(f"players give cards, so \"{key}\" is needed, e.g. \"{key}\": \"JC\"")
    return parse_card(card)


def run(args: argparse.Namespace, io: Streams) -> int:
    try:
        data = json.loads(io.stdin.read())
    except json.JSONDecodeError as error:
        raise UsageError(f"settle reads a JSON object on stdin: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict):
        raise UsageError("settle reads a JSON object with rules, options, winner, finish and players")
    rules = get_rules(_json.rules_name(data), _json.obj(data, "options", '{"murder": true}'))
    winner = _json.text(data, "winner", "Anna")
    finish = _json.text(data, "finish", "melds") if "finish" in data else "melds"
    settlement = settle_round(rules, settlement_players(data, rules), winner, finish)
    lines = [*(f"{a.player}: {a.before} -> {a.after} ({a.reason})" for a in settlement.adjustments),
             *(f"{p.payer} pays {p.payee} {p.points} ({p.reason})" for p in settlement.payments),
             *(f"{name:>12} {points:+d}" for name, points in settlement.net.items())]
    io.show(args.json, {"net": settlement.net, "payments": [p.to_dict() for p in settlement.payments]}, lines)
    return ExitCode.OK
