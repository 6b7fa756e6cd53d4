"""One command that measures a model folder for the model card, each stage apart and the whole reading.

``tiplu report models --out runs/report`` reads:

- **real val** (``data/real/val``), upright and turned by 30, 90 and 135 degrees (the canvas
  grows to hold the turned photo; a turned label becomes the axis-aligned box of its
  inscribed ellipse, exact at multiples of 90 degrees and close to the turned glyph's box
  in between, where the turned label's own box would be twice too big);
- the **webcam val** (``--webcam-val``, e.g. ``data/webcam/val`` from ``tiplu train import-photos``):
  real webcam frames, read as taken; a frame is *exact* when the distinct cards read are the
  distinct cards labelled (its labels box corners, not physical cards);
- **whole-table scenes**, 1280x960, of held-out designs (``nicu-white`` and the procedural
  light-on-dark ``proc-gold-on-black``): declared 21-card hands (valid or one card off),
  maal spreads and tunnelas, rendered afresh from fixed seeds;
- **far tables**: the same kinds of table of both designs in a 4000x3000 photo taken from further
  away (corners of about 30-70 px that shrink under 18 px at the 960-px big pass: the tiles' case);
- **webcam fans and stacks**: 640x480 renders of both designs, a hand of 13 fanned tight and tunnela
  stacks in turn, what stage 1 misses in real webcam frames (:data:`WEBCAM`);
- the **sample images** (``sample_images/expected.json``).

Per set it reports stage-1 **localisation recall** (a labelled corner counts when a stage-1
box at score >= 0.05 overlaps it at IoU >= 0.5, class-agnostic, after the detector's NMS)
apart from **classification accuracy** (of those localised corners, the share stage 2 names
right from that box), then distinct-card precision/recall/F1 at the app's confidence, the
**exact physical-card multiset** rate (``vision.pipeline.read_photo``'s cards equal the
cards with a visible corner) and **declared-hand verdict accuracy** (``vision.score`` agrees
with the scorer's verdict on the laid melds; ``finishing k/n`` counts the hands that do finish
and were read as finishing, since a reading that misses cards gets "does not finish" right
for free). Writes ``report.json`` and ``report.md``.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scorer import CLASS_NAMES, get_rules, parse_card
from scorer.declare import check_grouping
from vision.detector import CardDetector, ModelError
from vision.geometry import Corner
from vision.pipeline import DEFAULT_CONF, read_photo
from vision.score import score_reading
from vision.training.data.dataset import DatasetError, iter_samples, read_sample
from vision.training.data.decks import Deck
from vision.training.measure.evaluate import card_set_scores, match_boxes, stage1_boxes
from vision.training.data.turned import turn_photo

ANGLES = (0, 30, 90, 135)
TABLE_SIZE = (1280, 960)
#: The far tables: a phone's 12-megapixel photo, the cards filling this share of it.
FAR_SIZE = (4000, 3000)
FAR_FILL = (0.15, 0.3)
FAR_SCENES = 10
#: Rendered webcam frames of fans of 13 and tunnela stacks per held-out design (:data:`WEBCAM`).
WEBCAM_SCENES = 10
HELD_OUT_DESIGNS = ("nicu-white", "proc-gold-on-black")
#: Scene kinds of the whole-table sets, in turn.
TABLE_KINDS = ("declared", "maal_spread", "tunnela")
REPO = Path(__file__).resolve().parents[3]


class ReportError(ValueError):
    """A set cannot be measured (missing split, deck or model); the message says what to fix."""


@dataclass(frozen=True)
class Truth:
    """What one photo shows: corner boxes (pixels) and names, and, where known, its cards."""

    boxes: np.ndarray
    names: tuple[str, ...]
    cards: tuple[str, ...] | None = None
    tiplu: str | None = None
    valid: bool | None = None
    #: Cards unknown but every visible corner labelled: exact when the distinct names read are those labelled.
    distinct: bool = False


@dataclass(frozen=True)
class PhotoScore:
    """One photo's counts; :class:`SetScore` sums them."""

    corners: int
    located: int
    named_right: int
    found: frozenset[str]
    labelled: frozenset[str]
    multiset_exact: bool | None
    verdict_right: bool | None
    seconds: float
    finishes: bool | None = None
    #: Cards read that the photo does not show, and those of them the reading left unmarked (not uncertain).
    wrong_cards: int = 0
    wrong_sure: int = 0
    #: (labelled, read) names of the reading's corners that lie on a labelled corner of another name.
    swaps: tuple[tuple[str, str], ...] = ()


