"""``tiplu check``: does a declared hand finish? Typed cards, laid-out groups, or JSON lines.

    tiplu check --tiplu JC [--json] CARD...            21 cards (already discarded) or 22
    tiplu check --tiplu JC --discard QD CARD...        the cards and the discard make the hand
    tiplu check --tiplu JC 3S 4S 5S '|' ... '|' QD     a lone card in a 22-card grouping is the discard
    tiplu check --tiplu JC 3S 4S 5S '|' 6H 6H 6H ...   judge the melds as laid, group by group
    tiplu check --jsonl < hands.jsonl                  {"tiplu": "JC", "cards": [...]} per line

>>> split_groups(["3S", "4S", "5S", "|", "6H", "6H", "6H"])
[['3S', '4S', '5S'], ['6H', '6H', '6H']]
>>> split_groups(["3S", "4S"]) is None
True
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from scorer import Card, RuleSet, TipluError, format_cards, get_rules, parse_cards
from scorer.declare import DeclareResult, check_grouping, check_hand
from web.cli import _json
from web.cli._common import (ExitCode, Streams, UsageError, add_rules_arguments, optional_card,
                             parse_option_assignments, rules_from)

GROUP_SEPARATORS = frozenset({"|", "/"})
#: What a line of ``--jsonl`` answers when it cannot be checked (plus its ``error``).
UNCHECKED: dict[str, Any] = {"valid": False, "route": None, "melds": [], "discard": None, "reason": None}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_rules_arguments(parser)
    parser.add_argument("--jsonl", action="store_true", help="read {\"tiplu\", \"cards\"} lines from stdin")
    parser.add_argument("--discard", help="the discarded card when judging a grouping")
    parser.add_argument("--players", type=int, help="players at the table (for dublee_min_players)")
    parser.add_argument("cards", nargs="*", metavar="CARD",
                        help="the hand; separate melds with | to judge your own grouping")


def split_groups(tokens: Sequence[str]) -> list[list[str]] | None:
    """``['3S', '4S', '5S', '|', '6H', ...]`` -> groups; None when no separator is used."""
    if not any(t in GROUP_SEPARATORS for t in tokens):
        return None
    groups: list[list[str]] = [[]]
    for token in tokens:
        if token in GROUP_SEPARATORS:
            groups.append([])
        else:
            groups[-1].append(token)
    return [g for g in groups if g]


def check_one(rules: RuleSet, cards: str | Sequence[str], groups: Sequence[Sequence[str]] | None, *,
              tiplu: Card | None, turned: Card | None, discard: Card | None, players: int | None) -> DeclareResult:
    """The declare check of typed cards: the player's grouping when given, else the free search."""
    if groups is not None:
        return check_grouping([parse_cards(g) for g in groups], rules, tiplu=tiplu, turned=turned,
                              discard=discard, players=players)
    return check_hand(parse_cards(cards), rules, tiplu=tiplu, turned=turned, players=players, discard=discard)


def describe(result: DeclareResult) -> str:
    melds = " | ".join(format_cards(m) for m in result.melds)
    if result.valid:
        text = f"finishes ({result.route}): {melds}"
        if result.discard is not None:
            text += f"; discard {result.discard}"
        return text
    text = f"does not finish: {result.reason}"
    if melds:
        text += f"\nclosest: {melds}"
    return text


def run(args: argparse.Namespace, io: Streams) -> int:
    if args.jsonl:
        return check_lines(args, io)
    result = check_one(rules_from(args), args.cards, split_groups(args.cards), tiplu=optional_card(args.tiplu),
                       turned=optional_card(args.turned), discard=optional_card(args.discard),
                       players=args.players)
    io.show(args.json, result.to_dict(), [describe(result)])
    return ExitCode.OK if result.valid else ExitCode.NOT_FINISHED


def check_line(item: Any, args: argparse.Namespace) -> DeclareResult:
    """One ``--jsonl`` line, its fields typed; the command's options fill what the line leaves out."""
    if not isinstance(item, Mapping):
        raise UsageError("each line must be a JSON object like {\"tiplu\": \"JC\", \"cards\": [...]}")
    options = _json.obj(item, "options", '{"tiplu_pair": 8}')
    rules = get_rules(_json.rules_name(item) or args.rules, {**parse_option_assignments(args.option), **options})
    groups = _json.card_groups(item, "groups")
    if item.get("cards") is None and groups is None:
        raise UsageError("give \"cards\": [...] (or \"groups\": [[...], ...])")
    return check_one(rules, _json.card_list(item, "cards"), groups,
                     tiplu=optional_card(_json.text(item, "tiplu", "JC") or args.tiplu),
                     turned=optional_card(_json.text(item, "turned", "7D") or args.turned),
                     discard=optional_card(_json.text(item, "discard", "KD")),
                     players=_json.whole(item, "players", None))


def check_lines(args: argparse.Namespace, io: Streams) -> int:
    """One result per input line; a bad line gets ``error``, the run goes on and exits 2."""
    status = ExitCode.OK
    for number, line in enumerate(io.stdin, 1):
        if not line.strip():
            continue
        try:
            io.emit(check_line(json.loads(line), args).to_dict())
        except (json.JSONDecodeError, TipluError) as error:
            status = ExitCode.BAD_INPUT
            message = f"not JSON ({error.msg})" if isinstance(error, json.JSONDecodeError) else str(error)
            io.emit({**UNCHECKED, "error": f"line {number}: {message}"})
    return status
