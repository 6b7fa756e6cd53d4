"""Turn a round as typed or tapped at the table into a round scored by the scorer.

The web form and the JSON API both produce the same *payload* (a plain dict);
:func:`score_round` checks it against the session's players, lets the scorer
value maal or penalty cards and settle the round, and returns a
:class:`ScoredRound` ready to be stored. No rule is computed here: maal, penalty
and settlement all come from :mod:`scorer`; this module only reads input and
says precisely what to fix.

>>> from scorer import get_rules
>>> payload = {"tiplu": "JC", "winner": "Anna", "finish": "melds",
...            "players": {"Anna": {"seen": True, "maal": 5}, "Ben": {"seen": True, "maal": 2}}}
>>> scored = score_round(get_rules("nepali"), ["Anna", "Ben"], payload)
>>> sum(scored.settlement["net"].values())
0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from scorer import Card, RuleSet, TipluError, check_copies, parse_card, parse_cards
from scorer.kinds import FINISHES
from scorer.maal import maal_points
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from web.i18n import _

NEPALI_FIELDS = frozenset({"seen", "seen_by", "maal", "cards", "dealt_tunnelas", "false_declaration"})
RUMMY_FIELDS = frozenset({"penalty", "cards", "wrong_close"})
ROUND_FIELDS = frozenset({"tiplu", "turned", "winner", "finish", "players"})


class InputError(TipluError):
    """A round or session that cannot be stored as given; the message says what to fix."""


@dataclass(frozen=True)
class PlayerLine:
    """One player's part of a round, as entered plus what the scorer made of it."""

    name: str
    seat: int
    seen: bool = False
    seen_by: str | None = None
    maal: int | None = None
    maal_cards: tuple[str, ...] | None = None
    maal_items: tuple[dict[str, Any], ...] = ()
    dealt_tunnelas: tuple[str, ...] = ()
    penalty: int | None = None
    penalty_cards: tuple[str, ...] | None = None
    penalty_detail: dict[str, Any] | None = None
    wrong_close: bool = False
    false_declaration: bool = False


