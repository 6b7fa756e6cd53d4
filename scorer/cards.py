"""Cards, their text notation (RULES.md section 1) and hands as multisets.

A :class:`Card` is a value: two copies of the queen of spades from different
decks are equal, because identical cards are interchangeable everywhere in
scoring. Hands are therefore plain lists (or :class:`collections.Counter`s).

>>> parse_cards("10C jh T♣ JOKER")
[Card('10C'), Card('JH'), Card('10C'), Card('JOKER')]
>>> str(parse_card("qs"))
'QS'
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable

from scorer.errors import CardError, TooManyCopiesError
from scorer.messages import N_

SUITS: tuple[str, ...] = ("S", "H", "D", "C")
SUIT_SYMBOLS: dict[str, str] = {"♠": "S", "♥": "H", "♦": "D", "♣": "C",
                                "♤": "S", "♡": "H", "♢": "D", "♧": "C"}
#: The emoji variation selector (U+FE0F) a phone keyboard adds after a suit symbol: ``10♣️`` is ``10C``.
VARIATION_SELECTOR = "\ufe0f"
RED_SUITS = frozenset({"H", "D"})
RANK_NAMES: dict[int, str] = {1: "A", 11: "J", 12: "Q", 13: "K"} | {r: str(r) for r in range(2, 11)}
RANK_BY_NAME: dict[str, int] = {name: rank for rank, name in RANK_NAMES.items()} | {"T": 10}
JOKER_NAMES = frozenset({"JOKER", "JK", "🃏", "JKR"})
JOKER_RANK = 0
JOKER_SUIT = "*"


@dataclass(frozen=True, order=True, slots=True)
class Card:
    """One card face: ``rank`` 1 (ace) to 13 (king) and ``suit`` S/H/D/C.

    The printed joker is ``Card(0, "*")`` (see :data:`JOKER`); red and black
    jokers are the same card.
    """

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if self.suit == JOKER_SUIT:
            if self.rank != JOKER_RANK:
                raise CardError(N_("'%(rank)s%(suit)s': a joker has no rank"), rank=self.rank, suit=self.suit)
        elif self.suit not in SUITS or not 1 <= self.rank <= 13:
            raise CardError(N_("'%(rank)s%(suit)s': not a card"), rank=self.rank, suit=self.suit)

    @property
    def is_joker(self) -> bool:
        """True for the printed joker."""
        return self.suit == JOKER_SUIT

    @property
    def is_red(self) -> bool:
        return self.suit in RED_SUITS

    @property
    def rank_name(self) -> str:
        return "JOKER" if self.is_joker else RANK_NAMES[self.rank]

    def __str__(self) -> str:
        return "JOKER" if self.is_joker else f"{RANK_NAMES[self.rank]}{self.suit}"

    def __repr__(self) -> str:
        return f"Card('{self}')"


JOKER = Card(JOKER_RANK, JOKER_SUIT)

#: Every distinct face in canonical order: A..K of spades, hearts, diamonds,
#: clubs, then the printed joker. The card detector's 53 classes use this order.
ALL_FACES: tuple[Card, ...] = tuple(Card(r, s) for s in SUITS for r in range(1, 14)) + (JOKER,)
CLASS_NAMES: tuple[str, ...] = tuple(str(c) for c in ALL_FACES)
FACE_INDEX: dict[Card, int] = {c: i for i, c in enumerate(ALL_FACES)}

_SPLIT = re.compile(r"[\s,;]+")


def parse_card(token: str) -> Card:
    """Parse one card token such as ``10C``, ``TC``, ``10♣``, ``jh`` or ``JOKER``.

    Raises :class:`CardError` naming the token and what is wrong with it.

    >>> parse_card("T♣"), parse_card("10\u2663\ufe0f")
    (Card('10C'), Card('10C'))
    """
    if not isinstance(token, str):
        raise CardError(N_("%(token)r: a card must be text like '10C' or 'JOKER'"), token=token)
    text = token.strip()
    if len(text) > 1 and text.endswith(VARIATION_SELECTOR) and text[-2] in SUIT_SYMBOLS:
        text = text[:-1]
    if not text:
        raise CardError(N_("empty card: write a rank and a suit, like '10C'"))
    upper = text.upper()
    if upper in JOKER_NAMES or text in JOKER_NAMES:
        return JOKER
    suit_char = text[-1]
    suit = SUIT_SYMBOLS.get(suit_char, suit_char.upper())
    rank_text = text[:-1].strip().upper()
    if suit not in SUITS:
        raise CardError(N_("'%(text)s': unknown suit '%(suit)s' (use S, H, D, C or ♠ ♥ ♦ ♣)"), text=text, suit=suit_char)
    if not rank_text:
        raise CardError(N_("'%(text)s': missing rank before the suit (A, 2-10, J, Q, K)"), text=text)
    if rank_text not in RANK_BY_NAME:
        raise CardError(N_("'%(text)s': unknown rank '%(rank)s' (use A, 2-10 or T, J, Q, K)"), text=text,
                        rank=rank_text)
    return Card(RANK_BY_NAME[rank_text], suit)


def split_tokens(text: str | Iterable[str]) -> list[str]:
    """Split free text (``"10C JC, QC"``) into tokens; lists pass through."""
    if isinstance(text, str):
        return [t for t in _SPLIT.split(text) if t]
    return list(text)


def parse_cards(text: str | Iterable[str]) -> list[Card]:
    """Parse many cards from text or a list of tokens, without checking copies."""
    return [parse_card(t) for t in split_tokens(text)]


def check_copies(cards: Iterable[Card], decks: int = 3, jokers: int = 0,
                 limits: dict[Card, int] | None = None) -> Counter[Card]:
    """Count a hand and reject more copies than the decks in play hold.

    ``limits`` lowers the limit for particular faces (the tiplu has only two
    copies in play, the third lies under the stock).

    >>> check_copies(parse_cards("QS QS QS QS"))
    Traceback (most recent call last):
    ...
    scorer.errors.TooManyCopiesError: 'QS' appears 4 times; 3 decks have 3
    >>> check_copies(parse_cards("JOKER JOKER"), jokers=1)
    Traceback (most recent call last):
    ...
    scorer.errors.TooManyCopiesError: 'JOKER' appears 2 times; only 1 printed joker is in play
    """
    counts = Counter(cards)
    for card, n in counts.items():
        if card.is_joker:
            if n > jokers:
                if jokers == 0:
                    raise TooManyCopiesError(N_("'JOKER': printed jokers are not in play with these rules "
                                                "(set the option printed_jokers to use them)"))
                if jokers == 1:
                    raise TooManyCopiesError(N_("'JOKER' appears %(n)s times; only 1 printed joker is in play"), n=n)
                raise TooManyCopiesError(N_("'JOKER' appears %(n)s times; only %(jokers)s printed jokers are in play"),
                                         n=n, jokers=jokers)
            continue
        limit = decks if limits is None else limits.get(card, decks)
        if n > limit:
            if limit == decks:
                raise TooManyCopiesError(N_("'%(card)s' appears %(n)s times; %(decks)s decks have %(decks)s"),
                                         card=card, n=n, decks=decks)
            raise TooManyCopiesError(N_("'%(card)s' appears %(n)s times; only %(limit)s copies are in play"),
                                     card=card, n=n, limit=limit)
    return counts


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as canonical text, space separated: ``'10C JC QC'``."""
    return " ".join(str(c) for c in cards)


def card_names(cards: Iterable[Card]) -> list[str]:
    """Cards as a list of canonical strings, for JSON."""
    return [str(c) for c in cards]


def sort_cards(cards: Iterable[Card]) -> list[Card]:
    """Cards sorted by suit then rank, the order a player fans them."""
    return sorted(cards, key=lambda c: FACE_INDEX[c])
