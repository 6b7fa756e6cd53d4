"""Enrolment photos of held-out designs on many tablecloths: the test set of :func:`vision.enrolment.find_cards`.

Why: a family photographs its suit on whatever table it plays on (a striped or floral
cloth, a white one, wood, dark felt), under a lamp or by a window, with the phone a
little tilted. :func:`enrolment_photo` renders such a photo from a design's faces: one
suit's 13 cards laid A to K in rows (5-5-3, 7-6 or 5-4-4), each a little turned and the
rows not straight, a soft shadow under each card, then the whole table tilted as a
hand-held camera sees it, a light gradient, sometimes a glare spot, blur, noise and
JPEG. It returns where each card's outline truly lies, so a test can check that every
card was found, in the right order.

:data:`TABLECLOTHS` adds the cloths of a family's table to the generator's surfaces
(:mod:`vision.training.data.backgrounds`); :data:`TEST_DESIGNS` are the designs kept out of
training (nicu-white and its sibling nicu-ornamental, and the light-ink-on-dark-stock
proc-gold-on-black). :func:`test_set` lists every (design, cloth, seed) of the set and
``bench/bench_enrol.py`` checks them all.

>>> import numpy as np
>>> TABLECLOTHS["stripes"](np.random.default_rng(0), 64, 48).shape
(48, 64, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.enrolment import SUITS, card_names
from vision.training.data.backgrounds import carpet, fractal_noise, speckle, wood
from vision.training.data.faces import Face, with_corner_star

Rng = np.random.Generator
#: The size of a rendered photo (width, height): a phone photo, shrunk.
PHOTO_SIZE = (1280, 960)
#: How the 13 cards may lie, row by row.
ROW_LAYOUTS = ((5, 5, 3), (7, 6), (5, 4, 4))
#: Cards are sized as for a row of at least this many: a jokers photo's few cards as big as a suit photo's.
FEWEST_COLUMNS = 5


def _pastel(rng: Rng) -> np.ndarray:
    return np.array([rng.uniform(150, 235), rng.uniform(120, 200), rng.uniform(200, 250)], np.float32)


def _weave(rng: Rng, w: int, h: int, amount: float) -> np.ndarray:
    fine = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.7) * amount
    return fine[..., None]


def stripes(rng: Rng, w: int, h: int) -> np.ndarray:
    """A striped cloth: pink (or another pastel) and white stripes, a little across the photo."""
    colour, white = _pastel(rng), np.array([245, 245, 248], np.float32) - rng.uniform(0, 15)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(-0.3, 0.3) + (np.pi / 2 if rng.random() < 0.5 else 0)
    period = rng.uniform(25, 70)
    t = ((xx * np.cos(angle) + yy * np.sin(angle)) % period < period * rng.uniform(0.4, 0.6)).astype(np.float32)
    t = cv2.GaussianBlur(t, (0, 0), 1.0)[..., None]
    return np.clip(colour * t + white * (1 - t) + _weave(rng, w, h, 5), 0, 255).astype(np.uint8)


def checks(rng: Rng, w: int, h: int) -> np.ndarray:
    """A gingham cloth: a colour and white crossed, the crossings darker."""
    colour = rng.uniform(40, 200, 3).astype(np.float32)
    white = np.array([240, 240, 240], np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(20, 60)
    a = ((xx % period) < period / 2).astype(np.float32)
    b = ((yy % period) < period / 2).astype(np.float32)
    t = cv2.GaussianBlur((a + b) / 2, (0, 0), 1.0)[..., None]
    return np.clip(white * (1 - t) + colour * t + _weave(rng, w, h, 6), 0, 255).astype(np.uint8)


def floral(rng: Rng, w: int, h: int) -> np.ndarray:
    """A floral print: petals of two or three colours and leaves on a light or dark ground."""
    ground = np.array([rng.uniform(200, 245)] * 3, np.float32) if rng.random() < 0.6 else rng.uniform(20, 90, 3)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = ground.astype(np.uint8)
    petals = [tuple(int(v) for v in rng.uniform(40, 240, 3)) for _ in range(3)]
    leaf = (int(rng.uniform(30, 90)), int(rng.uniform(110, 170)), int(rng.uniform(30, 90)))
    size = rng.uniform(14, 40)
    for _ in range(int(w * h / (size * size * 6))):
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        petal = petals[int(rng.integers(len(petals)))]
        cv2.ellipse(img, (int(cx + size), int(cy)), (int(size * 0.7), int(size * 0.3)), float(rng.uniform(0, 180)),
                    0, 360, leaf, -1, cv2.LINE_AA)
        for k in range(5):
            a = 2 * np.pi * k / 5 + rng.uniform(0, 0.5)
            cv2.circle(img, (int(cx + np.cos(a) * size * 0.45), int(cy + np.sin(a) * size * 0.45)),
                       int(size * 0.35), petal, -1, cv2.LINE_AA)
        cv2.circle(img, (int(cx), int(cy)), int(size * 0.2), (40, 200, 240), -1, cv2.LINE_AA)
    return np.clip(img.astype(np.float32) + _weave(rng, w, h, 5), 0, 255).astype(np.uint8)


def knit(rng: Rng, w: int, h: int) -> np.ndarray:
    """A knitted or crocheted cover: rows of small V stitches with deep shade between them."""
    colour = rng.uniform(60, 230, 3).astype(np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    p = rng.uniform(6, 12)
    v = np.abs(((xx % p) / p) - 0.5) * 2
    row = ((yy + v * p * 0.6) % p) / p
    t = 0.55 + 0.45 * np.sin(row * np.pi) ** 0.7
    shade = (fractal_noise(rng, w, h, octaves=3, base=3) - 0.5) * 0.3
    return np.clip(colour * (t + shade)[..., None] + _weave(rng, w, h, 6), 0, 255).astype(np.uint8)


def dark_felt(rng: Rng, w: int, h: int) -> np.ndarray:
    """A dark felt or velvet: near-black green, blue, wine or grey, with fibre noise."""
    base = np.array([(25, 45, 20), (50, 25, 20), (25, 20, 55), (30, 30, 30)][int(rng.integers(4))], np.float32)
    shade = (fractal_noise(rng, w, h, octaves=3, base=3)[..., None] - 0.5) * rng.uniform(8, 25)
    return np.clip(base + shade + _weave(rng, w, h, 5), 0, 255).astype(np.uint8)


def green_felt(rng: Rng, w: int, h: int) -> np.ndarray:
    """A card table's green felt."""
    base = np.array([rng.uniform(30, 70), rng.uniform(100, 140), rng.uniform(20, 50)], np.float32)
    shade = (fractal_noise(rng, w, h, octaves=3, base=3)[..., None] - 0.5) * rng.uniform(10, 30)
    return np.clip(base + shade + _weave(rng, w, h, 7), 0, 255).astype(np.uint8)


