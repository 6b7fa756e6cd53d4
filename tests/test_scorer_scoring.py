"""Maal (RULES.md 2.4), settlement (2.5, 2.6) and rummy penalties (3): the worked examples and options."""

from __future__ import annotations

import pytest

from scorer import HandError, SettlementError, get_rules, parse_card, parse_cards
from scorer.maal import maal_points
from scorer.rummy import penalty_points
from scorer.settle import PlayerRound, settle_round

JC = parse_card("JC")


def _counts(tiplu: int, jhiplu: int, poplu: int) -> list:
    return parse_cards(" ".join(["JC"] * tiplu + ["10C"] * jhiplu + ["QC"] * poplu))


@pytest.mark.parametrize("cards, total", [
    ("10C JC QC", 10), ("10C JC QC QC", 12), ("JC", 3), ("JC JC", 7), ("10C", 2), ("10C 10C", 5),
    ("10C 10C 10C", 10), ("QC QC QC", 10), ("JD JH JS", 0), ("3S 4S 9H", 0),
])
def test_maal_examples(cards: str, total: int) -> None:
    assert maal_points(parse_cards(cards), get_rules(), JC).total == total


@pytest.mark.parametrize("counts, total", [((2, 2, 2), 30), ((1, 2, 3), 18), ((2, 1, 1), 13), ((0, 3, 3), 20),
                                           ((1, 3, 3), 23), ((2, 3, 3), 34)])
def test_maal_takes_the_best_grouping(counts: tuple[int, int, int], total: int) -> None:
    assert maal_points(_counts(*counts), get_rules(), JC).total == total


def test_marriage_is_not_always_best() -> None:
    result = maal_points(_counts(1, 3, 3), get_rules(), JC)
    assert [item.label for item in result.items] == ["tiplu", "jhiplu ×3", "poplu ×3"]


def test_maal_items_are_itemised() -> None:
    result = maal_points(parse_cards("10C JC QC QC 3S"), get_rules(), JC)
    assert result.to_dict() == {"total": 12, "items": [
        {"label": "marriage", "cards": ["10C", "JC", "QC"], "points": 10},
        {"label": "poplu", "cards": ["QC"], "points": 2}]}


@pytest.mark.parametrize("option, value, counts, total", [
    ("tiplu_pair", 8, (2, 0, 0), 8), ("double_marriage", 25, (2, 2, 2), 25),
])
def test_maal_options(option: str, value: int, counts: tuple[int, int, int], total: int) -> None:
    assert maal_points(_counts(*counts), get_rules("nepali", {option: value}), JC).total == total


def test_alter_and_printed_jokers() -> None:
    rules = get_rules("nepali", {"alter": True, "printed_jokers": 3, "printed_joker_points": 5})
    result = maal_points(parse_cards("JS JS JD JOKER"), rules, JC)
    assert result.total == 15  # 2 alter x 5 + 1 printed joker; JD is an ordinary joker (0)


@pytest.mark.parametrize("tunnela, bonus", [("6H", 5), ("JD", 10), ("10C", 20), ("QC", 20)])
def test_dealt_tunnela_bonus(tunnela: str, bonus: int) -> None:
    cards = parse_cards(" ".join([tunnela] * 3))
    result = maal_points(cards, get_rules(), JC, dealt_tunnelas=[parse_card(tunnela)])
    assert result.total == bonus  # for jhiplu/poplu the 20 replaces their 10


def test_dealt_tunnela_needs_seen_by_default() -> None:
    cards = parse_cards("6H 6H 6H")
    assert maal_points(cards, get_rules(), JC, seen=False, dealt_tunnelas=[parse_card("6H")]).total == 0
    rules = get_rules("nepali", {"tunnela_requires_seen": False})
    assert maal_points(cards, rules, JC, seen=False, dealt_tunnelas=[parse_card("6H")]).total == 5


def test_a_later_tunnela_earns_no_bonus_but_keeps_its_maal() -> None:
    assert maal_points(parse_cards("10C 10C 10C"), get_rules(), JC).total == 10


def test_dealt_tunnela_must_be_in_the_cards() -> None:
    with pytest.raises(HandError, match="hold 1 of its 3 copies"):
        maal_points(parse_cards("6H"), get_rules(), JC, dealt_tunnelas=[parse_card("6H")])


def _players(*rows: tuple[str, int, bool]) -> list[PlayerRound]:
    return [PlayerRound(name, maal=maal, seen=seen) for name, maal, seen in rows]


def test_settlement_example_1() -> None:
    players = _players(("Anna", 5, True), ("Ben", 2, True), ("Carla", 10, True), ("Dan", 3, False))
    settlement = settle_round(get_rules(), players, "Anna", "melds")
    assert settlement.net == {"Anna": 16, "Ben": -15, "Carla": 17, "Dan": -18}
    fees = [(p.payer, p.points, p.reason) for p in settlement.payments if "fee" in p.reason]
    assert fees == [("Ben", 3, "seen fee"), ("Carla", 3, "seen fee"), ("Dan", 10, "unseen fee")]


