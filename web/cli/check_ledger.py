"""``tiplu check-ledger [--db PATH] [--photos DIR] [--repair]``: the ledger and its photos agree.

:func:`web.maintenance.check_ledger` does the work; this module only reads its arguments.
Exit 0 when all is well (or repaired), 1 when something is left to fix, 2 when the
ledger cannot be opened.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from web.cli._common import ExitCode, Streams


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, help="SQLite ledger file (default: $TIPLU_DB, else instance/tiplu.db)")
    parser.add_argument("--photos", default=None,
                        help="photo folder (default: $TIPLU_PHOTOS, else photos/ beside the ledger)")
    parser.add_argument("--repair", action="store_true", help="delete photo files that belong to no row")


def run(args: argparse.Namespace, io: Streams) -> int:
    from web.app import create_app
    from web.maintenance import check_ledger
    from web.photos import photo_folder
    config: dict[str, Any] = {}
    if args.db:
        config["DATABASE"] = os.path.abspath(os.path.expanduser(args.db))
    if args.photos:
        config["PHOTO_DIR"] = os.path.abspath(os.path.expanduser(args.photos))
    try:
        app = create_app(config)
    except Exception as error:  # noqa: BLE001 - a bad --db path must end with a message, not a traceback
        return io.fail("check-ledger", f"cannot open the ledger: {error}")
    report = check_ledger(app.config["DATABASE"], photo_folder(app), repair=args.repair)
    io.stdout.write("\n".join(report.lines()) + "\n")
    return ExitCode.OK if report.ok else ExitCode.NOT_FINISHED
