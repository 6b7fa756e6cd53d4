"""Procedural card designs by the thousand: fonts, index layouts and palettes drawn from a seed.

The SVG decks and the eight drawn styles are a few dozen looks; from them alone stage 1
learns "dark glyph on white card" and misses most corners of a gold-on-black deck. Here a
design is a :class:`ProceduralStyle` picked from a random generator: a font (every TTF the
machine has, DejaVu at least, or an OpenCV Hershey font), an index layout (rank over pip,
rank beside pip, big indices, four indices), and a :class:`Palette` (classic, four-colour,
light-on-dark, metallic, patterned borders). Faces are drawn on demand, so a scene can use a
design nobody drew before.

Held-out designs stay out of training by a registry flag: :data:`PALETTES` entries with
``held_out=True`` and :data:`HELD_OUT_FONTS` are never drawn by :func:`random_style`;
:data:`HELD_OUT_STYLES` names the designs kept for evaluation (``proc-gold-on-black``).

>>> import numpy as np
>>> style = random_style(np.random.default_rng(3))
>>> style.palette.held_out, procedural_face("QH", style).boxes["tl"][0] >= 0
(False, True)
>>> sorted(held_out_decks())
['proc-gold-on-black']
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.training.data.decks import Deck
from vision.training.data.faces import (CARD_H, CARD_W, FONTS, INK_BL, INK_BR, INK_TL, INK_TR, DrawStyle, Face,
                                   FaceError, _draw_center, _paint, _rounded_alpha, _text_block, draw_pip)

BGR = tuple[int, int, int]
FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
#: Index layouts: rank above pip, rank left of pip, big indices, indices in all four corners.
LAYOUTS = ("over", "beside", "big", "four")
#: Border decorations a palette may draw inside the card edge.
BORDERS = ("none", "line", "double", "stripes", "dots")
#: Font files never used by training designs (the held-out design's font).
HELD_OUT_FONTS = frozenset({"DejaVuSerif-BoldItalic.ttf"})


@dataclass(frozen=True)
class Palette:
    """Card stock and ink colours (BGR) per suit; ``metallic`` adds a sheen to the stock.

    ``held_out=True`` keeps it out of :func:`random_style` (evaluation only).
    """

    name: str
    paper: BGR
    spades: BGR
    hearts: BGR
    diamonds: BGR
    clubs: BGR
    border: BGR = (160, 160, 160)
    metallic: bool = False
    light_on_dark: bool = False
    held_out: bool = False

    def ink(self, card: str) -> BGR:
        """The ink of a card's suit (jokers use the spade ink)."""
        suit = "S" if card == "JOKER" else card[-1]
        return {"S": self.spades, "H": self.hearts, "D": self.diamonds, "C": self.clubs}[suit]


PALETTES: tuple[Palette, ...] = (
    Palette("classic", (250, 250, 250), (25, 25, 25), (30, 30, 200), (30, 30, 200), (25, 25, 25)),
    Palette("cream", (215, 240, 248), (40, 30, 20), (40, 40, 170), (40, 40, 170), (40, 30, 20)),
    Palette("four-colour", (248, 248, 248), (20, 20, 20), (30, 30, 210), (200, 90, 20), (40, 140, 30)),
    Palette("pastel-four", (240, 245, 250), (70, 50, 40), (90, 80, 220), (210, 140, 60), (80, 160, 70)),
    Palette("white-on-navy", (70, 30, 20), (245, 245, 245), (150, 150, 255), (150, 150, 255),
            (245, 245, 245), (200, 200, 200), light_on_dark=True),
    Palette("silver-on-green", (30, 60, 20), (215, 215, 210), (170, 190, 250), (170, 190, 250),
            (215, 215, 210), (180, 180, 180), light_on_dark=True),
    Palette("white-on-red", (30, 30, 150), (250, 250, 250), (200, 230, 255), (200, 230, 255),
            (250, 250, 250), (230, 230, 230), light_on_dark=True),
    Palette("neon-on-black", (25, 20, 20), (240, 240, 80), (140, 80, 255), (80, 255, 255),
            (120, 255, 120), (200, 200, 200), light_on_dark=True),
    Palette("metallic-silver", (200, 200, 195), (30, 30, 30), (40, 30, 160), (40, 30, 160),
            (30, 30, 30), (120, 120, 120), metallic=True),
    Palette("metallic-gold", (90, 180, 215), (20, 25, 40), (30, 20, 140), (30, 20, 140), (20, 25, 40),
            (40, 110, 150), metallic=True),
    Palette("bronze-on-brown", (25, 45, 70), (110, 170, 220), (120, 150, 240), (120, 150, 240),
            (110, 170, 220), (90, 140, 190), metallic=True, light_on_dark=True),
    Palette("gold-on-black", (18, 18, 18), (80, 175, 212), (60, 140, 230), (60, 140, 230),
            (80, 175, 212), (70, 160, 200), metallic=True, light_on_dark=True, held_out=True),
)


