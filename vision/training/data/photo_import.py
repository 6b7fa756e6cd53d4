"""Import licensed real photos from a public source into tiplu's YOLO folders, with their credit.

Why: the reader is built for a camera over the table, and the only real photos it had were phone
close-ups. Real photos from other cameras come from public datasets, each under its own licence
and labelled its own way. This module turns one such source into a folder the report and the
training commands read (``images/``, ``labels/``, tiplu's ``classes.txt``), and writes beside it
a ``manifest.csv`` (file, source, url, licence, author, camera, how the labels were made), so every
photo keeps its credit and a webcam val can be rebuilt from the source with one command:

    tiplu train import-photos SRC data/webcam/val --name NAME --url URL --licence CC-BY-4.0 \\
        --author "WHO" --camera webcam [--labels corners|cards]

Two kinds of labels are read, classes matched by name as :mod:`vision.training.data.dataset` does:

- ``corners``: the source boxes each visible corner index (rank and pip), as tiplu's real val
  does; boxes are copied.
- ``cards``: the source outlines whole cards (a YOLO polygon of the card, or a box of an upright
  card). Each card becomes the boxes of its two corner indices: the card is straightened, the index
  glyphs are found in its two inked corners (:func:`vision.training.fit.enrol.index_boxes`, as
  ``tiplu enrol`` does on a family's photos, falling back to the usual index place) and their boxes
  are taken back into the photo. An index that falls mostly outside the frame is left unlabelled.

Sources that hold the project's independent checks are refused by name (:data:`FORBIDDEN`), and so
is a licence not in :data:`LICENCES`: a photo whose licence is unclear is not used.

>>> check_source(Source("x", "https://github.com/MrKeSuu/bidly", "MIT", "someone", "phone"))
Traceback (most recent call last):
...
vision.training.data.dataset.DatasetError: https://github.com/MrKeSuu/bidly: this source holds the project's independent checks; do not import it
"""

from __future__ import annotations

import csv
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.training.data.dataset import (IMAGE_SUFFIXES, Box, DatasetError, Sample, image_dirs, iter_samples,
                                     map_class_name, read_class_names, read_dataset_image, start_yolo_folder,
                                     write_labels)

#: Sources that hold the project's independent checks: never imported (matched in the URL or the name).
FORBIDDEN = ("ammememe/cardcounterml", "kom1323/cv_object_detection", "mrkesuu/bidly", "card-detection-zk7wu",
             "poker-cards-cxcvz")
#: Where the real photos of the project's own shares come from ("Card Detection" v12, Roboflow Universe).
CARD_DETECTION_URL = "https://universe.roboflow.com/cadyzedevelopmenthub/card-detection-zk7wu"
#: Licences under which a photo may be used here (SPDX identifiers; compared case-blind).
LICENCES = ("CC0-1.0", "CC-BY-4.0", "CC-BY-SA-4.0", "CC-BY-3.0", "MIT", "Apache-2.0", "BSD-2-Clause",
            "BSD-3-Clause", "Unlicense", "PDDL-1.0")
CAMERAS = ("webcam", "phone", "camera")
LABEL_KINDS = ("corners", "cards")
#: Share of an index box that must lie inside the photo for it to be labelled.
MIN_INSIDE = 0.6
MANIFEST = "manifest.csv"
MANIFEST_FIELDS = ("file", "source", "url", "licence", "author", "camera", "labels", "source_file")


@dataclass(frozen=True)
class Source:
    """Where photos come from and under what terms: what the model card and the manifest credit.

    >>> Source("cards-x", "https://example.org/x", "CC0-1.0", "A. Person", "webcam").slug
    'cards-x'
    """

    name: str
    url: str
    licence: str
    author: str
    camera: str

    @property
    def slug(self) -> str:
        """The prefix of each imported file's name: photos of two sources never collide."""
        return "".join(c if c.isalnum() or c in "-_" else "-" for c in self.name)


#: The two folders of that publication shared with the project (``cards-real-dev``: phone photos, the real
#: train and val; ``cards-webcam-dev``: laptop-webcam frames, the webcam val): let in by folder name with their
#: credit, while the rest of the publication, which holds the independent checks, stays off limits.
SHARED_SETS: dict[str, Source] = {
    name: Source(name, CARD_DETECTION_URL, "CC-BY-4.0", "cadyzedevelopmenthub (Roboflow Universe)", camera)
    for name, camera in (("cards-real-dev", "phone"), ("cards-webcam-dev", "webcam"))}


def shared_source(folder: Path | str) -> Source | None:
    """The credit of one of the project's shared folders (:data:`SHARED_SETS`), found by its name.

    >>> shared_source("../shared/datasets/cards-webcam-dev").camera, shared_source("elsewhere") is None
    ('webcam', True)
    """
    return SHARED_SETS.get(Path(folder).name)


def check_source(source: Source, folder: Path | str | None = None) -> None:
    """Raise :class:`DatasetError` for a forbidden source, an unknown licence or camera, or no credit.

    A forbidden publication's shared folder (:data:`SHARED_SETS`) passes when ``folder`` is that folder.
    """
    where = f"{source.url} {source.name}".lower()
    shared = folder is not None and shared_source(folder) == source
    if not shared and any(bad in where for bad in FORBIDDEN):
        raise DatasetError(f"{source.url}: this source holds the project's independent checks; do not import it")
    if source.licence.lower() not in {lic.lower() for lic in LICENCES}:
        raise DatasetError(f"licence {source.licence!r}: use a photo only under a clear licence, one of "
                           f"{', '.join(LICENCES)}")
    if source.camera not in CAMERAS:
        raise DatasetError(f"camera {source.camera!r}: one of {', '.join(CAMERAS)}")
    if not (source.name.strip() and source.url.strip() and source.author.strip()):
        raise DatasetError("give the source's name, URL and author: every photo keeps its credit")


