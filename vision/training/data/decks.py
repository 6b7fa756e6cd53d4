"""Deck designs: SVG decks from Debian packages, rendered once and cached, plus drawn decks.

The SVG decks come from ``kdegames-card-data-kf5`` (``/usr/share/carddecks``) and
``aisleriot`` (``/usr/share/aisleriot/cards``). Each card is exported by element id with
``rsvg-convert --export-id``, cropped to its opaque area and scaled to
:data:`vision.training.data.faces.FACE_WIDTH`; the corner indices are then found on the pixels
(:func:`vision.training.data.faces.face_from_image`). Renders are cached as PNG + JSON under
``data/faces/<deck>/`` (git-ignored), so a deck costs a few seconds once.

Licenses and the decks left out (and why) are listed in ``vision/training/data/DECKS.md``.

>>> names = [d.name for d in SVG_DECKS]
>>> "standard" in names and HOLDOUT_DECK in names
True
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.training.data.faces import (DRAWN_STYLES, FACE_WIDTH, INK_BR, INK_TL, Face, FaceError, draw_face,
                          face_from_image)

CARDDECKS = Path("/usr/share/carddecks")
AISLERIOT = Path("/usr/share/aisleriot/cards")

_RANK_WORDS = {1: "1", 11: "jack", 12: "queen", 13: "king"} | {r: str(r) for r in range(2, 11)}
_SUIT_WORDS = {"S": "spade", "H": "heart", "D": "diamond", "C": "club"}
_RANK_OF = {"A": 1, "J": 11, "Q": 12, "K": 13} | {str(r): r for r in range(2, 11)}


class DeckError(FaceError):
    """A deck name is unknown, or its package is not installed."""


@dataclass(frozen=True)
class SvgDeck:
    """One SVG deck: where it lives, how its element ids are spelled, and its license.

    ``id_format`` is formatted with ``rank`` (1, 2..10, jack, queen, king) and ``suit``
    (spade, heart, diamond, club); ``jokers`` are element ids of printed jokers, if any.
    Example: ``SvgDeck("standard", CARDDECKS / "svg-standard/standard.svgz", "{rank}_{suit}",
    (), "GPL-2+", "kdegames-card-data-kf5")``.
    """

    name: str
    path: Path
    id_format: str
    jokers: tuple[str, ...]
    license: str
    package: str
    four_corners: bool = False
    window: tuple[float, float] = (0.24, 0.45)
    prior_repair: bool = True

    def element_id(self, card: str) -> str:
        rank, suit = _RANK_OF[card[:-1]], card[-1]
        return self.id_format.format(rank=_RANK_WORDS[rank], suit=_SUIT_WORDS[suit])

    @property
    def available(self) -> bool:
        return self.path.exists()

    def cached(self, cache_dir: Path | None = None) -> bool:
        """Rendered into the face cache already, so usable without its package (a carried ``data/faces``)."""
        return ((cache_dir or default_cache_dir()) / self.name / "faces.json").is_file()

    def usable(self, cache_dir: Path | None = None) -> bool:
        """Installed with rsvg-convert to render it, or already rendered in the cache."""
        return self.cached(cache_dir) or (self.available and rsvg_available())


def _kde(name: str, folder: str, file: str, license: str, jokers: tuple[str, ...] = (),
         four: bool = False, window: tuple[float, float] = (0.24, 0.45)) -> SvgDeck:
    return SvgDeck(name, CARDDECKS / folder / file, "{rank}_{suit}", jokers, license,
                   "kdegames-card-data-kf5", four, window)


#: The SVG decks that render well (see vision/training/data/DECKS.md for the ones left out).
SVG_DECKS: tuple[SvgDeck, ...] = (
    _kde("standard", "svg-standard", "standard.svgz", "GPL-2+"),
    SvgDeck("ancient-egyptians", CARDDECKS / "svg-ancient-egyptians" / "Ancient_Egyptians.svgz",
            "{rank}_{suit}", (), "GPL-2+", "kdegames-card-data-kf5", prior_repair=False),
    _kde("dondorf", "svg-dondorf", "dondorf.svgz", "GPL-2+", four=True),
    _kde("gm-paris", "svg-gm-paris", "paris.svgz", "GPL-2+"),
    _kde("jolly-royal", "svg-jolly-royal", "jolly-royal.svgz", "GPL-2+"),
    _kde("nicu-ornamental", "svg-nicu-ornamental", "ornamental.svgz", "GPL-2+",
         ("black_joker", "red_joker"), window=(0.3, 0.45)),
    _kde("nicu-white", "svg-nicu-white", "white.svgz", "GPL-2+", ("black_joker", "red_joker"),
         window=(0.3, 0.45)),
    _kde("penguins", "svg-penguins", "penguins.svgz", "GPL-3+ (Tux notice)"),
    SvgDeck("aisleriot-bonded", AISLERIOT / "bonded.svgz", "{suit}_{rank}", (), "GPL-3+",
            "aisleriot", four_corners=True),
)

#: Decks excluded after looking at their contact sheets; name -> reason (also in DECKS.md).
EXCLUDED: dict[str, str] = {
    "xskat-german": "German suits (hearts, bells, leaves, acorns): not French-suited cards",
    "konqi-modern": "cards are embedded 72x96 bitmaps (too coarse), and rsvg-convert cannot "
                    "export them ('has no dimensions')",
    "oxygen": "rank at the top-right and suit pip at the bottom-left: no rank + pip corner index",
    "oxygen-air": "same layout as oxygen (rank and pip in different corners)",
    "oxygen-white": "same layout as oxygen (rank and pip in different corners)",
    "tigullio-international": "grey gradient paper and the rank touching the first body pip: the "
                              "index cannot be separated from the picture",
    "xskat-french": "cards are embedded bitmaps; rsvg-convert cannot export them ('no dimensions')",
    "future": "'Future Simple' is a sci-fi design with no rank + pip corner index",
}

#: The design kept out of training so a test set of an unseen design can be made.
HOLDOUT_DECK = "nicu-white"
#: Decks that share glyphs: holding one out keeps its siblings out of training too.
FAMILIES: dict[str, tuple[str, ...]] = {"nicu-white": ("nicu-ornamental",),
                                        "nicu-ornamental": ("nicu-white",)}

_BONDED_RANKS = {1: "1", 11: "jack", 12: "queen", 13: "king"}


def default_cache_dir() -> Path:
    """``$TIPLU_FACES_DIR`` or ``<repo>/data/faces`` (git-ignored)."""
    env = os.environ.get("TIPLU_FACES_DIR")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "data" / "faces"


def svg_deck(name: str) -> SvgDeck:
    for deck in SVG_DECKS:
        if deck.name == name:
            return deck
    raise DeckError(f"unknown deck {name!r}; known decks: {', '.join(d.name for d in SVG_DECKS)}")


def rsvg_available() -> bool:
    return shutil.which("rsvg-convert") is not None


def _rsvg(path: Path, element: str, zoom: float, out: Path) -> np.ndarray:
    cmd = ["rsvg-convert", "--export-id", element, "-z", f"{zoom:.5f}", str(path), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise DeckError(f"rsvg-convert failed for {path.name}#{element}: {proc.stderr.strip()}")
    img = cv2.imread(str(out), cv2.IMREAD_UNCHANGED)
    if img is None or img.ndim != 3 or img.shape[2] != 4:
        raise DeckError(f"{path.name}#{element} rendered no RGBA image")
    return img


def _crop_card(img: np.ndarray) -> np.ndarray:
    ys, xs = np.nonzero(img[..., 3] > 200)
    if len(xs) == 0:
        raise DeckError("the rendered element is empty")
    return img[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def _element_for(deck: SvgDeck, card: str, joker_no: int = 0) -> str | None:
    if card == "JOKER":
        return deck.jokers[joker_no % len(deck.jokers)] if deck.jokers else None
    if deck.id_format == "{suit}_{rank}":
        rank = _RANK_OF[card[:-1]]
        return f"{_SUIT_WORDS[card[-1]]}_{_BONDED_RANKS.get(rank, str(rank))}"
    return deck.element_id(card)


def render_deck(deck: SvgDeck, cache_dir: Path | None = None, *, force: bool = False) -> Path:
    """Render all cards of ``deck`` into ``cache_dir/<name>/`` (PNG per card + ``faces.json``).

    ``faces.json`` maps card -> {"tl": box, "br": box} or {"error": why}. Returns the folder.
    Cards whose index cannot be found are recorded with the error and skipped at load time.
    """
    folder = (cache_dir or default_cache_dir()) / deck.name
    meta_path = folder / "faces.json"
    if meta_path.exists() and not force:
        return folder
    if not deck.available:
        raise DeckError(f"{deck.path} is missing; install the {deck.package} package")
    folder.mkdir(parents=True, exist_ok=True)
    meta: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "deck.svg"
        data = deck.path.read_bytes()
        src.write_bytes(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
        probe = _crop_card(_rsvg(src, _element_for(deck, "AS") or "", 1.0, Path(tmp) / "p.png"))
        zoom = FACE_WIDTH / probe.shape[1]
        for card in CLASS_NAMES:
            element = _element_for(deck, card)
            if element is None:
                continue
            meta[card] = _render_card(deck, src, card, element, zoom, Path(tmp), folder)
        _retry_with_prior(deck, src, zoom, Path(tmp), folder, meta)
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True))
    return folder


def _render_card(deck: SvgDeck, src: Path, card: str, element: str, zoom: float, tmp: Path, folder: Path,
                 prior: tuple[float, float, float, float] | None = None) -> dict:
    """Render one card to ``folder/<card>.png`` and find its index boxes (inside
    ``prior`` when given): the card's ``faces.json`` entry, or ``{"error": why}``."""
    img = _crop_card(_rsvg(src, element, zoom, tmp / "c.png"))
    if abs(img.shape[1] - FACE_WIDTH) > 2:
        img = cv2.resize(img, (FACE_WIDTH, round(img.shape[0] * FACE_WIDTH / img.shape[1])),
                         interpolation=cv2.INTER_AREA)
    img[img[..., 3] <= 200] = 0
    try:
        face = face_from_image(card, deck.name, img, prior, four=deck.four_corners and card != "JOKER",
                               window=deck.window)
    except FaceError as err:
        return {"error": str(err)}
    cv2.imwrite(str(folder / f"{card}.png"), img)
    entry: dict[str, list[Any]] = {"tl": list(map(int, face.index_tl)), "br": list(map(int, face.index_br))}
    if prior is not None:
        entry["prior"] = [round(v, 4) for v in prior]
    return entry