def palette(name: str) -> Palette:
    """The palette called ``name`` (``palette("gold-on-black").held_out`` is True)."""
    for p in PALETTES:
        if p.name == name:
            return p
    raise FaceError(f"unknown palette {name!r}; use one of {', '.join(p.name for p in PALETTES)}")


@lru_cache(maxsize=1)
def font_files() -> tuple[str, ...]:
    """Every TrueType font installed (sorted paths); empty when there is none.

    >>> all(f.endswith(".ttf") for f in font_files())
    True
    """
    found = {str(p) for d in FONT_DIRS if d.is_dir() for p in d.rglob("*.ttf")}
    return tuple(sorted(found))


@dataclass(frozen=True)
class ProceduralStyle:
    """One procedural design: palette, font (a TTF path or ``"hershey:N"``), layout, sizes."""

    palette: Palette
    font: str
    layout: str = "over"
    index_scale: float = 1.0
    thickness: int = 3
    border: str = "line"
    corner_radius: float = 0.05

    @property
    def name(self) -> str:
        font = Path(self.font).stem if not self.font.startswith("hershey") else self.font.replace(":", "")
        return (f"proc-{self.palette.name}-{self.layout}-{font}-s{int(self.index_scale * 100)}"
                f"-{self.border}")

    @property
    def held_out(self) -> bool:
        return self.palette.held_out or Path(self.font).name in HELD_OUT_FONTS


#: Designs kept for evaluation only; name -> style.
HELD_OUT_STYLES: dict[str, ProceduralStyle] = {
    "proc-gold-on-black": ProceduralStyle(
        palette("gold-on-black"), "/usr/share/fonts/truetype/dejavu/DejaVuSerif-BoldItalic.ttf",
        layout="over", index_scale=1.05, border="double"),
}


#: How far (largest BGR channel difference) every colour of a random palette must stay from the held-out
#: palette's matching colour somewhere: a random palette never repeats a held-out one's stock and inks.
HELD_OUT_MARGIN = 60


