"""Teach tiplu a deck: cut the corners of the cards in its suit photos, and learn the design from them.

The cards of the four suit photos are found by :func:`vision.enrolment.find_cards` (the
app checks its uploads with the same function, without this module); each card is then
straightened and its two corner indices cut out as the classifier sees them
(:func:`corner_crops`), labelled by position.

:func:`enrol` learns the design from the four suit photos (and, optionally, one of the
deck's printed jokers): each straightened card becomes a face (:func:`card_face`) that
the classifier's face-crop augmentation (:func:`vision.training.fit.names.face_crops`: turns,
table scales, light, blur, noise, 180 degrees) cuts many times, half of the crops also
through JPEG (:func:`enrolment_crops`); stage 2, rebuilt from the base model's ONNX
(:func:`vision.training.fit.resume.classifier_from_onnx`), is fine-tuned on them, and a
normal ``tiplu-corners-v1`` model folder is written (the base detector copied, the new
classifier, ``model.json`` with an ``"enrolled"`` note). ``tiplu enrol`` runs it.

Where the corner finder (stage 1) misses a design's corners, ``detector_epochs`` also
fine-tunes it, rebuilt from the base ONNX (:func:`~vision.training.fit.resume.detector_from_onnx`),
on whole-table scenes rendered from the enrolled faces (:func:`enrolment_scenes`).

A photo that does not show 13 cards is refused with a message naming the photo and
what was seen (:class:`~vision.enrolment.EnrolError`).
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.detector import (CLASSIFIER_FILE, DETECTOR_FILE, INFO_FILE, MODELS_DIR, SHIPPED_CROP, crop_corner,
                             model_classifiers, model_crop_size, read_model_json)
from vision.enrolment import (CALIBRATION_SCENES, SUIT_NAMES, SUITS, EnrolError, FoundCard, card_names, find_cards,
                              find_jokers, train_extra_message, verify_calibration_scenes)
from vision.training.data.faces import INK_BR, INK_TL, Face
from vision.training.fit.corners import train_corners
from vision.training.fit.export import write_model_folder
from vision.training.fit.names import _augment_pixels, face_crops, train_names
from vision.training.fit.settings import ENROL

#: Share of the straightened card (width, height) that holds the corner index.
INDEX_REGION = (0.2, 0.3)
CARD_PX = (250, 350)
#: Share of the card width cut off each edge when straightening (rounded corners, table).
EDGE_INSET = 0.025
#: How far apart (share of the card width) the rank and the suit pip of one index may lie.
INDEX_GAP = 0.1
#: How much a photographed card is padded for the index finder (see :func:`index_box`).
PAD = 0.2
Box = tuple[float, float, float, float]


def card_transform(outline: Sequence[Sequence[float]]) -> np.ndarray:
    """The perspective matrix from the photo to the card upright at :data:`CARD_PX`
    (portrait; which end is up is unknown, and does not matter: both corners are read)."""
    points = np.asarray(outline, np.float32)
    centre = points.mean(axis=0)
    angles = np.arctan2(points[:, 1] - centre[1], points[:, 0] - centre[0])
    points = points[np.argsort(angles)]  # clockwise from the top-left in image coordinates
    points = np.roll(points, -int(np.argmin(points.sum(axis=1))), axis=0)
    if np.linalg.norm(points[1] - points[0]) > np.linalg.norm(points[3] - points[0]):
        points = np.roll(points, -1, axis=0)  # a card lying sideways: its short side on top
    w, h = CARD_PX
    inset = EDGE_INSET * w  # the outline hugs the card edge: keep the table out of the picture
    target = np.array([[-inset, -inset], [w + inset, -inset], [w + inset, h + inset], [-inset, h + inset]], np.float32)
    return cv2.getPerspectiveTransform(points, target)


def straighten(image_bgr: np.ndarray, outline: Sequence[Sequence[float]]) -> np.ndarray:
    """The card warped upright to :data:`CARD_PX` (see :func:`card_transform`)."""
    return cv2.warpPerspective(image_bgr, card_transform(outline), CARD_PX)


def index_box(card: np.ndarray) -> tuple[float, float, float, float]:
    """The top-left corner index (rank and suit pip) of a straightened card.

    The face renderer's finder (:func:`vision.training.data.faces.find_corner_index`) does it
    on printed faces, where an index glyph is at most a fifth of the card wide; a
    photographed card's ink is fatter (camera blur), so the card is padded right and
    below by :data:`PAD` (its own edge repeated) to keep the glyphs within those bounds.
    Where it finds nothing, the usual place of an index (:data:`INDEX_REGION`).
    """
    from vision.training.data.faces import FaceError, find_corner_index

    h, w = card.shape[:2]
    padded = cv2.copyMakeBorder(card, 0, int(PAD * h), 0, int(PAD * w), cv2.BORDER_REPLICATE)
    try:
        box, _ = find_corner_index(np.dstack([padded, np.full(padded.shape[:2], 255, np.uint8)]), gap=INDEX_GAP)
        return float(box[0]), float(box[1]), float(min(box[2], w)), float(min(box[3], h))
    except FaceError:
        return 0.03 * w, 0.03 * h, INDEX_REGION[0] * w, INDEX_REGION[1] * h


def card_index_boxes(card: np.ndarray) -> tuple[Box, Box]:
    """The top-left and bottom-right corner indices of a straightened card, in its pixels."""
    h, w = card.shape[:2]
    top = index_box(card)
    x2, y2, x3, y3 = index_box(np.ascontiguousarray(card[::-1, ::-1]))
    return top, (w - x3, h - y3, w - x2, h - y2)


def index_boxes(image_bgr: np.ndarray, outline: Sequence[Sequence[float]]) -> list[Box]:
    """The card's two corner indices as boxes in photo pixels (x1, y1, x2, y2): the labels
    a detector is fine-tuned on, and where :func:`vision.detector.crop_corner` cuts them."""
    matrix = card_transform(outline)
    boxes = []
    for bx0, by0, bx1, by1 in card_index_boxes(cv2.warpPerspective(image_bgr, matrix, CARD_PX)):
        quad = np.array([[[bx0, by0], [bx1, by0], [bx1, by1], [bx0, by1]]], np.float32)
        back = cv2.perspectiveTransform(quad, np.linalg.inv(matrix))[0]
        boxes.append((float(back[:, 0].min()), float(back[:, 1].min()),
                      float(back[:, 0].max()), float(back[:, 1].max())))
    return boxes


def corner_crops(image_bgr: np.ndarray, outline: Sequence[Sequence[float]],
                 crop_size: tuple[int, int] = SHIPPED_CROP) -> list[np.ndarray]:
    """The card's two corner crops, cut from the photo as the detector cuts a corner it found."""
    return [crop_corner(image_bgr, box, size=crop_size) for box in index_boxes(image_bgr, outline)]


