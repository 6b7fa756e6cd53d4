"""Typed errors a caller can catch. Every message says what to fix.

All of them derive from :class:`TipluError` (a :class:`ValueError`), so the CLI,
the web page and the API can turn any of them into a clear message.
"""


class TipluError(ValueError):
    """Base class of every input error the scorer raises."""


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
