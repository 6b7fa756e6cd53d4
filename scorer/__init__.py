"""tiplu's rules engine for Marriage: pure Python, no I/O.

The public API (everything the CLI, the web app and the camera pipeline use):

- cards: :class:`Card`, :func:`parse_card`, :func:`parse_cards`, :func:`check_copies`,
  :data:`CLASS_NAMES` (the detector's 53 classes)
- kinds: :class:`Family`, :class:`Route` (:data:`Finish`, :data:`FINISHES`),
  :class:`MeldKind`, :class:`Scoring`, :class:`WildSource`
- rules: :func:`get_rules`, :data:`RULE_FAMILIES`, :class:`RuleFamily`, :class:`MeldRules`,
  :class:`RuleSet`, :class:`OptionSpec`
- wild cards: :func:`wild_cards` (:class:`Wilds`)
- melds: :func:`classify_meld` (:class:`MeldCheck`), :func:`can_see` (:class:`SeeResult`)
- declare: :func:`check_hand`, :func:`check_grouping` (:class:`DeclareResult`)
- maal: :func:`maal_points` (:class:`MaalResult`, :class:`MaalItem`)
- settlement: :func:`settle_round` (:class:`PlayerRound`, :class:`Settlement`, :class:`Payment`)
- rummy: :func:`penalty_points` (:class:`PenaltyResult`)
- errors: :class:`TipluError` and its subclasses, each message saying what to fix
- messages: :class:`Message` (English text that keeps its template and params, for pages
  in other languages), :func:`N_`, :func:`recognise`

>>> import scorer
>>> rules = scorer.get_rules("nepali")
>>> tiplu = scorer.parse_card("JC")
>>> [str(c) for c in sorted(scorer.wild_cards(rules, tiplu=tiplu).wild_faces)]
['10C', 'JC', 'JD', 'JH', 'JS', 'QC']
>>> scorer.classify_meld(scorer.parse_cards("7H 8H JD"), scorer.wild_cards(rules, tiplu=tiplu)).kind
<MeldKind.DIRTY_SEQUENCE: 'dirty sequence'>
>>> hand = scorer.parse_cards("AS AS 2H 2H 3D 3D 4C 4C 7S 7S 8H 8H 9D 9D KC KC 10S JH QD 6S 3C")
>>> result = scorer.check_hand(hand, rules, tiplu=tiplu)
>>> result.valid, result.route == scorer.Route.DUBLEES
(True, True)
>>> scorer.maal_points(scorer.parse_cards("10C JC QC QC"), rules, tiplu).total
12
>>> players = [scorer.PlayerRound("A", maal=12, seen=True), scorer.PlayerRound("B", seen=False)]
>>> scorer.settle_round(rules, players, winner="A", finish=scorer.Finish.DUBLEES).net
{'A': 27, 'B': -27}
>>> scorer.penalty_points(scorer.parse_cards("3S 4S 5S KH"), scorer.get_rules("rummy"), scorer.parse_card("7D")).penalty
10
>>> scorer.can_see(scorer.parse_cards("3S 4S 5S 6H 6H 6H QD KD AD"), rules).can_see
True
"""

from scorer.cards import (ALL_FACES, CLASS_NAMES, JOKER, Card, card_names, check_copies,
                          format_cards, parse_card, parse_cards, sort_cards)
from scorer.declare import DeclareResult, SeeResult, can_see, check_grouping, check_hand
from scorer.errors import (CardError, HandError, OptionError, PlayerCountError, SettlementError,
                           TipluError, TooManyCopiesError)
from scorer.kinds import FINISHES, PURE_KINDS, Family, Finish, MeldKind, Route, Scoring, WildSource
from scorer.maal import MaalItem, MaalResult, maal_points
from scorer.messages import N_, Message, recognise
from scorer.melds import MeldCheck, classify_meld
from scorer.rules import (RULE_FAMILIES, MeldRules, OptionSpec, OptionValue, RuleFamily, RuleSet,
                          get_rules)
from scorer.rummy import PenaltyResult, penalty_points
from scorer.settle import Adjustment, Payment, PlayerRound, Settlement, settle_round
from scorer.wilds import Wilds, wild_cards

__all__ = [
    "ALL_FACES", "CLASS_NAMES", "JOKER", "Card", "card_names", "check_copies", "format_cards",
    "parse_card", "parse_cards", "sort_cards",
    "DeclareResult", "SeeResult", "can_see", "check_grouping", "check_hand",
    "CardError", "HandError", "OptionError", "PlayerCountError", "SettlementError", "TipluError",
    "TooManyCopiesError",
    "FINISHES", "PURE_KINDS", "Family", "Finish", "MeldKind", "Route", "Scoring", "WildSource",
    "MaalItem", "MaalResult", "maal_points",
    "Message", "N_", "recognise",
    "MeldCheck", "classify_meld",
    "RULE_FAMILIES", "MeldRules", "OptionSpec", "OptionValue", "RuleFamily", "RuleSet", "get_rules",
    "PenaltyResult", "penalty_points",
    "Adjustment", "Payment", "PlayerRound", "Settlement", "settle_round",
    "Wilds", "wild_cards",
]
