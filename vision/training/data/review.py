"""A family's review of read photos, done from labels: what "Improve from corrections" learns from.

On the page a family checks each photo tiplu read: a card read under a wrong name is changed, a card
marked doubtful and right is confirmed, a card read where none lies is deleted, a card never read is
tapped in by name. The page keeps the crops of the cards changed or confirmed (as
:data:`vision.enrolment.KEPT_CROP` crops of their corners, with the right name); a deleted card and a card
added by name give no crop. :func:`review_photo` does the same from a labelled photo, so that
``tiplu improve MODEL --reviewed DIR`` learns exactly what the page would from the same photos, and the
report can measure what a family's first evening of corrections is worth. A corner is read on a labelled
corner as the calibration matches them (:func:`vision.training.measure.calibrate.match_boxes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from vision.detector import Detector, crop_corner
from vision.enrolment import KEPT_CROP
from vision.pipeline import DEFAULT_CONF, PhotoReading, read_photo
from vision.training.measure.calibrate import match_boxes
from vision.training.data.dataset import DatasetError, iter_samples, read_sample


@dataclass(frozen=True)
class Review:
    """What a family does to the readings of ``photos`` photos, and the crops the page keeps from them (with
    their right names); :meth:`total` sums the reviews of several photos."""

    photos: int
    crops: tuple[np.ndarray, ...]
    cards: tuple[str, ...]
    changed: int
    confirmed: int
    deleted: int
    added: int

    @classmethod
    def total(cls, reviews: Sequence[Review]) -> Review:
        """The reviews of several photos as one."""
        return cls(sum(r.photos for r in reviews), tuple(c for r in reviews for c in r.crops),
                   tuple(c for r in reviews for c in r.cards), sum(r.changed for r in reviews),
                   sum(r.confirmed for r in reviews), sum(r.deleted for r in reviews), sum(r.added for r in reviews))

    def summary(self) -> str:
        """One line, as ``tiplu improve`` prints it."""
        return (f"{self.photos} photos reviewed: {self.changed} cards changed, {self.confirmed} confirmed, "
                f"{self.deleted} deleted, {self.added} added by name; {len(self.crops)} crops kept")


def review_reading(image: np.ndarray, reading: PhotoReading, boxes: np.ndarray,
                   names: Sequence[str]) -> Review:
    """Review ``reading`` of ``image`` against its labelled corner ``boxes`` (pixels) and ``names``."""
    owner = match_boxes([c.box for c in reading.corners], boxes.tolist())
    crops: list[np.ndarray] = []
    cards: list[str] = []
    changed = confirmed = deleted = 0
    for card in reading.cards:
        labels = Counter(names[owner[k]] for k in card.corners if owner[k] >= 0)
        if not labels:
            deleted += 1
            continue
        right = labels.most_common(1)[0][0]
        if right != card.card or card.uncertain:
            changed += right != card.card
            confirmed += right == card.card
            for k in card.corners:
                crops.append(crop_corner(image, reading.corners[k].box, size=KEPT_CROP))
                cards.append(right)
    read = {names[j] for j in owner if j >= 0}
    added = len(set(names) - read)
    return Review(1, tuple(crops), tuple(cards), changed, confirmed, deleted, added)


def review_photo(detector: Detector, image: np.ndarray, boxes: np.ndarray, names: Sequence[str],
                 conf: float = DEFAULT_CONF) -> Review:
    """Read ``image`` as the page does and review it (:func:`review_reading`)."""
    return review_reading(image, read_photo(image, detector, conf), boxes, names)


def review_folder(detector: Detector, folder: Path | str, *, limit: int | None = None,
                  say: Callable[[str], None] | None = None) -> Review:
    """Review every labelled photo of the YOLO folder ``folder`` (its first ``limit``, in name order)."""
    samples = [s for s in iter_samples(Path(folder)) if s.boxes][:limit]
    if not samples:
        raise DatasetError(f"{folder}: no labelled photos to review (a YOLO folder: images/, labels/, classes.txt)")
    reviews: list[Review] = []
    for n, sample in enumerate(samples, 1):
        read = read_sample(sample)
        if read is None:
            continue
        image, boxes = read
        reviews.append(review_photo(detector, image, boxes, [b.name for b in sample.boxes]))
        if say is not None:
            done = reviews[-1]
            say(f"reviewed {n}/{len(samples)} {sample.image.name}: {done.changed} changed, {done.confirmed} "
                f"confirmed, {done.deleted} deleted, {done.added} added")
    return Review.total(reviews)