@dataclass(frozen=True)
class ScoredRound:
    """A round checked and settled: the lines in seat order and the scorer's settlement dict."""

    rules: str
    tiplu: str | None
    turned: str | None
    winner: str | None
    finish: str | None
    lines: tuple[PlayerLine, ...]
    settlement: dict[str, Any] = field(default_factory=dict)

    @property
    def net(self) -> dict[str, int]:
        return dict(self.settlement["net"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules, "tiplu": self.tiplu, "turned": self.turned,
            "winner": self.winner, "finish": self.finish,
            "players": {line.name: player_dict(line, self.settlement["net"].get(line.name, 0), self.rules)
                        for line in self.lines},
            "net": self.net, "payments": list(self.settlement["payments"]),
            "adjustments": list(self.settlement.get("adjustments", [])),
        }


def player_dict(line: PlayerLine, net: int, rules: str) -> dict[str, Any]:
    """The JSON shape of one player's line (only the fields of the session's family)."""
    if rules == "rummy":
        return {"penalty": line.penalty,
                "cards": list(line.penalty_cards) if line.penalty_cards is not None else None,
                "penalty_detail": line.penalty_detail, "wrong_close": line.wrong_close, "net": net}
    return {"seen": line.seen, "seen_by": line.seen_by, "maal": line.maal,
            "cards": list(line.maal_cards) if line.maal_cards is not None else None,
            "maal_items": list(line.maal_items), "dealt_tunnelas": list(line.dealt_tunnelas),
            "false_declaration": line.false_declaration, "net": net}


def whole_number(value: Any, what: str, *, minimum: int | None = 0) -> int:
    """Read a whole number from JSON (int) or a form (digits); reject anything else.

    >>> whole_number("12", "Ben's maal")
    12
    >>> whole_number(2.5, "Ben's maal")
    Traceback (most recent call last):
    ...
    web.rounds.InputError: Ben's maal: '2.5' is not a whole number
    """
    if isinstance(value, bool) or value is None:
        raise InputError(_("%(what)s: '%(value)s' is not a whole number", what=what, value=value))
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    else:
        raise InputError(_("%(what)s: '%(value)s' is not a whole number", what=what, value=value))
    if minimum is not None and number < minimum:
        raise InputError(_("%(what)s: %(number)s is below %(minimum)s", what=what, number=number, minimum=minimum))
    return number


def yes_no(value: Any, what: str) -> bool:
    """Read a yes/no from JSON (bool) or a form (``on``, ``true``, ``1``, ...)."""
    if isinstance(value, bool):
        return value
    if value is None:
        return False
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on", "y"}:
        return True
    if text in {"0", "false", "no", "off", "n", ""}:
        return False
    raise InputError(_("%(what)s: '%(value)s' is not yes or no (use true or false)", what=what, value=value))


def _card(value: Any, what: str) -> Card | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if not isinstance(value, str):
        raise InputError(_("%(what)s: '%(value)s' is not a card (write it like 'JC' or '10H')", what=what, value=value))
    try:
        return parse_card(value)
    except TipluError as error:
        raise InputError(f"{what}: {error}") from None


def _cards(value: Any, what: str, rules: RuleSet) -> list[Card] | None:
    """Parse a list of card names (or text) and reject more copies than the decks hold."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
    elif not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(_('%(what)s: give the cards as a list of names like ["10C", "JC"]', what=what))
    try:
        cards = parse_cards(value)
        check_copies(cards, decks=rules.decks, jokers=rules.printed_jokers)
    except TipluError as error:
        raise InputError(f"{what}: {error}") from None
    return cards


def resolve_name(name: Any, players: Sequence[str], what: str) -> str:
    """Find a session player by name (exact, then ignoring case)."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(_("%(what)s: give a player's name (one of %(players)s)", what=what, players=", ".join(players)))
    if name in players:
        return name
    folded = {p.casefold(): p for p in players}
    found = folded.get(name.strip().casefold())
    if found is None:
        raise InputError(_("%(what)s: unknown player '%(name)s' (players: %(players)s)", what=what, name=name,
                           players=", ".join(players)))
    return found


def score_round(rules: RuleSet, players: Sequence[str], payload: Mapping[str, Any]) -> ScoredRound:
    """Check a round payload for these players and settle it with the scorer.

    Raises :class:`InputError` (or another :class:`~scorer.TipluError`) naming
    the field to fix; nothing is stored here.
    """
    if not isinstance(payload, Mapping):
        raise InputError(_("send the round as a JSON object with tiplu, winner, finish and players"))
    unknown = set(payload) - ROUND_FIELDS
    if unknown:
        raise InputError(_("unknown field %(fields)s (use %(allowed)s)", fields=", ".join(sorted(map(repr, unknown))),
                           allowed=", ".join(sorted(ROUND_FIELDS))))
    entries = payload.get("players")
    if not isinstance(entries, Mapping) or not entries:
        raise InputError(_('players: give an object with one entry per player, '
                           'e.g. {"Anna": {"seen": true, "maal": 5}}'))
    by_name: dict[str, Mapping[str, Any]] = {}
    for raw_name, entry in entries.items():
        name = resolve_name(raw_name, players, "players")
        if name in by_name:
            raise InputError(_("players: '%(name)s' is given twice", name=name))
        if entry is None:
            entry = {}
        if not isinstance(entry, Mapping):
            raise InputError(_('players.%(name)s: give an object like {"seen": true, "maal": 5}', name=name))
        by_name[name] = entry
    missing = [p for p in players if p not in by_name]
    if missing:
        raise InputError(_("players: missing %(names)s (give every player of the session)", names=", ".join(missing)))

    winner = payload.get("winner")
    winner = None if winner in (None, "") else resolve_name(winner, players, "winner")
    finish = payload.get("finish")
    finish = None if finish in (None, "") else finish
    if finish is not None and finish not in FINISHES:
        raise InputError(_("finish: '%(finish)s' is not one of %(allowed)s (or leave it empty)", finish=finish,
                           allowed=", ".join(FINISHES)))
    if winner is None and finish is not None:
        raise InputError(_("finish: a round without a winner has no finish (pick the winner or clear finish)"))
    if winner is not None and finish is None:
        finish = "melds"

    if rules.name == "rummy":
        return _score_rummy(rules, players, by_name, payload, winner, finish)
    return _score_nepali(rules, players, by_name, payload, winner, finish)


def _check_fields(name: str, entry: Mapping[str, Any], allowed: frozenset[str], family: str) -> None:
    unknown = set(entry) - allowed
    if unknown:
        raise InputError(_("players.%(name)s: unknown field %(fields)s for %(family)s rules (use %(allowed)s)",
                           name=name, fields=", ".join(sorted(map(repr, unknown))), family=family,
                           allowed=", ".join(sorted(allowed))))


def _score_nepali(rules: RuleSet, players: Sequence[str], by_name: Mapping[str, Mapping[str, Any]],
                  payload: Mapping[str, Any], winner: str | None, finish: str | None) -> ScoredRound:
    if payload.get("turned") not in (None, ""):
        raise InputError(_("turned: the nepali rules use a tiplu, not a turned card (send tiplu)"))
    tiplu = _card(payload.get("tiplu"), "tiplu")
    lines: list[PlayerLine] = []
    for seat, name in enumerate(players):
        entry = by_name[name]
        _check_fields(name, entry, NEPALI_FIELDS, "nepali")
        seen = yes_no(entry.get("seen"), f"players.{name}.seen")
        false_declaration = yes_no(entry.get("false_declaration"), f"players.{name}.false_declaration")
        seen_by = entry.get("seen_by") or None
        if seen_by is not None and seen_by not in FINISHES:
            raise InputError(_("players.%(name)s.seen_by: '%(value)s' is not one of %(allowed)s", name=name,
                                   value=seen_by, allowed=", ".join(FINISHES)))
        cards = _cards(entry.get("cards"), f"players.{name}.cards", rules)
        tunnelas = _cards(entry.get("dealt_tunnelas"), f"players.{name}.dealt_tunnelas", rules) or []
        number = entry.get("maal")
        has_number = number not in (None, "")
        if cards is not None and has_number:
            raise InputError(_("players.%(name)s: give maal as a number or as cards, not both", name=name))
        if cards is not None or tunnelas:
            if tiplu is None:
                raise InputError(_("tiplu: needed to value %(name)s's maal cards (tap the tiplu)", name=name))
            try:
                result = maal_points(cards or [], rules, tiplu, seen=seen, dealt_tunnelas=tuple(tunnelas))
            except TipluError as error:
                raise InputError(f"players.{name}.cards: {error}") from None
            data = result.to_dict()
            lines.append(PlayerLine(name, seat, seen, seen_by, int(data["total"]),
                                    tuple(str(c) for c in cards or []), tuple(data["items"]),
                                    tuple(str(c) for c in tunnelas), false_declaration=false_declaration))
        else:
            maal = whole_number(number, f"players.{name}.maal") if has_number else 0
            lines.append(PlayerLine(name, seat, seen, seen_by, maal, false_declaration=false_declaration))
    rounds = [PlayerRound(line.name, maal=line.maal or 0, seen=line.seen, seen_by=line.seen_by,
                          false_declaration=line.false_declaration) for line in lines]
    settlement = settle_round(rules, rounds, winner, finish).to_dict()
    return ScoredRound(rules.name, str(tiplu) if tiplu else None, None, winner, finish,
                       tuple(lines), settlement)


def _score_rummy(rules: RuleSet, players: Sequence[str], by_name: Mapping[str, Mapping[str, Any]],
                 payload: Mapping[str, Any], winner: str | None, finish: str | None) -> ScoredRound:
    if payload.get("tiplu") not in (None, ""):
        raise InputError(_("tiplu: the rummy rules use a turned card, not a tiplu (send turned)"))
    turned = _card(payload.get("turned"), "turned")
    lines: list[PlayerLine] = []
    for seat, name in enumerate(players):
        entry = by_name[name]
        _check_fields(name, entry, RUMMY_FIELDS, "rummy")
        wrong_close = yes_no(entry.get("wrong_close"), f"players.{name}.wrong_close")
        cards = _cards(entry.get("cards"), f"players.{name}.cards", rules)
        number = entry.get("penalty")
        has_number = number not in (None, "")
        if cards is not None and has_number:
            raise InputError(_("players.%(name)s: give the penalty as a number or as cards, not both", name=name))
        if cards is not None:
            if turned is None:
                raise InputError(_("turned: needed to count %(name)s's penalty cards (tap the turned card)", name=name))
            try:
                result = penalty_points(cards, rules, turned)
            except TipluError as error:
                raise InputError(f"players.{name}.cards: {error}") from None
            detail = result.to_dict()
            lines.append(PlayerLine(name, seat, penalty=int(result.penalty),
                                    penalty_cards=tuple(str(c) for c in cards),
                                    penalty_detail=detail, wrong_close=wrong_close))
        else:
            penalty = whole_number(number, f"players.{name}.penalty") if has_number else None
            lines.append(PlayerLine(name, seat, penalty=penalty, wrong_close=wrong_close))
    rounds = [PlayerRound(line.name, penalty=line.penalty, wrong_close=line.wrong_close) for line in lines]
    settlement = settle_round(rules, rounds, winner, finish).to_dict()
    return ScoredRound(rules.name, None, str(turned) if turned else None, winner, finish,
                       tuple(lines), settlement)
