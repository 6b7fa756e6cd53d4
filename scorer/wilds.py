"""Which cards are wild: from the tiplu (nepali) or the turned card (rummy).

>>> from scorer import get_rules, parse_card
>>> w = wild_cards(get_rules("nepali"), tiplu=parse_card("AH"))
>>> str(w.jhiplu), str(w.poplu), len(w.ordinary_jokers)
('KH', '2H', 3)
>>> w.is_wild(parse_card("AS")), w.is_wild(parse_card("3H"))
(True, False)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from scorer.cards import JOKER, SUITS, Card, check_copies
from scorer.errors import HandError
from scorer.kinds import WildSource
from scorer.messages import N_
from scorer.rules import RuleSet


def rank_above(rank: int) -> int:
    """The next rank up, wrapping K -> A (used for neighbours, never for sequences)."""
    return 1 if rank == 13 else rank + 1


def rank_below(rank: int) -> int:
    """The next rank down, wrapping A -> K."""
    return 13 if rank == 1 else rank - 1


@dataclass(frozen=True)
class Wilds:
    """The wild cards of one round and the maal faces (nepali).

    ``wild_faces`` holds every face that is wild; a wild card may still be
    played as its own face. ``jokers_in_play`` is how many printed jokers exist.
    """

    wild_faces: frozenset[Card]
    tiplu: Card | None = None
    jhiplu: Card | None = None
    poplu: Card | None = None
    ordinary_jokers: frozenset[Card] = frozenset()
    alter: frozenset[Card] = frozenset()
    joker_rank: int | None = None
    jokers_in_play: int = 0

    def is_wild(self, card: Card) -> bool:
        return card in self.wild_faces


def wild_cards(rules: RuleSet, *, tiplu: Card | None = None, turned: Card | None = None) -> Wilds:
    """The wild cards for ``rules``: nepali needs the ``tiplu``, rummy the ``turned`` card.

    Raises :class:`HandError` when the card that sets the wilds is missing or a printed joker.
    """
    if rules.wild_source == WildSource.TURNED:
        return _from_turned(rules, turned)
    return _from_tiplu(rules, tiplu)


def _printed(rules: RuleSet) -> frozenset[Card]:
    return frozenset({JOKER}) if rules.printed_jokers else frozenset()


def _from_turned(rules: RuleSet, turned: Card | None) -> Wilds:
    """The rank above the turned card is the joker rank, in every suit (in the
    turned card's suit only with ``joker_same_suit``)."""
    if turned is None:
        raise HandError(N_("the %(rules)s rules need the turned card (e.g. --turned 7D)"), rules=rules.name)
    if turned.is_joker:
        raise HandError(N_("the turned card is a printed joker: turn the next card to set the joker rank"))
    rank = rank_above(turned.rank)
    suits = (turned.suit,) if rules.flag("joker_same_suit") else SUITS
    faces = frozenset(Card(rank, s) for s in suits)
    return Wilds(wild_faces=faces | _printed(rules), joker_rank=rank, jokers_in_play=rules.printed_jokers)


def _from_tiplu(rules: RuleSet, tiplu: Card | None) -> Wilds:
    """The tiplu, its neighbours in its suit and its rank in the other suits are wild."""
    if tiplu is None:
        raise HandError(N_("the %(rules)s rules need the tiplu (e.g. --tiplu JC)"), rules=rules.name)
    if tiplu.is_joker:
        raise HandError(N_("the tiplu cannot be a printed joker: draw another card"))
    jhiplu = Card(rank_below(tiplu.rank), tiplu.suit)
    poplu = Card(rank_above(tiplu.rank), tiplu.suit)
    ordinary = frozenset(Card(tiplu.rank, s) for s in SUITS if s != tiplu.suit)
    alter = frozenset(c for c in ordinary if c.is_red == tiplu.is_red) if rules.flag("alter") else frozenset()
    faces = frozenset({tiplu, jhiplu, poplu}) | ordinary | _printed(rules)
    return Wilds(wild_faces=faces, tiplu=tiplu, jhiplu=jhiplu, poplu=poplu,
                 ordinary_jokers=ordinary, alter=alter, joker_rank=tiplu.rank, jokers_in_play=rules.printed_jokers)


def verify_holding_size(cards: Sequence[Card], rules: RuleSet) -> None:
    """Raise :class:`HandError` for more cards than a player can hold: the hand plus one drawn."""
    most = rules.hand_size + 1
    if len(cards) > most:
        raise HandError(N_("a hand has at most %(most)s cards (%(dealt)s dealt and one drawn); this one has %(n)s"),
                        most=most, dealt=rules.hand_size, n=len(cards))


def copy_limits(rules: RuleSet, wilds: Wilds | None) -> dict[Card, int]:
    """Per-face copy limits below the deck count: only two tiplu copies are in play."""
    if wilds is not None and wilds.tiplu is not None:
        return {wilds.tiplu: rules.decks - 1}
    return {}


def copies_in_play(card: Card, rules: RuleSet, wilds: Wilds | None = None) -> int:
    """How many copies of ``card`` can be on the table: the decks' (the tiplu's one fewer), or the printed jokers.

    >>> from scorer import get_rules, parse_card
    >>> rules = get_rules()
    >>> wilds = wild_cards(rules, tiplu=parse_card("5D"))
    >>> copies_in_play(parse_card("5D"), rules, wilds), copies_in_play(parse_card("KS"), rules, wilds)
    (2, 3)
    """
    if card.is_joker:
        return rules.printed_jokers
    return copy_limits(rules, wilds).get(card, rules.decks)


def checked_hand(cards: Sequence[Card], rules: RuleSet, *, tiplu: Card | None = None,
                 turned: Card | None = None) -> tuple[Wilds, Counter[Card]]:
    """The round's wild cards, and the hand counted after rejecting more copies of a
    card than are in play (:class:`~scorer.errors.TooManyCopiesError`)."""
    wilds = wild_cards(rules, tiplu=tiplu, turned=turned)
    return wilds, check_copies(cards, rules.decks, rules.printed_jokers, copy_limits(rules, wilds))
