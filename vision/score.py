"""Photo to verdict: the declare check and the maal of the cards a photo shows.

``tiplu score`` and the web app's photo review judge a hand here, with one definition of
a hand *as laid* (:func:`lay_out`): every group of two or more cards is a meld (or a
dublee), and a card lying alone is the discard; two or more cards alone mean the hand is
not laid out as a declaration. :func:`judge_hand` runs the scorer's free search
(:func:`scorer.declare.check_hand`) and, when the groups are known, the check of the melds
as laid (:func:`scorer.declare.check_grouping`); a caller that shows one verdict takes
:attr:`HandVerdict.declare`, which is the hand as laid when the photo shows a declaration.
:func:`judge_cards` is the one path from a hand's cards to that verdict, its maal and its
doubts: ``tiplu score`` and the photo review's check both call it, so they cannot disagree.

>>> from scorer import get_rules, parse_card, parse_cards
>>> hand = parse_cards("3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D KC")
>>> laid = [range(i, i + 3) for i in range(0, 21, 3)] + [[21]]
>>> verdict = judge_hand(hand, get_rules(), groups=laid, tiplu=parse_card("JS"))
>>> verdict.grouping, verdict.declare.valid, str(verdict.declare.discard)
('player', True, 'KC')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from scorer import Card, RuleSet, TipluError, parse_card
from scorer.declare import DeclareResult, check_grouping, check_hand
from scorer.kinds import Scoring
from scorer.maal import MaalResult, maal_points
from scorer.messages import Message, N_
from vision.detector import Detector
from vision.doubts import (PLACE_KINDS, SHORT_MELD, Doubt, count_doubt, hinge_doubts, missing_card_doubts,
                           short_meld_doubts)
from vision.pipeline import DEFAULT_CONF, PhotoReading, read_photo

#: Which grouping a single verdict judged: the player's own (as laid) or any (the free search).
PLAYER, FREE = "player", "free"

Result = TypeVar("Result")


@dataclass(frozen=True)
class LaidHand:
    """A hand as laid on the table, by card positions: its melds and the cards lying alone.

    >>> hand = lay_out([[0, 1, 2], [3], [4, 5, 6]], 7)
    >>> hand.melds, hand.discard, hand.shows_declaration
    (((0, 1, 2), (4, 5, 6)), 3, True)
    >>> lay_out([[0, 1, 2], [3], [4]], 5).apart
    (3, 4)
    """

    melds: tuple[tuple[int, ...], ...]
    alone: tuple[int, ...]
    #: The dublees (pairs) that finish a hand under the rules (None: no dublee route, or not known).
    dublees_to_finish: int | None = None

    @property
    def shows_dublees(self) -> bool:
        """Does the layout show a dublee finish: at least as many pairs as finish one, the other cards
        lying any way (RULES.md: they are not judged)?

        >>> lay_out([[2 * k, 2 * k + 1] for k in range(8)] + [[16, 17, 18]], 21, dublees=8).shows_dublees
        True
        """
        return (self.dublees_to_finish is not None
                and sum(len(m) == 2 for m in self.melds) >= self.dublees_to_finish)

    @property
    def discard(self) -> int | None:
        """The one card lying alone, if exactly one does."""
        return self.alone[0] if len(self.alone) == 1 else None

    @property
    def apart(self) -> tuple[int, ...]:
        """The cards lying alone when more than one does (only the discard may)."""
        return self.alone if len(self.alone) > 1 else ()

    @property
    def shows_declaration(self) -> bool:
        """Does the layout look like a declared hand rather than cards spread loosely?

        At least two melds, all of three or more cards or all pairs (dublees), and at
        most one card alone. A photo of maal cards or a half-sorted hand is not one, and
        is better judged by the free search.
        """
        sizes = [len(m) for m in self.melds]
        return self.shows_dublees or (not self.apart and len(sizes) >= 2
                                      and (all(n >= 3 for n in sizes) or all(n == 2 for n in sizes)))


def lay_out(groups: Sequence[Sequence[int]], count: int, *, dublees: int | None = None) -> LaidHand:
    """The hand as laid, from groups of card positions (0 to ``count - 1``, each once); ``dublees``
    the pairs that finish a hand under the rules (:attr:`LaidHand.shows_dublees`).

    A group of one card, or a card in no group, lies alone: groups of one first, then
    the ungrouped cards in order.

    >>> lay_out([[2, 3], [0]], 4)
    LaidHand(melds=((2, 3),), alone=(0, 1), dublees_to_finish=None)
    """
    grouped = {i for g in groups for i in g}
    alone = [g[0] for g in groups if len(g) == 1] + [i for i in range(count) if i not in grouped]
    return LaidHand(tuple(tuple(g) for g in groups if len(g) > 1), tuple(alone), dublees)


@dataclass(frozen=True)
class HandVerdict:
    """The declare check on a photographed hand: the free search and the hand as laid.

    ``search`` is :func:`scorer.declare.check_hand` (any grouping); ``as_laid`` judges the
    melds as :attr:`laid` (None when no groups were given). A check that could not run
    (a wrong number of cards, too many copies) is None and its ``*_error`` says why.
    """

    search: DeclareResult | None
    search_error: str | None = None
    laid: LaidHand | None = None
    as_laid: DeclareResult | None = None
    as_laid_error: str | None = None

    @property
    def grouping(self) -> str:
        """:data:`PLAYER` when the photo shows a laid-out declaration, else :data:`FREE`."""
        return PLAYER if self.laid is not None and self.laid.shows_declaration else FREE

    @property
    def declare(self) -> DeclareResult | None:
        """The one verdict to show: the hand as laid, or the free search (see :attr:`grouping`)."""
        return self.as_laid if self.grouping == PLAYER else self.search

    @property
    def declare_error(self) -> str | None:
        return self.as_laid_error if self.grouping == PLAYER else self.search_error


def _attempt(check: Callable[[], Result]) -> tuple[Result | None, Message | None]:
    """The check's result, or None and the message of the :class:`TipluError` it raised."""
    try:
        return check(), None
    except TipluError as error:
        return None, error.message