def _prior_box(meta: dict[str, dict], folder: Path) -> tuple[float, float, float, float] | None:
    """Median top-left index box of the deck's number cards, as card fractions, widened 15%."""
    boxes = []
    for card, info in meta.items():
        if "tl" not in info or card[:-1] in ("J", "Q", "K") or card == "JOKER":
            continue
        img = cv2.imread(str(folder / f"{card}.png"), cv2.IMREAD_UNCHANGED)
        if img is None:
            continue
        h, w = img.shape[:2]
        x0, y0, x1, y1 = info["tl"]
        boxes.append((x0 / w, y0 / h, x1 / w, y1 / h))
    if len(boxes) < 8:
        return None
    b = np.array(boxes)
    x0, y0 = np.percentile(b[:, 0], 10), np.percentile(b[:, 1], 10)
    x1, y1 = np.percentile(b[:, 2], 90), np.percentile(b[:, 3], 90)
    mw, mh = (x1 - x0) * 0.15, (y1 - y0) * 0.15
    return (max(0.0, x0 - mw), max(0.0, y0 - mh), x1 + mw, y1 + mh)


def _off_prior(info: dict, prior: tuple[float, float, float, float], folder: Path,
               card: str) -> bool:
    """True when a found top-left index is not where the deck's number cards have theirs
    (its centre outside the prior box, or under a quarter of the prior's area); the
    bottom-right index is checked turned 180 degrees."""
    if card == "JOKER" or "tl" not in info:
        return False
    img = cv2.imread(str(folder / f"{card}.png"), cv2.IMREAD_UNCHANGED)
    if img is None:
        return False
    h, w = img.shape[:2]
    prior_area = (prior[2] - prior[0]) * (prior[3] - prior[1])
    bx0, by0, bx1, by1 = info["br"]
    for x0, y0, x1, y1 in (info["tl"], (w - bx1, h - by1, w - bx0, h - by0)):
        cx, cy = (x0 + x1) / 2 / w, (y0 + y1) / 2 / h
        area = (x1 - x0) * (y1 - y0) / (w * h)
        inside = prior[0] <= cx <= prior[2] and prior[1] <= cy <= prior[3]
        if not inside or area < 0.25 * prior_area:
            return True
    return False


