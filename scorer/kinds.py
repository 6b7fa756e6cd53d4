"""The named kinds the scorer speaks of: rule family, route, finish and meld kind.

They are :class:`enum.StrEnum` members, so each *is* its plain string: JSON, the
ledger and templates see the plain strings ``"melds"`` or ``"pure sequence"``, while
code compares against a member instead of a bare string that a typo could break.

>>> Route.DUBLEES == "dublees", Route("melds") is Route.MELDS
(True, True)
>>> import json; json.dumps({"route": Route.MELDS, "kind": MeldKind.TUNNELA})
'{"route": "melds", "kind": "tunnela"}'
>>> [str(f) for f in FINISHES]
['melds', 'dublees']
"""

from __future__ import annotations

from enum import StrEnum


class Family(StrEnum):
    """A rule family's name, as the registry in :mod:`scorer.rules` knows it."""

    NEPALI = "nepali"
    RUMMY = "rummy"


class Route(StrEnum):
    """How a Marriage hand sees or finishes: by melds or by dublees (pairs)."""

    MELDS = "melds"
    DUBLEES = "dublees"


#: A round's ``finish`` is the route by which its winner went out.
Finish = Route
#: Every finish a round can record, in the order forms offer them.
FINISHES: tuple[Route, ...] = tuple(Route)


class MeldKind(StrEnum):
    """What a group of cards is when it is a meld (RULES.md 2.1 and 3)."""

    PURE_SEQUENCE = "pure sequence"
    TUNNELA = "tunnela"
    TRIPLET = "triplet"
    DIRTY_SEQUENCE = "dirty sequence"
    DIRTY_TRIPLET = "dirty triplet"
    WILD_MELD = "two wilds and a card"
    # rummy
    LIFE = "life"
    SEQUENCE = "sequence"
    SET = "set"


#: Kinds that count as pure: pure sequences and tunnelas (nepali), lives (rummy).
PURE_KINDS: frozenset[MeldKind] = frozenset({MeldKind.PURE_SEQUENCE, MeldKind.TUNNELA, MeldKind.LIFE})


class Scoring(StrEnum):
    """What a round's loser is charged by: maal exchanged pairwise, or penalty points."""

    MAAL = "maal"
    PENALTY = "penalty"


class WildSource(StrEnum):
    """The card that decides the wild cards: the tiplu (Marriage) or the turned card (rummy)."""

    TIPLU = "tiplu"
    TURNED = "turned"
