"""``tiplu rules [FAMILY] [--json]``: the rule families and every option with its default."""

from __future__ import annotations

import argparse

from scorer import RULE_FAMILIES
from web.cli._common import ExitCode, Streams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("family", nargs="?", choices=list(RULE_FAMILIES))
    parser.add_argument("--json", action="store_true")


def run(args: argparse.Namespace, io: Streams) -> int:
    families = [RULE_FAMILIES[args.family]] if args.family else list(RULE_FAMILIES.values())
    if args.json:
        io.emit({f.name: {s.name: s.default for s in f.options} for f in families})
        return ExitCode.OK
    for family in families:
        io.stdout.write(f"{family.name}: {family.title}\n")
        for spec in family.options:
            io.stdout.write(f"  {spec.name} = {spec.default}  ({spec.help})\n")
    return ExitCode.OK
