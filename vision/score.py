"""Photo to verdict: ``tiplu score PHOTO --tiplu JC`` detects the cards, checks the declaration
and counts the maal in one go.

The declaration is judged on the player's own grouping (:func:`scorer.declare.check_grouping`)
when the groups found on the photo look like melds (every group 3+ cards, or all pairs for
dublees, with at most one lone card taken as the discard); otherwise the free search
(:func:`scorer.declare.check_hand`) looks for any grouping. Exit 0: the hand finishes;
1: it does not (or the photo does not show a full hand); 2: bad input (unreadable photo,
unknown option or card), with the message on stderr.

    $ tiplu score sample_images/declared_hand.jpg --tiplu 5D
    cards (21): 3S 4S 5S | ...
    finishes (melds): ...
    maal 7
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scorer import Card, RuleSet, TipluError, format_cards, get_rules, parse_card
from scorer.declare import DeclareResult, check_grouping, check_hand
from scorer.maal import MaalResult, maal_points
from scorer.rules import parse_option_assignments
from vision.detector import ModelError
from vision.images import ImageError, read_image
from vision.pipeline import PhotoReading, add_detector_arguments, make_detector, read_photo

EXIT_OK, EXIT_NOT_VALID, EXIT_BAD_INPUT = 0, 1, 2
PLAYER, FREE = "player", "free"


@dataclass(frozen=True)
class PhotoVerdict:
    """Reading, declaration verdict (on which grouping) and maal of one photo.

    ``maal`` is None under the rummy rules or when the cards cannot be valued
    (``maal_error`` says why, e.g. printed jokers seen but not in play).
    """

    reading: PhotoReading
    grouping: str
    declare: DeclareResult | None
    declare_error: str | None
    maal: MaalResult | None
    maal_error: str | None

    @property
    def valid(self) -> bool:
        return self.declare is not None and self.declare.valid

    def to_dict(self) -> dict[str, Any]:
        r = self.reading
        declare = self.declare.to_dict() if self.declare is not None else \
            {"valid": False, "route": None, "melds": [], "discard": None, "reason": self.declare_error}
        return {"image": r.image, "cards": r.card_names(), "groups": r.grouped_names(),
                "uncertain": [r.cards[i].card for i in r.uncertain], "clamped": list(r.clamped),
                "grouping": self.grouping, "declare": declare,
                "maal": self.maal.to_dict() if self.maal is not None else None,
                "maal_error": self.maal_error}


def looks_like_melds(groups: Sequence[Sequence[Card]]) -> tuple[list[list[Card]], Card | None] | None:
    """The laid melds and the discard when the groups look like a laid-out hand, else None.

    >>> from scorer import parse_cards
    >>> melds, discard = looks_like_melds([parse_cards("3S 4S 5S"), parse_cards("KD"), parse_cards("7H 7H 7H")])
    >>> len(melds), str(discard)
    (2, 'KD')
    >>> looks_like_melds([parse_cards("3S 4S"), parse_cards("KD")]) is None
    True
    """
    singles = [g for g in groups if len(g) == 1]
    rest = [list(g) for g in groups if len(g) != 1]
    if len(singles) > 1 or len(rest) < 2:
        return None
    if all(len(g) >= 3 for g in rest) or all(len(g) == 2 for g in rest):
        return rest, (singles[0][0] if singles else None)
    return None


def score_reading(reading: PhotoReading, rules: RuleSet, *, tiplu: Card | None, turned: Card | None = None,
                  seen: bool = True) -> PhotoVerdict:
    """Declaration check and maal for a photo already read (the web app's entry point)."""
    cards = [parse_card(n) for n in reading.card_names()]
    grouped = looks_like_melds([[parse_card(n) for n in g] for g in reading.grouped_names()])
    declare: DeclareResult | None = None
    declare_error = None
    grouping = PLAYER if grouped is not None else FREE
    try:
        if grouped is not None:
            melds, discard = grouped
            declare = check_grouping(melds, rules, tiplu=tiplu, turned=turned, discard=discard)
        else:
            declare = check_hand(cards, rules, tiplu=tiplu, turned=turned)
    except TipluError as error:
        declare_error = f"{error}"
    maal = None
    maal_error = None
    if rules.name == "nepali" and tiplu is not None:
        try:
            maal = maal_points(cards, rules, tiplu, seen=seen)
        except TipluError as error:
            maal_error = str(error)
    return PhotoVerdict(reading, grouping, declare, declare_error, maal, maal_error)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``tiplu score PHOTO --tiplu JC [--rules R] [--option N=V] [--unseen] [--json]``."""
    parser.description = "Photo to verdict: detect the cards, check the declaration and count the maal."
    parser.add_argument("photo", metavar="PHOTO", help="a JPEG, PNG or WebP photo of the laid-out hand")
    parser.add_argument("--rules", default=None, help="rule family: nepali (default) or rummy")
    parser.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                        help="house-rule option, e.g. tiplu_pair=8 (repeatable)")
    parser.add_argument("--tiplu", help="the tiplu card (nepali; needed for maal), e.g. JC")
    parser.add_argument("--turned", help="the turned card that sets the joker rank (rummy), e.g. 7D")
    parser.add_argument("--unseen", action="store_true", help="the player has not seen")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_detector_arguments(parser)


def _describe(verdict: PhotoVerdict) -> str:
    r = verdict.reading
    lines = [f"cards ({len(r.cards)}): " + " | ".join(" ".join(g) for g in r.grouped_names())]
    if r.uncertain:
        lines.append("please confirm: " + " ".join(r.cards[i].card for i in r.uncertain))
    if r.clamped:
        lines.append("seen more often than the decks hold (extras dropped): " + " ".join(r.clamped))
    d = verdict.declare
    if d is None:
        lines.append(f"does not finish: {verdict.declare_error}")
    elif d.valid:
        text = f"finishes ({d.route}, {verdict.grouping} grouping): " + " | ".join(format_cards(m) for m in d.melds)
        lines.append(text + (f"; discard {d.discard}" if d.discard is not None else ""))
    else:
        lines.append(f"does not finish ({verdict.grouping} grouping): {d.reason}")
    if verdict.maal is not None:
        for item in verdict.maal.items:
            lines.append(f"{item.points:>4}  {item.label}: {format_cards(item.cards)}")
        lines.append(f"{verdict.maal.total:>4}  total maal")
    elif verdict.maal_error:
        lines.append(f"maal not counted: {verdict.maal_error}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    try:
        rules = get_rules(args.rules, parse_option_assignments(args.option))
        tiplu = parse_card(args.tiplu) if args.tiplu else None
        turned = parse_card(args.turned) if args.turned else None
        if rules.name == "nepali" and tiplu is None:
            raise TipluError("the nepali rules need the tiplu for maal and jokers: --tiplu JC")
        if rules.name == "rummy" and turned is None:
            raise TipluError("the rummy rules need the turned card: --turned 7D")
        detector = make_detector(args)
        image = read_image(args.photo)
    except (TipluError, ModelError) as error:
        message = str(error)
        if isinstance(error, ImageError) and not message.startswith(args.photo):
            message = f"{args.photo}: {message}"
        sys.stderr.write(f"tiplu score: {message}\n")
        return EXIT_BAD_INPUT
    reading = read_photo(image, detector, args.conf, name=args.photo, uncertain_below=args.uncertain_below)
    verdict = score_reading(reading, rules, tiplu=tiplu, turned=turned, seen=not args.unseen)
    if args.json:
        sys.stdout.write(json.dumps(verdict.to_dict(), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(_describe(verdict) + "\n")
    return EXIT_OK if verdict.valid else EXIT_NOT_VALID
