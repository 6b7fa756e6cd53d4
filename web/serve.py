"""``tiplu serve``: run the web app with waitress so phones at the table can use it.

It prints the addresses phones can open (found without sending any network
traffic) and, when listening on the network, the *table code* that every request
needs, with a link and a QR code that carry it (a phone that opens it is let in).

Example::

    tiplu serve --host 0.0.0.0 --port 8000 --db ~/marriage.db
    python -m web.serve --port 8000          # the same, on this machine only
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from typing import Any, Sequence, TextIO

from waitress.server import BaseWSGIServer

from scorer import TipluError
from web.network import is_loopback_host, lan_addresses
from web.security import SECURITY_HEADERS
from web.server_errors import JsonErrorChannel, JsonErrorTask

DEFAULT_PORT = 8000
DEFAULT_THREADS = 8
#: Seconds a connection may sit idle, or halfway through its request, before it is closed
#: (``$TIPLU_CHANNEL_TIMEOUT``); waitress's own default, 120, lets a few slow clients hold every slot.
CHANNEL_TIMEOUT = 10
#: How often (seconds) idle connections are looked for.
CLEANUP_INTERVAL = 2
#: Connections open at once, all clients together (``$TIPLU_CONNECTION_LIMIT``).
CONNECTION_LIMIT = 250
#: Connections open at once from one address (``$TIPLU_CONNECTIONS_PER_ADDRESS``): a phone's browser
#: opens about 6; more are closed at once. Behind a reverse proxy (``TIPLU_PROXY_HOPS``) every client
#: comes from the proxy's address, so the proxy must do this instead and loopback is not counted.
CONNECTIONS_PER_ADDRESS = 8
#: Seconds from a request's first byte to its last header (``$TIPLU_REQUEST_SECONDS``): a client that
#: trickles a byte now and then is closed after it, however often it sends one.
REQUEST_SECONDS = 10
#: The slowest body still taken, in bytes a second: a body of N bytes gets N / this many seconds
#: more (a 15 MB photo over a poor link: 75 s).
MIN_BODY_RATE = 200_000


def connection_settings(environ: Any = None) -> dict[str, int]:
    """waitress's limits on slow and idle clients, each overridable from the environment.

    >>> connection_settings({"TIPLU_CHANNEL_TIMEOUT": "30"})["channel_timeout"]
    30
    >>> connection_settings({})["connection_limit"]
    250
    """
    env = os.environ if environ is None else environ
    return {"channel_timeout": int(env.get("TIPLU_CHANNEL_TIMEOUT") or CHANNEL_TIMEOUT),
            "cleanup_interval": CLEANUP_INTERVAL,
            "connection_limit": int(env.get("TIPLU_CONNECTION_LIMIT") or CONNECTION_LIMIT)}


class GuardedErrorTask(JsonErrorTask):
    """An error that waitress answers itself (a body too large, broken headers), with the app's security headers."""

    def execute(self) -> None:
        self.response_headers.extend(SECURITY_HEADERS)
        super().execute()


def request_seconds(environ: Any = None) -> float:
    """Seconds a request may take to send its line and headers (``$TIPLU_REQUEST_SECONDS``).

    >>> request_seconds({"TIPLU_REQUEST_SECONDS": "4"}), request_seconds({})
    (4.0, 10.0)
    """
    env = os.environ if environ is None else environ
    return float(env.get("TIPLU_REQUEST_SECONDS") or REQUEST_SECONDS)


