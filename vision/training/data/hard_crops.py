"""Stage-2 training crops cut around stage 1's own boxes: the framing the classifier meets at run time.

:func:`vision.training.fit.names.build_crops` cuts crops around the *labelled* boxes, jittered.
At run time the classifier sees crops around *stage 1's* boxes instead, framed differently
(tighter or looser, shifted, more so on turned cards), and it must call stage 1's false
alarms (pips, court art, distractors) "not a corner". So this module runs a model folder's
stage 1 over labelled photos, exactly as :class:`~vision.detector.CardDetector` does (its
own input sizes, its NMS), and keeps:

- every box matched one to one to a label at IoU >= 0.5 (:func:`~vision.training.measure.evaluate.match_boxes`),
  as a crop of that label's card;
- the best-scoring boxes that overlap no label (IoU < 0.1 with every one) and score at least
  :data:`BACKGROUND_FLOOR`, as BACKGROUND crops, at most ``max_background`` per photo, unless
  their crop reaches past the photo's edge or the model's own classifier names them as a card
  labelled in the same photo. The real photos often label one corner of a card and not its
  other, or none cut by the frame (seen on real train: the second index of a J, 4 and 5 of
  hearts), and a box on such an unlabelled corner is no false alarm. The price: a pip the
  classifier takes for the card it belongs to is no BACKGROUND crop either.

Boxes in between (IoU 0.1-0.5, or a second box on an already matched corner) are left out:
neither a card nor clearly none. Crops are cut with :func:`~vision.detector.crop_corner` at
the model's margin and size, unaugmented; training adds its pixel augmentation each epoch.

    tiplu train stage1-crops runs/candidate data/real data/real_turned --out runs/hard.npz --turns 1
    tiplu train names data/real --extra-crops runs/hard.npz

>>> import tempfile
>>> crops, labels = np.zeros((2, 48, 32, 3), np.uint8), np.array([0, BACKGROUND])
>>> path = save_hard_crops(HardCrops(crops, labels, {"photos": 1}), Path(tempfile.mkdtemp()) / "h.npz")
>>> x, y = load_hard_crops([path]); x.shape, y.tolist(), read_hard_crops(path).summary
((2, 48, 32, 3), [0, 53], {'photos': 1})
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scorer import CLASS_NAMES
from vision.detector import CLASSIFIER_FILE, SHIPPED, CardDetector, ModelError, crop_corner, read_model_json
from vision.geometry import box_iou
from vision.training.data.dataset import BACKGROUND, DatasetError, iter_samples, read_sample
from vision.training.measure.evaluate import LOCATE_CONF, MATCH_IOU, match_boxes, stage1_boxes
from vision.training.data.turned import random_turn, turn_photo
from vision.training.fit.settings import TrainError

#: A box overlapping every label less than this is no corner at all (a BACKGROUND crop).
BACKGROUND_IOU = 0.1
#: Stage-1 score from which a false alarm becomes a BACKGROUND crop: the app's stage 1 keeps
#: boxes from 0.1 on (``CardDetector.detect``), so weaker ones never reach the classifier.
BACKGROUND_FLOOR = 0.1
#: BACKGROUND crops per photo at most (the best-scoring false alarms), so they do not swamp the cards.
MAX_BACKGROUND = 4
#: Share of a BACKGROUND crop's area (box and crop margin) that must lie on the photo.
ON_PHOTO = 0.97
#: Arrays every crops file holds.
ARRAYS = ("crops", "labels", "summary")


@dataclass(frozen=True)
class PhotoCrops:
    """One photo's crops, their labels (class index, :data:`BACKGROUND` for false alarms) and source boxes."""

    crops: np.ndarray
    labels: np.ndarray
    boxes: np.ndarray
    scores: np.ndarray

    @property
    def matched(self) -> int:
        return int((self.labels != BACKGROUND).sum())


@dataclass(frozen=True)
class HardCrops:
    """Crops of many photos, as one ``.npz`` file holds them, and a JSON-able summary."""

    crops: np.ndarray
    labels: np.ndarray
    summary: dict[str, Any]


