"""Who may write: the loopback check, the table code, CSRF, and the guards that apply them.

Every write is guarded twice: forms carry a CSRF token (Flask-WTF) and, when the
server listens on the network, a write must also carry the *table code* printed at
start (a cookie set on the code page, or the ``X-Table-Code`` header for the API).
Requests from the machine itself need no code. A route that takes a POST but never
writes says so with :func:`code_exempt`; a route that shows a table's private
things (its photos, the camera) only to those who may write there says so with
:func:`table_code_required`.

>>> is_loopback("127.0.0.1"), is_loopback("::ffff:127.0.0.1"), is_loopback("192.168.1.5")
(True, True, False)
"""

from __future__ import annotations

import functools
import hmac
import ipaddress
from typing import Any, Callable, TypeVar, cast

from flask import Flask, Response, current_app, redirect, request, url_for
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFProtect

from web.errors import Forbidden, error_response, is_api_request, json_error
from web.i18n import _

TABLE_CODE_COOKIE = "tiplu_table_code"
TABLE_CODE_HEADER = "X-Table-Code"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
CONTENT_SECURITY_POLICY = ("default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
                           "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'")

csrf = CSRFProtect()

View = TypeVar("View", bound=Callable[..., Any])


def is_loopback(address: str | None) -> bool:
    """True for 127.0.0.0/8, ::1 and IPv4-mapped loopback addresses."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return address == "localhost"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def is_table_code(supplied: str) -> bool:
    """Is ``supplied`` this server's table code? (False when it has none; compared in constant time.)"""
    code = current_app.config.get("TABLE_CODE")
    return bool(code) and hmac.compare_digest(supplied.strip().encode(), str(code).encode())


def table_code_ok() -> bool:
    """Does this request carry the table code (or need none)?"""
    if not current_app.config.get("TABLE_CODE") or is_loopback(request.remote_addr):
        return True
    return is_table_code(request.headers.get(TABLE_CODE_HEADER) or request.cookies.get(TABLE_CODE_COOKIE) or "")


def code_exempt(view: View) -> View:
    """Let a view take a POST without the table code: it never writes, or it is where the code is entered."""
    setattr(view, "table_code_exempt", True)
    return view


def table_code_required(message: str) -> Callable[[View], View]:
    """Show what the view answers only to those who may write at this table; others get a JSON 403.

    ``message`` is the English text; it is translated for each request.
    """
    def decorate(view: View) -> View:
        @functools.wraps(view)
        def guarded(*args: Any, **kwargs: Any) -> Any:
            if not table_code_ok():
                return json_error(Forbidden(_(message)))
            return view(*args, **kwargs)
        return cast(View, guarded)
    return decorate


def require_table_code() -> ResponseReturnValue | None:
    """Before each request: a write from the network needs the table code (API: 403, pages: the code page)."""
    view = current_app.view_functions.get(request.endpoint or "")
    if request.method in SAFE_METHODS or getattr(view, "table_code_exempt", False) or table_code_ok():
        return None
    if is_api_request():
        return error_response(_("this server needs the table code: send it in the %(header)s header "
                                "(it is printed where tiplu serve runs)", header=TABLE_CODE_HEADER), 403)
    return redirect(url_for("views.table_code", next=request.referrer or request.path))


def security_headers(response: Response) -> Response:
    """A strict content security policy: the pages run only their own scripts."""
    response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


def init_app(app: Flask) -> None:
    """CSRF on every form, then the table-code guard, and the security headers on every answer."""
    csrf.init_app(app)
    app.before_request(require_table_code)
    app.after_request(security_headers)
