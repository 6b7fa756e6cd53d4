"""``tiplu serve``: run the web app with waitress so phones at the table can use it.

It prints the addresses phones can open (found without sending any network
traffic) and, when listening on the network, the *table code* that every request
needs, with a link and a QR code that carry it (a phone that opens it is let in).

Example::

    tiplu serve --host 0.0.0.0 --port 8000 --db ~/marriage.db
    python -m web.serve --port 8000          # the same, on this machine only
"""

from __future__ import annotations

import os
import sys
from typing import Sequence, TextIO

from scorer import TipluError
from web.network import is_loopback_host, lan_addresses

DEFAULT_PORT = 8000
DEFAULT_THREADS = 8


class ServeError(TipluError):
    """The server cannot start: the ledger cannot be opened or the port is taken."""


def urls_for(host: str, port: int) -> list[str]:
    """The URLs to print: the loopback one, then one per LAN address when listening on all of them."""
    if host in ("0.0.0.0", "::", ""):
        hosts = ["127.0.0.1", *lan_addresses()]
    else:
        hosts = [host]
    return [f"http://{'[' + h + ']' if ':' in h else h}:{port}/" for h in hosts]


def print_qr(url: str, out: TextIO) -> None:
    try:
        import segno
    except ImportError:
        return
    try:
        segno.make(url, error="m").terminal(out=out, compact=True)
    except (OSError, UnicodeEncodeError, ValueError):
        pass


def serve(*, host: str = "127.0.0.1", port: int = DEFAULT_PORT, db: str | None = None,
          table_code: str | None = None, table_code_length: int | None = None, threads: int = DEFAULT_THREADS,
          max_upload_mb: int | None = None, demo: bool = False, qr: bool = True, out: TextIO | None = None) -> None:
    """Serve the app with waitress until Ctrl-C, saying on ``out`` where phones can open it.

    ``table_code`` (default ``$TIPLU_TABLE_CODE``, else ``table_code_length`` random digits
    when ``host`` is not a loopback address) is then asked of every request; given on
    127.0.0.1 (behind a reverse proxy) it is asked too. Raises :class:`ServeError` when the
    code length is out of range, the ledger cannot be opened or the port is taken.
    """
    from waitress import create_server

    from web.app import MEGABYTE, create_app
    from web.security import DEFAULT_CODE_LENGTH, code_link, new_table_code
    from web.server_errors import JsonErrorChannel

    out = out or sys.stdout
    config: dict[str, object] = {}
    if db:
        config["DATABASE"] = os.path.abspath(os.path.expanduser(db))
    if max_upload_mb is not None:
        config["MAX_CONTENT_LENGTH"] = max_upload_mb * MEGABYTE
    try:
        random_code = new_table_code(table_code_length or DEFAULT_CODE_LENGTH)
    except ValueError as error:
        raise ServeError(f"--table-code-length: {error}") from None
    networked = not is_loopback_host(host)
    code = table_code or os.environ.get("TIPLU_TABLE_CODE") or (random_code if networked else None)
    config["TABLE_CODE"] = code
    try:
        app = create_app(config)
    except Exception as error:  # noqa: BLE001 - a bad --db path must end with a message, not a traceback
        raise ServeError(f"cannot open the ledger: {error}") from None
    if demo:
        from web.demo import create_demo_session
        created = create_demo_session(app.config["DATABASE"])
        out.write("demo session created (marked 'demo')\n" if created
                  else "the ledger already has sessions; no demo added\n")
    try:
        server = create_server(app, host=host, port=port, threads=threads,
                               max_request_body_size=int(app.config["MAX_CONTENT_LENGTH"]) + MEGABYTE,
                               ident="tiplu")
    except OSError as error:
        raise ServeError(f"cannot listen on {host}:{port}: {error}") from None
    server.channel_class = JsonErrorChannel
    urls = urls_for(host, int(getattr(server, "effective_port", port)))
    try:
        out.write(f"tiplu is serving the ledger {app.config['DATABASE']}\n")
        for url in urls:
            out.write(f"  open {url}\n")
        if code:
            out.write(f"  table code: {code}  (every phone and program needs it; a phone enters it once)\n")
            lan = [u for u in urls if "127.0.0.1" not in u] or urls
            out.write(f"  or open {code_link(lan[0], code)}  (lets that phone in)\n")
            if qr:
                print_qr(code_link(lan[0], code), out)
        out.write("Press Ctrl-C to stop.\n")
        out.flush()
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m web.serve ...``: the same as ``tiplu serve ...`` (whose arguments live in :mod:`web.cli`)."""
    from web.cli import main as tiplu
    return tiplu(["serve", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
