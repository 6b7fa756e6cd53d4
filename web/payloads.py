"""Request input as typed values: ids in the URL, JSON bodies and forms, checked before the ledger sees them.

A form and a JSON body say the same things in two shapes: :func:`session_form` and
:func:`round_form` turn a form into the JSON payload, and one parser per payload
(:func:`new_session`, :func:`session_changes`, :func:`round_entry`) reads either into
a frozen dataclass or raises :class:`~web.errors.BadRequest` naming the field to fix.
What depends on the stored session (does it exist, has it ended, are its rules
still open to change) is checked by the ledger.

>>> setup = new_session({"players": ["Anna", "  Ben "], "options": {"tiplu_pair": "8"}})
>>> setup.players, setup.rules["tiplu_pair"]
(('Anna', 'Ben'), 8)
>>> new_session({"players": ["Anna", "Ben"], "colour": "red"})
Traceback (most recent call last):
...
web.errors.BadRequest: unknown field 'colour' (use players, rules, options, rounds_planned, title, first_dealer, deck, rate)
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Callable, Mapping, Sequence

from flask import Flask, request
from werkzeug.datastructures import MultiDict
from werkzeug.routing import BaseConverter

from scorer import RULE_FAMILIES, Card, RuleSet, TipluError, check_copies, get_rules, parse_card, parse_cards
from scorer.kinds import FINISHES, Route, Scoring, WildSource
from scorer.rules import DEFAULT_FAMILY, TWO_DECKS, RuleFamily
from web.bounds import MAX_DIGITS, maal_limit, parse_digits, penalty_limit
from web.errors import BadRequest, NotFoundInPath
from web.i18n import _, translate

MAX_NAME_LENGTH = 40
MAX_TITLE_LENGTH = 80
MAX_ROUNDS_PLANNED = 1000
MAX_KEY_LENGTH = 200
#: A JSON body larger than this (bytes), or nested deeper, is refused before it is parsed.
MAX_JSON_BYTES = 64 * 1024
MAX_JSON_DEPTH = 16
#: Seats on the new-session form.
MAX_SEATS = 6
#: A ``first_dealer`` that is no seat number; the ledger reports it with the seat range.
NO_SEAT = -1

NEW_SESSION_FIELDS = ("players", "rules", "options", "rounds_planned", "title", "first_dealer", "deck", "rate")
SESSION_CHANGE_FIELDS = ("deck", "first_dealer", "options", "players", "rate", "rounds_planned", "rules", "title")
RATE_FIELDS = ("per_point", "currency")
#: The most money a point may be worth, and the longest currency word ("Rs", "NPR", "रुपैयाँ").
MAX_RATE = 100_000
MAX_CURRENCY_LENGTH = 12
#: A rate as a form or a JSON string writes it: ASCII digits, a point, an optional minus.
PLAIN_DECIMAL = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)")
HUNDREDTH = Decimal("0.01")
#: An enrolled deck's name in the instance folder (``decks/<name>/``); "standard" or nothing is the shipped model.
DECK_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,39}$")
STANDARD_DECK = "standard"
SESSION_END_FIELDS = ("ended",)
#: Fixed once the first round is played.
LOCKED_FIELDS = frozenset({"rules", "options", "players", "first_dealer"})
ROUND_FIELDS = ("finish", "players", "tiplu", "turned", "winner")
#: The fields of one player's line, by what the family's losers are charged.
LINE_FIELDS: Mapping[Scoring, tuple[str, ...]] = {
    Scoring.MAAL: ("cards", "dealt_tunnelas", "false_declaration", "maal", "seen", "seen_by"),
    Scoring.PENALTY: ("cards", "penalty", "wrong_close"),
}
#: A wild card of the other kind than the family's, and what to send instead.
WRONG_WILD: Mapping[WildSource, tuple[WildSource, str]] = {
    WildSource.TIPLU: (WildSource.TURNED, "turned: the %(family)s rules use a tiplu, not a turned card (send tiplu)"),
    WildSource.TURNED: (WildSource.TIPLU, "tiplu: the %(family)s rules use a turned card, not a tiplu (send turned)"),
}


# --- ids in the URL -------------------------------------------------------------------------------

def session_id(text: str) -> int:
    """A session id from a URL or a form field; anything but 0-9 digits within SQLite's range is unknown (404).

    >>> session_id("12")
    12
    """
    number = parse_digits(text)
    if number is None:
        raise NotFoundInPath(_("session '%(id)s' does not exist", id=text[:MAX_DIGITS + 1]))
    return number


def round_number(text: str) -> int:
    """A round number from a URL; anything but 0-9 digits within SQLite's range is an unknown round (404)."""
    number = parse_digits(text)
    if number is None:
        raise NotFoundInPath(_("round '%(n)s' does not exist", n=text[:MAX_DIGITS + 1]))
    return number


class SessionIdConverter(BaseConverter):
    """``<session:session_id>``: the view gets an ``int``; ``/sessions/abc`` is 404 with the ledger's message."""

    def to_python(self, value: str) -> int:
        return session_id(value)

    def to_url(self, value: Any) -> str:
        return str(int(value))


class RoundNumberConverter(BaseConverter):
    """``<round:number>``: the view gets an ``int``; ``/rounds/x`` is 404 with the ledger's message."""

    def to_python(self, value: str) -> int:
        return round_number(value)

    def to_url(self, value: Any) -> str:
        return str(int(value))


def init_app(app: Flask) -> None:
    """Register the URL converters (before the blueprints that use them) and bound JSON in form fields."""
    app.url_map.converters.update(session=SessionIdConverter, round=RoundNumberConverter)
    app.before_request(check_form_json)


#: Form fields whose value is JSON written by a page's script (the photo review's taps).
JSON_FORM_FIELDS = ("correction",)