def white_cloth(rng: Rng, w: int, h: int) -> np.ndarray:
    """A white (or cream, when ``rng`` says so) cotton cloth: white cards meet a white table."""
    base = np.array([rng.uniform(225, 250)] * 3, np.float32)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(2.5, 5)
    weave = np.sin(xx * 2 * np.pi / period) * np.sin(yy * 2 * np.pi / period) * rng.uniform(2, 6)
    folds = (fractal_noise(rng, w, h, octaves=3, base=2) - 0.5) * rng.uniform(10, 30)
    return np.clip(base + (weave + folds)[..., None] + _weave(rng, w, h, 3), 0, 255).astype(np.uint8)


def cream_cloth(rng: Rng, w: int, h: int) -> np.ndarray:
    """A cream cloth: the white cloth, yellowed."""
    img = white_cloth(rng, w, h).astype(np.float32)
    return np.clip(img * np.array([0.82, 0.95, 1.0], np.float32), 0, 255).astype(np.uint8)


#: The cloths of the test set, by name (see the module doc); the generator's wood, carpet and stone too.
TABLECLOTHS: dict[str, Callable[[Rng, int, int], np.ndarray]] = {
    "stripes": stripes, "checks": checks, "floral": floral, "knit": knit, "wood": wood,
    "dark-felt": dark_felt, "green-felt": green_felt, "white-cloth": white_cloth, "cream-cloth": cream_cloth,
    "carpet": carpet, "stone": speckle,
}
#: The designs kept out of training, the set's designs.
TEST_DESIGNS = ("nicu-white", "nicu-ornamental", "proc-gold-on-black")


@lru_cache(maxsize=4)
def design_faces(name: str) -> dict[str, Face]:
    """The faces of a held-out design (an SVG deck, or a procedural one), by card name."""
    from vision.training.data.decks import load_svg_faces, svg_deck
    from vision.training.data.procedural import held_out_decks

    procedural = held_out_decks()
    if name in procedural:
        return dict(procedural[name].faces)
    return load_svg_faces(svg_deck(name))


@dataclass(frozen=True)
class EnrolmentPhoto:
    """A rendered suit photo: the BGR image, the suit, and each card's true outline (4 points) A to K."""

    image: np.ndarray
    suit: str
    outlines: tuple[tuple[tuple[float, float], ...], ...]
    design: str = ""
    cloth: str = ""
    seed: int = 0

    @property
    def name(self) -> str:
        return f"{self.design}-{self.cloth}-{self.suit}-{self.seed}"


