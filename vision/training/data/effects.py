"""Camera effects and table clutter beyond a scene's own lighting: webcams, dim rooms, hands, phones, coins.

:func:`camera_effects` runs after the scene's own lighting, blur and noise
(``scenes._photometric``) and adds, each with some probability: a low-light colour cast
(dark, warm or blue room light with lifted noise), salt-and-pepper noise, and a webcam-like
low-resolution frame (shrunk, sharpened and blown up again). :func:`draw_distractors` paints
things that are not card indices but sit on real tables: hands with fingers, phones, coins.
No box is ever made for them.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> img = np.full((48, 64, 3), 128, np.uint8)
>>> draw_distractors(rng, img, 20.0, count=3); camera_effects(img, rng).shape
(48, 64, 3)
"""

from __future__ import annotations

import cv2
import numpy as np

Rng = np.random.Generator

#: Probability of each camera effect per scene.
EFFECT_P: dict[str, float] = {"low_light": 0.2, "salt_pepper": 0.1, "webcam": 0.2}
_SKIN = ((90, 130, 190), (60, 100, 160), (40, 70, 120), (120, 160, 215), (30, 50, 90))


def low_light(img: np.ndarray, rng: Rng) -> np.ndarray:
    """A dim room: darker, a warm or blue cast, and the sensor noise that comes with gain."""
    cast = np.array([rng.uniform(0.6, 1.0), rng.uniform(0.75, 1.0), rng.uniform(0.8, 1.25)], np.float32)
    if rng.random() < 0.4:
        cast = cast[::-1]
    out = img.astype(np.float32) * rng.uniform(0.35, 0.75) * cast
    out += rng.normal(0, rng.uniform(3, 10), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def salt_and_pepper(img: np.ndarray, rng: Rng, amount: float | None = None) -> np.ndarray:
    """Set ``amount`` (default 0.2-2%) of the pixels to black or white."""
    out = img.copy()
    p = amount if amount is not None else rng.uniform(0.002, 0.02)
    hit = rng.random(img.shape[:2])
    out[hit < p / 2] = 0
    out[(hit >= p / 2) & (hit < p)] = 255
    return out


def webcam(img: np.ndarray, rng: Rng) -> np.ndarray:
    """A low-resolution frame: 25-60% of the size, over-sharpened, scaled back up."""
    h, w = img.shape[:2]
    f = rng.uniform(0.25, 0.6)
    small = cv2.resize(img, (max(8, int(w * f)), max(8, int(h * f))), interpolation=cv2.INTER_AREA)
    if rng.random() < 0.6:
        blur = cv2.GaussianBlur(small, (0, 0), 1.0)
        small = cv2.addWeighted(small, 1.6, blur, -0.6, 0)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR if rng.random() < 0.5 else cv2.INTER_NEAREST)


def camera_effects(img: np.ndarray, rng: Rng) -> np.ndarray:
    """Apply each effect of :data:`EFFECT_P` with its probability (new array)."""
    if rng.random() < EFFECT_P["low_light"]:
        img = low_light(img, rng)
    if rng.random() < EFFECT_P["webcam"]:
        img = webcam(img, rng)
    if rng.random() < EFFECT_P["salt_pepper"]:
        img = salt_and_pepper(img, rng)
    return img


