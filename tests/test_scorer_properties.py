"""Property tests: settlement is zero-sum, melds are real and partition the hand,
maal ignores card order, and the fast search agrees with a plain brute force."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer import Route, get_rules
from scorer import parse_card, parse_cards
from scorer.declare import check_hand, find_melds
from scorer.maal import maal_points
from scorer.melds import classify_meld
from scorer.partition import Partitioner
from scorer.reference import brute_cover, brute_force_finishes, brute_max_melds
from scorer.settle import PlayerRound, settle_round
from scorer.wilds import wild_cards
from strategies import meld_built_hand, random_hand

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])


@st.composite
def rounds(draw: st.DrawFn):
    n = draw(st.integers(2, 5))
    names = [f"P{i}" for i in range(n)]
    players = [PlayerRound(name, maal=draw(st.integers(0, 80)), seen=draw(st.booleans()),
                           seen_by=draw(st.sampled_from([None, "melds", "dublees"])),
                           false_declaration=draw(st.booleans()))
               for name in names]
    seen = [p.name for p in players if p.seen]
    winner = draw(st.sampled_from([None, *seen])) if seen else None
    options = {"murder": draw(st.booleans()), "kidnap": draw(st.booleans()),
               "dublee_exempt": draw(st.booleans()), "seen_fee": draw(st.integers(0, 10)),
               "unseen_fee": draw(st.integers(0, 20)), "invalid_declaration_fine": draw(st.integers(0, 20))}
    finish = draw(st.sampled_from(["melds", "dublees"])) if winner else None
    return get_rules("nepali", options), players, winner, finish


@given(rounds())
@FAST
def test_settlement_is_zero_sum(case) -> None:
    rules, players, winner, finish = case
    settlement = settle_round(rules, players, winner, finish)
    assert sum(settlement.net.values()) == 0
    assert all(p.points > 0 and p.payer != p.payee for p in settlement.payments)


@given(st.one_of(meld_built_hand(0), meld_built_hand(1), random_hand(21), random_hand(22)))
@FAST
def test_returned_melds_are_valid_and_use_each_card_once(case) -> None:
    cards, tiplu = case
    rules = get_rules()
    result = check_hand(cards, rules, tiplu=tiplu)
    wilds = wild_cards(rules, tiplu=tiplu)
    used = Counter(c for meld in result.melds for c in meld)
    assert not used - Counter(cards)  # never more copies than the hand holds
    if result.melds and all(len(m) == 2 for m in result.melds):  # the dublee route, or close to it
        assert all(a == b for a, b in result.melds)
        if result.valid:
            assert result.route is Route.DUBLEES and len(result.melds) == 8
        else:
            assert result.route is None and result.reason.startswith("only ")
        return
    checks = [classify_meld(m, wilds) for m in result.melds]
    assert all(check.is_meld for check in checks)
    if result.valid:
        assert len(result.melds) == 7 and sum(c.is_pure for c in checks) >= 3
        if result.discard is not None:
            used[result.discard] += 1
        assert used == Counter(cards)
    else:
        assert result.reason


@given(meld_built_hand(0), st.randoms(use_true_random=False))
@FAST
def test_maal_does_not_depend_on_card_order(case, rng) -> None:
    cards, tiplu = case
    shuffled = list(cards)
    rng.shuffle(shuffled)
    assert maal_points(cards, get_rules(), tiplu) == maal_points(shuffled, get_rules(), tiplu)


@given(st.integers(3, 10).flatmap(random_hand))
@FAST
def test_most_melds_agrees_with_brute_force(case) -> None:
    cards, tiplu = case
    wilds = wild_cards(get_rules(), tiplu=tiplu)
    assert len(Partitioner(cards, wilds, get_rules().family.melds).best_partial()) == brute_max_melds(cards, wilds)


@given(st.integers(1, 4), st.integers(0, 3), st.integers(0, 1), st.data())
@FAST
def test_meld_search_agrees_with_brute_force(melds_needed: int, pure_needed: int, discards: int, data) -> None:
    cards, tiplu = data.draw(meld_built_hand(discards, melds=melds_needed))
    wilds = wild_cards(get_rules(), tiplu=tiplu)
    melds, pure = find_melds(cards, wilds, melds_needed, pure_needed)
    fast = melds is not None and pure >= pure_needed
    assert fast == brute_cover(cards, wilds, melds_needed, pure_needed, discards)


def test_the_brute_force_reference_agrees_on_a_full_hand() -> None:
    hand = parse_cards("AS 2S 3S QH KH AH 6H 6H 6H 9D 10D JD KS KD KC 7C 8C 5D 2H 2D 5H")
    for tiplu, valid in (("5C", True), ("9C", False)):
        assert check_hand(hand, get_rules(), tiplu=parse_card(tiplu)).valid is valid
        assert brute_force_finishes(hand, get_rules(), tiplu=parse_card(tiplu)) is valid
