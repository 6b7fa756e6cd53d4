"""Marriage-table scenes: lay cards out, render them photographically, label visible corners.

A scene is a list of physical cards laid on a table plane (melds overlapped so only the
corner index shows, fanned hands, tunnelas stacked, scattered maal cards, single cards),
seen through a tilted camera. Each card face is warped into the picture in z order while an
id map records which card owns each pixel, so the generator knows exactly how much of each
corner index (rank glyph + small pip) is still visible. A corner gets a box when at least
:data:`MIN_VISIBLE` of its index ink is visible (see ``vision/training/data/DECKS.md`` for the measurement).

>>> import numpy as np
>>> from vision.training.data.decks import drawn_decks
>>> s = render_scene(np.random.default_rng(0), "single", size=(320, 240), decks=drawn_decks()[:1],
...                  cards=["QS"])
>>> sorted({b.name for b in s.labels})
['QS']
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, NamedTuple, Sequence, cast

import cv2
import numpy as np

from scorer import CLASS_NAMES
from scorer.cards import SUITS
from vision.training.data.backgrounds import make_background
from vision.training.data.decks import Deck, drawn_decks
from vision.training.data.effects import camera_effects, draw_distractors, draw_words
from vision.training.data.faces import CORNER_CODES, DRAWN_STYLES, FONTS, Face, draw_back, draw_face

Rng = np.random.Generator

#: A corner is labelled when at least this fraction of its index ink is visible.
MIN_VISIBLE = 0.75
#: Card widths (px) drawn from in crop mode: 60 px puts a 10-15 px index in a 640 crop,
#: 400 px matches close-up phone photos (the real dev set's indices are ~70x95 px).
CROP_CARD_PX = (60.0, 400.0)
#: How much likelier a real (SVG) design is picked for a scene than a drawn one.
SVG_WEIGHT = 3.0
#: Name of a face-down distractor card in layouts (never labelled).
BACK = "BACK"
#: Card height / width used to lay cards out (real faces keep their own aspect).
ASPECT = 1.4
SCENE_TYPES: tuple[str, ...] = ("meld_row", "fan", "tunnela", "maal_spread", "single", "table", "declared")
CLASS_ID: dict[str, int] = {name: i for i, name in enumerate(CLASS_NAMES)}
_RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


class SceneError(ValueError):
    """A scene request cannot be met (unknown scene type, no decks, bad size)."""


# --------------------------------------------------------------------------- card supply

class CardSupply:
    """Deals cards for layouts from three decks (at most 3 copies of a face) or a fixed list.

    With ``fixed`` every request just takes the next cards from the list, so tests can ask
    for an exact scene (``CardSupply(rng, fixed=["QS", "QS", "QS"])`` is one tunnela).
    """

    def __init__(self, rng: Rng, fixed: Sequence[str] | None = None, jokers: int = 3,
                 groups: Sequence[Sequence[str]] | None = None) -> None:
        self.rng = rng
        if groups is not None:
            fixed = [c for g in groups for c in g]
        self.fixed = list(fixed) if fixed is not None else None
        self.groups = [list(g) for g in groups] if groups is not None else None
        self.used: Counter[str] = Counter()
        self.limit = {name: 3 for name in CLASS_NAMES} | {"JOKER": jokers}

    def _ok(self, card: str, n: int = 1) -> bool:
        return self.used[card] + n <= self.limit[card]

    def _take(self, cards: list[str]) -> list[str]:
        for c in cards:
            self.used[c] += 1
        return cards

    def _fixed(self, n: int) -> list[str]:
        assert self.fixed is not None
        out, self.fixed = self.fixed[:n], self.fixed[n:]
        return self._take(out)

    def next_group(self) -> list[str]:
        """The next caller-given group (one meld or stack), taken from the fixed cards."""
        assert self.groups is not None
        group = self.groups.pop(0)
        return self._fixed(len(group))

    @property
    def exhausted(self) -> bool:
        return self.fixed is not None and not self.fixed

    def any(self, n: int = 1) -> list[str]:
        if self.fixed is not None:
            return self._fixed(n)
        out = []
        for _ in range(n):
            for _ in range(50):
                c = CLASS_NAMES[int(self.rng.integers(len(CLASS_NAMES) - 1))] \
                    if self.rng.random() > 0.03 else "JOKER"
                if self._ok(c):
                    out.append(c)
                    self.used[c] += 1
                    break
        return out

    def run(self, n: int = 3) -> list[str]:
        """``n`` consecutive ranks of one suit (A-2-3 and Q-K-A allowed)."""
        if self.fixed is not None:
            return self._fixed(n)
        for _ in range(30):
            suit = SUITS[int(self.rng.integers(4))]
            start = int(self.rng.integers(0, 13))
            cards = [f"{_RANKS[(start + i) % 13]}{suit}" for i in range(n)]
            if start + n <= 14 and all(self._ok(c) for c in cards):
                return self._take(cards)
        return self.any(n)

    def set(self, n: int = 3) -> list[str]:
        """``n`` cards of one rank in different suits (a trial)."""
        if self.fixed is not None:
            return self._fixed(n)
        for _ in range(30):
            rank = _RANKS[int(self.rng.integers(13))]
            suits = self.rng.permutation(list(SUITS))[:n]
            cards = [f"{rank}{s}" for s in suits]
            if all(self._ok(c) for c in cards):
                return self._take(cards)
        return self.any(n)

    def identical(self, n: int = 3) -> list[str]:
        """``n`` copies of one face (a tunnela when n == 3, a dublee when n == 2)."""
        if self.fixed is not None:
            return self._fixed(n)
        for _ in range(60):
            c = CLASS_NAMES[int(self.rng.integers(len(CLASS_NAMES) - 1))]
            if self._ok(c, n):
                return self._take([c] * n)
        return self.any(n)

    def meld(self) -> list[str]:
        r = self.rng.random()
        if r < 0.45:
            return self.run(3)
        if r < 0.7:
            return self.set(3)
        if r < 0.82:
            return self.identical(3)
        return self.any(3)


# --------------------------------------------------------------------------- layouts

@dataclass(frozen=True)
class Laid:
    """One card on the table plane: centre and size in card widths, angle in degrees (clockwise)."""

    card: str
    group: str
    x: float
    y: float
    angle: float


def _rot(dx: float, dy: float, deg: float) -> tuple[float, float]:
    a = math.radians(deg)
    return dx * math.cos(a) - dy * math.sin(a), dx * math.sin(a) + dy * math.cos(a)


def _meld_cards(cards: Sequence[str], group: str, x: float, y: float, angle: float, step: float,
                rng: Rng, jitter: float = 2.0) -> list[Laid]:
    out = []
    for i, c in enumerate(cards):
        dx, dy = _rot(i * step, rng.normal(0, 0.015), angle)
        out.append(Laid(c, group, x + dx, y + dy, angle + rng.normal(0, jitter)))
    return out


def layout_meld_row(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """Rows of up to 7 melds; inside a meld each card covers the previous one but its index."""
    rows = 1 if supply.fixed is not None else int(rng.choice([1, 1, 2, 2, 3]))
    per_row = int(rng.integers(1, 8))
    if supply.groups is not None:
        rows, per_row = (len(supply.groups) + 6) // 7, 7
    step = rng.uniform(0.2, 0.34)
    gap = rng.uniform(0.15, 0.6)
    row_angle = rng.normal(0, 3)
    out: list[Laid] = []
    for r in range(rows):
        x = 0.0
        y = r * ASPECT * rng.uniform(1.1, 1.4)
        for m in range(per_row):
            if supply.exhausted:
                break
            size = 3 if rng.random() < 0.85 else 2
            if supply.groups is not None:
                cards = supply.next_group() if supply.groups else []
            else:
                cards = supply.meld() if size == 3 else supply.identical(2)
            if not cards:
                break
            out += _meld_cards(cards, f"{prefix}row{r}-meld{m}", x, y, row_angle, step, rng)
            x += (len(cards) - 1) * step + 1 + gap
        if supply.exhausted:
            break
    return out


def layout_fan(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """A hand of 8-21 cards fanned around a pivot below the cards (or laid in a straight line)."""
    n = len(supply.fixed) if supply.fixed is not None else int(rng.integers(8, 22))
    cards = supply.any(n)
    out = []
    if rng.random() < 0.7:
        spread = rng.uniform(3.0, 6.5)
        radius = rng.uniform(2.2, 4.0)
        a0 = -spread * (n - 1) / 2
        for i, c in enumerate(cards):
            a = a0 + i * spread + rng.normal(0, 0.4)
            dx, dy = _rot(0, -radius, a)
            out.append(Laid(c, f"{prefix}hand", dx, dy + radius, a))
    else:
        step = rng.uniform(0.18, 0.3)
        out = _meld_cards(cards, f"{prefix}hand", 0, 0, rng.normal(0, 2), step, rng, jitter=1.0)
    return out


def layout_tunnela(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """1-4 stacks of identical cards (3 = tunnela, 2 = dublee), each shifted so indices show."""
    stacks = 1 if supply.fixed is not None else int(rng.integers(1, 5))
    if supply.groups is not None:
        stacks = len(supply.groups)
    out: list[Laid] = []
    for s in range(stacks):
        if supply.groups is not None:
            cards = supply.next_group()
        elif supply.fixed is not None:
            cards = supply.any(len(supply.fixed))
        else:
            cards = supply.identical(3 if rng.random() < 0.75 else 2)
        dx, dy = rng.uniform(0.0, 0.3), rng.uniform(0.0, 0.35)
        if dx < 0.17 and dy < 0.25:
            dx = 0.2
        base = rng.normal(0, 4)
        x0 = s * (1.6 + rng.uniform(0, 0.6))
        for i, c in enumerate(cards):
            out.append(Laid(c, f"{prefix}stack{s}", x0 + i * dx, i * dy, base + rng.normal(0, 2)))
    return out


def layout_maal_spread(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """5-14 cards scattered at any angle, sometimes overlapping (maal shown on the table)."""
    n = len(supply.fixed) if supply.fixed is not None else int(rng.integers(5, 15))
    cards = supply.any(n)
    side = math.sqrt(n) * 1.5
    return [Laid(c, f"{prefix}maal", rng.uniform(0, side), rng.uniform(0, side * 0.8),
                 rng.uniform(0, 360)) for c in cards]


def layout_single(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """1-4 cards apart from each other, any angle."""
    n = len(supply.fixed) if supply.fixed is not None else int(rng.integers(1, 5))
    cards = supply.any(n)
    return [Laid(c, f"{prefix}single{i}", i * 2.0 + rng.uniform(0, 0.3), rng.uniform(0, 0.4),
                 rng.uniform(-30, 30) if rng.random() < 0.7 else rng.uniform(0, 360))
            for i, c in enumerate(cards)]


def layout_table(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """A whole table: a meld row, a hand or maal, and a tunnela, placed in different areas."""
    parts = [layout_meld_row, layout_fan if rng.random() < 0.5 else layout_maal_spread,
             layout_tunnela]
    out: list[Laid] = []
    y = 0.0
    for k, part in enumerate(parts):
        cards = part(rng, supply, f"{prefix}p{k}-")
        if not cards:
            continue
        ys = [c.y for c in cards]
        shift = y - min(ys)
        out += [Laid(c.card, c.group, c.x + rng.uniform(-0.5, 0.5), c.y + shift, c.angle)
                for c in cards]
        y += max(ys) - min(ys) + ASPECT * 1.6
    return out


def layout_declared(rng: Rng, supply: CardSupply, prefix: str = "") -> list[Laid]:
    """A declared hand: seven melds of three (or the caller's groups) in rows of four."""
    groups = len(supply.groups) if supply.groups is not None else 7
    step, gap = rng.uniform(0.26, 0.32), rng.uniform(0.4, 0.7)
    out: list[Laid] = []
    for m in range(groups):
        cards = supply.next_group() if supply.groups is not None else supply.meld()
        row, col = divmod(m, 4)
        out += _meld_cards(cards, f"{prefix}meld{m}", col * (2 * step + 1 + gap), row * ASPECT * 1.25,
                           0.0, step, rng, jitter=1.5)
    return out


LAYOUTS: dict[str, Callable[[Rng, CardSupply, str], list[Laid]]] = {
    "declared": layout_declared, "meld_row": layout_meld_row, "fan": layout_fan, "tunnela": layout_tunnela,
    "maal_spread": layout_maal_spread, "single": layout_single, "table": layout_table,
}


def _add_backs(rng: Rng, laid: list[Laid]) -> list[Laid]:
    """Put a pile of 1-5 face-down cards beside (or partly over) the laid cards."""
    xs, ys = [c.x for c in laid], [c.y for c in laid]
    side = int(rng.integers(4))
    x = {0: min(xs) - 1.6, 1: max(xs) + 1.6}.get(side, rng.uniform(min(xs), max(xs) + 0.01))
    y = {2: min(ys) - 2.0, 3: max(ys) + 2.0}.get(side, rng.uniform(min(ys), max(ys) + 0.01))
    if rng.random() < 0.25:
        x, y = x * 0.6 + float(np.mean(xs)) * 0.4, y * 0.6 + float(np.mean(ys)) * 0.4
    a = rng.uniform(0, 360)
    pile = [Laid(BACK, "backs", x + rng.normal(0, 0.04), y + rng.normal(0, 0.04),
                 a + rng.normal(0, 4)) for _ in range(int(rng.integers(1, 6)))]
    return pile + laid if rng.random() < 0.7 else laid + pile


_NOTE_TOKENS = ("A", "K", "Q", "J", "10", "9", "7", "5", "3", "+", "-", "=", "Rs", "12", "-4",
                "M", "T", "x3")


def _paper_note(rng: Rng, canvas: np.ndarray, card_px: float) -> None:
    # canvas: uint8 BGR (cv2.putText draws on 8-bit images only)
    """Draw a paper slip with score-sheet writing (ranks, numbers) on the table, in place."""
    h, w = canvas.shape[:2]
    nw, nh = card_px * rng.uniform(1.0, 2.5), card_px * rng.uniform(0.8, 2.0)
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    box = cv2.boxPoints(((float(cx), float(cy)), (float(nw), float(nh)), float(rng.uniform(0, 180))))
    paper = rng.uniform(215, 250)
    cv2.fillPoly(canvas, [box.astype(np.int32)], (int(paper), int(paper),
                 int(paper * rng.uniform(0.93, 1.0))), cv2.LINE_AA)
    ink = (30, 30, 30) if rng.random() < 0.6 else (40, 40, 170)
    size = max(0.3, card_px * rng.uniform(0.004, 0.01))
    for k in range(int(rng.integers(1, 5))):
        text = " ".join(_NOTE_TOKENS[int(i)] for i in rng.integers(0, len(_NOTE_TOKENS), 3))
        org = (int(cx - nw / 2 + card_px * 0.1), int(cy - nh / 2 + (k + 1) * nh / 5))
        cv2.putText(canvas, text, org, FONTS[int(rng.integers(len(FONTS)))], size, ink,
                    max(1, int(size * 2)), cv2.LINE_AA)


# --------------------------------------------------------------------------- rendering

class BoxLabel(NamedTuple):
    """One visible corner index: pixel box (x1, y1 exclusive) and which card/corner it is."""

    class_id: int
    name: str
    x0: float
    y0: float
    x1: float
    y1: float
    card_id: int
    corner: str
    visible: float

    def yolo(self, width: int, height: int) -> str:
        """``class cx cy w h`` normalised, 6 decimals (the Ultralytics label line)."""
        cx, cy = (self.x0 + self.x1) / 2 / width, (self.y0 + self.y1) / 2 / height
        w, h = (self.x1 - self.x0) / width, (self.y1 - self.y0) / height
        return f"{self.class_id} {cx:.6f} {cy:.6f} {w:.6f} {h:.6f}"


class RenderedScene(NamedTuple):
    """``(image_bgr, labels, geometry)``; geometry is JSON-ready (see :func:`render_scene`)."""

    image: np.ndarray
    labels: tuple[BoxLabel, ...]
    geometry: dict


def _premultiplied(face: Face, cache: dict[int, tuple[np.ndarray, Face]]) -> np.ndarray:
    hit = cache.get(id(face))
    if hit is not None and hit[1] is face:
        return hit[0]
    img = face.image.astype(np.float32)
    a = img[..., 3:4] / 255.0
    pm = np.concatenate([img[..., :3] * a, img[..., 3:4]], axis=2)
    cache[id(face)] = (pm, face)
    return pm


_PM_CACHE: dict[int, tuple[np.ndarray, Face]] = {}


def _camera(rng: Rng, w: int, h: int, strength: float) -> np.ndarray:
    """A homography that tilts the table plane as a hand-held camera would."""
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    d = strength * min(w, h)
    k, s = rng.uniform(0, d), rng.uniform(-d, d) * 0.3
    if rng.random() < 0.5:
        move = [[k + s, k * 0.4], [-k + s, k * 0.4], [0, 0], [0, 0]]
    else:
        move = [[0, 0], [0, 0], [-k + s, -k * 0.4], [k + s, -k * 0.4]]
    dst = src + np.array(move, np.float32) + rng.normal(0, d * 0.08 + 1e-3, (4, 2)).astype(np.float32)
    return cv2.getPerspectiveTransform(src, dst.astype(np.float32))


_CORNER_TURN = {"tl": 0.0, "br": 180.0, "tr": 0.0, "bl": 180.0}


def _wrap(deg: float) -> float:
    """An angle in degrees folded into (-180, 180]."""
    deg = math.fmod(deg, 360.0)
    if deg > 180:
        deg -= 360
    elif deg <= -180:
        deg += 360
    return deg


def _apply_h(hm: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.hstack([pts, np.ones((len(pts), 1))]) @ hm.T
    return p[:, :2] / p[:, 2:3]


def _card_corners(x: float, y: float, angle: float, aspect: float) -> np.ndarray:
    hw, hh = 0.5, aspect / 2
    pts = [(-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)]
    return np.array([(x + _rot(dx, dy, angle)[0], y + _rot(dx, dy, angle)[1]) for dx, dy in pts])


def _pick_face(card: str, copy_no: int, designs: Sequence[Deck], back: int = 0) -> Face:
    if card == BACK:
        return draw_back(back)
    deck = designs[copy_no % len(designs)]
    face = deck.face(card)
    if face is None:
        for other in designs:
            face = other.face(card)
            if face is not None:
                return face
        return draw_face(card, DRAWN_STYLES[copy_no % len(DRAWN_STYLES)])
    return face


def _photometric(img: np.ndarray, rng: Rng) -> np.ndarray:
    """Lighting gradient, colour cast, glare strip, blur, noise, grayscale (all optional)."""
    h, w = img.shape[:2]
    out: np.ndarray = img.astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, 2 * np.pi)
    g = (np.cos(ang) * (xx / w - 0.5) + np.sin(ang) * (yy / h - 0.5))
    light = 1 + g * rng.uniform(0, 0.7)
    if rng.random() < 0.4:
        cx, cy, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(0.3, 1.0) * max(w, h)
        light *= 1 - rng.uniform(0.1, 0.45) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r))
    out *= (light * rng.uniform(0.65, 1.15))[..., None]
    if rng.random() < 0.5:
        out *= rng.uniform(0.85, 1.15, 3).astype(np.float32)
    if rng.random() < 0.25:
        a = rng.uniform(0, np.pi)
        d = np.cos(a) * xx + np.sin(a) * yy
        c = rng.uniform(d.min(), d.max())
        width = rng.uniform(0.02, 0.12) * max(w, h)
        glare = np.exp(-((d - c) / width) ** 2) * rng.uniform(60, 160)
        out += glare[..., None]
    out = np.clip(out, 0, 255).astype(np.uint8)
    r = rng.random()
    if r < 0.3:
        k = float(rng.uniform(0.4, 1.6))
        out = cv2.GaussianBlur(out, (0, 0), k)
    elif r < 0.4:
        n = int(rng.integers(3, 8))
        line = np.zeros((n, n), np.float32)
        line[n // 2, :] = 1 / n
        m = cv2.getRotationMatrix2D((n / 2 - 0.5, n / 2 - 0.5), float(rng.uniform(0, 180)), 1)
        kern = cv2.warpAffine(line, m, (n, n))
        out = cv2.filter2D(out, -1, kern / max(kern.sum(), 1e-6))
    if rng.random() < 0.6:
        sigma = rng.uniform(1, 9)
        out = np.clip(out + rng.normal(0, sigma, out.shape).astype(np.float32), 0, 255).astype(np.uint8)
    if rng.random() < 0.1:
        gray = cv2.cvtColor(out, cv2.COLOR_BGR2GRAY)
        out = cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR)
    return out


