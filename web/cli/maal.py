"""``tiplu maal --tiplu JC [--unseen] [--dealt-tunnela 6H]... [--json] CARD...``: itemised maal."""

from __future__ import annotations

import argparse

from scorer import format_cards, parse_card, parse_cards
from scorer.maal import maal_points
from web.cli._common import ExitCode, Streams, UsageError, add_rules_arguments, rules_from


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_rules_arguments(parser, turned=False)
    parser.add_argument("--unseen", action="store_true", help="the player has not seen (no dealt-tunnela bonus)")
    parser.add_argument("--dealt-tunnela", action="append", default=[], metavar="CARD",
                        help="a tunnela shown at the deal (repeatable)")
    parser.add_argument("cards", nargs="+", metavar="CARD")


def run(args: argparse.Namespace, io: Streams) -> int:
    rules = rules_from(args)
    if args.tiplu is None:
        raise UsageError("maal needs the tiplu: --tiplu JC")
    result = maal_points(parse_cards(args.cards), rules, parse_card(args.tiplu), seen=not args.unseen,
                         dealt_tunnelas=[parse_card(c) for c in args.dealt_tunnela])
    lines = [f"{item.points:>4}  {item.label}: {format_cards(item.cards)}" for item in result.items]
    io.show(args.json, result.to_dict(), [*lines, f"{result.total:>4}  total maal"])
    return ExitCode.OK
