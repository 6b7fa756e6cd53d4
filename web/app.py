"""The Flask application factory: configuration, security rules and error pages.

Why a factory: tests, ``tiplu serve`` and the demo each build their own app
with their own database file. Every write is guarded twice: forms carry a CSRF
token (Flask-WTF) and, when the server listens on the network, a write must also
carry the *table code* printed at start (a cookie set on the code page, or the
``X-Table-Code`` header for the API). Requests from the machine itself need no code.

>>> app = create_app({"DATABASE": ":memory:", "SECRET_KEY": "x"})
>>> app.test_client().get("/api/rules").status_code
200
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import secrets
import time
from pathlib import Path
from typing import Any, Mapping

from flask import Flask, Response, current_app, jsonify, redirect, render_template, request, url_for
from flask_wtf.csrf import CSRFError, CSRFProtect
from werkzeug.exceptions import HTTPException

from scorer import TipluError
from web import db
from web.i18n import _, current_language, ngettext
from web.ledger import ConflictError, NotFoundError

MEGABYTE = 1024 * 1024
DEFAULT_MAX_UPLOAD_MB = 16
TABLE_CODE_COOKIE = "tiplu_table_code"
TABLE_CODE_HEADER = "X-Table-Code"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
#: Endpoints that accept a POST but never write, or that let a phone enter the code.
CODE_EXEMPT_ENDPOINTS = frozenset({"views.table_code", "views.preview_round", "api.preview_round",
                                   "views.check_cards", "views.verify_hand"})

log = logging.getLogger(__name__)
csrf = CSRFProtect()


def _secret_key(app: Flask) -> str:
    """A key kept in the instance folder so form tokens and cookies survive a restart."""
    if os.environ.get("TIPLU_SECRET_KEY"):
        return os.environ["TIPLU_SECRET_KEY"]
    path = Path(app.instance_path) / "secret_key"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_hex(32))
    for _attempt in range(50):
        key = path.read_text().strip()
        if key:
            return key
        time.sleep(0.01)
    raise RuntimeError(f"{path} is empty: delete it and start again")


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


def is_api_request() -> bool:
    return request.path.startswith("/api/")


def table_code_ok() -> bool:
    """Does this request carry the table code (or need none)?"""
    code = current_app.config.get("TABLE_CODE")
    if not code or is_loopback(request.remote_addr):
        return True
    supplied = request.headers.get(TABLE_CODE_HEADER) or request.cookies.get(TABLE_CODE_COOKIE) or ""
    return hmac.compare_digest(supplied.strip().encode(), str(code).encode())


def error_response(message: str, status: int) -> Response | tuple[str, int]:
    """JSON ``{"error": ...}`` for the API, a plain page for people."""
    if is_api_request() or request.accept_mimetypes.best == "application/json":
        response = jsonify({"error": message})
        response.status_code = status
        return response
    return render_template("error.html", message=message, status=status), status


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app. ``test_config`` overrides settings (``DATABASE``, ``TABLE_CODE``, ...).

    ``INSTANCE_PATH`` (or ``$TIPLU_INSTANCE``) moves the instance folder, where the
    default ledger ``tiplu.db`` and the secret key live. Photos: ``PHOTO_DIR``
    (``$TIPLU_PHOTOS``, default ``photos/`` next to the ledger), ``MAX_PHOTO_PIXELS``
    (``$TIPLU_MAX_PHOTO_MP`` megapixels), ``MODEL_PATH`` (``$TIPLU_MODEL``) and
    ``CAMERA`` (``$TIPLU_CAMERA``: ``auto``, ``none`` or a device).
    """
    instance = (test_config or {}).get("INSTANCE_PATH") or os.environ.get("TIPLU_INSTANCE")
    app = Flask(__name__, instance_relative_config=True,
                instance_path=os.path.abspath(str(instance)) if instance else None)
    max_mb = int(os.environ.get("TIPLU_MAX_UPLOAD_MB", DEFAULT_MAX_UPLOAD_MB))
    app.config.from_mapping(
        DATABASE=None,
        TABLE_CODE=os.environ.get("TIPLU_TABLE_CODE") or None,
        MAX_CONTENT_LENGTH=max_mb * MEGABYTE,
        WTF_CSRF_TIME_LIMIT=None,
        SESSION_COOKIE_SAMESITE="Lax",
        SESSION_COOKIE_HTTPONLY=True,
        JSON_SORT_KEYS=False,
        CAMERA=os.environ.get("TIPLU_CAMERA") or "auto",
        MODEL_PATH=os.environ.get("TIPLU_MODEL") or None,
        PHOTO_DIR=os.environ.get("TIPLU_PHOTOS") or None,
        MAX_PHOTO_PIXELS=int(os.environ.get("TIPLU_MAX_PHOTO_MP", 40)) * 1_000_000,
    )
    if test_config:
        app.config.update(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app)
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.json.ensure_ascii = False  # type: ignore[attr-defined]

    db.init_app(app)
    csrf.init_app(app)

    from web.api import bp as api_bp
    from web.views import bp as views_bp
    csrf.exempt(api_bp)
    app.register_blueprint(api_bp)
    app.register_blueprint(views_bp)

    app.jinja_env.globals.update(_=_, ngettext=ngettext, current_language=current_language)
    app.jinja_env.policies["json.dumps_kwargs"] = {"sort_keys": False, "ensure_ascii": False}

    @app.before_request
    def require_table_code() -> Any:
        if request.method in SAFE_METHODS or request.endpoint in CODE_EXEMPT_ENDPOINTS:
            return None
        if table_code_ok():
            return None
        if is_api_request():
            return error_response(_("this server needs the table code: send it in the %(header)s header "
                                    "(it is printed where tiplu serve runs)", header=TABLE_CODE_HEADER), 403)
        return redirect(url_for("views.table_code", next=request.referrer or request.path))

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; img-src 'self' data: blob:; style-src 'self'; script-src 'self'; "
            "object-src 'none'; base-uri 'self'; frame-ancestors 'none'; form-action 'self'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        return response

    @app.errorhandler(TipluError)
    def tiplu_error(error: TipluError) -> Any:
        status = 404 if isinstance(error, NotFoundError) else 409 if isinstance(error, ConflictError) else 400
        return error_response(str(error), status)

    @app.errorhandler(CSRFError)
    def csrf_error(error: CSRFError) -> Any:
        return error_response(_("the form expired or came from elsewhere (%(why)s): reload the page and try again",
                                why=error.description), 400)

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException) -> Any:
        messages = {
            404: _("not found: check the address"),
            405: _("method %(method)s is not allowed here", method=request.method),
            413: _("the request is too large (at most %(mb)s MB)",
                   mb=(app.config.get("MAX_CONTENT_LENGTH") or 0) // MEGABYTE),
        }
        return error_response(messages.get(error.code or 500, error.description or error.name), error.code or 500)

    @app.errorhandler(Exception)
    def unexpected(error: Exception) -> Any:
        log.exception("unexpected error on %s %s", request.method, request.path)
        return error_response(_("something went wrong on the server; nothing was saved. "
                                "Try again, and report it if it happens again"), 500)

    return app
