"""``tiplu serve``: run the web app with waitress so phones at the table can use it.

It prints the addresses phones can open (found without sending any network
traffic) and, when listening on the network, the *table code* every request then
needs, and a link (and its QR code) that carries the code, so a phone that opens
it once is let in.

Example::

    tiplu serve --host 0.0.0.0 --port 8000 --db ~/marriage.db
    python -m web.serve --port 8000          # the same, on this machine only
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import socket
import sys
from typing import Sequence

from vision.command import run_command

LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``tiplu serve`` (the lead's CLI calls this)."""
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to listen on: 127.0.0.1 (this machine only, default) "
                             "or 0.0.0.0 (phones on the same network)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    parser.add_argument("--db", default=None,
                        help="SQLite ledger file (default: $TIPLU_DB, else instance/tiplu.db)")
    parser.add_argument("--table-code", default=None,
                        help="the code every request needs (default: $TIPLU_TABLE_CODE or a random one when "
                             "listening on the network; give it on 127.0.0.1 behind a reverse proxy)")
    parser.add_argument("--table-code-length", type=int, default=None,
                        help="digits of a random table code (default 6; 10 or more on a shared network)")
    parser.add_argument("--threads", type=int, default=8, help="worker threads (default 8)")
    parser.add_argument("--max-upload-mb", type=int, default=None,
                        help="largest request accepted, in MB (default 16)")
    parser.add_argument("--demo", action="store_true",
                        help="add a sample 4-player session (marked 'demo') if the ledger has no sessions")
    parser.add_argument("--no-qr", action="store_true", help="do not print a QR code")


def is_loopback_host(host: str) -> bool:
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def lan_addresses() -> list[str]:
    """This machine's non-loopback IPv4 addresses, found without sending a packet.

    Connecting a UDP socket only picks the outgoing interface; nothing is sent.
    """
    found: list[str] = []
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    except OSError:
        pass
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.connect((probe, 9))
                found.append(sock.getsockname()[0])
        except OSError:
            continue
    unique: list[str] = []
    for address in found:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            continue
        if not ip.is_loopback and not ip.is_unspecified and address not in unique:
            unique.append(address)
    return unique


def urls_for(host: str, port: int) -> list[str]:
    """The URLs to print: the loopback one, then one per LAN address when listening on all of them."""
    if host in ("0.0.0.0", "::", ""):
        hosts = ["127.0.0.1", *lan_addresses()]
    else:
        hosts = [host]
    return [f"http://{'[' + h + ']' if ':' in h else h}:{port}/" for h in hosts]


def print_qr(url: str) -> None:
    try:
        import segno
    except ImportError:
        return
    try:
        segno.make(url, error="m").terminal(compact=True)
    except (OSError, UnicodeEncodeError, ValueError):
        pass


def run(args: argparse.Namespace) -> int:
    """Start waitress; returns the exit code (0 after Ctrl-C)."""
    from waitress import create_server

    from web.app import MEGABYTE, create_app

    config: dict[str, object] = {}
    if args.db:
        config["DATABASE"] = os.path.abspath(os.path.expanduser(args.db))
    if args.max_upload_mb is not None:
        if args.max_upload_mb < 1:
            print("tiplu serve: --max-upload-mb must be at least 1", file=sys.stderr)
            return 2
        config["MAX_CONTENT_LENGTH"] = args.max_upload_mb * MEGABYTE
    networked = not is_loopback_host(args.host)
    from web.security import DEFAULT_CODE_LENGTH, code_link, new_table_code
    try:
        random_code = new_table_code(args.table_code_length or DEFAULT_CODE_LENGTH)
    except ValueError as error:
        print(f"tiplu serve: --table-code-length: {error}", file=sys.stderr)
        return 2
    code = args.table_code or os.environ.get("TIPLU_TABLE_CODE") or (random_code if networked else None)
    config["TABLE_CODE"] = code
    try:
        app = create_app(config)
    except Exception as error:  # noqa: BLE001 - a bad --db path must end with a message, not a traceback
        print(f"tiplu serve: cannot open the ledger: {error}", file=sys.stderr)
        return 2
    if args.demo:
        from web.demo import create_demo_session
        created = create_demo_session(app.config["DATABASE"])
        print("demo session created (marked 'demo')" if created else "the ledger already has sessions; no demo added")
    try:
        server = create_server(app, host=args.host, port=args.port, threads=args.threads,
                               max_request_body_size=int(app.config["MAX_CONTENT_LENGTH"]) + MEGABYTE,
                               ident="tiplu")
    except OSError as error:
        print(f"tiplu serve: cannot listen on {args.host}:{args.port}: {error}", file=sys.stderr)
        return 2
    from web.server_errors import JsonErrorChannel
    server.channel_class = JsonErrorChannel
    port = server.effective_port if hasattr(server, "effective_port") else args.port  # type: ignore[attr-defined]
    urls = urls_for(args.host, int(port))
    try:
        print(f"tiplu is serving the ledger {app.config['DATABASE']}")
        for url in urls:
            print(f"  open {url}")
        if code:
            print(f"  table code: {code}  (every phone and program needs it; a phone enters it once)")
            lan = [u for u in urls if "127.0.0.1" not in u] or urls
            print(f"  or open {code_link(lan[0], code)}  (lets that phone in)")
            if not args.no_qr:
                print_qr(code_link(lan[0], code))
        print("Press Ctrl-C to stop.", flush=True)
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run as ``python -m`` with ``argv`` (default: the command line)."""
    return run_command(sys.modules[__name__], argv)


if __name__ == "__main__":
    raise SystemExit(main())
