"""Render the sample photos and ``expected.json`` from the held-out deck design.

The samples are drawn with the generator (:mod:`vision.training.data.scenes`) using only the held-out
design (``nicu-white``, never used for training), so the detector meets them as new
cards. ``expected.json`` records, per photo, the cards laid, the melds, the tiplu, and
the ground-truth corner boxes from the generator's geometry.

    .venv/bin/python sample_images/make_samples.py   # needs kdegames-card-data-kf5 + rsvg-convert

Card artwork: "Nicu white" deck from kdegames-card-data-kf5, GPL-2+ (see vision/training/data/DECKS.md).
``real_*.jpg`` are real phone photos (CC BY 4.0, see ``sample_images/README.md``); their
entries, with corners from the photos' published labels, are kept when this script runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from scorer import parse_card, parse_cards
from scorer.declare import check_grouping
from scorer.maal import maal_points
from scorer.rules import get_rules
from vision.training.data import scenes
from vision.training.data.decks import HOLDOUT_DECK, load_decks
from vision.training.data.scenes import CardSupply, Laid, Rng, render_scene

HERE = Path(__file__).resolve().parent
DECLARED = ["9S 10S JS", "6H 6H 6H", "9D 10D JD", "2C 3C 4C", "KS KH KD", "7C 8C 5S", "QH QC 5C"]
TIPLU = "5D"


def layout_declared(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """Seven melds of three in two rows (4 + 3), each meld overlapped so its indices show."""
    out: list[Laid] = []
    for m, meld in enumerate(DECLARED):
        row, col = divmod(m, 4)
        x0 = col * (2 * 0.3 + 1 + 0.55)
        for k, card in enumerate(supply.any(3)):
            out.append(Laid(card, f"{prefix}meld{m}", x0 + k * 0.3, row * 1.75 + rng.normal(0, 0.01),
                            rng.normal(0, 1.5)))
    return out


SAMPLES = [
    # file, scene, cards, seed, kind
    ("declared_hand.jpg", "declared", [c for m in DECLARED for c in m.split()], 3, "declared 21-card hand, 7 melds"),
    ("maal_spread.jpg", "maal_spread", "5D 5D 4D 6D 5H KS 2C QH".split(), 4, "maal cards shown on the table"),
    ("tunnela.jpg", "tunnela", ["6H"] * 3, 5, "a tunnela: three 6H stacked"),
    ("tiplu.jpg", "single", [TIPLU], 6, "the tiplu turned up"),
]


def main() -> None:
    scenes.LAYOUTS["declared"] = layout_declared
    deck = load_decks("holdout")
    rules = get_rules("nepali", {})
    previous = HERE / "expected.json"
    # real photos (added by hand, with their labelled corners) are kept as they are
    expected: dict[str, dict] = {name: entry for name, entry in json.loads(previous.read_text()).items()
                                 if name.startswith("real_")} if previous.exists() else {}
    for name, scene, cards, seed, kind in SAMPLES:
        size = (1280, 960) if scene in ("declared", "maal_spread") else (1024, 768)
        for attempt in range(200):  # the first seed: upright, in colour, every card's index visible
            rng = np.random.default_rng([2026, seed, attempt])
            shot = render_scene(rng, scene, size=size, decks=deck, cards=cards, camera=0.08,
                                designs_per_scene=1)
            angles = [c["angle"] for c in shot.geometry["cards"]]
            upright = scene == "maal_spread" or max(abs(a) for a in angles) < 12
            colour = float(np.abs(shot.image[..., 2].astype(int) - shot.image[..., 0]).mean()) > 4
            seen = len({b["card_id"] for b in shot.geometry["boxes"]}) == len(cards)
            if upright and colour and seen:  # hearts and diamonds differ only in colour
                break
        cv2.imwrite(str(HERE / name), shot.image, [cv2.IMWRITE_JPEG_QUALITY, 82])
        byid = {c["id"]: c for c in shot.geometry["cards"]}
        entry: dict = {"kind": kind, "deck": HOLDOUT_DECK, "size": list(size), "tiplu": TIPLU,
                       "cards": sorted(cards), "groups": None,
                       "corners": [{"card": b["name"], "card_id": b["card_id"], "corner": b["corner"],
                                    "box": [round(v, 1) for v in b["bbox"]]} for b in shot.geometry["boxes"]],
                       "visible_cards": len({b["card_id"] for b in shot.geometry["boxes"]}),
                       "card_ids": sorted(byid)}
        tiplu = parse_card(TIPLU)
        if scene == "declared":
            groups = [parse_cards(m) for m in DECLARED]
            entry["groups"] = [m.split() for m in DECLARED]
            entry["valid"] = check_grouping(groups, rules, tiplu=tiplu).valid
        entry["maal"] = maal_points(parse_cards(cards), rules, tiplu).total
        expected[name] = entry
        print(name, (HERE / name).stat().st_size // 1024, "KB", entry["visible_cards"], "cards visible")
    (HERE / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
