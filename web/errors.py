"""Errors a request can cause, each with its HTTP status, and the one place they become a response.

Raise :class:`BadRequest`, :class:`NotFound` or :class:`Conflict` (or another
:class:`HttpError`) anywhere in the web layer; a :class:`scorer.TipluError` is bad
input too and answers 400. :func:`answer_error` is the app's only error handler:
the API and anyone asking for JSON get ``{"error": "what to fix"}``, people get a
page with the same message. Unexpected failures answer 500 and are logged, never
shown.

>>> NotFound("session 9 does not exist").status
404
>>> status_of(TipluError("bad card")), status_of(KeyReused("used"))
(400, 409)
"""

from __future__ import annotations

import logging
from typing import ClassVar

from flask import Flask, current_app, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException
from werkzeug.exceptions import NotFound as RoutingNotFound

from scorer import TipluError
from web.i18n import _

MEGABYTE = 1024 * 1024

log = logging.getLogger(__name__)


class HttpError(Exception):
    """An error a request caused; ``status`` is the HTTP status it answers with."""

    status: ClassVar[int] = 400


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


class Unavailable(HttpError):
    """A device the request needs (the server's camera) gave nothing (503)."""

    status = 503


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


def error_response(message: str, status: int, *, as_json: bool | None = None) -> ResponseReturnValue:
    """JSON ``{"error": ...}`` for the API (or when ``as_json``), a plain page for people."""
    if as_json if as_json is not None else wants_json():
        response = jsonify({"error": message})
        response.status_code = status
        return response
    return render_template("error.html", message=message, status=status), status


def json_error(error: Exception) -> ResponseReturnValue:
    """A :data:`USER_ERRORS` error as JSON, whoever asks: for routes that the pages' scripts call."""
    return error_response(str(error), status_of(error), as_json=True)


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


def answer_error(error: Exception) -> ResponseReturnValue:
    """Every error a request raises becomes its response here, and only here."""
    if isinstance(error, USER_ERRORS):
        return error_response(str(error), status_of(error))
    if isinstance(error, CSRFError):
        return error_response(_("the form expired or came from elsewhere (%(why)s): reload the page and try again",
                                why=error.description), 400)
    if isinstance(error, HTTPException):
        return error_response(_http_message(error), error.code or 500)
    log.exception("unexpected error on %s %s", request.method, request.path)
    return error_response(_("something went wrong on the server; nothing was saved. "
                            "Try again, and report it if it happens again"), 500)


def init_app(app: Flask) -> None:
    """Answer every error of ``app`` with :func:`answer_error`."""
    app.register_error_handler(Exception, answer_error)
