"""Errors a request can cause, each with its HTTP status, and the one place they become a response.

Raise :class:`BadRequest`, :class:`NotFound` or :class:`Conflict` (or another
:class:`HttpError`) anywhere in the web layer; a :class:`scorer.TipluError` is bad
input too and answers 400. :func:`answer_error` is the app's only error handler:
the API and anyone asking for JSON get ``{"error": "what to fix"}``, people get a
page with the same message, in the request's language (a scorer error through
:func:`web.i18n.translate`, like the web layer's own texts). Unexpected failures
answer 500 and are logged, never shown.

>>> NotFound("no such session").status
404
>>> status_of(TipluError("bad card")), status_of(KeyReused("used"))
(400, 409)
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
import sqlite3
from typing import Any, ClassVar, Mapping

from flask import Flask, current_app, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import NotFound as RoutingNotFound

from scorer import TipluError
from web.i18n import _, translate

MEGABYTE = 1024 * 1024

log = logging.getLogger(__name__)


class HttpError(Exception):
    """An error a request caused; ``status`` is the HTTP status it answers with.

    ``details`` go into the JSON answer beside ``error`` (the current state of what
    the request was about); ``retry_after`` (seconds) becomes the ``Retry-After`` header.

    >>> Gone("that round was deleted", details={"rounds": 2}).details
    {'rounds': 2}
    """

    status: ClassVar[int] = 400

    def __init__(self, message: str, *, details: Mapping[str, Any] | None = None,
                 retry_after: int | None = None) -> None:
        super().__init__(message)
        self.details = dict(details or {})
        self.retry_after = retry_after


class BadRequest(HttpError):
    """Input that cannot be used as given (400); the message says what to fix."""

    status = 400


class Forbidden(HttpError):
    """A request this machine may not make without the table code (403)."""

    status = 403


class NotFound(HttpError):
    """An unknown session, round or photo (404)."""

    status = 404


class Conflict(HttpError):
    """A change the session's state forbids, e.g. new rules after the first round (409)."""

    status = 409


class KeyReused(Conflict):
    """An ``Idempotency-Key`` (or a form's submission token) already used for a different round."""


class RoundChanged(Conflict):
    """A replayed ``Idempotency-Key`` whose round was edited since; ``details`` hold the round as it is now."""


class StaleRound(Conflict):
    """An edit or a delete of a round read at another version than it now has (another phone changed or
    deleted it since); ``details`` hold the round as it is now (``round``, None when it is gone) and its
    ``version``."""


class PreconditionRequired(HttpError):
    """An edit or a delete of a round through the API without ``If-Match`` (428)."""

    status = 428


class Gone(HttpError):
    """Something that existed and was deleted, e.g. the round a replayed ``Idempotency-Key`` made (410)."""

    status = 410


class UnsupportedMediaType(HttpError):
    """A write to the API whose body is not ``application/json`` (415)."""

    status = 415


class TooManyAttempts(HttpError):
    """Too many wrong table codes from one address; ``retry_after`` says when to try again (429)."""

    status = 429


class Unavailable(HttpError):
    """A device the request needs (the server's camera) gave nothing, or the server is busy with photos (503)."""

    status = 503


class InsufficientStorage(HttpError):
    """The photos folder holds as much as it may; nothing more is kept until room is made (507)."""

    status = 507


class NotFoundInPath(RoutingNotFound):
    """A URL part that names nothing (``/sessions/abc``), raised while routing; answered with its message."""


#: What a form shows back to the person, or a JSON route answers: both are input to fix.
USER_ERRORS: tuple[type[Exception], ...] = (HttpError, TipluError)


def status_of(error: Exception) -> int:
    """The HTTP status of an error from :data:`USER_ERRORS`: its own, else 400 for a scorer error."""
    return error.status if isinstance(error, HttpError) else 400


def is_api_request() -> bool:
    return request.path.startswith("/api/")


def wants_json() -> bool:
    """The API, and any client that prefers JSON, gets errors as JSON."""
    return is_api_request() or request.accept_mimetypes.best == "application/json"


