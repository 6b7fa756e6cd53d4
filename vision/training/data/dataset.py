"""Read YOLO-format card-corner datasets and map their classes into tiplu's 53 classes.

Any folder with ``images/`` and ``labels/`` (optionally split into ``train/``/``val/``
sub-folders) and a ``classes.txt`` or ``data.yaml`` works. Classes are matched by NAME, so
a dataset whose class 0 is ``10C`` still lands on tiplu's ``10C``; ``BLACK JOKER`` and
``RED JOKER`` become ``JOKER`` and anything unknown (``BACK``) is dropped. Polygon labels
(``cls x1 y1 x2 y2 ...``) become their bounding boxes.

>>> map_class_name("RED JOKER"), map_class_name("10c"), map_class_name("BACK")
(52, 48, None)

``tiplu train import-real SRC DST`` copies the real dev photos into a
git-ignored working folder with a fixed train/val split (see :func:`import_real`).
"""

from __future__ import annotations

import csv
import random
import re
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.geometry import tile_starts

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".webp")
_ALIASES = {"BLACK JOKER": "JOKER", "RED JOKER": "JOKER", "JOKER": "JOKER", "JK": "JOKER",
            "BLACKJOKER": "JOKER", "REDJOKER": "JOKER"}
_INDEX = {name: i for i, name in enumerate(CLASS_NAMES)}


class DatasetError(ValueError):
    """A dataset folder is missing something; the message says which file to add."""


@dataclass(frozen=True)
class Box:
    """One labelled corner: tiplu class index and a box normalised to 0..1 (x1, y1, x2, y2).

    >>> Box(0, 0.1, 0.2, 0.3, 0.4).name
    'AS'
    """

    cls: int
    x1: float
    y1: float
    x2: float
    y2: float

    @property
    def name(self) -> str:
        return CLASS_NAMES[self.cls]

    def to_yolo(self) -> str:
        """The box as a YOLO label line ``cls cx cy w h``."""
        cx, cy = (self.x1 + self.x2) / 2, (self.y1 + self.y2) / 2
        return f"{self.cls} {cx:.6f} {cy:.6f} {self.x2 - self.x1:.6f} {self.y2 - self.y1:.6f}"


@dataclass(frozen=True)
class Sample:
    """An image file and its labelled corners (already in tiplu classes)."""

    image: Path
    boxes: tuple[Box, ...]


def read_sample(sample: Sample) -> tuple[np.ndarray, np.ndarray] | None:
    """The photo (BGR) and its labelled boxes in pixels, shape (N, 4); None when the image cannot be read."""
    image = cv2.imread(str(sample.image))
    if image is None:
        return None
    h, w = image.shape[:2]
    boxes = np.array([[b.x1 * w, b.y1 * h, b.x2 * w, b.y2 * h] for b in sample.boxes], float).reshape(-1, 4)
    return image, boxes


def map_class_name(name: str) -> int | None:
    """tiplu class index for a dataset class name, or None when it is not a card face.

    Accepts ``10C``, ``10c``, ``TC``, ``10 of clubs``-like spacing variants and joker names.

    >>> map_class_name("TC"), map_class_name("Ah"), map_class_name("card back")
    (48, 13, None)
    """
    key = name.strip().upper().replace("_", " ")
    key = re.sub(r"\s+", " ", key)
    if key in _ALIASES:
        return _INDEX["JOKER"]
    compact = key.replace(" ", "")
    if compact.startswith("T") and len(compact) == 2:
        compact = "10" + compact[1]
    return _INDEX.get(compact)


def read_class_names(folder: Path) -> list[str]:
    """Class names (index order) from ``classes.txt`` or ``data.yaml`` in *folder* or its parent.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "classes.txt").write_text("AS\\nBACK\\n")
    >>> read_class_names(d)
    ['AS', 'BACK']
    """
    for base in (folder, folder.parent):
        txt = base / "classes.txt"
        if txt.is_file():
            return [line.strip() for line in txt.read_text().splitlines() if line.strip()]
        for yname in ("data.yaml", "data.yml", "dataset.yaml"):
            yml = base / yname
            if yml.is_file():
                names = _names_from_yaml(yml.read_text())
                if names:
                    return names
    raise DatasetError(f"{folder}: no classes.txt or data.yaml with 'names' found; add one "
                       "listing the class names in index order")


