"""Typed errors a caller can catch. Every message says what to fix.

All of them derive from :class:`TipluError` (a :class:`ValueError`), so the CLI,
the web page and the API can turn any of them into a clear message. Each is raised
with a template and its params (:mod:`scorer.messages`): ``str(error)`` is the English,
``error.message`` the :class:`~scorer.messages.Message` a page translates.

>>> error = CardError(N_("'%(text)s': unknown suit '%(suit)s' (use S, H, D, C or ♠ ♥ ♦ ♣)"), text="1X", suit="X")
>>> str(error), error.message.params["text"]
("'1X': unknown suit 'X' (use S, H, D, C or ♠ ♥ ♦ ♣)", '1X')
"""

from __future__ import annotations

from scorer.messages import Message, N_


class TipluError(ValueError):
    """Base class of every input error the scorer raises.

    ``template`` may also be a :class:`~scorer.messages.Message` already made (an
    error passed on under another class keeps its words).
    """

    message: Message

    def __init__(self, template: str, /, **params: object) -> None:
        self.message = template if isinstance(template, Message) and not params else Message(template, **params)
        super().__init__(self.message)


class CardError(TipluError):
    """A card token that cannot be read, e.g. ``'1X': unknown suit 'X'``."""


class TooManyCopiesError(CardError):
    """More copies of a card than the decks in play hold."""


class OptionError(TipluError):
    """An unknown rule family, an unknown option or a bad option value."""


class HandError(TipluError):
    """A hand of the wrong size or shape for the question asked."""


class SettlementError(TipluError):
    """Settlement input that cannot be settled (unknown winner, ...)."""


class PlayerCountError(TipluError):
    """A number of players outside the rule set's range (2 to ``players_max`` for nepali)."""
