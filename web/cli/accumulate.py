"""``tiplu accumulate``: gone into ``tiplu train``; it says where each step went and exits 2.

Going on from a resume point is an option of each network's one recipe now (``--resume-dir``), not a
second command: :data:`MOVED` maps each old step to the ``tiplu train`` command that does it.
"""

from __future__ import annotations

import argparse

from web.cli._common import ExitCode, Streams

#: Each ``tiplu accumulate`` step and the ``tiplu train`` command that does it now.
MOVED = {"init": "tiplu train init [--from models]",
         "detector": "tiplu train corners DATA.yaml [--epochs N] [--resume-dir DIR]",
         "classifier": "tiplu train names DATA... [--epochs N] [--resume-dir DIR]",
         "loop": "tiplu train loop --corners-data D.yaml --names-data DATA...",
         "extend": "tiplu train extend corners|names --epochs N --lr-max A --lr-min B --reason WHY",
         "export": "tiplu train export --out DIR",
         "status": "tiplu train status"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="the old step and its arguments")


def run(args: argparse.Namespace, io: Streams) -> int:
    """Say where the step went (every step when none is given); exit 2."""
    step = args.rest[0] if args.rest else None
    lines = [MOVED[step]] if step in MOVED else [f"{old}: {new}" for old, new in MOVED.items()]
    return io.fail("accumulate", "is now 'tiplu train' (the same recipes, going on from the resume point): "
                   + "; ".join(lines))