def _retry_with_prior(deck: SvgDeck, src: Path, zoom: float, tmp: Path, folder: Path,
                      meta: dict[str, dict]) -> None:
    prior = _prior_box(meta, folder)
    if prior is None:
        return
    for card in [c for c, v in meta.items() if "error" in v or _off_prior(v, prior, folder, c)]:
        if not deck.prior_repair:
            meta[card] = {"error": "the index runs into the picture; card left out"}
            continue
        meta[card] = _render_card(deck, src, card, _element_for(deck, card) or "", zoom, tmp, folder, prior)


def load_svg_faces(deck: SvgDeck, cache_dir: Path | None = None) -> dict[str, Face]:
    """Faces of an SVG deck from the cache (rendering it first if needed): card -> Face."""
    folder = render_deck(deck, cache_dir)
    meta = json.loads((folder / "faces.json").read_text())
    faces: dict[str, Face] = {}
    for card, info in sorted(meta.items()):
        if "error" in info:
            continue
        img = cv2.imread(str(folder / f"{card}.png"), cv2.IMREAD_UNCHANGED)
        if img is None:
            continue
        prior = tuple(info["prior"]) if "prior" in info else None
        faces[card] = face_from_image(card, deck.name, img, prior,
                                      four=deck.four_corners and card != "JOKER",
                                   window=deck.window)
    return faces


