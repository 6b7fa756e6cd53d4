"""Payments people can pay: one line per pair for a round, and the fewest payments for an evening.

A nepali round settles as many itemised :class:`~scorer.settle.Payment` lines (a maal
difference per pair, then fees), so the same two people can appear three times.
:func:`net_pairs` folds them into one line per pair, keeping the items as the
breakdown. At the end of an evening :func:`fewest_payments` turns everyone's net
into the smallest number of payments that leaves every player with the same net.
Both work only on the scorer's own result objects; nothing is recomputed.

>>> from scorer.settle import Payment
>>> items = [Payment("Hari", "Sita", 8, "maal difference"), Payment("Sita", "Hari", 5, "seen fee"),
...          Payment("Hari", "Sita", 3, "seen fee")]
>>> [line.sentence() for line in net_pairs(items)]
['Hari pays Sita 6']
>>> [p.to_dict() for p in fewest_payments({"Anna": 5, "Ben": -3, "Carla": -2})]
[{'from': 'Ben', 'to': 'Anna', 'points': 3, 'reason': 'evening'}, {'from': 'Carla', 'to': 'Anna', 'points': 2, 'reason': 'evening'}]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from scorer.errors import SettlementError
from scorer.messages import Message, N_
from scorer.settle import Adjustment, Payment, Settlement

#: The ``reason`` of a payment that settles a whole evening.
EVENING = N_("evening")
#: Above this many players with a non-zero net, the exact search gives way to a plain greedy plan.
EXACT_LIMIT = 16


@dataclass(frozen=True)
class PairLine:
    """What ``payer`` owes ``payee`` after netting every item between the two, and the items.

    ``points`` is positive; ``items`` are the round's payments between the pair, in order.
    """

    payer: str
    payee: str
    points: int
    items: tuple[Payment, ...]

    def sentence(self) -> Message:
        """The line in words (a page translates it; the names stay as they are)."""
        return Message(N_("%(payer)s pays %(payee)s %(points)s"), payer=self.payer, payee=self.payee,
                       points=self.points)

    def to_dict(self) -> dict[str, Any]:
        return {"from": self.payer, "to": self.payee, "points": self.points,
                "items": [item.to_dict() for item in self.items]}


def read_settlement(data: Mapping[str, Any]) -> Settlement:
    """A :class:`Settlement` back from its :meth:`Settlement.to_dict` form (as a ledger stores it).

    >>> read_settlement({"net": {"A": 3, "B": -3}, "payments": [{"from": "B", "to": "A", "points": 3,
    ...                  "reason": "seen fee"}]}).payments[0].payer
    'B'
    """
    return Settlement(
        dict(data["net"]),
        tuple(Payment(p["from"], p["to"], int(p["points"]), p["reason"]) for p in data.get("payments", ())),
        tuple(Adjustment(a["player"], a["before"], a["after"], a["reason"]) for a in data.get("adjustments", ())),
        bool(data.get("lower_is_better", False)))


def net_pairs(payments: Sequence[Payment]) -> tuple[PairLine, ...]:
    """One line per pair of players, in the order the pair first appears; pairs that cancel out are left out.

    >>> net_pairs([Payment("A", "B", 4, "x"), Payment("B", "A", 4, "y")])
    ()
    """
    balance: dict[frozenset[str], int] = {}
    items: dict[frozenset[str], list[Payment]] = {}
    first: dict[frozenset[str], tuple[str, str]] = {}
    for payment in payments:
        if payment.payer == payment.payee:
            continue
        pair = frozenset((payment.payer, payment.payee))
        first.setdefault(pair, (payment.payer, payment.payee))
        payer, _payee = first[pair]
        balance[pair] = balance.get(pair, 0) + (payment.points if payment.payer == payer else -payment.points)
        items.setdefault(pair, []).append(payment)
    lines = []
    for pair, (payer, payee) in first.items():
        owed = balance[pair]
        if owed:
            lines.append(PairLine(payer, payee, owed, tuple(items[pair])) if owed > 0
                         else PairLine(payee, payer, -owed, tuple(items[pair])))
    return tuple(lines)


def evening_net(settlements: Iterable[Settlement]) -> dict[str, int]:
    """Each player's net over many rounds (players in the order they first appear).

    Penalty totals (``lower_is_better``) are no money that changes hands, so they are refused.
    """
    total: dict[str, int] = {}
    for settlement in settlements:
        if settlement.lower_is_better:
            raise SettlementError(N_("penalty points are not paid between players; nothing to settle"))
        for name, points in settlement.net.items():
            total[name] = total.get(name, 0) + points
    return total


def _zero_sum_groups(names: Sequence[str], net: Mapping[str, int]) -> list[list[str]]:
    """Split the players into the most groups that each sum to zero (exact: dynamic programming on subsets).

    A group of k players settles in k-1 payments, so the most groups means the fewest payments.
    """
    n = len(names)
    sums = [0] * (1 << n)
    for mask in range(1, 1 << n):
        low = (mask & -mask).bit_length() - 1
        sums[mask] = sums[mask & (mask - 1)] + net[names[low]]
    # best[mask]: the most zero-sum groups that exactly cover ``mask`` (a zero-sum set), -1 if impossible.
    best = [-1] * (1 << n)
    choice = [0] * (1 << n)
    best[0] = 0
    for mask in range(1, 1 << n):
        if sums[mask]:
            continue
        low = mask & -mask
        sub = mask
        while sub:
            if sub & low and sums[sub] == 0 and best[mask ^ sub] >= 0 and best[mask ^ sub] + 1 > best[mask]:
                best[mask] = best[mask ^ sub] + 1
                choice[mask] = sub
            sub = (sub - 1) & mask
    groups = []
    mask = (1 << n) - 1
    while mask:
        sub = choice[mask]
        groups.append([names[i] for i in range(n) if sub >> i & 1])
        mask ^= sub
    return groups


def _settle_group(names: Sequence[str], net: Mapping[str, int]) -> list[Payment]:
    """Settle a zero-sum group in at most ``len(names) - 1`` payments: largest debtor pays largest creditor."""
    owing = {name: -net[name] for name in names if net[name] < 0}
    owed = {name: net[name] for name in names if net[name] > 0}
    order = {name: index for index, name in enumerate(names)}
    payments = []
    while owing:
        debtor = max(owing, key=lambda name: (owing[name], -order[name]))
        creditor = max(owed, key=lambda name: (owed[name], -order[name]))
        points = min(owing[debtor], owed[creditor])
        payments.append(Payment(debtor, creditor, points, Message(EVENING)))
        for side, name in ((owing, debtor), (owed, creditor)):
            side[name] -= points
            if not side[name]:
                del side[name]
    return payments


def fewest_payments(net: Mapping[str, int]) -> tuple[Payment, ...]:
    """The fewest payments after which every player has received (or paid) exactly their ``net``.

    Never more than one fewer than the players with a non-zero net. ``net`` must sum to zero.

    >>> [p.to_dict()["points"] for p in fewest_payments({"A": 4, "B": -4, "C": 7, "D": -7})]
    [7, 4]
    """
    if sum(net.values()):
        raise SettlementError(N_("the nets do not sum to zero (%(sum)s); nothing can settle them"),
                              sum=sum(net.values()))
    names = [name for name, points in net.items() if points]
    if len(names) > EXACT_LIMIT:
        return tuple(_settle_group(names, net))
    payments = [pay for group in _zero_sum_groups(names, net) for pay in _settle_group(group, net)]
    return tuple(sorted(payments, key=lambda pay: -pay.points))


__all__ = ["EVENING", "PairLine", "evening_net", "fewest_payments", "net_pairs", "read_settlement"]
