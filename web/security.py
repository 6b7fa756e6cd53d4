"""Who may use the server: the table code, its throttling, same-origin writes, CSRF and safe redirects.

The rule follows where ``tiplu serve`` listens. Bound to loopback only, nobody
else can reach it and no code is asked. Bound to anything else, the app gets a
``TABLE_CODE`` and *every* request needs it, from any address including
127.0.0.1 (behind a reverse proxy every client looks local): pages, API, photos,
reads and writes. Only the code page and static files are open. The code comes
as the ``X-Table-Code`` header (programs), the cookie the code page sets
(phones), or once as ``?table_code=`` in the link ``tiplu serve`` prints.
Wrong codes are counted per address (:mod:`web.throttle`): after a few, that
address gets 429 with ``Retry-After`` and waits that double.

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

import hmac
import logging
import secrets
from typing import Any, Callable, TypeVar
from urllib.parse import urlencode, urlsplit

from flask import Flask, Response, current_app, g, make_response, redirect, request, url_for
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFProtect
from werkzeug.middleware.proxy_fix import ProxyFix
from werkzeug.wrappers import Response as BaseResponse

from web.errors import Forbidden, TooManyAttempts, UnsupportedMediaType, error_response, wants_json
from web.i18n import _
from web.throttle import CodeThrottle

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


def client_address() -> str:
    return request.remote_addr or "unknown"


def is_table_code(supplied: str) -> bool:
    """Is ``supplied`` this server's table code? Counted against the asking address.

    A blocked address gets :class:`~web.errors.TooManyAttempts` before its code is
    even compared (in constant time); a wrong code is logged and counted, a right
    one clears the count.
    """
    code = str(current_app.config.get("TABLE_CODE") or "")
    if not code:
        return False
    address = client_address()
    wait = throttle().wait_left(address)
    if wait:
        raise TooManyAttempts(_("too many wrong table codes from this device: try again in %(s)s seconds",
                                s=wait), retry_after=wait)
    if hmac.compare_digest(supplied.strip().encode(), code.encode()):
        if throttle().failures(address):
            log.info("table code accepted from %s after wrong ones", address)
        throttle().succeeded(address)
        return True
    wait = throttle().failed(address)
    log.warning("wrong table code from %s (%d wrong; next try %s)", address, throttle().failures(address),
                f"in {wait} s" if wait else "free")
    return False


def supplied_code() -> str | None:
    """The code this request carries: the header, else the cookie (None when neither)."""
    return request.headers.get(TABLE_CODE_HEADER) or request.cookies.get(TABLE_CODE_COOKIE) or None


def table_code_ok() -> bool:
    """Does this request carry the table code (or need none)? Decided once per request."""
    if not code_required():
        return True
    if "table_code_ok" not in g:
        g.table_code_ok = False
        code = supplied_code()
        g.table_code_ok = code is not None and is_table_code(code)
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


def set_code_cookie(response: BaseResponse, code: str) -> BaseResponse:
    response.set_cookie(TABLE_CODE_COOKIE, code, max_age=TABLE_CODE_MAX_AGE, httponly=True, samesite="Lax")
    return response


def enter_by_link() -> ResponseReturnValue:
    """``?table_code=...`` (the printed link or QR): right, the cookie is set and the address loses the code."""
    code = request.args.get(TABLE_CODE_PARAM, "")
    rest = {k: v for k, v in request.args.items(multi=True) if k != TABLE_CODE_PARAM}
    target = request.path + (f"?{urlencode(rest)}" if rest else "")
    if is_table_code(code):
        return set_code_cookie(redirect(target), code.strip())
    return redirect(url_for("views.table_code", next=target))


def require_table_code() -> ResponseReturnValue | None:
    """Before each request: when the app has a code, no request but the code page and static files goes without it.

    API and JSON routes answer 403; pages lead to the code page. A wrong cookie (an
    old code) is cleared so a phone is asked again instead of counting as a guess.
    """
    if not code_required():
        return None
    if TABLE_CODE_PARAM in request.args and request.method in SAFE_METHODS:
        return enter_by_link()
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
    if request.cookies.get(TABLE_CODE_COOKIE):
        answer.delete_cookie(TABLE_CODE_COOKIE)
    return answer


# --- writes from other sites ----------------------------------------------------------------------

def same_origin(origin: str) -> bool:
    """Does an ``Origin`` header name this very server (host and port as the request reached it)?"""
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == request.host.lower()


def verify_same_origin() -> None:
    """Before each write: refuse what another site's page sends (its ``Origin`` or ``Sec-Fetch-Site``)."""
    if request.method in SAFE_METHODS:
        return
    origin = request.headers.get("Origin")
    if origin is not None and not same_origin(origin):
        raise Forbidden(_("this request came from another site (%(origin)s); open tiplu's own page to make changes",
                          origin=origin))
    if request.headers.get("Sec-Fetch-Site", "").lower() in ("cross-site", "same-site"):
        raise Forbidden(_("this request came from another site; open tiplu's own page to make changes"))


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
    """Before each request: the table code, then same-origin writes, then JSON bodies for the API."""
    answer = require_table_code()
    if answer is not None:
        return answer
    verify_same_origin()
    verify_json_body()
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


def security_headers(response: Response) -> Response:
    """A strict content security policy: the pages run only their own scripts."""
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
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
    trust_proxy(app, int(app.config.get("PROXY_HOPS") or 0))
    app.before_request(guard_request)
    app.after_request(security_headers)