def photo_crops(detector: CardDetector, image: np.ndarray, truth_boxes: np.ndarray, truth_labels: Sequence[int], *,
                conf: float = LOCATE_CONF, floor: float = BACKGROUND_FLOOR,
                max_background: int = MAX_BACKGROUND, on_photo: np.ndarray | None = None,
                crop_size: tuple[int, int] | None = None) -> PhotoCrops:
    """Crops of stage 1's boxes on one photo: matched ones named by their label, clear misses as BACKGROUND.

    ``truth_boxes`` are pixel boxes (x1, y1, x2, y2) and ``truth_labels`` their class indices.
    ``on_photo`` marks (non-zero) the pixels that show the photo, for a turned photo whose
    canvas corners are black fill; default: every pixel. The detector needs its classifier.
    ``crop_size`` (w, h) cuts the crops at another size than the model's classifier takes
    (for a campaign phase that trains stage 2 at a new crop size).
    """
    boxes, scores = stage1_boxes(detector, image, conf)
    truth_boxes = np.asarray(truth_boxes, float).reshape(-1, 4)
    picked = [(i, int(truth_labels[j])) for i, j in match_boxes(boxes, truth_boxes, MATCH_IOU)]
    overlap = box_iou(boxes, truth_boxes).max(axis=1) if len(truth_boxes) else np.zeros(len(boxes))
    info = detector.settings
    inside = np.ones(image.shape[:2], np.uint8) if on_photo is None else (on_photo > 0).astype(np.uint8)
    misses = [i for i in range(len(boxes)) if overlap[i] < BACKGROUND_IOU and scores[i] >= floor
              and share_on_photo(boxes[i], inside, info.crop_margin) >= ON_PHOTO]
    if misses:
        named = detector.classify(image, boxes[misses]).argmax(1)
        labelled = set(int(c) for c in truth_labels)
        misses = [i for i, k in zip(misses, named) if int(k) not in labelled]
    picked += [(i, BACKGROUND) for i in misses[:max_background]]  # stage1_boxes is best first
    w, h = crop_size or (info.crop_w, info.crop_h)
    crops = [crop_corner(image, boxes[i], info.crop_margin, (w, h)) for i, _ in picked]
    index = [i for i, _ in picked]
    return PhotoCrops(np.stack(crops) if crops else np.zeros((0, h, w, 3), np.uint8),
                      np.array([label for _, label in picked], np.int64), boxes[index].reshape(-1, 4),
                      scores[index])


def share_on_photo(box: np.ndarray, inside: np.ndarray, margin: float) -> float:
    """The share of ``box`` grown by ``margin`` per side (the crop's area) that lies on photo pixels.

    >>> share_on_photo(np.array([10, 10, 20, 20.]), np.ones((100, 100), np.uint8), 0.15)
    1.0
    >>> share_on_photo(np.array([0, 10, 10, 20.]), np.ones((100, 100), np.uint8), 0.0)
    1.0
    >>> share_on_photo(np.array([0, 10, 10, 20.]), np.ones((100, 100), np.uint8), 0.5)  # 5 px of 20 off the edge
    0.75
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    dx, dy = margin * (x2 - x1), margin * (y2 - y1)
    x1, y1, x2, y2 = x1 - dx, y1 - dy, x2 + dx, y2 + dy
    h, w = inside.shape[:2]
    on_canvas = max(min(x2, w) - max(x1, 0), 0) * max(min(y2, h) - max(y1, 0), 0)
    region = inside[int(max(y1, 0)):int(np.ceil(min(y2, h))), int(max(x1, 0)):int(np.ceil(min(x2, w)))]
    if not region.size:
        return 0.0
    return float(on_canvas / max((x2 - x1) * (y2 - y1), 1e-9) * (region > 0).mean())


def hard_crops(model: Path | str, data: Sequence[Path | str], *, turns: int = 0, seed: int = 0,
               max_images: int | None = None, conf: float = LOCATE_CONF, floor: float = BACKGROUND_FLOOR,
               max_background: int = MAX_BACKGROUND, crop_size: tuple[int, int] | None = None) -> HardCrops:
    """Crops of ``model``'s stage-1 boxes on the train photos of YOLO folders ``data``.

    Each photo is read upright and ``turns`` more times, turned by a random angle
    (:func:`~vision.training.data.turned.turn_photo`, at least 15 degrees from upright);
    ``max_images`` keeps a seeded sample of the photos. The same arguments give the same crops.
    They are cut at the size the model's classifier takes, or at ``crop_size`` (w, h).
    """
    model = Path(model)
    if not model.is_dir():
        raise TrainError(f"{model}: no model folder (one holding corners.onnx and corner_classifier.onnx; "
                         "e.g. models or the output of tiplu train export)")
    try:
        detector = CardDetector(model)
    except ModelError as exc:
        raise TrainError(str(exc)) from None
    if not (model / CLASSIFIER_FILE).is_file():
        raise TrainError(f"{model}: no {CLASSIFIER_FILE}; stage-1 crops need both stages (it tells unlabelled "
                         "corners from false alarms)")
    samples = []
    for folder in map(Path, data):
        if not folder.is_dir():
            raise TrainError(f"{folder}: no such data folder (a YOLO folder, e.g. data/real)")
        root = folder / "train" if (folder / "train" / "images").is_dir() else folder
        try:
            samples += [s for s in iter_samples(root) if s.boxes]
        except DatasetError as exc:
            raise TrainError(str(exc)) from exc
    if not samples:
        raise TrainError(f"{', '.join(map(str, data))}: no labelled photos to run stage 1 on")
    rng = np.random.default_rng(seed)
    if max_images is not None and len(samples) > max_images:
        samples = [samples[i] for i in sorted(rng.choice(len(samples), max_images, replace=False))]
    parts: list[PhotoCrops] = []
    labelled = 0
    for sample in samples:
        read = read_sample(sample)
        if read is None:
            continue
        image, boxes = read
        h, w = image.shape[:2]
        labels = [b.cls for b in sample.boxes]
        angles = [0.0] + [random_turn(rng) for _ in range(turns)]
        whole = np.full((h, w), 255, np.uint8)
        for angle in angles:
            shown, shown_boxes = turn_photo(image, boxes, angle) if angle else (image, boxes)
            on_photo = turn_photo(whole, boxes[:0], angle)[0] > 127 if angle else None
            parts.append(photo_crops(detector, shown, shown_boxes, labels, conf=conf, floor=floor,
                                     max_background=max_background, on_photo=on_photo, crop_size=crop_size))
            labelled += len(labels)
    if not parts:
        raise TrainError(f"{', '.join(map(str, data))}: no readable photos to run stage 1 on")
    crops = np.concatenate([p.crops for p in parts])
    labels_all = np.concatenate([p.labels for p in parts])
    matched = sum(p.matched for p in parts)
    summary = {"model": str(model), "model_version": str(read_model_json(model).get("metrics", {}).get("version", "?")),
               "data": [str(d) for d in data], "photos": len(parts), "turns": turns, "seed": seed,
               "matched": matched, "background": int(len(labels_all) - matched),
               "crop": [int(crops.shape[2]), int(crops.shape[1])],
               "labelled_corners": labelled,
               "conf": conf, "background_floor": floor, "max_background": max_background}
    return HardCrops(crops, labels_all, summary)


def save_hard_crops(result: HardCrops, path: Path | str) -> Path:
    """Write one compressed ``.npz`` (crops, labels, summary as JSON text), byte for byte the same for the same crops.

    ``numpy.savez_compressed`` stamps each member with the current time, so the zip is
    written here with a fixed one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    arrays: dict[str, np.ndarray] = {"crops": np.ascontiguousarray(result.crops, np.uint8), "labels": np.asarray(result.labels, np.int64),
              "summary": np.array(json.dumps(result.summary, sort_keys=True))}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, array, allow_pickle=False)
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(member, buffer.getvalue())
    return path