def check_form_json(form: Mapping[str, Any] | None = None) -> None:
    """Before each request: a form field that carries JSON is bounded like a JSON body, naming the field.

    50,000 ``[`` in ``correction`` would exhaust the JSON parser's stack (a 500);
    here it is a 400 before any view reads it.

    >>> check_form_json(MultiDict({"correction": "[" * 50}))
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: correction: the JSON nests 50 levels deep (at most 16)
    """
    if form is None:
        if request.method in ("GET", "HEAD", "OPTIONS") or request.mimetype not in (
                "application/x-www-form-urlencoded", "multipart/form-data"):
            return
        form = request.form
    getlist = getattr(form, "getlist", None)
    for field in JSON_FORM_FIELDS:
        for text in getlist(field) if getlist else [form.get(field, "")]:
            if len(text) > MAX_JSON_BYTES:
                raise BadRequest(_("%(field)s: %(n)s characters (at most %(max)s)", field=field, n=len(text),
                                   max=MAX_JSON_BYTES))
            depth = json_depth(text)
            if depth > MAX_JSON_DEPTH:
                raise BadRequest(_("%(field)s: the JSON nests %(depth)s levels deep (at most %(max)s)", field=field,
                                   depth=depth, max=MAX_JSON_DEPTH))


# --- values shared by every payload ---------------------------------------------------------------

_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def json_depth(text: str) -> int:
    """How deeply ``text`` nests arrays and objects (brackets inside strings do not count).

    >>> json_depth('{"a": [1, {"b": "[[["}]}')
    3
    """
    depth = deepest = 0
    for ch in _JSON_STRING.sub("", text):
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def json_object(raw: bytes) -> dict[str, Any]:
    """A request body as a JSON object, or a :class:`BadRequest` saying what is wrong with it.

    Bodies over :data:`MAX_JSON_BYTES` or nested deeper than :data:`MAX_JSON_DEPTH`
    are refused before parsing (a deep one would exhaust the parser's stack).

    >>> json_object(b'{"ended": false}')
    {'ended': False}
    >>> json_object(b"[" * 2000)
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: the JSON nests 2000 levels deep (at most 16)
    """
    if not raw.strip():
        raise BadRequest(_("send a JSON object in the request body"))
    if len(raw) > MAX_JSON_BYTES:
        raise BadRequest(_("the JSON body has %(n)s bytes (at most %(max)s)", n=len(raw), max=MAX_JSON_BYTES))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest(_("the body is not UTF-8 text; send JSON")) from None
    depth = json_depth(text)
    if depth > MAX_JSON_DEPTH:
        raise BadRequest(_("the JSON nests %(depth)s levels deep (at most %(max)s)", depth=depth,
                           max=MAX_JSON_DEPTH))
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        raise BadRequest(_("malformed JSON at line %(line)s column %(column)s: %(why)s", line=error.lineno,
                           column=error.colno, why=error.msg)) from None
    except (ValueError, RecursionError) as error:
        raise BadRequest(_("the JSON cannot be read: %(why)s", why=error)) from None
    if not isinstance(payload, dict):
        raise BadRequest(_("send a JSON object ({...}), not a list or a single value"))
    where = surrogate_field(payload)
    if where is not None:
        raise BadRequest(_("%(field)s: the text holds a broken character (a lone UTF-16 surrogate); "
                           "send it as UTF-8 text", field=where))
    return payload


