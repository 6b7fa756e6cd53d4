"""Rule families as data: every house-rule option by its RULES.md name and default.

A :class:`RuleFamily` states what a family *is* (decks, printed jokers, hand sizes,
what a meld is, how a hand finishes, how a round is scored); the partitioner, the
declare check, maal and settlement read those fields and never compare family
names. A third family, or a two-deck Marriage, is one more ``RuleFamily(...)`` in
:data:`RULE_FAMILIES`.

A :class:`RuleSet` is a family plus the option values a table agreed on. Find a
family by name through :func:`get_rules`; unknown names and bad values raise
:class:`~scorer.errors.OptionError` with the list of what is allowed.

>>> rules = get_rules("nepali", {"tiplu_pair": 8})
>>> rules["tiplu_pair"], rules["double_marriage"]
(8, 30)
>>> get_rules("rummy").lower_is_better
True
>>> rummy = get_rules("rummy", {"two_decks": True})
>>> rummy.decks, rummy.printed_jokers, rummy.hand_size
(2, 2, 13)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping

from scorer.errors import OptionError, PlayerCountError
from scorer.kinds import Family, MeldKind, Scoring, WildSource
from scorer.messages import N_, either

#: What an option's value can be: on/off, a whole number, or one of a few words.
OptionValue = bool | int | str

#: The option that deals from two decks instead of the family's usual number.
TWO_DECKS = "two_decks"


@dataclass(frozen=True)
class OptionSpec:
    """One house-rule option: its name, default, type and what it does."""

    name: str
    default: OptionValue
    help: str
    choices: tuple[OptionValue, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    @property
    def kind(self) -> str:
        """``bool``, ``int`` or ``choice``: how a form should offer it."""
        if self.choices is not None:
            return "choice"
        return "bool" if isinstance(self.default, bool) else "int"

    def coerce(self, value: object) -> OptionValue:
        """Turn a value (possibly text from a form or the CLI) into this option's type.

        >>> OptionSpec("murder", False, "").coerce("on"), OptionSpec("fee", 3, "").coerce(" 5 ")
        (True, 5)
        """
        if self.kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off", ""}:
                return False
            raise OptionError(N_("option %(name)s: '%(value)s' is not on/off (use true or false)"), name=self.name,
                              value=value)
        coerced: OptionValue = value if isinstance(value, (bool, int, str)) else str(value)
        if self.kind == "int" or (self.choices and isinstance(self.choices[0], int)):
            if isinstance(value, bool):
                raise OptionError(N_("option %(name)s: expected a whole number, got %(value)r"), name=self.name,
                                  value=value)
            try:
                number = int(str(value).strip())
            except ValueError:
                raise OptionError(N_("option %(name)s: '%(value)s' is not a whole number"), name=self.name,
                                  value=value) from None
            coerced = number
            if self.minimum is not None and number < self.minimum:
                raise OptionError(N_("option %(name)s: %(number)s is below the minimum %(minimum)s"), name=self.name,
                                  number=number, minimum=self.minimum)
            if self.maximum is not None and number > self.maximum:
                raise OptionError(N_("option %(name)s: %(number)s is above the maximum %(maximum)s"), name=self.name,
                                  number=number, maximum=self.maximum)
        if self.choices is not None and coerced not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise OptionError(N_("option %(name)s: '%(value)s' is not one of %(allowed)s"), name=self.name, value=value,
                              allowed=allowed)
        return coerced


@dataclass(frozen=True)
class MeldRules:
    """What a meld is in one family: the data the meld classifier and the search read.

    ``min_size``/``max_size`` bound a meld's cards (``max_size`` None: no limit).
    ``sets_repeat_suits``: a group of one rank may hold a suit twice (rummy's set
    7S 7S 7H); otherwise it needs all suits different (nepali's triplet), unless
    all its cards are identical (a tunnela). ``kind_names`` gives the family's own
    name for a kind where it differs from the nepali one (rummy calls a pure
    sequence a life and every group of one rank a set).

    >>> RUMMY.melds.search_sizes, RUMMY.melds.name(MeldKind.PURE_SEQUENCE)
    ((3, 4, 5), <MeldKind.LIFE: 'life'>)
    """

    min_size: int = 3
    max_size: int | None = 3
    sets_repeat_suits: bool = False
    kind_names: Mapping[MeldKind, MeldKind] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def search_sizes(self) -> tuple[int, ...]:
        """The meld sizes a search tries. Without an upper limit, a meld of
        ``2 * min_size`` cards or more always splits into two melds of at least
        ``min_size``, so no longer ones are needed."""
        top = self.max_size if self.max_size is not None else 2 * self.min_size - 1
        return tuple(range(self.min_size, top + 1))

    @property
    def wilds_can_be_pooled(self) -> bool:
        """Melds of exactly 3 cards whose two naturals must differ: any wild then
        fills any gap, so a search may count wilds instead of naming them."""
        return self.min_size == self.max_size == 3 and not self.sets_repeat_suits

    def pure_melds_in(self, size: int) -> int:
        """How many pure melds a pure meld of ``size`` cards counts for: a pure run
        long enough to split into two (6 cards or more in rummy) counts for two.

        >>> RUMMY.melds.pure_melds_in(6), RUMMY.melds.pure_melds_in(5), NEPALI.melds.pure_melds_in(3)
        (2, 1, 1)
        """
        return size // self.min_size if self.max_size is None else 1

    def name(self, kind: MeldKind) -> MeldKind:
        """This family's name for ``kind``."""
        return self.kind_names.get(kind, kind)


@dataclass(frozen=True)
class RuleFamily:
    """A family of rules: the fixed facts the engine reads, plus its options.

    ``decks`` and ``jokers_per_deck`` are the cards in play (the option
    ``two_decks`` deals from 2 decks; a ``printed_jokers`` option adds jokers).
    ``hand_sizes`` maps a deck count to the hand sizes dealt, the usual one
    first. A hand finishes with ``melds_to_finish`` melds (None: every card
    melded), ``pure_melds_to_finish`` of them pure; ``dublees_to_finish`` pairs
    are the other route (None: no dublee route). Seeing the tiplu takes
    ``pure_melds_to_see`` pure melds or ``dublees_to_see`` dublees (None: the
    family has no seeing). ``fees``: every loser pays the winner the seen or
    unseen fee (options ``seen_fee``, ``unseen_fee``, ``dublee_bonus``).
    ``exclusive`` names pairs of on/off options that may not both be on.
    """

    name: Family
    title: str
    description: str
    options: tuple[OptionSpec, ...]
    scoring: Scoring
    wild_source: WildSource
    players_min: int
    lower_is_better: bool
    decks: int
    jokers_per_deck: int
    hand_sizes: Mapping[int, tuple[int, ...]]
    melds: MeldRules
    melds_to_finish: int | None
    pure_melds_to_finish: int
    dublees_to_finish: int | None = None
    pure_melds_to_see: int | None = None
    dublees_to_see: int | None = None
    fees: bool = False
    exclusive: tuple[tuple[str, str], ...] = ()

    @property
    def dublee_route(self) -> bool:
        """Can a hand finish with dublees (pairs)?"""
        return self.dublees_to_finish is not None

    @property
    def has_seeing(self) -> bool:
        """Must a player see (show pure melds or dublees) before the wilds are known?"""
        return self.pure_melds_to_see is not None

    def option(self, name: str) -> OptionSpec:
        for spec in self.options:
            if spec.name == name:
                return spec
        known = ", ".join(s.name for s in self.options)
        raise OptionError(N_("unknown option '%(name)s' for the %(rules)s rules (known: %(known)s)"), name=name,
                          rules=self.name, known=known)

    def defaults(self) -> dict[str, OptionValue]:
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
    decks=3,
    jokers_per_deck=0,
    hand_sizes=MappingProxyType({3: (21,)}),
    melds=MeldRules(min_size=3, max_size=3),
    melds_to_finish=7,
    pure_melds_to_finish=3,
    dublees_to_finish=8,
    pure_melds_to_see=3,
    dublees_to_see=7,
    fees=True,
    exclusive=(("murder", "kidnap"),),
    options=(
        _bool("murder", False, "unseen players' maal counts 0 (they still pay the unseen fee)"),
        _bool("kidnap", False, "the winner also takes each unseen player's maal"),
        _bool("alter", False, "the tiplu rank in the other suit of the same colour is maal"),
        _int("alter_points", 5, "maal points for each alter card"),
        _int("printed_jokers", 0, "printed jokers added to the 3 decks (wild; two of them are a dublee)",
             maximum=3),
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
    decks=3,
    jokers_per_deck=1,
    hand_sizes=MappingProxyType({3: (21,), 2: (13, 16)}),
    melds=MeldRules(min_size=3, max_size=None, sets_repeat_suits=True, kind_names=MappingProxyType({
        MeldKind.PURE_SEQUENCE: MeldKind.LIFE, MeldKind.DIRTY_SEQUENCE: MeldKind.SEQUENCE,
        MeldKind.TUNNELA: MeldKind.SET, MeldKind.TRIPLET: MeldKind.SET, MeldKind.DIRTY_TRIPLET: MeldKind.SET,
        MeldKind.WILD_MELD: MeldKind.SET})),
    melds_to_finish=None,
    pure_melds_to_finish=1,
    options=(
        _bool(TWO_DECKS, False, "2 decks and 2 printed jokers instead of 3 and 3 (13 or 16 cards each)"),
        OptionSpec("hand_size", 21, "cards dealt to each player", choices=(21, 16, 13)),
        _bool("joker_same_suit", False, "only the joker rank in the turned card's suit is wild; off: that rank in every suit"),
        _bool("two_lives", False, "closing needs 2 lives (pure sequences) instead of 1, "
                                  "and a non-closer keeps melds only with 2 lives"),
        OptionSpec("ace_points", 10, "penalty points for an unmatched ace", choices=(10, 1)),
        _int("unmatched_joker_points", 20, "penalty points for an unmatched wild card"),
        _int("wrong_close_penalty", 80, "penalty for a wrong close"),
        _bool("no_dublee", False, "no dublee swap for a wild during play; shown by the app, nothing to score"),
        _bool("per_round_settlement", False, "each player pays the closer a stake per penalty point after each round"),
        _int("tunnela_bonus", 0, "points taken off a non-closer's penalty for each tunnela kept as a set of "
                                 "its 3 identical natural cards (joker-rank tunnelas too); a penalty never goes "
                                 "below 0, whatever the tunnela_bonus; it is taken off before max_penalty caps"),
        _int("max_penalty", 0, "caps the points of the cards a non-closer holds at the end of the round "
                               "(0: no cap); a wrong-close penalty is added on top and is not capped. Order: card "
                               "points, less the tunnela bonus, floored at 0, then capped, then any wrong-close "
                               "penalty added (98 card points, bonus 30, cap 80: 68)"),
        OptionSpec("players_max", 6, "most players at the table", choices=(4, 5, 6)),
        OptionSpec("direction", "clockwise", "dealer rotation shown by the app",
                   choices=("clockwise", "counter-clockwise")),
    ),
)

#: The registry of rule families, found by name.
RULE_FAMILIES: Mapping[str, RuleFamily] = MappingProxyType({f.name: f for f in (NEPALI, RUMMY)})
DEFAULT_FAMILY = Family.NEPALI


def family_names(*, scoring: Scoring | None = None, seeing: bool | None = None) -> str:
    """The names of the families with a given scoring or seeing, for messages.

    >>> family_names(scoring=Scoring.PENALTY), family_names(seeing=True)
    ('rummy', 'nepali')
    """
    return either([f.name for f in RULE_FAMILIES.values()
                   if (scoring is None or f.scoring == scoring) and (seeing is None or f.has_seeing == seeing)])


@dataclass(frozen=True)
class RuleSet:
    """A rule family with the option values a table agreed on (all filled in)."""

    family: RuleFamily
    options: Mapping[str, OptionValue] = field(default_factory=dict)

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

    def number(self, name: str) -> int:
        """A whole-number option (a choice of numbers too), typed as such."""
        value = self[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise OptionError(N_("option %(name)s is not a number"), name=name)
        return value

    def flag(self, name: str) -> bool:
        """An on/off option; False where the family does not have it."""
        return self.options.get(name) is True

    @property
    def decks(self) -> int:
        return 2 if self.flag(TWO_DECKS) else self.family.decks

    @property
    def printed_jokers(self) -> int:
        """The family's jokers (one per deck in rummy) plus any a ``printed_jokers`` option adds."""
        added = self.number("printed_jokers") if "printed_jokers" in self.options else 0
        return self.family.jokers_per_deck * self.decks + added

    @property
    def players_max(self) -> int:
        return self.number("players_max")

    @property
    def players_min(self) -> int:
        return self.family.players_min

    @property
    def hand_size(self) -> int:
        if "hand_size" in self.options:
            return self.number("hand_size")
        return self.family.hand_sizes[self.decks][0]

    @property
    def pure_melds_needed(self) -> int:
        """Pure melds (lives) a finish needs: 3 for nepali, 1 for rummy, 2 with ``two_lives``."""
        return max(self.family.pure_melds_to_finish, 2) if self.flag("two_lives") else self.family.pure_melds_to_finish

    def verify_players(self, players: int) -> None:
        """Raise :class:`PlayerCountError` unless ``players`` is within this rule set's range.

        >>> get_rules().verify_players(6)
        Traceback (most recent call last):
        ...
        scorer.errors.PlayerCountError: the nepali rules need 2 to 5 players, got 6
        """
        if not self.players_min <= players <= self.players_max:
            raise PlayerCountError(N_("the %(rules)s rules need %(low)s to %(high)s players, got %(n)s"),
                                   rules=self.name, low=self.players_min, high=self.players_max, n=players)

    def can_seat(self, players: int) -> bool:
        try:
            self.verify_players(players)
        except PlayerCountError:
            return False
        return True

    def changed_options(self) -> dict[str, OptionValue]:
        """Only the options that differ from the family's defaults."""
        return {k: v for k, v in self.options.items() if v != self.family.option(k).default}

    def to_dict(self) -> dict[str, Any]:
        return {"rules": self.name, "options": dict(self.options)}


def _fit_hand_size(family: RuleFamily, values: dict[str, OptionValue], given: bool) -> None:
    """The hand size must be one dealt from the decks in play (RULES.md 3).

    A hand size the table did not give follows the decks: the first size they deal
    (13 with ``two_decks``). One it gave and the decks do not deal is bad input, so a
    table that asked for 21 cards from two decks is told what to give instead of
    being dealt 13 without a word.

    >>> values = {TWO_DECKS: True, "hand_size": 21}
    >>> _fit_hand_size(RUMMY, values, given=False)
    >>> values["hand_size"]
    13
    >>> _fit_hand_size(RUMMY, {TWO_DECKS: True, "hand_size": 21}, given=True)
    Traceback (most recent call last):
    ...
    scorer.errors.OptionError: option hand_size: 21 cards are not dealt with two_decks: give 13 or 16
    """
    if "hand_size" not in values:
        return
    two_decks = values.get(TWO_DECKS) is True
    decks = 2 if two_decks else family.decks
    allowed = family.hand_sizes[decks]
    if values["hand_size"] in allowed:
        return
    if not given:
        values["hand_size"] = allowed[0]
        return
    if two_decks:
        raise OptionError(N_("option hand_size: %(size)s cards are not dealt with %(option)s: give %(sizes)s"),
                          size=values["hand_size"], option=TWO_DECKS, sizes=either(sorted(allowed)))
    sizes = either(sorted(n for d, s in family.hand_sizes.items() if d != decks for n in s))
    raise OptionError(N_("option hand_size: %(sizes)s cards are dealt only with %(option)s"), sizes=sizes,
                      option=TWO_DECKS)


def _verify_exclusive(family: RuleFamily, values: Mapping[str, OptionValue]) -> None:
    for first, second in family.exclusive:
        if values.get(first) is True and values.get(second) is True:
            raise OptionError(N_("options %(first)s and %(second)s exclude each other: turn one of them off"),
                              first=first, second=second)


def get_rules(name: str | None = None, options: Mapping[str, object] | None = None) -> RuleSet:
    """Find a rule family by name and fill in its options (defaults for the rest).

    Raises :class:`OptionError` for an unknown family, option or value, and for
    options that exclude each other.

    >>> get_rules("nepali", {"murder": True, "kidnap": "on"})
    Traceback (most recent call last):
    ...
    scorer.errors.OptionError: options murder and kidnap exclude each other: turn one of them off
    """
    name = (name or DEFAULT_FAMILY).strip().lower()
    if name not in RULE_FAMILIES:
        raise OptionError(N_("unknown rules '%(name)s' (use one of: %(families)s)"), name=name,
                          families=", ".join(RULE_FAMILIES))
    family = RULE_FAMILIES[name]
    values = family.defaults()
    for key, value in (options or {}).items():
        values[key] = family.option(key).coerce(value)
    _fit_hand_size(family, values, given="hand_size" in (options or {}))
    _verify_exclusive(family, values)
    return RuleSet(family, MappingProxyType(values))

