"""Property tests: settlement is zero-sum, melds are real and partition the hand,
maal ignores card order, and the fast search agrees with a plain brute force."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorer import ALL_FACES, JOKER, Card, Route, RuleSet, get_rules, parse_card, parse_cards
from scorer.declare import check_grouping, check_hand, find_melds, is_dublee
from scorer.maal import maal_points
from scorer.melds import classify_meld
from scorer.partition import Partitioner, leftover
from scorer.reference import (brute_cover, brute_every_card_melded, brute_force_finishes, brute_least_penalty,
                              brute_max_melds)
from scorer.rummy import capped_penalty, card_penalty, penalty_points
from scorer.settle import PlayerRound, settle_round
from scorer.wilds import wild_cards
from strategies import dublee_finish, faces, meld_built_hand, random_hand

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.large_base_example, HealthCheck.data_too_large])


@st.composite
def rounds(draw: st.DrawFn) -> tuple[RuleSet, list[PlayerRound], str | None, str | None]:
    players_max = draw(st.sampled_from([5, 6]))
    n = draw(st.integers(2, players_max))
    players = [PlayerRound(f"P{i}", maal=draw(st.integers(0, 80)), seen=draw(st.booleans()),
                           seen_by=draw(st.sampled_from([None, "melds", "dublees"])),
                           false_declaration=draw(st.booleans()))
               for i in range(n)]
    seen = [p.name for p in players if p.seen]
    winner = draw(st.sampled_from([None, *seen])) if seen else None
    unseen_rule = draw(st.sampled_from([None, "murder", "kidnap"]))  # they exclude each other
    options = {"players_max": players_max, "dublee_exempt": draw(st.booleans()),
               "seen_fee": draw(st.integers(0, 10)), "unseen_fee": draw(st.integers(0, 20)),
               "dublee_bonus": draw(st.integers(0, 10)), "dublee_min_players": draw(st.integers(2, 6)),
               "invalid_declaration_fine": draw(st.integers(0, 20))} | ({unseen_rule: True} if unseen_rule else {})
    routes = ["melds", "dublees"] if n >= options["dublee_min_players"] else ["melds"]
    finish = draw(st.sampled_from(routes)) if winner else None
    return get_rules("nepali", options), players, winner, finish


@st.composite
def rummy_rounds(draw: st.DrawFn) -> tuple[RuleSet, list[PlayerRound], str]:
    options = {"per_round_settlement": draw(st.booleans()), "max_penalty": draw(st.sampled_from([0, 40, 80])),
               "wrong_close_penalty": draw(st.integers(0, 100))}
    count = draw(st.integers(3, 6))
    closer = draw(st.integers(0, count - 1))  # RULES.md 3: the closer is never also marked with a wrong close
    players = [PlayerRound(f"P{i}", penalty=draw(st.integers(0, 200)), wrong_close=i != closer and draw(st.booleans()))
               for i in range(count)]
    return get_rules("rummy", options), players, players[closer].name


@st.composite
def rummy_rules(draw: st.DrawFn) -> RuleSet:
    """The rummy options that change a penalty or a close, drawn."""
    return get_rules("rummy", {
        "two_decks": draw(st.booleans()), "joker_same_suit": draw(st.booleans()),
        "two_lives": draw(st.booleans()), "tunnela_bonus": draw(st.sampled_from([0, 3, 15])),
        "max_penalty": draw(st.sampled_from([0, 25, 80])), "ace_points": draw(st.sampled_from([10, 1])),
        "unmatched_joker_points": draw(st.sampled_from([20, 5]))})


@st.composite
def rummy_hand(draw: st.DrawFn, rules: RuleSet, sizes: tuple[int, int]) -> tuple[list[Card], Card]:
    """A few cards from the rummy decks in play (printed jokers too) and a turned card;
    built from single cards, tunnelas and runs, so melds and tunnelas are common."""
    turned = draw(faces)
    left = Counter({c: rules.decks for c in ALL_FACES if not c.is_joker}) + Counter({JOKER: rules.printed_jokers})
    size = draw(st.integers(*sizes))
    cards: list[Card] = []
    while len(cards) < size:
        face = draw(st.sampled_from(sorted(left.elements())))
        run = [Card(r, face.suit) for r in range(face.rank, min(face.rank + 3, 14))] if not face.is_joker else [face]
        group = draw(st.sampled_from([[face], [face] * 3, run]))[:size - len(cards)]
        if not Counter(group) - left:
            cards.extend(group)
            left -= Counter(group)
    return cards, turned

@given(rounds())
@FAST
def test_settlement_is_zero_sum(case) -> None:
    rules, players, winner, finish = case
    settlement = settle_round(rules, players, winner, finish)
    assert sum(settlement.net.values()) == 0
    assert all(p.points > 0 and p.payer != p.payee for p in settlement.payments)


@given(rummy_rounds())
@FAST
def test_rummy_settlement_is_zero_sum_when_paid_per_round(case) -> None:
    rules, players, winner = case
    settlement = settle_round(rules, players, winner, None)
    most = (rules["max_penalty"] or 200) + rules["wrong_close_penalty"]
    if rules["per_round_settlement"]:
        assert sum(settlement.net.values()) == 0 and not settlement.lower_is_better
        assert all(p.payee == winner and 0 < p.points <= most for p in settlement.payments)
    else:
        assert settlement.lower_is_better and settlement.net[winner] == 0
        assert all(0 <= points <= most for points in settlement.net.values())


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


@given(dublee_finish())
@FAST
def test_a_dublee_finish_passes_however_its_other_cards_lie(case) -> None:
    """RULES.md 2.3: 8 of the groups are dublees; the other cards lie in any groups, or loose."""
    groups, discard, tiplu, printed = case
    rules = get_rules("nepali", {"printed_jokers": printed})
    hand = [c for g in groups for c in g] + ([] if discard is None else [discard])
    result = check_grouping(groups, rules, tiplu=tiplu, discard=discard)
    assert (result.valid, result.route, result.reason) == (True, Route.DUBLEES, None)
    assert result.melds == tuple(map(tuple, groups))
    if len(hand) == 22:
        assert result.discard is not None and (discard is None or result.discard == discard)
        dublees = [c for g in groups if is_dublee(g) for c in g]
        assert Counter(hand)[result.discard] > Counter(dublees[:16])[result.discard], "never a dublee's card"
    free = check_hand(hand, rules, tiplu=tiplu)
    assert free.valid and brute_force_finishes(hand, rules, tiplu=tiplu)
    if free.route is Route.DUBLEES:
        assert len(free.melds) == 8 and all(a == b for a, b in free.melds)
        assert not Counter(c for m in free.melds for c in m) - Counter(hand)


@given(st.sampled_from([6, 7, 8]).flatmap(dublee_finish), st.randoms(use_true_random=False))
@FAST
def test_a_laid_dublee_finish_needs_8_dublee_groups_in_any_order(case, rng) -> None:
    groups, discard, tiplu, printed = case
    rules = get_rules("nepali", {"printed_jokers": printed})
    result = check_grouping(groups, rules, tiplu=tiplu, discard=discard)
    assert result.valid is (sum(map(is_dublee, groups)) >= 8)
    assert result.valid is (result.route is Route.DUBLEES) is (result.reason is None)
    shuffled = list(groups)
    rng.shuffle(shuffled)
    assert check_grouping(shuffled, rules, tiplu=tiplu, discard=discard).valid is result.valid


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


@given(rummy_rules().flatmap(lambda rules: st.tuples(st.just(rules), rummy_hand(rules, (3, 8)))))
@FAST
def test_rummy_penalty_agrees_with_brute_force(case) -> None:
    rules, (cards, turned) = case
    result = penalty_points(cards, rules, turned)
    assert result.penalty == brute_least_penalty(cards, rules, turned=turned)
    wilds = wild_cards(rules, turned=turned)
    checks = [classify_meld(m, wilds, rules.family.melds) for m in result.melds]
    assert all(check.is_meld for check in checks)
    assert Counter(c for m in result.melds for c in m) + Counter(result.unmatched) == Counter(cards)
    if result.melds:
        assert sum(check.is_pure for check in checks) >= rules.pure_melds_needed
    left = sum(card_penalty(c, rules, wilds) for c in result.unmatched) - rules["tunnela_bonus"] * result.tunnelas
    assert result.penalty == capped_penalty(left, rules)


@given(rummy_rules(), st.integers(0, 1), st.data())
@FAST
def test_every_card_melded_agrees_with_brute_force(rules: RuleSet, discards: int, data) -> None:
    cards, turned = data.draw(rummy_hand(rules, (6, 9)))
    search = Partitioner(cards, wild_cards(rules, turned=turned), rules.family.melds)
    fast = search.cover(rules.pure_melds_needed, discards)
    assert (fast is not None) == brute_every_card_melded(cards, rules, turned=turned, discards=discards)
    if fast is not None:
        assert len(leftover(cards, fast)) == discards

