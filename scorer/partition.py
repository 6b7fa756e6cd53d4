"""Exact meld partitioning of a hand: the search behind every declare check.

The search always places the *lowest* remaining card (naturals before wilds):
it is either the discard, left unmatched, or part of one of the melds that
contain it. That choice is complete, so the search is exact, never greedy.
States are the remaining card counts; failed and solved states are memoised,
which keeps the search small even with many wild cards.

>>> from scorer import get_rules, parse_cards, parse_card
>>> from scorer.wilds import wild_cards
>>> w = wild_cards(get_rules(), tiplu=parse_card("JC"))
>>> p = Partitioner(parse_cards("3S 4S 5S 6H 6H 6H"), w, get_rules().family.melds)
>>> [str(c) for meld in p.cover(pure_needed=2, discards=0) for c in meld]
['3S', '4S', '5S', '6H', '6H', '6H']
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from typing import Callable, Sequence

from scorer.cards import FACE_INDEX, Card
from scorer.kinds import PURE_KINDS, MeldKind
from scorer.melds import meld_kind, sequence_fits
from scorer.rules import MeldRules
from scorer.wilds import Wilds

Meld = tuple[Card, ...]
#: a meld as the search handles it: indexes into the hand's sorted faces
Faces = tuple[int, ...]
#: (face, copies) pairs: what a meld takes from the hand's counts
Needs = tuple[tuple[int, int], ...]
#: pairs of natural faces that one wild each turns into melds
Pairs = tuple[tuple[int, int], ...]
#: remaining counts from a face on: the state the searches memoise
Counts = tuple[int, ...]
#: a candidate meld: (face indexes, is pure, copies needed)
Option = tuple[Faces, bool, Needs]
#: a candidate meld with wilds counted, not named: (natural faces, is pure, copies needed, wilds needed)
PooledOption = tuple[Faces, bool, Needs, int]


class Partitioner:
    """Searches one hand for melds under one set of wilds and one family's meld rules.

    ``only_pure`` restricts the melds to pure ones (the seeing check). Every
    verdict on a group is kept in the instance, so a search is self-contained:
    nothing is shared between threads or between hands.
    """

    def __init__(self, cards: Sequence[Card], wilds: Wilds, melds: MeldRules, *, only_pure: bool = False) -> None:
        self.wilds = wilds
        self.melds = melds
        self.only_pure = only_pure
        self.sizes = melds.search_sizes
        counts = Counter(cards)
        self.faces: list[Card] = sorted(counts, key=lambda c: (wilds.is_wild(c), FACE_INDEX[c]))
        self.start = [counts[f] for f in self.faces]
        self._wild = [wilds.is_wild(f) for f in self.faces]
        self._options: dict[int, list[Option]] = {}
        self._natural_options: dict[int, list[Option]] = {}
        self._pooled: dict[int, list[PooledOption]] = {}
        self._kinds: dict[Faces, MeldKind | None] = {}
        self._first_wild = next((k for k, w in enumerate(self._wild) if w), len(self.faces))

    def _related(self, i: int, j: int) -> bool:
        """Could faces i and j ever share a meld? Prunes the candidate list."""
        if self._wild[i] or self._wild[j]:
            return not self.only_pure
        a, b = self.faces[i], self.faces[j]
        if a.rank == b.rank:
            return True
        if a.suit != b.suit:
            return False
        gap = abs(a.rank - b.rank)
        if min(a.rank, b.rank) == 1:  # an ace is also high: A sits next to K
            gap = min(gap, 14 - max(a.rank, b.rank))
        return gap <= max(self.sizes) - 1

    def kind(self, idx: Faces) -> MeldKind | None:
        """The meld kind of the group of faces ``idx`` (None: no meld), worked out once per search."""
        if idx in self._kinds:
            return self._kinds[idx]
        kind = self._kinds[idx] = meld_kind(self._meld(idx), self.wilds, self.melds)
        return kind

    def melds_with(self, i: int, naturals_only: bool = False) -> list[Option]:
        """Every meld that holds face ``i`` and otherwise only faces after ``i``,
        within the hand's starting counts: (face indexes, is pure, copies needed).
        ``naturals_only`` leaves out the wild faces."""
        cache = self._natural_options if naturals_only else self._options
        options = cache.get(i)
        if options is not None:
            return options
        last = self._first_wild if naturals_only else len(self.faces)
        partners = [j for j in range(i, last) if j == i or self._related(i, j)]
        options = []
        start = self.start
        for size in self.sizes:
            for rest in combinations_with_replacement(partners, size - 1):
                idx = (i,) + rest
                need = _needs(idx)
                if any(start[k] < n for k, n in need):
                    continue
                kind = self.kind(idx)
                if kind is not None and (not self.only_pure or kind in PURE_KINDS):
                    options.append((idx, kind in PURE_KINDS, need))
        # pure melds first, then those spending fewer wilds: finds finishes sooner
        options.sort(key=lambda o: (not o[1], sum(self._wild[k] for k in o[0]), len(o[0])))
        cache[i] = options
        return options

    def _pooled_options(self, i: int) -> list[PooledOption]:
        """Melds for natural face ``i`` where wild cards acting as wilds are counted,
        not named: (natural faces, is pure, copies needed, wilds needed)."""
        cached = self._pooled.get(i)
        if cached is not None:
            return cached
        options: list[PooledOption] = [(idx, pure, need, 0) for idx, pure, need in self.melds_with(i, naturals_only=True)]
        a = self.faces[i]
        for j in range(i + 1, self._first_wild):
            b = self.faces[j]
            if (a.suit == b.suit and sequence_fits([a.rank, b.rank], 3)) or a.rank == b.rank:
                options.append(((i, j), False, ((i, 1), (j, 1)), 1))
        options.append(((i,), False, ((i, 1),), 2))
        self._pooled[i] = options
        return options

    @staticmethod
    def _take(counts: list[int], need: Needs) -> bool:
        for k, n in need:
            if counts[k] < n:
                return False
        for k, n in need:
            counts[k] -= n
        return True

    @staticmethod
    def _put(counts: list[int], need: Needs) -> None:
        for k, n in need:
            counts[k] += n

    def _meld(self, idx: tuple[int, ...]) -> Meld:
        return tuple(self.faces[k] for k in idx)

    def cover(self, pure_needed: int, discards: int) -> list[Meld] | None:
        """Melds covering every card but exactly ``discards`` of them, with at least
        ``pure_needed`` pure melds; None when impossible. The discarded cards are
        those the melds leave out."""
        counts = list(self.start)
        end = len(counts)
        failed: set[tuple[int, Counts, int, int]] = set()
        chosen: list[Faces] = []

        def search(i: int, pure_needed: int, discards: int, left: int) -> bool:
            while i < end and not counts[i]:
                i += 1
            if i == end:
                return pure_needed <= 0 and discards == 0
            key = (i, tuple(counts[i:]), discards, pure_needed)
            if key in failed or pure_needed * 3 > left - discards:
                return False
            for idx, pure, need in self.melds_with(i):
                if self._take(counts, need):
                    chosen.append(idx)
                    if search(i, pure_needed - pure, discards, left - len(idx)):
                        return True
                    chosen.pop()
                    self._put(counts, need)
            if discards:
                counts[i] -= 1
                found = search(i, pure_needed, discards - 1, left - 1)
                counts[i] += 1
                if found:
                    return True
            failed.add(key)
            return False

        if search(0, max(pure_needed, 0), discards, sum(counts)):
            return [self._meld(idx) for idx in chosen]
        return None

    def all_melds(self) -> list[Meld]:
        """Every distinct meld the hand holds (pure ones only with ``only_pure``)."""
        return [self._meld(idx) for i in range(len(self.faces)) for idx, _, _ in self.melds_with(i)]

    def reach(self, target: int, without: Sequence[Meld] = ()) -> list[Meld] | None:
        """``target`` disjoint melds if the hand (less the cards of ``without``)
        holds them, else None.

        Exact for melds of exactly 3 cards (nepali's, see
        :attr:`~scorer.rules.MeldRules.wilds_can_be_pooled`) although wilds are
        pooled: a wild played as its own face could always fill the same gap
        acting as a wild.
        """
        counts = list(self.start)
        position = {face: k for k, face in enumerate(self.faces)}
        for card in (c for meld in without for c in meld):
            counts[position[card]] -= 1
        if min(counts, default=0) < 0:
            return None
        start = list(counts)
        end = self._first_wild
        failed: set[tuple[int, Counts, int, int]] = set()
        chosen: list[tuple[Faces, int]] = []

        def search(i: int, wilds: int, target: int) -> bool:
            if target <= 0:
                return True
            while i < end and not counts[i]:
                i += 1
            if i == end:
                return wilds >= 3 * target
            key = (i, tuple(counts[i:end]), wilds, target)
            if key in failed or sum(counts[i:end]) + wilds < 3 * target:
                return False
            for idx, _, need, extra in self._pooled_options(i):
                if extra <= wilds and self._take(counts, need):
                    chosen.append((idx, extra))
                    found = search(i, wilds - extra, target - 1)
                    self._put(counts, need)
                    if found:
                        return True
                    chosen.pop()
            held, counts[i] = counts[i], 0
            found = search(i + 1, wilds, target)
            counts[i] = held
            if not found:
                failed.add(key)
            return found

        if not search(0, sum(counts[end:]), target):
            return None
        return self._with_wilds(chosen, target, start)

    def _with_wilds(self, chosen: Sequence[tuple[tuple[int, ...], int]], target: int,
                    counts: Sequence[int]) -> list[Meld]:
        """Name the pooled wilds: fill each chosen meld's gaps, then make wild-only melds."""
        end = self._first_wild
        spare = [self.faces[k] for k in range(end, len(self.faces)) for _ in range(counts[k])]
        melds = []
        for idx, extra in chosen:
            melds.append(self._meld(idx) + tuple(spare[:extra]))
            del spare[:extra]
        while len(melds) < target and len(spare) >= 3:
            melds.append(tuple(spare[:3]))
            del spare[:3]
        return melds

    def best_partial(self) -> list[Meld]:
        """The arrangement with the most melds (then the most pure ones), leaving
        any cards unmatched: the closest a hand that does not finish gets.

        Rummy hands search every meld. For nepali hands (melds of exactly 3
        cards, see :attr:`~scorer.rules.MeldRules.wilds_can_be_pooled`), wild cards acting as
        wilds are pooled (any wild fills any gap), which keeps the search small;
        the pure count then ignores wilds played as their own face, which only
        matters for a hand that already failed :meth:`cover`.
        """
        if not self.melds.wilds_can_be_pooled or self.only_pure:
            return self._best_partial_exact()
        return self._pooled_best()

    def _pairs_with(self, i: int) -> list[int]:
        """Natural faces after ``i`` that one wild turns into a meld with ``i``."""
        a = self.faces[i]
        return [j for j in range(i + 1, self._first_wild)
                if (a.suit == self.faces[j].suit and sequence_fits([a.rank, self.faces[j].rank], 3))
                or a.rank == self.faces[j].rank]

    def _pooled_best(self) -> list[Meld]:
        """Most melds (then most pure) with wilds pooled.

        Wilds are best spent one per pair of natural cards, then two per single
        card, then three together. So once the melds of three natural cards are
        chosen, the rest follows from a maximum matching of compatible pairs.
        """
        end = self._first_wild
        wilds = sum(self.start[end:])
        natural = [(idx, pure, need) for i in range(end) for idx, pure, need in self.melds_with(i, True)]
        pairs = [self._pairs_with(i) for i in range(end)]
        matching_memo: dict[tuple[int, Counts], Pairs] = {}

        def matching(i: int, counts: list[int]) -> Pairs:
            while i < end and not counts[i]:
                i += 1
            if i == end:
                return ()
            key = (i, tuple(counts[i:end]))
            found = matching_memo.get(key)
            if found is not None:
                return found
            held, counts[i] = counts[i], 0
            best = matching(i + 1, counts)
            counts[i] = held
            counts[i] -= 1
            for j in pairs[i]:
                if counts[j]:
                    counts[j] -= 1
                    candidate = ((i, j),) + matching(i, counts)
                    counts[j] += 1
                    if len(candidate) > len(best):
                        best = candidate
            counts[i] += 1
            matching_memo[key] = best
            return best

        def greedy(counts: list[int]) -> Pairs:
            left = list(counts)
            found = []
            for i in range(end):
                for j in pairs[i]:
                    while left[i] and left[j]:
                        left[i] -= 1
                        left[j] -= 1
                        found.append((i, j))
            return tuple(found)

        def finish(counts: list[int]) -> tuple[int, Pairs, int]:
            # only as many pairs as there are wilds can be used
            matched: Pairs = greedy(counts) if wilds else ()
            if len(matched) < wilds:
                matched = matching(0, counts)
            used = min(len(matched), wilds)
            singles = min(sum(counts[:end]) - 2 * used, (wilds - used) // 2)
            return used + singles + (wilds - used - 2 * singles) // 3, matched[:used], singles

        counts = list(self.start)
        Choice = tuple[int, int, tuple[Faces, ...], Pairs, int]  # melds, pure ones, chosen, pairs, singles
        memo: dict[tuple[int, Counts], Choice] = {}

        def choose(k: int) -> Choice:
            key = (k, tuple(counts[:end]))
            found = memo.get(key)
            if found is not None:
                return found
            if k == len(natural):
                melds, matched, singles = finish(counts)
                result: Choice = (melds, 0, (), matched, singles)
            else:
                result = choose(k + 1)
                idx, pure, need = natural[k]
                if self._take(counts, need):
                    melds, pures, chosen, matched, singles = choose(k)
                    self._put(counts, need)
                    if (melds + 1, pures + pure) > result[:2]:
                        result = (melds + 1, pures + pure, (idx,) + chosen, matched, singles)
            memo[key] = result
            return result

        _, _, chosen, matched, singles = choose(0)
        left = list(self.start)
        for idx in chosen + tuple(matched):
            for k in idx:
                left[k] -= 1
        lonely = [k for k in range(end) for _ in range(left[k])][:singles]
        picks: list[tuple[Faces, int]] = [(idx, 0) for idx in chosen] + [(pair, 1) for pair in matched]
        picks += [((k,), 2) for k in lonely]
        return self._with_wilds(picks, len(picks) + wilds, self.start)

    def _best_partial_exact(self) -> list[Meld]:
        counts = list(self.start)
        end = len(counts)
        memo: dict[tuple[int, Counts], tuple[int, int, tuple[Faces, ...]]] = {}

        def best(i: int) -> tuple[int, int, tuple[Faces, ...]]:
            while i < end and not counts[i]:
                i += 1
            if i == end:
                return (0, 0, ())
            key = (i, tuple(counts[i:]))
            if key in memo:
                return memo[key]
            # either no remaining copy of face i is melded, or one is: meld it now
            held, counts[i] = counts[i], 0
            result = best(i + 1)
            counts[i] = held
            for idx, pure, need in self.melds_with(i):
                if self._take(counts, need):
                    melds, pures, path = best(i)
                    self._put(counts, need)
                    if (melds + 1, pures + pure) > result[:2]:
                        result = (melds + 1, pures + pure, (idx,) + path)
            memo[key] = result
            return result

        return [self._meld(idx) for idx in best(0)[2]]

    def least_left(self, value: Callable[[Card], int], lives_needed: int,
                   bonus: Callable[[Meld], int] | None = None) -> tuple[int, list[Meld]]:
        """The arrangement with the lowest total ``value`` unmatched less the
        ``bonus`` of each meld kept, among those with at least ``lives_needed``
        pure melds (rummy penalty scoring). With no such arrangement no meld is
        kept and every card counts. The bonus is part of the search, so a meld
        that earns one may win over a meld that saves more cards.
        """
        counts = list(self.start)
        end = len(counts)
        memo: dict[tuple[int, Counts, int], tuple[float, tuple[Faces, ...]]] = {}
        values = [value(f) for f in self.faces]
        bonuses: dict[Faces, int] = {}

        def bonus_of(idx: Faces) -> int:
            if idx not in bonuses:
                bonuses[idx] = bonus(self._meld(idx)) if bonus is not None else 0
            return bonuses[idx]

        def least(i: int, lives_needed: int) -> tuple[float, tuple[Faces, ...]]:
            while i < end and not counts[i]:
                i += 1
            if i == end:
                return (0 if lives_needed <= 0 else float("inf"), ())
            key = (i, tuple(counts[i:]), lives_needed)
            if key in memo:
                return memo[key]
            held, counts[i] = counts[i], 0
            cost, path = least(i + 1, lives_needed)
            counts[i] = held
            result = (cost + values[i] * held, path)
            for idx, pure, need in self.melds_with(i):
                if self._take(counts, need):
                    cost, path = least(i, max(lives_needed - pure, 0))
                    self._put(counts, need)
                    if cost - bonus_of(idx) < result[0]:
                        result = (cost - bonus_of(idx), (idx,) + path)
            memo[key] = result
            return result

        cost, path = least(0, lives_needed)
        if cost == float("inf"):
            return sum(v * n for v, n in zip(values, self.start)), []
        return int(cost), [self._meld(idx) for idx in path]


def _needs(idx: tuple[int, ...]) -> Needs:
    """(face, copies) pairs of a sorted index tuple: (3, 3, 5) -> ((3, 2), (5, 1))."""
    needs: list[tuple[int, int]] = []
    for k in idx:
        if needs and needs[-1][0] == k:
            needs[-1] = (k, needs[-1][1] + 1)
        else:
            needs.append((k, 1))
    return tuple(needs)


def leftover(cards: Sequence[Card], melds: Sequence[Sequence[Card]]) -> list[Card]:
    """The cards of ``cards`` not used by ``melds`` (as a multiset difference)."""
    rest = Counter(cards)
    rest.subtract(c for meld in melds for c in meld)
    return sorted(rest.elements(), key=lambda c: FACE_INDEX[c])