def _random_colour(rng: np.random.Generator, light: bool) -> BGR:
    """A colour of random hue, light (value 180-255) or dark (value 10-90)."""
    hue, sat = int(rng.integers(0, 180)), int(rng.integers(0, 256))
    value = int(rng.integers(180, 256)) if light else int(rng.integers(10, 91))
    b, g, r = cv2.cvtColor(np.array([[[hue, sat, value]]], np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def random_palette(rng: np.random.Generator) -> Palette:
    """A palette drawn at random: card stock and inks of any hue, light on dark or dark on light, the
    suits inked in one colour, two or four, so that a suit can only be told by its shape.

    Never within :data:`HELD_OUT_MARGIN` of a held-out palette in every colour.

    >>> p = random_palette(np.random.default_rng(5))
    >>> p.name.startswith("random-") and not p.held_out
    True
    """
    held = [q for q in PALETTES if q.held_out]
    while True:
        dark_stock = bool(rng.random() < 0.5)
        stock = _random_colour(rng, light=not dark_stock)
        inks = [_random_colour(rng, light=dark_stock) for _ in range(4)]
        colours = int(rng.choice([1, 2, 4], p=[0.3, 0.5, 0.2]))
        spades, hearts, diamonds, clubs = (
            [inks[0]] * 4 if colours == 1 else
            [inks[0], inks[1], inks[1], inks[0]] if colours == 2 else inks)
        border = _random_colour(rng, light=dark_stock)
        tag = zlib.crc32(repr((stock, inks, colours, border)).encode()) % 100000
        candidate = Palette(f"random-{colours}ink-{tag:05d}", stock, spades, hearts, diamonds, clubs, border,
                            light_on_dark=dark_stock)
        near = [all(max(abs(a - b) for a, b in zip(mine, theirs)) < HELD_OUT_MARGIN
                    for mine, theirs in zip((stock, spades, hearts, diamonds, clubs),
                                            (q.paper, q.spades, q.hearts, q.diamonds, q.clubs))) for q in held]
        if not any(near):
            return candidate


def random_style(rng: np.random.Generator, random_palettes: float = 0.0) -> ProceduralStyle:
    """A training design: never a held-out palette or font (see the module doc).

    ``random_palettes`` is the share of designs whose palette is drawn by :func:`random_palette`
    instead of taken from :data:`PALETTES` (0, the default, draws the same designs as before).
    """
    palettes = [p for p in PALETTES if not p.held_out]
    fonts = [f for f in font_files() if Path(f).name not in HELD_OUT_FONTS]
    fonts += [f"hershey:{i}" for i in range(len(FONTS))]
    layout = LAYOUTS[int(rng.choice(len(LAYOUTS), p=[0.45, 0.2, 0.2, 0.15]))]
    scale = float(rng.uniform(1.4, 1.9) if layout == "big" else rng.uniform(0.8, 1.2))
    style = ProceduralStyle(palettes[int(rng.integers(len(palettes)))], fonts[int(rng.integers(len(fonts)))],
                            layout, round(scale, 2), int(rng.integers(2, 6)),
                            BORDERS[int(rng.integers(len(BORDERS)))], float(rng.uniform(0.02, 0.09)))
    if random_palettes and rng.random() < random_palettes:
        style = replace(style, palette=random_palette(rng))
    return style


@lru_cache(maxsize=64)
def _ttf(path: str, px: int):
    from PIL import ImageFont
    return ImageFont.truetype(path, px)


def glyph(text: str, style: ProceduralStyle, height: int) -> np.ndarray:
    """Coverage mask (uint8) of ``text`` in the style's font, cropped tight, ``height`` px tall."""
    return text_mask(text, style.font, height, style.thickness)


def text_mask(text: str, font_name: str, height: int, thickness: int = 3) -> np.ndarray:
    """Coverage mask (uint8) of ``text`` in ``font_name`` (a TTF path, or ``"hershey:N"``, the
    fallback for a missing file), cropped tight, ``height`` px tall.

    >>> text_mask("AB", "hershey:0", 20).shape[0]
    20
    """
    if font_name.startswith("hershey") or not Path(font_name).is_file():
        n = int(font_name.split(":")[1]) if font_name.startswith("hershey:") else 0
        return _text_block(text, DrawStyle(font=n, thickness=thickness), height, (255, 255, 255))
    from PIL import Image, ImageDraw
    font = _ttf(font_name, 96)
    x0, y0, x1, y1 = font.getbbox(text)
    canvas = Image.new("L", (x1 - x0 + 8, y1 - y0 + 8), 0)
    ImageDraw.Draw(canvas).text((4 - x0, 4 - y0), text, fill=255, font=font)
    mask = np.asarray(canvas)
    ys, xs = np.nonzero(mask > 20)
    mask = mask[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    return cv2.resize(mask, (max(1, int(mask.shape[1] * height / mask.shape[0])), height),
                      interpolation=cv2.INTER_AREA)


def _pip_mask(suit: str, px: int) -> np.ndarray:
    pip = np.zeros((px + 4, px + 4), np.uint8)
    draw_pip(pip, suit, ((px + 4) / 2, (px + 4) / 2), px, (255, 255, 255))
    return pip


def _stack(parts: list[np.ndarray], gap: int, horizontal: bool) -> np.ndarray:
    if horizontal:
        h = max(p.shape[0] for p in parts)
        out = np.zeros((h, sum(p.shape[1] for p in parts) + gap * (len(parts) - 1)), np.uint8)
        x = 0
        for p in parts:
            y = (h - p.shape[0]) // 2
            out[y:y + p.shape[0], x:x + p.shape[1]] = p
            x += p.shape[1] + gap
    else:
        w = max(p.shape[1] for p in parts)
        out = np.zeros((sum(p.shape[0] for p in parts) + gap * (len(parts) - 1), w), np.uint8)
        y = 0
        for p in parts:
            x = (w - p.shape[1]) // 2
            out[y:y + p.shape[0], x:x + p.shape[1]] = p
            y += p.shape[0] + gap
    ys, xs = np.nonzero(out > 40)
    return out[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def index_block(card: str, style: ProceduralStyle) -> np.ndarray:
    """Coverage mask of one corner index in the style's layout (jokers: the word, stacked)."""
    s = style.index_scale * (1.6 if style.layout == "big" and style.index_scale < 1.4 else 1.0)
    if card == "JOKER":
        return _stack([glyph(ch, style, int(20 * s)) for ch in "JOKER"], max(2, int(3 * s)), False)
    rank, suit = card[:-1], card[-1]
    rank_mask = glyph(rank, style, int(42 * s))
    if style.layout == "beside":
        return _stack([rank_mask, _pip_mask(suit, int(30 * s))], int(5 * s), True)
    return _stack([rank_mask, _pip_mask(suit, int(28 * s))], int(6 * s), False)


def _paper(style: ProceduralStyle, rng: np.random.Generator) -> np.ndarray:
    img = np.empty((CARD_H, CARD_W, 3), np.float32)
    img[:] = style.palette.paper
    if style.palette.metallic:
        yy, xx = np.mgrid[0:CARD_H, 0:CARD_W].astype(np.float32)
        a = rng.uniform(0, np.pi)
        band = np.cos((np.cos(a) * xx + np.sin(a) * yy) / rng.uniform(40, 120))
        img *= (1 + 0.12 * band)[..., None]
    return np.clip(img, 0, 255).astype(np.uint8)


def _border(img: np.ndarray, style: ProceduralStyle) -> None:
    c, w, h = style.palette.border, CARD_W, CARD_H
    m = 9
    if style.border == "line":
        cv2.rectangle(img, (m, m), (w - m, h - m), c, 1, cv2.LINE_AA)
    elif style.border == "double":
        cv2.rectangle(img, (m - 3, m - 3), (w - m + 3, h - m + 3), c, 2, cv2.LINE_AA)
        cv2.rectangle(img, (m + 3, m + 3), (w - m - 3, h - m - 3), c, 1, cv2.LINE_AA)
    elif style.border == "stripes":
        band = np.zeros(img.shape[:2], np.uint8)
        for k in range(-h, w + h, 8):
            cv2.line(band, (k, 0), (k + h, h), 255, 2)
        ring = np.zeros(img.shape[:2], np.uint8)
        cv2.rectangle(ring, (0, 0), (w, h), 255, 2 * 7)
        img[(band > 0) & (ring > 0)] = c
    elif style.border == "dots":
        for x in range(6, w, 12):
            for y in (5, h - 6):
                cv2.circle(img, (x, y), 2, c, -1, cv2.LINE_AA)
        for y in range(6, h, 12):
            for x in (5, w - 6):
                cv2.circle(img, (x, y), 2, c, -1, cv2.LINE_AA)


@lru_cache(maxsize=4096)
def procedural_face(card: str, style: ProceduralStyle) -> Face:
    """Draw ``card`` in ``style``; the ink mask is the exact coverage of each index.

    Indices sit top-left and, turned 180 degrees, bottom-right; ``layout="four"`` adds an
    upright one top-right and a turned one bottom-left (the ``tr``/``bl`` boxes).
    """
    if card not in CLASS_NAMES:
        raise FaceError(f"{card!r} is not a card class; use one of {', '.join(CLASS_NAMES[:4])}...")
    w, h = CARD_W, CARD_H
    img = _paper(style, np.random.default_rng(zlib.crc32(style.name.encode())))  # str hash() varies per process
    _border(img, style)
    colour = style.palette.ink(card)
    _draw_center(img, card, DrawStyle(font=0, thickness=style.thickness), colour)
    block = index_block(card, style)
    bh, bw = block.shape
    limit_w, limit_h = int(0.3 * w), int(0.32 * h)
    if bw > limit_w or bh > limit_h:
        f = min(limit_w / bw, limit_h / bh)
        block = cv2.resize(block, (max(1, int(bw * f)), max(1, int(bh * f))), interpolation=cv2.INTER_AREA)
        bh, bw = block.shape
    mx, my = int(0.035 * w) + 5, int(0.03 * h) + 5
    ink = np.zeros((h, w), np.uint8)
    turned = block[::-1, ::-1]
    spots = [(mx, my, block, INK_TL), (w - mx - bw, h - my - bh, turned, INK_BR)]
    if style.layout == "four":
        spots += [(w - mx - bw, my, block, INK_TR), (mx, h - my - bh, turned, INK_BL)]
    boxes = {}
    for x, y, mask, code in spots:
        _paint(img, mask, x, y, colour)
        ink[y:y + bh, x:x + bw][mask > 40] = code
        boxes[code] = (x, y, x + bw, y + bh)
    extra = (("tr", boxes[INK_TR]), ("bl", boxes[INK_BL])) if style.layout == "four" else ()
    img = np.dstack([img, _rounded_alpha(w, h, max(2, int(style.corner_radius * w)))])
    return Face(card, style.name, img, boxes[INK_TL], boxes[INK_BR], ink, extra)


class LazyFaces(Mapping[str, Face]):
    """The 53 faces of a style, drawn when first asked for (a scene needs a handful)."""

    def __init__(self, style: ProceduralStyle, name: str | None = None) -> None:
        self.style = style
        self.name = name

    def __getitem__(self, card: str) -> Face:
        if card not in CLASS_NAMES:
            raise KeyError(card)
        face = procedural_face(card, self.style)
        if self.name is None or face.deck == self.name:
            return face
        return _renamed(face, self.name)

    def __iter__(self) -> Iterator[str]:
        return iter(CLASS_NAMES)

    def __len__(self) -> int:
        return len(CLASS_NAMES)


def procedural_deck(style: ProceduralStyle, name: str | None = None) -> Deck:
    """A :class:`~vision.training.data.decks.Deck` whose faces are drawn on demand (named ``name`` or the style's)."""
    return Deck(name or style.name, LazyFaces(style, name), "AGPL-3.0-or-later (tiplu, procedural)")  # type: ignore[arg-type]


def random_decks(rng: np.random.Generator, count: int, random_palettes: float = 0.0) -> list[Deck]:
    """``count`` fresh training designs."""
    return [procedural_deck(random_style(rng, random_palettes)) for _ in range(count)]


def held_out_decks() -> dict[str, Deck]:
    """The held-out procedural designs by name (evaluation only)."""
    return {name: procedural_deck(style, name) for name, style in HELD_OUT_STYLES.items()}


@lru_cache(maxsize=256)
def _renamed(face: Face, deck: str) -> Face:
    return Face(face.card, deck, face.image, face.index_tl, face.index_br, face.ink, face.extra)