def surrogate_field(value: Any, path: str = "") -> str | None:
    """The first field (``players.Anna.cards``) whose key or text holds a lone surrogate, else None.

    JSON may escape half of a UTF-16 pair (``"\\ud800"``); Python keeps it as a
    character that cannot be written as UTF-8, so SQLite, the logs and the answer
    itself would fail on it. Such text is refused where it enters.

    >>> surrogate_field({"title": "ok", "players": {"Anna": ["7H", "\\ud800"]}})
    'players.Anna.1'
    >>> surrogate_field({"title": "Friday"}) is None
    True
    """
    if isinstance(value, str):
        return (path or "body") if _has_surrogate(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            name = key.encode("utf-8", "replace").decode() if isinstance(key, str) else str(key)
            where = f"{path}.{name}" if path else name
            if isinstance(key, str) and _has_surrogate(key):
                return where
            found = surrogate_field(item, where)
            if found is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            found = surrogate_field(item, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
    return None


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def reject_unknown(payload: Mapping[str, Any], allowed: Sequence[str], *, player: str | None = None,
                   family: str = "") -> None:
    """Refuse fields outside ``allowed`` (listed in that order); ``player`` names the line they are in.

    >>> reject_unknown({"seen": True, "colour": 1}, LINE_FIELDS[Scoring.PENALTY], player="Ben", family="rummy")
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: players.Ben: unknown field 'colour', 'seen' for rummy rules (use cards, penalty, wrong_close)
    """
    unknown = set(payload) - set(allowed)
    if not unknown:
        return
    fields = ", ".join(sorted(map(repr, unknown)))
    if player is None:
        raise BadRequest(_("unknown field %(fields)s (use %(allowed)s)", fields=fields, allowed=", ".join(allowed)))
    raise BadRequest(_("players.%(name)s: unknown field %(fields)s for %(family)s rules (use %(allowed)s)",
                       name=player, fields=fields, family=family, allowed=", ".join(allowed)))


def yes_no(value: Any, what: str) -> bool:
    """Read a yes/no from JSON (bool) or a form (``on``, ``true``, ``1``, ...).

    >>> yes_no("on", "seen"), yes_no(None, "seen"), yes_no(False, "seen")
    (True, False, False)
    """
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on", "y"}:
        return True
    if text in {"0", "false", "no", "off", "n", ""}:
        return False
    raise BadRequest(_("%(what)s: '%(value)s' is not yes or no (use true or false)", what=what, value=value))


def whole_number(value: Any, what: str, *, minimum: int = 0, maximum: int) -> int:
    """Read a whole number from JSON (int) or a form (0-9 digits, an optional ``-``) within bounds.

    >>> whole_number("12", "Ben's maal", maximum=100)
    12
    >>> whole_number(2.5, "Ben's maal", maximum=100)
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: Ben's maal: '2.5' is not a whole number
    >>> whole_number(10**30, "Ben's maal", maximum=294)
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: Ben's maal: 1000000000000000000000000000000 is above 294, more than a hand can hold
    """
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        text = value.strip()
        digits = parse_digits(text.removeprefix("-"))
        number = None if digits is None else (-digits if text.startswith("-") else digits)
    if number is None:
        raise BadRequest(_("%(what)s: '%(value)s' is not a whole number", what=what, value=str(value)[:MAX_DIGITS + 1]))
    if number < minimum:
        raise BadRequest(_("%(what)s: %(number)s is below %(minimum)s", what=what, number=number, minimum=minimum))
    if number > maximum:
        raise BadRequest(_("%(what)s: %(number)s is above %(maximum)s, more than a hand can hold", what=what,
                           number=number, maximum=maximum))
    return number


def idempotency_key(value: str | None) -> str | None:
    """An ``Idempotency-Key`` header (or a form's submission token): 1 to 200 characters, or none."""
    if value is not None and not (0 < len(value) <= MAX_KEY_LENGTH):
        raise BadRequest(_("Idempotency-Key: use 1 to 200 characters"))
    return value


def fingerprint(payload: Any) -> str:
    """A digest of a payload as sent: the same ``Idempotency-Key`` must come with the same payload."""
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


# --- sessions -------------------------------------------------------------------------------------

def clean_name(name: Any) -> str:
    """A player's name as stored: trimmed, printable, at most 40 characters.

    >>> clean_name("  Anna ")
    'Anna'
    """
    if not isinstance(name, str):
        raise BadRequest(_("player name %(name)r: write it as text", name=name))
    text = " ".join(name.split())
    if not text:
        raise BadRequest(_("player name is empty: give every player a name"))
    if len(text) > MAX_NAME_LENGTH:
        raise BadRequest(_("player name '%(name)s…' is too long (at most %(n)s characters)",
                           name=text[:MAX_NAME_LENGTH], n=MAX_NAME_LENGTH))
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise BadRequest(_("player name %(name)r: remove control characters", name=text))
    return text


def clean_players(names: Any) -> tuple[str, ...]:
    """The seat list with every name cleaned; names must differ (ignoring case)."""
    if not isinstance(names, list):
        raise BadRequest(_('players: give a list of names in seat order, e.g. ["Anna", "Ben", "Carla"]'))
    cleaned = tuple(clean_name(n) for n in names)
    seen: set[str] = set()
    for name in cleaned:
        if name.casefold() in seen:
            raise BadRequest(_("players: '%(name)s' is given twice (names must differ)", name=name))
        seen.add(name.casefold())
    return cleaned


def check_seat_count(players: Sequence[str], rules: RuleSet) -> None:
    """As many players as the family and its ``players_max`` allow."""
    low, high = rules.players_min, rules.players_max
    if not low <= len(players) <= high:
        hint = _(" (set players_max to 6 for six)") if high < 6 and len(players) == 6 else ""
        raise BadRequest(_("players: the %(rules)s rules need %(low)s to %(high)s players, got %(n)s",
                           rules=rules.name, low=low, high=high, n=len(players)) + hint)


def rule_family_name(value: Any) -> str:
    if not isinstance(value, str):
        raise BadRequest(_('rules: give the rule family\'s name, e.g. "nepali" or "rummy"'))
    return value


def house_options(value: Any) -> Mapping[str, Any]:
    """The ``options`` object (values still as sent; the scorer checks and converts them).

    A number sent as text must be ASCII digits (an optional ``-``): Python's ``int``
    also reads ``"٣"`` as 3 and ``"1_0"`` as 10, which nobody at the table meant.

    >>> house_options({"seen_fee": " 4 ", "direction": "clockwise"})["seen_fee"]
    ' 4 '
    >>> house_options({"seen_fee": "٣"})
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: options.seen_fee: '٣' is not a whole number (use the digits 0-9)
    """
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BadRequest(_('options: give an object of house-rule options, e.g. {"tiplu_pair": 8}'))
    for name, given in value.items():
        if isinstance(given, str) and _reads_as_number(given) and not PLAIN_NUMBER.fullmatch(given.strip()):
            raise BadRequest(_("options.%(name)s: '%(value)s' is not a whole number (use the digits 0-9)",
                               name=name, value=given.strip()[:MAX_DIGITS + 1]))
    return value


#: How a number is written in a form or a JSON string: ASCII digits, an optional minus.
PLAIN_NUMBER = re.compile(r"-?[0-9]{1,%d}" % MAX_DIGITS)


def _reads_as_number(text: str) -> bool:
    """Would ``int`` read ``text`` (as the scorer's options do)? Long texts are numbers too, just too big."""
    try:
        int(text)
    except ValueError as error:
        return "exceeds the limit" in str(error).lower() or "integer string conversion" in str(error)
    return True


def rounds_planned(value: Any) -> int | None:
    """How many rounds the table agreed on: 1 to 1000, or none."""
    if value in (None, ""):
        return None
    number = value if isinstance(value, int) and not isinstance(value, bool) else (
        parse_digits(value.strip()) if isinstance(value, str) else None)
    if number is None:
        raise BadRequest(_("rounds_planned: '%(value)s' is not a whole number", value=str(value)[:MAX_DIGITS + 1]))
    if not 1 <= number <= MAX_ROUNDS_PLANNED:
        raise BadRequest(_("rounds_planned: %(n)s is not between 1 and %(max)s", n=number, max=MAX_ROUNDS_PLANNED))
    return number


def clean_title(value: Any) -> str:
    """A session's title on one line, at most 80 characters; only text (or nothing) is a title.

    >>> clean_title("  Friday   night "), clean_title(None)
    ('Friday night', '')
    """
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(_("title: write it as text, e.g. \"Friday night\""))
    return " ".join(value.split())[:MAX_TITLE_LENGTH]


def deck_name(value: Any) -> str | None:
    """The deck a session reads its photos with: an enrolled deck's name, or None for the shipped model.

    Only the form is checked here; whether the deck exists is :mod:`web.decks`'s question.

    >>> deck_name("grandma-2"), deck_name("standard"), deck_name("")
    ('grandma-2', None, None)
    """
    if value in (None, "", STANDARD_DECK):
        return None
    if not isinstance(value, str) or not DECK_NAME.match(value):
        raise BadRequest(_("deck: give the name of a deck on the Decks page, or \"standard\""))
    return value


@dataclass(frozen=True)
class Rate:
    """What a point is worth in money, agreed for a session: only shown beside the points at settle-up.

    Points stay the score (the scorer never sees a rate); the rate is kept in hundredths so that
    money is exact: 6 points at 2.50 is 15.00, never 14.999.

    >>> Rate(250, "Rs").amount(6), Rate(1000, "Rs").amount(6), Rate(5, "").amount(3)
    ('15', '60', '0.15')
    >>> Rate(1050, "$").to_dict()
    {'per_point': 10.5, 'currency': '$'}
    """

    hundredths: int
    currency: str = ""

    @property
    def per_point(self) -> int | float:
        """The rate as JSON gives it: a whole number when it is one (10, not 10.0)."""
        whole, cents = divmod(self.hundredths, 100)
        return whole if not cents else self.hundredths / 100

    def amount(self, points: int) -> str:
        """``points`` in money, as digits: no decimals when the sum is whole, else two."""
        total = points * self.hundredths
        sign = "-" if total < 0 else ""
        whole, cents = divmod(abs(total), 100)
        return f"{sign}{whole}" if not cents else f"{sign}{whole}.{cents:02d}"

    def to_dict(self) -> dict[str, Any]:
        return {"per_point": self.per_point, "currency": self.currency}


def _rate_hundredths(value: Any) -> int:
    """``rate.per_point`` in hundredths: a JSON number or a form's text, at least 0, at most 2 decimals.

    >>> _rate_hundredths("2.5"), _rate_hundredths(10), _rate_hundredths(0.07)
    (250, 1000, 7)
    >>> _rate_hundredths("1.005")
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: rate.per_point: 1.005 has more than 2 decimals
    """
    shown = str(value)[:MAX_DIGITS + 1]
    number: Decimal | None = None
    if isinstance(value, str) and len(value.strip()) <= MAX_DIGITS and PLAIN_DECIMAL.fullmatch(value.strip()):
        number = Decimal(value.strip())
    elif isinstance(value, float) and math.isfinite(value):
        number = Decimal(repr(value))
    elif isinstance(value, int) and not isinstance(value, bool):
        number = Decimal(value)
    if number is None:
        raise BadRequest(_("rate.per_point: '%(value)s' is not a number (give e.g. 10 or 2.50)", value=shown))
    if number < 0:
        raise BadRequest(_("rate.per_point: %(value)s is below 0", value=shown))
    if number > MAX_RATE:
        raise BadRequest(_("rate.per_point: %(value)s is above %(max)s", value=shown, max=MAX_RATE))
    if number != number.quantize(HUNDREDTH):
        raise BadRequest(_("rate.per_point: %(value)s has more than 2 decimals", value=shown))
    return int(number * 100)


def _currency(value: Any) -> str:
    """``rate.currency``: a short word or symbol on one line ("Rs", "₹", "NPR"), or nothing."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadRequest(_('rate.currency: write it as text, e.g. "Rs"'))
    text = " ".join(value.split())
    if len(text) > MAX_CURRENCY_LENGTH:
        raise BadRequest(_("rate.currency: %(n)s characters; use at most %(max)s, e.g. \"Rs\"", n=len(text),
                           max=MAX_CURRENCY_LENGTH))
    if any(unicodedata.category(ch).startswith("C") for ch in text):
        raise BadRequest(_('rate.currency: write it as text, e.g. "Rs"'))
    return text


def session_rate(value: Any) -> Rate | None:
    """A session's ``rate``: ``{"per_point": 10, "currency": "Rs"}``, or None (null, absent) for points only.

    >>> session_rate({"per_point": "2.5", "currency": " Rs "})
    Rate(hundredths=250, currency='Rs')
    >>> session_rate(None) is None
    True
    >>> session_rate({"per_point": -1})
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: rate.per_point: -1 is below 0
    """
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise BadRequest(_('rate: give {"per_point": 10, "currency": "Rs"}, or null for points only'))
    unknown = set(value) - set(RATE_FIELDS)
    if unknown:
        raise BadRequest(_("rate: unknown field %(fields)s (use %(allowed)s)",
                           fields=", ".join(sorted(map(repr, unknown))), allowed=", ".join(RATE_FIELDS)))
    if value.get("per_point") in (None, ""):
        raise BadRequest(_("rate.per_point: give the money one point is worth, e.g. 10 or 2.50"))
    return Rate(_rate_hundredths(value["per_point"]), _currency(value.get("currency")))


def rate_form(form: Mapping[str, str]) -> dict[str, str] | None:
    """The form's rate fields as the API's ``rate``: none when both are empty.

    >>> rate_form({"rate_per_point": "10", "rate_currency": "Rs"}), rate_form({"rate_per_point": " "})
    ({'per_point': '10', 'currency': 'Rs'}, None)
    """
    per_point, currency = form.get("rate_per_point", "").strip(), form.get("rate_currency", "").strip()
    if not per_point and not currency:
        return None
    return {"per_point": per_point, "currency": currency}


@dataclass(frozen=True)
class NewSession:
    """A session to create: seats in clockwise order, rules with every option filled in, the plan, the deck."""

    players: tuple[str, ...]
    rules: RuleSet
    rounds_planned: int | None = None
    title: str = ""
    first_dealer: int = 0
    deck: str | None = None
    rate: Rate | None = None


def new_session(payload: Mapping[str, Any]) -> NewSession:
    """``POST /api/sessions`` (and the new-session form, through :func:`session_form`)."""
    reject_unknown(payload, NEW_SESSION_FIELDS)
    first = payload.get("first_dealer", 0)
    if isinstance(first, bool) or not isinstance(first, int):
        raise BadRequest(_("first_dealer: give the dealer's seat number, 0 for the first player"))
    rules = get_rules(rule_family_name(payload.get("rules", DEFAULT_FAMILY)), house_options(payload.get("options")))
    players = clean_players(payload.get("players"))
    check_seat_count(players, rules)
    planned = rounds_planned(payload.get("rounds_planned"))
    title = clean_title(payload.get("title", ""))
    if not 0 <= first < len(players):
        raise BadRequest(_("first_dealer: seat %(seat)s does not exist (0 to %(last)s)", seat=first,
                           last=len(players) - 1))
    return NewSession(players, rules, planned, title, first, deck_name(payload.get("deck")),
                      session_rate(payload.get("rate")))


@dataclass(frozen=True)
class SessionChanges:
    """What a ``PATCH`` or the settings form changes: only the fields in ``given``.

    ``rules`` and ``options`` are checked against each other by the ledger, which knows
    the session's current ones; ``first_dealer`` is :data:`NO_SEAT` when it was no number.
    """

    given: frozenset[str] = frozenset()
    title: str = ""
    rounds_planned: int | None = None
    rules: str | None = None
    options: Mapping[str, Any] | None = None
    players: tuple[str, ...] | None = None
    first_dealer: int | None = None
    deck: str | None = None
    rate: Rate | None = None

    @property
    def locked(self) -> frozenset[str]:
        """The fields given that are fixed once the first round is played."""
        return self.given & LOCKED_FIELDS


def session_changes(payload: Any) -> SessionChanges:
    """``PATCH /api/sessions/<id>`` (and the settings form)."""
    if not isinstance(payload, Mapping):
        raise BadRequest(_('send the changes as a JSON object, e.g. {"rounds_planned": 8}'))
    reject_unknown(payload, SESSION_CHANGE_FIELDS)
    first = payload.get("first_dealer")
    return SessionChanges(
        given=frozenset(payload),
        title=clean_title(payload.get("title")),
        rounds_planned=rounds_planned(payload.get("rounds_planned")),
        rules=rule_family_name(payload["rules"]) if "rules" in payload else None,
        options=house_options(payload["options"]) if "options" in payload else None,
        players=clean_players(payload["players"]) if "players" in payload else None,
        first_dealer=None if "first_dealer" not in payload else (
            first if isinstance(first, int) and not isinstance(first, bool) else NO_SEAT),
        deck=deck_name(payload.get("deck")),
        rate=session_rate(payload.get("rate")))


def session_ended(payload: Mapping[str, Any]) -> bool:
    """``POST /api/sessions/<id>/end``: ``{"ended": false}`` reopens, ``{}`` or ``{"ended": true}`` ends.

    >>> session_ended({"ende": False})
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: unknown field 'ende' (use ended)
    """
    reject_unknown(payload, SESSION_END_FIELDS)
    ended = payload.get("ended", True)
    if not isinstance(ended, bool):
        raise BadRequest(_("ended: give true to end the session or false to reopen it"))
    return ended


def session_form(form: Mapping[str, str]) -> dict[str, Any]:
    """The new-session (or settings) form as the API's payload: players, family, its options, plan."""
    family = form.get("rules", DEFAULT_FAMILY)
    if family not in RULE_FAMILIES:
        raise BadRequest(_("rules: pick one of %(families)s", families=", ".join(RULE_FAMILIES)))
    players = [form.get(f"player{i}", "").strip() for i in range(MAX_SEATS)]
    options: dict[str, Any] = {}
    for spec in RULE_FAMILIES[family].options:
        key = f"opt_{family}_{spec.name}"
        options[spec.name] = key in form if spec.kind == "bool" else form.get(key, spec.default)
    _follow_the_decks(RULE_FAMILIES[family], options)
    return {"players": [p for p in players if p], "rules": family, "options": options,
            "rounds_planned": form.get("rounds_planned", "").strip() or None, "title": form.get("title", ""),
            "deck": form.get("deck") or None, "rate": rate_form(form)}


def _follow_the_decks(family: RuleFamily, options: dict[str, Any]) -> None:
    """A form's hand size left at the family's default follows the decks ticked, as in the API.

    The form always sends the select's value, so ticking two decks would send 21 cards
    and be refused; left at its default, the size is not sent and the scorer deals the
    decks' own (13 from two decks). A size changed by hand is sent as chosen.

    >>> options = {"two_decks": True, "hand_size": "21"}
    >>> _follow_the_decks(RULE_FAMILIES["rummy"], options); options
    {'two_decks': True}
    """
    if "hand_size" not in options or TWO_DECKS not in options:
        return
    default = next(spec.default for spec in family.options if spec.name == "hand_size")
    decks = 2 if options[TWO_DECKS] is True else family.decks
    if str(options["hand_size"]) == str(default) and default not in family.hand_sizes.get(decks, ()):
        del options["hand_size"]


def plan_form(form: Mapping[str, str]) -> dict[str, Any]:
    """The settings form once the rules are fixed: the title, the agreed rounds, the deck and the rate."""
    return {"title": form.get("title", ""), "rounds_planned": form.get("rounds_planned", "").strip() or None,
            "deck": form.get("deck") or None, "rate": rate_form(form)}


# --- rounds ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PlayerEntry:
    """One player's line of a round as entered: numbers, or ``cards`` for the scorer to value."""

    name: str
    seat: int
    seen: bool = False
    seen_by: Route | None = None
    maal: int = 0
    penalty: int | None = None
    cards: tuple[Card, ...] | None = None
    dealt_tunnelas: tuple[Card, ...] = ()
    wrong_close: bool = False
    false_declaration: bool = False


@dataclass(frozen=True)
class RoundEntry:
    """A round as entered, checked against the session's players (in seat order) and rules.

    ``fingerprint`` is the digest of the payload as sent, for ``Idempotency-Key``.
    """

    rules: RuleSet
    tiplu: Card | None
    turned: Card | None
    winner: str | None
    finish: Route | None
    players: tuple[PlayerEntry, ...]
    fingerprint: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.players)


def resolve_name(name: Any, players: Sequence[str], what: str) -> str:
    """Find a session player by name (exact, then ignoring case)."""
    if not isinstance(name, str) or not name.strip():
        raise BadRequest(_("%(what)s: give a player's name (one of %(players)s)", what=what,
                           players=", ".join(players)))
    if name in players:
        return name
    found = {p.casefold(): p for p in players}.get(name.strip().casefold())
    if found is None:
        raise BadRequest(_("%(what)s: unknown player '%(name)s' (players: %(players)s)", what=what, name=name,
                           players=", ".join(players)))
    return found


def _card(value: Any, what: str) -> Card | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise BadRequest(_("%(what)s: '%(value)s' is not a card (write it like 'JC' or '10H')", what=what,
                           value=value))
    try:
        return parse_card(value)
    except TipluError as error:
        raise BadRequest(f"{what}: {translate(error)}") from None


def _cards(value: Any, what: str, rules: RuleSet) -> tuple[Card, ...] | None:
    """Parse a list of card names (or text) and reject more copies than the decks hold."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
    elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadRequest(_('%(what)s: give the cards as a list of names like ["10C", "JC"]', what=what))
    try:
        cards = parse_cards(value)
        check_copies(cards, decks=rules.decks, jokers=rules.printed_jokers)
    except TipluError as error:
        raise BadRequest(f"{what}: {translate(error)}") from None
    return tuple(cards)


def _lines_by_name(entries: Any, players: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    if not isinstance(entries, Mapping) or not entries:
        raise BadRequest(_('players: give an object with one entry per player, '
                           'e.g. {"Anna": {"seen": true, "maal": 5}}'))
    by_name: dict[str, Mapping[str, Any]] = {}
    for raw_name, entry in entries.items():
        name = resolve_name(raw_name, players, "players")
        if name in by_name:
            raise BadRequest(_("players: '%(name)s' is given twice", name=name))
        if entry is None:
            entry = {}
        if not isinstance(entry, Mapping):
            raise BadRequest(_('players.%(name)s: give an object like {"seen": true, "maal": 5}', name=name))
        by_name[name] = entry
    missing = [p for p in players if p not in by_name]
    if missing:
        raise BadRequest(_("players: missing %(names)s (give every player of the session)", names=", ".join(missing)))
    return by_name


def _maal_line(name: str, seat: int, entry: Mapping[str, Any], rules: RuleSet) -> PlayerEntry:
    seen = yes_no(entry.get("seen"), f"players.{name}.seen")
    false_declaration = yes_no(entry.get("false_declaration"), f"players.{name}.false_declaration")
    seen_by = entry.get("seen_by") or None
    if seen_by is not None and seen_by not in FINISHES:
        raise BadRequest(_("players.%(name)s.seen_by: '%(value)s' is not one of %(allowed)s", name=name,
                           value=seen_by, allowed=", ".join(FINISHES)))
    cards = _cards(entry.get("cards"), f"players.{name}.cards", rules)
    tunnelas = _cards(entry.get("dealt_tunnelas"), f"players.{name}.dealt_tunnelas", rules) or ()
    number = entry.get("maal")
    has_number = number not in (None, "")
    if cards is not None and has_number:
        raise BadRequest(_("players.%(name)s: give maal as a number or as cards, not both", name=name))
    route = None if seen_by is None else Route(seen_by)
    if cards is not None or tunnelas:
        return PlayerEntry(name, seat, seen, route, cards=cards or (), dealt_tunnelas=tunnelas,
                           false_declaration=false_declaration)
    maal = whole_number(number, f"players.{name}.maal", maximum=maal_limit(rules)) if has_number else 0
    return PlayerEntry(name, seat, seen, route, maal=maal, false_declaration=false_declaration)


def _penalty_line(name: str, seat: int, entry: Mapping[str, Any], rules: RuleSet) -> PlayerEntry:
    wrong_close = yes_no(entry.get("wrong_close"), f"players.{name}.wrong_close")
    cards = _cards(entry.get("cards"), f"players.{name}.cards", rules)
    number = entry.get("penalty")
    has_number = number not in (None, "")
    if cards is not None and has_number:
        raise BadRequest(_("players.%(name)s: give the penalty as a number or as cards, not both", name=name))
    penalty = whole_number(number, f"players.{name}.penalty", maximum=penalty_limit(rules)) if has_number else None
    return PlayerEntry(name, seat, penalty=penalty, cards=cards, wrong_close=wrong_close)


LINE_READERS: Mapping[Scoring, Callable[[str, int, Mapping[str, Any], RuleSet], PlayerEntry]] = {
    Scoring.MAAL: _maal_line,
    Scoring.PENALTY: _penalty_line,
}


def round_entry(payload: Any, players: Sequence[str], rules: RuleSet) -> RoundEntry:
    """A round payload for a session with these players (in seat order) and rules.

    >>> from scorer import get_rules
    >>> entry = round_entry({"tiplu": "JC", "winner": "anna", "players": {"Anna": {"seen": "on"}, "Ben": {}}},
    ...                     ["Anna", "Ben"], get_rules("nepali"))
    >>> entry.winner, entry.finish is Route.MELDS, entry.players[0].seen
    ('Anna', True, True)
    """
    if not isinstance(payload, Mapping):
        raise BadRequest(_("send the round as a JSON object with tiplu, winner, finish and players"))
    digest = fingerprint(payload)
    reject_unknown(payload, ROUND_FIELDS)
    by_name = _lines_by_name(payload.get("players"), players)
    winner = payload.get("winner")
    winner = None if winner in (None, "") else resolve_name(winner, players, "winner")
    finish = payload.get("finish")
    finish = None if finish in (None, "") else finish
    if finish is not None and finish not in FINISHES:
        raise BadRequest(_("finish: '%(finish)s' is not one of %(allowed)s (or leave it empty)", finish=finish,
                           allowed=", ".join(FINISHES)))
    if winner is None and finish is not None:
        raise BadRequest(_("finish: a round without a winner has no finish (pick the winner or clear finish)"))
    if winner is not None and finish is None:
        finish = Route.MELDS
    other, message = WRONG_WILD[rules.wild_source]
    if payload.get(other) not in (None, ""):
        raise BadRequest(_(message, family=rules.name))
    wild = _card(payload.get(rules.wild_source), rules.wild_source)
    if wild is not None and wild.is_joker and rules.printed_jokers == 0:
        raise BadRequest(_("%(what)s: this session plays without printed jokers, so a joker cannot be the "
                           "%(what)s; enter the card that was turned up", what=rules.wild_source))
    read_line = LINE_READERS[rules.scoring]
    lines = []
    for seat, name in enumerate(players):
        reject_unknown(by_name[name], LINE_FIELDS[rules.scoring], player=name, family=rules.name)
        lines.append(read_line(name, seat, by_name[name], rules))
    tiplu_wild = rules.wild_source == WildSource.TIPLU
    return RoundEntry(rules, wild if tiplu_wild else None, None if tiplu_wild else wild, winner,
                      None if finish is None else Route(finish), tuple(lines), digest)


#: A round settled on its own (``tiplu settle``): a session's round plus its rules, options and players.
STANDALONE_ROUND_FIELDS = ("rules", "options", *ROUND_FIELDS)


def standalone_round(payload: Any) -> RoundEntry:
    """A round that brings its own rules and players, read by the same parser as a session's round.

    ``players`` is a list in seat order, each ``{"name": ..., and the fields of a line}``;
    everything else is :func:`round_entry`'s, so ``tiplu settle`` and the API agree to
    the point, unknown fields refused by name.

    >>> entry = standalone_round({"tiplu": "JC", "winner": "A", "players": [
    ...     {"name": "A", "seen": True, "cards": ["6H", "6H", "6H"], "dealt_tunnelas": ["6H"]},
    ...     {"name": "B", "seen": True}]})
    >>> entry.names, entry.finish, entry.players[0].dealt_tunnelas
    (('A', 'B'), <Route.MELDS: 'melds'>, (Card('6H'),))
    >>> standalone_round({"players": [{"name": "A"}, {"name": "B"}], "colour": "red"})
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: unknown field 'colour' (use rules, options, finish, players, tiplu, turned, winner)
    """
    if not isinstance(payload, Mapping):
        raise BadRequest(_("send the round as a JSON object with rules, options, tiplu, winner, finish and players"))
    reject_unknown(payload, STANDALONE_ROUND_FIELDS)
    family = payload.get("rules")
    rules = get_rules(DEFAULT_FAMILY if family is None else rule_family_name(family),
                      house_options(payload.get("options")))
    entries = payload.get("players")
    if not isinstance(entries, list) or not entries:
        raise BadRequest(_('players: give a list of players in seat order, '
                           'e.g. [{"name": "Anna", "seen": true, "maal": 5}, {"name": "Ben"}]'))
    lines: dict[str, Mapping[str, Any]] = {}
    for entry in entries:
        if not isinstance(entry, Mapping):
            raise BadRequest(_('players: give each player as an object like {"name": "Anna", "maal": 5}'))
        name = clean_name(entry.get("name"))
        if name in lines:
            raise BadRequest(_("players: '%(name)s' is given twice", name=name))
        lines[name] = {key: value for key, value in entry.items() if key != "name"}
    check_seat_count(tuple(lines), rules)
    round_payload = {key: payload[key] for key in ROUND_FIELDS if key in payload}
    return round_entry({**round_payload, "players": lines}, tuple(lines), rules)


def round_form(form: Mapping[str, str], players: Sequence[str], rules: RuleSet) -> dict[str, Any]:
    """The round form as the API's payload (fields left empty are left out)."""
    winner = form.get("winner") or None
    payload: dict[str, Any] = {"winner": winner, "finish": (form.get("finish") or None) if winner else None}
    payload[rules.wild_source] = form.get(rules.wild_source, "").strip() or None
    lines: dict[str, Any] = {}
    for seat, name in enumerate(players):
        line: dict[str, Any] = {}
        cards = form.get(f"p{seat}_cards", "").strip()
        if cards:
            line["cards"] = cards
        if rules.scoring == Scoring.PENALTY:
            line["wrong_close"] = f"p{seat}_wrong_close" in form
            if form.get(f"p{seat}_penalty", "").strip():
                line["penalty"] = form[f"p{seat}_penalty"].strip()
        else:
            line["seen"] = f"p{seat}_seen" in form
            if form.get(f"p{seat}_seen_by"):
                line["seen_by"] = form[f"p{seat}_seen_by"]
            if form.get(f"p{seat}_maal", "").strip():
                line["maal"] = form[f"p{seat}_maal"].strip()
            if form.get(f"p{seat}_tunnelas", "").strip():
                line["dealt_tunnelas"] = form[f"p{seat}_tunnelas"].strip()
            if f"p{seat}_false_declaration" in form:
                line["false_declaration"] = True
        lines[name] = line
    payload["players"] = lines
    return payload


def _card_problem(text: str, rules: RuleSet, *, owner: str | None = None) -> str | None:
    """What is wrong with typed card names, in plain words for the person at the table, or None."""
    for token in text.replace(",", " ").replace(";", " ").split():
        try:
            parse_card(token)
        except TipluError:
            return _("'%(card)s' isn't a card: tap it in the grid instead", card=token)
    try:
        check_copies(parse_cards(text), decks=rules.decks, jokers=rules.printed_jokers)
    except TipluError as error:
        return _("%(name)s's cards: %(why)s", name=owner, why=translate(error)) if owner else translate(error)
    return None


def _number_problem(text: str, what: str) -> str | None:
    """What is wrong with a typed count of points (``what`` names it: "Sita's maal"), or None.

    Only 0-9 count (``"²"`` and ``"--5"`` are no numbers), and no more digits than
    SQLite holds: Python's ``int`` refuses 5000 of them with an error of its own.

    >>> [_number_problem(t, "Sita's maal") for t in ("5", "²", "--5", "9" * 5000, "-0")]
    [None, "Sita's maal must be a whole number, like 5", "Sita's maal must be a whole number, like 5", \
"Sita's maal must be a whole number, like 5", None]
    """
    text = text.strip()
    if not text:
        return None
    number = parse_digits(text.removeprefix("-"))
    if number is None:
        return _("%(what)s must be a whole number, like 5", what=what)
    if text.startswith("-") and number > 0:
        return _("%(what)s can't be below 0", what=what)
    return None


def round_form_problems(form: Mapping[str, str], players: Sequence[str], rules: RuleSet) -> dict[str, str]:
    """Each field of the round form that cannot be used, with what to fix in plain words.

    The page shows each message under its field and keeps what was typed; the same
    checks run again on the payload (:func:`round_entry`), which stays the one gate.

    >>> round_form_problems({"tiplu": "1X", "p1_maal": "-5"}, ["Hari", "Sita"], get_rules("nepali"))
    {'tiplu': "'1X' isn't a card: tap it in the grid instead", 'p1_maal': "Sita's maal can't be below 0"}
    """
    problems: dict[str, str] = {}
    wild = str(rules.wild_source.value)
    if form.get(wild, "").strip():
        found = _card_problem(form[wild], rules)
        if found:
            problems[wild] = found
    number_kind = "penalty" if rules.scoring == Scoring.PENALTY else "maal"
    for seat, name in enumerate(players):
        number_field = f"p{seat}_{number_kind}"
        what = _("%(name)s's penalty points", name=name) if number_kind == "penalty" else _("%(name)s's maal",
                                                                                            name=name)
        found = _number_problem(form.get(number_field, ""), what)
        if found:
            problems[number_field] = found
        for field in (f"p{seat}_cards", f"p{seat}_tunnelas"):
            if form.get(field, "").strip():
                found = _card_problem(form[field], rules, owner=name)
                if found:
                    problems[field] = found
        if form.get(f"p{seat}_cards", "").strip() and form.get(number_field, "").strip() \
                and number_field not in problems:
            problems[number_field] = _("%(what)s: type the number or tap the cards, not both (clear one)",
                                       what=what)
    return problems


# --- photos ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class PhotoTarget:
    """What a photo to keep shows (``purpose``) and whose it is (``seat``), from its upload form."""

    purpose: str = "hand"
    seat: int | None = None


def photo_target(form: MultiDict[str, str]) -> PhotoTarget:
    """The ``purpose`` and ``seat`` fields of a photo upload (``photos.store_photo`` checks the purpose).

    >>> photo_target(MultiDict({"seat": "9" * 25}))
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: seat: '9999999999999999999999999' is not a seat (0 to 5)
    """
    text = form.get("seat", "").strip()
    seat = parse_digits(text, MAX_SEATS - 1) if text else None
    if text and seat is None:
        raise BadRequest(_("seat: '%(seat)s' is not a seat (0 to %(last)s)", seat=text[:40], last=MAX_SEATS - 1))
    return PhotoTarget(form.get("purpose") or "hand", seat)


@dataclass(frozen=True)
class ScoreFields:
    """What a photo upload asks to be judged with: the tiplu (or turned card) and whether the player saw."""

    tiplu: Card | None = None
    turned: Card | None = None
    seen: bool = True


def score_fields(form: MultiDict[str, str]) -> ScoreFields:
    """The ``tiplu``, ``turned`` and ``seen`` fields of a photo upload (none: only the cards are read).

    >>> score_fields(MultiDict({"tiplu": "jc", "seen": "false"}))
    ScoreFields(tiplu=Card('JC'), turned=None, seen=False)
    >>> score_fields(MultiDict({"tiplu": "JX"}))
    Traceback (most recent call last):
    ...
    web.errors.BadRequest: tiplu: 'JX': unknown suit 'X' (use S, H, D, C or ♠ ♥ ♦ ♣)
    """
    seen = form.get("seen", "true").strip().lower()
    if seen not in ("true", "false", "1", "0", "on", "off", ""):
        raise BadRequest(_("seen: give true or false"))
    return ScoreFields(_card(form.get("tiplu"), "tiplu"), _card(form.get("turned"), "turned"),
                       seen not in ("false", "0", "off"))


def rules_named(name: str | None) -> RuleSet:
    """The default rules of the family ``name`` (the default family when none is given).

    >>> rules_named("rummy").name.value, rules_named(None).name.value
    ('rummy', 'nepali')
    """
    family = (name or DEFAULT_FAMILY).strip() or DEFAULT_FAMILY
    if family not in RULE_FAMILIES:
        raise BadRequest(_("rules: pick one of %(families)s", families=", ".join(RULE_FAMILIES)))
    return get_rules(family)
