"""Find card-corner indices in a photo with ONNX Runtime only (no torch, no Ultralytics).

Every backend is a :class:`Detector`: one method, :meth:`~Detector.detect`, from a BGR
photo to :class:`Corner` boxes. :func:`load_detector` builds the backend that a model
folder's ``model.json`` names (``"format"``); a second backend (an oriented-box model,
NCNN on a Pi, an enrolled deck) is a new class added to :data:`BACKENDS`, nothing else.

The shipped model (``models/``, format ``tiplu-corners-v1``, :class:`CardDetector`) has
two stages:

1. ``corners.onnx``: a YOLO11n that boxes every corner index as one class, run on the
   photo letterboxed to 320 px (and at that size on the photo mirrored and upside down too:
   ``model.json``'s ``"views"``) and, for a bigger photo, again at 3/4 of its long side (at
   most 960 px), so both a close card and a whole table at 1280 px are read at the
   corner sizes it was trained on (:meth:`CardDetector.input_sizes`); a 12-megapixel photo
   whose corners come out too small even at 960 px is also read in tiles
   (:meth:`CardDetector.tile_scale`).
2. ``corner_classifier.onnx``: a small CNN that names the card (53 classes + "not a
   corner") from a crop of each box (48x72 since v0.6: ``model.json``'s ``crop_w`` and
   ``crop_h``), cut from the full-resolution photo. ``model.json``'s ``"classifiers"`` may
   list more such networks (v0.7 ships two, trained on different data); their probabilities
   are averaged, which reads unseen designs better than either alone.

3. ``corner_orientation.onnx`` (since v0.8, ``model.json``'s ``"orientation"``): a small CNN
   that says which way each index faces (:mod:`vision.orientation`), for pairing a card's
   two indices (:mod:`vision.pairing`). A folder without it pairs by the crops alone.

A single-stage model (one YOLO with 53 classes) also works: when the detector has 53
class outputs the classifier is skipped.

Duplicates: a Marriage table holds three decks, so identical cards often lie side by side.
Boxes are therefore suppressed class-agnostically at IoU 0.6 (two corners overlapping
more than that are one corner seen twice), and nothing merges boxes that overlap less.

>>> det = load_detector()                                     # doctest: +SKIP
>>> [c.card for c in det.detect(cv2.imread("photo.jpg"))]     # doctest: +SKIP
['7H', '7H', 'KS']
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.calibration import Calibration, CalibrationError
from vision.geometry import MAX_ALTERNATIVES, Corner, box_iou, flipped_boxes, long_sides, nms, tile_starts
from vision.orientation import ORIENTATION_FILE, inside_photo, orientation_crop, orientation_input, output_angles

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
INFO_FILE = "model.json"
DETECTOR_FILE = "corners.onnx"
CLASSIFIER_FILE = "corner_classifier.onnx"
CROP_W, CROP_H = 32, 48
CROP_MARGIN = 0.15
#: Height over width of an upright corner index (rank over suit), for crops of turned ones.
INDEX_ASPECT = 1.6
NMS_IOU = 0.6
SCALE_SPLIT = 64.0
#: A newly exported model's big pass reads a big photo at this share of its long side
#: (``model.json``'s ``"big_share"``; without the key, half, as v0.2-v0.4 were measured first).
BIG_SHARE = 0.75
#: Boxes squarer than this (long side over short) may hold an index lying diagonally (1:1.6 upright, 1:1 at 45
#: degrees, about 1:1.13 at 30): only they are also cut at ``crop_turns``.
TURN_BELOW_ASPECT = 1.35
#: Turns (degrees) at which a newly exported model cuts each box for stage 2 (``model.json``'s
#: ``"crop_turns"``); a ``model.json`` without the key cuts upright only, as before.
CROP_TURNS = (0.0, 45.0, -45.0)
#: A newly exported model tiles a big photo whose corners, at its big pass, are mostly under this many px
#: (long side; ``model.json``'s ``"tile_below"``; a ``model.json`` without the key never tiles, as before).
TILE_BELOW = 18.0
#: A tiled pass scales the photo so that those small corners come out about this many px (long side),
#: the size the big pass reads a 1280 x 960 table at, never above the photo's own resolution.
TILE_CORNER = 28.0
#: Tiles overlap by three such corners, so a corner cut by one tile's edge lies whole in its neighbour.
TILE_OVERLAP = int(3 * TILE_CORNER)
#: At most this many tiles per photo (the scale comes down until they fit): about 1 s on 2 cores.
MAX_TILES = 12
#: Stage 1's other looks at the photo at ``imgsz`` (the pass for close-ups and a table's big corners), by
#: name: which axes each flips (x, y). ``"mirror"``: mirrored left to right; ``"turn180"``: upside down.
VIEW_FLIPS: dict[str, tuple[bool, bool]] = {"mirror": (True, False), "turn180": (True, True)}
#: A newly exported model looks around each card read in windows of this many index sides, read at this
#: size (``model.json``'s ``"look_window"`` and ``"look_size"``; a ``model.json`` without them looks at no window,
#: as before v0.8.6).
LOOK_WINDOW = 8.0
LOOK_SIZE = 320
#: A window read by :meth:`CardDetector.look_around` is skipped where its centre lies within this share of
#: its half-side of a window already chosen about the same size (surer corners first).
LOOK_MERGE = 1.0
#: The looks a newly exported model takes (``model.json``'s ``"views"``). A ``model.json`` without the
#: key reads one view, as before v0.8.4; v0.8.4's ``"mirror_view": true`` reads ``("mirror",)``.
VIEWS = ("mirror", "turn180")


class ModelError(ValueError):
    """The model files are missing or unusable; the message says which file to provide."""


def top_alternatives(probs: np.ndarray, chosen: int, classes: Sequence[str],
                     count: int = MAX_ALTERNATIVES) -> tuple[tuple[str, float], ...]:
    """The ``count`` likeliest card classes other than ``chosen``, with their probability.

    Classes past ``classes`` ("not a corner") are no card and never offered; a class
    under 0.5% is noise and left out.

    >>> top_alternatives(np.array([0.7, 0.05, 0.2, 0.05]), 0, ["8D", "8H", "6D"])
    (('6D', 0.2), ('8H', 0.05))
    """
    order = np.argsort(-probs[:len(classes)], kind="stable")
    return tuple((classes[int(k)], round(float(probs[k]), 4)) for k in order
                 if int(k) != chosen and probs[k] >= 0.005)[:count]


class Detector(Protocol):
    """A card-corner detector, as the pipeline, ``tiplu detect`` and the web app use it.

    Implementations hold no per-photo state (or guard it), so one instance serves every
    thread of the web server.
    """

    def detect(self, image_bgr: np.ndarray, conf: float = 0.25) -> list[Corner]:
        """Corners found in a BGR photo (as ``cv2.imread`` gives), best first, down to ``conf``."""
        ...


@dataclass(frozen=True)
class ModelInfo:
    """What ``models/model.json`` says about the shipped files (defaults if it is absent)."""

    imgsz: int = 320
    max_imgsz: int = 320
    scale_split: float = SCALE_SPLIT
    #: The big pass reads the photo at this share of its long side (at most ``max_imgsz``).
    big_share: float = 0.5
    crop_w: int = CROP_W
    crop_h: int = CROP_H
    crop_margin: float = CROP_MARGIN
    nms_iou: float = NMS_IOU
    classes: tuple[str, ...] = field(default=tuple(CLASS_NAMES))
    #: Turns (degrees) at which each box is also cut and classified; the surest view names it.
    crop_turns: tuple[float, ...] = (0.0,)
    #: Tile a big photo whose corners at the big pass are mostly smaller than this (px); 0 never tiles.
    tile_below: float = 0.0
    #: Stage 2's networks (files in the model folder); their probabilities are averaged. Enrolment
    #: fine-tunes each; a training campaign (``tiplu accumulate init``) starts from the first.
    classifiers: tuple[str, ...] = (CLASSIFIER_FILE,)
    #: The network that says which way each index faces (a file in the model folder), if any.
    orientation: str | None = None
    #: Stage 1's other looks at the photo at ``imgsz`` (:data:`VIEW_FLIPS`, :meth:`CardDetector._stage1`).
    views: tuple[str, ...] = ()
    #: :meth:`CardDetector.look_around`'s windows: their side in index sides (0: none) and stage 1's input size.
    look_window: float = 0.0
    look_size: int = LOOK_SIZE


def model_crop_size(folder: str | os.PathLike[str]) -> tuple[int, int]:
    """The crop size (w, h) a model folder's classifier takes (``crop_w``, ``crop_h``; 32x48 by default).

    Enrolment and "improve from corrections" fine-tune that classifier, so they cut their
    crops at its size.
    """
    info = _read_info(Path(folder))
    return info.crop_w, info.crop_h


def model_classifiers(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """The stage-2 networks of a model folder (``model.json``'s ``"classifiers"``; ``corner_classifier.onnx``
    alone by default): enrolment and "improve from corrections" fine-tune each of them.

    >>> model_classifiers(MODELS_DIR)[0]
    'corner_classifier.onnx'
    """
    return _read_info(Path(folder)).classifiers


def crop_corner(image: np.ndarray, box: Sequence[float] | np.ndarray, margin: float = CROP_MARGIN,
                size: tuple[int, int] = (CROP_W, CROP_H)) -> np.ndarray:
    """A corner crop, portrait and ``CROP_W x CROP_H``: the classifier's input (BGR uint8).

    The box (pixels x1, y1, x2, y2) grows by ``margin`` per side; a landscape box (a card
    lying sideways) is turned 90 degrees so that every crop is portrait. Training
    (:mod:`vision.training.train`) uses this same function, so training and inference agree.

    >>> crop_corner(np.zeros((100, 100, 3), np.uint8), (10, 10, 40, 30)).shape
    (48, 32, 3)
    """
    cw, ch = size
    x1, y1, x2, y2 = (float(v) for v in box)
    w, h = x2 - x1, y2 - y1
    x1, x2 = x1 - margin * w, x2 + margin * w
    y1, y2 = y1 - margin * h, y2 + margin * h
    if x2 - x1 > y2 - y1:
        dst = np.array([[0, ch], [0, 0], [cw, 0]], np.float32)
    else:
        dst = np.array([[0, 0], [cw, 0], [cw, ch]], np.float32)
    src = np.array([[x1, y1], [x2, y1], [x2, y2]], np.float32)
    m = cv2.getAffineTransform(src, dst)
    if max(w, h) > 2.5 * ch:  # shrink big crops without aliasing the thin glyph strokes
        f = 1.5 * ch / max(w, h)
        small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        m = cv2.getAffineTransform(src * f, dst)
        image = small
    return cv2.warpAffine(image, m, (cw, ch), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def turned_crop(image: np.ndarray, box: Sequence[float] | np.ndarray, turn: float, margin: float = CROP_MARGIN,
                size: tuple[int, int] = (CROP_W, CROP_H)) -> np.ndarray:
    """:func:`crop_corner` of the index inside ``box`` after turning the photo ``turn`` degrees about its centre.

    Why: stage 1's boxes are axis-aligned, so the box of an index lying at 30-60 degrees holds
    it diagonally, with neighbouring ink, and stage 2 reads it worse (real val turned 135
    degrees: 91% against 97% upright). Turned back, the index is upright again; its upright
    size is the rectangle of :data:`INDEX_ASPECT` whose turned bounding box fits ``box``.

    >>> turned_crop(np.zeros((100, 100, 3), np.uint8), (30, 30, 70, 70), 45).shape
    (48, 32, 3)
    """
    if not turn:
        return crop_corner(image, box, margin, size)
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy, w, h = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1
    cos, sin = abs(np.cos(np.radians(turn))), abs(np.sin(np.radians(turn)))
    width = (w + h) / ((1 + INDEX_ASPECT) * (cos + sin))
    reach = int(max(w, h) * 1.6) + 4
    left, top = int(max(cx - reach, 0)), int(max(cy - reach, 0))
    patch = image[top:int(cy + reach), left:int(cx + reach)]
    qx, qy = cx - left, cy - top
    m = cv2.getRotationMatrix2D((qx, qy), turn, 1.0)
    upright = cv2.warpAffine(patch, m, (patch.shape[1], patch.shape[0]), borderMode=cv2.BORDER_REPLICATE)
    half_w, half_h = width / 2, INDEX_ASPECT * width / 2
    return crop_corner(upright, (qx - half_w, qy - half_h, qx + half_w, qy + half_h), margin, size)


def _pixel_box(box: np.ndarray) -> tuple[float, float, float, float]:
    """A box as four floats rounded to 0.1 px, as JSON shows them."""
    x1, y1, x2, y2 = (round(float(v), 1) for v in box)
    return x1, y1, x2, y2


def letterbox(image: np.ndarray, size: int) -> tuple[np.ndarray, float, tuple[float, float]]:
    """Resize keeping aspect into a ``size`` square padded with grey (114), as YOLO trains.

    Returns the padded image, the scale and the (x, y) padding, to map boxes back.

    >>> img, s, pad = letterbox(np.zeros((960, 1280, 3), np.uint8), 320)
    >>> img.shape, s, pad
    ((320, 320, 3), 0.25, (0.0, 40.0))
    """
    h, w = image.shape[:2]
    s = min(size / h, size / w)
    nw, nh = int(round(w * s)), int(round(h * s))
    resized = cv2.resize(image, (nw, nh), interpolation=cv2.INTER_AREA if s < 1 else cv2.INTER_LINEAR)
    out = np.full((size, size, 3), 114, np.uint8)
    px, py = (size - nw) / 2, (size - nh) / 2
    top, left = int(round(py - 0.1)), int(round(px - 0.1))
    out[top:top + nh, left:left + nw] = resized
    return out, s, (float(left), float(top))


def network_input(images: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Same-sized BGR uint8 images (H, W, 3) as one float32 batch (N, 3, H, W) of RGB in 0-1.

    Why: the networks take RGB planes; writing each plane straight into the batch takes about
    half the time of numpy's transpose-then-copy on a 960 px letterbox (3 ms against 6), with
    the same float values. A stacked array (N, H, W, 3), as the crops are, goes plane by plane
    over the whole batch.

    >>> network_input([np.full((2, 3, 3), (0, 51, 255), np.uint8)])[0, :, 0, 0].tolist()
    [1.0, 0.20000000298023224, 0.0]
    """
    batch = np.empty((len(images), 3, *images[0].shape[:2]), np.float32)
    scale = np.float32(255.0)
    if isinstance(images, np.ndarray):
        for plane in range(3):
            np.divide(images[..., 2 - plane], scale, out=batch[:, plane])
        return batch
    for i, image in enumerate(images):
        for plane in range(3):
            np.divide(image[:, :, 2 - plane], scale, out=batch[i, plane])
    return batch


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def read_model_json(folder: Path) -> dict[str, Any]:
    """The ``model.json`` of a model folder, ``{}`` when there is none.

    >>> read_model_json(MODELS_DIR)["format"]
    'tiplu-corners-v1'
    """
    path = folder / INFO_FILE
    if not path.is_file():
        return {}
    try:
        info = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ModelError(f"{path}: not readable JSON ({error}); export the model again") from None
    if not isinstance(info, dict):
        raise ModelError(f"{path}: expected a JSON object with the model's settings")
    return info


