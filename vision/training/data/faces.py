"""Card faces: the common :class:`Face` record, corner-index finding, and faces drawn with OpenCV.

Every card design the generator uses (SVG decks rendered by :mod:`vision.training.data.decks`, or the
faces drawn here) becomes a :class:`Face`: a BGRA image of the card plus the two corner
indices (rank glyph + small suit pip) as tight boxes and an ink mask. The scene renderer
warps the mask with the card, so it knows which index pixels stay visible.

The drawn faces need no Debian package, so tests and CI always have a design to use:

>>> from scorer import CLASS_NAMES
>>> face = draw_face("10H", style=DrawStyle(font=0))
>>> face.image.shape[2], face.index_tl[0] < face.index_tl[2]
(4, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator

import cv2
import numpy as np

from scorer import CLASS_NAMES, TipluError

#: Width in pixels at which every face is stored (the scene renderer scales down from here).
FACE_WIDTH = 300
#: Ink codes in :attr:`Face.ink`.
INK_TL, INK_BR, INK_TR, INK_BL = 1, 2, 3, 4
#: Corner name -> ink code. Most decks print two indices (tl, br); some print four.
CORNER_CODES: dict[str, int] = {"tl": INK_TL, "br": INK_BR, "tr": INK_TR, "bl": INK_BL}

Box = tuple[int, int, int, int]


class FaceError(TipluError):
    """A card face could not be made (unknown card name, empty render, no index found)."""


@dataclass(frozen=True, eq=False)
class Face:
    """One card's picture and where its two corner indices are.

    ``image`` is HxWx4 BGRA (alpha is the card shape), ``index_tl`` / ``index_br`` are
    ``(x0, y0, x1, y1)`` boxes (x1, y1 exclusive) in image pixels, and ``ink`` is an HxW
    uint8 mask holding :data:`INK_TL` / :data:`INK_BR` on the index glyph pixels.

    Example: ``Face("QS", "drawn-0", img, (6, 8, 40, 90), (260, 330, 294, 412), ink)``.
    """

    card: str
    deck: str
    image: np.ndarray
    index_tl: Box
    index_br: Box
    ink: np.ndarray
    extra: tuple[tuple[str, Box], ...] = ()
    _levels: dict[int, "Face"] = field(default_factory=dict, repr=False, compare=False)
    _pip: list[np.ndarray] = field(default_factory=list, repr=False, compare=False)

    @property
    def boxes(self) -> dict[str, Box]:
        """Corner name ("tl", "br", and "tr"/"bl" on four-index decks) -> index box."""
        return {"tl": self.index_tl, "br": self.index_br} | dict(self.extra)

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.image.shape[1], self.image.shape[0]

    def pip_mask(self) -> np.ndarray:
        """Bool HxW: the suit-pip part of every corner index (the rest of the ink is the rank).

        Used to measure how much of the rank and of the pip stay visible under overlaps.
        The index is split at the widest blank band across its reading direction (rank
        above pip for upright corners, below for turned ones); jokers have no pip.
        """
        if not self._pip:
            mask = np.zeros(self.ink.shape, bool)
            if self.card != "JOKER":
                for corner, box in self.boxes.items():
                    mask |= _pip_part(self.ink == CORNER_CODES[corner], box,
                                      upright=corner in ("tl", "tr"))
            self._pip.append(mask)
        return self._pip[0]

    def at_most(self, width: float) -> "Face":
        """This face halved until its width is at most twice ``width`` (a mipmap level).

        Warping a 300 px face down to 40 px with bilinear sampling aliases badly; starting
        from a level at most twice the target size keeps glyph edges smooth.
        """
        level = 0
        w = self.size[0]
        while w > 2 * width and w > 40:
            w //= 2
            level += 1
        if level == 0:
            return self
        if level not in self._levels:
            self._levels[level] = _downscale(self, 2 ** level)
        return self._levels[level]


def _pip_part(ink: np.ndarray, box: Box, upright: bool) -> np.ndarray:
    x0, y0, x1, y1 = box
    rows = np.asarray(ink[y0:y1, x0:x1].any(axis=1))
    n = len(rows)
    best, best_len, run_start = int(n * 0.55), 0, None
    for i in range(int(n * 0.2), int(n * 0.8) + 1):
        blank = i < n and not rows[i]
        if blank and run_start is None:
            run_start = i
        if not blank and run_start is not None:
            if i - run_start > best_len:
                best, best_len = (run_start + i) // 2, i - run_start
            run_start = None
    split = y0 + best if upright else y1 - (n - best)
    out = np.zeros(ink.shape, bool)
    if upright:
        out[split:y1, x0:x1] = ink[split:y1, x0:x1]
    else:
        out[y0:split, x0:x1] = ink[y0:split, x0:x1]
    return out


def _downscale(face: Face, factor: int) -> Face:
    w, h = face.size
    nw, nh = max(1, w // factor), max(1, h // factor)
    image = cv2.resize(face.image, (nw, nh), interpolation=cv2.INTER_AREA)
    ink = np.zeros((nh, nw), np.uint8)
    for code in CORNER_CODES.values():
        m = cv2.resize((face.ink == code).astype(np.uint8) * 255, (nw, nh),
                       interpolation=cv2.INTER_AREA)
        ink[m >= 96] = code
    sx, sy = nw / w, nh / h

    def scale(b: Box) -> Box:
        return (int(b[0] * sx), int(b[1] * sy), max(int(b[0] * sx) + 1, int(np.ceil(b[2] * sx))),
                max(int(b[1] * sy) + 1, int(np.ceil(b[3] * sy))))

    return Face(face.card, face.deck, image, scale(face.index_tl), scale(face.index_br), ink,
                tuple((c, scale(b)) for c, b in face.extra))


# --------------------------------------------------------------------------- index finding

def card_background(image: np.ndarray) -> np.ndarray:
    """Median BGR of a thin ring just inside the card edge: the card's paper colour."""
    h, w = image.shape[:2]
    a = image[..., 3] > 200
    inset = max(2, w // 40)
    ring = np.zeros((h, w), bool)
    ring[inset:inset + 3, w // 3: 2 * w // 3] = True
    ring[h - inset - 3:h - inset, w // 3: 2 * w // 3] = True
    ring &= a
    if not ring.any():
        ring = a
    return np.median(image[..., :3][ring], axis=0)


def ink_mask(image: np.ndarray, threshold: float = 60.0) -> np.ndarray:
    """Pixels of the card that differ clearly from its paper colour (bool HxW)."""
    bg = card_background(image).astype(np.float32)
    diff = np.abs(image[..., :3].astype(np.float32) - bg).sum(axis=2)
    return (diff > threshold) & (image[..., 3] > 200)


def find_corner_index(image: np.ndarray, *, max_w: float = 0.24, max_h: float = 0.45,
                      gap: float = 0.07) -> tuple[Box, np.ndarray]:
    """Find the top-left corner index of a rendered card face.

    Takes the ink components in the top-left window (``max_w`` x ``max_h`` of the card) that
    do not touch the window's inner edges (frames, borders and big pips do), starts from the
    biggest one that begins near the corner (the rank glyph, not a printer's mark) and grows the group by components at most ``gap`` x width away.
    Returns the tight box and the index ink mask (bool, full card size).

    Raises :class:`FaceError` when nothing index-like is there.
    """
    h, w = image.shape[:2]
    ww, wh = int(w * max_w), int(h * max_h)
    ink = ink_mask(image)
    window = ink[:wh, :ww].astype(np.uint8)
    edge = max(2, w // 60)
    window[:edge, :] = 0
    window[:, :edge] = 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(window, connectivity=8)
    comps = []
    for i in range(1, n):
        x, y, cw, ch, area = stats[i]
        if area < max(4, (w // 150) ** 2):
            continue
        if x + cw >= ww - 1 or y + ch >= wh - 1:
            continue
        if cw > 0.2 * w or ch > 0.3 * h or max(cw, ch) < 0.03 * h:
            continue
        comps.append((x, y, x + cw, y + ch, i))
    if not comps:
        raise FaceError("no corner index found in the top-left of the card")
    near = [c for c in comps if c[0] < 0.12 * w and c[1] < 0.12 * h] or comps
    seed = max(near, key=lambda c: (c[2] - c[0]) * (c[3] - c[1]))
    box = list(seed[:4])
    members = {seed[4]}
    g = gap * w
    grown = True
    while grown:
        grown = False
        for x0, y0, x1, y1, i in comps:
            if i in members:
                continue
            dx = max(0, x0 - box[2], box[0] - x1)
            dy = max(0, y0 - box[3], box[1] - y1)
            if dx <= g and dy <= g:
                members.add(i)
                box = [min(box[0], x0), min(box[1], y0), max(box[2], x1), max(box[3], y1)]
                grown = True
    mask = np.zeros((h, w), bool)
    mask[:wh, :ww] = np.isin(labels, list(members))
    return (box[0], box[1], box[2], box[3]), mask


Window = tuple[float, float]


def index_in_prior(image: np.ndarray, prior: tuple[float, float, float, float]
                   ) -> tuple[Box, np.ndarray]:
    """The ink inside ``prior`` (a box in card-width/height fractions): the index of a card
    whose picture reaches into the corner, placed where the deck's other cards have theirs."""
    h, w = image.shape[:2]
    x0, y0 = int(prior[0] * w), int(prior[1] * h)
    x1, y1 = int(np.ceil(prior[2] * w)), int(np.ceil(prior[3] * h))
    ink = ink_mask(image)
    mask = np.zeros((h, w), bool)
    mask[y0:y1, x0:x1] = ink[y0:y1, x0:x1]
    ys, xs = np.nonzero(mask)
    if len(xs) < 4:
        raise FaceError("no ink where this deck's corner index should be")
    return (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1), mask


def face_from_image(card: str, deck: str, image: np.ndarray,
                    prior: tuple[float, float, float, float] | None = None,
                    four: bool = False, window: Window = (0.24, 0.45)) -> Face:
    """Build a :class:`Face` from a BGRA card image by finding both corner indices.

    The bottom-right index is found by running :func:`find_corner_index` on the image
    turned 180 degrees, so decks whose two corners differ slightly still get tight boxes.
    With ``prior`` (fractions of the card, from the deck's other cards) the index is the
    ink inside that box instead, for court cards whose picture touches the index.
    """
    if card not in CLASS_NAMES:
        raise FaceError(f"{card!r} is not a card class; use one of {', '.join(CLASS_NAMES[:4])}...")
    h, w = image.shape[:2]
    if prior is None:
        def find(im: np.ndarray) -> tuple[Box, np.ndarray]:
            return find_corner_index(im, max_w=window[0], max_h=window[1])
    else:
        def find(im: np.ndarray) -> tuple[Box, np.ndarray]:
            return index_in_prior(im, prior)
    tl, tl_mask = find(image)
    rb, rb_mask = find(np.ascontiguousarray(image[::-1, ::-1]))
    br = (w - rb[2], h - rb[3], w - rb[0], h - rb[1])
    ink = np.zeros((h, w), np.uint8)
    ink[tl_mask] = INK_TL
    ink[rb_mask[::-1, ::-1]] = INK_BR
    extra: list[tuple[str, Box]] = []
    if four:
        tr, tr_mask = find(np.ascontiguousarray(image[:, ::-1]))
        bl, bl_mask = find(np.ascontiguousarray(image[::-1]))
        extra = [("tr", (w - tr[2], tr[1], w - tr[0], tr[3])), ("bl", (bl[0], h - bl[3], bl[2], h - bl[1]))]
        ink[tr_mask[:, ::-1]] = INK_TR
        ink[bl_mask[::-1]] = INK_BL
    return Face(card, deck, image, tl, br, ink, tuple(extra))


# --------------------------------------------------------------------------- drawn faces

#: OpenCV Hershey fonts used for drawn ranks (no font files needed).
FONTS: tuple[int, ...] = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX,
                          cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX,
                          cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_COMPLEX_SMALL)


@dataclass(frozen=True)
class DrawStyle:
    """How a drawn deck looks. ``DrawStyle(font=2, paper=(235, 245, 250))`` is a cream deck.

    ``font`` indexes :data:`FONTS`; ``index_scale`` scales the corner index; ``red`` and
    ``black`` are BGR ink colours; ``border`` draws a thin frame; ``italic`` slants glyphs.
    """

    font: int = 0
    thickness: int = 3
    index_scale: float = 1.0
    paper: tuple[int, int, int] = (250, 250, 250)
    red: tuple[int, int, int] = (30, 30, 200)
    black: tuple[int, int, int] = (25, 25, 25)
    border: bool = True
    italic: bool = False
    ten_as_one_zero: bool = True

    @property
    def name(self) -> str:
        return (f"drawn-f{self.font}t{self.thickness}s{int(self.index_scale * 100)}"
                f"{'b' if self.border else ''}{'i' if self.italic else ''}")


#: A fixed set of drawn styles; :func:`drawn_styles` yields them.
DRAWN_STYLES: tuple[DrawStyle, ...] = (
    DrawStyle(font=0, thickness=3),
    DrawStyle(font=1, thickness=3, paper=(238, 246, 250), index_scale=1.1),
    DrawStyle(font=2, thickness=2, border=False, index_scale=0.9),
    DrawStyle(font=3, thickness=3, paper=(244, 244, 240), red=(40, 20, 170)),
    DrawStyle(font=4, thickness=4, index_scale=1.2, black=(60, 40, 10)),
    DrawStyle(font=5, thickness=3, border=False, red=(60, 60, 230)),
    DrawStyle(font=1, thickness=5, index_scale=1.25, paper=(252, 252, 252)),
    DrawStyle(font=3, thickness=2, italic=True, paper=(230, 240, 245), index_scale=0.95),
)

CARD_W, CARD_H = FACE_WIDTH, 420


def drawn_styles() -> Iterator[DrawStyle]:
    """All built-in drawn styles (each is a whole deck design)."""
    yield from DRAWN_STYLES


def draw_pip(img: np.ndarray, suit: str, center: tuple[float, float], size: float,
             color: tuple[int, int, int], upside_down: bool = False) -> None:
    """Draw a suit symbol of height ``size`` centred at ``center`` (antialiased, in place)."""
    cx, cy = center
    s = size / 2
    sh = 4
    f = 1 << sh

    def P(x: float, y: float) -> tuple[int, int]:
        if upside_down:
            y = -y
        return int(round((cx + x * s) * f)), int(round((cy + y * s) * f))

    def R(r: float) -> int:
        return max(1, int(round(r * s * f)))

    aa = cv2.LINE_AA
    if suit == "D":
        pts = np.array([P(0, -1), P(0.72, 0), P(0, 1), P(-0.72, 0)], np.int32)
        cv2.fillPoly(img, [pts], color, aa, sh)
    elif suit == "H":
        cv2.circle(img, P(-0.45, -0.45), R(0.5), color, -1, aa, sh)
        cv2.circle(img, P(0.45, -0.45), R(0.5), color, -1, aa, sh)
        pts = np.array([P(-0.93, -0.3), P(0.93, -0.3), P(0, 0.95)], np.int32)
        cv2.fillPoly(img, [pts], color, aa, sh)
    elif suit == "S":
        cv2.circle(img, P(-0.45, 0.2), R(0.48), color, -1, aa, sh)
        cv2.circle(img, P(0.45, 0.2), R(0.48), color, -1, aa, sh)
        pts = np.array([P(-0.92, 0.08), P(0.92, 0.08), P(0, -1)], np.int32)
        cv2.fillPoly(img, [pts], color, aa, sh)
        stem = np.array([P(0, 0.3), P(0.35, 1), P(-0.35, 1)], np.int32)
        cv2.fillPoly(img, [stem], color, aa, sh)
    elif suit == "C":
        cv2.circle(img, P(0, -0.5), R(0.42), color, -1, aa, sh)
        cv2.circle(img, P(-0.5, 0.15), R(0.42), color, -1, aa, sh)
        cv2.circle(img, P(0.5, 0.15), R(0.42), color, -1, aa, sh)
        stem = np.array([P(0, 0), P(0.33, 1), P(-0.33, 1)], np.int32)
        cv2.fillPoly(img, [stem], color, aa, sh)
    else:
        raise FaceError(f"unknown suit {suit!r}; use S, H, D or C")


_PIP_LAYOUT: dict[int, tuple[tuple[float, float], ...]] = {
    2: ((0.5, 0.2), (0.5, 0.8)),
    3: ((0.5, 0.2), (0.5, 0.5), (0.5, 0.8)),
    4: ((0.3, 0.2), (0.7, 0.2), (0.3, 0.8), (0.7, 0.8)),
    5: ((0.3, 0.2), (0.7, 0.2), (0.5, 0.5), (0.3, 0.8), (0.7, 0.8)),
    6: ((0.3, 0.2), (0.7, 0.2), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)),
    7: ((0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.3, 0.8), (0.7, 0.8)),
    8: ((0.3, 0.2), (0.7, 0.2), (0.5, 0.35), (0.3, 0.5), (0.7, 0.5), (0.5, 0.65), (0.3, 0.8),
        (0.7, 0.8)),
    9: ((0.3, 0.2), (0.7, 0.2), (0.3, 0.4), (0.7, 0.4), (0.5, 0.5), (0.3, 0.6), (0.7, 0.6),
        (0.3, 0.8), (0.7, 0.8)),
    10: ((0.3, 0.2), (0.7, 0.2), (0.5, 0.3), (0.3, 0.4), (0.7, 0.4), (0.3, 0.6), (0.7, 0.6),
         (0.5, 0.7), (0.3, 0.8), (0.7, 0.8)),
}


def _text_block(text: str, style: DrawStyle, height: int, color: tuple[int, int, int]
                ) -> np.ndarray:
    """Render ``text`` with a Hershey font into a tight uint8 coverage mask of ``height`` px."""
    font = FONTS[style.font % len(FONTS)]
    base = 2.0
    (tw, th), bl = cv2.getTextSize(text, font, base, style.thickness * 2)
    canvas: np.ndarray = np.zeros((th + bl + 20, tw + 20), np.uint8)
    cv2.putText(canvas, text, (10, th + 10), font, base, 255, style.thickness * 2, cv2.LINE_AA)
    ys, xs = np.nonzero(canvas)
    canvas = canvas[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    if style.italic:
        ch, cw = canvas.shape
        shear = 0.2 * ch
        m = np.array([[1, -0.2, shear], [0, 1, 0]], np.float32)
        canvas = cv2.warpAffine(canvas, m, (cw + int(shear) + 1, ch))
    scale = height / canvas.shape[0]
    return cv2.resize(canvas, (max(1, int(canvas.shape[1] * scale)), height),
                      interpolation=cv2.INTER_AREA)


def _index_block(card: str, style: DrawStyle, color: tuple[int, int, int]) -> np.ndarray:
    """Coverage mask (uint8) of the corner index: rank glyph above a small pip."""
    s = style.index_scale
    if card == "JOKER":
        letters = [_text_block(ch, style, int(22 * s), color) for ch in "JOKER"]
        bw = max(m.shape[1] for m in letters)
        gap = max(2, int(3 * s))
        block = np.zeros((sum(m.shape[0] + gap for m in letters), bw), np.uint8)
        y = 0
        for m in letters:
            x = (bw - m.shape[1]) // 2
            block[y:y + m.shape[0], x:x + m.shape[1]] = m
            y += m.shape[0] + gap
        return block[:y - gap]
    rank, suit = card[:-1], card[-1]
    glyph = _text_block(rank, style, int(44 * s), color)
    if rank == "10" and not style.ten_as_one_zero:
        glyph = cv2.resize(glyph, (int(glyph.shape[1] * 0.75), glyph.shape[0]))
    pip_h = int(30 * s)
    pip = np.zeros((pip_h + 4, pip_h + 4), np.uint8)
    draw_pip(pip, suit, ((pip_h + 4) / 2, (pip_h + 4) / 2), pip_h, (255, 255, 255))
    pip = pip if pip.ndim == 2 else pip[..., 0]
    gap = int(6 * s)
    bw = max(glyph.shape[1], pip.shape[1])
    block = np.zeros((glyph.shape[0] + gap + pip.shape[0], bw), np.uint8)
    block[:glyph.shape[0], (bw - glyph.shape[1]) // 2:(bw - glyph.shape[1]) // 2 + glyph.shape[1]] = glyph
    y = glyph.shape[0] + gap
    block[y:y + pip.shape[0], (bw - pip.shape[1]) // 2:(bw - pip.shape[1]) // 2 + pip.shape[1]] = pip
    ys, xs = np.nonzero(block > 40)
    return block[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def _paint(img: np.ndarray, cover: np.ndarray, x: int, y: int, color: tuple[int, int, int]) -> None:
    h, w = cover.shape
    a = cover.astype(np.float32)[..., None] / 255.0
    roi = img[y:y + h, x:x + w, :3].astype(np.float32)
    img[y:y + h, x:x + w, :3] = (roi * (1 - a) + np.array(color, np.float32) * a).astype(np.uint8)


def _rounded_alpha(w: int, h: int, r: int) -> np.ndarray:
    a = np.zeros((h, w), np.uint8)
    cv2.rectangle(a, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(a, (0, r), (w - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(a, (cx, cy), r, 255, -1, cv2.LINE_AA)
    return a


def _star(x: float, y: float, radius: float) -> np.ndarray:
    """A five-pointed star about (x, y), its inner points at 0.4 ``radius``, as points for ``cv2.fillPoly``
    with 4 fractional bits.

    >>> _star(10, 10, 5)[0].tolist()
    [160, 80]
    """
    turns = -np.pi / 2 + np.arange(10) * np.pi / 5
    reach = np.where(np.arange(10) % 2 == 0, radius, 0.4 * radius)
    return (np.stack([x + reach * np.cos(turns), y + reach * np.sin(turns)], -1) * 16).astype(np.int32)


def with_corner_star(face: Face, colour: tuple[int, int, int] = (30, 30, 200)) -> Face:
    """``face`` with its corner indices painted out (in the colours about them) and a small star in each corner
    instead: the joker of a deck that prints no rank index on it, as many decks do. The star is the face's
    new index (its box and ink), where a rank index would begin.

    >>> star = with_corner_star(draw_face("JOKER"))
    >>> star.index_tl[0] < star.index_tl[2] < 0.2 * star.size[0], int((star.ink == INK_TL).sum()) > 50
    (True, True)
    """
    image, (h, w) = face.image.copy(), face.image.shape[:2]
    index = cv2.dilate((face.ink > 0).astype(np.uint8), np.ones((5, 5), np.uint8), iterations=2)
    image[..., :3] = cv2.inpaint(np.ascontiguousarray(image[..., :3]), index, 5, cv2.INPAINT_TELEA)
    ink = np.zeros((h, w), np.uint8)
    boxes = []
    for (x0, y0, x1, y1), code, turned in ((face.index_tl, INK_TL, False), (face.index_br, INK_BR, True)):
        radius = 0.06 * w
        x, y = (x1 - radius, y1 - radius) if turned else (x0 + radius, y0 + radius)
        mark = np.zeros((h, w), np.uint8)
        cv2.fillPoly(mark, [_star(x, y, radius)], 1, cv2.LINE_8, 4)
        image[mark > 0, :3] = colour
        ink[mark > 0] = code
        ys, xs = np.nonzero(mark)
        boxes.append((int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1))
    return Face(face.card, f"{face.deck}-star", image, boxes[0], boxes[1], ink)


def _draw_center(img: np.ndarray, card: str, style: DrawStyle, color: tuple[int, int, int]) -> None:
    w, h = CARD_W, CARD_H
    x0, y0, x1, y1 = int(0.2 * w), int(0.12 * h), int(0.8 * w), int(0.88 * h)
    if card == "JOKER":
        cv2.rectangle(img, (x0, y0), (x1, y1), (40, 120, 200), 3, cv2.LINE_AA)
        cv2.fillPoly(img, [_star(w / 2, h / 2, 0.25 * w)], (30, 30, 200), cv2.LINE_AA, 4)
        m = _text_block("JOKER", style, 28, color)
        _paint(img, m, (w - m.shape[1]) // 2, int(0.72 * h), (20, 20, 20))
        return
    rank, suit = card[:-1], card[-1]
    bw, bh = x1 - x0, y1 - y0
    if rank in ("J", "Q", "K"):
        cv2.rectangle(img, (x0, y0), (x1, y1), color, 2, cv2.LINE_AA)
        cv2.rectangle(img, (x0 + 6, y0 + 6), (x1 - 6, y1 - 6), (40, 140, 210), -1, cv2.LINE_AA)
        big = _text_block(rank, style, int(0.3 * h), color)
        _paint(img, big, (w - big.shape[1]) // 2, int(0.22 * h), color)
        draw_pip(img, suit, (w / 2, 0.68 * h), 0.18 * h, color)
        return
    if rank == "A":
        draw_pip(img, suit, (w / 2, h / 2), 0.3 * h, color)
        return
    for fx, fy in _PIP_LAYOUT[int(rank)]:
        draw_pip(img, suit, (x0 + fx * bw, y0 + fy * bh), 0.14 * h, color, upside_down=fy > 0.55)


@lru_cache(maxsize=1024)
def draw_face(card: str, style: DrawStyle = DrawStyle()) -> Face:
    """Draw ``card`` (a :data:`scorer.CLASS_NAMES` entry) in ``style`` with OpenCV only.

    The index is painted in the top-left and, turned 180 degrees, in the bottom-right;
    its exact coverage becomes the ink mask, so the boxes are known, not estimated.
    """
    if card not in CLASS_NAMES:
        raise FaceError(f"{card!r} is not a card class; use one of {', '.join(CLASS_NAMES[:4])}...")
    w, h = CARD_W, CARD_H
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = style.paper
    is_red = card != "JOKER" and card[-1] in "HD"
    color = style.red if is_red else style.black
    if card == "JOKER":
        color = style.black
    if style.border:
        cv2.rectangle(img, (7, 7), (w - 8, h - 8), (170, 170, 170), 1, cv2.LINE_AA)
    _draw_center(img, card, style, color)
    block = _index_block(card, style, color)
    bh, bw = block.shape
    mx, my = int(0.035 * w) + 4, int(0.03 * h) + 4
    if mx + bw > int(0.2 * w):
        mx = max(4, int(0.2 * w) - bw)
    ink = np.zeros((h, w), np.uint8)
    _paint(img, block, mx, my, color)
    ink[my:my + bh, mx:mx + bw][block > 40] = INK_TL
    rot = block[::-1, ::-1]
    bx, by = w - mx - bw, h - my - bh
    _paint(img, rot, bx, by, color)
    ink[by:by + bh, bx:bx + bw][rot > 40] = INK_BR
    img = np.dstack([img, _rounded_alpha(w, h, int(0.05 * w))])
    return Face(card, style.name, img, (mx, my, mx + bw, my + bh), (bx, by, bx + bw, by + bh), ink)


_BACK_COLOURS = ((150, 40, 30), (40, 30, 160), (40, 110, 40), (30, 30, 30), (120, 60, 120),
                 (20, 90, 170))


@lru_cache(maxsize=64)
def draw_back(variant: int = 0) -> Face:
    """A face-down card (card name ``"BACK"``): a patterned back with a white rim, no index.

    Scenes lay these as distractors (a stock pile, a discarded hand); they occlude cards but
    get no box. ``variant`` picks colour and pattern: ``draw_back(3)``.
    """
    w, h = CARD_W, CARD_H
    colour = _BACK_COLOURS[variant % len(_BACK_COLOURS)]
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = (245, 245, 245)
    m = int(0.06 * w)
    cv2.rectangle(img, (m, m), (w - m, h - m), colour, -1)
    light = tuple(min(255, int(c * 0.5 + 127)) for c in colour)
    kind = (variant // len(_BACK_COLOURS)) % 3
    if kind == 0:
        for k in range(-h, w + h, 14):
            cv2.line(img, (m + k, m), (m + k + h, m + h), light, 2, cv2.LINE_AA)
            cv2.line(img, (m + k, m + h), (m + k + h, m), light, 2, cv2.LINE_AA)
    elif kind == 1:
        for y in range(m + 8, h - m, 18):
            for x in range(m + 8, w - m, 18):
                cv2.circle(img, (x, y), 5, light, -1, cv2.LINE_AA)
    else:
        for r in range(10, w, 16):
            cv2.ellipse(img, (w // 2, h // 2), (r, int(r * 1.4)), 0, 0, 360, light, 2, cv2.LINE_AA)
    img[:m] = img[h - m:] = (245, 245, 245)
    img[:, :m] = img[:, w - m:] = (245, 245, 245)
    cv2.rectangle(img, (m, m), (w - m, h - m), colour, 3, cv2.LINE_AA)
    img = np.dstack([img, _rounded_alpha(w, h, int(0.05 * w))])
    return Face("BACK", f"back-{variant}", img, (0, 0, 0, 0), (0, 0, 0, 0), np.zeros((h, w), np.uint8))