class GuardedChannel(JsonErrorChannel):
    """A connection that counts against its address and must send each request in time.

    Beyond the server's ``per_address`` connections from one address it is closed at
    once; a request whose headers have not all arrived :func:`request_seconds` after its
    first byte (or whose body comes slower than :data:`MIN_BODY_RATE`) is closed then.
    waitress's own ``channel_timeout`` counts from the last byte, so a client that sends
    one byte every few seconds would hold its connection for ever, and a few hundred of
    them fill the connection limit while the players' phones wait for a free slot.
    """

    error_task_class = GuardedErrorTask

    def __init__(self, server: BaseWSGIServer, sock: Any, addr: Any, adj: Any, map: Any = None) -> None:
        self.counted: str | None = None
        self.request_started: float | None = None
        self.request_seconds = float(getattr(server, "tiplu_request_seconds", REQUEST_SECONDS))
        super().__init__(server, sock, addr, adj, map)
        address = str(addr[0]) if isinstance(addr, tuple) and addr else ""
        limits: ConnectionCounts | None = getattr(server, "tiplu_connections", None)
        if limits is not None and address and limits.open(address):
            self.counted = address
        elif limits is not None and address:
            self.handle_close()

    def received(self, data: bytes) -> bool:
        if data and self.request is None:
            self.request_started = time.monotonic()
        taken = bool(super().received(data))
        if self.request is None:
            self.request_started = None
        return taken

    def past_deadline(self, now: float) -> bool:
        """Has the request being received taken longer than it may (its headers, then its body)?"""
        if self.request_started is None or self.request is None:
            return False
        allowed = self.request_seconds
        if self.request.headers_finished:
            allowed += int(self.request.content_length or 0) / MIN_BODY_RATE
        return now - self.request_started > allowed

    def readable(self) -> bool:
        # asyncore asks every channel this on each turn of the loop (at least once a second)
        if not getattr(self, "will_close", False) and self.past_deadline(time.monotonic()):
            self.will_close = True
        return bool(super().readable())

    def handle_close(self) -> None:
        counted, self.counted = self.counted, None
        if counted is not None:
            self.server.tiplu_connections.closed(counted)
        super().handle_close()


class ConnectionCounts:
    """Open connections per address, shared by the server's channels (thread-safe).

    >>> counts = ConnectionCounts(per_address=2)
    >>> [counts.open("10.0.0.9") for _ in range(3)], counts.open("10.0.0.8")
    ([True, True, False], True)
    >>> counts.closed("10.0.0.9"); counts.open("10.0.0.9")
    True
    >>> ConnectionCounts(per_address=1, exempt_loopback=True).open("127.0.0.1")
    True
    """

    def __init__(self, per_address: int, *, exempt_loopback: bool = False) -> None:
        self.per_address = per_address
        self.exempt_loopback = exempt_loopback
        self._open: dict[str, int] = {}
        self._lock = threading.Lock()

    def open(self, address: str) -> bool:
        """Count a new connection from ``address``; False (not counted) when it already has its share."""
        if self.exempt_loopback and is_loopback_host(address):
            return True
        with self._lock:
            if self._open.get(address, 0) >= self.per_address:
                return False
            self._open[address] = self._open.get(address, 0) + 1
            return True

    def closed(self, address: str) -> None:
        with self._lock:
            left = self._open.get(address, 0) - 1
            if left > 0:
                self._open[address] = left
            else:
                self._open.pop(address, None)


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


def listen_problem(host: str, port: int, error: OSError) -> str:
    """Why the server cannot listen, in plain words: a busy port says what to do, not ``[Errno 98]``.

    >>> import errno
    >>> print(listen_problem("0.0.0.0", 8000, OSError(errno.EADDRINUSE, "Address already in use")))
    cannot listen on 0.0.0.0:8000: port 8000 is already in use, most likely by a tiplu started earlier. Stop that one (Ctrl-C in its window) and start again, or pick another port with --port 8001
    """
    if error.errno == errno.EADDRINUSE:
        return (f"cannot listen on {host}:{port}: port {port} is already in use, most likely by a tiplu started "
                f"earlier. Stop that one (Ctrl-C in its window) and start again, or pick another port with "
                f"--port {port + 1}")
    if error.errno == errno.EACCES:
        return (f"cannot listen on {host}:{port}: this user may not use port {port}; pick one above 1023, "
                f"e.g. --port 8000")
    if error.errno == errno.EADDRNOTAVAIL:
        return (f"cannot listen on {host}:{port}: {host} is no address of this machine; use 0.0.0.0 for every "
                f"network or 127.0.0.1 for this machine only")
    return f"cannot listen on {host}:{port}: {error.strerror or error}"


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
                               ident="tiplu", **connection_settings())
    except OSError as error:
        raise ServeError(listen_problem(host, port, error)) from None
    server.channel_class = GuardedChannel
    server.tiplu_request_seconds = request_seconds()
    server.tiplu_connections = ConnectionCounts(
        int(os.environ.get("TIPLU_CONNECTIONS_PER_ADDRESS") or CONNECTIONS_PER_ADDRESS),
        exempt_loopback=bool(app.config.get("PROXY_HOPS")))
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
