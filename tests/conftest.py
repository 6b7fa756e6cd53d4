"""Shared fixtures: a Flask app on a real temporary SQLite file, its test client and CLI runner."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from web.app import create_app
from web_support import PLAYERS, Server, phone_page



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


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    """Start real ``tiplu serve`` processes on a ledger in ``tmp_path``; all are stopped afterwards."""
    started: list[Server] = []

    def start(*extra: str) -> Server:
        server = Server(tmp_path / "served.db", *extra)
        started.append(server)
        return server

    yield start
    for server in started:
        server.kill()


@pytest.fixture
def phone() -> Iterator[Any]:
    """A Chromium tab the size of a 360x740 phone."""
    with phone_page() as tab:
        yield tab