def _names_from_yaml(text: str) -> list[str]:
    """Parse the ``names:`` entry of a data.yaml (list, inline list or index mapping)."""
    import yaml  # PyYAML ships with ultralytics and matplotlib; only needed for data.yaml

    data = yaml.safe_load(text) or {}
    names = data.get("names")
    if isinstance(names, dict):
        return [str(names[k]) for k in sorted(names, key=int)]
    if isinstance(names, list):
        return [str(n) for n in names]
    return []


def parse_label_line(line: str, mapping: Sequence[int | None]) -> Box | None:
    """One YOLO label line (box or polygon) as a :class:`Box`, or None when it maps to nothing.

    >>> parse_label_line("1 0.5 0.5 0.2 0.4", [None, 0])
    Box(cls=0, x1=0.4, y1=0.3, x2=0.6, y2=0.7)
    >>> parse_label_line("0 0.1 0.1 0.3 0.1 0.3 0.2", [5]).cls
    5
    """
    parts = line.split()
    if len(parts) < 5:
        return None
    src = int(float(parts[0]))
    cls = mapping[src] if 0 <= src < len(mapping) else None
    if cls is None:
        return None
    vals = [float(v) for v in parts[1:]]
    if len(vals) == 4:
        cx, cy, w, h = vals
        x1, y1, x2, y2 = cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2
    else:
        xs, ys = vals[0::2], vals[1::2]
        x1, y1, x2, y2 = min(xs), min(ys), max(xs), max(ys)
    x1, y1 = max(0.0, x1), max(0.0, y1)
    x2, y2 = min(1.0, x2), min(1.0, y2)
    if x2 <= x1 or y2 <= y1:
        return None
    return Box(cls, round(x1, 6), round(y1, 6), round(x2, 6), round(y2, 6))


def image_dirs(root: Path) -> list[Path]:
    """All ``images/`` folders under *root* (``root/images`` or ``root/*/images``)."""
    if (root / "images").is_dir():
        return [root / "images"]
    found = sorted(p for p in root.glob("*/images") if p.is_dir())
    if not found:
        raise DatasetError(f"{root}: expected an images/ folder (or train/images, val/images)")
    return found


def iter_samples(root: Path | str) -> Iterator[Sample]:
    """Every labelled image in a YOLO folder, classes mapped by name into tiplu's classes.

    Images without a label file count as having no corners (true negatives).
    """
    root = Path(root)
    for images in image_dirs(root):
        names = read_class_names(images.parent)
        mapping = [map_class_name(n) for n in names]
        labels = images.parent / "labels"
        for img in sorted(images.iterdir()):
            if img.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            lab = labels / (img.stem + ".txt")
            boxes: list[Box] = []
            if lab.is_file():
                for line in lab.read_text().splitlines():
                    box = parse_label_line(line, mapping)
                    if box is not None:
                        boxes.append(box)
            yield Sample(img, tuple(boxes))


#: Stage 2's output after the 53 cards: "not a corner" (rejects stage 1's false alarms).
BACKGROUND = len(CLASS_NAMES)


def write_class_names(folder: Path) -> Path:
    """``folder/classes.txt``: tiplu's 53 class names, one a line, in class order (datasets and model folders)."""
    path = folder / "classes.txt"
    path.write_text("\n".join(CLASS_NAMES) + "\n")
    return path


def start_yolo_folder(dst: Path | str) -> Path:
    """``dst`` with ``images/``, ``labels/`` and tiplu's ``classes.txt``: a YOLO folder to write into."""
    dst = Path(dst)
    (dst / "images").mkdir(parents=True, exist_ok=True)
    (dst / "labels").mkdir(parents=True, exist_ok=True)
    write_class_names(dst)
    return dst


def write_labels(dst: Path, stem: str, boxes: Sequence[Box]) -> None:
    """One image's label file in a YOLO folder made by :func:`start_yolo_folder`."""
    (dst / "labels" / f"{stem}.txt").write_text("".join(b.to_yolo() + "\n" for b in boxes))


def read_dataset_image(path: Path) -> np.ndarray:
    """A dataset's image (BGR); a :class:`DatasetError` naming the file when OpenCV cannot read it."""
    image = cv2.imread(str(path))
    if image is None:
        raise DatasetError(f"{path}: not an image OpenCV can read")
    return image


