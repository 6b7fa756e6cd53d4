"""Settlement of one round: who pays whom, and why.

Nepali (RULES.md 2.5) is zero-sum: every pair of players exchanges the
difference of their maal, so player i gets ``n·S_i − T``; every loser pays the
winner a fee (3 seen, 10 unseen, +5 each after a dublee finish). Rummy (RULES.md
3) adds penalty points; lower is better.

>>> from scorer import get_rules
>>> players = [PlayerRound("A", maal=10, seen=True), PlayerRound("B", maal=2, seen=True),
...            PlayerRound("C", maal=0, seen=False)]
>>> settle_round(get_rules(), players, winner="A", finish="melds").net
{'A': 31, 'B': -9, 'C': -22}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from scorer.errors import PlayerCountError, SettlementError
from scorer.kinds import FINISHES, Route, Scoring
from scorer.rules import RuleSet


@dataclass(frozen=True)
class PlayerRound:
    """One player's part in a round.

    Nepali: ``maal`` and ``seen`` (``seen_by`` is ``"melds"`` or ``"dublees"``,
    used by ``dublee_exempt``). Rummy: ``penalty`` points (the closer's are 0),
    and ``wrong_close`` when the player closed wrongly this round.
    ``false_declaration`` marks a nepali player who declared wrongly.
    """

    name: str
    maal: int = 0
    seen: bool = False
    seen_by: str | None = None
    penalty: int | None = None
    wrong_close: bool = False
    false_declaration: bool = False


@dataclass(frozen=True)
class Payment:
    """``payer`` pays ``payee`` ``points`` for ``reason``."""

    payer: str
    payee: str
    points: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.payer, "to": self.payee, "points": self.points, "reason": self.reason}


@dataclass(frozen=True)
class Adjustment:
    """A house rule that changed a player's counted maal or penalty, and why."""

    player: str
    before: int
    after: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"player": self.player, "before": self.before, "after": self.after, "reason": self.reason}


@dataclass(frozen=True)
class Settlement:
    """The round's result: ``net`` points per player and the itemised payments.

    ``lower_is_better`` is True when ``net`` are penalty points (rummy without
    per-round settlement); otherwise ``net`` sums to zero.
    """

    net: dict[str, int]
    payments: tuple[Payment, ...]
    adjustments: tuple[Adjustment, ...] = ()
    lower_is_better: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"net": dict(self.net), "payments": [p.to_dict() for p in self.payments],
                "adjustments": [a.to_dict() for a in self.adjustments],
                "lower_is_better": self.lower_is_better}


def verify_round(rules: RuleSet, players: Sequence[PlayerRound], winner: str | None,
                 finish: str | None) -> None:
    """Raise :class:`SettlementError` saying what is wrong with this round's input."""
    names = [p.name for p in players]
    if len(set(names)) != len(names):
        raise SettlementError("each player may appear only once in a round")
    try:
        rules.verify_players(len(players))
    except PlayerCountError as error:
        raise SettlementError(str(error)) from None
    if winner is not None and winner not in names:
        raise SettlementError(f"the winner '{winner}' is not one of the players ({', '.join(names)})")
    if rules.scoring == Scoring.MAAL:
        if winner is not None:
            if finish not in FINISHES:
                raise SettlementError(f"finish must be 'melds' or 'dublees', not {finish!r}")
            if not next(p for p in players if p.name == winner).seen:
                raise SettlementError(f"the winner '{winner}' must have seen the tiplu to finish")
            if finish == Route.DUBLEES and not rules.family.dublee_route:
                raise SettlementError(f"the {rules.name} rules have no dublee finish")
            if finish == Route.DUBLEES and len(players) < rules.number("dublee_min_players"):
                raise SettlementError(f"the dublee finish needs at least {rules.number('dublee_min_players')} players")
        for p in players:
            if p.maal < 0:
                raise SettlementError(f"{p.name}: maal cannot be negative ({p.maal})")
            if p.seen_by not in (None, *FINISHES):
                raise SettlementError(f"{p.name}: seen_by must be 'melds' or 'dublees'")
    else:
        for p in players:
            if p.name != winner and p.penalty is None:
                raise SettlementError(f"{p.name}: give the penalty points (or the cards) of every player but the closer")
            if p.penalty is not None and p.penalty < 0:
                raise SettlementError(f"{p.name}: penalty points cannot be negative ({p.penalty})")


def can_settle(rules: RuleSet, players: Sequence[PlayerRound], winner: str | None, finish: str | None) -> bool:
    try:
        verify_round(rules, players, winner, finish)
    except SettlementError:
        return False
    return True