def error_response(message: str, status: int, *, as_json: bool | None = None,
                   details: Mapping[str, Any] | None = None, retry_after: int | None = None) -> ResponseReturnValue:
    """JSON ``{"error": ..., **details}`` for the API (or when ``as_json``), a plain page for people."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    if as_json if as_json is not None else wants_json():
        response = jsonify({"error": message, **(details or {})})
        response.status_code = status
        response.headers.update(headers)
        return response
    return render_template("error.html", message=message, status=status), status, headers


def user_error_response(error: Exception, *, as_json: bool | None = None) -> ResponseReturnValue:
    """A :data:`USER_ERRORS` error as its answer: status, message, details and ``Retry-After``."""
    if isinstance(error, HttpError):
        return error_response(str(error), error.status, as_json=as_json, details=error.details,
                              retry_after=error.retry_after)
    return error_response(translate(error), status_of(error), as_json=as_json)


def json_error(error: Exception) -> ResponseReturnValue:
    """A :data:`USER_ERRORS` error as JSON, whoever asks: for routes that the pages' scripts call."""
    return user_error_response(error, as_json=True)


def _http_message(error: HTTPException) -> str:
    if isinstance(error, NotFoundInPath):
        return str(error.description)
    messages = {
        404: _("not found: check the address"),
        405: _("method %(method)s is not allowed here", method=request.method),
        413: _("the request is too large (at most %(mb)s MB)",
               mb=(current_app.config.get("MAX_CONTENT_LENGTH") or 0) // MEGABYTE),
    }
    return messages.get(error.code or 500, error.description or error.name)


#: Free bytes under which an I/O error of the ledger is taken for a full disk.
NEARLY_FULL = 1024 * 1024


def free_bytes(path: str | os.PathLike[str]) -> int | None:
    """Free bytes on the file system that holds ``path`` (or its nearest existing folder); None if unknown.

    >>> free_bytes("/") > 0
    True
    """
    folder = os.path.abspath(os.fspath(path))
    while folder and not os.path.exists(folder):
        folder = os.path.dirname(folder)
    try:
        return shutil.disk_usage(folder or "/").free
    except OSError:
        return None


def is_disk_full(error: BaseException, ledger: str | None = None) -> bool:
    """Did ``error`` happen because the disk is full? ``ENOSPC``, SQLite's "database or disk is full", or an
    I/O error of SQLite while the ledger's disk has less than :data:`NEARLY_FULL` left.

    >>> is_disk_full(OSError(errno.ENOSPC, "No space left on device")), is_disk_full(ValueError("x"))
    (True, False)
    """
    if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    if not isinstance(error, sqlite3.OperationalError):
        return False
    if getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(error):
        return True
    left = free_bytes(ledger) if ledger and "I/O error" in str(error) else None
    return left is not None and left < NEARLY_FULL


#: Posted fields a stale form does not send again: its old token (a fresh one is sent instead).
STALE_FORM_DROPPED = frozenset({"csrf_token"})


def stale_form_response() -> ResponseReturnValue:
    """A form whose CSRF token no longer holds (open too long, the server restarted): nothing is lost.

    A person gets the values they typed back, in hidden fields under a fresh token, and
    one button that sends them again to the same address; a script gets JSON, as before.
    A file upload cannot be kept that way, so that form is asked again instead.
    """
    message = _("Nothing was saved yet: this page was open a long time, or the server restarted.")
    if wants_json() or request.method != "POST" or request.files:
        return error_response(_("%(message)s Reload the page and try again.", message=message), 400)
    fields = [(key, value) for key, value in request.form.items(multi=True) if key not in STALE_FORM_DROPPED]
    action = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
    return render_template("resend.html", message=message, fields=fields, action=action), 400


def answer_error(error: Exception) -> ResponseReturnValue:
    """Every error a request raises becomes its response here, and only here."""
    if isinstance(error, USER_ERRORS):
        return user_error_response(error)
    if is_disk_full(error, current_app.config.get("DATABASE")):
        log.error("the disk is full: %s %s was refused (%s)", request.method, request.path, error)
        return error_response(_("the server's disk is full, so nothing was saved; reading the ledger still works. "
                                "Free some space on the machine that runs tiplu, then try again"), 507)
    if isinstance(error, CSRFError):
        return stale_form_response()
    if isinstance(error, HTTPException):
        return error_response(_http_message(error), error.code or 500)
    log.exception("unexpected error on %s %s", request.method, request.path)
    return error_response(_("something went wrong on the server; nothing was saved. "
                            "Try again, and report it if it happens again"), 500)


def init_app(app: Flask) -> None:
    """Answer every error of ``app`` with :func:`answer_error`."""
    app.register_error_handler(Exception, answer_error)
