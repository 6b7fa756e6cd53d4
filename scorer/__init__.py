"""tiplu's rules engine for Marriage: pure Python, no I/O.

The public API (everything the CLI, the web app and the camera pipeline use):

- cards: :class:`Card`, :func:`parse_card`, :func:`parse_cards`, :func:`check_copies`,
  :data:`CLASS_NAMES` (the detector's 53 classes)
- rules: :func:`get_rules`, :data:`RULE_FAMILIES`, :class:`RuleSet`
- wild cards: :func:`wild_cards` (:class:`Wilds`)
- melds: :func:`classify_meld`, :func:`can_see`
- declare: :func:`check_hand`, :func:`check_grouping` (:class:`DeclareResult`)
- maal: :func:`maal_points` (:class:`MaalResult`)
- settlement: :func:`settle_round` (:class:`Settlement`)
- rummy: :func:`penalty_points` (:class:`PenaltyResult`)
"""

from scorer.cards import (ALL_FACES, CLASS_NAMES, JOKER, Card, card_names, check_copies,
                          format_cards, parse_card, parse_cards, sort_cards)
from scorer.errors import (CardError, HandError, OptionError, SettlementError, TipluError,
                           TooManyCopiesError)
from scorer.rules import RULE_FAMILIES, OptionSpec, RuleFamily, RuleSet, get_rules

__all__ = [
    "ALL_FACES", "CLASS_NAMES", "JOKER", "Card", "card_names", "check_copies", "format_cards",
    "parse_card", "parse_cards", "sort_cards",
    "CardError", "HandError", "OptionError", "SettlementError", "TipluError", "TooManyCopiesError",
    "RULE_FAMILIES", "OptionSpec", "RuleFamily", "RuleSet", "get_rules",
]
