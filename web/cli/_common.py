"""What every ``tiplu`` command shares: exit codes, the streams it writes to, rule arguments.

>>> ExitCode.BAD_INPUT, int(ExitCode.NOT_FINISHED)
(<ExitCode.BAD_INPUT: 2>, 1)
>>> parse_option_assignments(["tiplu_pair=8", " murder = on"])
{'tiplu_pair': '8', 'murder': 'on'}
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path
from typing import Any, TextIO

from scorer import RULE_FAMILIES, Card, RuleSet, TipluError, get_rules, parse_card
from scorer.errors import OptionError
from scorer.kinds import Scoring


class ExitCode(IntEnum):
    """How a ``tiplu`` command ends; scripts rely on these numbers."""

    OK = 0
    #: ``check`` and ``score``: the hand does not finish (the answer, not an error).
    NOT_FINISHED = 1
    #: bad input; the message on stderr says what to fix.
    BAD_INPUT = 2
    #: whoever read the output stopped early (``tiplu ... | head``), as a shell reports SIGPIPE.
    CLOSED_PIPE = 141


class UsageError(TipluError):
    """Bad command-line input (a missing card, a wrongly typed JSON field, ...)."""


@dataclass(frozen=True)
class Streams:
    """Where a command reads and writes: the process's streams, or StringIO in tests."""

    stdin: TextIO
    stdout: TextIO
    stderr: TextIO

    def emit(self, data: Mapping[str, Any]) -> None:
        """One JSON object on one line of stdout."""
        self.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")

    def show(self, as_json: bool, data: Mapping[str, Any], lines: Iterable[str]) -> None:
        """``data`` as one JSON line when ``as_json``, else the human-readable ``lines``."""
        if as_json:
            self.emit(data)
        else:
            self.stdout.writelines(f"{line}\n" for line in lines)

    def fail(self, command: str, message: object) -> ExitCode:
        """Say on stderr what to fix; returns :attr:`ExitCode.BAD_INPUT`."""
        self.stderr.write(f"tiplu {command}: {message}\n")
        return ExitCode.BAD_INPUT


def model_json_file(text: str) -> Path:
    """``--write`` and ``--write-metrics``: a model folder's existing ``model.json``, checked before any
    work is done, so a wrong path is a usage error at once, not a traceback after minutes of reading."""
    path = Path(text)
    try:
        info = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        raise argparse.ArgumentTypeError(f"{text}: not a readable model.json; give a model folder's, "
                                         "e.g. models/model.json") from None
    if not isinstance(info, dict):
        raise argparse.ArgumentTypeError(f"{text}: expected a JSON object with the model's settings")
    return path


def parse_size(text: str) -> tuple[int, int]:
    """``--size`` and ``--crop``: ``"1280x960"`` -> ``(1280, 960)``; ``"640"`` -> ``(640, 640)``."""
    try:
        if "x" in text.lower():
            w, h = text.lower().split("x")
            size = (int(w), int(h))
        else:
            size = (int(text), int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"size {text!r}: write WIDTHxHEIGHT, e.g. 1280x960") from None
    if min(size) < 32:
        raise argparse.ArgumentTypeError(f"size {text!r}: each side must be at least 32 px")
    return size


def parse_option_assignments(assignments: Iterable[str]) -> dict[str, str]:
    """``--option NAME=VALUE`` strings as a dict (values still text; the rule set coerces them)."""
    result: dict[str, str] = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"'{item}': write options as NAME=VALUE, e.g. tiplu_pair=8")
        result[name.strip()] = value.strip()
    return result


def add_rules_arguments(parser: argparse.ArgumentParser, *, turned: bool = True, json_output: bool = True,
                        tiplu_help: str = "the tiplu card (nepali), e.g. JC") -> None:
    """``--rules``, ``--option``, ``--tiplu``, ``--turned`` and ``--json``."""
    parser.add_argument("--rules", default=None, help="rule family: nepali (default) or rummy")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="house-rule option, e.g. tiplu_pair=8 (repeatable)")
    parser.add_argument("--tiplu", help=tiplu_help)
    if turned:
        parser.add_argument("--turned", help="the turned card that sets the joker rank (rummy), e.g. 7D")
    if json_output:
        parser.add_argument("--json", action="store_true", help="print JSON")


def rules_from(args: argparse.Namespace, default: str | None = None) -> RuleSet:
    """The rule set of ``--rules`` (else ``default``) with the ``--option`` values."""
    return get_rules(args.rules or default, parse_option_assignments(args.option))


def family_scoring(scoring: Scoring) -> str:
    """The rule family that scores this way, e.g. the one with penalty points.

    >>> family_scoring(Scoring.PENALTY)
    'rummy'
    """
    return str(next(name for name, family in RULE_FAMILIES.items() if family.scoring is scoring))


def optional_card(text: str | None) -> Card | None:
    return None if text is None else parse_card(text)
