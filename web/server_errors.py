"""Errors that waitress answers itself, before the app sees the request, as JSON for the API.

Why: waitress reads a whole request body before calling the app, and refuses one
over its ``max_request_body_size`` (or with broken headers) on its own, in plain
text. A script talking to ``/api/`` must get ``{"error": ...}`` there too, like
every other answer of the API.

>>> json_error_body("/api/sessions", 413, "Request Entity Too Large", 17 * 1024 * 1024)
b'{"error": "the request is too large (at most 17 MB)"}'
>>> json_error_body("/sessions/1", 413, "Request Entity Too Large", 0) is None
True
"""

from __future__ import annotations

import json
from typing import Any

from waitress.channel import HTTPChannel
from waitress.task import ErrorTask

MEGABYTE = 1024 * 1024


def json_error_body(path: str, code: int, reason: str, max_bytes: int) -> bytes | None:
    """The JSON body for an error waitress raised on ``path`` (None off the API: keep waitress's text)."""
    if not path.startswith("/api/"):
        return None
    message = (f"the request is too large (at most {max_bytes // MEGABYTE} MB)" if code == 413
               else f"the request could not be read ({reason.lower()}); check its headers")
    return json.dumps({"error": message}).encode()


class JsonErrorTask(ErrorTask):  # type: ignore[misc]
    """waitress's error answer, as JSON on API paths, and never an exception of its own.

    A request line waitress cannot parse (``get / HTTP/1.1``, a NUL in a header) leaves
    the request without a ``path``: it gets waitress's plain 400, and the connection
    is closed after it. An error raised here would send nothing and keep the socket
    open for good (waitress's own fallback names ``request.path`` too).
    """

    def execute(self) -> None:
        error: Any = self.request.error
        path = getattr(self.request, "path", None)
        body = json_error_body(path if isinstance(path, str) else "", error.code, error.reason,
                               self.channel.server.adj.max_request_body_size - MEGABYTE)
        if body is None:
            super().execute()
            return
        self.status = f"{error.code} {error.reason}"
        self.response_headers.append(("Content-Type", "application/json"))
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)


class JsonErrorChannel(HTTPChannel):  # type: ignore[misc]
    """A waitress channel whose own errors answer :class:`JsonErrorTask`."""

    error_task_class = JsonErrorTask