# The second half: learn the design from the cards found.

#: Augmented crops per corner index of an enrolled card, and the epochs of fine-tuning (the recipe's settings,
#: :data:`vision.training.fit.settings.ENROL`, named here for the Decks page's defaults).
COPIES = ENROL.names.face_copies
EPOCHS = int(ENROL.names.epochs or 1)
#: How many of the base's stage-2 networks an enrolment fine-tunes (the first ones; None: all). The others are
#: kept as the base has them and the model averages them all: they keep what the base knows of what is not a
#: corner, which a few thousand crops of one deck wear away (models/HISTORY.md), and learning takes half as long.
TUNED: int | None = 1
#: Threads that cut the enrolment crops (:func:`enrolment_crops`): the 2 cores of a small machine.
CROP_THREADS = 2
#: Share of the enrolment crops that also go through JPEG (quality 35-90), as phone photos do.
JPEG_SHARE = 0.5
#: Grey levels from the paper's at which a pixel of an index counts as ink.
INK_CONTRAST = 50
#: Stage 1 (optional): whole-table scenes rendered from the enrolled faces, and their kinds.
SCENES = 60
SCENE_KINDS = ("declared", "maal_spread", "tunnela", "table")
#: Whole-table scenes of the enrolled faces whose corners, as the base's stage 1 boxes them, stage 2 also
#: learns (:func:`table_crops`; none by default: they did not raise the enrolled tables and made enrolment
#: several times as long, see models/HISTORY.md), and the seed offset of their scenes (never the calibration's).
TABLE_SCENES = 0
TABLE_SEED = 3003


@dataclass(frozen=True)
class PhotoCards:
    """What one enrolment photo gave: its path, what it shows (``"spades"`` ... ``"jokers"``) and the cards found."""

    photo: str
    shows: str
    cards: tuple[str, ...]


@dataclass(frozen=True)
class Enrolment:
    """A model folder written by :func:`enrol`, and how it was made (``model.json``'s ``"enrolled"``)."""

    folder: str
    design: str
    photos: tuple[PhotoCards, ...]
    crops: int
    epochs: int
    seconds: float
    date: str
    calibration_scenes: int = 0
    #: Seconds each part took (:class:`Steps`): finding the cards, cutting crops, learning, ...
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_image(path: Path) -> np.ndarray:
    """A photo file as BGR; :class:`EnrolError` naming it when it is missing or not an image."""
    if not path.is_file():
        raise EnrolError(f"{path}: no such file")
    image = cv2.imread(str(path))
    if image is None:
        raise EnrolError(f"{path}: not an image OpenCV can read; give a JPEG or PNG photo")
    return image


#: How much the deck's usual index place (:func:`index_place`) is widened on each side for a joker's corner.
PLACE_MARGIN = 0.15


def index_place(faces: Sequence[Face]) -> tuple[Box, Box] | None:
    """Where the deck prints its two corner indices on a straightened card: the median top-left and bottom-right
    index boxes of ``faces`` (the suit cards, :func:`card_face`), each widened by :data:`PLACE_MARGIN` of its size;
    None without faces.

    Why: a joker of many decks prints no rank index, only a star or a jester in its corner, which the index finder
    (:func:`index_box`) takes for a frame or misses; its crops are cut where this deck's indices are instead.

    >>> from vision.training.data.faces import draw_face
    >>> index_place([draw_face("5S"), draw_face("6S")])[0]
    (8.82, 3.4, 53.67, 112.6)
    """
    if not faces:
        return None
    places = []
    for boxes in (np.array([f.index_tl for f in faces], float), np.array([f.index_br for f in faces], float)):
        x0, y0, x1, y1 = np.median(boxes, axis=0)
        mx, my = PLACE_MARGIN * (x1 - x0), PLACE_MARGIN * (y1 - y0)
        places.append((round(float(x0 - mx), 2), round(float(y0 - my), 2), round(float(x1 + mx), 2),
                       round(float(y1 + my), 2)))
    return places[0], places[1]


def _in_place(found: Box, place: Box, size: tuple[int, int]) -> Box:
    """``found`` where it lies inside ``place`` (a corner's mark where the deck's indices are), else ``place``
    clipped to the card's ``size`` (w, h): a joker's frame or picture is no index.

    >>> _in_place((5, 5, 30, 25), (-3, -7, 68, 175), (250, 350))  # a star in the corner
    (5, 5, 30, 25)
    >>> _in_place((201, 168, 204, 288), (206, 258, 250, 355), (250, 350))  # a frame's side
    (206, 258, 250, 350)
    """
    if place[0] <= found[0] and place[1] <= found[1] and found[2] <= place[2] and found[3] <= place[3]:
        return found
    return max(0, place[0]), max(0, place[1]), min(size[0], place[2]), min(size[1], place[3])


def card_face(image_bgr: np.ndarray, card: FoundCard, design: str, place: tuple[Box, Box] | None = None) -> Face:
    """A photographed card, straightened, as a :class:`~vision.training.data.faces.Face` with its two
    indices: what the classifier's face crops are cut from, like a rendered design's faces.

    The indices are found on the card (:func:`card_index_boxes`); given the deck's ``place`` of them
    (:func:`index_place`), one found outside it (a joker's frame or picture) is that place instead: a joker's
    corner is cut where a rank index would be, with its star or jester there."""
    upright = straighten(image_bgr, card.outline)
    found = card_index_boxes(upright)
    if place is not None:
        found = (_in_place(found[0], place[0], CARD_PX), _in_place(found[1], place[1], CARD_PX))
    tl, br = (tuple(int(round(v)) for v in box) for box in found)
    gray = cv2.cvtColor(upright, cv2.COLOR_BGR2GRAY).astype(np.int16)
    ink = np.zeros(gray.shape, np.uint8)  # the index glyphs: what differs from the paper (scenes label by it)
    for (x0, y0, x1, y1), code in ((tl, INK_TL), (br, INK_BR)):
        patch = gray[y0:y1, x0:x1]
        if patch.size:
            ink[y0:y1, x0:x1][np.abs(patch - np.median(gray)) > INK_CONTRAST] = code
    return Face(card.card, design, np.dstack([upright, np.full(upright.shape[:2], 255, np.uint8)]),
                tl, br, ink)  # type: ignore[arg-type]