def _model_location(model_path: str | os.PathLike[str] | None) -> tuple[Path, Path]:
    """The given path (default ``$TIPLU_MODEL``, else ``models/``) and its model folder."""
    path = Path(model_path or os.environ.get("TIPLU_MODEL") or MODELS_DIR)
    return path, (path.parent if path.suffix == ".onnx" else path)


def model_folder(model_path: str | os.PathLike[str] | None = None) -> Path:
    """The model folder a model path names (default ``$TIPLU_MODEL``, else ``models/``).

    >>> model_folder("runs/candidate/corners.onnx"), model_folder("runs/candidate")
    (PosixPath('runs/candidate'), PosixPath('runs/candidate'))
    """
    return _model_location(model_path)[1]


def _read_info(folder: Path) -> ModelInfo:
    """The settings of a model folder's ``model.json``; a :class:`ModelError` naming the key when one is unusable.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / INFO_FILE).write_text('{"crop_turns": ["x"]}')
    >>> _read_info(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    vision.detector.ModelError: .../model.json: "crop_turns" must be a list of numbers, not ['x']
    """
    info = read_model_json(folder)
    classes: tuple[str, ...] = tuple(CLASS_NAMES)
    if (folder / "classes.txt").is_file():
        classes = tuple(c.strip() for c in (folder / "classes.txt").read_text().splitlines() if c.strip())

    def is_number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    def number(key: str, default: float, kind: type = float) -> Any:
        value = info.get(key, default)
        if not is_number(value):
            raise ModelError(f"{folder / INFO_FILE}: {json.dumps(key)} must be a number, not {value!r}")
        return kind(value)

    turns = info.get("crop_turns", [0.0])
    if not isinstance(turns, list) or not all(is_number(t) for t in turns):
        raise ModelError(f"{folder / INFO_FILE}: \"crop_turns\" must be a list of numbers, not {turns!r}")
    members = info.get("classifiers", [CLASSIFIER_FILE])
    if (not isinstance(members, list) or not members
            or not all(isinstance(m, str) and m.endswith(".onnx") and Path(m).name == m for m in members)):
        raise ModelError(f"{folder / INFO_FILE}: \"classifiers\" must list .onnx file names in the model folder, "
                         f"the first being {CLASSIFIER_FILE}, not {members!r}")
    if members[0] != CLASSIFIER_FILE:
        raise ModelError(f"{folder / INFO_FILE}: \"classifiers\" must start with {CLASSIFIER_FILE}, not {members[0]!r}")
    orientation = info.get("orientation")
    if orientation is not None and (not isinstance(orientation, str) or not orientation.endswith(".onnx")
                                    or Path(orientation).name != orientation):
        raise ModelError(f"{folder / INFO_FILE}: \"orientation\" must name an .onnx file in the model folder "
                         f"({ORIENTATION_FILE}), not {orientation!r}")
    imgsz = number("imgsz", 320, int)
    views = _views(info, folder)
    return ModelInfo(imgsz=imgsz, max_imgsz=max(imgsz, number("max_imgsz", imgsz, int)),
                     crop_w=number("crop_w", CROP_W, int), crop_h=number("crop_h", CROP_H, int),
                     crop_margin=number("crop_margin", CROP_MARGIN), nms_iou=number("nms_iou", NMS_IOU),
                     scale_split=number("scale_split", SCALE_SPLIT), classes=classes,
                     big_share=number("big_share", 0.5), crop_turns=tuple(float(t) for t in turns) or (0.0,),
                     tile_below=number("tile_below", 0.0), classifiers=tuple(members), orientation=orientation,
                     views=views, look_window=max(0.0, number("look_window", 0.0)),
                     look_size=max(32, number("look_size", LOOK_SIZE, int)))


