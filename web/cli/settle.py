"""``tiplu settle [--json] < round.json``: who pays whom after a round.

The round is one JSON object: ``{"rules", "options", "tiplu" (or "turned"), "winner",
"finish", "players": [...]}``, each player ``{"name", "seen", "seen_by", "maal" or "cards",
"dealt_tunnelas", "false_declaration"}`` (rummy: ``{"name", "penalty" or "cards",
"wrong_close"}``). It is read by the API's own parser (:func:`web.payloads.standalone_round`)
and scored by :func:`web.rounds.score_round`, so the command and the API's round preview
agree to the point; an unknown field is refused by name with exit 2.
"""

from __future__ import annotations

import argparse
import json

from web.cli._common import ExitCode, Streams, UsageError
from web.errors import HttpError
from web.payloads import standalone_round
from web.rounds import score_round


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace, io: Streams) -> int:
    try:
        data = json.loads(io.stdin.read())
    except json.JSONDecodeError as error:
        raise UsageError(f"settle reads a JSON object on stdin: {error.msg} at line {error.lineno}") from None
    try:
        settlement = score_round(standalone_round(data)).settlement
    except HttpError as error:
        raise UsageError(str(error)) from None
    lines = [*(f"{a['player']}: {a['before']} -> {a['after']} ({a['reason']})" for a in settlement["adjustments"]),
             *(f"{p['from']} pays {p['to']} {p['points']} ({p['reason']})" for p in settlement["payments"]),
             *(f"{name:>12} {points:+d}" for name, points in settlement["net"].items())]
    io.show(args.json, {"net": settlement["net"], "payments": settlement["payments"]}, lines)
    return ExitCode.OK