def judge_as_laid(cards: Sequence[Card], laid: LaidHand, rules: RuleSet, *, tiplu: Card | None = None,
                  turned: Card | None = None, players: int | None = None) -> DeclareResult:
    """:func:`scorer.declare.check_grouping` on the melds as laid, the lone card as the discard.

    With more than one card alone the hand is not laid out as a declaration, and the
    verdict names the cards lying apart; but a dublee layout (:attr:`LaidHand.shows_dublees`)
    is judged with every other card as it lies, loose ones as groups of one, and the
    scorer picks the discard of a 22-card hand.
    """
    melds = [[cards[i] for i in meld] for meld in laid.melds]
    if laid.shows_dublees:
        return check_grouping(melds + [[cards[i]] for i in laid.alone], rules, tiplu=tiplu, turned=turned,
                              players=players)
    if laid.apart:
        apart = tuple(cards[i] for i in laid.apart)
        return DeclareResult(False, None, tuple(map(tuple, melds)), None,
                             Message(N_("%(cards)s lie apart from the melds; only the discard may"),
                                     cards=" ".join(map(str, apart))), apart)
    discard = None if laid.discard is None else cards[laid.discard]
    return check_grouping(melds, rules, tiplu=tiplu, turned=turned, discard=discard, players=players)


def judge_hand(cards: Sequence[Card], rules: RuleSet, *, groups: Sequence[Sequence[int]] | None = None,
               tiplu: Card | None = None, turned: Card | None = None, players: int | None = None) -> HandVerdict:
    """Does a photographed hand finish: by the free search and, given its groups, as laid."""
    search, search_error = _attempt(lambda: check_hand(cards, rules, tiplu=tiplu, turned=turned, players=players))
    if groups is None:
        return HandVerdict(search, search_error)
    laid = lay_out(groups, len(cards), dublees=rules.family.dublees_to_finish)
    as_laid, as_laid_error = _attempt(lambda: judge_as_laid(cards, laid, rules, tiplu=tiplu, turned=turned,
                                                            players=players))
    return HandVerdict(search, search_error, laid, as_laid, as_laid_error)