#: How many of a set's commonest name swaps its row keeps.
TOP_SWAPS = 5


@dataclass(frozen=True)
class SetScore:
    """The figures of one set (one row of the model-card table)."""

    name: str
    images: int
    corners: int
    locate_recall: float
    classify_accuracy: float
    card_precision: float
    card_recall: float
    card_f1: float
    multiset_rate: float | None
    multiset_photos: int
    verdict_accuracy: float | None
    verdict_photos: int
    ms_per_image: float
    finishing_read_right: float | None = None
    finishing_photos: int = 0
    wrong_cards: int = 0
    wrong_sure: int = 0
    #: The commonest (labelled, read, count) name swaps, most frequent first (:data:`TOP_SWAPS`).
    swaps: tuple[tuple[str, str, int], ...] = ()

    @property
    def wrong_sure_share(self) -> float | None:
        """The share of wrong cards the reading showed as sure (None where no card was wrong)."""
        return self.wrong_sure / self.wrong_cards if self.wrong_cards else None

    @classmethod
    def from_photos(cls, name: str, photos: Sequence[PhotoScore]) -> "SetScore":
        """Sum photo counts; rates over photos where the quantity is defined.

        >>> p = PhotoScore(4, 3, 2, frozenset({"AS"}), frozenset({"AS", "KH"}), True, None, 0.1,
        ...                wrong_cards=2, wrong_sure=1, swaps=(("5C", "5S"), ("5C", "5S"), ("KH", "KD")))
        >>> s = SetScore.from_photos("x", [p])
        >>> s.locate_recall, round(s.classify_accuracy, 3), s.card_recall, s.multiset_rate, s.verdict_accuracy
        (0.75, 0.667, 0.5, 1.0, None)
        >>> s.swaps, s.wrong_sure_share
        ((('5C', '5S', 2), ('KH', 'KD', 1)), 0.5)
        """
        corners = sum(p.corners for p in photos)
        located = sum(p.located for p in photos)
        prec, rec, f1 = card_set_scores([set(p.found) for p in photos], [set(p.labelled) for p in photos])
        multi = [p.multiset_exact for p in photos if p.multiset_exact is not None]
        verdicts = [p.verdict_right for p in photos if p.verdict_right is not None]
        finishing = [bool(p.verdict_right) for p in photos if p.verdict_right is not None and p.finishes]
        return cls(name, len(photos), corners, located / corners if corners else 1.0,
                   sum(p.named_right for p in photos) / located if located else 0.0, prec, rec, f1,
                   sum(multi) / len(multi) if multi else None, len(multi),
                   sum(verdicts) / len(verdicts) if verdicts else None, len(verdicts),
                   1000 * sum(p.seconds for p in photos) / max(len(photos), 1),
                   sum(finishing) / len(finishing) if finishing else None, len(finishing),
                   sum(p.wrong_cards for p in photos), sum(p.wrong_sure for p in photos),
                   tuple((a, b, n) for (a, b), n in Counter(w for p in photos for w in p.swaps).most_common(TOP_SWAPS)))

    def to_dict(self) -> dict[str, object]:
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in asdict(self).items()}


def score_photo(detector: CardDetector, image: np.ndarray, truth: Truth, conf: float = DEFAULT_CONF) -> PhotoScore:
    """Measure one photo: stage 1 alone, stage 2 on stage 1's matched boxes, then the app's reading."""
    t0 = time.perf_counter()
    boxes, _ = stage1_boxes(detector, image)
    pairs = match_boxes(boxes, truth.boxes)
    named = 0
    if pairs:
        probs = detector.classify(image, boxes[[i for i, _ in pairs]])
        best = probs.argmax(1)
        named = sum(int(k) < len(detector.classes) and detector.classes[int(k)] == truth.names[j]
                    for k, (_, j) in zip(best, pairs))
    reading = read_photo(image, detector, conf)
    seconds = time.perf_counter() - t0
    multiset = None if truth.cards is None else Counter(reading.card_names()) == Counter(truth.cards)
    if truth.distinct and truth.cards is None:
        multiset = set(reading.card_names()) == set(truth.names)
    verdict = None
    if truth.valid is not None and truth.tiplu is not None:
        got = score_reading(reading, get_rules("nepali"), tiplu=parse_card(truth.tiplu))
        verdict = got.valid == truth.valid
    shown = set(truth.names)
    wrong = [c for c in reading.cards if c.card not in shown]
    return PhotoScore(len(truth.names), len(pairs), named, frozenset(c.card for c in reading.corners),
                      frozenset(truth.names), multiset, verdict, seconds, truth.valid,
                      len(wrong), sum(not c.uncertain for c in wrong), name_swaps(reading.corners, truth))


