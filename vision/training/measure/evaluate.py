"""Measure the ONNX corner detector on any YOLO folder: mAP, per-class recall, per-photo cards.

Metrics (numpy only, no torch):

- ``map50`` / ``map50_95``: COCO-style box mAP over the 53 card classes present in the
  labels, 101-point interpolated precision, IoU thresholds 0.50:0.05:0.95.
- per-class recall at the app's confidence (0.25) and IoU 0.5.
- ``card_precision`` / ``card_recall`` / ``card_f1``: per photo, the SET of distinct cards
  found vs the set labelled, summed over photos (what the app shows a player).

Usage::

    tiplu eval-model data/real/val --json
    tiplu eval-model data/synth_holdout --imgsz 416

>>> ap_101(np.array([1.0, 1.0]), np.array([0.5, 1.0]))
1.0
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorer import CLASS_NAMES
from vision.detector import MAX_BOXES, CardDetector, Detector, load_detector
from vision.geometry import Corner, box_iou, nms
from vision.training.data.dataset import iter_samples, read_sample

IOU_THRESHOLDS = np.linspace(0.5, 0.95, 10)
APP_CONF = 0.25
#: Stage-1 score at which a box counts for localisation recall, and the IoU at which it matches a label.
LOCATE_CONF = 0.05
MATCH_IOU = 0.5


def match_boxes(pred: np.ndarray, truth: np.ndarray, iou: float = MATCH_IOU) -> list[tuple[int, int]]:
    """Greedy one-to-one matching, predictions in the given order (best score first).

    Returns ``(pred_index, truth_index)`` pairs whose IoU is at least ``iou``.

    >>> match_boxes(np.array([[0, 0, 10, 10.], [50, 50, 60, 60]]), np.array([[1, 1, 10, 10.]]))
    [(0, 0)]
    """
    if len(pred) == 0 or len(truth) == 0:
        return []
    ious = box_iou(pred, truth)
    used = np.zeros(len(truth), bool)
    pairs = []
    for i in range(len(pred)):
        cand = np.where((ious[i] >= iou) & ~used)[0]
        if cand.size:
            j = int(cand[np.argmax(ious[i, cand])])
            used[j] = True
            pairs.append((i, j))
    return pairs


def stage1_boxes(detector: CardDetector, image: np.ndarray, conf: float = LOCATE_CONF) -> tuple[np.ndarray, np.ndarray]:
    """Stage 1's boxes (pixels) and scores on a photo, best first, after the detector's own NMS and top 100.

    The boxes the classifier is handed at run time (:meth:`CardDetector.detect`), down to ``conf``.
    """
    found = detector.find_boxes(image, conf)
    boxes, scores = found.xyxy, found.scores
    keep = nms(boxes, scores, detector.settings.nms_iou)[:MAX_BOXES]
    return boxes[keep].reshape(-1, 4), scores[keep]


@dataclass(frozen=True)
class EvalResult:
    """Everything :func:`evaluate` measured; ``summary()`` is the ``--json`` output."""

    images: int
    map50: float
    map50_95: float
    card_precision: float
    card_recall: float
    card_f1: float
    class_recall: dict[str, float]
    class_ap50: dict[str, float]
    seconds_per_image: float

    def summary(self) -> dict[str, float | int]:
        """The fixed-shape summary: images, map50, map50_95, card_precision/recall/f1."""
        return {"images": self.images, "map50": round(self.map50, 4), "map50_95": round(self.map50_95, 4),
                "card_precision": round(self.card_precision, 4), "card_recall": round(self.card_recall, 4),
                "card_f1": round(self.card_f1, 4)}


def ap_101(recall: np.ndarray, precision: np.ndarray) -> float:
    """COCO 101-point interpolated average precision of one precision/recall curve.

    ``recall`` ascending; precision is made monotone (the envelope) before sampling.

    >>> round(ap_101(np.array([0.5]), np.array([1.0])), 3)
    0.505
    """
    if recall.size == 0:
        return 0.0
    env = np.maximum.accumulate(precision[::-1])[::-1]
    points = np.linspace(0, 1, 101)
    idx = np.searchsorted(recall, points, side="left")
    vals = np.where(idx < len(env), env[np.minimum(idx, len(env) - 1)], 0.0)
    return float(vals.mean())


def mean_average_precision(preds: Sequence[Sequence[tuple[int, float, np.ndarray]]],
                           truths: Sequence[Sequence[tuple[int, np.ndarray]]]
                           ) -> tuple[float, float, dict[int, float], dict[int, float]]:
    """mAP50, mAP50-95, AP50 per class and recall per class at IoU 0.5 and conf >= 0.25.

    ``preds[i]`` holds (class, score, box) and ``truths[i]`` (class, box) for image i;
    a prediction matches the unmatched label of its class with the highest IoU.

    >>> t = [[(0, np.array([0, 0, 10, 10.]))]]
    >>> mean_average_precision([[(0, 0.9, np.array([0, 0, 10, 10.]))]], t)[:2]
    (1.0, 1.0)
    """
    classes = sorted({c for img in truths for c, _ in img})
    aps = np.zeros((len(classes), len(IOU_THRESHOLDS)))
    recall_at_conf: dict[int, float] = {}
    for ci, c in enumerate(classes):
        gts = {i: np.array([b for k, b in img if k == c]) for i, img in enumerate(truths)}
        n_gt = sum(len(g) for g in gts.values())
        dets = sorted(((s, i, b) for i, img in enumerate(preds) for k, s, b in img if k == c),
                      key=lambda d: -d[0])
        tp = np.zeros((len(dets), len(IOU_THRESHOLDS)), bool)
        used = {i: np.zeros((len(g), len(IOU_THRESHOLDS)), bool) for i, g in gts.items()}
        for di, (_, i, b) in enumerate(dets):
            g = gts[i]
            if len(g) == 0:
                continue
            ious = box_iou(b[None], g)[0]
            for ti, thr in enumerate(IOU_THRESHOLDS):
                cand = np.where((ious >= thr) & ~used[i][:, ti])[0]
                if cand.size:
                    j = cand[np.argmax(ious[cand])]
                    used[i][j, ti] = True
                    tp[di, ti] = True
        scores = np.array([d[0] for d in dets])
        for ti in range(len(IOU_THRESHOLDS)):
            ctp = np.cumsum(tp[:, ti]); cfp = np.cumsum(~tp[:, ti])
            rec = ctp / max(n_gt, 1)
            prec = ctp / np.maximum(ctp + cfp, 1)
            aps[ci, ti] = ap_101(rec, prec)
        recall_at_conf[c] = float(tp[scores >= APP_CONF, 0].sum() / max(n_gt, 1)) if len(dets) else 0.0
    if not classes:
        return 0.0, 0.0, {}, {}
    ap50 = {c: float(aps[ci, 0]) for ci, c in enumerate(classes)}
    return float(aps[:, 0].mean()), float(aps.mean()), ap50, recall_at_conf


def card_set_scores(found: Sequence[set[str]], labelled: Sequence[set[str]]) -> tuple[float, float, float]:
    """Precision, recall, F1 of distinct cards per photo, summed over photos.

    >>> card_set_scores([{"AS", "KH"}], [{"AS", "2C"}])
    (0.5, 0.5, 0.5)
    """
    tp = sum(len(f & t) for f, t in zip(found, labelled))
    nf = sum(len(f) for f in found)
    nt = sum(len(t) for t in labelled)
    p = tp / nf if nf else (1.0 if nt == 0 else 0.0)
    r = tp / nt if nt else 1.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f1


def evaluate(dataset: Path | str, model: Path | str | None = None, imgsz: int | None = None,
             detector: Detector | None = None, progress: bool = False) -> EvalResult:
    """Run the detector over every image of a YOLO folder and score it (see module doc)."""
    det = detector or load_detector(model, imgsz=imgsz)
    index = {n: i for i, n in enumerate(CLASS_NAMES)}
    preds: list[list[tuple[int, float, np.ndarray]]] = []
    truths: list[list[tuple[int, np.ndarray]]] = []
    found: list[set[str]] = []
    labelled: list[set[str]] = []
    elapsed = 0.0
    samples = list(iter_samples(Path(dataset)))
    for n, s in enumerate(samples):
        read = read_sample(s)
        if read is None:
            continue
        img, boxes = read
        t0 = time.perf_counter()
        corners: list[Corner] = det.detect(img, conf=0.01)
        elapsed += time.perf_counter() - t0
        preds.append([(index[c.card], c.confidence, np.array(c.box)) for c in corners])
        truths.append([(b.cls, box) for b, box in zip(s.boxes, boxes)])
        found.append({c.card for c in corners if c.confidence >= APP_CONF})
        labelled.append({b.name for b in s.boxes})
        if progress and (n + 1) % 50 == 0:
            print(f"  {n + 1}/{len(samples)} images", file=sys.stderr, flush=True)
    m50, m5095, ap50, rec = mean_average_precision(preds, truths)
    p, r, f1 = card_set_scores(found, labelled)
    return EvalResult(len(truths), m50, m5095, p, r, f1,
                      {CLASS_NAMES[c]: v for c, v in rec.items()},
                      {CLASS_NAMES[c]: v for c, v in ap50.items()},
                      elapsed / max(len(truths), 1))