def test_settlement_example_2() -> None:
    settlement = settle_round(get_rules(), _players(("A", 10, True), ("B", 2, True), ("C", 0, False)), "A", "melds")
    assert settlement.net == {"A": 31, "B": -9, "C": -22}


def test_maal_results_are_n_times_s_minus_t() -> None:
    players = _players(("Anna", 5, True), ("Ben", 2, True), ("Carla", 10, True), ("Dan", 3, False))
    assert settle_round(get_rules(), players, None, None).net == {"Anna": 0, "Ben": -12, "Carla": 20, "Dan": -8}


def test_dublee_finish_adds_the_bonus() -> None:
    settlement = settle_round(get_rules(), _players(("A", 0, True), ("B", 0, True), ("C", 0, False)), "A", "dublees")
    assert settlement.net == {"A": 3 + 5 + 10 + 5, "B": -8, "C": -15}


@pytest.mark.parametrize("options, net", [
    ({"murder": True}, {"A": 3 + 10 + 3 * 10 - 12, "B": -3 + 3 * 2 - 12, "C": -10 + 0 - 12}),
    ({"kidnap": True}, {"A": 3 + 10 + 3 * 16 - 18, "B": -3 + 3 * 2 - 18, "C": -10 - 18}),
    ({"seen_fee": 5, "unseen_fee": 15}, {"A": 5 + 15 + 3 * 10 - 18, "B": -5 + 6 - 18, "C": -15 + 18 - 18}),
])
def test_settlement_options(options: dict, net: dict) -> None:
    players = _players(("A", 10, True), ("B", 2, True), ("C", 6, False))
    settlement = settle_round(get_rules("nepali", options), players, "A", "melds")
    assert settlement.net == net
    assert sum(settlement.net.values()) == 0


def test_dublee_exempt_spares_a_dublee_player_the_seen_fee() -> None:
    players = [PlayerRound("A", seen=True), PlayerRound("B", seen=True, seen_by="dublees")]
    rules = get_rules("nepali", {"dublee_exempt": True})
    assert settle_round(rules, players, "A", "melds").net == {"A": 0, "B": 0}


def test_invalid_declaration_fine() -> None:
    players = [PlayerRound("A", seen=True), PlayerRound("B", seen=True, false_declaration=True),
               PlayerRound("C", seen=False)]
    rules = get_rules("nepali", {"invalid_declaration_fine": 15})
    assert settle_round(rules, players, None, None).net == {"A": 15, "B": -30, "C": 15}


@pytest.mark.parametrize("players, winner, message", [
    (_players(("A", 1, True), ("B", 2, False)), "B", "must have seen"),
    (_players(("A", 1, True), ("B", 2, False)), "Z", "not one of the players"),
    (_players(("A", 1, True)), "A", "2 to 5 players"),
    (_players(("A", 1, True), ("A", 2, True)), "A", "only once"),
])
def test_settlement_input_errors(players: list, winner: str, message: str) -> None:
    with pytest.raises(SettlementError, match=message):
        settle_round(get_rules(), players, winner, "melds")


SEVEN_D = parse_card("7D")


@pytest.mark.parametrize("cards, penalty", [
    ("3S 4S 5S 9H 9D 9C KH 2D", 12),
    ("3S 4H 5S 9H", 3 + 4 + 5 + 9),  # no life: every card counts
    ("AS 2S 3S AH", 10), ("AS 2S 3S 8H", 20),  # an unmatched wild (8 with 7 turned) counts 20
    ("3S 4S 5S 8H 8D KC", 0),
])
def test_rummy_penalties(cards: str, penalty: int) -> None:
    assert penalty_points(parse_cards(cards), get_rules("rummy"), SEVEN_D).penalty == penalty


def test_rummy_ace_points_option() -> None:
    rules = get_rules("rummy", {"ace_points": 1})
    assert penalty_points(parse_cards("3S 4S 5S AH"), rules, SEVEN_D).penalty == 1


def test_rummy_settlement_is_penalty_points() -> None:
    players = [PlayerRound("A"), PlayerRound("B", penalty=23), PlayerRound("C", penalty=5, wrong_close=True)]
    settlement = settle_round(get_rules("rummy"), players, "A", None)
    assert settlement.net == {"A": 0, "B": 23, "C": 85} and settlement.lower_is_better


def test_rummy_per_round_settlement_pays_the_closer() -> None:
    players = [PlayerRound("A"), PlayerRound("B", penalty=23), PlayerRound("C", penalty=5)]
    settlement = settle_round(get_rules("rummy", {"per_round_settlement": True}), players, "A", None)
    assert settlement.net == {"A": 28, "B": -23, "C": -5} and not settlement.lower_is_better
