"""Rule families as data: every house-rule option by its RULES.md name and default.

A :class:`RuleSet` is a family plus the option values a table agreed on. Find a
family by name through :func:`get_rules`; unknown names and bad values raise
:class:`~scorer.errors.OptionError` with the list of what is allowed.

>>> rules = get_rules("nepali", {"tiplu_pair": 8})
>>> rules["tiplu_pair"], rules["double_marriage"]
(8, 30)
>>> get_rules("rummy").lower_is_better
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from scorer.errors import OptionError
from scorer.kinds import Family, Scoring, WildSource


@dataclass(frozen=True)
class OptionSpec:
    """One house-rule option: its name, default, type and what it does."""

    name: str
    default: Any
    help: str
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    @property
    def kind(self) -> str:
        """``bool``, ``int`` or ``choice``: how a form should offer it."""
        if self.choices is not None:
            return "choice"
        return "bool" if isinstance(self.default, bool) else "int"

    def coerce(self, value: Any) -> Any:
        """Turn a value (possibly text from a form or the CLI) into this option's type."""
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off", ""}:
                return False
            raise OptionError(f"option {self.name}: '{value}' is not on/off (use true or false)")
        if self.kind == "int" or (self.choices and isinstance(self.choices[0], int)):
            if isinstance(value, bool):
                raise OptionError(f"option {self.name}: expected a whole number, got {value!r}")
            try:
                number = int(str(value).strip())
            except ValueError:
                raise OptionError(f"option {self.name}: '{value}' is not a whole number") from None
            value = number
            if self.minimum is not None and number < self.minimum:
                raise OptionError(f"option {self.name}: {number} is below the minimum {self.minimum}")
            if self.maximum is not None and number > self.maximum:
                raise OptionError(f"option {self.name}: {number} is above the maximum {self.maximum}")
        if self.choices is not None and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise OptionError(f"option {self.name}: '{value}' is not one of {allowed}")
        return value


@dataclass(frozen=True)
class RuleFamily:
    """A family of rules (``nepali`` or ``rummy``): fixed facts plus its options."""

    name: Family
    title: str
    options: tuple[OptionSpec, ...]
    players_min: int
    lower_is_better: bool
    description: str
    scoring: Scoring
    wild_source: WildSource

    def option(self, name: str) -> OptionSpec:
        for spec in self.options:
            if spec.name == name:
                return spec
        known = ", ".join(s.name for s in self.options)
        raise OptionError(f"unknown option '{name}' for the {self.name} rules (known: {known})")

    def defaults(self) -> dict[str, Any]:
        return {spec.name: spec.default for spec in self.options}


def _bool(name: str, default: bool, help: str) -> OptionSpec:
    return OptionSpec(name, default, help)


def _int(name: str, default: int, help: str, minimum: int = 0, maximum: int = 1000) -> OptionSpec:
    return OptionSpec(name, default, help, minimum=minimum, maximum=maximum)


NEPALI = RuleFamily(
    name=Family.NEPALI,
    scoring=Scoring.MAAL,
    wild_source=WildSource.TIPLU,
    title="Nepali Marriage (tiplu, maal, 3 decks)",
    players_min=2,
    lower_is_better=False,
    description="The authentic game: 3 decks, 21 cards, the tiplu decides the wild cards "
                "and the maal; every pair of players exchanges the difference of their maal.",
    options=(
        _bool("murder", False, "unseen players' maal counts 0 (they still pay the unseen fee)"),
        _bool("kidnap", False, "the winner also takes each unseen player's maal"),
        _bool("alter", False, "the tiplu rank in the other suit of the same colour is maal"),
        _int("alter_points", 5, "maal points for each alter card"),
        _int("printed_jokers", 0, "printed jokers added to the 3 decks (wild)", maximum=3),
        _int("printed_joker_points", 5, "maal points for each printed joker"),
        _int("tiplu_pair", 7, "maal points for two tiplu copies"),
        _int("double_marriage", 30, "maal points for two marriages"),
        _int("seen_fee", 3, "fee a seen loser pays the winner"),
        _int("unseen_fee", 10, "fee an unseen loser pays the winner"),
        _int("dublee_bonus", 5, "extra fee each loser pays when the winner finished with 8 dublees"),
        _bool("dublee_exempt", False, "a seen loser who qualified by dublees pays no seen fee"),
        _int("dublee_min_players", 2, "the dublee route needs at least this many players", minimum=2, maximum=6),
        _bool("open_joker", False, "anyone may look at the tiplu; wilds still usable only after seeing"),
        _bool("tunnela_requires_seen", True, "the dealt-tunnela bonus needs the owner to have seen"),
        _int("invalid_declaration_fine", 0, "points a false declarer pays each other player"),
        OptionSpec("players_max", 5, "most players at the table (6 on request)", choices=(5, 6)),
        OptionSpec("direction", "clockwise", "dealer rotation shown by the app",
                   choices=("clockwise", "counter-clockwise")),
    ),
)

