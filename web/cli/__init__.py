"""The ``tiplu`` command line: every command's arguments, over the same core as the web app.

Exit codes (:class:`ExitCode`): 0 success (``check``: the hand finishes), 1 the hand does
not finish, 2 bad input (the message on stderr says what to fix).

    tiplu check --tiplu JC 3S 4S 5S ...        does this hand finish?
    tiplu maal --tiplu JC 10C JC QC QC          itemised maal
    echo '{...}' | tiplu settle --json          who pays whom
    tiplu penalty --rules rummy --turned 7D ... rummy penalty points
    tiplu serve                                 the web app for phones at the table

Each command has its own module here (``tiplu eval-model``: ``eval_model.py``) with
``add_arguments(parser)`` and ``run(args, io) -> int``; :data:`COMMANDS` lists them. A
command's module is imported only when that command runs, so ``tiplu check`` loads
neither Flask, onnxruntime nor torch. :func:`main` runs in process on any streams:

>>> from io import StringIO
>>> out = StringIO()
>>> main(["maal", "--tiplu", "JC", "--json", "10C", "JC", "QC", "QC"], stdout=out)
0
>>> out.getvalue()
'{"total": 12, "items": [{"label": "marriage", "cards": ["10C", "JC", "QC"], "points": 10}, {"label": "poplu", "cards": ["QC"], "points": 2}]}\\n'
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO

from scorer import TipluError
from web.cli._common import ExitCode, Streams, UsageError

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["COMMANDS", "Command", "ExitCode", "UsageError", "build_parser", "main"]


@dataclass(frozen=True)
class Command:
    """One ``tiplu`` command: its name, a line of help, and its module in this package."""

    name: str
    help: str
    module: str

    def load(self) -> ModuleType:
        """The command's module (``add_arguments`` and ``run``), imported on first use."""
        return importlib.import_module(f"{__name__}.{self.module}")


#: Every ``tiplu`` command, in the order ``tiplu --help`` lists them.
COMMANDS: tuple[Command, ...] = (
    Command("check", "does a declared 21/22-card hand finish?", "check"),
    Command("maal", "itemised maal points of a player's cards", "maal"),
    Command("settle", "settle a round read as JSON from stdin", "settle"),
    Command("penalty", "rummy penalty points of a non-closer's cards", "penalty"),
    Command("rules", "list the rule families and their options", "rules"),
    Command("serve", "run the web app for the phones at the table", "serve"),
    Command("check-ledger", "check the ledger file and its photos", "check_ledger"),
    Command("detect", "find the cards in photos (JSON lines)", "detect"),
    Command("score", "photo to verdict: detect, declare check and maal in one go", "score"),
    Command("generate", "make synthetic training photos with labels", "generate"),
    Command("train", "train a network: corners, names, orientation (train extra)", "train"),
    Command("eval-model", "measure a detector on a YOLO-format folder", "eval_model"),
    Command("report", "the model card's evaluation of a detector (all sets)", "report"),
    Command("accumulate", "gone into tiplu train: says where each step went", "accumulate"),
    Command("calibrate", "choose when a card is doubtful, measured on a test split", "calibrate"),
    Command("enrol", "learn a family's deck from a photo per suit (train extra)", "enrol"),
    Command("improve", "improve a model from reviewed, labelled photos (train extra)", "improve"),
)


class ParserExit(Exception):
    """argparse finished early (``--help``, a usage error) with this exit status."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class CommandParser(argparse.ArgumentParser):
    """An argument parser that writes to the command's streams and returns instead of exiting."""

    def __init__(self, *args: Any, streams: Streams, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.streams = streams

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("parser_class", partial(CommandParser, streams=self.streams))
        return super().add_subparsers(**kwargs)

    def print_usage(self, file: SupportsWrite[str] | None = None) -> None:
        super().print_usage(file or self.streams.stdout)

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        super().print_help(file or self.streams.stdout)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self.streams.stderr.write(message)
        raise ParserExit(status)

    def error(self, message: str) -> NoReturn:
        self.print_usage(self.streams.stderr)
        self.exit(ExitCode.BAD_INPUT, f"{self.prog}: error: {message}\n")


def build_parser(command: Command | None = None, streams: Streams | None = None) -> CommandParser:
    """The ``tiplu`` parser; only ``command``'s own arguments are added (its module is imported)."""
    streams = streams or Streams(sys.stdin, sys.stdout, sys.stderr)
    parser = CommandParser(prog="tiplu", description="Table assistant for Marriage (Nepali rummy).",
                           streams=streams)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for each in COMMANDS:
        subparser = sub.add_parser(each.name, help=each.help, description=each.help)
        if each == command:
            each.load().add_arguments(subparser)
    return parser


def main(argv: Sequence[str] | None = None, stdin: TextIO | None = None, stdout: TextIO | None = None,
         stderr: TextIO | None = None) -> int:
    """Run one ``tiplu`` command in this process and return its exit code (the console script's entry)."""
    streams = Streams(stdin or sys.stdin, stdout or sys.stdout, stderr or sys.stderr)
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        code = _run(argv, streams)
        streams.stdout.flush()
        return code
    except BrokenPipeError:
        _discard_output(streams.stdout)
        return ExitCode.CLOSED_PIPE


def _run(argv: list[str], streams: Streams) -> int:
    command = next((c for c in COMMANDS if argv and c.name == argv[0]), None)
    try:
        parser = build_parser(command, streams)
    except ImportError as error:
        assert command is not None
        return streams.fail(command.name, f"not available here ({error.name or error}); "
                                          f"see the README for the extra it needs")
    try:
        args = parser.parse_args(argv)
    except ParserExit as done:
        return done.status
    assert command is not None
    try:
        return int(command.load().run(args, streams))
    except TipluError as error:
        return streams.fail(command.name, error)


def _discard_output(stdout: TextIO) -> None:
    """After the reader hung up, send what is still buffered nowhere, so exiting stays quiet."""
    try:
        fileno = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fileno)
    os.close(devnull)
