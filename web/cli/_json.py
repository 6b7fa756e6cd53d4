"""Typed fields of the JSON that ``tiplu check --jsonl`` reads.

A field of the wrong type is bad input: :class:`UsageError` names the field, says what to
write and shows what came, never a traceback. (``tiplu settle`` reads its round with the
API's parser, :func:`web.payloads.standalone_round`.)

>>> whole({"maal": 5}, "maal", 0), flag({}, "seen", False), rules_name({"rules": "rummy"})
(5, False, 'rummy')
>>> card_list({"cards": 5}, "cards")
Traceback (most recent call last):
...
web.cli._common.UsageError: "cards" must be a list of cards like ["10C", "JC"], got 5
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scorer import RULE_FAMILIES
from web.cli._common import UsageError

CARDS_EXAMPLE = '["10C", "JC"]'


def _got(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def text(data: Mapping[str, Any], key: str, example: str) -> str | None:
    """An optional text field (absent or null: None)."""
    value = data.get(key)
    if value is not None and not isinstance(value, str):
        raise UsageError(f'"{key}" must be text like "{example}", got {_got(value)}')
    return value


def whole(data: Mapping[str, Any], key: str, default: int | None) -> int | None:
    """An optional whole number (absent or null: ``default``); true/false are not numbers."""
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise UsageError(f'"{key}" must be a whole number, got {_got(value)}')
    return value


def flag(data: Mapping[str, Any], key: str, default: bool) -> bool:
    """An optional true/false field (absent or null: ``default``)."""
    value = data.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise UsageError(f'"{key}" must be true or false, got {_got(value)}')
    return value


def obj(data: Mapping[str, Any], key: str, example: str) -> dict[str, Any]:
    """An optional object field (absent or null: empty)."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f'"{key}" must be an object like {example}, got {_got(value)}')
    return value


def rules_name(data: Mapping[str, Any]) -> str | None:
    """The ``rules`` field: a rule family's name, or None for the default."""
    return text(data, "rules", " or ".join(RULE_FAMILIES))


def card_list(data: Mapping[str, Any], key: str) -> str | list[str]:
    """A list of card names, or one text of them (``"10C JC"``); absent or null: empty."""
    value = data.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(card, str) for card in value):
        raise UsageError(f'"{key}" must be a list of cards like {CARDS_EXAMPLE}, got {_got(value)}')
    return value


def card_groups(data: Mapping[str, Any], key: str) -> list[list[str]] | None:
    """A list of melds, each a list of card names; absent or null: None."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(group, list) and all(isinstance(c, str) for c in group)
                                              for group in value):
        raise UsageError(f'"{key}" must be a list of melds like [["3S", "4S", "5S"], ["6H", "6H", "6H"]], '
                         f"got {_got(value)}")
    return value