def write_yolo(samples: Sequence[Sample], dst: Path) -> None:
    """Write samples as a YOLO split folder in tiplu's class order (images copied)."""
    start_yolo_folder(dst)
    for s in samples:
        shutil.copy2(s.image, dst / "images" / s.image.name)
        write_labels(dst, s.image.stem, s.boxes)


def pack_yolo(src: Path | str, dst: Path | str, max_side: int = 320, quality: int = 80,
              limit: int | None = None) -> int:
    """Write a YOLO folder's labelled images again, shrunk to ``max_side`` and saved as WebP; return how many.

    Why: a GPU machine takes at most 64 MiB of files with it, and stage 1 trains at 320 px, where
    Ultralytics shrinks every photo to that size anyway. Labels are fractions of the image, so they carry
    over as they are (in tiplu's class order). ``limit`` keeps the first images only.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     pack_yolo("tests/data/real_val", Path(tmp) / "packed", max_side=160, limit=2)
    2
    """
    if not 32 <= max_side <= 4096 or not 1 <= quality <= 100 or (limit is not None and limit < 1):
        raise DatasetError(f"pack needs a long side of 32-4096 px, a quality of 1-100 and a limit of 1 or more, "
                           f"not {max_side}, {quality}, {limit}")
    dst = start_yolo_folder(dst)
    written = 0
    for sample in iter_samples(src):
        if limit is not None and written >= limit:
            break
        image = read_dataset_image(sample.image)
        scale = max_side / max(image.shape[:2])
        if scale < 1:
            size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        cv2.imwrite(str(dst / "images" / f"{sample.image.stem}.webp"), image, [cv2.IMWRITE_WEBP_QUALITY, quality])
        write_labels(dst, sample.image.stem, sample.boxes)
        written += 1
    return written


