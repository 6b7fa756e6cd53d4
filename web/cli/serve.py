"""``tiplu serve [--host 0.0.0.0] [--port 8000] [--db PATH] [--demo]``: the app for the phones.

:func:`web.serve.serve` does the work; this module only reads its arguments.
"""

from __future__ import annotations

import argparse

from web.cli._common import ExitCode, Streams
from web.serve import DEFAULT_PORT, DEFAULT_THREADS, serve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on: 127.0.0.1 (this machine only, default) "
                             "or 0.0.0.0 (phones on the same network)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to listen on (default {DEFAULT_PORT})")
    parser.add_argument("--db", default=None,
                        help="SQLite ledger file (default: $TIPLU_DB, else instance/tiplu.db)")
    parser.add_argument("--table-code", default=None,
                        help="the code every request needs (default: $TIPLU_TABLE_CODE or a random one when "
                             "listening on the network; give it on 127.0.0.1 behind a reverse proxy)")
    parser.add_argument("--table-code-length", type=int, default=None,
                        help="digits of a random table code (default 6; 10 or more on a shared network)")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"worker threads (default {DEFAULT_THREADS})")
    parser.add_argument("--max-upload-mb", type=int, default=None,
                        help="largest request accepted, in MB (default 16)")
    parser.add_argument("--demo", action="store_true",
                        help="add a sample 4-player session (marked 'demo') if the ledger has no sessions")
    parser.add_argument("--no-qr", action="store_true", help="do not print a QR code")


def run(args: argparse.Namespace, io: Streams) -> int:
    """Serve until Ctrl-C (exit 0); a :class:`web.serve.ServeError` (the ledger or the port) exits 2."""
    if args.max_upload_mb is not None and args.max_upload_mb < 1:
        return io.fail("serve", "--max-upload-mb must be at least 1")
    serve(host=args.host, port=args.port, db=args.db, table_code=args.table_code,
          table_code_length=args.table_code_length, threads=args.threads,
          max_upload_mb=args.max_upload_mb, demo=args.demo, qr=not args.no_qr, out=io.stdout)
    return ExitCode.OK
