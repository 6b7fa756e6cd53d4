"""Score a round as entered at the table: the scorer values cards and settles, nothing is computed here.

The web form and the JSON API both become a :class:`~web.payloads.RoundEntry`
(checked input); :func:`score_round` lets the scorer value maal or penalty cards
and settle the round, and returns a :class:`ScoredRound` ready to be stored or
previewed. Maal, penalty and settlement all come from :mod:`scorer`.

>>> from scorer import get_rules
>>> from web.payloads import round_entry
>>> payload = {"tiplu": "JC", "winner": "Anna", "finish": "melds",
...            "players": {"Anna": {"seen": True, "maal": 5}, "Ben": {"seen": True, "maal": 2}}}
>>> scored = score_round(round_entry(payload, ["Anna", "Ben"], get_rules("nepali")))
>>> sum(scored.settlement["net"].values())
0
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from scorer import RuleSet, TipluError
from scorer.kinds import Route, Scoring
from scorer.maal import maal_points
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round
from web.errors import BadRequest
from web.i18n import _, translate
from web.payloads import PlayerEntry, RoundEntry


@dataclass(frozen=True)
class PlayerLine:
    """One player's part of a round, as entered plus what the scorer made of it."""

    name: str
    seat: int
    seen: bool = False
    seen_by: Route | None = None
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

    rules: RuleSet
    tiplu: str | None
    turned: str | None
    winner: str | None
    finish: Route | None
    lines: tuple[PlayerLine, ...]
    settlement: dict[str, Any] = field(default_factory=dict)

    @property
    def net(self) -> dict[str, int]:
        return dict(self.settlement["net"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": self.rules.name, "tiplu": self.tiplu, "turned": self.turned,
            "winner": self.winner, "finish": self.finish,
            "players": {line.name: player_dict(line, self.settlement["net"].get(line.name, 0),
                                                    self.rules.scoring)
                        for line in self.lines},
            "net": self.net, "payments": list(self.settlement["payments"]),
            "adjustments": list(self.settlement.get("adjustments", [])),
        }


def player_dict(line: PlayerLine, net: int, scoring: Scoring) -> dict[str, Any]:
    """The JSON shape of one player's line: only the fields of how the family scores."""
    if scoring == Scoring.PENALTY:
        return {"penalty": line.penalty,
                "cards": list(line.penalty_cards) if line.penalty_cards is not None else None,
                "penalty_detail": line.penalty_detail, "wrong_close": line.wrong_close, "net": net}
    return {"seen": line.seen, "seen_by": line.seen_by, "maal": line.maal,
            "cards": list(line.maal_cards) if line.maal_cards is not None else None,
            "maal_items": list(line.maal_items), "dealt_tunnelas": list(line.dealt_tunnelas),
            "false_declaration": line.false_declaration, "net": net}




def _maal_line(player: PlayerEntry, entry: RoundEntry) -> PlayerLine:
    if player.cards is None:
        return PlayerLine(player.name, player.seat, player.seen, player.seen_by, player.maal,
                          false_declaration=player.false_declaration)
    if entry.tiplu is None:
        raise BadRequest(_("tiplu: needed to value %(name)s's maal cards (tap the tiplu)", name=player.name))
    try:
        result = maal_points(player.cards, entry.rules, entry.tiplu, seen=player.seen,
                             dealt_tunnelas=player.dealt_tunnelas)
    except TipluError as error:
        raise BadRequest(f"players.{player.name}.cards: {translate(error)}") from None
    data = result.to_dict()
    return PlayerLine(player.name, player.seat, player.seen, player.seen_by, int(data["total"]),
                      tuple(str(c) for c in player.cards), tuple(data["items"]),
                      tuple(str(c) for c in player.dealt_tunnelas), false_declaration=player.false_declaration)


def _penalty_line(player: PlayerEntry, entry: RoundEntry) -> PlayerLine:
    if player.cards is None:
        return PlayerLine(player.name, player.seat, penalty=player.penalty, wrong_close=player.wrong_close)
    if entry.turned is None:
        raise BadRequest(_("turned: needed to count %(name)s's penalty cards (tap the turned card)",
                           name=player.name))
    try:
        result = penalty_points(player.cards, entry.rules, entry.turned)
    except TipluError as error:
        raise BadRequest(f"players.{player.name}.cards: {translate(error)}") from None
    return PlayerLine(player.name, player.seat, penalty=int(result.penalty),
                      penalty_cards=tuple(str(c) for c in player.cards), penalty_detail=result.to_dict(),
                      wrong_close=player.wrong_close)


def _maal_round(line: PlayerLine) -> PlayerRound:
    return PlayerRound(line.name, maal=line.maal or 0, seen=line.seen, seen_by=line.seen_by,
                       false_declaration=line.false_declaration)


def _penalty_round(line: PlayerLine) -> PlayerRound:
    return PlayerRound(line.name, penalty=line.penalty, wrong_close=line.wrong_close)


#: How each kind of family turns an entered line into a scored line, and a scored line into the settlement's input.
LINE_SCORING: Mapping[Scoring, tuple[Callable[[PlayerEntry, RoundEntry], PlayerLine],
                                     Callable[[PlayerLine], PlayerRound]]] = {
    Scoring.MAAL: (_maal_line, _maal_round),
    Scoring.PENALTY: (_penalty_line, _penalty_round),
}


def score_round(entry: RoundEntry) -> ScoredRound:
    """Value each player's cards with the scorer and settle the round (nothing is stored here).

    Raises :class:`~web.errors.BadRequest` (or a :class:`~scorer.TipluError` from the
    settlement) naming what to fix.
    """
    score_line, settle_input = LINE_SCORING[entry.rules.scoring]
    lines = tuple(score_line(player, entry) for player in entry.players)
    settlement = settle_round(entry.rules, [settle_input(line) for line in lines], entry.winner,
                              entry.finish).to_dict()
    return ScoredRound(entry.rules, None if entry.tiplu is None else str(entry.tiplu),
                       None if entry.turned is None else str(entry.turned), entry.winner, entry.finish, lines,
                       settlement)
