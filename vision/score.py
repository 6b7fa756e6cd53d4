"""Photo to verdict: the declare check and the maal of the cards a photo shows.

``tiplu score`` and the web app's photo review judge a hand here, with one definition of
a hand *as laid* (:func:`lay_out`): every group of two or more cards is a meld (or a
dublee), and a card lying alone is the discard; two or more cards alone mean the hand is
not laid out as a declaration. :func:`judge_hand` runs the scorer's free search
(:func:`scorer.declare.check_hand`) and, when the groups are known, the check of the melds
as laid (:func:`scorer.declare.check_grouping`); a caller that shows one verdict takes
:attr:`HandVerdict.declare`, which is the hand as laid when the photo shows a declaration.

>>> from scorer import get_rules, parse_card, parse_cards
>>> hand = parse_cards("3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D JC JH 5C 5D KC")
>>> laid = [range(i, i + 3) for i in range(0, 21, 3)] + [[21]]
>>> verdict = judge_hand(hand, get_rules(), groups=laid, tiplu=parse_card("JS"))
>>> verdict.grouping, verdict.declare.valid, str(verdict.declare.discard)
('player', True, 'KC')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from scorer import Card, RuleSet, TipluError, parse_card
from scorer.declare import DeclareResult, check_grouping, check_hand
from scorer.kinds import Scoring
from scorer.maal import MaalResult, maal_points
from scorer.messages import Message, N_
from vision.detector import Detector
from vision.doubts import PLACE_KINDS, SHORT_MELD, Doubt, count_doubt, hinge_doubts, missing_card_doubts
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
        return (not self.apart and len(sizes) >= 2
                and (all(n >= 3 for n in sizes) or all(n == 2 for n in sizes)))


def lay_out(groups: Sequence[Sequence[int]], count: int) -> LaidHand:
    """The hand as laid, from groups of card positions (0 to ``count - 1``, each once).

    A group of one card, or a card in no group, lies alone: groups of one first, then
    the ungrouped cards in order.

    >>> lay_out([[2, 3], [0]], 4)
    LaidHand(melds=((2, 3),), alone=(0, 1))
    """
    grouped = {i for g in groups for i in g}
    alone = [g[0] for g in groups if len(g) == 1] + [i for i in range(count) if i not in grouped]
    return LaidHand(tuple(tuple(g) for g in groups if len(g) > 1), tuple(alone))


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
    verdict names the cards lying apart.
    """
    melds = [[cards[i] for i in meld] for meld in laid.melds]
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
    laid = lay_out(groups, len(cards))
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
    ``tiplu score`` and the photo review show; the scorer decides each try.

    >>> from scorer import get_rules, parse_card
    >>> hand = "3S 4S 5S 6H 6H 6H 9D 10D JD 2C 3C 4C KS KH KD 7D 8D 9H QC QH 5C 5D".split()
    >>> [d.message for d in verdict_doubts(hand, [(17, ["9S", "9D"])], get_rules(), tiplu=parse_card("2S"))]
    ['the hand finishes only if this is 9D, not 9H: please check']
    """
    def finishes(cards: Sequence[Card]) -> bool | None:
        verdict = judge_hand(cards, rules, groups=groups, tiplu=tiplu, turned=turned, players=players).declare
        return None if verdict is None else verdict.valid

    return hinge_doubts(names, doubtful, finishes)


@dataclass(frozen=True)
class PhotoVerdict:
    """Reading, declaration verdict (on which grouping), maal and doubts of one photo.

    ``maal`` is None when the rules score penalties, without a tiplu, or when the cards
    cannot be valued (``maal_error`` says why, e.g. printed jokers seen but not in play).
    ``doubts`` are the reading's, a card count no declared hand has, the doubtful cards
    the verdict hangs on, and for a hand one card short the faint corner whose card
    would finish it (:mod:`vision.doubts`); the verdict is the reading's.
    """

    reading: PhotoReading
    hand: HandVerdict
    maal: MaalResult | None
    maal_error: str | None
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

    def to_dict(self) -> dict[str, Any]:
        """The ``tiplu score --json`` shape; ``alternatives`` lie along ``cards``."""
        r = self.reading
        declare = self.declare.to_dict() if self.declare is not None else \
            {"valid": False, "route": None, "melds": [], "discard": None, "reason": self.declare_error}
        return {"image": r.image, "cards": r.card_names(), "groups": r.grouped_names(),
                "uncertain": [r.cards[i].card for i in r.uncertain], "clamped": list(r.clamped),
                "grouping": self.grouping, "declare": declare,
                "maal": self.maal.to_dict() if self.maal is not None else None,
                "maal_error": self.maal_error,
                "alternatives": [[{"card": n, "p": p} for n, p in c.alternatives] for c in r.cards],
                "doubts": [d.to_dict() for d in self.doubts]}


def score_reading(reading: PhotoReading, rules: RuleSet, *, tiplu: Card | None, turned: Card | None = None,
                  seen: bool = True, players: int | None = None) -> PhotoVerdict:
    """Declaration check (as laid when the photo shows a declaration), maal and doubts of a photo already read."""
    cards = [parse_card(n) for n in reading.card_names()]
    hand = judge_hand(cards, rules, groups=reading.groups, tiplu=tiplu, turned=turned, players=players)
    maal, maal_error = None, None
    if rules.scoring is Scoring.MAAL and tiplu is not None:
        maal, maal_error = _attempt(lambda: maal_points(cards, rules, tiplu, seen=seen))
    doubts = list(reading.doubts)
    count = count_doubt(len(reading.cards), declared_sizes(rules), [d for d in doubts if d.kind == SHORT_MELD],
                        reading.uncertain)
    doubts += [count] if count is not None else []
    doubtful = sorted((i for i in reading.uncertain if reading.cards[i].alternatives),
                      key=lambda i: reading.cards[i].confidence)
    doubts += verdict_doubts(reading.card_names(), [(i, [n for n, _ in reading.cards[i].alternatives])
                                                    for i in doubtful],
                             rules, groups=reading.groups, tiplu=tiplu, turned=turned, players=players)
    if len(reading.cards) + 1 in declared_sizes(rules):
        def finishes(cards: Sequence[Card]) -> bool | None:  # any grouping: where the card goes is unknown
            verdict = judge_hand(cards, rules, tiplu=tiplu, turned=turned, players=players).search
            return verdict is not None and verdict.valid
        doubts += missing_card_doubts(reading.card_names(), [d for d in doubts if d.kind in PLACE_KINDS], finishes)
    return PhotoVerdict(reading, hand, maal, maal_error, tuple(doubts))


def score_photo(image_bgr: np.ndarray, detector: Detector, rules: RuleSet, *, tiplu: Card | None,
                turned: Card | None = None, seen: bool = True, conf: float = DEFAULT_CONF,
                uncertain_below: float | None = None, name: str | None = None) -> PhotoVerdict:
    """Photo to verdict in one call: :func:`vision.pipeline.read_photo` (bounded by ``rules``: copies of a
    card, printed jokers), then :func:`score_reading`."""
    reading = read_photo(image_bgr, detector, conf, name=name, uncertain_below=uncertain_below, rules=rules)
    return score_reading(reading, rules, tiplu=tiplu, turned=turned, seen=seen)