def name_swaps(corners: Sequence[Corner], truth: Truth) -> tuple[tuple[str, str], ...]:
    """(labelled, read) for each corner read on a labelled corner (IoU >= 0.5) of another name.

    >>> t = Truth(np.array([[0, 0, 10, 20.], [50, 0, 60, 20]]), ("5C", "KH"))
    >>> name_swaps([Corner("5S", 0.9, (1, 0, 10, 20)), Corner("KH", 0.9, (50, 0, 60, 20))], t)
    (('5C', '5S'),)
    """
    if not corners:
        return ()
    pairs = match_boxes(np.array([c.box for c in corners], float), truth.boxes)
    return tuple((truth.names[j], corners[i].card) for i, j in pairs if truth.names[j] != corners[i].card)


def real_photos(folder: Path, limit: int | None = None, seed: int = 0,
                distinct: bool = False) -> list[tuple[np.ndarray, Truth]]:
    """The labelled photos of a YOLO folder (a seeded sample of ``limit`` of them); ``distinct``
    scores each photo's exactness on the distinct cards (:attr:`Truth.distinct`)."""
    samples = list(iter_samples(folder))
    if not samples:
        raise ReportError(f"{folder}: no labelled images; run 'tiplu train import-real "
                          f"/path/to/cards-real-dev data/real' first")
    if limit is not None and limit < len(samples):
        pick = np.random.default_rng(seed).choice(len(samples), limit, replace=False)
        samples = [samples[i] for i in sorted(pick)]
    out = []
    for s in samples:
        read = read_sample(s)
        if read is None:
            continue
        img, boxes = read
        out.append((img, Truth(boxes, tuple(b.name for b in s.boxes), distinct=distinct)))
    return out


def declared_hand(rng: np.random.Generator) -> tuple[list[list[str]], str]:
    """Seven melds of three (three pure runs first) and a tiplu; half the time one card is off.

    The scorer, not this function, says whether the hand finishes.
    """
    from vision.training.data.scenes import CardSupply
    supply = CardSupply(rng, jokers=0)
    melds = [supply.run(3) for _ in range(3)]
    melds += [supply.run(3) if rng.random() < 0.5 else supply.set(3) for _ in range(4)]
    if rng.random() < 0.5:
        k = int(rng.integers(3, 7))
        melds[k][int(rng.integers(3))] = supply.any(1)[0]
    tiplu = supply.any(1)[0]
    return melds, tiplu


def held_out_design(design: str) -> Deck:
    """A held-out design by name: a procedural one (:func:`~vision.training.data.procedural.held_out_decks`)
    or an SVG deck held out of training, such as ``nicu-white``."""
    from vision.training.data.decks import DeckError, load_decks
    from vision.training.data.procedural import held_out_decks
    procedural = held_out_decks()
    if design in procedural:
        return procedural[design]
    try:
        return load_decks("holdout", holdout=design)[0]
    except (DeckError, IndexError) as exc:
        raise ReportError(f"design {design!r}: {exc or 'not found'}") from exc


@dataclass(frozen=True)
class Framing:
    """How a set of rendered tables is photographed: the photo's size (w, h), the scene kinds laid in turn, the
    share of the photo the cards fill (None: the renderer's), how many cards a fan holds (0: the layout's 8-21),
    and the seed stream that keeps each set's scenes its own."""

    size: tuple[int, int]
    kinds: tuple[str, ...]
    stream: int
    fill: tuple[float, float] | None = None
    fan_cards: int = 0


#: Whole tables as a phone photographs them from above.
TABLE = Framing(TABLE_SIZE, TABLE_KINDS, 11)
#: The same tables in a 12-megapixel photo taken from further away (the cards filling :data:`FAR_FILL` of it):
#: corners of about 30-70 px that the big pass reads at 960 px, where they shrink to 7-17 px.
FAR = Framing(FAR_SIZE, TABLE_KINDS, 12, FAR_FILL)
#: What issue #52 found a webcam over the table misses: a tight hand of 13 fanned (or in a line) and the stacked
#: copies of tunnelas, in a 640x480 frame the cards fill a third to two thirds of (corners of about 20-40 px).
WEBCAM = Framing((640, 480), ("fan", "tunnela"), 13, (0.35, 0.7), fan_cards=13)


