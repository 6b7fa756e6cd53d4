"""Doubts the rules find in a reading, where the pixels alone look sure.

The detector marks a card ``uncertain`` when its own numbers say so
(:mod:`vision.calibration`). The game knows more: only three decks are in play, a
declared hand has 21 (or 22) cards, a meld has three cards or more, and a verdict can
hang on one card. Each such finding is a :class:`Doubt` with a ``kind``, the card
indexes (and, for something that may be missing, a box) it concerns and a plain message
that says where to look. A doubt never changes the reading or the verdict: the player
decides, so a false declaration is still caught.

Kinds: :data:`TOO_MANY_COPIES`, :data:`SHORT_MELD`, :data:`HAND_COUNT`, :data:`VERDICT_HINGES`,
:data:`FAINT_CARD` (a corner too faint to count, where no card was read: a card
may have been missed there), :data:`STACKED_COPY` (a corner no card took, stacked on a card of its name: a
tunnela's or dublee's lower copy may have been missed) and :data:`ONE_OR_TWO` (two copies of a card that may be
one card's two corners). :data:`PLACE_KINDS` are the doubts that frame a place a card may be missing from.

>>> from vision.pairing import PhysicalCard
>>> from vision.geometry import centre_inside
>>> cards = [PhysicalCard(n, 0.9, (10.0 * i, 0.0, 10.0 * i + 8, 12.0), (i,)) for i, n in enumerate("3S 4S 5S 7H 8H".split())]
>>> [d.kind for d in layout_doubts(cards, [(0, 1, 2), (3, 4)])]
['short_meld']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from scorer import JOKER, Card, TipluError, parse_card
from scorer.messages import Message, N_, either
from vision.geometry import Box, Corner, centre_inside, union_box
from vision.pairing import PhysicalCard, stacked_on

TOO_MANY_COPIES = "too_many_copies"
SHORT_MELD = "short_meld"
HAND_COUNT = "hand_count"
VERDICT_HINGES = "verdict_hinges"
FAINT_CARD = "faint_card"
STACKED_COPY = "stacked_copy"
ONE_OR_TWO = "one_or_two"
PLACE_KINDS = (FAINT_CARD, STACKED_COPY)
#: A hand this many cards off the declared sizes is a miscount; further off, no declaration.
COUNT_SLACK = 2
#: At most this many doubtful cards are tried with their alternatives (each try is one
#: declare check), the least confident first.
MAX_HINGE_TRIES = 8



@dataclass(frozen=True)
class Doubt:
    """One thing the player should check: what kind, which cards (indexes), where, and why.

    ``message`` is a :class:`~scorer.messages.Message` (a page says it in its language).

    ``box`` (photo pixels) marks a place to look when no card stands for it (a copy
    dropped, a meld short of a card, a faint corner, whose ``confidence`` it gives).
    ``card`` names the card concerned (for a faint corner, the card it looks like) and
    ``instead`` the alternative that would change the verdict.

    >>> Doubt(VERDICT_HINGES, (4,), "the hand finishes only if this is 8H, not 8D: please check",
    ...       card="8D", instead="8H").to_dict()["instead"]
    '8H'
    """

    kind: str
    cards: tuple[int, ...]
    message: str
    box: Box | None = None
    card: str | None = None
    instead: str | None = None
    confidence: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "cards": list(self.cards), "message": self.message}
        if self.box is not None:
            out["box"] = [round(v, 1) for v in self.box]
        if self.confidence is not None:
            out["confidence"] = round(self.confidence, 4)
        if self.card is not None:
            out["card"] = self.card
        if self.instead is not None:
            out["instead"] = self.instead
        return out


def copy_doubts(cards: Sequence[PhysicalCard], dropped: Sequence[PhysicalCard], decks: int,
                jokers: int | None = None) -> list[Doubt]:
    """More copies of a face than the decks hold: flag every copy, and point at the one left out.

    ``jokers`` is how many printed jokers the game holds (default: as many as ``decks``); a
    printed joker read in a game without them is another card, or the rules miss the option.

    >>> kept = [PhysicalCard("8H", 0.9, (0.0, 0.0, 5.0, 5.0), (0,), clamped=True)] * 3
    >>> extra = [PhysicalCard("8H", 0.4, (50.0, 0.0, 55.0, 5.0), (3,))]
    >>> copy_doubts(kept, extra, 3)[0].message
    '4 cards read as 8H, but 3 decks hold 3: one of them is another card; check these and the one marked'
    >>> joker = [PhysicalCard("JOKER", 0.5, (0.0, 80.0, 99.0, 160.0), (0,))]
    >>> copy_doubts([], joker, 3, jokers=0)[0].message
    'a printed joker seems to lie at the place marked, but this game is played without printed jokers, so it is left out: if a card lies there, add it from the grid; if you play with printed jokers, turn them on in the rules'
    """
    doubts = []
    for name in dict.fromkeys(c.card for c in dropped):
        same = tuple(i for i, c in enumerate(cards) if c.card == name)
        left_out = [c.box for c in dropped if c.card == name]
        seen = len(same) + len(left_out)
        if name == str(JOKER) and jokers is not None:
            message = Message(N_("a printed joker seems to lie at the place marked, but this game is played "
                                 "without printed jokers, so it is left out: if a card lies there, add it from "
                                 "the grid; if you play with printed jokers, turn them on in the rules")) \
                if jokers == 0 else \
                Message(N_("%(n)s printed jokers are read, but this game has %(jokers)s: one of them is another "
                           "card; check these and the one marked"), n=seen, jokers=jokers)
        else:
            message = Message(N_("%(n)s cards read as %(card)s, but %(decks)s decks hold %(decks)s: one of them "
                                 "is another card; check these and the one marked"), n=seen, card=name, decks=decks)
        doubts.append(Doubt(TOO_MANY_COPIES, same, message, box=union_box(left_out)))
    return doubts


def apart_doubts(cards: Sequence[PhysicalCard], apart: Sequence[tuple[int, int]]) -> list[Doubt]:
    """Two copies of a card read from corners that may be one card's two: check, remove one if so.

    ``apart`` holds pairs of card indexes (:attr:`vision.pairing.Pairing.apart`, each
    corner one card). Two copies are more often what lies on a Marriage table, so the
    reading keeps both; the player decides.

    >>> cards = [PhysicalCard("9C", 0.9, (0.0, 0.0, 8.0, 12.0), (0,)), PhysicalCard("9C", 0.8, (60.0, 90.0, 68.0, 102.0), (1,))]
    >>> [(d.cards, d.box) for d in apart_doubts(cards, [(0, 1)])]
    [((0, 1), (0.0, 0.0, 68.0, 102.0))]
    """
    return [Doubt(ONE_OR_TWO, (i, j),
                  Message(N_("two %(card)s are read here, but they may be the two corners of one %(card)s: "
                             "if it is one card, remove one of them"), card=cards[i].card),
                  box=union_box([cards[i].box, cards[j].box])) for i, j in apart]


def layout_doubts(cards: Sequence[PhysicalCard], groups: Sequence[Sequence[int]]) -> list[Doubt]:
    """Groups of two where three are expected (:func:`short_meld_doubts`), framed on the photo.

    >>> cards = [PhysicalCard(n, 0.9, (10.0 * i, 0.0, 10.0 * i + 8, 12.0), (i,)) for i, n in enumerate("2D 2D 7S".split())]
    >>> [(d.message, d.box) for d in layout_doubts(cards, [(0, 1), (2,)])]
    [('2D 2D lie together: a tunnela is three of one card; is a third 2D hidden or missed here?', (0.0, 0.0, 18.0, 12.0))]
    """
    return short_meld_doubts([c.card for c in cards], groups, [c.box for c in cards])


def short_meld_doubts(names: Sequence[str], groups: Sequence[Sequence[int]],
                      boxes: Sequence[Box | None] | None = None) -> list[Doubt]:
    """Groups of two where three are expected: a card of that meld may be hidden or missed.

    A group of two among melds of three or more (not on a photo of dublees, which shows
    pairs only); and two copies of one card lying together when no other pair does: a
    tunnela is three of one card, and stage 1 most often misses the middle index of
    three copies cascaded (their indices lie closest). Two or more such pairs and nothing
    longer are a dublee show, and a photo of just the two copies shows a pair, so nothing
    is flagged. Only names and groups decide, so the photo review finds the same doubts
    from the cards it sends as the reading did; ``boxes`` (per card) frame each pair.

    >>> [d.message for d in short_meld_doubts("3S 4S 5S 7H 8H".split(), [(0, 1, 2), (3, 4)])]
    ['7H 8H lie together as a meld of two; a meld needs three: is a card of it hidden or missed here?']
    >>> short_meld_doubts(["2D", "2D", "7S", "7S"], [(0, 1), (2, 3)])
    []
    """
    sizes = [len(g) for g in groups]
    melds = any(n >= 3 for n in sizes)
    copies = [tuple(g) for g in groups if len(g) == 2 and names[g[0]] == names[g[1]]]
    if not melds and (len(copies) != 1 or len(names) <= 2):
        return []
    return [short_meld_doubt(names, group, boxes) for group in groups
            if len(group) == 2 and (melds or tuple(group) in copies)]


def short_meld_doubt(names: Sequence[str], pair: Sequence[int], boxes: Sequence[Box | None] | None = None) -> Doubt:
    """The :data:`SHORT_MELD` doubt on two cards lying together: a missed third copy when they are
    two of one card, else a missed card of the meld.

    >>> short_meld_doubt(["7H", "8H"], (0, 1), [(0.0, 0.0, 5.0, 5.0), (4.0, 0.0, 9.0, 5.0)]).box
    (0.0, 0.0, 9.0, 5.0)
    """
    text = " ".join(names[i] for i in pair)
    if names[pair[0]] == names[pair[1]]:
        message = Message(N_("%(cards)s lie together: a tunnela is three of one card; is a third %(card)s "
                             "hidden or missed here?"), cards=text, card=names[pair[0]])
    else:
        message = Message(N_("%(cards)s lie together as a meld of two; a meld needs three: "
                             "is a card of it hidden or missed here?"), cards=text)
    framed = [box for box in (boxes[i] for i in pair) if box is not None] if boxes is not None else []
    return Doubt(SHORT_MELD, tuple(pair), message, box=union_box(framed) if framed else None)


def faint_doubts(cards: Sequence[PhysicalCard], faint: Sequence[Corner],
                 corners: Sequence[Corner] = (), later: Sequence[Corner] = ()) -> list[Doubt]:
    """Places a card may be missed: corners no card was read from, lying on no card read
    (:data:`FAINT_CARD`), or stacked on a card of their name (:data:`STACKED_COPY`).

    ``faint`` are the corners too faint to count and those pairing left out; ``corners`` the
    reading's, which the cards' ``corners`` index. One lying on a card read is a place only
    where it lies stacked on a corner of its name (:func:`vision.pairing.stacked_on`): a
    tunnela's lower copy, boxed faintly or taken for its top copy's index. (The pipeline names
    each corner within the decks in play first, :func:`vision.pipeline.in_play`: one of a card
    already read as often as the decks hold it is no copy of it.) Corners close together
    (centres within an index size) are one place, the surest kept; the corners ``later`` (found by
    looking around, :func:`vision.pipeline.looked_around`) are places only where none of ``faint`` is,
    so that a place the photo showed keeps its name.

    >>> read = [PhysicalCard("7H", 0.9, (0.0, 0.0, 60.0, 90.0), (0,))]
    >>> faint = [Corner("8H", 0.2, (10, 10, 20, 25)), Corner("KS", 0.18, (200, 10, 210, 25)),
    ...          Corner("KC", 0.12, (203, 12, 213, 27))]
    >>> [(d.kind, d.box, d.confidence) for d in faint_doubts(read, faint)]
    [('faint_card', (200.0, 10.0, 210.0, 25.0), 0.18)]
    """
    def centre(box: Sequence[float]) -> tuple[float, float]:
        return (box[0] + box[2]) / 2, (box[1] + box[3]) / 2

    read = [corners[i] for card in cards for i in card.corners if i < len(corners)]
    places: list[tuple[Corner, bool]] = []
    for corner in sorted(faint, key=lambda c: -c.confidence) + sorted(later, key=lambda c: -c.confidence):
        x, y = centre(corner.box)
        on_card = centre_inside(corner.box, [c.box for c in cards])
        if on_card and not any(stacked_on(corner, under) for under in read):
            continue
        size = max(corner.box[2] - corner.box[0], corner.box[3] - corner.box[1])
        if any(abs(x - centre(p.box)[0]) < size and abs(y - centre(p.box)[1]) < size for p, _ in places):
            continue
        places.append((corner, on_card))
    return [place_doubt(STACKED_COPY if on_card else FAINT_CARD, c.card, union_box([c.box]), c.confidence)
            for c, on_card in places]


def place_doubt(kind: str, card: str, box: Box, confidence: float | None = None) -> Doubt:
    """A place a card may be missing from (``kind`` one of :data:`PLACE_KINDS`), with its message.

    The photo review sends its open places back with each check; this gives them the words
    the reading gave them.

    >>> place_doubt(STACKED_COPY, "6H", (1.0, 2.0, 3.0, 4.0)).message
    'another 6H may lie under the one read here: count them, and add it from the grid if so'
    """
    text = (N_("another %(card)s may lie under the one read here: count them, and add it from the grid if so")
            if kind == STACKED_COPY else
            N_("a card may lie here, too faint to read (perhaps %(card)s): add it from the grid if so"))
    return Doubt(kind, (), Message(text, card=card), box=box, card=card, confidence=confidence)


def missing_card_doubts(names: Sequence[str], faint: Sequence[Doubt],
                        finishes: Callable[[Sequence[Card]], bool | None]) -> list[Doubt]:
    """Places a card may be missing from whose card, added to a hand that does not finish, would finish it.

    ``faint`` are doubts of :data:`PLACE_KINDS` (each names the card it looks like). The
    verdict stays the reading's; this names the card and the place to check.

    >>> place = Doubt(FAINT_CARD, (), "faint", box=(5.0, 5.0, 9.0, 9.0), card="10S")
    >>> [d.message for d in missing_card_doubts(["9S", "JS"], [place], lambda cards: len(cards) == 3)]
    ['the hand finishes only if the card framed here is 10S, too faint to read: please check']
    >>> copy = Doubt(STACKED_COPY, (), "stacked", box=(5.0, 5.0, 9.0, 9.0), card="6H")
    >>> [d.message for d in missing_card_doubts(["6H", "6H"], [copy], lambda cards: len(cards) == 3)]
    ['the hand finishes only if another 6H lies under the one framed here: please count them']
    """
    cards = [parse_card(n) for n in names]
    if finishes(cards) is not False:
        return []
    doubts = []
    for place in faint[:MAX_HINGE_TRIES]:
        if place.card is None or not finishes(cards + [parse_card(place.card)]):
            continue
        text = (N_("the hand finishes only if another %(card)s lies under the one framed here: please count them")
                if place.kind == STACKED_COPY else
                N_("the hand finishes only if the card framed here is %(card)s, too faint to read: please check"))
        doubts.append(Doubt(VERDICT_HINGES, (), Message(text, card=place.card), box=place.box, card=place.card))
    return doubts


def count_doubt(count: int, sizes: Sequence[int], short: Sequence[Doubt] = (),
                uncertain: Sequence[int] = ()) -> Doubt | None:
    """A declared hand read with a card count the rules never deal (e.g. 20 or 23 of 21/22).

    ``short`` (the :data:`SHORT_MELD` doubts) say where a missed card most likely lies;
    ``uncertain`` (card indexes) which cards may be read twice or not belong.

    >>> count_doubt(20, (21, 22)).message
    'the hand reads 20 cards; a declared hand has 21 or 22: a card was missed, count the cards in each meld'
    >>> count_doubt(21, (21, 22)) is None, count_doubt(9, (21, 22)) is None
    (True, True)
    """
    if not count or count in sizes or not min(sizes) - COUNT_SLACK <= count <= max(sizes) + COUNT_SLACK:
        return None  # far off: not a declared hand at all, which the verdict says
    wanted = either(sizes)
    if count < min(sizes):
        missed = Message(N_("the hand reads %(n)s cards; a declared hand has %(wanted)s: a card was missed, "
                            "look at the melds of two marked"), n=count, wanted=wanted) if short else \
            Message(N_("the hand reads %(n)s cards; a declared hand has %(wanted)s: a card was missed, "
                       "count the cards in each meld"), n=count, wanted=wanted)
        framed = [d.box for d in short if d.box is not None]
        return Doubt(HAND_COUNT, tuple(i for d in short for i in d.cards), missed,
                     box=union_box(framed) if framed else None)
    return Doubt(HAND_COUNT, tuple(uncertain),
                 Message(N_("the hand reads %(n)s cards; a declared hand has %(wanted)s: a card was read twice or "
                            "one from outside the hand was read; check the cards marked"), n=count, wanted=wanted))


def hinge_doubts(names: Sequence[str], doubtful: Sequence[tuple[int, Sequence[str]]],
                 finishes: Callable[[Sequence[Card]], bool | None]) -> list[Doubt]:
    """Doubtful cards whose alternative would flip the verdict: name the card and the alternative.

    ``doubtful`` holds (index, alternatives) of the cards the player has not confirmed,
    least sure first; ``finishes`` is the scorer's verdict on a list of cards (None when
    no verdict can be given: none for the reading means no doubt, and an alternative
    that cannot be judged, say a fourth copy, does not finish). The verdict of the reading stands; this only says which
    card it hangs on.

    >>> hand = ["8D", "9D", "10D"]
    >>> def finishes(cards):
    ...     return [str(c) for c in cards] == ["8H", "9D", "10D"]
    >>> [d.message for d in hinge_doubts(hand, [(0, ["8H", "6D"])], finishes)]
    ['the hand finishes only if this is 8H, not 8D: please check']
    """
    cards = [parse_card(n) for n in names]
    base = finishes(cards)
    if base is None:
        return []
    doubts = []
    for index, alternatives in list(doubtful)[:MAX_HINGE_TRIES]:
        for other in alternatives:
            try:
                changed = cards[:index] + [parse_card(other)] + cards[index + 1:]
            except TipluError:
                continue
            if bool(finishes(changed)) == base:
                continue
            good, bad = (other, names[index]) if not base else (names[index], other)
            doubts.append(Doubt(VERDICT_HINGES, (index,),
                                Message(N_("the hand finishes only if this is %(good)s, not %(bad)s: please check"),
                                        good=good, bad=bad), card=names[index], instead=other))
            break
    return doubts
