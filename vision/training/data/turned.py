"""Real photos turned to any angle: the same turn for training copies and for the report.

Real phone photos mostly hold their cards upright, so both stages learnt "upright" from them
(the report's real val turned by 30-135 degrees loses 0.05-0.13 F1). :func:`turned_copies`
writes each real *train* photo again at random angles (val is never touched: the report turns
val itself, with the same :func:`turn_photo`, so training and measuring agree on what a turned
label is).

``tiplu train turn-real data/real data/real_turned --copies 2`` writes a YOLO folder
``data/real_turned/train`` to list beside ``data/real/train`` in a data YAML and in
``--classifier-data``.

>>> img, b = turn_photo(np.zeros((10, 20, 3), np.uint8), np.array([[0, 0, 4, 2.]]), 90)
>>> img.shape, b.round(1).tolist()
((20, 10, 3), [[0.0, 16.0, 2.0, 20.0]])
"""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np

from vision.training.data.dataset import Box, DatasetError, Sample, iter_samples, read_sample, write_yolo

#: Turns closer than this to upright are drawn again: the originals already cover them.
MIN_TURN = 15.0


def turn_photo(image: np.ndarray, boxes: np.ndarray, degrees: float) -> tuple[np.ndarray, np.ndarray]:
    """``image`` turned counter-clockwise by ``degrees`` on a canvas grown to hold it, and its boxes.

    A box becomes the axis-aligned box of its inscribed ellipse, turned: exact at multiples
    of 90 degrees and close to the turned glyph's box in between, where the turned box's own
    bounding box would be about twice too big.
    """
    h, w = image.shape[:2]
    m = cv2.getRotationMatrix2D((w / 2, h / 2), degrees, 1.0)
    c, s = abs(m[0, 0]), abs(m[0, 1])
    nw, nh = int(math.ceil(h * s + w * c - 1e-9)), int(math.ceil(h * c + w * s - 1e-9))
    m[0, 2] += nw / 2 - w / 2
    m[1, 2] += nh / 2 - h / 2
    out = cv2.warpAffine(image, m, (nw, nh), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                         borderValue=(0, 0, 0))
    if len(boxes) == 0:
        return out, boxes.reshape(0, 4)
    centre = np.stack([(boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2, np.ones(len(boxes))], 1) @ m.T
    a, b = (boxes[:, 2] - boxes[:, 0]) / 2, (boxes[:, 3] - boxes[:, 1]) / 2
    hw, hh = np.sqrt((a * c) ** 2 + (b * s) ** 2), np.sqrt((a * s) ** 2 + (b * c) ** 2)
    turned = np.stack([centre[:, 0] - hw, centre[:, 1] - hh, centre[:, 0] + hw, centre[:, 1] + hh], 1)
    return out, np.clip(turned, 0, [nw, nh, nw, nh])


def random_turn(rng: np.random.Generator) -> float:
    """An angle in [0, 360) at least :data:`MIN_TURN` from upright.

    >>> all(MIN_TURN <= random_turn(np.random.default_rng(s)) <= 360 - MIN_TURN for s in range(50))
    True
    """
    return float(rng.uniform(MIN_TURN, 360.0 - MIN_TURN))


def turned_copies(src: Path | str, dst: Path | str, copies: int = 2, seed: int = 0) -> dict[str, int]:
    """Write ``copies`` turned versions of every labelled photo of ``src``'s train split into ``dst/train``.

    ``src`` is a folder made by ``tiplu train import-real`` (its ``train/`` is used; a folder
    without splits is used whole). Returns ``{"photos": ..., "boxes": ...}`` written.
    """
    src, dst = Path(src), Path(dst)
    if copies < 1:
        raise DatasetError(f"--copies must be at least 1, not {copies}")
    root = src / "train" if (src / "train" / "images").is_dir() else src
    samples = [s for s in iter_samples(root) if s.boxes]
    if not samples:
        raise DatasetError(f"{root}: no labelled photos found (run tiplu train import-real first)")
    rng = np.random.default_rng(seed)
    work = dst / "_turned"
    work.mkdir(parents=True, exist_ok=True)
    written: list[Sample] = []
    for sample in samples:
        read = read_sample(sample)
        if read is None:
            continue
        image, boxes = read
        for k in range(copies):
            angle = random_turn(rng)
            out, turned = turn_photo(image, boxes, angle)
            th, tw = out.shape[:2]
            path = work / f"{sample.image.stem}_t{k}_{int(angle):03d}.jpg"
            cv2.imwrite(str(path), out, [cv2.IMWRITE_JPEG_QUALITY, 92])
            written.append(Sample(path, tuple(Box(b.cls, x1 / tw, y1 / th, x2 / tw, y2 / th)
                                              for b, (x1, y1, x2, y2) in zip(sample.boxes, turned))))
    write_yolo(written, dst / "train")
    for s in written:
        s.image.unlink()
    work.rmdir()
    return {"photos": len(written), "boxes": sum(len(s.boxes) for s in written)}
