"""``tiplu penalty --turned 7D [--json] CARD...``: penalty points of a non-closer's cards.

The rules default to the family that scores penalty points (rummy).
"""

from __future__ import annotations

import argparse

from scorer import format_cards, parse_card, parse_cards
from scorer.kinds import Scoring
from scorer.rummy import penalty_points
from web.cli._common import ExitCode, Streams, UsageError, add_rules_arguments, family_scoring, rules_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_rules_arguments(parser)
    parser.add_argument("cards", nargs="+", metavar="CARD")


def run(args: argparse.Namespace, io: Streams) -> int:
    rules = rules_from(args, default=family_scoring(Scoring.PENALTY))
    if args.turned is None:
        raise UsageError("penalty needs the turned card: --turned 7D")
    result = penalty_points(parse_cards(args.cards), rules, parse_card(args.turned))
    lines = [*(f"meld: {format_cards(meld)}" for meld in result.melds),
             f"unmatched: {format_cards(result.unmatched) or '-'}", f"penalty: {result.penalty}"]
    io.show(args.json, result.to_dict(), lines)
    return ExitCode.OK
