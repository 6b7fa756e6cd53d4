"""The README stays true: every rule option and every CLI command it should name is there."""

from __future__ import annotations

from pathlib import Path

import pytest

from scorer import RULE_FAMILIES
from web.cli import COMMANDS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted({spec.name for family in RULE_FAMILIES.values() for spec in family.options}))
def test_every_option_is_documented(name: str) -> None:
    assert f"`{name}`" in README


@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_command_is_documented(command: str) -> None:
    assert f"tiplu {command}" in README


def test_the_two_quick_start_commands_come_first() -> None:
    quick = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = [b.split("```", 1)[0].strip() for b in quick.split("```sh")[1:]]
    assert blocks[0].endswith("tiplu serve --demo") and blocks[1] == "bash tests/run"
    assert "tests/run" in (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
