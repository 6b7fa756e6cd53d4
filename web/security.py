"""Who may use the server: the table code, its throttling, same-origin writes, CSRF and safe redirects.

The rule follows where ``tiplu serve`` listens. Bound to loopback only, nobody
else can reach it and no code is asked. Bound to anything else, the app gets a
``TABLE_CODE`` and *every* request needs it, from any address including
127.0.0.1 (behind a reverse proxy every client looks local): pages, API, photos,
reads and writes. Only the code page and static files are open. The code comes
as the ``X-Table-Code`` header (programs), the cookie the code page sets
(phones), or once as ``?table_code=`` in the link ``tiplu serve`` prints.
Wrong codes are counted per address (:mod:`web.throttle`): after a few, that
address gets 429 with ``Retry-After`` and waits that double; and the whole server
has a budget of wrong codes, past which only devices already let in get in.

Writes are also guarded against other sites: forms carry a CSRF token
(Flask-WTF); every write refuses a foreign ``Origin`` or ``Sec-Fetch-Site:
cross-site`` (SameSite cookies do not separate two ports of one host), and API
writes with a body must say ``Content-Type: application/json`` (a ``text/plain``
body is what a cross-site form can send without asking).

>>> len(new_table_code(10)), new_table_code(6).isdigit()
(10, True)
>>> code_link("http://192.168.1.5:8000/", "123456")
'http://192.168.1.5:8000/?table_code=123456'
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import ipaddress
import logging
import re
import secrets
import socket
import sqlite3
import threading
from datetime import datetime, timezone
from typing import Any, Callable, Sequence, TypeVar, cast
from urllib.parse import urlencode, urlsplit

from flask import Flask, Response, current_app, g, make_response, redirect, request, url_for
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFProtect
from itsdangerous import BadSignature, URLSafeSerializer
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Response as BaseResponse

from web.errors import Forbidden, NotFound, TooManyAttempts, UnsupportedMediaType, error_response, wants_json
from web.i18n import _
from web.throttle import GUESS_BUDGET, GUESS_REFILL_SECONDS, CodeThrottle, GuessBudget

TABLE_CODE_COOKIE = "tiplu_table_code"
TABLE_CODE_HEADER = "X-Table-Code"
#: The query parameter of the link ``tiplu serve`` prints; the guard turns it into the cookie.
TABLE_CODE_PARAM = "table_code"
TABLE_CODE_MAX_AGE = 30 * 24 * 3600
DEFAULT_CODE_LENGTH = 6
MIN_CODE_LENGTH, MAX_CODE_LENGTH = 4, 32
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Blueprints whose every answer is JSON (the pages' scripts read them too).
JSON_BLUEPRINTS = frozenset({"api", "page_api"})
CONTENT_SECURITY_POLICY = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
                           "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'")

#: A device's id in the ``devices`` table, and what a signed token for it may be at most.
DEVICE_ID = re.compile(r"[0-9a-f]{32}")
DEVICE_SALT = "tiplu-device"
MAX_TOKEN_LENGTH = 200
MAX_DEVICE_LABEL = 60
#: A cookie from before devices held the code itself: digits only.
LEGACY_COOKIE = re.compile(r"[0-9]{%d,%d}" % (4, 32))
#: Distinct wrong codes remembered per address (to count each once), and addresses remembered.
GUESSES_PER_ADDRESS = 64
MAX_GUESS_ADDRESSES = 10_000
#: What the join page names a device by: its system, then its browser (first match wins).
PLATFORMS = (("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("Windows", "Windows"),
             ("Macintosh", "Mac"), ("CrOS", "Chromebook"), ("Linux", "Linux"))
BROWSERS = (("Firefox/", "Firefox"), ("Edg/", "Edge"), ("SamsungBrowser/", "Samsung Internet"), ("Chrome/", "Chrome"),
            ("Safari/", "Safari"))

csrf = CSRFProtect()
log = logging.getLogger(__name__)

View = TypeVar("View", bound=Callable[..., Any])


# --- the code itself ------------------------------------------------------------------------------

def new_table_code(length: int = DEFAULT_CODE_LENGTH) -> str:
    """A random code of ``length`` digits (4 to 32): 6 for a home, 10 or more for a shared network."""
    if not MIN_CODE_LENGTH <= length <= MAX_CODE_LENGTH:
        raise ValueError(f"a table code has {MIN_CODE_LENGTH} to {MAX_CODE_LENGTH} digits, not {length}")
    return "".join(secrets.choice("0123456789") for _ in range(length))


def code_link(url: str, code: str) -> str:
    """The address to print (and put in the QR code): opening it once lets that phone in."""
    return f"{url}?{urlencode({TABLE_CODE_PARAM: code})}"


def code_required() -> bool:
    """Does this app ask for the table code (it was given one: ``tiplu serve`` on the network)?"""
    return bool(current_app.config.get("TABLE_CODE"))


def throttle() -> CodeThrottle:
    return current_app.extensions["tiplu_code_throttle"]


def guess_budget() -> GuessBudget:
    return current_app.extensions["tiplu_guess_budget"]


def client_address() -> str:
    return request.remote_addr or "unknown"


def is_table_code(supplied: str) -> bool:
    """Is ``supplied`` this server's table code? Counted against the asking address.

    A blocked address gets :class:`~web.errors.TooManyAttempts` before its code is
    even compared (in constant time); a wrong code is logged and counted, once per
    distinct wrong code (six requests of a phone holding last night's code are one
    mistake, not six guesses); a right one clears the count.
    """
    code = str(current_app.config.get("TABLE_CODE") or "")
    if not code:
        return False
    address = client_address()
    wait = throttle().wait_left(address)
    if wait:
        g.setdefault("table_code_ok", False)  # the error page must not ask again (and raise again)
        raise TooManyAttempts(_("too many wrong table codes from this device: try again in %(s)s seconds",
                                s=wait), retry_after=wait)
    wait = guess_budget().wait_left()
    if wait:
        g.setdefault("table_code_ok", False)
        raise TooManyAttempts(_("too many wrong table codes were tried on this server: phones already let in go on; "
                                "others try again in %(s)s seconds", s=wait), retry_after=wait)
    if hmac.compare_digest(supplied.strip().encode(), code.encode()):
        if throttle().failures(address):
            log.info("table code accepted from %s after wrong ones", address)
        throttle().succeeded(address)
        wrong_guesses().forget(address)
        return True
    if not wrong_guesses().first_time(address, supplied.strip()):
        return False
    wait = throttle().failed(address)
    log.warning("wrong table code from %s (%d wrong; next try %s)", address, throttle().failures(address),
                f"in {wait} s" if wait else "free")
    if guess_budget().spend():
        log.warning("the server's budget of wrong table codes is spent: only devices already in get in")
    return False


class WrongGuesses:
    """The wrong codes each address already spent, so that the same wrong code counts once.

    Keyed by a keyed digest (the server's secret), never the text; at most
    :data:`GUESSES_PER_ADDRESS` per address and :data:`MAX_GUESS_ADDRESSES` addresses.

    >>> memo = WrongGuesses(b"k")
    >>> memo.first_time("10.0.0.9", "123456"), memo.first_time("10.0.0.9", "123456"), \
memo.first_time("10.0.0.9", "654321")
    (True, False, True)
    """

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._seen: dict[str, set[bytes]] = {}
        self._lock = threading.Lock()

    def first_time(self, address: str, guess: str) -> bool:
        """Record ``guess`` from ``address``; False when that address already sent it."""
        digest = hmac.new(self._key, guess.encode("utf-8", "replace"), hashlib.sha256).digest()
        with self._lock:
            seen = self._seen.pop(address, set())
            fresh = digest not in seen
            if fresh and len(seen) < GUESSES_PER_ADDRESS:
                seen.add(digest)
            self._seen[address] = seen
            while len(self._seen) > MAX_GUESS_ADDRESSES:
                del self._seen[next(iter(self._seen))]
            return fresh

    def forget(self, address: str) -> None:
        with self._lock:
            self._seen.pop(address, None)


def wrong_guesses() -> WrongGuesses:
    return current_app.extensions["tiplu_wrong_guesses"]


# --- devices: what the cookie holds ---------------------------------------------------------------

def _device_signer() -> URLSafeSerializer:
    """Signs device ids with the app's secret, salted with the table code: a new code ends every device."""
    code = str(current_app.config.get("TABLE_CODE") or "")
    return URLSafeSerializer(str(current_app.secret_key), salt=f"{DEVICE_SALT} {hashlib.sha256(code.encode()).hexdigest()}")


def device_label(agent: str) -> str:
    """A short name for a device, from its ``User-Agent``, for the join page's list.

    >>> device_label("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/126.0 Mobile Safari/537.36")
    'Android, Chrome'
    >>> device_label("curl/8.5.0")
    'curl/8.5.0'
    """
    platform = next((name for key, name in PLATFORMS if key in agent), "")
    browser = next((name for key, name in BROWSERS if key in agent), "")
    label = ", ".join(part for part in (platform, browser) if part)
    text = label or "".join(ch for ch in agent if ch.isprintable())[:MAX_DEVICE_LABEL]
    return text or "?"


def issue_device() -> str:
    """Let the asking browser in (it gave the right code) and return its signed token for the cookie.

    One row per browser: the device its cookie already names, else one let in before
    from the same address with the same label, is kept rather than a new row added (the
    printed link opened 300 times is one device). A browser whose cookie names a device
    that was shut out stays out (:class:`~web.errors.Forbidden`) until someone lets it
    in again from the join page, or the code changes (which ends every token).
    """
    from web.db import get_db, write
    db = get_db()
    stamp = _now()
    label, address = device_label(request.headers.get("User-Agent", "")), client_address()
    known = device_row(request.cookies.get(TABLE_CODE_COOKIE))
    if known is not None and known[1]:
        raise Forbidden(_("this phone was shut out of the table: someone already in can let it in again from "
                          "the Join page"))
    if known is None:
        known = db.execute("SELECT id FROM devices WHERE revoked_at IS NULL AND address = ? AND label = ? "
                           "ORDER BY last_seen DESC LIMIT 1", [address, label]).fetchone()
    with write(db):
        if known is not None:
            device_id = str(known[0])
            db.execute("UPDATE devices SET last_seen = ? WHERE id = ?", [stamp, device_id])
        else:
            device_id = secrets.token_hex(16)
            db.execute("INSERT INTO devices(id, label, address, created_at, last_seen) VALUES (?,?,?,?,?)",
                       [device_id, label, address, stamp, stamp])
    g.device = device_id
    return str(_device_signer().dumps(device_id))


def device_row(token: str | None) -> Any:
    """The ``devices`` row (``id``, ``revoked_at``, ``last_seen``) a cookie's token names, shut out or not;
    None when the token is not signed for this code or names no device."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    try:
        device_id = _device_signer().loads(token)
    except BadSignature:
        return None
    if not isinstance(device_id, str) or not DEVICE_ID.fullmatch(device_id):
        return None
    from web.db import get_db
    return get_db().execute("SELECT id, revoked_at, last_seen FROM devices WHERE id = ?", [device_id]).fetchone()


def device_of(token: str | None) -> str | None:
    """The device a cookie's token names, if it is signed for this code and not revoked; else None.

    A token cannot be guessed (it is signed with the server's secret), so a bad one is
    no wrong code: it is not counted, only cleared.
    """
    row = device_row(token)
    if row is None or row[1]:
        return None
    device_id = str(row[0])
    stamp = _now()
    if row[2][:15] != stamp[:15]:  # seen again after ten minutes or more: note it (at most one write then)
        from web.db import get_db, write
        db = get_db()
        try:
            with write(db):
                db.execute("UPDATE devices SET last_seen = ? WHERE id = ?", [stamp, device_id])
        except sqlite3.OperationalError as error:  # a full disk: the device is in all the same
            log.warning("device %s was seen, but that could not be noted (%s)", device_id, error)
    return device_id


def list_devices(*, shut_out: bool = False) -> list[dict[str, Any]]:
    """The devices let in with the code (or, ``shut_out``, those shut out), newest first; ``this`` marks the asking one."""
    from web.db import get_db
    current = g.get("device")
    state = "revoked_at IS NOT NULL" if shut_out else "revoked_at IS NULL"
    return [{"id": r[0], "label": r[1], "address": r[2], "created_at": r[3], "last_seen": r[4], "this": r[0] == current}
            for r in get_db().execute("SELECT id, label, address, created_at, last_seen FROM devices "
                                      f"WHERE {state} ORDER BY created_at DESC, id").fetchall()]


def set_device_revoked(device_id: str, revoked: bool) -> None:
    """Shut one device out (its cookie stops working, and the code alone does not bring it back), or let a
    device shut out in again (its cookie works again). :class:`NotFound` when there is no such device to change."""
    from web.db import get_db, write
    db = get_db()
    with write(db):
        found = db.execute(f"UPDATE devices SET revoked_at = ? WHERE id = ? AND revoked_at IS {'' if revoked else 'NOT '}NULL",
                           [_now() if revoked else None,
                            device_id if DEVICE_ID.fullmatch(device_id or "") else ""]).rowcount
    if not found:
        raise NotFound(_("no such device: it may have been removed already") if revoked
                       else _("no such device shut out: it may have been let in already"))
    log.info("device %s was %s by %s", device_id, "shut out" if revoked else "let in again", client_address())


def revoke_device(device_id: str) -> None:
    """Shut one device out: its cookie stops working, and the code does not let it back in (see :func:`issue_device`)."""
    set_device_revoked(device_id, True)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


# --- who may use the server -----------------------------------------------------------------------

def credential() -> str | None:
    """How this request proved it may use the server: ``device`` (a valid cookie), ``header``
    (``X-Table-Code``), ``cookie`` (a cookie from before devices that holds the code), or None.

    A valid device cookie is checked first and is never throttled: a blocked address
    (a foreign page spent its tries) does not shut out a phone that is already in.
    """
    if not code_required():
        return None
    if "credential" not in g:
        g.credential = None
        cookie = request.cookies.get(TABLE_CODE_COOKIE)
        header = request.headers.get(TABLE_CODE_HEADER)
        device = device_of(cookie)
        if device:
            g.credential, g.device = "device", device
        elif header:
            g.credential = "header" if is_table_code(header) else None
        elif cookie and LEGACY_COOKIE.fullmatch(cookie) and is_table_code(cookie):
            g.credential = "cookie"
    return cast("str | None", g.credential)


def supplied_code() -> str | None:
    """The code this request carries: the header, else the cookie (None when neither)."""
    return request.headers.get(TABLE_CODE_HEADER) or request.cookies.get(TABLE_CODE_COOKIE) or None


def table_code_ok() -> bool:
    """Does this request carry the table code or a device's cookie (or need neither)? Decided once per request.

    It never raises twice: once a request was refused (429), the error page asks here
    again and gets False.
    """
    if not code_required():
        return True
    if "table_code_ok" not in g:
        g.table_code_ok = False
        g.table_code_ok = credential() is not None
    return bool(g.table_code_ok)


def code_exempt(view: View) -> View:
    """Open a view to everyone without the code: only the page where the code is entered."""
    setattr(view, "table_code_exempt", True)
    return view


def is_open() -> bool:
    """Static files and the code page need no code."""
    view = current_app.view_functions.get(request.endpoint or "")
    return request.endpoint == "static" or getattr(view, "table_code_exempt", False)


def answers_json() -> bool:
    return wants_json() or request.blueprint in JSON_BLUEPRINTS


def set_code_cookie(response: BaseResponse, code: str | None = None) -> BaseResponse:
    """Let the asking device in from now on: the cookie gets a new device's signed token (never the code)."""
    response.set_cookie(TABLE_CODE_COOKIE, issue_device(), max_age=TABLE_CODE_MAX_AGE, httponly=True,
                        samesite="Lax")
    return response


def from_another_site() -> bool:
    """Does the browser say another site made this request (``Sec-Fetch-Site``)?"""
    return request.headers.get("Sec-Fetch-Site", "").lower() in ("cross-site", "same-site")


def link_may_enter() -> bool:
    """May ``?table_code=`` be tried on this request? Only where a person opens a page of tiplu.

    Not on static files, photos or the API (an ``<img>`` there is no one typing a code),
    not for a request that names what it accepts without HTML (an image, a script's
    ``fetch``) or a destination other than the page itself (``Sec-Fetch-Dest``), and not
    when the browser says another site sent it: otherwise a foreign page could spend a
    phone's tries.
    """
    accepted = [value for value, _quality in request.accept_mimetypes]
    html = not accepted or "text/html" in accepted
    # a navigation says "document"; one a tool drives (DevTools, Playwright) says "empty" but still asks for HTML
    document = request.headers.get("Sec-Fetch-Dest", "document").lower() in ("document", "empty")
    return request.blueprint == "views" and html and document and not from_another_site()


def enter_by_link() -> ResponseReturnValue | None:
    """``?table_code=...`` (the printed link or QR): right, the cookie is set and the address loses the code.

    A device already in is sent on without the code being compared (nothing is
    counted); where :func:`link_may_enter` says no, the code is not looked at at all.
    """
    code = request.args.get(TABLE_CODE_PARAM, "")
    rest = {k: v for k, v in request.args.items(multi=True) if k != TABLE_CODE_PARAM}
    target = request.path + (f"?{urlencode(rest)}" if rest else "")
    if device_of(request.cookies.get(TABLE_CODE_COOKIE)):
        return redirect(target)
    if not link_may_enter():
        return None
    g.table_code_ok = False
    if is_table_code(code):
        g.table_code_ok = True
        return set_code_cookie(redirect(target), code.strip())
    return redirect(url_for("views.table_code", next=target))


def require_table_code() -> ResponseReturnValue | None:
    """Before each request: when the app has a code, no request but the code page and static files goes without it.

    API and JSON routes answer 403; pages lead to the code page. A cookie that lets
    nobody in (an old code) is cleared so a phone is asked again; a shut-out device's
    is kept, so the code alone does not bring it back.
    """
    if not code_required():
        return None
    if TABLE_CODE_PARAM in request.args and request.method in SAFE_METHODS:
        entered = enter_by_link()
        if entered is not None:
            return entered
    if is_open() or table_code_ok():
        return None
    answer: BaseResponse
    if answers_json():
        answer = make_response(error_response(
            _("this server needs the table code: send it in the %(header)s header, or enter it on the code page "
              "(it is printed where tiplu serve runs)", header=TABLE_CODE_HEADER), 403, as_json=True))
    else:
        back = request.full_path.rstrip("?") if request.method in SAFE_METHODS else (request.referrer or request.path)
        answer = redirect(url_for("views.table_code", next=safe_next(back)))
    cookie = request.cookies.get(TABLE_CODE_COOKIE)
    if cookie and not shut_out(cookie):
        answer.delete_cookie(TABLE_CODE_COOKIE)
    return answer


def shut_out(token: str) -> bool:
    """Does the cookie name a device that was shut out? It is kept then: it is what keeps that browser out."""
    row = device_row(token)
    return row is not None and bool(row[1])


def upgrade_cookie(response: Response) -> Response:
    """After a request let in by a cookie that holds the code itself: give that device a token instead."""
    if g.get("credential") == "cookie" and response.status_code < 400:
        set_code_cookie(response)
    return response


# --- names and writes from other sites ------------------------------------------------------------

def host_name(host: str) -> str:
    """The name or address in a ``Host`` header, without port or brackets, lower case.

    >>> [host_name(h) for h in ("Tiplu.local:8000", "[::1]:8000", "192.168.1.5", "pi.")]
    ['tiplu.local', '::1', '192.168.1.5', 'pi']
    """
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rsplit(":", 1)[0].rstrip(".") if host.count(":") <= 1 else host


@functools.lru_cache(maxsize=1)
def machine_names() -> frozenset[str]:
    """This machine's own names: ``localhost``, its host name and fully qualified name, and ``<name>.local``."""
    names = {"localhost"}
    for name in (socket.gethostname(), socket.getfqdn()):
        name = name.strip().lower().rstrip(".")
        if name:
            names.update({name, f"{name.split('.')[0]}.local"})
    return frozenset(names)


def allowed_host(host: str, extra: Sequence[str] = ()) -> bool:
    """Is ``host`` a name this server answers to? Addresses always are; names must be this machine's own.

    A DNS-rebinding page reaches tiplu under its *own* name (``Host: rebind.attacker.example``),
    never under an address: so any IP address passes, and of names only ``localhost``
    (and ``*.localhost``), this machine's names and those in ``ALLOWED_HOSTS``.

    >>> [allowed_host(h) for h in ("127.0.0.1:8000", "[::1]:80", "10.0.0.7", "localhost:8000", "rebind.example:8000")]
    [True, True, True, True, False]
    >>> allowed_host("tiplu.example.org", ["tiplu.example.org"])
    True
    """
    name = host_name(host)
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return True
    wanted = {h.strip().lower().rstrip(".") for h in extra if h.strip()}
    return (name in wanted or "*" in wanted or name in machine_names() or name == "localhost"
            or name.endswith(".localhost"))


def verify_host() -> None:
    """Before each request: refuse a ``Host`` that is not this machine's (a DNS-rebinding page)."""
    extra = current_app.config.get("ALLOWED_HOSTS") or ()
    if isinstance(extra, str):
        extra = extra.split(",")
    if not allowed_host(request.host, list(extra)):
        raise Forbidden(_("this server does not answer to the name %(host)s: open it by its address, or add the name "
                          "to TIPLU_ALLOWED_HOSTS", host=host_name(request.host)[:100]))


def same_origin(origin: str) -> bool:
    """Does an ``Origin`` header name this very server (host and port as the request reached it)?"""
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()


def verify_same_origin() -> None:
    """Before each write: refuse what another site's page sends (its ``Origin`` or ``Sec-Fetch-Site``).

    A write to the API that only a cookie lets in must also show it came from a page
    of tiplu (``Origin`` or ``Sec-Fetch-Site``), since the API takes no CSRF token,
    unless its body is JSON (no other site can send ``application/json`` without asking
    first): an empty or a multipart body is what a foreign form sends. Programs send
    ``X-Table-Code``.
    """
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if origin is not None and not same_origin(origin):
        raise Forbidden(_("this request came from another site (%(origin)s); open tiplu's own page to make changes",
                          origin=origin))
    if from_another_site():
        raise Forbidden(_("this request came from another site; open tiplu's own page to make changes"))


def verify_cookie_write() -> None:
    """After the body's type is checked: an API write that only the cookie lets in shows where it came from.

    See :func:`verify_same_origin`: ``Origin``, ``Sec-Fetch-Site``, ``X-Table-Code`` or a JSON body.
    """
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if (request.blueprint == "api" and g.get("credential") in ("device", "cookie") and origin is None
            and "Sec-Fetch-Site" not in request.headers and TABLE_CODE_HEADER not in request.headers
            and request.mimetype != "application/json"):
        raise Forbidden(_("a write to the API with only the cookie must come from tiplu's own page; "
                          "programs send the table code in the %(header)s header", header=TABLE_CODE_HEADER))


def takes_upload(view: View) -> View:
    """Mark an API write whose body is a multipart upload, not JSON."""
    setattr(view, "takes_upload", True)
    return view


def verify_json_body() -> None:
    """Before each API write: a body must be declared ``application/json`` (415 otherwise)."""
    if request.method in SAFE_METHODS or request.blueprint != "api":
        return
    has_body = bool(request.content_length) or request.headers.get("Transfer-Encoding", "").lower() == "chunked"
    view = current_app.view_functions.get(request.endpoint or "")
    if not has_body or getattr(view, "takes_upload", False) or request.mimetype == "application/json":
        return
    raise UnsupportedMediaType(_("send the body as JSON with the header Content-Type: application/json "
                                 "(not %(type)s)", type=request.mimetype or "no type"))


def guard_request() -> ResponseReturnValue | None:
    """Before each request: the Host name, the table code, then same-origin writes, then JSON bodies for the API."""
    verify_host()
    answer = require_table_code()
    if answer is not None:
        return answer
    verify_same_origin()
    verify_json_body()
    verify_cookie_write()
    return None


# --- redirects and headers ------------------------------------------------------------------------

def safe_next(target: str | None) -> str:
    """Where to go after the code page: a path on this site, never another site.

    Browsers read ``\\`` as ``/`` and drop tabs and newlines in addresses, so
    ``/\\evil.example`` would be ``//evil.example``: such targets go home.

    >>> from flask import Flask
    >>> with Flask(__name__).test_request_context():
    ...     [safe_next(t) for t in ("/sessions/1?x=2", "/\\\\evil.example", "//evil.example", "/\\t/evil.example")]
    ['/sessions/1?x=2', '/', '/', '/']
    """
    if not target or "\\" in target or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in target):
        return "/"
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        if parts.scheme not in ("http", "https") or parts.netloc != request.host:
            return "/"
        target = parts.path + (f"?{parts.query}" if parts.query else "")
    return target if target.startswith("/") and not target.startswith("//") else "/"


#: The headers on every answer, the app's and those waitress gives itself (:mod:`web.serve`).
SECURITY_HEADERS = (("Content-Security-Policy", CONTENT_SECURITY_POLICY), ("X-Content-Type-Options", "nosniff"),
                    ("Referrer-Policy", "same-origin"))


def security_headers(response: Response) -> Response:
    """A strict content security policy: the pages run only their own scripts."""
    for name, value in SECURITY_HEADERS:
        response.headers.setdefault(name, value)
    return response


def trust_proxy(app: Flask, hops: int) -> None:
    """Behind ``hops`` reverse proxies, take the client's address, host and scheme from their headers.

    Only for a server that listens on loopback behind the proxy: otherwise a client
    could claim any address in ``X-Forwarded-For`` and dodge the throttling.
    """
    if hops > 0:
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops)  # type: ignore[method-assign]


def init_app(app: Flask) -> None:
    """CSRF on every form, the request guards, the code throttle, and the security headers on every answer."""
    csrf.init_app(app)
    app.extensions["tiplu_code_throttle"] = CodeThrottle(
        free_tries=int(app.config.get("CODE_FREE_TRIES", 5)), first_wait=float(app.config.get("CODE_FIRST_WAIT", 1.0)))
    app.extensions["tiplu_wrong_guesses"] = WrongGuesses(str(app.secret_key).encode())
    app.extensions["tiplu_guess_budget"] = GuessBudget(
        size=int(app.config.get("CODE_GUESS_BUDGET") or GUESS_BUDGET),
        refill_seconds=float(app.config.get("CODE_GUESS_REFILL_SECONDS") or GUESS_REFILL_SECONDS))
    trust_proxy(app, int(app.config.get("PROXY_HOPS") or 0))
    app.before_request(guard_request)
    app.after_request(upgrade_cookie)
    app.after_request(security_headers)
