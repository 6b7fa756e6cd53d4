"""The Flask application factory: the settings, then each module plugs in its own part.

Why a factory: tests, ``tiplu serve`` and the demo each build their own app
with their own database file. Who may write is decided in :mod:`web.security`,
how errors answer in :mod:`web.errors`, the ledger file is :mod:`web.db`'s; the
pages live in :mod:`web.views` and every JSON route in :mod:`web.api`.

>>> app = create_app({"DATABASE": ":memory:", "SECRET_KEY": "x"})
>>> app.test_client().get("/api/rules").status_code
200
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any, Mapping

from flask import Flask
from flask.json.provider import DefaultJSONProvider

from web import api, db, errors, i18n, payloads, security, views
from web.errors import MEGABYTE

DEFAULT_MAX_UPLOAD_MB = 16


class TipluJSON(DefaultJSONProvider):
    """JSON as the API documents it: keys in the order the code builds them, text as UTF-8."""

    sort_keys = False
    ensure_ascii = False


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


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app. ``test_config`` overrides settings (``DATABASE``, ``TABLE_CODE``, ...).

    ``INSTANCE_PATH`` (or ``$TIPLU_INSTANCE``) moves the instance folder, where the
    default ledger ``tiplu.db`` and the secret key live. Photos: ``PHOTO_DIR``
    (``$TIPLU_PHOTOS``, default ``photos/`` next to the ledger), ``MAX_PHOTO_PIXELS``
    (``$TIPLU_MAX_PHOTO_MP`` megapixels), ``MAX_PHOTO_STORE_MB`` (``$TIPLU_PHOTO_STORE_MB``, the photos
    folder's cap, 2048), ``PHOTO_UNLINKED_HOURS`` (``$TIPLU_PHOTO_UNLINKED_HOURS``, 24: when a photo no
    round uses expires), ``PHOTO_WAIT_SECONDS`` (``$TIPLU_PHOTO_WAIT_SECONDS``, 5: a photo's longest wait
    for its turn before 503), ``PHOTO_MEMORY_MB`` (``$TIPLU_PHOTO_MEMORY_MB``, 400: what the photos being
    decoded may hold together), ``PHOTO_FREE_MB`` (``$TIPLU_PHOTO_FREE_MB``, 64: free disk under which no photo
    is kept), ``MODEL_PATH`` (``$TIPLU_MODEL``) and
    ``CAMERA`` (``$TIPLU_CAMERA``: ``auto``, ``none`` or a device). Decks taught on the Decks page:
    ``DECKS_DIR`` (``$TIPLU_DECKS``, default ``decks/`` next to the ledger), and the epochs and crops
    per corner of their learning and the scenes their doubt is recalibrated on, ``DECK_EPOCHS``,
    ``DECK_COPIES`` and ``DECK_CALIBRATION_SCENES`` (``$TIPLU_DECK_EPOCHS``, ``$TIPLU_DECK_COPIES``,
    ``$TIPLU_DECK_CALIBRATION_SCENES``; :mod:`web.decks`). ``TABLE_CODE``
    (``$TIPLU_TABLE_CODE``): when set, every request needs it (see :mod:`web.security`);
    ``tiplu serve`` sets it when it listens on the network. ``PROXY_HOPS``
    (``$TIPLU_PROXY_HOPS``): reverse proxies in front, whose ``X-Forwarded-*`` to trust. ``ALLOWED_HOSTS``
    (``$TIPLU_ALLOWED_HOSTS``, comma-separated): host names the server answers to besides its addresses,
    ``localhost`` and this machine's own names (a proxy's public name; ``*`` for any).
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
        CAMERA=os.environ.get("TIPLU_CAMERA") or "auto",
        MODEL_PATH=os.environ.get("TIPLU_MODEL") or None,
        PHOTO_DIR=os.environ.get("TIPLU_PHOTOS") or None,
        MAX_PHOTO_PIXELS=int(os.environ.get("TIPLU_MAX_PHOTO_MP", 40)) * 1_000_000,
        MAX_PHOTO_STORE_MB=int(os.environ.get("TIPLU_PHOTO_STORE_MB") or 0) or None,
        PHOTO_UNLINKED_HOURS=float(os.environ.get("TIPLU_PHOTO_UNLINKED_HOURS") or 0) or None,
        PHOTO_WAIT_SECONDS=float(os.environ.get("TIPLU_PHOTO_WAIT_SECONDS") or 0) or None,
        PHOTO_MEMORY_MB=int(os.environ.get("TIPLU_PHOTO_MEMORY_MB") or 0) or None,
        PHOTO_FREE_MB=int(os.environ.get("TIPLU_PHOTO_FREE_MB") or 0) or None,
        PROXY_HOPS=int(os.environ.get("TIPLU_PROXY_HOPS") or 0),
        ALLOWED_HOSTS=os.environ.get("TIPLU_ALLOWED_HOSTS") or "",
        DECKS_DIR=os.environ.get("TIPLU_DECKS") or None,
        DECK_EPOCHS=int(os.environ.get("TIPLU_DECK_EPOCHS") or 0) or None,
        DECK_COPIES=int(os.environ.get("TIPLU_DECK_COPIES") or 0) or None,
        DECK_CALIBRATION_SCENES=os.environ.get("TIPLU_DECK_CALIBRATION_SCENES") or None,
    )
    if test_config:
        app.config.update(test_config)
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = _secret_key(app)
    app.json = TipluJSON(app)
    app.jinja_env.policies["json.dumps_kwargs"] = {"sort_keys": False, "ensure_ascii": False}

    i18n.init_app(app)
    db.init_app(app)
    security.init_app(app)
    errors.init_app(app)
    payloads.init_app(app)
    for blueprint in (api.bp, api.page_api, views.bp):
        app.register_blueprint(blueprint)
    return app
