"""``tiplu score PHOTO --tiplu JC``: photo to verdict, by :func:`vision.score.score_photo`.

The declaration is judged as laid when the photo shows a laid-out declaration, else by
the free search (:mod:`vision.score`), and the maal is counted. The verdict is the
reading's; below it come the doubts that could change it (a card it hangs on, a card
count no declared hand has, a meld short of a card, a face read too often): the photo review
shows the same (:func:`vision.score.judge_cards`). ``--players`` gives the table's player count
(the rules may close the dublee finish to a small table). Exit 0: the hand
finishes; 1: it does not (or the photo does not show a full hand); 2: bad input
(unreadable photo, unknown option or card), with the message on stderr.

    $ tiplu score sample_images/declared_hand.jpg --tiplu 5D
    cards (21): 3S 4S 5S | ...
    finishes (melds, player grouping): ...
    maal 7
"""

from __future__ import annotations

import argparse

from scorer import format_cards
from scorer.kinds import WildSource
from vision.detector import ModelError
from vision.doubts import FAINT_CARD
from vision.images import ImageError, read_image
from vision.score import PhotoVerdict, score_photo
from web.cli._common import ExitCode, Streams, UsageError, add_rules_arguments, optional_card, rules_from
from web.cli.detect import add_detector_arguments, detector_from, photo_error

#: What ``--tiplu`` or ``--turned`` is for, by the card that sets a family's wild cards.
NEEDED = {WildSource.TIPLU: "the tiplu for maal and jokers: --tiplu JC",
          WildSource.TURNED: "the turned card: --turned 7D"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Photo to verdict: detect the cards, check the declaration and count the maal."
    parser.add_argument("photo", metavar="PHOTO", help="a JPEG, PNG or WebP photo of the laid-out hand")
    add_rules_arguments(parser, json_output=False, tiplu_help="the tiplu card (nepali; needed for maal), e.g. JC")
    parser.add_argument("--unseen", action="store_true", help="the player has not seen")
    parser.add_argument("--players", type=int, help="players at the table (for dublee_min_players)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    add_detector_arguments(parser)


def _with_alternatives(card: str, alternatives: tuple[tuple[str, float], ...]) -> str:
    """A card and what it may be instead, e.g. ``8D (8H? 6D?)``.

    >>> _with_alternatives("8D", (("8H", 0.21), ("6D", 0.05)))
    '8D (8H? 6D?)'
    """
    return card + (f" ({' '.join(n + '?' for n, _ in alternatives)})" if alternatives else "")


def describe(verdict: PhotoVerdict) -> str:
    r = verdict.reading
    lines = [f"cards ({len(r.cards)}): " + " | ".join(" ".join(g) for g in r.grouped_names())]
    if r.uncertain:
        lines.append("please confirm: " + " ".join(_with_alternatives(r.cards[i].card, r.cards[i].alternatives)
                                                    for i in r.uncertain))
    d = verdict.declare
    if d is None:
        lines.append(f"does not finish: {verdict.declare_error}")
    elif d.valid:
        text = f"finishes ({d.route}, {verdict.grouping} grouping): " + " | ".join(format_cards(m) for m in d.melds)
        lines.append(text + (f"; discard {d.discard}" if d.discard is not None else ""))
    else:
        lines.append(f"does not finish ({verdict.grouping} grouping): {d.reason}")
    faint = [d for d in verdict.doubts if d.kind == FAINT_CARD]
    for doubt in verdict.doubts:
        if doubt.kind != FAINT_CARD:
            lines.append(f"check: {doubt.message}")
    if len(faint) == 1:
        lines.append(f"check: {faint[0].message}")
    elif faint:
        guesses = " ".join(str(d.card) for d in faint)
        lines.append(f"check: a card may lie in {len(faint)} places too faint to read (perhaps {guesses}); "
                     f"--json gives their boxes")
    if verdict.maal is not None:
        for item in verdict.maal.items:
            lines.append(f"{item.points:>4}  {item.label}: {format_cards(item.cards)}")
        lines.append(f"{verdict.maal.total:>4}  total maal")
    elif verdict.maal_error:
        lines.append(f"maal not counted: {verdict.maal_error}")
    return "\n".join(lines)


def run(args: argparse.Namespace, io: Streams) -> int:
    try:
        rules = rules_from(args)
        tiplu, turned = optional_card(args.tiplu), optional_card(args.turned)
        wild_card = tiplu if rules.wild_source is WildSource.TIPLU else turned
        if wild_card is None:
            raise UsageError(f"the {rules.name} rules need {NEEDED[rules.wild_source]}")
        if args.players is not None:
            rules.verify_players(args.players)
        detector = detector_from(args)
        image = read_image(args.photo)
    except ImageError as error:
        return io.fail("score", photo_error(args.photo, error))
    except ModelError as error:
        return io.fail("score", error)
    verdict = score_photo(image, detector, rules, tiplu=tiplu, turned=turned, seen=not args.unseen,
                          conf=args.conf, uncertain_below=args.uncertain_below, name=args.photo,
                          players=args.players)
    if args.json:
        io.emit(verdict.to_dict())
    else:
        io.stdout.write(describe(verdict) + "\n")
    return ExitCode.OK if verdict.valid else ExitCode.NOT_FINISHED
