"""Payments people can pay: pair netting and the evening's fewest payments keep every player's net."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scorer import SettlementError, get_rules
from scorer.payments import evening_net, fewest_payments, net_pairs, read_settlement
from scorer.settle import Payment, PlayerRound, Settlement, settle_round

NAMES = ["Hari", "Sita", "Ram", "Gita", "Anna", "Ben"]


def net_of(payments: list[Payment] | tuple[Payment, ...], names: list[str]) -> dict[str, int]:
    net = dict.fromkeys(names, 0)
    for pay in payments:
        net[pay.payer] -= pay.points
        net[pay.payee] += pay.points
    return net


@st.composite
def nepali_rounds(draw: st.DrawFn) -> Settlement:
    """A real settlement from the scorer: random maal, seen flags, winner and finish."""
    count = draw(st.integers(2, 6))
    names = NAMES[:count]
    rules = get_rules("nepali", {"players_max": 6, "invalid_declaration_fine": draw(st.sampled_from([0, 5]))})
    winner = draw(st.sampled_from([None, *names]))
    players = [PlayerRound(name, maal=draw(st.integers(0, 40)), seen=name == winner or draw(st.booleans()),
                           false_declaration=name != winner and draw(st.booleans()))
               for name in names]
    return settle_round(rules, players, winner, "melds" if winner else None)


@given(nepali_rounds())
def test_pair_lines_keep_every_net_and_name_each_pair_once(settlement: Settlement) -> None:
    lines = net_pairs(settlement.payments)
    names = list(settlement.net)
    as_payments = [Payment(line.payer, line.payee, line.points, "net") for line in lines]
    assert net_of(as_payments, names) == settlement.net
    pairs = [frozenset((line.payer, line.payee)) for line in lines]
    assert len(pairs) == len(set(pairs))
    assert all(line.points > 0 for line in lines)
    assert sum(len(line.items) for line in lines) <= len(settlement.payments)


@given(st.lists(nepali_rounds(), min_size=1, max_size=8))
def test_fewest_payments_keep_every_net_in_at_most_n_minus_1(settlements: list[Settlement]) -> None:
    names = sorted({name for s in settlements for name in s.net})
    net = {name: sum(s.net.get(name, 0) for s in settlements) for name in names}
    assert evening_net(settlements) == {n: net[n] for n in evening_net(settlements)}
    plan = fewest_payments(net)
    assert net_of(plan, names) == net
    movers = [n for n in names if net[n]]
    assert len(plan) <= max(len(movers) - 1, 0)
    assert all(pay.points > 0 and pay.payer != pay.payee for pay in plan)


def brute_force_fewest(net: dict[str, int]) -> int:
    """The fewest payments by trying every split into zero-sum groups (small inputs only)."""
    movers = [n for n in net if net[n]]
    if not movers:
        return 0
    first, rest = movers[0], movers[1:]
    best = len(movers) - 1
    for size in range(1, len(rest)):
        for group in combinations(rest, size):
            if net[first] + sum(net[g] for g in group) == 0:
                others = {n: net[n] for n in rest if n not in group}
                best = min(best, size + brute_force_fewest(others))
    return best


@given(st.lists(st.integers(-30, 30), min_size=1, max_size=6))
def test_fewest_payments_is_the_true_minimum(values: list[int]) -> None:
    net = dict(zip(NAMES, values + [-sum(values)]))
    if len(net) < len(values) + 1:
        return
    assert len(fewest_payments(net)) == brute_force_fewest(net)


def test_two_pairs_that_cancel_pay_twice_not_three_times() -> None:
    plan = fewest_payments({"Hari": 6, "Sita": -6, "Ram": 4, "Gita": -4})
    assert [(p.payer, p.payee, p.points) for p in plan] == [("Sita", "Hari", 6), ("Gita", "Ram", 4)]


def test_a_round_folds_to_one_line_per_pair_with_its_breakdown() -> None:
    rules = get_rules("nepali")
    settlement = settle_round(rules, [PlayerRound("Hari", 2, seen=True), PlayerRound("Sita", 10, seen=True),
                                      PlayerRound("Ram", 0, seen=False)], "Hari", "melds")
    lines = {(line.payer, line.payee): line for line in net_pairs(settlement.payments)}
    # Hari pays Sita 8 for maal and gets a 3 seen fee back: one line of 5.
    assert lines[("Hari", "Sita")].points == 5
    assert [item.reason for item in lines[("Hari", "Sita")].items] == [
        "maal difference: Sita 10, Hari 2", "seen fee"]
    assert read_settlement(settlement.to_dict()) == settlement


def test_penalty_points_and_unbalanced_nets_are_refused() -> None:
    with pytest.raises(SettlementError, match="penalty points"):
        evening_net([Settlement({"A": 10, "B": 0}, (), lower_is_better=True)])
    with pytest.raises(SettlementError, match="sum to zero"):
        fewest_payments({"A": 3, "B": -2})
