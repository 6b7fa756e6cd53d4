"""Find card-corner indices in a photo with ONNX Runtime only (no torch, no Ultralytics).

Every backend is a :class:`Detector`: from a BGR photo to :class:`~vision.geometry.Corner` boxes,
named, with the settings and calibration its model folder brought. :func:`load_detector` builds the
backend that a model folder's ``model.json`` names (``"format"``); a second backend (an oriented-box
model, NCNN on a Pi) is a new class added to :data:`BACKENDS`.

The shipped backend, :class:`CardDetector` (format ``tiplu-corners-v1``), runs three networks:

1. ``corners.onnx``: a YOLO11n that boxes every corner index as one class. Where it looks is
   :mod:`vision.passes` (the photo at two sizes, its mirrored and upside-down views, tiles of a
   12-megapixel photo; windows about the cards read); all boxes go to one class-agnostic NMS
   (``nms_iou``: three decks put identical cards side by side, so boxes overlapping less are kept).
2. ``corner_classifier.onnx`` (and the other networks ``"classifiers"`` lists, averaged): a small CNN
   naming the card (53 classes + "not a corner") from a crop of each box cut from the full-resolution
   photo (``crop_w`` x ``crop_h``; a squarish box also at ``crop_turns``).
3. ``corner_orientation.onnx`` (``"orientation"``): which way each index faces (:mod:`vision.orientation`),
   for pairing a card's two indices (:mod:`vision.pairing`).

A single-stage model (one YOLO with 53 classes) also works: the classifier is then skipped.

>>> det = load_detector()                                     # doctest: +SKIP
>>> [c.card for c in det.detect(cv2.imread("photo.jpg"))]     # doctest: +SKIP
['7H', '7H', 'KS']
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import cv2
import numpy as np

from vision.calibration import Calibration, CalibrationError
from vision.geometry import MAX_ALTERNATIVES, Corner, box_iou, centres_inside, nms
from vision.orientation import inside_photo, orientation_crop, orientation_input, output_angles
from vision.passes import (Boxes, LookAroundPass, PhotoContext, input_sizes, photo_passes, read_looks,
                           read_passes)
from vision.settings import (CLASSIFIER_FILE, DETECTOR_FILE, INFO_FILE, ModelError, ReaderSettings, SettingsError,
                             read_model_json, read_settings)

MODELS_DIR = Path(__file__).resolve().parent.parent / "models"
#: The shipped reader's settings (each value defined once, in :class:`vision.settings.ReaderSettings`): the crop
#: a caller without a model folder's own settings cuts, such as training's crops of photos.
SHIPPED = ReaderSettings()
SHIPPED_CROP = (SHIPPED.crop_w, SHIPPED.crop_h)
#: Height over width of an upright corner index (rank over suit), for crops of turned ones.
INDEX_ASPECT = 1.6
#: A crop bigger than this many crop heights is shrunk first (INTER_AREA), so thin glyph strokes do not alias.
SHRINK_ABOVE = 2.5
#: ... to this many crop heights.
SHRINK_TO = 1.5
#: How far about a box a turned crop reaches (box long sides), and the pixels it adds.
TURN_REACH = 1.6
TURN_PAD = 4
#: Boxes squarer than this (long side over short) may hold an index lying diagonally (1:1.6 upright, 1:1 at 45
#: degrees, about 1:1.13 at 30): only they are also cut at ``crop_turns``.
TURN_BELOW_ASPECT = 1.35
#: Stage 1 passes boxes down to this score (or the reading's ``conf`` if lower) on to stage 2, which names them.
STAGE1_FLOOR = 0.1
#: At most this many boxes (the surest) go from NMS to stage 2.
MAX_BOXES = 100
#: The grey YOLO letterboxes with.
LETTERBOX_GREY = 114


class Detector(Protocol):
    """A card-corner detector, as the reader (:mod:`vision.pipeline`), ``tiplu detect`` and the web app use it.

    Implementations hold no per-photo state (or guard it), so one instance serves every
    thread of the web server.
    """

    #: How the model folder says to read a photo (:mod:`vision.settings`).
    settings: ReaderSettings
    #: When a card is doubtful and which faint corners count (:mod:`vision.calibration`).
    calibration: Calibration

    def detect(self, image_bgr: np.ndarray, conf: float = 0.25) -> list[Corner]:
        """Corners found in a BGR photo (as ``cv2.imread`` gives), best first, down to ``conf``."""
        ...

    def look_around(self, image_bgr: np.ndarray, corners: Sequence[Corner], conf: float,
                    known: Sequence[Sequence[float]] = (), known_iou: float = 0.3) -> list[Corner]:
        """Corners found about ``corners`` (:class:`vision.passes.LookAroundPass`) that lie on no ``known``
        box; ``[]`` for a backend or model without the pass."""
        ...


def top_alternatives(probs: np.ndarray, chosen: int, classes: Sequence[str],
                     count: int = MAX_ALTERNATIVES) -> tuple[tuple[str, float], ...]:
    """The ``count`` likeliest card classes other than ``chosen``, with their probability.

    Classes past ``classes`` ("not a corner") are no card and never offered; a class
    under :data:`NOISE_BELOW` is noise and left out.

    >>> top_alternatives(np.array([0.7, 0.05, 0.2, 0.05]), 0, ["8D", "8H", "6D"])
    (('6D', 0.2), ('8H', 0.05))
    """
    order = np.argsort(-probs[:len(classes)], kind="stable")
    return tuple((classes[int(k)], round(float(probs[k]), 4)) for k in order
                 if int(k) != chosen and probs[k] >= NOISE_BELOW)[:count]


#: A class probability under this is noise, never offered as an alternative.
NOISE_BELOW = 0.005


def model_crop_size(folder: str | os.PathLike[str]) -> tuple[int, int]:
    """The crop size (w, h) a model folder's classifier takes (``crop_w``, ``crop_h``).

    Enrolment and "improve from corrections" fine-tune that classifier, so they cut their
    crops at its size.
    """
    settings = read_settings(Path(folder))
    return settings.crop_w, settings.crop_h


def model_classifiers(folder: str | os.PathLike[str]) -> tuple[str, ...]:
    """The stage-2 networks of a model folder (``model.json``'s ``"classifiers"``): enrolment and
    "improve from corrections" fine-tune each of them.

    >>> model_classifiers(MODELS_DIR)[0]
    'corner_classifier.onnx'
    """
    return read_settings(Path(folder)).classifiers


def crop_corner(image: np.ndarray, box: Sequence[float] | np.ndarray, margin: float = SHIPPED.crop_margin,
                size: tuple[int, int] = SHIPPED_CROP) -> np.ndarray:
    """A corner crop, portrait and ``size`` (w, h): the classifier's input (BGR uint8).

    The box (pixels x1, y1, x2, y2) grows by ``margin`` per side; a landscape box (a card
    lying sideways) is turned 90 degrees so that every crop is portrait. Training
    (:mod:`vision.training.fit.names`) uses this same function, so training and inference agree.

    >>> crop_corner(np.zeros((100, 100, 3), np.uint8), (10, 10, 40, 30)).shape
    (72, 48, 3)
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
    if max(w, h) > SHRINK_ABOVE * ch:
        f = SHRINK_TO * ch / max(w, h)
        small = cv2.resize(image, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        m = cv2.getAffineTransform(src * f, dst)
        image = small
    return cv2.warpAffine(image, m, (cw, ch), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def turned_crop(image: np.ndarray, box: Sequence[float] | np.ndarray, turn: float,
                margin: float = SHIPPED.crop_margin, size: tuple[int, int] = SHIPPED_CROP
                ) -> np.ndarray:
    """:func:`crop_corner` of the index inside ``box`` after turning the photo ``turn`` degrees about its centre.

    Why: stage 1's boxes are axis-aligned, so the box of an index lying at 30-60 degrees holds
    it diagonally, with neighbouring ink, and stage 2 reads it worse. Turned back, the index is upright again; its upright
    size is the rectangle of :data:`INDEX_ASPECT` whose turned bounding box fits ``box``.

    >>> turned_crop(np.zeros((100, 100, 3), np.uint8), (30, 30, 70, 70), 45).shape
    (72, 48, 3)
    """
    if not turn:
        return crop_corner(image, box, margin, size)
    x1, y1, x2, y2 = (float(v) for v in box)
    cx, cy, w, h = (x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1
    cos, sin = abs(np.cos(np.radians(turn))), abs(np.sin(np.radians(turn)))
    width = (w + h) / ((1 + INDEX_ASPECT) * (cos + sin))
    reach = int(max(w, h) * TURN_REACH) + TURN_PAD
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
    out = np.full((size, size, 3), LETTERBOX_GREY, np.uint8)
    px, py = (size - nw) / 2, (size - nh) / 2
    top, left = int(round(py - 0.1)), int(round(px - 0.1))
    out[top:top + nh, left:left + nw] = resized
    return out, s, (float(left), float(top))


def network_input(images: Sequence[np.ndarray] | np.ndarray) -> np.ndarray:
    """Same-sized BGR uint8 images (H, W, 3) as one float32 batch (N, 3, H, W) of RGB in 0-1.

    Why: the networks take RGB planes; writing each plane straight into the batch is about
    twice as fast as numpy's transpose-then-copy, with the same float values. A stacked array (N, H, W, 3), as the crops are, goes plane by plane
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


class CardDetector:
    """Card-corner detector over ONNX Runtime; build once, call :meth:`detect` per photo.

    ``model_path`` is a model folder (holding ``corners.onnx``, ``corner_classifier.onnx``,
    ``classes.txt`` and ``model.json``) or a detector ``.onnx`` file next to them. Default:
    ``$TIPLU_MODEL`` if set, else the shipped ``models/`` folder. ``imgsz`` fixes stage 1's only
    input size (no views, no big pass). ``tta`` also classifies each crop turned 180 degrees
    (indices are printed both ways up) and averages the two. ``spin`` lets ONNX Runtime's threads
    spin between runs, as they do by default: off, because a photo takes turns between four
    networks, each with its own threads, and those that spin after their run take the cores from
    the next (``bench/bench_pipeline.py`` times both).

    ``settings`` may be replaced (``dataclasses.replace``) to switch a pass off in a test.

    >>> CardDetector("/nonexistent")  # doctest: +IGNORE_EXCEPTION_DETAIL
    Traceback (most recent call last):
    ...
    vision.settings.ModelError: /nonexistent: no corners.onnx found; pass the models/ folder or set TIPLU_MODEL
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
        self.settings: ReaderSettings = read_settings(folder)
        try:
            self.calibration: Calibration = Calibration.from_model_json(read_model_json(folder))
        except CalibrationError as error:
            raise ModelError(f"{folder}: {error}") from None
        self.imgsz = imgsz  # None: chosen per photo by vision.passes.input_sizes
        self._det = ort.InferenceSession(str(det_file), opts, providers=["CPUExecutionProvider"])
        self._det_input = self._det.get_inputs()[0].name
        #: Stage 2's ONNX sessions and their input names; none for a one-stage (53-class) detector.
        self._members: list[tuple[Any, str]] = []
        if (folder / CLASSIFIER_FILE).is_file():
            for member in self.settings.classifiers:
                if not (folder / member).is_file():
                    raise ModelError(f"{folder / INFO_FILE}: \"classifiers\" names {member}, which is not in {folder}")
                session = ort.InferenceSession(str(folder / member), opts, providers=["CPUExecutionProvider"])
                takes = session.get_inputs()[0].shape[2:]
                if all(isinstance(n, int) for n in takes) and tuple(takes) != (self.settings.crop_h,
                                                                              self.settings.crop_w):
                    raise ModelError(f"{folder / INFO_FILE}: \"crop_w\" x \"crop_h\" is {self.settings.crop_w}x"
                                     f"{self.settings.crop_h}, but {member} takes {takes[1]}x{takes[0]} crops; "
                                     "export the model again")
                self._members.append((session, session.get_inputs()[0].name))
        self._orientation: tuple[Any, str] | None = None
        if self.settings.orientation is not None:
            if not (folder / self.settings.orientation).is_file():
                raise ModelError(f"{folder / INFO_FILE}: \"orientation\" names {self.settings.orientation}, "
                                 f"which is not in {folder}")
            session = ort.InferenceSession(str(folder / self.settings.orientation), opts,
                                           providers=["CPUExecutionProvider"])
            self._orientation = (session, session.get_inputs()[0].name)
        self.tta = tta

    @property
    def classes(self) -> tuple[str, ...]:
        """The card names of the classifier's outputs, in order."""
        return self.settings.classes

    def context(self, image_bgr: np.ndarray) -> PhotoContext:
        """What the passes know of a photo: it, the settings, and its input sizes."""
        height, width = image_bgr.shape[:2]
        return PhotoContext(image_bgr, self.settings, input_sizes(self.settings, height, width, self.imgsz))

    def stage1(self, images: Sequence[np.ndarray], size: int, conf: float) -> list[Boxes]:
        """Stage 1 on images letterboxed to ``size``, in one batch: each image's boxes (its px, clipped) over ``conf``."""
        boxed = [letterbox(image, size) for image in images]
        outs = self._det.run(None, {self._det_input: network_input([lb for lb, _, _ in boxed])})[0]
        return [Boxes(*self._decode(out, conf, s, pad, image.shape[1], image.shape[0]))
                for out, (_, s, pad), image in zip(outs, boxed, images)]

    def find_boxes(self, image_bgr: np.ndarray, conf: float) -> Boxes:
        """Stage 1's boxes of every photo pass (:func:`vision.passes.read_passes`), in the photo's px."""
        return read_passes(self, photo_passes(self.settings), self.context(image_bgr), conf)

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
        is), at every other turn of ``crop_turns`` (:func:`turned_crop`); it keeps the view
        whose surest card is surest. An upright or sideways index has a box of about 1:1.6 and
        is cut upright only.
        """
        if not self._members:
            raise ModelError(f"no {CLASSIFIER_FILE} next to the detector; a one-class detector needs it")
        if len(boxes) == 0:
            return np.zeros((0, len(self.classes) + 1), np.float32)
        settings = self.settings
        size = (settings.crop_w, settings.crop_h)
        probs = self.classify_crops(np.stack([crop_corner(image_bgr, b, settings.crop_margin, size) for b in boxes]))
        sides = np.sort(np.stack([boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]], 1), 1)
        squarish = np.flatnonzero(sides[:, 1] < TURN_BELOW_ASPECT * np.maximum(sides[:, 0], 1e-6))
        for turn in settings.crop_turns:
            if not turn or len(squarish) == 0:
                continue
            view = self.classify_crops(np.stack([turned_crop(image_bgr, boxes[i], turn, settings.crop_margin, size)
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
        """Corners in a BGR photo (as ``cv2.imread`` gives), best first: stage 1's passes, one NMS, then
        naming (stage 2) and orientation.

        ``conf`` applies to the final confidence (box score times class probability).
        """
        if image_bgr is None or image_bgr.ndim != 3 or image_bgr.shape[2] != 3:
            raise ModelError("detect() needs a colour BGR image (H, W, 3), e.g. from cv2.imread")
        found = self.find_boxes(image_bgr, min(conf, STAGE1_FLOOR) if self._members else conf)
        if found.count == 0:
            return []
        n_det_classes = int(found.cls.max()) + 1
        kept = found.where(nms(found.xyxy, found.scores, self.settings.nms_iou)[:MAX_BOXES])
        if self._members and n_det_classes <= 1:
            return self._named(image_bgr, kept.xyxy, kept.scores, conf)
        return self._corners(image_bgr, kept.xyxy, kept.scores, kept.cls, None)

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
        """Corners stage 1 finds in the windows of :class:`vision.passes.LookAroundPass` about ``corners``
        (the reading's), but for those on a ``known`` box (their centre inside it, or overlapping it at
        ``known_iou``): one NMS over the windows' boxes, then named as :meth:`detect` names a corner,
        down to ``conf``, best first. None where the pass is off.
        """
        if not self.settings.on(LookAroundPass.name) or not corners or not self._members:
            return []
        looks = LookAroundPass().around(self.context(image_bgr), corners)
        if not looks:
            return []
        found = Boxes.concat(read_looks(self, looks, conf))
        found = found.where(nms(found.xyxy, found.scores, self.settings.nms_iou))
        boxes, scores = found.xyxy, found.scores
        if len(known) and len(boxes):
            known_boxes = np.asarray(known, dtype=float).reshape(-1, 4)
            new = ~centres_inside(boxes, known_boxes) & (box_iou(boxes, known_boxes).max(1) < known_iou)
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


def load_detector(model_path: str | os.PathLike[str] | None = None, *, imgsz: int | None = None,
                  profile: str | None = None) -> Detector:
    """The detector for a model folder (or its detector file), by its ``model.json`` format.

    Default: ``$TIPLU_MODEL`` if set, else the shipped ``models/``. A folder without
    ``model.json``, or without a ``format`` in it, is taken as the shipped kind. ``profile``
    (default ``$TIPLU_PROFILE``, else the model's own passes) reads with one of
    :data:`vision.settings.PROFILES` (``"fast"`` on a small machine).

    >>> load_detector(profile="fast").settings.passes
    ('base', 'big', 'tiles')

    >>> type(load_detector()).__name__
    'CardDetector'
    >>> import tempfile; folder = tempfile.mkdtemp()
    >>> _ = (Path(folder) / "model.json").write_text('{"format": "ncnn-obb"}')
    >>> load_detector(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    vision.settings.ModelError: .../model.json: format 'ncnn-obb' is not one tiplu runs (known: tiplu-corners-v1)
    """
    _, folder = _model_location(model_path)
    kind = str(read_model_json(folder).get("format") or DEFAULT_FORMAT)
    backend = BACKENDS.get(kind)
    if backend is None:
        raise ModelError(f"{folder / INFO_FILE}: format '{kind}' is not one tiplu runs "
                         f"(known: {', '.join(BACKENDS)})")
    detector = backend(model_path, imgsz=imgsz)
    profile = profile or os.environ.get("TIPLU_PROFILE") or None
    if profile is not None:
        detector.settings = detector.settings.with_profile(profile)
    return detector