def render_scene(rng: Rng, scene: str = "table", *, size: tuple[int, int] = (1280, 960),
                 decks: Sequence[Deck] | None = None,
                 cards: Sequence[str] | Sequence[Sequence[str]] | None = None,
                 card_px: float | None = None, crop: bool = False, effects: bool = True,
                 background: str | None = None, camera: float | None = None,
                 min_visible: float = MIN_VISIBLE, designs_per_scene: int | None = None,
                 parts: bool = False,
                 card_px_range: tuple[float, float] = CROP_CARD_PX,
                 distractors: bool | None = None, randomise: bool = False,
                 fill: tuple[float, float] = (0.55, 0.95), words: float = 0.0) -> RenderedScene:
    """Render one table scene and label every visible corner index.

    ``scene`` is one of :data:`SCENE_TYPES`; ``cards`` fixes the cards laid (in layout
    order, e.g. ``["7H"] * 3`` with ``"tunnela"``), or, as a list of lists, the groups:
    each inner list is one meld (``"meld_row"``, 7 to a row) or one stack (``"tunnela"``),
    e.g. ``[["QS"] * 3, ["5H", "6H", "7H"]]``; ``card_px`` is the card width in pixels
    (default: the layout fills a share of the picture drawn from ``fill``, or log-uniform in
    ``card_px_range`` in ``crop`` mode, where the view is centred on a random card and cards
    may run off the edges); ``effects=False`` gives a clean picture (flat light, no blur/noise/shadows) for ground-truth tests;
    ``distractors`` (default: same as ``effects``) adds face-down cards and paper notes
    with rank-like writing, which get no boxes (face-down cards are listed under
    ``geometry["backs"]``);
    ``camera`` is the perspective strength (0 = straight above). ``randomise=True`` (domain
    randomisation, with ``effects``) tilts the camera up to about 45 degrees, adds hands, phones
    and coins under the cards and the camera effects of :mod:`vision.training.data.effects`; ``words``
    (with distractors) is the chance of printed words on the table too (brands, labels:
    :func:`~vision.training.data.effects.draw_words`; 0 draws nothing from ``rng``, so a seed's scene is as before).
    ``parts=True`` adds
    ``visible_rank`` / ``visible_pip`` to each geometry box (used to choose
    :data:`MIN_VISIBLE`).

    ``geometry`` = ``{"size": [w, h], "scene": str, "cards": [{"id", "card", "deck", "group",
    "outline": [[x, y] x4 TL,TR,BR,BL], "angle", "z"}], "boxes": [{"class", "name", "card_id",
    "corner": "tl"|"br", "bbox": [x0, y0, x1, y1], "visible", "outline", "angle"}]}``.
    """
    if scene not in LAYOUTS:
        raise SceneError(f"unknown scene {scene!r}; use one of {', '.join(SCENE_TYPES)}")
    w, h = size
    if w < 32 or h < 32:
        raise SceneError(f"image size {w}x{h} is too small; use at least 32x32")
    decks = list(decks) if decks else drawn_decks()
    if not decks:
        raise SceneError("no card designs to draw from")
    n_designs = designs_per_scene or int(rng.choice([1, 1, 2, 3]))
    p = np.array([1.0 if d.name.startswith("drawn-") else SVG_WEIGHT for d in decks])
    designs = [decks[int(i)] for i in rng.choice(len(decks), size=min(n_designs, len(decks)),
                                                 replace=False, p=p / p.sum())]
    if cards is not None and len(cards) and not isinstance(cards[0], str):
        supply = CardSupply(rng, groups=cards)
    else:
        supply = CardSupply(rng, cast(Sequence[str] | None, cards))
    laid = LAYOUTS[scene](rng, supply, "")
    if cards is not None and not supply.exhausted:
        laid += layout_single(rng, supply, "extra-")
    if not laid:
        raise SceneError("the layout produced no cards")
    if distractors is None:
        distractors = effects
    if distractors and rng.random() < 0.35:
        laid = _add_backs(rng, laid)
    turn = rng.uniform(0, 360) if scene != "single" else 0.0
    if scene in ("meld_row", "fan", "tunnela", "table", "declared") and rng.random() < 0.5:
        turn = rng.normal(0, 8) + 180 * int(rng.integers(0, 2))
    if randomise and scene != "single":
        turn = rng.uniform(0, 360)
    laid = [Laid(c.card, c.group, *_rot(c.x, c.y, turn), c.angle + turn) for c in laid]

    copies: Counter[str] = Counter()
    faces = []
    back_variant = int(rng.integers(0, 18))
    for c in laid:
        faces.append(_pick_face(c.card, copies[c.card], designs, back_variant))
        copies[c.card] += 1
    corners = [_card_corners(c.x, c.y, c.angle, f.size[1] / f.size[0]) for c, f in zip(laid, faces)]
    allp = np.vstack(corners)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    span = np.maximum(hi - lo, 1e-3)
    if card_px is None:
        if crop:
            lo_px, hi_px = card_px_range
            card_px = float(np.exp(rng.uniform(np.log(lo_px), np.log(hi_px))))
        else:
            share = rng.uniform(*fill)
            card_px = float(min(w * share / span[0], h * share / span[1]))
            card_px = max(card_px, 24.0)
    if crop:
        pick = laid[int(rng.integers(len(laid)))]
        centre = np.array([pick.x, pick.y]) + rng.normal(0, 0.6, 2)
    else:
        centre = (lo + hi) / 2 + rng.normal(0, 0.03, 2) * span
    to_px = np.array([[card_px, 0, w / 2 - card_px * centre[0]],
                      [0, card_px, h / 2 - card_px * centre[1]], [0, 0, 1]])
    strength = camera if camera is not None else (rng.uniform(0, 0.25) if effects else 0.0)
    if randomise and effects and camera is None and rng.random() < 0.4:
        strength = rng.uniform(0.25, 0.5)
    hcam = _camera(rng, w, h, strength) if strength > 0 else np.eye(3)
    table_to_img = hcam @ to_px

    table = make_background(rng, w, h, background)
    if distractors and rng.random() < 0.3:
        _paper_note(rng, table, card_px)
    if randomise and distractors and rng.random() < 0.5:
        draw_distractors(rng, table, card_px)
    if words and distractors and rng.random() < words:
        draw_words(rng, table, card_px)
    canvas = table.astype(np.float32)
    idmap = np.full((h, w), -1, np.int32)
    shadow_dir = rng.normal(0, 1, 2)
    shadow_dir = shadow_dir / (np.linalg.norm(shadow_dir) + 1e-6)
    ink_rois: list[tuple[int, int, np.ndarray, dict[int, int]]] = []
    pip_rois: list[np.ndarray | None] = []
    outlines: list[np.ndarray] = []
    for idx, (c, face, quad) in enumerate(zip(laid, faces, corners)):
        poly = _apply_h(table_to_img, quad)
        outlines.append(poly)
        top_len = float(np.linalg.norm(poly[1] - poly[0]))
        face = face.at_most(top_len)
        fw, fh = face.size
        src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
        hm = cv2.getPerspectiveTransform(src, poly.astype(np.float32))
        x0, y0 = np.floor(poly.min(axis=0)).astype(int) - 1
        x1, y1 = np.ceil(poly.max(axis=0)).astype(int) + 2
        if x1 <= 0 or y1 <= 0 or x0 >= w or y0 >= h or (x1 - x0) * (y1 - y0) > 16 * w * h:
            ink_rois.append((0, 0, np.zeros((0, 0), np.uint8), {}))
            pip_rois.append(None)
            continue
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
        hroi = shift @ hm
        rw, rh = x1 - x0, y1 - y0
        pm = _premultiplied(face, _PM_CACHE)
        warped = cv2.warpPerspective(pm, hroi, (rw, rh), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        ink = cv2.warpPerspective(face.ink, hroi, (rw, rh), flags=cv2.INTER_NEAREST,
                                  borderMode=cv2.BORDER_CONSTANT, borderValue=0)
        totals = {code: int((ink == code).sum()) for code in CORNER_CODES.values()}
        ink_rois.append((x0, y0, ink, totals))
        pip_rois.append(cv2.warpPerspective(face.pip_mask().astype(np.uint8), hroi, (rw, rh),
                                            flags=cv2.INTER_NEAREST) if parts else None)
        cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        sl = (slice(cy0 - y0, cy1 - y0), slice(cx0 - x0, cx1 - x0))
        alpha = (warped[..., 3] / 255.0).astype(np.float64)
        if effects:
            off = shadow_dir * card_px * rng.uniform(0.01, 0.05)
            sm = np.array([[1, 0, off[0]], [0, 1, off[1]]], np.float32)
            sh = cv2.warpAffine(alpha, sm, (rw, rh))
            sh = cv2.GaussianBlur(sh, (0, 0), max(0.5, card_px * 0.02))
            canvas[cy0:cy1, cx0:cx1] *= (1 - rng.uniform(0.2, 0.5) * sh[sl])[..., None]
            gain = rng.uniform(0.88, 1.05)
        else:
            gain = 1.0
        a = alpha[sl][..., None]
        canvas[cy0:cy1, cx0:cx1] = canvas[cy0:cy1, cx0:cx1] * (1 - a) + warped[sl][..., :3] * gain
        idmap[cy0:cy1, cx0:cx1][alpha[sl] > 0.5] = idx

    image = np.clip(canvas, 0, 255).astype(np.uint8)
    if effects:
        image = _photometric(image, rng)
        if randomise:
            image = camera_effects(image, rng)

    labels: list[BoxLabel] = []
    geo_boxes: list[dict] = []
    geo_cards: list[dict] = []
    geo_backs: list[dict] = []
    for idx, (c, face, poly) in enumerate(zip(laid, faces, outlines)):
        top = poly[1] - poly[0]
        angle = float(np.degrees(np.arctan2(top[1], top[0])))
        outline = [[round(float(x), 2), round(float(y), 2)] for x, y in poly]
        entry = {"id": idx, "card": c.card, "deck": face.deck, "group": c.group,
                 "outline": outline, "angle": round(angle, 2), "z": idx}
        if c.card == BACK:
            geo_backs.append(entry)
            continue
        geo_cards.append(entry)
        x0, y0, ink, totals = ink_rois[idx]
        if ink.size == 0:
            continue
        rh, rw = ink.shape
        cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x0 + rw, w), min(y0 + rh, h)
        if cx1 <= cx0 or cy1 <= cy0:
            continue
        ink_c = ink[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0]
        mine = idmap[cy0:cy1, cx0:cx1] == idx
        for corner, code in CORNER_CODES.items():
            total = totals[code]
            if total == 0:
                continue
            vis = (ink_c == code) & mine
            n = int(vis.sum())
            frac = n / total
            if frac < min_visible:
                continue
            ys, xs = np.nonzero(vis)
            bx0, by0 = xs.min() + cx0, ys.min() + cy0
            bx1, by1 = xs.max() + cx0 + 1, ys.max() + cy0 + 1
            pad = max(1.0, 0.08 * max(bx1 - bx0, by1 - by0))
            box = (max(0.0, bx0 - pad), max(0.0, by0 - pad), min(float(w), bx1 + pad),
                   min(float(h), by1 + pad))
            if box[2] - box[0] < 3 or box[3] - box[1] < 3:
                continue
            x0b, y0b, x1b, y1b = (round(v, 2) for v in box)
            lab = BoxLabel(CLASS_ID[c.card], c.card, x0b, y0b, x1b, y1b, idx, corner, round(frac, 3))
            extra: dict[str, float] = {}
            pip_roi = pip_rois[idx]
            if pip_roi is not None:
                pip_c = pip_roi[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0] > 0
                pip_full = (ink == code) & (pip_roi > 0)
                rank_full = (ink == code) & (pip_roi == 0)
                for part, full, sel in (("pip", pip_full, pip_c), ("rank", rank_full, ~pip_c)):
                    tot = int(full.sum())
                    extra[f"visible_{part}"] = round(int((vis & sel).sum()) / tot, 3) if tot else -1.0
            labels.append(lab)
            geo_boxes.append({"class": lab.class_id, "name": lab.name, "card_id": idx,
                              "corner": corner, "bbox": [lab.x0, lab.y0, lab.x1, lab.y1],
                              "visible": lab.visible, "outline": outline,
                              "angle": round(_wrap(angle + _CORNER_TURN[corner]), 2)} | extra)
    geometry = {"size": [w, h], "scene": scene, "card_px": round(card_px, 2),
                "min_visible": min_visible, "cards": geo_cards, "boxes": geo_boxes,
                "backs": geo_backs}
    return RenderedScene(image, tuple(labels), geometry)