def read_enrolment(suit_photos: Sequence[Path], jokers: Path | None = None, design: str = "enrolled", *,
                   progress: Callable[[int, int], None] | None = None) -> tuple[list[PhotoCards], list[Face]]:
    """The cards of the four suit photos (spades, hearts, diamonds, clubs) and the jokers photo, as faces;
    ``progress(done, photos)`` after each photo (its cards found and straightened). A joker's corners are
    cut where the suit cards have their indices (:func:`index_place`)."""
    if len(suit_photos) != len(SUITS):
        raise EnrolError(f"{len(suit_photos)} suit photos given, 4 needed: spades, hearts, diamonds, clubs, in that order")
    wanted = [(Path(path), suit) for suit, path in zip(SUITS, suit_photos)] + ([(Path(jokers), "")] if jokers else [])
    summary: list[PhotoCards] = []
    faces: list[Face] = []
    for k, (path, suit) in enumerate(wanted):
        image = read_image(path)
        cards = find_cards(image, suit, str(path)) if suit else find_jokers(image, str(path))
        summary.append(PhotoCards(str(path), SUIT_NAMES[suit] if suit else "jokers", tuple(c.card for c in cards)))
        place = None if suit else index_place(faces)
        faces += [card_face(image, card, design, place) for card in cards]
        if progress is not None:
            progress(k + 1, len(wanted))
    return summary, faces


def enrolled_decks(faces: Sequence[Face]) -> list[Any]:
    """The faces as :class:`~vision.training.data.decks.Deck` s (a deck holds one face per card:
    more jokers make more decks)."""
    from vision.training.data.decks import Deck

    decks: list[dict[str, Face]] = []
    for face in faces:
        free = next((d for d in decks if face.card not in d), None)
        if free is None:
            decks.append(free := {})
        free[face.card] = face
    return [Deck(f"enrolled-{k}", d, "enrolled") for k, d in enumerate(decks)]


def write_scenes(decks: Sequence[Any], folder: Path, indices: Sequence[int], seed: int,
                 progress: Callable[[int, int], None] | None = None) -> Path:
    """Whole-table scenes of one enrolled deck (:data:`SCENE_KINDS` in turn), scene ``i`` drawn
    from ``default_rng([seed, 12, i])``, written into ``folder`` as ``tiplu generate`` writes
    them (:func:`vision.training.data.generate.write_scene`: images, YOLO labels, geometry); ``folder``.
    ``progress(done, scenes)`` after each scene written."""
    from vision.training.data.generate import write_scene
    from vision.training.data.scenes import render_scene

    for k, i in enumerate(indices):
        rng = np.random.default_rng([seed, 12, i])
        shot = render_scene(rng, SCENE_KINDS[i % len(SCENE_KINDS)], decks=decks[:1], designs_per_scene=1)
        write_scene(folder, f"e{i:04d}", shot, 85, seed=seed, index=i)
        if progress is not None:
            progress(k + 1, len(indices))
    return folder