def table_scenes(design: str, count: int, seed: int = 0, *,
                 framing: Framing = TABLE) -> Iterator[tuple[np.ndarray, Truth]]:
    """``count`` whole-table renders of one held-out design, photographed as ``framing`` says (:data:`TABLE`,
    :data:`FAR`, :data:`WEBCAM`), its kinds in turn."""
    from vision.training.data.scenes import render_scene
    decks = [held_out_design(design)]
    look: dict[str, Any] = dict(size=framing.size, decks=decks, designs_per_scene=1,
                                distractors=False) | ({"fill": framing.fill} if framing.fill else {})
    rules = get_rules("nepali")
    for i in range(count):
        rng = np.random.default_rng([seed, framing.stream, i])
        kind = framing.kinds[i % len(framing.kinds)]
        tiplu, valid = None, None
        if kind == "declared":
            melds, tiplu = declared_hand(rng)
            valid = check_grouping([[parse_card(c) for c in m] for m in melds], rules,
                                   tiplu=parse_card(tiplu)).valid
            shot = render_scene(rng, "declared", cards=melds, **look)
        elif kind == "fan" and framing.fan_cards:
            hand = [str(c) for c in rng.choice(CLASS_NAMES[:52], framing.fan_cards, replace=False)]
            shot = render_scene(rng, kind, cards=hand, **look)
        else:
            shot = render_scene(rng, kind, **look)
        boxes = shot.geometry["boxes"]
        seen = {b["card_id"] for b in boxes}
        cards = tuple(c["card"] for c in shot.geometry["cards"] if c["id"] in seen)
        truth = Truth(np.array([b["bbox"] for b in boxes], float).reshape(-1, 4), tuple(b["name"] for b in boxes),
                      cards, tiplu, valid)
        yield shot.image, truth


def far_photo(image: np.ndarray, size: tuple[int, int] = FAR_SIZE) -> np.ndarray:
    """``image`` at its own resolution in the middle of a bigger frame (``size``, w x h) of its
    top edge's colour: the same table photographed from further away with a 12-megapixel phone.

    >>> far_photo(np.zeros((960, 1280, 3), np.uint8)).shape
    (3000, 4000, 3)
    """
    (w, h), (ih, iw) = size, image.shape[:2]
    frame = np.empty((h, w, 3), np.uint8)
    frame[:] = np.median(image[:20].reshape(-1, 3), 0)
    y, x = (h - ih) // 2, (w - iw) // 2
    frame[y:y + ih, x:x + iw] = image
    return frame


def sample_photos(folder: Path = REPO / "sample_images") -> Iterator[tuple[np.ndarray, Truth]]:
    """The committed samples with their ``expected.json`` corners, cards and verdicts."""
    expected = json.loads((folder / "expected.json").read_text())
    for name, entry in expected.items():
        img = cv2.imread(str(folder / name))
        if img is None:
            raise ReportError(f"{folder / name}: missing or unreadable sample image")
        cards = entry.get("cards")
        whole = cards and entry.get("visible_cards") in (None, len(cards))
        yield img, Truth(np.array([c["box"] for c in entry["corners"]], float).reshape(-1, 4),
                         tuple(c["card"] for c in entry["corners"]), tuple(cards) if whole else None,
                         entry.get("tiplu"), entry.get("valid"))


def measure(detector: CardDetector, name: str, photos: Iterator[tuple[np.ndarray, Truth]] | list,
            progress: bool = False) -> SetScore:
    """Score every photo of a set and sum it up."""
    scores = []
    for image, truth in photos:
        scores.append(score_photo(detector, image, truth))
    result = SetScore.from_photos(name, scores)
    if progress:
        print(f"  {name}: {result.images} photos, locate {result.locate_recall:.3f}, "
              f"classify {result.classify_accuracy:.3f}, F1 {result.card_f1:.3f}, "
              f"exact {round((result.multiset_rate or 0) * result.multiset_photos)}/{result.multiset_photos}, "
              f"wrong shown sure {result.wrong_sure}/{result.wrong_cards}", file=sys.stderr, flush=True)
    return result


