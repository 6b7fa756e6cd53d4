"""Procedural table surfaces: felt and cloth, wood, carpet, speckled stone, plain colours.

Everything is drawn from a :class:`numpy.random.Generator`, so the same seed gives the same
table. No image files are needed.

>>> import numpy as np
>>> img = make_background(np.random.default_rng(1), 64, 48)
>>> img.shape, img.dtype
((48, 64, 3), dtype('uint8'))
"""

from __future__ import annotations

from typing import Callable

import cv2
import numpy as np

Rng = np.random.Generator


def fractal_noise(rng: Rng, w: int, h: int, *, octaves: int = 4, base: int = 4,
                  persistence: float = 0.55) -> np.ndarray:
    """Smooth value noise in [0, 1] (float32 HxW), summed over ``octaves`` scales."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    cells = base
    for _ in range(octaves):
        gw, gh = max(2, cells), max(2, int(cells * h / max(w, 1)) + 1)
        grid = rng.random((gh, gw), dtype=np.float32)
        out += amp * cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)
        total += amp
        amp *= persistence
        cells *= 2
    out /= total
    lo, hi = float(out.min()), float(out.max())
    return (out - lo) / (hi - lo + 1e-6)


def _colorize(t: np.ndarray, c0: np.ndarray, c1: np.ndarray) -> np.ndarray:
    t = t[..., None]
    return np.clip(c0 * (1 - t) + c1 * t, 0, 255).astype(np.uint8)


def _rand_color(rng: Rng, lo: int = 20, hi: int = 235) -> np.ndarray:
    return rng.integers(lo, hi, 3).astype(np.float32)


def plain(rng: Rng, w: int, h: int) -> np.ndarray:
    """A flat colour with faint low-frequency shading."""
    c = _rand_color(rng)
    n = fractal_noise(rng, w, h, octaves=2, base=2)
    return np.clip(c + (n[..., None] - 0.5) * rng.uniform(5, 30), 0, 255).astype(np.uint8)


def felt(rng: Rng, w: int, h: int) -> np.ndarray:
    """Card-table felt or cotton cloth: a dyed colour with fine fibre noise and a weave."""
    palette = [(40, 110, 30), (90, 60, 20), (30, 30, 140), (60, 60, 60), (110, 40, 90),
               (20, 90, 110), (150, 150, 150), (200, 200, 205)]
    base = np.array(palette[rng.integers(len(palette))], np.float32) + rng.normal(0, 15, 3).astype(np.float32)
    fine = rng.normal(0, 1, (h, w)).astype(np.float32)
    fine = cv2.GaussianBlur(fine, (0, 0), 0.8) * rng.uniform(4, 12)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(2.5, 6)
    weave = (np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period)) * rng.uniform(0, 8)
    shade = (fractal_noise(rng, w, h, octaves=3, base=3) - 0.5) * rng.uniform(10, 40)
    return np.clip(base + (fine + weave + shade)[..., None], 0, 255).astype(np.uint8)


def wood(rng: Rng, w: int, h: int) -> np.ndarray:
    """Wood grain: warped stripes in browns, optionally planks."""
    light = np.array([rng.uniform(90, 170), rng.uniform(130, 200), rng.uniform(170, 235)], np.float32)
    dark = light * rng.uniform(0.45, 0.75)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    warp = fractal_noise(rng, w, h, octaves=3, base=3) * rng.uniform(20, 80)
    freq = rng.uniform(0.03, 0.12)
    angle = rng.uniform(-0.2, 0.2)
    coord = yy * np.cos(angle) + xx * np.sin(angle) + warp
    t = 0.5 + 0.5 * np.sin(coord * freq)
    t = t ** rng.uniform(0.6, 2.0)
    fibre = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), sigmaX=6,
                             sigmaY=0.6)
    t = np.clip(t * 0.8 + fibre * 0.15 + 0.1, 0, 1)
    img = _colorize(t, dark, light)
    if rng.random() < 0.5:
        plank = int(rng.uniform(0.15, 0.4) * h)
        for y in range(int(rng.integers(0, plank)), h, plank):
            cv2.line(img, (0, y), (w, y), tuple(int(v) for v in dark * 0.6), 2, cv2.LINE_AA)
    return img


def carpet(rng: Rng, w: int, h: int) -> np.ndarray:
    """A patterned rug: tiled motifs in two or three colours over a fibre texture."""
    c0, c1, c2 = _rand_color(rng, 30, 200), _rand_color(rng, 30, 220), _rand_color(rng, 30, 240)
    tile = int(rng.uniform(30, 90))
    img = np.empty((h, w, 3), np.uint8)
    img[:] = c0.astype(np.uint8)
    for ty in range(0, h + tile, tile):
        for tx in range(0, w + tile, tile):
            cx, cy = tx + tile // 2, ty + tile // 2
            pts = np.array([(cx, cy - tile // 3), (cx + tile // 3, cy), (cx, cy + tile // 3),
                            (cx - tile // 3, cy)], np.int32)
            cv2.fillPoly(img, [pts], tuple(int(v) for v in c1))
            cv2.circle(img, (cx, cy), max(2, tile // 8), tuple(int(v) for v in c2), -1)
    fibre = rng.normal(0, rng.uniform(8, 20), (h, w)).astype(np.float32)
    out = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.8, 2.0)).astype(np.float32) + fibre[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def speckle(rng: Rng, w: int, h: int) -> np.ndarray:
    """Speckled stone or laminate (a kitchen counter): light base with dark and bright flecks."""
    base = np.array([rng.uniform(150, 245)] * 3, np.float32) + rng.normal(0, 8, 3).astype(np.float32)
    if rng.random() < 0.3:
        base = base * rng.uniform(0.2, 0.5)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base
    img += (fractal_noise(rng, w, h, octaves=4, base=4)[..., None] - 0.5) * rng.uniform(10, 40)
    n = int(w * h * rng.uniform(0.002, 0.02))
    ys, xs = rng.integers(0, h, n), rng.integers(0, w, n)
    img[ys, xs] *= rng.uniform(0.2, 0.7, (n, 1)).astype(np.float32)
    return np.clip(img, 0, 255).astype(np.uint8)


def cloth_pattern(rng: Rng, w: int, h: int) -> np.ndarray:
    """A printed table cloth: checks or stripes, softened."""
    c0, c1 = _rand_color(rng), _rand_color(rng)
    yy, xx = np.mgrid[0:h, 0:w]
    p = int(rng.uniform(12, 60))
    if rng.random() < 0.5:
        t = (((xx // p) + (yy // p)) % 2).astype(np.float32)
    else:
        t = ((xx // p) % 2).astype(np.float32) * rng.uniform(0.4, 1.0)
    img = _colorize(cv2.GaussianBlur(t, (0, 0), 1.0), c0, c1)
    return np.clip(img.astype(np.float32) + rng.normal(0, 6, (h, w, 1)), 0, 255).astype(np.uint8)


BACKGROUNDS: dict[str, Callable[[Rng, int, int], np.ndarray]] = {
    "plain": plain, "felt": felt, "wood": wood, "carpet": carpet, "speckle": speckle,
    "cloth": cloth_pattern,
}
_WEIGHTS = {"plain": 1.0, "felt": 2.0, "wood": 2.0, "carpet": 1.0, "speckle": 1.5, "cloth": 1.0}


def make_background(rng: Rng, w: int, h: int, kind: str | None = None) -> np.ndarray:
    """A ``h`` x ``w`` BGR table surface of ``kind`` (random when None; see :data:`BACKGROUNDS`)."""
    if kind is None:
        names = list(BACKGROUNDS)
        p = np.array([_WEIGHTS[n] for n in names])
        kind = names[int(rng.choice(len(names), p=p / p.sum()))]
    if kind not in BACKGROUNDS:
        raise ValueError(f"unknown background {kind!r}; use one of {', '.join(BACKGROUNDS)}")
    return BACKGROUNDS[kind](rng, w, h)