def _hand(rng: Rng, canvas: np.ndarray, card_px: float) -> None:
    h, w = canvas.shape[:2]
    skin = tuple(int(c) for c in np.clip(np.array(_SKIN[int(rng.integers(len(_SKIN)))], np.float32) + rng.normal(0, 12, 3), 0, 255))
    edge = int(rng.integers(4))
    cx = {0: 0.0, 1: float(w)}.get(edge, rng.uniform(0, w))
    cy = {2: 0.0, 3: float(h)}.get(edge, rng.uniform(0, h))
    palm = card_px * rng.uniform(0.8, 1.4)
    ang = rng.uniform(0, 360)
    cv2.ellipse(canvas, (int(cx), int(cy)), (int(palm), int(palm * 0.8)), ang, 0, 360, skin, -1, cv2.LINE_AA)
    towards = np.degrees(np.arctan2(h / 2 - cy, w / 2 - cx))
    for k in range(int(rng.integers(2, 6))):
        a = np.radians(towards + (k - 2) * rng.uniform(10, 20))
        length, width = palm * rng.uniform(0.9, 1.6), max(2, int(palm * rng.uniform(0.18, 0.26)))
        tip = (int(cx + np.cos(a) * length), int(cy + np.sin(a) * length))
        cv2.line(canvas, (int(cx), int(cy)), tip, skin, width, cv2.LINE_AA)
        cv2.circle(canvas, tip, width // 2, skin, -1, cv2.LINE_AA)


def _phone(rng: Rng, canvas: np.ndarray, card_px: float) -> None:
    h, w = canvas.shape[:2]
    size = (float(card_px * rng.uniform(0.9, 1.3)), float(card_px * rng.uniform(1.8, 2.4)))
    centre = (float(rng.uniform(0, w)), float(rng.uniform(0, h)))
    angle = float(rng.uniform(0, 180))
    body = cv2.boxPoints((centre, size, angle)).astype(np.int32)
    cv2.fillPoly(canvas, [body], tuple(int(c) for c in rng.integers(10, 70, 3)), cv2.LINE_AA)
    screen = cv2.boxPoints((centre, (size[0] * 0.88, size[1] * 0.85), angle)).astype(np.int32)
    colour = tuple(int(c) for c in rng.integers(20, 255, 3)) if rng.random() < 0.6 else (15, 15, 15)
    cv2.fillPoly(canvas, [screen], colour, cv2.LINE_AA)


def _coin(rng: Rng, canvas: np.ndarray, card_px: float) -> None:
    h, w = canvas.shape[:2]
    r = max(2, int(card_px * rng.uniform(0.15, 0.3)))
    c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
    metal = np.array([(60, 150, 190), (170, 170, 170), (50, 100, 160)][int(rng.integers(3))], np.float32)
    cv2.circle(canvas, c, r, tuple(int(v) for v in metal), -1, cv2.LINE_AA)
    cv2.circle(canvas, c, max(1, int(r * 0.8)), tuple(int(v) for v in np.clip(metal * 1.2, 0, 255)), 1, cv2.LINE_AA)
    cv2.circle(canvas, (c[0] - r // 3, c[1] - r // 3), max(1, r // 4), (235, 235, 235), -1, cv2.LINE_AA)


DISTRACTORS = {"hand": _hand, "phone": _phone, "coin": _coin}

#: Printed words that lie beside the cards on real tables: laptop, phone and packet brands, labels. None is a
#: card index or JOKER, which the model must keep reading.
WORDS: tuple[str, ...] = ("LENOVO", "Lenovo", "DELL", "hp", "ASUS", "acer", "SAMSUNG", "Redmi", "NOKIA", "vivo",
                          "OPPO", "SONY", "TOSHIBA", "ThinkPad", "CASIO", "Coca-Cola", "Wai Wai", "NCELL", "Ncell",
                          "Made in China", "MODEL", "intel", "Windows", "HUAWEI", "realme", "Xiaomi", "Nepal")


def _word_text(rng: Rng) -> str:
    if rng.random() < 0.7:
        return WORDS[int(rng.integers(len(WORDS)))]
    letters = "ABCDEFGHILMNOPRSTUVWXYZ" if rng.random() < 0.6 else "abcdefghilmnoprstuvwxyz"
    return "".join(letters[int(i)] for i in rng.integers(0, len(letters), int(rng.integers(3, 9))))


def _word(rng: Rng, canvas: np.ndarray, card_px: float) -> None:
    from vision.training.data.procedural import font_files, text_mask

    h, w = canvas.shape[:2]
    fonts = font_files()
    font = fonts[int(rng.integers(len(fonts)))] if fonts and rng.random() < 0.8 else f"hershey:{int(rng.integers(6))}"
    height = max(5, int(card_px * rng.uniform(0.1, 0.45)))
    try:
        text: np.ndarray = text_mask(_word_text(rng), font, height, int(rng.integers(1, 4))).astype(np.float32) / 255
    except (OSError, ValueError):  # a font that cannot draw these letters: none this time
        return
    th, tw = text.shape
    margin = int(th * rng.uniform(0.2, 0.7))
    pad = max(th, tw) // 2 + margin + 2
    text = cv2.copyMakeBorder(text, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    plate = np.zeros_like(text)
    cv2.rectangle(plate, (pad - margin, pad - margin), (pad + tw + margin, pad + th + margin), 1.0, -1)
    mh, mw = text.shape
    turn = cv2.getRotationMatrix2D((mw / 2, mh / 2), float(rng.uniform(0, 360)), 1.0)
    text, plate = cv2.warpAffine(text, turn, (mw, mh)), cv2.warpAffine(plate, turn, (mw, mh))
    x0, y0 = int(rng.uniform(-mw / 2, w - mw / 2)), int(rng.uniform(-mh / 2, h - mh / 2))
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + mw, w), min(y0 + mh, h)
    if xb <= xa or yb <= ya:
        return
    region = canvas[ya:yb, xa:xb].astype(np.float32)
    cut = (slice(ya - y0, yb - y0), slice(xa - x0, xb - x0))
    kind = rng.random()
    if kind < 0.4:  # a sticker: light paper, dark print, what looks most like a card's corner
        region += (rng.uniform(200, 250, 3) - region) * plate[cut][..., None]
    elif kind < 0.7:  # a lid or packet of any colour
        region += (rng.uniform(15, 240, 3) - region) * plate[cut][..., None]
    light = float(region.mean()) >= 128
    ink = (rng.uniform(5, 80, 3) if light else rng.uniform(170, 245, 3)) if rng.random() < 0.8 else rng.uniform(0, 255, 3)
    alpha = text[cut][..., None] * rng.uniform(0.7, 1.0)
    canvas[ya:yb, xa:xb] = np.clip(region * (1 - alpha) + ink * alpha, 0, 255).astype(np.uint8)


def draw_words(rng: Rng, canvas: np.ndarray, card_px: float, count: int | None = None) -> None:
    """Paint ``count`` (default 1-3) printed words (:data:`WORDS`, or random letters) at any angle onto ``canvas``
    (uint8 BGR, in place), some on a light sticker or a plain plate around the word: real photos showed a
    laptop's "Lenovo" sticker read as a JOKER corner.

    >>> img = np.full((60, 80, 3), 128, np.uint8)
    >>> draw_words(np.random.default_rng(1), img, 60.0, count=2); bool((img != 128).any())
    True
    """
    for _ in range(count if count is not None else int(rng.integers(1, 4))):
        _word(rng, canvas, card_px)


def draw_distractors(rng: Rng, canvas: np.ndarray, card_px: float, count: int | None = None) -> None:
    """Paint ``count`` (default 1-4) hands, phones or coins onto ``canvas`` (uint8 BGR, in place)."""
    kinds = list(DISTRACTORS)
    for _ in range(count if count is not None else int(rng.integers(1, 5))):
        DISTRACTORS[kinds[int(rng.integers(len(kinds)))]](rng, canvas, card_px)