def declared_sizes(rules: RuleSet) -> tuple[int, int]:
    """The card counts of a declared hand: the hand dealt, or with the card drawn (21 or 22).

    >>> from scorer import get_rules
    >>> declared_sizes(get_rules()), declared_sizes(get_rules("rummy", {"two_decks": True}))
    ((21, 22), (13, 14))
    """
    return rules.hand_size, rules.hand_size + 1


def verdict_doubts(names: Sequence[str], doubtful: Sequence[tuple[int, Sequence[str]]], rules: RuleSet, *,
                   groups: Sequence[Sequence[int]] | None = None, tiplu: Card | None = None,
                   turned: Card | None = None, players: int | None = None) -> list[Doubt]:
    """The doubtful cards an alternative of which would flip the verdict (:func:`vision.doubts.hinge_doubts`).

    The verdict is :attr:`HandVerdict.declare` of :func:`judge_hand`, the one that
    ``tiplu score`` and the photo review show; the scorer decides each try. ``doubtful``
    is tried in the order given (:func:`judge_cards` puts the least confident first).

    >>> from scorer import get_rules, parse_card
    >>> hand = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D 9H QC QH 5C 5D".split()
    >>> [d.message for d in verdict_doubts(hand, [(17, ["9S", "9D"])], get_rules(), tiplu=parse_card("2S"))]
    ['the hand finishes only if this is 9D, not 9H: please check']
    """
    def finishes(cards: Sequence[Card]) -> bool | None:
        verdict = judge_hand(cards, rules, groups=groups, tiplu=tiplu, turned=turned, players=players).declare
        return None if verdict is None else verdict.valid

    return hinge_doubts(names, doubtful, finishes)


def missing_card_verdict_doubts(names: Sequence[str], places: Sequence[Doubt], rules: RuleSet, *,
                                tiplu: Card | None = None, turned: Card | None = None,
                                players: int | None = None) -> list[Doubt]:
    """For a hand one card short of a declaration, the places whose card would make it finish.

    Where the missing card would go is unknown, so each try is the free search.

    >>> from scorer import get_rules, parse_card
    >>> from vision.doubts import place_doubt, FAINT_CARD
    >>> hand = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 2D 2S KS KH KD 7C 7D 7S 5C 5D".split()
    >>> place = place_doubt(FAINT_CARD, "5S", (0.0, 0.0, 5.0, 5.0))
    >>> [d.message for d in missing_card_verdict_doubts(hand, [place], get_rules(), tiplu=parse_card("AH"))]
    ['the hand finishes only if the card framed here is 5S, too faint to read: please check']
    """
    if len(names) + 1 not in declared_sizes(rules):
        return []

    def finishes(cards: Sequence[Card]) -> bool:
        verdict = judge_hand(cards, rules, tiplu=tiplu, turned=turned, players=players).search
        return verdict is not None and verdict.valid

    return missing_card_doubts(names, places, finishes)


@dataclass(frozen=True)
class DoubtfulCard:
    """A card the player has not confirmed: its position, what it may be instead, and how sure the reading was.

    Without a ``confidence`` (a card the page added, an old client) the card is tried after
    those with one, in position order.

    >>> sorted([DoubtfulCard(3, ("8H",)), DoubtfulCard(1, ("6D",), 0.6), DoubtfulCard(0, ("7S",), 0.4)],
    ...        key=DoubtfulCard.try_order)
    [DoubtfulCard(index=0, alternatives=('7S',), confidence=0.4), DoubtfulCard(index=1, alternatives=('6D',), confidence=0.6), DoubtfulCard(index=3, alternatives=('8H',), confidence=None)]
    """

    index: int
    alternatives: tuple[str, ...]
    confidence: float | None = None

    def try_order(self) -> tuple[bool, float, int]:
        """Least confident first, to the 4 decimals the reading's JSON keeps (so that the page,
        which has only those, tries the cards in the order ``tiplu score`` does)."""
        return self.confidence is None, round(self.confidence or 0.0, 4), self.index