def card_outline(values: Sequence[float], width: int, height: int) -> np.ndarray:
    """A card's four corners in pixels from a YOLO label's numbers: a box (``cx cy w h``, an upright
    card) or a polygon (its smallest turned rectangle).

    >>> card_outline([0.5, 0.5, 0.2, 0.4], 100, 100).tolist()
    [[40.0, 30.0], [60.0, 30.0], [60.0, 70.0], [40.0, 70.0]]
    """
    if len(values) == 4:
        cx, cy, w, h = values[0] * width, values[1] * height, values[2] * width, values[3] * height
        return np.array([[cx - w / 2, cy - h / 2], [cx + w / 2, cy - h / 2], [cx + w / 2, cy + h / 2],
                         [cx - w / 2, cy + h / 2]], float)
    points = (np.array(values[: len(values) // 2 * 2], float).reshape(-1, 2) * (width, height)).astype(np.float32)
    return cv2.boxPoints(cv2.minAreaRect(points)).astype(float)


def clip_box(box: Sequence[float], width: int, height: int, min_inside: float = MIN_INSIDE) -> Box | None:
    """A pixel box as a normalised :class:`Box` clipped to the photo, or None when less than
    ``min_inside`` of it lies inside (an index cut off by the frame is not labelled).

    >>> clip_box((-5, 0, 5, 10), 100, 100) is None, clip_box((-1, 0, 9, 10), 100, 100).x1
    (True, 0.0)
    """
    x1, y1, x2, y2 = (float(v) for v in box)
    area = max(x2 - x1, 0.0) * max(y2 - y1, 0.0)
    cx1, cy1, cx2, cy2 = max(x1, 0.0), max(y1, 0.0), min(x2, float(width)), min(y2, float(height))
    inside = max(cx2 - cx1, 0.0) * max(cy2 - cy1, 0.0)
    if area <= 0 or inside < min_inside * area:
        return None
    return Box(0, round(cx1 / width, 6), round(cy1 / height, 6), round(cx2 / width, 6), round(cy2 / height, 6))


def card_samples(root: Path) -> Iterator[Sample]:
    """Every photo of a YOLO folder whose labels outline whole cards, as corner-index boxes."""
    from vision.training.fit.enrol import index_boxes

    for images in image_dirs(root):
        mapping = [map_class_name(n) for n in read_class_names(images.parent)]
        for img in sorted(images.iterdir()):
            if img.suffix.lower() not in IMAGE_SUFFIXES:
                continue
            label = images.parent / "labels" / f"{img.stem}.txt"
            lines = label.read_text().splitlines() if label.is_file() else []
            photo = read_dataset_image(img)
            height, width = photo.shape[:2]
            boxes: list[Box] = []
            for line in lines:
                parts = line.split()
                if len(parts) < 5:
                    continue
                src = int(float(parts[0]))
                cls = mapping[src] if 0 <= src < len(mapping) else None
                if cls is None:
                    continue
                outline = card_outline([float(v) for v in parts[1:]], width, height)
                for box in index_boxes(photo, outline.tolist()):
                    kept = clip_box(box, width, height)
                    if kept is not None:
                        boxes.append(Box(cls, kept.x1, kept.y1, kept.x2, kept.y2))
            yield Sample(img, tuple(boxes))


def import_photos(src: Path | str, dst: Path | str, source: Source, labels: str = "corners") -> dict[str, int]:
    """Copy a source's labelled photos into the YOLO folder ``dst`` as corner-index labels, and add
    their rows to ``dst/manifest.csv`` (a photo imported again replaces its row).

    Returns ``{"photos": ..., "corners": ..., "skipped": ...}``; photos without a single card
    label are skipped (a val photo with nothing to read measures nothing).
    """
    check_source(source, src)
    if labels not in LABEL_KINDS:
        raise DatasetError(f"--labels {labels!r}: one of {', '.join(LABEL_KINDS)}")
    src, dst = Path(src), Path(dst)
    if not src.is_dir():
        raise DatasetError(f"{src}: no such folder; give the source's YOLO folder (images/, labels/, classes)")
    samples = card_samples(src) if labels == "cards" else iter_samples(src)
    start_yolo_folder(dst)
    rows = read_manifest(dst)
    photos = corners = skipped = 0
    for sample in samples:
        if not sample.boxes:
            skipped += 1
            continue
        name = f"{source.slug}__{sample.image.name}"
        shutil.copy2(sample.image, dst / "images" / name)
        write_labels(dst, Path(name).stem, sample.boxes)
        rows[name] = {"file": name, "source": source.name, "url": source.url, "licence": source.licence,
                      "author": source.author, "camera": source.camera, "labels": labels,
                      "source_file": str(sample.image.relative_to(src))}
        photos += 1
        corners += len(sample.boxes)
    write_manifest(dst, rows.values())
    return {"photos": photos, "corners": corners, "skipped": skipped}


def read_manifest(folder: Path) -> dict[str, dict[str, str]]:
    """The rows of ``folder/manifest.csv`` by file name (empty when there is none)."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    with open(path, newline="") as fh:
        return {row["file"]: row for row in csv.DictReader(fh)}


def write_manifest(folder: Path, rows: Iterable[dict[str, str]]) -> Path:
    """``folder/manifest.csv`` with one row a photo, sorted by file name."""
    path = folder / MANIFEST
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, MANIFEST_FIELDS)
        writer.writeheader()
        writer.writerows(sorted(rows, key=lambda r: r["file"]))
    return path