RUMMY = RuleFamily(
    name=Family.RUMMY,
    scoring=Scoring.PENALTY,
    wild_source=WildSource.TURNED,
    title="Marriage rummy (turned joker, penalty points)",
    players_min=3,
    lower_is_better=True,
    description="The simplified family: melds of 3 or more, a turned card sets the joker "
                "rank, non-closers score the cards left out; the lowest total wins.",
    options=(
        _bool("two_decks", False, "2 decks and 2 printed jokers instead of 3 and 3 (13 or 16 cards each)"),
        OptionSpec("hand_size", 21, "cards dealt to each player", choices=(21, 16, 13)),
        _bool("two_lives", False, "closing needs 2 lives (pure sequences) instead of 1"),
        OptionSpec("ace_points", 10, "penalty points for an unmatched ace", choices=(10, 1)),
        _int("unmatched_joker_points", 20, "penalty points for an unmatched wild card"),
        _int("wrong_close_penalty", 80, "penalty for a wrong close"),
        _bool("no_dublee", False, "no dublee swap"),
        _bool("per_round_settlement", False, "each player pays the closer a stake per penalty point after each round"),
        _int("tunnela_bonus", 0, "points taken off a player's penalty for each tunnela in their melds"),
        OptionSpec("players_max", 6, "most players at the table", choices=(4, 5, 6)),
        OptionSpec("direction", "clockwise", "dealer rotation shown by the app",
                   choices=("clockwise", "counter-clockwise")),
    ),
)

#: The registry of rule families, found by name.
RULE_FAMILIES: Mapping[str, RuleFamily] = MappingProxyType({f.name: f for f in (NEPALI, RUMMY)})
DEFAULT_FAMILY = "nepali"


@dataclass(frozen=True)
class RuleSet:
    """A rule family with the option values a table agreed on (all filled in)."""

    family: RuleFamily
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> Family:
        return self.family.name

    @property
    def scoring(self) -> Scoring:
        """Maal exchanged pairwise (nepali) or penalty points (rummy)."""
        return self.family.scoring

    @property
    def wild_source(self) -> WildSource:
        """The card a round needs to know the wild cards: the tiplu or the turned card."""
        return self.family.wild_source

    @property
    def lower_is_better(self) -> bool:
        """Penalty points (rummy) unless rounds are settled in points as they go."""
        return self.family.lower_is_better and not self.options.get("per_round_settlement", False)

    def __getitem__(self, name: str) -> Any:
        if name not in self.options:
            self.family.option(name)  # raises OptionError with the known names
        return self.options[name]

    @property
    def decks(self) -> int:
        if self.name == "rummy":
            return 2 if self.options["two_decks"] else 3
        return 3

    @property
    def printed_jokers(self) -> int:
        if self.name == "rummy":
            return self.decks
        return self.options["printed_jokers"]

    @property
    def players_max(self) -> int:
        return self.options["players_max"]

    @property
    def players_min(self) -> int:
        return self.family.players_min

    @property
    def hand_size(self) -> int:
        return self.options["hand_size"] if self.name == "rummy" else 21

    def changed_options(self) -> dict[str, Any]:
        """Only the options that differ from the family's defaults."""
        return {k: v for k, v in self.options.items() if v != self.family.option(k).default}

    def to_dict(self) -> dict[str, Any]:
        return {"rules": self.name, "options": dict(self.options)}


def get_rules(name: str | None = None, options: Mapping[str, Any] | None = None) -> RuleSet:
    """Find a rule family by name and fill in its options (defaults for the rest).

    Raises :class:`OptionError` for an unknown family, option or value.
    """
    name = (name or DEFAULT_FAMILY).strip().lower()
    if name not in RULE_FAMILIES:
        raise OptionError(f"unknown rules '{name}' (use one of: {', '.join(RULE_FAMILIES)})")
    family = RULE_FAMILIES[name]
    values = family.defaults()
    for key, value in (options or {}).items():
        values[key] = family.option(key).coerce(value)
    if name == "rummy":
        if values["two_decks"] and values["hand_size"] == 21:
            values["hand_size"] = 13
        if not values["two_decks"] and values["hand_size"] != 21:
            raise OptionError("option hand_size: 13 or 16 cards are dealt only with two_decks")
    return RuleSet(family, MappingProxyType(values))


def parse_option_assignments(assignments: list[str]) -> dict[str, str]:
    """Parse CLI ``NAME=VALUE`` strings into a dict (values still text)."""
    result: dict[str, str] = {}
    for item in assignments:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise OptionError(f"'{item}': write options as NAME=VALUE, e.g. tiplu_pair=8")
        result[name.strip()] = value.strip()
    return result