@dataclass(frozen=True, eq=False)
class Deck:
    """A usable design: name -> faces. Cards the design lacks (often the joker) are absent."""

    name: str
    faces: dict[str, Face]
    license: str

    def face(self, card: str) -> Face | None:
        return self.faces.get(card)


def drawn_decks() -> list[Deck]:
    """The OpenCV-drawn designs (always available, no package needed)."""
    return [Deck(st.name, {c: draw_face(c, st) for c in CLASS_NAMES}, "AGPL-3.0-or-later (tiplu)")
            for st in DRAWN_STYLES]


def installed_svg_decks(cache_dir: Path | None = None) -> list[SvgDeck]:
    """SVG decks that can be used (:meth:`SvgDeck.usable`)."""
    return [d for d in SVG_DECKS if d.usable(cache_dir)]


def load_decks(which: str = "train", *, holdout: str = HOLDOUT_DECK,
               cache_dir: Path | None = None, names: Sequence[str] | None = None) -> list[Deck]:
    """The designs for a data split.

    ``which``: ``"train"`` = drawn decks + every installed SVG deck except ``holdout`` and
    its :data:`FAMILIES` siblings;
    ``"holdout"`` = only the ``holdout`` deck; ``"drawn"`` = only drawn decks; ``"svg"`` =
    installed SVG decks except the holdout. ``names`` restricts SVG decks further.
    """
    if which not in ("train", "holdout", "drawn", "svg", "all"):
        raise DeckError(f"unknown deck choice {which!r}; use train, holdout, drawn, svg or all")
    if which == "holdout":
        deck = svg_deck(holdout)
        if not deck.usable(cache_dir):
            raise DeckError(f"holdout deck {holdout!r} needs {deck.package} and rsvg-convert")
        return [Deck(deck.name, load_svg_faces(deck, cache_dir), deck.license)]
    decks: list[Deck] = [] if which == "svg" else drawn_decks()
    if which == "drawn":
        return decks
    for deck in installed_svg_decks(cache_dir):
        held = deck.name == holdout or deck.name in FAMILIES.get(holdout, ())
        if (held and which != "all") or (names and deck.name not in names):
            continue
        decks.append(Deck(deck.name, load_svg_faces(deck, cache_dir), deck.license))
    return decks


def contact_sheet(faces: Iterable[Face], columns: int = 14, width: int = 120) -> np.ndarray:
    """One BGR image with every face (scaled to ``width``), index boxes drawn in green/blue."""
    tiles = []
    for face in faces:
        img = face.image
        a = img[..., 3:4].astype(np.float32) / 255
        bgr = (img[..., :3] * a + np.array((90, 140, 90), np.float32) * (1 - a)).astype(np.uint8)
        bgr[face.ink == INK_TL] = (bgr[face.ink == INK_TL] * 0.5 + np.array((0, 128, 0))).astype(np.uint8)
        bgr[face.ink == INK_BR] = (bgr[face.ink == INK_BR] * 0.5 + np.array((128, 0, 0))).astype(np.uint8)
        for corner, b in face.boxes.items():
            col = (0, 200, 0) if corner == "tl" else (200, 0, 0)
            cv2.rectangle(bgr, (b[0], b[1]), (b[2] - 1, b[3] - 1), col, 2)
        s = width / img.shape[1]
        tile = cv2.resize(bgr, (width, int(img.shape[0] * s)), interpolation=cv2.INTER_AREA)
        tiles.append(tile)
    if not tiles:
        return np.zeros((10, 10, 3), np.uint8)
    th = max(t.shape[0] for t in tiles)
    tiles = [np.pad(t, ((0, th - t.shape[0]), (0, 0), (0, 0))) for t in tiles]
    while len(tiles) % columns:
        tiles.append(np.zeros_like(tiles[0]))
    rows = [np.hstack(tiles[i:i + columns]) for i in range(0, len(tiles), columns)]
    return np.vstack(rows)