def _views(info: dict[str, Any], folder: Path) -> tuple[str, ...]:
    """``model.json``'s ``"views"``, or v0.8.4's ``"mirror_view"`` (true: the mirror alone); never both."""
    views = info.get("views")
    if views is None:
        mirror = info.get("mirror_view", False)
        if not isinstance(mirror, bool):
            raise ModelError(f"{folder / INFO_FILE}: \"mirror_view\" must be true or false, not {mirror!r}")
        return ("mirror",) if mirror else ()
    if "mirror_view" in info:
        raise ModelError(f"{folder / INFO_FILE}: give \"views\" alone; \"mirror_view\" is its older spelling")
    if not isinstance(views, list) or not all(v in VIEW_FLIPS for v in views) or len(set(views)) < len(views):
        raise ModelError(f"{folder / INFO_FILE}: \"views\" must list distinct views from {list(VIEW_FLIPS)}, "
                         f"not {views!r}")
    return tuple(views)


class CardDetector:
    """Card-corner detector over ONNX Runtime; build once, call :meth:`detect` per photo.

    ``model_path`` is a model folder (holding ``corners.onnx``, ``corner_classifier.onnx``,
    ``classes.txt`` and ``model.json``) or a detector ``.onnx`` file next to them. Default:
    ``$TIPLU_MODEL`` if set, else the shipped ``models/`` folder. ``tta`` also classifies
    each crop turned 180 degrees (indices are printed both ways up) and averages the two.
    ``spin`` lets ONNX Runtime's threads spin between runs, as they do by default: off, because
    a photo takes turns between four networks, each with its own threads, and those that spin
    after their run take the cores from the next (detect 1.4x slower on 2 cores, session 21;
    ``bench/bench_pipeline.py`` times both).

    >>> CardDetector("/nonexistent")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    vision.detector.ModelError: /nonexistent: no corners.onnx found; pass the models/ folder or set TIPLU_MODEL
    """

    def __init__(self, model_path: str | os.PathLike[str] | None = None, *, imgsz: int | None = None,
                 threads: int | None = None, tta: bool = True, spin: bool = False) -> None:
        path, folder = _model_location(model_path)
        det_file = path if path.suffix == ".onnx" else folder / DETECTOR_FILE
        if not det_file.is_file():
            raise ModelError(f"{path}: no {DETECTOR_FILE} found; pass the models/ folder or set TIPLU_MODEL")
        import onnxruntime as ort

        opts = ort.SessionOptions()
        if threads:
            opts.intra_op_num_threads = threads
        opts.log_severity_level = 3
        opts.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        self.info = _read_info(folder)
        try:
            self.calibration = Calibration.from_model_json(read_model_json(folder))
        except CalibrationError as error:
            raise ModelError(f"{folder}: {error}") from None
        self.imgsz = imgsz  # None: chosen per photo by input_sizes()
        self._det = ort.InferenceSession(str(det_file), opts, providers=["CPUExecutionProvider"])
        self._det_input = self._det.get_inputs()[0].name
        #: Stage 2's ONNX sessions and their input names; none for a one-stage (53-class) detector.
        self._members: list[tuple[Any, str]] = []
        if (folder / CLASSIFIER_FILE).is_file():
            for member in self.info.classifiers:
                if not (folder / member).is_file():
                    raise ModelError(f"{folder / INFO_FILE}: \"classifiers\" names {member}, which is not in {folder}")
                session = ort.InferenceSession(str(folder / member), opts, providers=["CPUExecutionProvider"])
                takes = session.get_inputs()[0].shape[2:]
                if all(isinstance(n, int) for n in takes) and tuple(takes) != (self.info.crop_h, self.info.crop_w):
                    raise ModelError(f"{folder / INFO_FILE}: \"crop_w\" x \"crop_h\" is {self.info.crop_w}x"
                                     f"{self.info.crop_h}, but {member} takes {takes[1]}x{takes[0]} crops; "
                                     "export the model again")
                self._members.append((session, session.get_inputs()[0].name))
        self._orientation: tuple[Any, str] | None = None
        if self.info.orientation is not None:
            if not (folder / self.info.orientation).is_file():
                raise ModelError(f"{folder / INFO_FILE}: \"orientation\" names {self.info.orientation}, "
                                 f"which is not in {folder}")
            session = ort.InferenceSession(str(folder / self.info.orientation), opts, providers=["CPUExecutionProvider"])
            self._orientation = (session, session.get_inputs()[0].name)
        self.classes = self.info.classes
        self.tta = tta

    def input_sizes(self, height: int, width: int) -> tuple[int, ...]:
        """The detector input sizes for a photo: ``imgsz``, and a bigger pass for a big photo.

        Stage 1 was trained on corner indices about 10-70 px tall at its input, so one size
        cannot serve both a close photo of one card (huge corners) and a whole table at
        1280 px (small ones): the photo is read at ``imgsz`` of ``model.json`` and, when
        half its long side is bigger, again at ``big_share`` of its long side (a multiple
        of 32, at most ``max_imgsz``); :meth:`_stage1` takes each corner from one of the two
        passes. An ``imgsz`` given to the constructor (``--imgsz``) is the only size.

        >>> det = CardDetector()
        >>> det.input_sizes(640, 640), det.input_sizes(960, 1280), det.input_sizes(768, 1024)
        ((320,), (320, 960), (320, 768))
        """
        if self.imgsz:
            return (self.imgsz,)
        long_side = max(height, width)
        if min(32 * round(long_side / 64), self.info.max_imgsz) <= self.info.imgsz:
            return (self.info.imgsz,)
        return (self.info.imgsz, min(32 * round(long_side * self.info.big_share / 32), self.info.max_imgsz))

    def _stage1(self, image_bgr: np.ndarray, conf: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Boxes (photo pixels), best score and best class (or 0 when class-agnostic), all sizes.

        With two sizes each corner is taken from one pass only, by its size: a box under
        ``scale_split`` px (long side, at a big input of twice ``imgsz``, and in proportion
        at a bigger one) from the big pass, a bigger one from the small pass. Both passes
        see most corners, and their boxes differ too much for NMS to merge them, so keeping
        both would count one corner twice. When the photo is tiled (:meth:`tile_scale`), the
        corners under ``tile_below`` px at the big pass come from the tiles instead. With
        ``views`` the pass at ``imgsz`` also reads the photo mirrored or upside down (:meth:`_stage1_at`).
        """
        h, w = image_bgr.shape[:2]
        sizes = self.input_sizes(h, w)
        found = [self._stage1_at(image_bgr, conf, size, self.info.views if size == self.info.imgsz else ())
                 for size in sizes]
        if len(found) > 1:
            big = sizes[-1] / max(h, w)  # photo px -> big-input px
            split = self.info.scale_split * max(1.0, sizes[-1] / (2 * self.info.imgsz))
            for k, (boxes, scores, cls) in enumerate(found):
                side = long_sides(boxes) * big
                keep = side >= split if k == 0 else side < split
                found[k] = (boxes[keep], scores[keep], cls[keep])
            big_sides = long_sides(found[-1][0]) * big
            scale = self.tile_scale(h, w, big_sides)
            if scale:
                tiled = self._stage1_tiled(image_bgr, conf, scale)
                from_tiles = long_sides(tiled[0]) * big < self.info.tile_below
                found[-1] = tuple(v[big_sides >= self.info.tile_below] for v in found[-1])
                found.append(tuple(v[from_tiles] for v in tiled))
        boxes, scores, cls = (np.concatenate(parts) for parts in zip(*found))
        return boxes, scores, cls

    def tile_scale(self, height: int, width: int, big_sides: np.ndarray) -> float | None:
        """The scale of a tiled pass for a big photo of small corners, or ``None`` for no tiles.

        ``big_sides`` are the long sides (px at the big pass) of the corners the big pass
        found. A 12-megapixel photo of a whole table is read at most at ``max_imgsz`` (960 px),
        where its corners can shrink under the sizes stage 1 finds. When at least a third of
        the corners found are under ``tile_below`` px, or none were found in a photo over
        twice ``max_imgsz``, the photo is read again in tiles of ``max_imgsz``, scaled so that
        those corners come out about :data:`TILE_CORNER` px (never above the photo's own
        pixels, at most :data:`MAX_TILES` tiles). It is not worth it under 1.5 times the
        big pass's scale: a 1280 x 960 photo is never tiled.

        >>> det = CardDetector()
        >>> det.tile_scale(960, 1280, np.array([10.0, 12.0])) is None     # no room to gain
        True
        >>> det.tile_scale(3000, 4000, np.array([30.0, 24.0, 20.0, 8.0])) is None  # mostly big enough
        True
        >>> round(det.tile_scale(3000, 4000, np.array([8.0, 8.0, 30.0])), 2)  # 8 px at 960 -> 28
        0.84
        """
        limit = self.info.tile_below
        long_side = max(height, width)
        big_size = self.input_sizes(height, width)[-1]
        if limit <= 0 or long_side < 1.5 * big_size:
            return None
        small = big_sides[big_sides < limit]
        if len(small):
            if 3 * len(small) < len(big_sides):
                return None
            scale = min(1.0, TILE_CORNER / (float(np.median(small)) * long_side / big_size))
        elif len(big_sides) == 0 and long_side >= 2 * self.info.max_imgsz:
            scale = 2 * self.info.max_imgsz / long_side
        else:
            return None
        tile, overlap = self.info.max_imgsz, TILE_OVERLAP
        while len(tile_starts(round(width * scale), tile, overlap)) * len(
                tile_starts(round(height * scale), tile, overlap)) > MAX_TILES:
            scale *= 0.95
        return scale if scale * long_side >= 1.5 * big_size else None

    def _stage1_tiled(self, image_bgr: np.ndarray, conf: float,
                      scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 1 on tiles of the photo scaled by ``scale``; boxes in photo px.

        Tiles overlap by three corners' length, so a corner cut by one tile's inner edge lies
        whole in its neighbour: boxes touching an inner edge are dropped, and the duplicates
        of the overlaps are merged later by NMS with all the other boxes.
        """
        h, w = image_bgr.shape[:2]
        sw, sh = round(w * scale), round(h * scale)
        scaled = cv2.resize(image_bgr, (sw, sh), interpolation=cv2.INTER_AREA)
        tile, overlap = self.info.max_imgsz, TILE_OVERLAP
        parts = []
        for y0 in tile_starts(sh, tile, overlap):
            for x0 in tile_starts(sw, tile, overlap):
                boxes, scores, cls = self._stage1_window(scaled, (x0, y0, x0 + tile, y0 + tile), conf, tile)
                parts.append((boxes / scale, scores, cls))
        boxes, scores, cls = (np.concatenate(p) for p in zip(*parts))
        return boxes, scores, cls

    def _stage1_window(self, image_bgr: np.ndarray, window: tuple[int, int, int, int], conf: float,
                       size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 1 at ``size`` on one window (x0, y0, x1, y1 px, cut to the image) of ``image_bgr``; boxes in
        ``image_bgr``'s px, but for those touching one of the window's inner edges (a corner cut there, which
        lies whole in a neighbouring tile or window)."""
        height, width = image_bgr.shape[:2]
        x0, y0 = max(0, window[0]), max(0, window[1])
        x1, y1 = min(width, window[2]), min(height, window[3])
        boxes, scores, cls = self._stage1_at(image_bgr[y0:y1, x0:x1], conf, size)
        cut = (((boxes[:, 0] <= 1) & (x0 > 0)) | ((boxes[:, 1] <= 1) & (y0 > 0))
               | ((boxes[:, 2] >= x1 - x0 - 1) & (x1 < width)) | ((boxes[:, 3] >= y1 - y0 - 1) & (y1 < height)))
        return boxes[~cut] + [x0, y0, x0, y0], scores[~cut], cls[~cut]

    def _stage1_at(self, image_bgr: np.ndarray, conf: float, size: int,
                   views: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Stage 1 at one input size, on the photo and on each of ``views`` (:data:`VIEW_FLIPS`;
        :meth:`_stage1` asks for them).

        Why: another look at the photo mirrored or upside down boxes corners the first scored
        too faintly (v0.8.4 and v0.8.5 measured it on real close-ups; every card's second index
        is printed upside down, which the turned look sees the right way up). All the views'
        boxes go to the one NMS of :meth:`detect`, which keeps the surest box of a corner
        several views found. Only the pass at ``imgsz`` (close-ups, and a table's big corners)
        looks more than once: mirrored at the big pass too, the light-on-dark held-out tables
        lost three exact photos and two verdicts to extra boxes (session 19), and tiles would
        cost twice as much for each view. The looks go to the network as one batch.
        """
        height, width = image_bgr.shape[:2]
        flips = [(False, False)] + [VIEW_FLIPS[name] for name in views]
        seen = [image_bgr if not (fx or fy) else cv2.flip(image_bgr, -1 if fx and fy else (1 if fx else 0))
                for fx, fy in flips]
        boxed = [letterbox(look, size) for look in seen]
        outs = self._det.run(None, {self._det_input: network_input([lb for lb, _, _ in boxed])})[0]
        parts = []
        for out, (_, s, pad), (fx, fy) in zip(outs, boxed, flips):
            boxes, scores, cls = self._decode(out, conf, s, pad, width, height)
            parts.append((flipped_boxes(boxes, width, height, fx, fy), scores, cls))
        boxes, scores, cls = (np.concatenate(p) for p in zip(*parts))
        return boxes, scores, cls

    @staticmethod
    def _decode(out: np.ndarray, conf: float, s: float, pad: tuple[float, float], width: int,
                height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Boxes (photo px), score and class over ``conf`` from one image's detector output."""
        if out.shape[0] > out.shape[1] and out.shape[1] != 6:
            out = out.T
        if out.shape[1] == 6 and out.shape[0] != 6:  # NMS-free export: (N, x1 y1 x2 y2 score cls)
            keep = out[:, 4] >= conf
            boxes, scores, cls = out[keep, :4].copy(), out[keep, 4], out[keep, 5].astype(np.int64)
        else:
            probs = out[4:].T
            cls = probs.argmax(1)
            scores = probs[np.arange(len(cls)), cls]
            keep = scores >= conf
            xywh, scores, cls = out[:4].T[keep], scores[keep], cls[keep]
            boxes = np.stack([xywh[:, 0] - xywh[:, 2] / 2, xywh[:, 1] - xywh[:, 3] / 2,
                              xywh[:, 0] + xywh[:, 2] / 2, xywh[:, 1] + xywh[:, 3] / 2], axis=1)
        px, py = pad
        boxes = (boxes - [px, py, px, py]) / s
        boxes = np.clip(boxes, 0, [width, height, width, height])
        return boxes, scores, cls

    def classify(self, image_bgr: np.ndarray, boxes: np.ndarray) -> np.ndarray:
        """Class probabilities (N, 54: the 53 cards then "not a corner") for pixel boxes.

        Each box is cut upright and, when it is squarish (long side under
        :data:`TURN_BELOW_ASPECT` times the short one, as the box of an index lying diagonally
        is), at every other turn of ``model.json``'s ``crop_turns`` (:func:`turned_crop`); it
        keeps the view whose surest card is surest. An upright or sideways index has a box of
        about 1:1.6 and is cut upright only.
        """
        if not self._members:
            raise ModelError(f"no {CLASSIFIER_FILE} next to the detector; a one-class detector needs it")
        if len(boxes) == 0:
            return np.zeros((0, len(self.classes) + 1), np.float32)
        size = (self.info.crop_w, self.info.crop_h)
        probs = self.classify_crops(np.stack([crop_corner(image_bgr, b, self.info.crop_margin, size) for b in boxes]))
        sides = np.sort(np.stack([boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]], 1), 1)
        squarish = np.flatnonzero(sides[:, 1] < TURN_BELOW_ASPECT * np.maximum(sides[:, 0], 1e-6))
        for turn in self.info.crop_turns:
            if not turn or len(squarish) == 0:
                continue
            view = self.classify_crops(np.stack([turned_crop(image_bgr, boxes[i], turn, self.info.crop_margin, size)
                                                 for i in squarish]))
            surer = view[:, :len(self.classes)].max(1) > probs[squarish, :len(self.classes)].max(1)
            probs[squarish[surer]] = view[surer]
        return probs

    def classify_crops(self, crops: np.ndarray) -> np.ndarray:
        """Class probabilities (N, 54) for corner crops already cut (N, crop_h, crop_w, 3 BGR uint8)."""
        if not self._members:
            raise ModelError(f"no {CLASSIFIER_FILE} next to the detector; a one-class detector needs it")
        blob = network_input(crops)
        if self.tta:  # the corner turned 180 degrees too
            blob = np.ascontiguousarray(np.concatenate([blob, blob[:, :, ::-1, ::-1]]))
        probs = np.mean([_softmax(session.run(None, {name: blob})[0]) for session, name in self._members], axis=0)
        return (probs[:len(crops)] + probs[len(crops):]) / 2 if self.tta else probs

    def detect(self, image_bgr: np.ndarray, conf: float = 0.25) -> list[Corner]:
        """Corners in a BGR photo (as ``cv2.imread`` gives), best first.

        ``conf`` applies to the final confidence (box score times class probability).
        """
        if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
            raise ModelError("detect() needs a colour BGR image (H, W, 3), e.g. from cv2.imread")
        boxes, scores, cls = self._stage1(image_bgr, min(conf, 0.1) if self._members else conf)
        if len(boxes) == 0:
            return []
        n_det_classes = int(cls.max()) + 1 if len(cls) else 1
        keep = nms(boxes, scores, self.info.nms_iou)[:100]
        if self._members and n_det_classes <= 1:
            return self._named(image_bgr, boxes[keep], scores[keep], conf)
        return self._corners(image_bgr, boxes[keep], scores[keep], cls[keep], None)

    def _named(self, image_bgr: np.ndarray, boxes: np.ndarray, scores: np.ndarray, conf: float) -> list[Corner]:
        """Stage 1's boxes (px) named by stage 2: the corners whose card (not "not a corner") reaches ``conf``
        as box score times class probability, best first (:meth:`_corners`)."""
        probs = self.classify(image_bgr, boxes)
        cls = probs.argmax(1)
        scores = scores * probs[np.arange(len(cls)), cls]
        ok = (cls < len(self.classes)) & (scores >= conf)
        return self._corners(image_bgr, boxes[ok], scores[ok], cls[ok], probs[ok])

    def _corners(self, image_bgr: np.ndarray, boxes: np.ndarray, scores: np.ndarray, cls: np.ndarray,
                 probs: np.ndarray | None) -> list[Corner]:
        """:class:`Corner` objects, best first, with their alternatives (from stage 2's ``probs``, if any) and
        the angle each index faces (none for a box whose crop reaches off the photo)."""
        order = np.argsort(-scores)
        angles = self.angles(image_bgr, boxes)
        height, width = image_bgr.shape[:2]
        return [Corner(self.classes[int(cls[i])], round(float(scores[i]), 4), _pixel_box(boxes[i]),
                       () if probs is None else top_alternatives(probs[i], int(cls[i]), self.classes),
                       0.0 if probs is None else round(float(probs[i, int(cls[i])]), 4),
                       round(float(angles[i]), 1) if angles is not None and inside_photo(boxes[i], width, height)
                       else None)
                for i in order]

    def look_around(self, image_bgr: np.ndarray, corners: Sequence[Corner], conf: float,
                    known: Sequence[Sequence[float]] = (), known_iou: float = 0.3) -> list[Corner]:
        """Corners stage 1 finds in windows about ``corners`` (the reading's), each window read on its own,
        but for those on a ``known`` box (their centre inside it, or overlapping it at ``known_iou``).

        Why: most cards a whole table loses are copies stacked under a read card of their name,
        whose index the photo's own passes box faintly or not at all (session 24). Read alone, a
        window of ``look_window`` index sides around a read corner (``model.json``; 0: no windows),
        at ``look_size`` px, shows the indices at about the size stage 1 was trained on, and it
        finds such a copy's index more often than the passes over the whole photo (session 25:
        more of the test tables' missed cards pointed at). The corners are places to look, never
        cards: read as cards they also box one index twice as often as they find a copy. Windows
        of about one place and size are read once (:data:`LOOK_MERGE`, surer corners first); a box
        cut by a window's inner edge is left out, and what is left goes through one NMS; those on no
        ``known`` box are named as :meth:`detect` names a corner (:meth:`_named`), down to ``conf``, best first.
        """
        window = self.info.look_window
        if not window or not corners or not self._members:
            return []
        height, width = image_bgr.shape[:2]
        chosen: list[tuple[float, float, float]] = []
        for corner in sorted(corners, key=lambda c: -c.confidence):
            x0, y0, x1, y1 = corner.box
            half = window * max(x1 - x0, y1 - y0) / 2
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if not any(abs(cx - x) < LOOK_MERGE * h and abs(cy - y) < LOOK_MERGE * h and 0.7 < half / h < 1.4
                       for x, y, h in chosen):
                chosen.append((cx, cy, half))
        parts = []
        for cx, cy, half in chosen:
            x0, y0 = int(max(0, cx - half)), int(max(0, cy - half))
            x1, y1 = int(min(width, cx + half)), int(min(height, cy + half))
            if x1 - x0 >= 8 and y1 - y0 >= 8:
                parts.append(self._stage1_window(image_bgr, (x0, y0, x1, y1), conf, self.info.look_size)[:2])
        if not parts:
            return []
        boxes, scores = (np.concatenate(p) for p in zip(*parts))
        keep = nms(boxes, scores, self.info.nms_iou)
        boxes, scores = boxes[keep], scores[keep]
        if len(known) and len(boxes):
            known_boxes = np.asarray(known, dtype=float).reshape(-1, 4)
            centres = (boxes[:, :2] + boxes[:, 2:]) / 2
            on_known = ((known_boxes[None, :, 0] <= centres[:, None, 0]) & (centres[:, None, 0] <= known_boxes[None, :, 2])
                        & (known_boxes[None, :, 1] <= centres[:, None, 1])
                        & (centres[:, None, 1] <= known_boxes[None, :, 3])).any(1)
            new = ~on_known & (box_iou(boxes, known_boxes).max(1) < known_iou)
            boxes, scores = boxes[new], scores[new]
        return self._named(image_bgr, boxes, scores, conf) if len(boxes) else []

    def angles(self, image_bgr: np.ndarray, boxes: np.ndarray) -> np.ndarray | None:
        """Which way the index in each pixel box faces (degrees, :mod:`vision.orientation`); None without the network.

        :meth:`detect` leaves the angle out (None) for a box whose crop reaches off the photo
        (:func:`~vision.orientation.inside_photo`).
        """
        if self._orientation is None:
            return None
        if len(boxes) == 0:
            return np.zeros(0)
        gray = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        session, name = self._orientation
        crops = np.stack([orientation_crop(gray, b) for b in boxes])
        return output_angles(session.run(None, {name: orientation_input(crops)})[0])

    def cards(self, image_bgr: np.ndarray, conf: float = 0.25) -> list[str]:
        """Distinct card names seen in a photo, sorted by class order (a quick summary).

        >>> CardDetector().cards(np.zeros((100, 100, 3), np.uint8))   # doctest: +SKIP
        []
        """
        found = {c.card for c in self.detect(image_bgr, conf)}
        return [n for n in self.classes if n in found]


#: Detector backends by the ``format`` their ``model.json`` names; each is built from the
#: model path (folder or file) and an optional fixed input size.
BACKENDS: dict[str, Callable[..., Detector]] = {"tiplu-corners-v1": CardDetector}
DEFAULT_FORMAT = "tiplu-corners-v1"


def load_detector(model_path: str | os.PathLike[str] | None = None, *, imgsz: int | None = None) -> Detector:
    """The detector for a model folder (or its detector file), by its ``model.json`` format.

    Default: ``$TIPLU_MODEL`` if set, else the shipped ``models/``. A folder without
    ``model.json``, or without a ``format`` in it, is taken as the shipped kind.

    >>> type(load_detector()).__name__
    'CardDetector'
    >>> import tempfile; folder = tempfile.mkdtemp()
    >>> _ = (Path(folder) / "model.json").write_text('{"format": "ncnn-obb"}')
    >>> load_detector(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    vision.detector.ModelError: .../model.json: format 'ncnn-obb' is not one tiplu runs (known: tiplu-corners-v1)
    """
    _, folder = _model_location(model_path)
    kind = str(read_model_json(folder).get("format") or DEFAULT_FORMAT)
    backend = BACKENDS.get(kind)
    if backend is None:
        raise ModelError(f"{folder / INFO_FILE}: format '{kind}' is not one tiplu runs "
                         f"(known: {', '.join(BACKENDS)})")
    return backend(model_path, imgsz=imgsz)