def build_report(model: Path | None, real_val: Path, *, angles: Sequence[int] = ANGLES,
                 max_real: int | None = None, scenes: int = 30, designs: Sequence[str] = HELD_OUT_DESIGNS,
                 samples: bool = True, seed: int = 0, progress: bool = False,
                 far_scenes: int = FAR_SCENES, fresh_seeds: Sequence[int] = (),
                 webcam_val: Path | None = None, webcam_scenes: int = WEBCAM_SCENES) -> list[SetScore]:
    """Every set of the module doc, in model-card order (the webcam val after real val, when given).

    ``fresh_seeds`` add a row per design of ``scenes`` tables from each of those seeds: tables no
    choice of a model was ever measured on. Why: the tables of seed 0 are the ones every candidate
    model is compared on, so the best of many looks better on them than it reads unseen tables
    (models/HISTORY.md has the figures).
    """
    if seed in fresh_seeds:
        raise ReportError(f"--fresh-seeds must leave out --seed {seed}: its tables are not fresh")
    detector = CardDetector(model)
    rows = []
    real = real_photos(real_val, max_real, seed) if angles else []
    for angle in angles:
        turned = [(img, Truth(b, t.names)) for img, t in real
                  for img, b in [turn_photo(img, t.boxes, angle) if angle else (img, t.boxes)]]
        rows.append(measure(detector, f"real val {angle}°", turned, progress))
    if webcam_val is not None:
        rows.append(measure(detector, "webcam val", real_photos(webcam_val, distinct=True), progress))
    for design in designs if scenes else ():
        rows.append(measure(detector, f"table {design}", table_scenes(design, scenes, seed), progress))
    for design in designs if scenes and fresh_seeds else ():
        fresh = (shot for s in fresh_seeds for shot in table_scenes(design, scenes, s))
        rows.append(measure(detector, f"fresh table {design}", fresh, progress))
    for design in designs if far_scenes else ():
        rows.append(measure(detector, f"far table {design}", table_scenes(design, far_scenes, seed, framing=FAR),
                            progress))
    for design in designs if webcam_scenes else ():
        rows.append(measure(detector, f"webcam fans and stacks {design}",
                            table_scenes(design, webcam_scenes, seed, framing=WEBCAM), progress))
    if samples:
        rows.append(measure(detector, "samples", sample_photos(), progress))
    return rows


#: The figures of a set that ``model.json``'s ``"metrics"`` keep (rates left out where a set has none).
METRIC_FIELDS = ("locate_recall", "classify_accuracy", "card_precision", "card_recall", "card_f1",
                 "multiset_rate", "verdict_accuracy")


def metrics_key(name: str) -> str:
    """A set's key in ``model.json``'s ``"metrics"``.

    >>> metrics_key("real val 135°"), metrics_key("far table proc-gold-on-black")
    ('real_val_135deg', 'far_table_proc_gold_on_black')
    """
    return name.replace("°", "deg").replace("-", "_").replace(" ", "_")


def write_report_metrics(model_json: Path, rows: Sequence[SetScore]) -> None:
    """Put the report's figures into a model folder's ``model.json`` under ``"metrics"``/``"report"``
    (the sets measured replace those of the same name; the rest of ``"metrics"`` stays)."""
    info = json.loads(model_json.read_text())
    report = info.setdefault("metrics", {}).setdefault("report", {})
    for row in rows:
        figures = {k: v for k, v in row.to_dict().items() if k in METRIC_FIELDS and v is not None}
        report[metrics_key(row.name)] = figures
    model_json.write_text(json.dumps(info, indent=2) + "\n")


def markdown_table(rows: Sequence[SetScore]) -> str:
    """The model-card table (``–`` where a figure does not apply)."""
    def f(v: float | None, n: int | None = None) -> str:
        if v is None:
            return "–"
        return f"{v:.3f}" + (f" ({round(v * n)}/{n})" if n else "")
    head = ("| set | photos | corners | stage-1 locate recall | stage-2 accuracy | card P | card R | card F1 "
            "| exact multiset | verdict right | wrong cards shown sure | ms/photo |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
    table = head + "".join(
        f"| {r.name} | {r.images} | {r.corners} | {f(r.locate_recall)} | {f(r.classify_accuracy)} | "
        f"{f(r.card_precision)} | {f(r.card_recall)} | **{f(r.card_f1)}** | {f(r.multiset_rate, r.multiset_photos)} | "
        f"{f(r.verdict_accuracy, r.verdict_photos)}"
        f"{'' if r.finishing_read_right is None else f'; finishing {round(r.finishing_read_right * r.finishing_photos)}/{r.finishing_photos}'}"
        f" | {r.wrong_sure}/{r.wrong_cards} | {r.ms_per_image:.0f} |\n" for r in rows)
    swaps = [f"- {r.name}: " + ", ".join(f"{a} read as {b} x{n}" for a, b, n in r.swaps) + "\n"
             for r in rows if r.swaps]
    return table + ("\nCommonest name swaps (labelled corner read as):\n\n" + "".join(swaps) if swaps else "")