def settle_round(rules: RuleSet, players: Sequence[PlayerRound], winner: str | None,
                 finish: str | None = "melds") -> Settlement:
    """Settle one round; ``winner`` None means nobody finished (maal only)."""
    verify_round(rules, players, winner, finish)
    if rules.scoring == Scoring.PENALTY:
        return _settle_penalty(rules, players, winner)
    return _settle_maal(rules, players, winner, finish)


def _settle_maal(rules: RuleSet, players: Sequence[PlayerRound], winner: str | None,
                   finish: str | None) -> Settlement:
    maal = {p.name: p.maal for p in players}
    adjustments: list[Adjustment] = []
    for p in players:
        if p.seen:
            continue
        if rules.flag("murder") and maal[p.name]:
            adjustments.append(Adjustment(p.name, maal[p.name], 0, "murder: an unseen player's maal counts 0"))
            maal[p.name] = 0
        if rules.flag("kidnap") and winner is not None and maal[p.name]:
            taken = maal[p.name]
            adjustments.append(Adjustment(p.name, taken, 0, f"kidnap: {winner} takes an unseen player's maal"))
            adjustments.append(Adjustment(winner, maal[winner], maal[winner] + taken,
                                          f"kidnap: takes {p.name}'s maal"))
            maal[winner] += taken
            maal[p.name] = 0
    payments: list[Payment] = []
    order = [p.name for p in players]
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1:]:
            diff = maal[a] - maal[b]
            if diff:
                payer, payee = (b, a) if diff > 0 else (a, b)
                payments.append(Payment(payer, payee, abs(diff),
                                        f"maal difference: {payee} {maal[payee]}, {payer} {maal[payer]}"))
    if winner is not None and rules.family.fees:
        payments.extend(_fees(rules, players, winner, finish))
    for p in players:
        if p.false_declaration:
            payments.extend(Payment(p.name, other, rules.number("invalid_declaration_fine"), "invalid declaration fine")
                            for other in order if other != p.name)
    payments = [pay for pay in payments if pay.points]
    return Settlement(_net(order, payments), tuple(payments), tuple(adjustments), lower_is_better=False)


def _fees(rules: RuleSet, players: Sequence[PlayerRound], winner: str, finish: str | None) -> list[Payment]:
    """What every loser pays the winner: the seen or unseen fee, and the dublee bonus."""
    fees = []
    for p in players:
        if p.name == winner:
            continue
        if p.seen:
            if not (rules.flag("dublee_exempt") and p.seen_by == Route.DUBLEES):
                fees.append(Payment(p.name, winner, rules.number("seen_fee"), "seen fee"))
        else:
            fees.append(Payment(p.name, winner, rules.number("unseen_fee"), "unseen fee"))
        if finish == Route.DUBLEES:
            fees.append(Payment(p.name, winner, rules.number("dublee_bonus"), "dublee finish bonus"))
    return fees


def _net(order: Sequence[str], payments: Sequence[Payment]) -> dict[str, int]:
    net = {name: 0 for name in order}
    for pay in payments:
        net[pay.payer] -= pay.points
        net[pay.payee] += pay.points
    return net


def _settle_penalty(rules: RuleSet, players: Sequence[PlayerRound], winner: str | None) -> Settlement:
    penalty: dict[str, int] = {}
    adjustments: list[Adjustment] = []
    cap = rules.number("max_penalty")
    for p in players:
        points = 0 if p.name == winner else int(p.penalty or 0)
        if p.name == winner and p.penalty:
            adjustments.append(Adjustment(p.name, p.penalty, 0, "the closer scores 0"))
        if cap and points > cap:
            adjustments.append(Adjustment(p.name, points, cap, f"max_penalty: a round's penalty is at most {cap}"))
            points = cap
        if p.wrong_close:
            adjustments.append(Adjustment(p.name, points, points + rules.number("wrong_close_penalty"), "wrong close"))
            points += rules.number("wrong_close_penalty")
        penalty[p.name] = points
    order = [p.name for p in players]
    if not rules.flag("per_round_settlement"):
        return Settlement(penalty, (), tuple(adjustments), lower_is_better=True)
    if winner is None:
        raise SettlementError("per-round settlement pays the closer: name the player who closed")
    payments = tuple(Payment(name, winner, penalty[name], f"{penalty[name]} penalty points")
                     for name in order if name != winner and penalty[name])
    return Settlement(_net(order, payments), payments, tuple(adjustments), lower_is_better=False)