def read_hard_crops(path: Path | str) -> HardCrops:
    """One crops file, checked: crops (N, 48, 32, 3) uint8, labels 0..53 (53 = BACKGROUND)."""
    path = Path(path)
    if not path.is_file():
        raise TrainError(f"{path}: no such crops file; make one with tiplu train stage1-crops MODEL DATA --out {path}")
    if not zipfile.is_zipfile(path):
        raise TrainError(f"{path}: not a .npz file; make one with tiplu train stage1-crops MODEL DATA --out FILE.npz")
    try:
        with np.load(path, allow_pickle=False) as npz:
            missing = [k for k in ARRAYS if k not in npz.files]
            if missing:
                raise TrainError(f"{path}: not a stage1-crops file (no {', '.join(missing)}); "
                                 "make it again with tiplu train stage1-crops")
            crops, labels, summary = npz["crops"], npz["labels"], json.loads(str(npz["summary"]))
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        if isinstance(exc, TrainError):
            raise
        raise TrainError(f"{path}: not a readable .npz ({exc}); make it again with tiplu train stage1-crops") from None
    if crops.dtype != np.uint8 or crops.ndim != 4 or crops.shape[3] != 3 or len(crops) != len(labels):
        raise TrainError(f"{path}: crops must be uint8 (N, H, W, 3) with one label each, not {crops.dtype} "
                         f"{crops.shape} and {len(labels)} labels")
    if len(labels) and (labels.min() < 0 or labels.max() > BACKGROUND):
        raise TrainError(f"{path}: labels must be 0..{BACKGROUND} ({len(CLASS_NAMES)} cards, then BACKGROUND)")
    return HardCrops(crops, labels.astype(np.int64), summary)


def load_hard_crops(paths: Sequence[Path | str], size: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The crops and labels of several files, one after the other; ``size`` (w, h) checks the crop size."""
    xs, ys = [], []
    for path in paths:
        found = read_hard_crops(path)
        if size is not None and len(found.crops) and found.crops.shape[1:3] != (size[1], size[0]):
            raise TrainError(f"{path}: crops are {found.crops.shape[2]}x{found.crops.shape[1]}, the classifier "
                             f"takes {size[0]}x{size[1]}")
        xs.append(found.crops)
        ys.append(found.labels)
    if not xs:
        return np.zeros((0, SHIPPED.crop_h, SHIPPED.crop_w, 3), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(xs), np.concatenate(ys)
