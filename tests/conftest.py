"""Shared fixtures: a Flask app on a real temporary SQLite file, its test client and CLI runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from web.app import create_app
from web_support import PLAYERS



@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "ledger.db"


@pytest.fixture
def app(db_path: Path) -> Flask:
    return create_app({"TESTING": True, "DATABASE": str(db_path), "SECRET_KEY": "test-secret",
                       "WTF_CSRF_ENABLED": False})


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


@pytest.fixture
def make_session(client: FlaskClient) -> Callable[..., int]:
    """Create a session through the API and return its id."""
    def make(players: list[str] | None = None, rules: str = "nepali", **extra: Any) -> int:
        response = client.post("/api/sessions", json={"players": players or PLAYERS, "rules": rules, **extra})
        assert response.status_code == 201, response.get_json()
        return int(response.get_json()["id"])
    return make
