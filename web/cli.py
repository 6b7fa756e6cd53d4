"""The ``tiplu`` command line: the same scoring core as the web app.

Exit codes: 0 success (``check``: the hand finishes), 1 the hand does not
finish, 2 bad input (the message on stderr says what to fix).

    tiplu check --tiplu JC 3S 4S 5S ...        does this hand finish?
    tiplu maal --tiplu JC 10C JC QC QC          itemised maal
    echo '{...}' | tiplu settle --json          who pays whom
    tiplu penalty --rules rummy --turned 7D ... rummy penalty points
    tiplu serve                                 the web app for phones at the table
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any, Callable, Iterable, Mapping, Sequence, TextIO

from scorer import Card, RuleSet, TipluError, format_cards, get_rules, parse_card, parse_cards
from scorer.declare import DeclareResult, check_grouping, check_hand
from scorer.errors import OptionError
from scorer.maal import maal_points
from scorer.rules import parse_option_assignments
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from vision.command import run_command

EXIT_OK, EXIT_NOT_VALID, EXIT_BAD_INPUT = 0, 1, 2
GROUP_SEPARATORS = frozenset({"|", "/"})

#: subcommands that live in other modules: (name, module, help). Each module has
#: ``add_arguments(parser)`` and ``run(args) -> int``; importing lazily keeps
#: ``tiplu check`` fast and free of Flask and onnxruntime.
PLUGGED_COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("serve", "web.serve", "run the web app for the phones at the table"),
    ("check-ledger", "web.maintenance", "check the ledger and its photos (--repair removes orphan files)"),
    ("detect", "vision.pipeline", "find the cards in photos (JSON lines)"),
    ("score", "vision.score", "photo to verdict: detect, declare check and maal in one go"),
    ("generate", "vision.generate", "make synthetic training photos with labels"),
    ("train", "vision.train", "train the card detector (needs the train extra)"),
    ("eval-model", "vision.evaluate", "measure a detector on a YOLO-format folder"),
)


class UsageError(TipluError):
    """Bad command-line input."""


def _add_rules_arguments(parser: argparse.ArgumentParser, *, turned: bool = True) -> None:
    parser.add_argument("--rules", default=None, help="rule family: nepali (default) or rummy")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="house-rule option, e.g. tiplu_pair=8 (repeatable)")
    parser.add_argument("--tiplu", help="the tiplu card (nepali), e.g. JC")
    if turned:
        parser.add_argument("--turned", help="the turned card that sets the joker rank (rummy), e.g. 7D")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _rules_from(args: argparse.Namespace) -> RuleSet:
    return get_rules(args.rules, parse_option_assignments(args.option))


def _optional_card(text: str | None) -> Card | None:
    return None if text is None else parse_card(text)


def _emit(data: Mapping[str, Any], out: TextIO) -> None:
    out.write(json.dumps(data, ensure_ascii=False) + "\n")


def _show(args: argparse.Namespace, out: TextIO, data: Mapping[str, Any], lines: Iterable[str]) -> None:
    """Print ``data`` as one JSON line with ``--json``, else the human-readable ``lines``."""
    if args.json:
        _emit(data, out)
    else:
        out.writelines(f"{line}\n" for line in lines)


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


def _check_one(rules: RuleSet, cards: Sequence[str] | None, groups: Sequence[Sequence[str]] | None,
               tiplu: Card | None, turned: Card | None, discard: Card | None,
               players: int | None) -> DeclareResult:
    if groups is not None:
        parsed = [parse_cards(g) for g in groups]
        return check_grouping(parsed, rules, tiplu=tiplu, turned=turned, discard=discard, players=players)
    return check_hand(parse_cards(cards or []), rules, tiplu=tiplu, turned=turned, players=players)


def _describe_declare(result: DeclareResult) -> str:
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


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    if args.jsonl:
        return _check_jsonl(args, sys.stdin, out)
    rules = _rules_from(args)
    groups = split_groups(args.cards)
    result = _check_one(rules, args.cards, groups, _optional_card(args.tiplu), _optional_card(args.turned),
                        _optional_card(args.discard), args.players)
    _show(args, out, result.to_dict(), [_describe_declare(result)])
    return EXIT_OK if result.valid else EXIT_NOT_VALID


def _check_jsonl(args: argparse.Namespace, stdin: TextIO, out: TextIO) -> int:
    """One result per input line; a bad line gets ``error`` and the run exits 2."""
    status = EXIT_OK
    for number, line in enumerate(stdin, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
            if not isinstance(item, dict):
                raise UsageError("each line must be a JSON object like {\"tiplu\": \"JC\", \"cards\": [...]}")
            options = item.get("options") or {}
            if not isinstance(options, dict):
                raise UsageError("options must be an object of NAME: VALUE")
            rules = get_rules(item.get("rules") or args.rules, {**parse_option_assignments(args.option), **options})
            cards = item.get("cards")
            groups = item.get("groups")
            if cards is None and groups is None:
                raise UsageError("give \"cards\": [...] (or \"groups\": [[...], ...])")
            result = _check_one(rules, cards, groups, _optional_card(item.get("tiplu") or args.tiplu),
                                _optional_card(item.get("turned") or args.turned),
                                _optional_card(item.get("discard")), item.get("players"))
            _emit(result.to_dict(), out)
        except (json.JSONDecodeError, TipluError) as error:
            status = EXIT_BAD_INPUT
            message = f"not JSON ({error.msg})" if isinstance(error, json.JSONDecodeError) else str(error)
            _emit({"valid": False, "route": None, "melds": [], "discard": None, "reason": None,
                   "error": f"line {number}: {message}"}, out)
    return status


def cmd_maal(args: argparse.Namespace, out: TextIO) -> int:
    rules = _rules_from(args)
    if args.tiplu is None:
        raise UsageError("maal needs the tiplu: --tiplu JC")
    result = maal_points(parse_cards(args.cards), rules, parse_card(args.tiplu), seen=not args.unseen,
                         dealt_tunnelas=[parse_card(c) for c in args.dealt_tunnela])
    lines = [f"{item.points:>4}  {item.label}: {format_cards(item.cards)}" for item in result.items]
    _show(args, out, result.to_dict(), [*lines, f"{result.total:>4}  total maal"])
    return EXIT_OK


def _field(entry: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
    value = entry.get(key, default)
    if value is None:
        return default
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise UsageError(f"{key} must be a whole number, got {value!r}")
    if kind is bool and not isinstance(value, bool):
        raise UsageError(f"{key} must be true or false, got {value!r}")
    return value


def settlement_players(data: Mapping[str, Any], rules: RuleSet) -> list[PlayerRound]:
    """Read the ``players`` list of a settle request; cards are valued by the scorer."""
    players = data.get("players")
    if not isinstance(players, list) or not players:
        raise UsageError("give \"players\": [{\"name\": ..., \"maal\": ..., \"seen\": ...}, ...]")
    result = []
    for entry in players:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"].strip():
            raise UsageError("each player needs a \"name\"")
        name = entry["name"].strip()
        maal = _field(entry, "maal", int, 0)
        penalty = _field(entry, "penalty", int, None)
        seen = _field(entry, "seen", bool, False)
        if "cards" in entry:
            cards = parse_cards(entry["cards"])
            if rules.name == "rummy":
                penalty = penalty_points(cards, rules, _required_card(data, "turned")).penalty
            else:
                maal = maal_points(cards, rules, _required_card(data, "tiplu"), seen=seen).total
        result.append(PlayerRound(name=name, maal=maal, seen=seen, seen_by=entry.get("seen_by"),
                                  penalty=penalty, wrong_close=_field(entry, "wrong_close", bool, False),
                                  false_declaration=_field(entry, "false_declaration", bool, False)))
    return result


def _required_card(data: Mapping[str, Any], key: str) -> Card:
    if not isinstance(data.get(key), str):
        raise UsageError(f"players give cards, so \"{key}\" is needed, e.g. \"{key}\": \"JC\"")
    return parse_card(data[key])


def cmd_settle(args: argparse.Namespace, out: TextIO) -> int:
    try:
        data = json.loads(sys.stdin.read())
    except json.JSONDecodeError as error:
        raise UsageError(f"settle reads a JSON object on stdin: {error.msg} at line {error.lineno}") from None
    if not isinstance(data, dict):
        raise UsageError("settle reads a JSON object with rules, options, winner, finish and players")
    options = data.get("options") or {}
    if not isinstance(options, dict):
        raise UsageError("options must be an object of NAME: VALUE")
    rules = get_rules(data.get("rules"), options)
    winner = data.get("winner")
    if winner is not None and not isinstance(winner, str):
        raise UsageError("winner must be a player's name or null")
    settlement = settle_round(rules, settlement_players(data, rules), winner, data.get("finish", "melds"))
    lines = [*(f"{a.player}: {a.before} -> {a.after} ({a.reason})" for a in settlement.adjustments),
             *(f"{p.payer} pays {p.payee} {p.points} ({p.reason})" for p in settlement.payments),
             *(f"{name:>12} {points:+d}" for name, points in settlement.net.items())]
    _show(args, out, {"net": settlement.net, "payments": [p.to_dict() for p in settlement.payments]}, lines)
    return EXIT_OK


def cmd_penalty(args: argparse.Namespace, out: TextIO) -> int:
    rules = get_rules(args.rules or "rummy", parse_option_assignments(args.option))
    if args.turned is None:
        raise UsageError("penalty needs the turned card: --turned 7D")
    result = penalty_points(parse_cards(args.cards), rules, parse_card(args.turned))
    lines = [*(f"meld: {format_cards(meld)}" for meld in result.melds),
             f"unmatched: {format_cards(result.unmatched) or '-'}", f"penalty: {result.penalty}"]
    _show(args, out, result.to_dict(), lines)
    return EXIT_OK


def cmd_rules(args: argparse.Namespace, out: TextIO) -> int:
    """List the rule families and every option with its default."""
    from scorer.rules import RULE_FAMILIES
    families = [RULE_FAMILIES[args.family]] if args.family else list(RULE_FAMILIES.values())
    if args.json:
        _emit({f.name: {s.name: s.default for s in f.options} for f in families}, out)
        return EXIT_OK
    for family in families:
        out.write(f"{family.name}: {family.title}\n")
        for spec in family.options:
            out.write(f"  {spec.name} = {spec.default}  ({spec.help})\n")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tiplu", description="Table assistant for Marriage (Nepali rummy).")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser("check", help="does a declared 21/22-card hand finish?")
    _add_rules_arguments(check)
    check.add_argument("--jsonl", action="store_true", help="read {\"tiplu\", \"cards\"} lines from stdin")
    check.add_argument("--discard", help="the discarded card when judging a grouping")
    check.add_argument("--players", type=int, help="players at the table (for dublee_min_players)")
    check.add_argument("cards", nargs="*", metavar="CARD",
                       help="the hand; separate melds with | to judge your own grouping")
    check.set_defaults(handler=cmd_check)

    maal = sub.add_parser("maal", help="itemised maal points of a player's cards")
    _add_rules_arguments(maal, turned=False)
    maal.add_argument("--unseen", action="store_true", help="the player has not seen (no dealt-tunnela bonus)")
    maal.add_argument("--dealt-tunnela", action="append", default=[], metavar="CARD",
                      help="a tunnela shown at the deal (repeatable)")
    maal.add_argument("cards", nargs="+", metavar="CARD")
    maal.set_defaults(handler=cmd_maal)

    settle = sub.add_parser("settle", help="settle a round read as JSON from stdin")
    settle.add_argument("--json", action="store_true", help="print JSON")
    settle.set_defaults(handler=cmd_settle)

    penalty = sub.add_parser("penalty", help="rummy penalty points of a non-closer's cards")
    _add_rules_arguments(penalty)
    penalty.add_argument("cards", nargs="+", metavar="CARD")
    penalty.set_defaults(handler=cmd_penalty)

    rules = sub.add_parser("rules", help="list the rule families and their options")
    rules.add_argument("family", nargs="?", choices=["nepali", "rummy"])
    rules.add_argument("--json", action="store_true")
    rules.set_defaults(handler=cmd_rules)

    for name, module, help_text in PLUGGED_COMMANDS:
        plugged = sub.add_parser(name, help=help_text, add_help=False)
        plugged.set_defaults(plugged_module=module)
    return parser


def _run_plugged(module_name: str, command: str, argv: Sequence[str]) -> int:
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        sys.stderr.write(f"tiplu {command}: not available here ({error.name or error}); "
                         f"see the README for the extra it needs\n")
        return EXIT_BAD_INPUT
    return run_command(module, argv, prog=f"tiplu {command}")


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point of the ``tiplu`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out = out or sys.stdout
    plugged = {name: module for name, module, _ in PLUGGED_COMMANDS}
    if argv and argv[0] in plugged:
        return _run_plugged(plugged[argv[0]], argv[0], argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace, TextIO], int] = args.handler
    try:
        return handler(args, out)
    except (TipluError, OptionError) as error:
        sys.stderr.write(f"tiplu {args.command}: {error}\n")
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