def _shadowed(canvas: np.ndarray, alpha: np.ndarray, rng: Rng, card_w: float) -> np.ndarray:
    """Darken the table where the cards' soft shadow falls (a lamp above and to one side)."""
    dx, dy = rng.uniform(-0.04, 0.04) * card_w, rng.uniform(0.0, 0.05) * card_w
    moved = cv2.warpAffine(alpha, np.array([[1, 0, dx], [0, 1, dy]], np.float32), (alpha.shape[1], alpha.shape[0]))
    shadow = cv2.GaussianBlur(moved, (0, 0), max(1.0, rng.uniform(0.01, 0.04) * card_w))
    return canvas * (1 - rng.uniform(0.15, 0.45) * shadow[..., None])


def _tilt(rng: Rng, w: int, h: int, strength: float) -> np.ndarray:
    """The homography of a phone held a little off the vertical (the far edge looks shorter)."""
    d = strength * min(w, h)
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    k = rng.uniform(0, d)
    move = [[k, 0], [-k, 0], [0, 0], [0, 0]] if rng.random() < 0.5 else [[0, 0], [0, 0], [-k, 0], [k, 0]]
    dst = src + np.array(move, np.float32) + rng.normal(0, d * 0.15 + 1e-3, (4, 2)).astype(np.float32)
    return cv2.getPerspectiveTransform(src, dst.astype(np.float32))


def _light(img: np.ndarray, rng: Rng, glare: bool) -> np.ndarray:
    """A light gradient across the table, dimmer or brighter overall, and maybe a lamp's glare spot."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, 2 * np.pi)
    gradient = 1 + (np.cos(a) * (xx / w - 0.5) + np.sin(a) * (yy / h - 0.5)) * rng.uniform(0.1, 0.6)
    out = img.astype(np.float32) * (gradient * rng.uniform(0.6, 1.1))[..., None]
    if glare:
        cx, cy, r = rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h, rng.uniform(0.06, 0.15) * w
        out += (np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * r * r)) * rng.uniform(80, 160))[..., None]
    return np.clip(out, 0, 255).astype(np.uint8)


def enrolment_photo(faces: Sequence[Face], cloth: str, rng: Rng, *, size: tuple[int, int] = PHOTO_SIZE,
                    suit: str = "S") -> EnrolmentPhoto:
    """One suit photo of ``faces`` (A to K) on ``cloth`` (a :data:`TABLECLOTHS` name); see the module doc.
    Fewer faces (a jokers photo) lie in one row, each as big as a suit photo's cards."""
    w, h = size
    rows: tuple[int, ...] = ROW_LAYOUTS[int(rng.integers(len(ROW_LAYOUTS)))]
    if len(faces) != sum(rows):  # a jokers photo: one row, the cards as big as a suit's (the phone as high)
        rows = (len(faces),)
    cols = max(max(rows), FEWEST_COLUMNS)
    aspect = faces[0].image.shape[0] / faces[0].image.shape[1]
    card_w = min(0.8 * w / (cols * 1.3), 0.8 * h / (len(rows) * 1.25 * aspect)) * rng.uniform(0.85, 1.0)
    pitch_x, pitch_y = card_w * rng.uniform(1.2, 1.35), card_w * aspect * rng.uniform(1.15, 1.3)
    left = (w - pitch_x * (max(rows) - 1)) / 2
    top = (h - pitch_y * (len(rows) - 1)) / 2
    canvas = TABLECLOTHS[cloth](rng, w, h).astype(np.float32)
    cards: np.ndarray = np.zeros((h, w, 3), np.float32)
    alpha_all = np.zeros((h, w), np.float32)
    outlines = []
    k = 0
    row_turn = rng.uniform(-4, 4)
    for r, count in enumerate(rows):
        for c in range(count):
            face = faces[k]
            k += 1
            scale = card_w / face.image.shape[1]
            fh, fw = face.image.shape[:2]
            cx = left + c * pitch_x + rng.uniform(-0.06, 0.06) * card_w
            cy = top + r * pitch_y + rng.uniform(-0.08, 0.08) * card_w + c * np.tan(np.radians(row_turn)) * pitch_x
            turn = cv2.getRotationMatrix2D((fw / 2, fh / 2), float(rng.uniform(-10, 10)), scale)
            turn[:, 2] += (cx - fw / 2, cy - fh / 2)
            laid = cv2.warpAffine(face.image, turn, (w, h), flags=cv2.INTER_AREA, borderValue=(0, 0, 0, 0))
            alpha = laid[:, :, 3].astype(np.float32) / 255
            cards = cards * (1 - alpha[..., None]) + laid[:, :, :3] * alpha[..., None]
            alpha_all = np.maximum(alpha_all, alpha)
            corners = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
            outlines.append(cv2.transform(corners[None], turn)[0])
    canvas = _shadowed(canvas, alpha_all, rng, card_w)
    laid_photo = canvas * (1 - alpha_all[..., None]) + cards * alpha_all[..., None]
    tilt = _tilt(rng, w, h, rng.uniform(0.02, 0.1))
    photo = cv2.warpPerspective(np.clip(laid_photo, 0, 255).astype(np.uint8), tilt, (w, h), borderMode=cv2.BORDER_REFLECT)
    photo = _light(photo, rng, glare=rng.random() < 0.4)
    if rng.random() < 0.5:
        photo = cv2.GaussianBlur(photo, (0, 0), float(rng.uniform(0.5, 1.3)))
    photo = np.clip(photo.astype(np.float32) + rng.normal(0, rng.uniform(1, 5), photo.shape), 0, 255).astype(np.uint8)
    _, jpeg = cv2.imencode(".jpg", photo, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 93))])
    photo = np.asarray(cv2.imdecode(jpeg, cv2.IMREAD_COLOR))
    true = tuple(tuple((float(x), float(y)) for x, y in cv2.perspectiveTransform(o[None], tilt)[0]) for o in outlines)
    return EnrolmentPhoto(photo, suit, true)