def tile_yolo(src: Path | str, dst: Path | str, scale: float = 0.75, tile: int = 320, overlap: int = 64,
              min_visible: float = 0.6, quality: int = 90) -> int:
    """Cut a YOLO folder's photos, scaled by ``scale``, into ``tile``-px tiles; return how many tiles.

    Why: Ultralytics shrinks every training photo to its long side at the training size, so a
    1280 x 960 table trained at 320 px shows its corner indices at a quarter of their size, while
    the big pass reads such a table at 3/4 (``big_share``): three times as big. Tiles cut at the big
    pass's scale show stage 1 the stacked indices of tunnelas and meld rows at the size it must
    find them, at the cost of a 320-px training step (such CPU phases box fewer of a held-out design's
    corners, not more: models/HISTORY.md). A box keeps its
    label, clipped to the tile, when at least ``min_visible`` of it lies inside; tiles with no box
    are left out.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     tile_yolo("tests/data/real_val", Path(tmp) / "tiles", scale=0.5, tile=160) > 0
    True
    """
    if not 0.05 <= scale <= 4 or not 32 <= tile <= 4096 or not 0 <= overlap < tile or not 0 < min_visible <= 1 \
            or not 1 <= quality <= 100:
        raise DatasetError(f"tile needs a scale of 0.05-4, a tile of 32-4096 px, an overlap under the tile, "
                           f"a visible share in (0, 1] and a quality of 1-100, not {scale}, {tile}, {overlap}, "
                           f"{min_visible}, {quality}")
    dst = start_yolo_folder(dst)
    written = 0
    for sample in iter_samples(src):
        image = read_dataset_image(sample.image)
        size = (max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale)))
        image = cv2.resize(image, size, interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
        boxes = np.array([[b.x1, b.y1, b.x2, b.y2] for b in sample.boxes], float).reshape(-1, 4) * (size * 2)
        areas = np.maximum(boxes[:, 2] - boxes[:, 0], 0) * np.maximum(boxes[:, 3] - boxes[:, 1], 0)
        for y0 in tile_starts(size[1], tile, overlap):
            for x0 in tile_starts(size[0], tile, overlap):
                piece = image[y0:y0 + tile, x0:x0 + tile]
                h, w = piece.shape[:2]
                clipped = np.clip(boxes - [x0, y0, x0, y0], 0, [w, h, w, h])
                inside = (clipped[:, 2] - clipped[:, 0]) * (clipped[:, 3] - clipped[:, 1])
                kept = [Box(b.cls, *(c / [w, h, w, h])) for b, c, a, area in zip(sample.boxes, clipped, inside, areas)
                        if area > 0 and a >= min_visible * area]
                if not kept:
                    continue
                stem = f"{sample.image.stem}_{x0}_{y0}"
                cv2.imwrite(str(dst / "images" / f"{stem}.jpg"), piece, [cv2.IMWRITE_JPEG_QUALITY, quality])
                write_labels(dst, stem, kept)
                written += 1
    return written


def write_data_yaml(root: Path, train: str = "train/images", val: str = "val/images") -> Path:
    """A data.yaml for Ultralytics with tiplu's 53 class names."""
    lines = [f"path: {root.resolve()}", f"train: {train}", f"val: {val}", "names:"]
    lines += [f"  {i}: '{n}'" for i, n in enumerate(CLASS_NAMES)]
    path = root / "data.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def burst_key(stem: str) -> tuple[str, int]:
    """A (camera, time-like number) key so that frames shot seconds apart sort together.

    >>> burst_key("IMG_20220921_193925_jpg.rf.5d8f"), burst_key("IMG_7794_JPG.rf.fa08")
    (('android', 70765), ('iphone', 7794))
    """
    m = re.match(r"IMG_(\d{8})_(\d{2})(\d{2})(\d{2})", stem)
    if m:
        return "android", int(m[2]) * 3600 + int(m[3]) * 60 + int(m[4])
    m = re.match(r"IMG_(\d+)", stem)
    if m:
        return "iphone", int(m[1])
    return "other", 0


def split_bursts(stems: Sequence[str], val_fraction: float = 0.2, seed: int = 20240630,
                 max_gap: dict[str, int] | None = None, max_block: int = 8) -> set[str]:
    """Pick the validation stems: whole bursts of near-duplicate frames, never half a burst.

    Frames are sorted per camera by time (or file number); a new block starts after a gap
    larger than ``max_gap`` (20 s / 3 file numbers) or after ``max_block`` frames. Blocks
    are shuffled with a fixed seed and taken per camera until ``val_fraction`` is reached,
    so both cameras appear in validation.

    >>> sorted(split_bursts(["IMG_1", "IMG_2", "IMG_50", "IMG_51"], 0.5, seed=1))
    ['IMG_50', 'IMG_51']
    """
    gaps = {"android": 20, "iphone": 3, "other": 0, **(max_gap or {})}
    by_cam: dict[str, list[tuple[int, str]]] = {}
    for s in stems:
        cam, t = burst_key(s)
        by_cam.setdefault(cam, []).append((t, s))
    rng = random.Random(seed)
    val: set[str] = set()
    for cam in sorted(by_cam):
        items = sorted(by_cam[cam])
        blocks: list[list[str]] = []
        last: int | None = None
        for t, s in items:
            if last is None or t - last > gaps[cam] or len(blocks[-1]) >= max_block:
                blocks.append([])
            blocks[-1].append(s)
            last = t
        rng.shuffle(blocks)
        target = round(len(items) * val_fraction)
        taken = 0
        for block in blocks:
            if taken >= target:
                break
            val.update(block)
            taken += len(block)
    return val


def import_real(src: Path | str, dst: Path | str, val_fraction: float = 0.2,
                seed: int = 20240630) -> dict[str, int]:
    """Copy a YOLO folder into ``dst/train`` and ``dst/val`` (tiplu classes, burst-wise split).

    Returns counts, e.g. ``{"train": 290, "val": 72, "train_boxes": ..., "val_boxes": ...}``.
    The split is a pure function of the file names and the seed, so it is reproducible.
    """
    src, dst = Path(src), Path(dst)
    samples = list(iter_samples(src))
    val_stems = split_bursts([s.image.stem for s in samples], val_fraction, seed)
    parts = {"train": [s for s in samples if s.image.stem not in val_stems],
             "val": [s for s in samples if s.image.stem in val_stems]}
    for name, items in parts.items():
        if (dst / name).exists():
            shutil.rmtree(dst / name)
        write_yolo(items, dst / name)
    write_data_yaml(dst)
    write_class_names(dst)
    with open(dst / "split.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["file", "split"])
        for name, items in parts.items():
            for s in items:
                w.writerow([s.image.name, name])
    return {"train": len(parts["train"]), "val": len(parts["val"]),
            "train_boxes": sum(len(s.boxes) for s in parts["train"]),
            "val_boxes": sum(len(s.boxes) for s in parts["val"])}
