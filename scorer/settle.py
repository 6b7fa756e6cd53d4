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
from scorer.messages import Message, N_
from scorer.rules import RuleSet


#: Why a payment is made or a house rule changed a count. A ledger keeps these as English
#: text; a page reads them back with :func:`scorer.messages.recognise` to translate them.
MAAL_DIFFERENCE = N_("maal difference: %(payee)s %(payee_maal)s, %(payer)s %(payer_maal)s")
SEEN_FEE = N_("seen fee")
UNSEEN_FEE = N_("unseen fee")
DUBLEE_BONUS = N_("dublee finish bonus")
FALSE_DECLARATION_FINE = N_("invalid declaration fine")
PENALTY_STAKE = N_("%(n)s penalty points")
MURDER = N_("murder: an unseen player's maal counts 0")
KIDNAP_LOSER = N_("kidnap: %(winner)s takes an unseen player's maal")
KIDNAP_WINNER = N_("kidnap: takes %(name)s's maal")
CLOSER_SCORES_NOTHING = N_("the closer scores 0")
PENALTY_CAP = N_("max_penalty: a round's penalty is at most %(cap)s")
WRONG_CLOSE = N_("wrong close")
REASONS: tuple[str, ...] = (MAAL_DIFFERENCE, SEEN_FEE, UNSEEN_FEE, DUBLEE_BONUS, FALSE_DECLARATION_FINE, PENALTY_STAKE,
                            MURDER, KIDNAP_LOSER, KIDNAP_WINNER, CLOSER_SCORES_NOTHING, PENALTY_CAP, WRONG_CLOSE)


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
        raise SettlementError(N_("each player may appear only once in a round"))
    try:
        rules.verify_players(len(players))
    except PlayerCountError as error:
        raise SettlementError(error.message) from None
    if winner is not None and winner not in names:
        raise SettlementError(N_("the winner '%(winner)s' is not one of the players (%(players)s)"), winner=winner,
                              players=", ".join(names))
    if rules.scoring == Scoring.MAAL:
        if winner is not None:
            if finish not in FINISHES:
                raise SettlementError(N_("finish must be 'melds' or 'dublees', not %(finish)r"), finish=finish)
            if not next(p for p in players if p.name == winner).seen:
                raise SettlementError(N_("the winner '%(winner)s' must have seen the tiplu to finish"), winner=winner)
            if finish == Route.DUBLEES and not rules.family.dublee_route:
                raise SettlementError(N_("the %(rules)s rules have no dublee finish"), rules=rules.name)
            if finish == Route.DUBLEES and len(players) < rules.number("dublee_min_players"):
                raise SettlementError(N_("the dublee finish needs at least %(n)s players"),
                                      n=rules.number("dublee_min_players"))
        for p in players:
            if p.maal < 0:
                raise SettlementError(N_("%(name)s: maal cannot be negative (%(maal)s)"), name=p.name, maal=p.maal)
            if p.seen_by not in (None, *FINISHES):
                raise SettlementError(N_("%(name)s: seen_by must be 'melds' or 'dublees'"), name=p.name)
    else:
        for p in players:
            if p.name != winner and p.penalty is None:
                raise SettlementError(N_("%(name)s: give the penalty points (or the cards) of every player but "
                                         "the closer"), name=p.name)
            if p.penalty is not None and p.penalty < 0:
                raise SettlementError(N_("%(name)s: penalty points cannot be negative (%(penalty)s)"), name=p.name,
                                      penalty=p.penalty)
            if p.name == winner and p.wrong_close:
                raise SettlementError(N_("%(name)s closed this round, so cannot also have closed wrongly: "
                                         "untick the wrong close or pick who closed"), name=p.name)


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
            adjustments.append(Adjustment(p.name, maal[p.name], 0, Message(MURDER)))
            maal[p.name] = 0
        if rules.flag("kidnap") and winner is not None and maal[p.name]:
            taken = maal[p.name]
            adjustments.append(Adjustment(p.name, taken, 0, Message(KIDNAP_LOSER, winner=winner)))
            adjustments.append(Adjustment(winner, maal[winner], maal[winner] + taken,
                                          Message(KIDNAP_WINNER, name=p.name)))
            maal[winner] += taken
            maal[p.name] = 0
    payments: list[Payment] = []
    order = [p.name for p in players]
    for a_pos, a in enumerate(order):
        for b in order[a_pos + 1:]:
            diff = maal[a] - maal[b]
            if diff:
                payer, payee = (b, a) if diff > 0 else (a, b)
                payments.append(Payment(payer, payee, abs(diff), Message(
                    MAAL_DIFFERENCE, payee=payee, payee_maal=maal[payee], payer=payer, payer_maal=maal[payer])))
    if winner is not None and rules.family.fees:
        payments.extend(_fees(rules, players, winner, finish))
    for p in players:
        if p.false_declaration:
            payments.extend(Payment(p.name, other, rules.number("invalid_declaration_fine"),
                                    Message(FALSE_DECLARATION_FINE)) for other in order if other != p.name)
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
                fees.append(Payment(p.name, winner, rules.number("seen_fee"), Message(SEEN_FEE)))
        else:
            fees.append(Payment(p.name, winner, rules.number("unseen_fee"), Message(UNSEEN_FEE)))
        if finish == Route.DUBLEES:
            fees.append(Payment(p.name, winner, rules.number("dublee_bonus"), Message(DUBLEE_BONUS)))
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
            adjustments.append(Adjustment(p.name, p.penalty, 0, Message(CLOSER_SCORES_NOTHING)))
        if cap and points > cap:
            adjustments.append(Adjustment(p.name, points, cap, Message(PENALTY_CAP, cap=cap)))
            points = cap
        if p.wrong_close:
            adjustments.append(Adjustment(p.name, points, points + rules.number("wrong_close_penalty"),
                                          Message(WRONG_CLOSE)))
            points += rules.number("wrong_close_penalty")
        penalty[p.name] = points
    order = [p.name for p in players]
    if not rules.flag("per_round_settlement"):
        return Settlement(penalty, (), tuple(adjustments), lower_is_better=True)
    if winner is None:
        raise SettlementError(N_("per-round settlement pays the closer: name the player who closed"))
    payments = tuple(Payment(name, winner, penalty[name], Message(PENALTY_STAKE, n=penalty[name]))
                     for name in order if name != winner and penalty[name])
    return Settlement(_net(order, payments), payments, tuple(adjustments), lower_is_better=False)