def design_photo(design: str, cloth: str, seed: int, suit: str = "H",
                 size: tuple[int, int] = PHOTO_SIZE) -> EnrolmentPhoto:
    """The suit photo of ``design`` on ``cloth`` drawn from ``seed`` (the same arguments give the same photo)."""
    faces = design_faces(design)
    rng = np.random.default_rng([seed, sum(map(ord, design)), sum(map(ord, cloth)), ord(suit)])
    shot = enrolment_photo([faces[name] for name in card_names(suit)], cloth, rng, size=size, suit=suit)
    return EnrolmentPhoto(shot.image, suit, shot.outlines, design, cloth, seed)


def jokers_photo(design: str, cloth: str, seed: int, count: int = 2, size: tuple[int, int] = PHOTO_SIZE
                 ) -> EnrolmentPhoto:
    """A jokers photo of ``design`` on ``cloth``: ``count`` of its joker in a row, its corner indices painted out
    and a star in each corner instead (:func:`~vision.training.data.faces.with_corner_star`), the hardest joker
    to find: no index for the corner detector (its ``suit`` is ``"jokers"``)."""
    joker = with_corner_star(design_faces(design)["JOKER"])
    rng = np.random.default_rng([seed, sum(map(ord, design)), sum(map(ord, cloth)), count])
    shot = enrolment_photo([joker] * count, cloth, rng, size=size, suit="jokers")
    return EnrolmentPhoto(shot.image, shot.suit, shot.outlines, design, cloth, seed)


def write_design_photos(design: str, cloth: str, seed: int, folder: Path, joker: Face | None = None,
                        quality: int = 90) -> list[Path]:
    """The design's four suit photos on ``cloth`` (:func:`design_photo`, ``seed``) as a family hands them to
    ``tiplu enrol``: ``spades.jpg`` ... ``clubs.jpg`` in ``folder`` (JPEG ``quality``), then, with a ``joker``
    face, ``jokers.jpg`` (:func:`vision.training.fit.enrol.write_enrolment_photos`); the paths in that order."""
    from vision.training.fit.enrol import write_enrolment_photos

    shots = [(suit, design_photo(design, cloth, seed, suit).image, None) for suit in SUITS]
    return write_enrolment_photos(folder, shots, joker, quality)


def test_set(designs: Sequence[str] = TEST_DESIGNS, cloths: Sequence[str] = tuple(TABLECLOTHS),
             seeds: Sequence[int] = (0,), suits: str = "SHDC") -> Iterator[tuple[str, str, int, str]]:
    """Every (design, cloth, seed, suit) of the test set: each design on each cloth, one photo a seed and suit
    (every suit by default)."""
    for design in designs:
        for cloth in cloths:
            for seed in seeds:
                for suit in suits:
                    yield design, cloth, seed, suit


def found_right(found: Sequence[Sequence[Sequence[float]]], photo: EnrolmentPhoto, tolerance: float = 0.25) -> bool:
    """Whether ``found`` outlines are the photo's 13 cards in order: each centre within ``tolerance`` card
    widths of the true one."""
    if len(found) != len(photo.outlines):
        return False
    for mine, true in zip(found, photo.outlines):
        t = np.asarray(true)
        width = float(np.linalg.norm(t[1] - t[0]))
        if np.linalg.norm(np.mean(mine, axis=0) - t.mean(axis=0)) > tolerance * width:
            return False
    return True