def enrolment_scenes(faces: Sequence[Face], folder: Path, count: int = SCENES, seed: int = 0,
                     progress: Callable[[int, int], None] | None = None) -> Path:
    """``count`` whole-table scenes of the enrolled faces as a YOLO folder (the last tenth for val); its data.yaml.
    ``progress(done, count)`` after each scene."""
    from vision.training.data.dataset import write_data_yaml

    decks = enrolled_decks(faces)
    n_val = max(1, count // 10)

    def told(start: int) -> Callable[[int, int], None]:
        return lambda done, _n: progress(start + done, count) if progress is not None else None
    write_scenes(decks, folder / "train", range(count - n_val), seed, progress=told(0))
    write_scenes(decks, folder / "val", range(count - n_val, count), seed, progress=told(count - n_val))
    return write_data_yaml(folder)


#: The seeds of the two halves of the scenes doubt is recalibrated on (never the stage-1 scenes' seed).
CALIBRATION_SEEDS = (1001, 2002)
#: Share of the wrong cards the recalibrated thresholds must flag (as ``tiplu calibrate --catch``).
CALIBRATION_CATCH = 0.9


def recalibrate(model: Path, faces: Sequence[Face], scenes: int, *, before: Path, design: str,
                seed: int = 0, progress: Callable[[int, int, int], None] | None = None) -> dict[str, Any]:
    """Choose the doubt thresholds of the model folder ``model`` for the deck it learnt, write them
    into its ``model.json`` and return that ``"calibration"``.

    ``scenes`` whole-table scenes of ``faces`` are rendered (:func:`write_scenes`), a
    calibration half and a test half from different seeds (:data:`CALIBRATION_SEEDS`,
    offset by ``seed``), read with ``model``; the thresholds are chosen on the first half
    and measured on the second, beside the calibration of the model folder ``before``
    (:func:`vision.training.measure.calibrate.calibration_report`). Where ``before`` has a doubt score
    its weights are kept (a few dozen scenes are too few to fit one) and only the level it
    flags from is chosen. ``progress(rendered, read, scenes)`` after each scene rendered and each read.
    """

    from vision.calibration import Calibration
    from vision.detector import load_detector
    from vision.training.measure.calibrate import calibration_report, read_split, reading_calibration, write_calibration

    verify_calibration_scenes(scenes)
    decks = enrolled_decks(faces)
    halves = {f"{design}/scenes-seed{seed + s}": (seed + s, n)
              for s, n in zip(CALIBRATION_SEEDS, (scenes - scenes // 2, scenes // 2))}
    detector = load_detector(str(model))
    reading = reading_calibration(detector)
    cases = {}
    counts = [0, 0]  # scenes rendered, scenes read

    def counted(which: int) -> Callable[[int, int], None]:
        start = counts[which]

        def tell(done: int, _total: int) -> None:
            counts[which] = start + done
            if progress is not None:
                progress(counts[0], counts[1], scenes)
        return tell

    with tempfile.TemporaryDirectory() as folder:
        for name, (half_seed, count) in halves.items():
            split = write_scenes(decks, Path(folder) / str(half_seed), range(count), half_seed, progress=counted(0))
            cases[name] = read_split(split, detector, progress=counted(1), reading=reading)
    (calibration_name, calibration_cases), (test_name, test_cases) = cases.items()
    base = Calibration.from_model_json(read_model_json(before))
    report = calibration_report({calibration_name: calibration_cases}, {test_name: test_cases}, CALIBRATION_CATCH,
                                before=base, reading=reading, method="score" if base.score else "thresholds",
                                weights=base.score)
    write_calibration(model / INFO_FILE, report)
    return report


def fine_tune_detector(base: Path, data: Path, epochs: int, work: Path, *,
                       progress: Callable[[int, int, float], None] | None = None) -> Path:
    """Stage 1 of ``base`` trained ``epochs`` on ``data`` by its recipe (:func:`~vision.training.fit.corners.train_corners`,
    :data:`~vision.training.fit.settings.ENROL`'s settings, batch norms calibrated on the scenes); the checkpoint."""
    settings = dataclasses.replace(ENROL.corners, epochs=epochs, plan_epochs=epochs)
    return train_corners(data, settings, start=base, resume_dir=None, work=work, real=data.parent / "train",
                         progress=progress, quiet=True)


def enrolment_crops(faces: Sequence[Face], copies: int = COPIES, seed: int = 0,
                    crop_size: tuple[int, int] = SHIPPED_CROP, *,
                    progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Training crops (N, h, w, 3 BGR, ``crop_size`` the base classifier's) and labels: each
    corner index of each face ``copies`` times through :func:`~vision.training.fit.names.face_crops`
    (turned, scaled to table distances, on random tables, lit, blurred, noised, 180 degrees),
    card middles as "not a corner", and :data:`JPEG_SHARE` of them through JPEG.

    Cut card by card, each from its own seed (``[seed, k]``), by :data:`CROP_THREADS` threads
    (the pixel work releases Python's lock), so ``progress(done, cards)`` comes after each card.

    >>> card = np.full((350, 250, 4), 255, np.uint8)
    >>> faces = [Face(name, "d", card, (8, 8, 50, 100), (200, 250, 242, 342), np.zeros((350, 250), np.uint8))
    ...          for name in ("AS", "KH")]
    >>> x, y = enrolment_crops(faces, copies=2, crop_size=(48, 72))
    >>> x.shape[1:], sorted({CLASS_NAMES[k] for k in y if k < len(CLASS_NAMES)})
    ((72, 48, 3), ['AS', 'KH'])
    """
    from concurrent.futures import ThreadPoolExecutor

    from vision.training.data.decks import Deck

    known = [face for face in faces if face.card in CLASS_NAMES]
    if not known:
        raise EnrolError("no cards to learn: the photos gave no card of the 53 faces")
    done = [0]

    def cut(k: int) -> tuple[np.ndarray, np.ndarray]:
        face = known[k]
        card_seed = int(np.random.SeedSequence([seed, k]).generate_state(1)[0])
        found = face_crops([Deck(f"enrolled-{k}", {face.card: face}, "enrolled")], copies=copies, seed=card_seed,
                           turn_any=ENROL.names.turn_any, crop_size=crop_size)
        done[0] += 1
        if progress is not None:
            progress(done[0], len(known))
        return found

    with ThreadPoolExecutor(CROP_THREADS) as pool:
        parts = list(pool.map(cut, range(len(known))))
    x, y = np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    rng = np.random.default_rng(seed)
    for i in np.flatnonzero(rng.random(len(x)) < JPEG_SHARE):
        _, jpeg = cv2.imencode(".jpg", x[i], [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 90))])
        x[i] = cv2.imdecode(jpeg, cv2.IMREAD_COLOR)
    return x, y


def table_crops(base: Path, faces: Sequence[Face], scenes: int, folder: Path, seed: int = 0,
                progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Crops of the base model's stage-1 boxes on ``scenes`` whole-table scenes of the enrolled faces, as
    :func:`vision.training.data.hard_crops.hard_crops` cuts them: each matched box named by its label, clear
    false alarms as "not a corner".

    Face crops (:func:`enrolment_crops`) frame every index as its label does; at the table the classifier
    meets stage 1's own boxes instead: two stacked indices boxed as one, a box shifted onto the next
    card's edge, a pip taken for an index. Crops of the shipped model's boxes on generated tables help
    the training campaign most on a held-out light-on-dark design, so an enrolment can learn them for
    its own deck too (``tiplu enrol --table-scenes N``; not the default, see :data:`TABLE_SCENES`).
    ``progress(done, scenes)`` after each scene rendered.
    """
    from vision.training.data.dataset import write_data_yaml
    from vision.training.data.hard_crops import hard_crops

    decks = enrolled_decks(faces)
    for i in range(scenes):
        write_scenes(decks, folder / "train", [i], seed + TABLE_SEED)
        if progress is not None:
            progress(i + 1, scenes)
    write_data_yaml(folder)
    found = hard_crops(base, [folder], seed=seed, crop_size=model_crop_size(base))
    return found.crops, found.labels


def _torch() -> Any:
    try:
        import onnx  # noqa: F401  (classifier_from_onnx reads the base weights with it)
        import torch
    except ImportError as error:
        raise EnrolError(train_extra_message(str(error.name))) from None
    return torch


def fine_tune_classifier(base: Path, crops: np.ndarray, labels: np.ndarray, epochs: int = EPOCHS, *,
                         seed: int = 0, progress: Callable[[int, int, float], None] | None = None,
                         member: str = CLASSIFIER_FILE, moving: Callable[[float, int], None] | None = None) -> Any:
    """Stage 2 of the model folder ``base`` (its network ``member``) fine-tuned on ``crops`` by its recipe
    (:func:`~vision.training.fit.names.train_names` with :data:`~vision.training.fit.settings.ENROL`'s settings);
    ``progress(epoch, epochs, loss)`` after each epoch, ``moving(epochs done, epochs)`` after each
    batch (a fraction of an epoch: an epoch takes seconds on 2 cores, a minute on a Pi).
    Returns the net in eval mode."""
    _torch()
    settings = dataclasses.replace(ENROL.names, epochs=epochs, plan_epochs=epochs)
    return train_names([], settings, start=base, resume_dir=None, member=member, given=(crops, labels), seed=seed,
                       progress=progress, moving=moving, say=None)


def tuned_networks(base: Path, tuned: int | None = TUNED) -> int:
    """How many stage-2 networks of the model folder ``base`` an enrolment or improvement fine-tunes (``tuned``,
    at least one, at most all; None: all): its rounds of learning are that many times its epochs."""
    members = len(model_classifiers(base))
    return members if tuned is None else max(1, min(tuned, members))


def fine_tune_classifiers(base: Path, crops: np.ndarray, labels: np.ndarray, epochs: int = EPOCHS, *,
                          seed: int = 0, progress: Callable[[int, int, float], None] | None = None,
                          moving: Callable[[float, int], None] | None = None,
                          tuned: int | None = None) -> list[Any]:
    """The first ``tuned`` (default: every) stage-2 networks of ``base`` fine-tuned on the same crops, in
    ``"classifiers"`` order, then ``None`` for each network kept as the base has it, so an enrolled or
    improved model averages as many networks as its base. ``progress`` and ``moving`` count the epochs of
    all of them: ``(k * epochs + epoch, tuned * epochs, ...)``."""
    members = model_classifiers(base)
    tuned = tuned_networks(base, tuned)
    nets: list[Any] = []
    for k, member in enumerate(members[:tuned]):
        def each(epoch: int, _: int, loss: float, k: int = k) -> None:
            if progress is not None:
                progress(k * epochs + epoch, tuned * epochs, loss)

        def batch(done: float, _: int, k: int = k) -> None:
            if moving is not None:
                moving(k * epochs + done, tuned * epochs)
        nets.append(fine_tune_classifier(base, crops, labels, epochs, seed=seed + k, progress=each, member=member,
                                         moving=batch))
    return nets + [None] * (len(members) - tuned)


def enrol(suit_photos: Sequence[Path], out: Path, *, jokers: Path | None = None, base: Path = MODELS_DIR,
          design: str | None = None, epochs: int = EPOCHS, copies: int = COPIES, seed: int = 0,
          detector_epochs: int = 0, scenes: int = SCENES, calibration_scenes: int = CALIBRATION_SCENES,
          table_scenes: int = TABLE_SCENES, tuned: int | None = TUNED, work: Path | None = None,
          say: Callable[[str], None] | None = None, progress: Callable[[Progress], None] | None = None) -> Enrolment:
    """Learn a deck from its suit photos (and jokers photo) and write the model folder ``out``.

    Then doubt is recalibrated for the deck on ``calibration_scenes`` scenes of it
    (:func:`recalibrate`; 0 keeps the base model's calibration).
    ``say`` gets a progress line after cutting the crops, after each epoch and during the
    recalibration; ``progress`` a :class:`Progress` after each photo, each card's crops, each
    batch learnt and each scene (the web page's progress bar, see :class:`Steps`). Raises
    :class:`EnrolError` for a bad photo (naming it), a base folder without both ONNX
    files, ``out`` being ``base``, bad numbers, or a missing train extra.
    """
    started = time.monotonic()
    base, out = Path(base), Path(out)
    design = design or out.name
    for needed in (DETECTOR_FILE, CLASSIFIER_FILE):
        if not (base / needed).is_file():
            raise EnrolError(f"{base}: no {needed}; enrolment starts from a two-stage model folder (e.g. models/)")
    if out.resolve() == base.resolve():
        raise EnrolError(f"{out}: that is the base model's folder; write the enrolled model to a new folder")
    if epochs < 1 or copies < 1 or detector_epochs < 0 or table_scenes < 0:
        raise EnrolError(f"epochs ({epochs}) and copies ({copies}) must be at least 1, detector epochs "
                         f"({detector_epochs}) and table scenes ({table_scenes}) at least 0")
    if detector_epochs and scenes < 2:
        raise EnrolError(f"{scenes} scenes: stage 1 needs at least 2 (one to train on, one to check)")
    verify_calibration_scenes(calibration_scenes)
    _torch()
    networks = tuned_networks(base, tuned)
    photo_count = len(suit_photos) + (jokers is not None)
    steps = Steps(plan(photos=photo_count, crops=expected_crops(copies, jokers is not None), networks=networks,
                       epochs=epochs, table_scenes=table_scenes, scenes=scenes, detector_epochs=detector_epochs,
                       calibration_scenes=calibration_scenes), started, say, progress,
                  rounds=epochs * networks, scenes=calibration_scenes)
    steps.photo_read(0, photo_count)
    photos, faces = read_enrolment(suit_photos, jokers, design, progress=steps.photo_read)
    crops, labels = enrolment_crops(faces, copies, seed, model_crop_size(base), progress=steps.card_cut)
    steps.say(f"{len(crops)} crops of {len(faces)} cards cut")
    if table_scenes:
        with tempfile.TemporaryDirectory() as tables:
            x, y = table_crops(base, faces, table_scenes, Path(tables), seed, progress=steps.table_rendered)
        crops, labels = np.concatenate([crops, x]), np.concatenate([labels, y])
        steps.say(f"{len(x)} crops of stage 1's boxes on {table_scenes} tables of the enrolled cards cut")
    nets = fine_tune_classifiers(base, crops, labels, epochs, seed=seed, progress=steps.epoch_done,
                                 moving=steps.batch_learnt, tuned=tuned)
    detector = None
    if detector_epochs:
        work = Path(work or out.parent / f".{out.name}-work")
        data = enrolment_scenes(faces, work / "scenes", scenes, seed, progress=steps.scene_rendered)
        steps.say(f"{scenes} scenes of the enrolled cards rendered")
        detector = fine_tune_detector(base, data, detector_epochs, work, progress=steps.detector_epoch_done)
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    note = {"design": design, "photos": [asdict(p) for p in photos], "date": date, "crops": len(crops),
            "epochs": epochs, "detector_epochs": detector_epochs, "calibration_scenes": calibration_scenes,
            "table_scenes": table_scenes, "seconds": round(time.monotonic() - started, 1)}
    write_model_folder(base, out, nets, note, detector)
    steps.report("export", 1.0)
    steps.recalibrate(out, faces, before=base, design=design, seed=seed)
    return Enrolment(str(out), design, tuple(photos), len(crops), epochs, round(time.monotonic() - started, 1), date,
                     calibration_scenes, dict(steps.timings))


#: Seconds one unit of each part of an enrolment takes on 2 free cores (a photo searched, a crop cut, a crop
#: learnt for one epoch by one network, a scene rendered or read, ...), from ``bench/bench_enrol.py --steps``:
#: the progress bar's proportions, so that it moves as the time passes.
UNIT_SECONDS = {"photo": 0.8, "crop": 0.004, "crop epoch": 0.0018, "table": 1.0, "scene": 0.3,
                "detector epoch": 30.0, "export": 1.0, "calibration scene": 0.3, "calibration read": 0.8}
#: The steps the progress bar names, in order, and the parts (timed apart) each is made of.
STEP_PARTS = {"photos": ("find cards", "cut crops"),
              "learning": ("table crops", "stage 2", "stage 1 scenes", "stage 1", "export"),
              "calibration": ("calibration",)}


@dataclass(frozen=True)
class Progress:
    """Where a job stands: its ``step`` (``"photos"``, ``"learning"``, ``"calibration"``), the ``fraction``
    of that step done, the ``share`` of the whole job done, and the step's count (photos read,
    rounds learnt, scenes read: ``done`` of ``total``) with the last round's ``loss``."""

    step: str
    fraction: float
    share: float
    done: int = 0
    total: int = 0
    loss: float = 0.0


def face_crop_count(cards: int, copies: int) -> int:
    """About how many crops :func:`~vision.training.fit.names.face_crops` cuts from ``cards`` faces: each card's
    two indices ``copies`` times, and three tenths as many card middles (the progress bar's plan).

    >>> face_crop_count(52, 40)
    5408
    """
    return int(cards * 2 * copies * 1.3)


def expected_crops(copies: int, jokers: bool) -> int:
    """About how many crops :func:`enrolment_crops` cuts from four suit photos (and two printed jokers)."""
    return face_crop_count(13 * len(SUITS) + 2 * jokers, copies)


def plan(*, photos: int, crops: int, networks: int, epochs: int, table_scenes: int = 0, scenes: int = 0,
         detector_epochs: int = 0, calibration_scenes: int = 0) -> dict[str, float]:
    """The estimated seconds of each part of a job on 2 cores (:data:`UNIT_SECONDS`), parts it skips left out.

    >>> plan(photos=4, crops=5000, networks=2, epochs=6, calibration_scenes=100)
    {'find cards': 3.2, 'cut crops': 20.0, 'stage 2': 108.0, 'export': 1.0, 'calibration': 110.0}
    """
    s = UNIT_SECONDS
    parts = {"find cards": photos * s["photo"], "cut crops": crops * s["crop"],
             "table crops": table_scenes * s["table"], "stage 2": networks * epochs * crops * s["crop epoch"],
             "stage 1 scenes": scenes * s["scene"] if detector_epochs else 0.0,
             "stage 1": detector_epochs * s["detector epoch"], "export": s["export"] * (1 + 5 * bool(detector_epochs)),
             "calibration": calibration_scenes * (s["calibration scene"] + s["calibration read"])}
    return {part: round(seconds, 3) for part, seconds in parts.items() if seconds}


class Steps:
    """The parts of an enrolment or improvement as they go: ``say`` lines, the progress bar's
    :class:`Progress` and the seconds each part took (:attr:`timings`, what ``bench/bench_enrol.py
    --steps`` prints).

    Each part reports the fraction of it done (:meth:`report`) as often as it can (a photo, a card's
    crops, a batch of learning, a scene), so the bar moves every second or so; the time since the
    last report is counted to the part reporting (or to ``timed``: recalibration's rendering and reading
    are timed apart).

    >>> seen = []
    >>> steps = Steps(plan(photos=4, crops=100, networks=1, epochs=1, calibration_scenes=10), 0.0,
    ...               progress=seen.append, rounds=1, scenes=10)
    >>> steps.report("find cards", 0.5, done=2, total=4); steps.report("stage 2", 1.0, done=1); steps.report("calibration", 0.5)
    >>> [(p.step, p.fraction, p.done, p.total) for p in seen]
    [('photos', 0.44, 2, 4), ('learning', 0.15, 1, 1), ('calibration', 0.5, 5, 10)]
    >>> [p.share for p in seen] == sorted(p.share for p in seen)
    True
    """

    def __init__(self, parts: dict[str, float], started: float, say_line: Callable[[str], None] | None = None,
                 progress: Callable[[Progress], None] | None = None, *, rounds: int = 0, scenes: int = 0) -> None:
        self.parts = parts
        self.started = started
        self.say_line = say_line
        self.progress = progress
        self.rounds = rounds
        self.scenes = scenes
        self.timings: dict[str, float] = {}
        self._last = time.monotonic()
        self._share = 0.0
        self._calibration = (0, 0)

    def _step_of(self, part: str) -> str:
        return next(step for step, parts in STEP_PARTS.items() if part in parts)

    def report(self, part: str, fraction: float, *, done: int | None = None, total: int | None = None,
               loss: float = 0.0, timed: str | None = None) -> None:
        """``fraction`` of ``part`` is done; the progress bar hears of it (never going back)."""
        now = time.monotonic()
        timed = timed or part
        self.timings[timed] = round(self.timings.get(timed, 0.0) + now - self._last, 2)
        self._last = now
        fraction = min(max(fraction, 0.0), 1.0)
        step = self._step_of(part)
        order = [p for parts in STEP_PARTS.values() for p in parts]
        before = sum(s for p, s in self.parts.items() if order.index(p) < order.index(part))
        whole = sum(self.parts.values()) or 1.0
        self._share = max(self._share, (before + fraction * self.parts.get(part, 0.0)) / whole)
        in_step = {p: s for p, s in self.parts.items() if p in STEP_PARTS[step]}
        step_before = sum(s for p, s in in_step.items() if order.index(p) < order.index(part))
        step_fraction = (step_before + fraction * self.parts.get(part, 0.0)) / (sum(in_step.values()) or 1.0)
        count = self.scenes if step == "calibration" else self.rounds if step == "learning" else 0
        total = count if total is None else total
        done = round(fraction * total) if done is None else done
        if self.progress:
            self.progress(Progress(step, round(step_fraction, 2), round(self._share, 3), done, total or 0, loss))

    def say(self, line: str) -> None:
        if self.say_line:
            self.say_line(f"{line} ({time.monotonic() - self.started:.0f} s)")

    def photo_read(self, done: int, photos: int) -> None:
        self.report("find cards", done / photos, done=done, total=photos)

    def card_cut(self, done: int, cards: int) -> None:
        self.report("cut crops", done / cards, done=done, total=cards)

    def table_rendered(self, done: int, scenes: int) -> None:
        if done % 20 == 0 or done == scenes:
            self.say(f"tables of the enrolled cards: {done}/{scenes} rendered")
        self.report("table crops", done / scenes)

    def batch_learnt(self, done: float, rounds: int) -> None:
        """``done`` rounds (epochs of all stage-2 networks, a fraction within one) of ``rounds``."""
        self.report("stage 2", done / rounds, done=int(done), total=rounds)

    def epoch_done(self, epoch: int, total: int, loss: float) -> None:
        self.say(f"epoch {epoch}/{total} loss {loss:.3f}")
        self.report("stage 2", epoch / total, done=epoch, total=total, loss=loss)

    def scene_rendered(self, done: int, scenes: int) -> None:
        self.report("stage 1 scenes", done / scenes)

    def detector_epoch_done(self, epoch: int, total: int, loss: float) -> None:
        self.say(f"detector epoch {epoch}/{total} loss {loss:.3f}")
        self.report("stage 1", epoch / total, loss=loss)

    def calibration_moved(self, rendered: int, read: int, scenes: int) -> None:
        """Recalibration's scenes, rendered and read (rendering one counts as much as its share of the time)."""
        render, reading = UNIT_SECONDS["calibration scene"], UNIT_SECONDS["calibration read"]
        rendering = rendered != self._calibration[0]  # a half is rendered, then read
        self._calibration = (rendered, read)
        if not rendering and (read % 10 == 0 or read == scenes):
            self.say(f"recalibrating doubt: {read}/{scenes} scenes read")
        self.report("calibration", (rendered * render + read * reading) / (scenes * (render + reading)), done=read,
                    total=scenes, timed="calibration scenes" if rendering else "calibration read")

    def recalibrate(self, model: Path, faces: Sequence[Face], *, before: Path, design: str, seed: int) -> None:
        """:func:`recalibrate` ``model`` on :attr:`scenes` scenes (none: the base's calibration stays)."""
        if not self.scenes:
            return
        found = recalibrate(model, faces, self.scenes, before=before, design=design, seed=seed,
                            progress=self.calibration_moved)
        score = found.get("doubt_score")
        flags = (f"doubt score from {score['flag_above']}" if score else
                 f"uncertain below {found['uncertain_below']}, alternative above {found['alternative_above']}")
        self.say(f"doubt recalibrated: {flags}, faint above {found['faint_above']}")
        self.report("calibration", 1.0, done=self.scenes, total=self.scenes, timed="calibration choice")


#: Copies of each kept correction in an improvement (the crop as it is, then augmented).
CORRECTION_COPIES = 20


def correction_crops(crops: Sequence[np.ndarray], cards: Sequence[str], copies: int = CORRECTION_COPIES,
                     seed: int = 0, crop_size: tuple[int, int] = SHIPPED_CROP) -> tuple[np.ndarray, np.ndarray]:
    """Training crops from corner crops kept in review, each labelled with the card the player chose:
    the crop itself (resized to ``crop_size``, the classifier's) and ``copies - 1`` copies through the
    classifier's light, blur, noise and 180-degree changes (:func:`vision.training.fit.names._augment_pixels`).

    >>> x, y = correction_crops([np.zeros((48, 32, 3), np.uint8)], ["8H"], copies=3)
    >>> x.shape, [CLASS_NAMES[k] for k in y]
    ((3, 72, 48, 3), ['8H', '8H', '8H'])
    """
    index = {name: k for k, name in enumerate(CLASS_NAMES)}
    rng = np.random.default_rng(seed)
    xs: list[np.ndarray] = []
    ys: list[int] = []
    for crop, card in zip(crops, cards):
        if card not in index:
            raise EnrolError(f"{card}: not a card name; a correction names one of the 53 faces")
        if crop.shape[:2] != (crop_size[1], crop_size[0]):
            crop = cv2.resize(crop, crop_size, interpolation=cv2.INTER_AREA)
        xs.append(crop)
        xs += [_augment_pixels(rng, crop) for _ in range(copies - 1)]
        ys += [index[card]] * copies
    if not xs:
        raise EnrolError("no corrections kept yet: confirm or change cards in a photo review and save the round first")
    return np.stack(xs), np.array(ys, np.int64)


#: Augmented crops of each corner of the drawn decks an improvement of the shipped model learns again
#: (:data:`~vision.training.fit.settings.NamesSettings.rehearsal_copies`).
REHEARSAL_COPIES = ENROL.names.rehearsal_copies


def rehearsal_crops(copies: int = REHEARSAL_COPIES, seed: int = 0,
                    crop_size: tuple[int, int] = SHIPPED_CROP) -> tuple[np.ndarray, np.ndarray]:
    """Crops of every card of the drawn decks (:func:`vision.training.data.decks.drawn_decks`, drawn by
    OpenCV, so every machine has them) as the classifier's face crops cut them, ``copies`` a corner, with
    "not a corner" middles: what an improvement without the deck's own photos learns beside the corrections.

    >>> x, y = rehearsal_crops(1, crop_size=(48, 72))
    >>> x.shape[1:], len(set(y.tolist())) == len(CLASS_NAMES) + 1
    ((72, 48, 3), True)
    """
    from vision.training.data.decks import drawn_decks

    return face_crops(drawn_decks(), copies=copies, seed=seed, turn_any=ENROL.names.turn_any, crop_size=crop_size)


def expected_rehearsal_crops(copies: int) -> int:
    """About how many crops :func:`rehearsal_crops` cuts: every card of each drawn deck.

    >>> expected_rehearsal_crops(0)
    0
    """
    from vision.training.data.faces import DRAWN_STYLES

    return face_crop_count(len(DRAWN_STYLES) * len(CLASS_NAMES), copies)


@dataclass(frozen=True)
class Improvement:
    """A model folder written by :func:`improve`: the folder it started from and what it learnt from."""

    folder: str
    base: str
    corrected_crops: int
    crops: int
    epochs: int
    seconds: float
    date: str
    #: Crops of the drawn decks learnt again beside the corrections (:func:`rehearsal_crops`; 0 with suit photos).
    rehearsal_crops: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def improve(base: Path, out: Path, crops: Sequence[np.ndarray], cards: Sequence[str], *,
            suit_photos: Sequence[Path] = (), jokers: Path | None = None, epochs: int = EPOCHS,
            copies: int = COPIES, correction_copies: int = CORRECTION_COPIES, seed: int = 0,
            calibration_scenes: int = CALIBRATION_SCENES, tuned: int | None = TUNED,
            rehearsal_copies: int = REHEARSAL_COPIES, say: Callable[[str], None] | None = None,
            progress: Callable[[Progress], None] | None = None) -> Improvement:
    """Fine-tune the card namer of the model folder ``base`` on corrections kept in review
    (``crops`` with the right ``cards``) and write the result to the model folder ``out``.

    With the deck's enrolment photos (``suit_photos``, ``jokers``) their crops are learnt
    again too (:func:`enrolment_crops`), so the deck's own cards are not forgotten for the
    few corrected ones, and doubt is recalibrated on ``calibration_scenes`` scenes of them
    as :func:`enrol` does; without them (the shipped model improved) the drawn decks are
    learnt again instead (:func:`rehearsal_crops`, ``rehearsal_copies`` a corner) and
    ``base``'s calibration stays. ``base`` stays as it was.
    """
    started = time.monotonic()
    base, out = Path(base), Path(out)
    if out.resolve() == base.resolve():
        raise EnrolError(f"{out}: that is the model being improved; write the new version to a new folder")
    verify_calibration_scenes(calibration_scenes)
    _torch()
    size = model_crop_size(base)
    x, y = correction_crops(crops, cards, correction_copies, seed, size)
    networks = tuned_networks(base, tuned)
    photo_count = len(suit_photos) + (jokers is not None and bool(suit_photos))
    scenes = calibration_scenes if suit_photos else 0
    again = (expected_crops(copies, jokers is not None) if suit_photos else
             expected_rehearsal_crops(rehearsal_copies))
    expected = len(x) + again
    steps = Steps(plan(photos=photo_count, crops=again, networks=networks, epochs=epochs,
                       calibration_scenes=scenes) | {"stage 2": networks * epochs * expected * UNIT_SECONDS["crop epoch"]},
                  started, say, progress, rounds=epochs * networks, scenes=scenes)
    faces: list[Face] = []
    if suit_photos:
        steps.photo_read(0, photo_count)
        _, faces = read_enrolment(suit_photos, jokers, base.name, progress=steps.photo_read)
        ex, ey = enrolment_crops(faces, copies, seed, size, progress=steps.card_cut)
        x, y = np.concatenate([x, ex]), np.concatenate([y, ey])
    rehearsed = 0
    if not suit_photos and rehearsal_copies:
        rx, ry = rehearsal_crops(rehearsal_copies, seed, size)
        steps.card_cut(1, 1)
        x, y, rehearsed = np.concatenate([x, rx]), np.concatenate([y, ry]), len(rx)
    nets = fine_tune_classifiers(base, x, y, epochs, seed=seed, progress=steps.epoch_done, moving=steps.batch_learnt,
                                 tuned=tuned)
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    enrolled = dict(read_model_json(base).get("enrolled") or {})
    note = enrolled | {
        "improved": date, "corrected_crops": len(crops), "rehearsal_crops": rehearsed, "crops": len(x), "epochs": epochs,
        "calibration_scenes": steps.scenes, "seconds": round(time.monotonic() - started, 1)}
    write_model_folder(base, out, nets, note, tag="corrected")
    steps.report("export", 1.0)
    steps.recalibrate(out, faces, before=base, design=str(enrolled.get("design") or base.name), seed=seed)
    return Improvement(str(out), str(base), len(crops), len(x), epochs, round(time.monotonic() - started, 1), date,
                       rehearsed)


#: Enrolment photo file names, in the order ``tiplu enrol`` takes them.
SUIT_PHOTO_NAMES = ("spades", "hearts", "diamonds", "clubs")


def compose_suit_photos(faces: dict[str, Face], seed: int = 7
                        ) -> list[tuple[str, np.ndarray, list[tuple[float, float]]]]:
    """The four suit photos of a design's ``faces`` (:func:`compose_suit_photo`, one seeded
    generator for all four): (suit letter, BGR photo, where each card's centre lies)."""
    rng = np.random.default_rng(seed)
    return [(suit, *compose_suit_photo([faces[name] for name in card_names(suit)], rng)) for suit in SUITS]


def write_enrolment_photos(folder: Path, photos: Sequence[tuple[str, np.ndarray, Any]],
                           joker: Face | None, quality: int = 90) -> list[Path]:
    """Write composed suit photos as ``spades.jpg`` ... ``clubs.jpg`` (enrolment order, JPEG ``quality``) and,
    with a ``joker`` face, ``jokers.jpg`` showing two of it; the paths in that order.

    Why: tests and ``tiplu report --enrol`` hand these files to :func:`enrol` exactly as a
    family's photos would come.
    """
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for (_suit, photo, _centres), name in zip(photos, SUIT_PHOTO_NAMES):
        paths.append(folder / f"{name}.jpg")
        cv2.imwrite(str(paths[-1]), photo, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if joker is not None:
        paths.append(folder / "jokers.jpg")
        cv2.imwrite(str(paths[-1]), compose_suit_photo([joker, joker], np.random.default_rng(3))[0])
    return paths


def compose_suit_photo(faces: Sequence[Face], rng: np.random.Generator,
                       card_w: int = 150) -> tuple[np.ndarray, list[tuple[float, float]]]:
    """A 1280x960 enrolment photo made from rendered faces, laid in rows of five (5-5-3),
    each turned up to 8 degrees on a felt-like table; and where their centres lie.

    For tests and measurements of a design held out of training (a family's real photo
    is what :func:`enrol` is for).
    """
    photo = np.clip(np.full((960, 1280, 3), (60, 110, 40), int) + rng.integers(-12, 12, (960, 1280, 3)), 0, 255)
    centres = []
    for k, face in enumerate(faces):
        row, col = divmod(k, 5)
        small = cv2.resize(face.image, None, fx=card_w / face.image.shape[1], fy=card_w / face.image.shape[1],
                           interpolation=cv2.INTER_AREA)
        h, w = small.shape[:2]
        cx, cy = 140 + col * 250 + rng.uniform(-15, 15), 150 + row * 300 + rng.uniform(-15, 15)
        turn = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-8, 8)), 1.0)
        turn[:, 2] += (cx - w / 2, cy - h / 2)
        laid = cv2.warpAffine(small, turn, (1280, 960), borderValue=(0, 0, 0, 0))
        alpha = laid[:, :, 3:4] / 255.0
        photo = photo * (1 - alpha) + laid[:, :, :3] * alpha
        centres.append((cx, cy))
    return photo.astype(np.uint8), centres