def doubtful_cards(reading: PhotoReading) -> list[DoubtfulCard]:
    """The reading's uncertain cards (those without alternatives only mark a count doubt)."""
    return [DoubtfulCard(i, tuple(n for n, _ in reading.cards[i].alternatives), reading.cards[i].confidence)
            for i in reading.uncertain]


def declare_dict(declare: DeclareResult | None, error: str | None) -> dict[str, Any]:
    """The JSON of a verdict (:meth:`DeclareResult.to_dict` with the cards ``unmatched``), or of no
    verdict at all (a count no declared hand has, a fourth copy): not a finish, ``reason`` says why.

    >>> declare_dict(None, "a declared hand has 21 cards")["valid"]
    False
    """
    if declare is None:
        return {"valid": False, "route": None, "melds": [], "discard": None, "reason": error, "unmatched": []}
    return {**declare.to_dict(), "unmatched": [str(c) for c in declare.unmatched]}


@dataclass(frozen=True)
class CardsVerdict:
    """What :func:`judge_cards` says of a hand's cards: the verdict, maal and every doubt.

    ``hand`` holds both checks; :attr:`declare` is the one verdict to show (the hand as
    laid when the cards show a declaration, else the free search). ``maal`` is None when
    the rules score penalties, without a tiplu, or when the cards cannot be valued
    (``maal_error`` says why). ``doubts``: the reading's own (copies, melds of two, places
    to look), a card count no declared hand has, the doubtful cards the verdict hangs on,
    and for a hand one card short the place whose card would finish it.
    """

    names: tuple[str, ...]
    hand: HandVerdict
    maal: MaalResult | None = None
    maal_error: str | None = None
    doubts: tuple[Doubt, ...] = ()

    @property
    def grouping(self) -> str:
        return self.hand.grouping

    @property
    def declare(self) -> DeclareResult | None:
        return self.hand.declare

    @property
    def declare_error(self) -> str | None:
        return self.hand.declare_error

    @property
    def valid(self) -> bool:
        return self.declare is not None and self.declare.valid

    def declare_dict(self) -> dict[str, Any]:
        """The headline's JSON, the same for ``tiplu score --json`` (``declare``) and the page (``verdict``)."""
        return declare_dict(self.declare, self.declare_error)


def judge_cards(cards: Sequence[Card | str], rules: RuleSet, *, tiplu: Card | None = None,
                turned: Card | None = None, groups: Sequence[Sequence[int]] | None = None,
                doubtful: Sequence[DoubtfulCard] = (), reading_doubts: Sequence[Doubt] | None = None,
                seen: bool = True, players: int | None = None) -> CardsVerdict:
    """The one way from a photographed hand's cards to a verdict, its maal and its doubts.

    ``tiplu score`` (:func:`score_reading`) and the photo review's check
    (:func:`web.photos.check_cards`) both call it, so they show the same headline and the
    same doubts for the same cards. ``groups`` are the cards as laid (positions);
    ``doubtful`` the cards not yet confirmed (those with alternatives are tried least
    confident first, at most :data:`vision.doubts.MAX_HINGE_TRIES`); ``reading_doubts`` the reading's own doubts,
    whose melds of two point the count doubt at a missed card and whose places to look may
    hold the card that finishes the hand. Without them (None) the melds of two are found
    from ``groups`` by the reading's own rule (:func:`vision.doubts.short_meld_doubts`).

    >>> from scorer import get_rules, parse_card
    >>> hand = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C".split()
    >>> laid = [range(i, i + 3) for i in range(0, 18, 3)] + [[18, 19]]
    >>> verdict = judge_cards(hand, get_rules(), tiplu=parse_card("JS"), groups=laid)
    >>> verdict.valid, [d.kind for d in verdict.doubts]
    (False, ['short_meld', 'hand_count'])
    """
    parsed = [card if isinstance(card, Card) else parse_card(card) for card in cards]
    names = [str(card) for card in parsed]
    hand = judge_hand(parsed, rules, groups=groups, tiplu=tiplu, turned=turned, players=players)
    maal, maal_error = None, None
    if rules.scoring is Scoring.MAAL and tiplu is not None:
        maal, maal_error = _attempt(lambda: maal_points(parsed, rules, tiplu, seen=seen))
    if reading_doubts is None:
        reading_doubts = short_meld_doubts(names, groups or [])
    doubts = list(reading_doubts)
    if hand.declare is not None and hand.declare.valid and len(names) in declared_sizes(rules):
        # a declared hand that finishes, of a size the rules deal, misses no card: no place to look
        doubts = [d for d in doubts if d.kind not in PLACE_KINDS]
    count = count_doubt(len(names), declared_sizes(rules), [d for d in doubts if d.kind == SHORT_MELD],
                        [d.index for d in doubtful])
    doubts += [count] if count is not None else []
    tried = [(d.index, list(d.alternatives)) for d in sorted(doubtful, key=DoubtfulCard.try_order) if d.alternatives]
    doubts += verdict_doubts(names, tried, rules, groups=groups, tiplu=tiplu, turned=turned, players=players)
    doubts += missing_card_verdict_doubts(names, [d for d in doubts if d.kind in PLACE_KINDS], rules,
                                          tiplu=tiplu, turned=turned, players=players)
    return CardsVerdict(tuple(names), hand, maal, maal_error, tuple(doubts))


@dataclass(frozen=True)
class PhotoVerdict(CardsVerdict):
    """A photo's reading and what :func:`judge_cards` says of its cards (``tiplu score``)."""

    reading: PhotoReading = field(kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The ``tiplu score --json`` shape; ``alternatives`` lie along ``cards``."""
        r = self.reading
        return {"image": r.image, "cards": r.card_names(), "groups": r.grouped_names(),
                "uncertain": [r.cards[i].card for i in r.uncertain], "clamped": list(r.clamped),
                "grouping": self.grouping, "declare": self.declare_dict(),
                "maal": self.maal.to_dict() if self.maal is not None else None,
                "maal_error": self.maal_error,
                "alternatives": [[{"card": n, "p": p} for n, p in c.alternatives] for c in r.cards],
                "doubts": [d.to_dict() for d in self.doubts]}


def score_reading(reading: PhotoReading, rules: RuleSet, *, tiplu: Card | None, turned: Card | None = None,
                  seen: bool = True, players: int | None = None) -> PhotoVerdict:
    """Declaration check (as laid when the photo shows a declaration), maal and doubts of a photo already
    read: :func:`judge_cards` on its cards, groups, doubtful cards and doubts."""
    judged = judge_cards(reading.card_names(), rules, tiplu=tiplu, turned=turned, groups=reading.groups,
                         doubtful=doubtful_cards(reading), reading_doubts=reading.doubts, seen=seen, players=players)
    return PhotoVerdict(judged.names, judged.hand, judged.maal, judged.maal_error, judged.doubts, reading=reading)


def score_photo(image_bgr: np.ndarray, detector: Detector, rules: RuleSet, *, tiplu: Card | None,
                turned: Card | None = None, seen: bool = True, conf: float = DEFAULT_CONF,
                uncertain_below: float | None = None, name: str | None = None,
                players: int | None = None) -> PhotoVerdict:
    """Photo to verdict in one call: :func:`vision.pipeline.read_photo` (bounded by ``rules``: copies of a
    card, printed jokers), then :func:`score_reading`."""
    reading = read_photo(image_bgr, detector, conf, name=name, uncertain_below=uncertain_below, rules=rules)
    return score_reading(reading, rules, tiplu=tiplu, turned=turned, seen=seen, players=players)
