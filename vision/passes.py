"""Stage 1's passes over a photo: where the corner network looks, and which of its boxes the reading keeps.

Stage 1 was trained on corner indices of about 10-70 px at its input, so no single look serves a
close-up of one card (huge corners) and a whole table (small ones). Each pass is a small class
with its own settings (:class:`vision.settings.ReaderSettings`), on when ``"passes"`` lists it:

1. :class:`BasePass`: the photo letterboxed to ``imgsz``.
2. :class:`ViewsPass`: the photo mirrored and upside down at ``imgsz`` (every card's second index is
   printed upside down; another look boxes corners the first scored faintly).
3. :class:`BigPass`: a photo bigger than twice ``imgsz`` again at ``big_share`` of its long side (at
   most ``max_imgsz``); each corner then comes from one of the two sizes, by its size
   (``scale_split``), since both see most corners with boxes too different for NMS to merge.
4. :class:`TilesPass`: a 12-megapixel table whose corners are still small at the big pass
   (``tile_below``) is read in overlapping tiles, scaled so those corners come out about
   :data:`TILE_CORNER` px; its small corners come from the tiles.
5. :class:`LookAroundPass`: after pairing, windows of ``look_window`` index sides about each card
   read, each at ``look_size``: what it finds on no corner of the reading is a place to look, never
   a card (:meth:`vision.detector.CardDetector.look_around`).

A pass says what it reads (:meth:`Stage1Pass.looks`: a view, a size, a window) and which of its
boxes the reading keeps once every pass has read (:meth:`Stage1Pass.chosen`); :func:`read_passes`
runs them, sending the looks of one batch key to the network together. All boxes then go to one
NMS (:meth:`vision.detector.CardDetector.detect`).

Two passes look only where they can add something (``"skips"``): the views where the big pass reads
the photo and the base pass found no corner big enough for its own size (a table), and the big pass
where the 320-px looks found only big corners, one of them sure (a close-up); each would otherwise add
only boxes that the choice by size throws away (:meth:`PhotoContext.only_small`, :meth:`PhotoContext.only_big`).

>>> [p.name for p in photo_passes(ReaderSettings())]
['base', 'views', 'big', 'tiles']
>>> input_sizes(ReaderSettings(), 960, 1280), input_sizes(ReaderSettings(), 640, 640)
((320, 960), (320,))
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol

import cv2
import numpy as np

from vision.geometry import Corner, flipped_boxes, long_sides, tile_starts
from vision.settings import VIEW_FLIPS, ReaderSettings

#: A tiled pass scales the photo so that its small corners come out about this many px (long side),
#: the size the big pass reads a 1280 x 960 table at, never above the photo's own resolution.
TILE_CORNER = 28.0
#: Tiles overlap by three such corners, so a corner cut by one tile's edge lies whole in its neighbour.
TILE_OVERLAP = int(3 * TILE_CORNER)
#: At most this many tiles per photo (the scale comes down until they fit): about 1 s on 2 cores.
MAX_TILES = 12
#: The scale steps down by this factor until the tiles fit :data:`MAX_TILES`.
TILE_SCALE_STEP = 0.95
#: Tiles are worth it only where they read the photo at least this many times the big pass's scale.
TILE_GAIN = 1.5
#: Tiles are used when at least one in this many of the big pass's corners is under ``tile_below``.
TILE_SMALL_ONE_IN = 3
#: A photo where the big pass found nothing is tiled when its long side is at least this many times ``max_imgsz``.
TILE_EMPTY_SIDE = 2
#: A box within this many px of a window's inner edge is cut there (it lies whole in a neighbouring window).
EDGE_PX = 1
#: A window narrower than this (px) is not read.
MIN_WINDOW = 8
#: A look-around window is skipped where its centre lies within this share of its half-side of a window
#: already chosen about the same size (surer corners first) ...
LOOK_MERGE = 1.0
#: ... of about the same size: half-sides within these ratios.
LOOK_SAME_SIZE = (0.7, 1.4)


@dataclass(frozen=True)
class Boxes:
    """Stage-1 boxes (N, 4) in the photo's px, their scores (N,) and classes (N,; 0 for a one-class model).

    >>> Boxes.empty().count, Boxes.concat([Boxes.empty(), Boxes.empty()]).count
    (0, 0)
    """

    xyxy: np.ndarray
    scores: np.ndarray
    cls: np.ndarray

    @property
    def count(self) -> int:
        return len(self.xyxy)

    def where(self, keep: np.ndarray) -> Boxes:
        """The boxes a mask or index array keeps."""
        return Boxes(self.xyxy[keep], self.scores[keep], self.cls[keep])

    @staticmethod
    def empty() -> Boxes:
        return Boxes(np.zeros((0, 4)), np.zeros(0), np.zeros(0, np.int64))

    @staticmethod
    def concat(parts: Sequence[Boxes]) -> Boxes:
        if not parts:
            return Boxes.empty()
        return Boxes(*(np.concatenate(p) for p in zip(*((b.xyxy, b.scores, b.cls) for b in parts))))


class Stage1Network(Protocol):
    """What the passes need of a backend: stage 1 on same-sized looks, in one batch."""

    def stage1(self, images: Sequence[np.ndarray], size: int, conf: float) -> list[Boxes]:
        """Boxes over ``conf`` in each image's px (clipped to it), each image letterboxed to ``size``."""
        ...


@dataclass(frozen=True)
class Look:
    """One image stage 1 reads, and how its boxes map back to the photo's px.

    ``image`` is the photo, a flipped view of it, or a window of it (or of the photo scaled by
    ``scale``) whose top-left corner lies at ``origin``; ``inner`` says which of the window's
    edges lie inside that image, where a box touching them is cut (it lies whole in a neighbour).
    Looks of one ``batch`` key go to the network together.
    """

    image: np.ndarray
    size: int
    batch: Hashable
    flips: tuple[bool, bool] = (False, False)
    origin: tuple[int, int] = (0, 0)
    inner: tuple[bool, bool, bool, bool] = (False, False, False, False)
    scale: float = 1.0

    def to_photo(self, found: Boxes) -> Boxes:
        """``found`` (in this look's px) in the photo's px, without those cut by an inner edge."""
        height, width = self.image.shape[:2]
        boxes = found.xyxy
        if self.flips != (False, False):
            return Boxes(flipped_boxes(boxes, width, height, *self.flips), found.scores, found.cls)
        if not any(self.inner) and self.origin == (0, 0) and self.scale == 1.0:
            return found
        left, top, right, bottom = self.inner
        cut = (((boxes[:, 0] <= EDGE_PX) & left) | ((boxes[:, 1] <= EDGE_PX) & top)
               | ((boxes[:, 2] >= width - EDGE_PX) & right) | ((boxes[:, 3] >= height - EDGE_PX) & bottom))
        x0, y0 = self.origin
        kept = boxes[~cut] + [x0, y0, x0, y0]
        return Boxes(kept if self.scale == 1.0 else kept / self.scale, found.scores[~cut], found.cls[~cut])


def window_look(image: np.ndarray, window: tuple[int, int, int, int], size: int, batch: Hashable,
                scale: float = 1.0) -> Look:
    """The :class:`Look` at one window (x0, y0, x1, y1 px, cut to ``image``) of ``image``.

    >>> look = window_look(np.zeros((100, 200, 3), np.uint8), (150, -10, 250, 50), 320, "w")
    >>> look.image.shape, look.origin, look.inner
    ((50, 50, 3), (150, 0), (True, False, False, True))
    """
    height, width = image.shape[:2]
    x0, y0 = max(0, window[0]), max(0, window[1])
    x1, y1 = min(width, window[2]), min(height, window[3])
    return Look(image[y0:y1, x0:x1], size, batch, origin=(x0, y0),
                inner=(x0 > 0, y0 > 0, x1 < width, y1 < height), scale=scale)


def input_sizes(settings: ReaderSettings, height: int, width: int, fixed: int | None = None) -> tuple[int, ...]:
    """The input sizes a photo is read at: ``imgsz``, and the big pass's when it is on and the photo big.

    A size fixed by the caller (``--imgsz``) is the only one.

    >>> input_sizes(ReaderSettings(), 768, 1024), input_sizes(ReaderSettings(passes=("base",)), 960, 1280)
    ((320, 768), (320,))
    """
    if fixed:
        return (fixed,)
    long_side = max(height, width)
    if not settings.on("big") or min(32 * round(long_side / 64), settings.max_imgsz) <= settings.imgsz:
        return (settings.imgsz,)
    return (settings.imgsz, min(32 * round(long_side * settings.big_share / 32), settings.max_imgsz))


def tile_scale(settings: ReaderSettings, height: int, width: int, big_sides: np.ndarray) -> float | None:
    """The scale of the tiles pass for a big photo of small corners, or ``None`` for no tiles.

    ``big_sides`` are the long sides (px at the big pass) of the corners the big pass keeps.
    Tiles are read when at least one in :data:`TILE_SMALL_ONE_IN` of them is under ``tile_below``, or
    when none were found in a photo over :data:`TILE_EMPTY_SIDE` times ``max_imgsz``; never
    under :data:`TILE_GAIN` times the big pass's scale (a 1280 x 960 photo is never tiled).

    >>> s = ReaderSettings()
    >>> tile_scale(s, 960, 1280, np.array([10.0, 12.0])) is None, tile_scale(s, 3000, 4000, np.array([30.0, 24, 20, 8]))
    (True, None)
    >>> round(tile_scale(s, 3000, 4000, np.array([8.0, 8.0, 30.0])), 2)  # 8 px at 960 -> 28
    0.84
    """
    limit = settings.tile_below
    long_side = max(height, width)
    big_size = input_sizes(settings, height, width)[-1]
    if limit <= 0 or long_side < TILE_GAIN * big_size:
        return None
    small = big_sides[big_sides < limit]
    if len(small):
        if TILE_SMALL_ONE_IN * len(small) < len(big_sides):
            return None
        scale = min(1.0, TILE_CORNER / (float(np.median(small)) * long_side / big_size))
    elif len(big_sides) == 0 and long_side >= TILE_EMPTY_SIDE * settings.max_imgsz:
        scale = TILE_EMPTY_SIDE * settings.max_imgsz / long_side
    else:
        return None
    tile, overlap = settings.max_imgsz, TILE_OVERLAP
    while len(tile_starts(round(width * scale), tile, overlap)) * len(
            tile_starts(round(height * scale), tile, overlap)) > MAX_TILES:
        scale *= TILE_SCALE_STEP
    return scale if scale * long_side >= TILE_GAIN * big_size else None


@dataclass(frozen=True)
class PhotoContext:
    """What every pass knows of the photo being read: the photo, the settings and the input sizes."""

    photo: np.ndarray
    settings: ReaderSettings
    sizes: tuple[int, ...]

    @property
    def big_scale(self) -> float:
        """Photo px to big-pass input px (the big pass's size over the photo's long side)."""
        return self.sizes[-1] / max(self.photo.shape[:2])

    def from_big_pass(self, boxes: Boxes) -> np.ndarray:
        """Which boxes the big pass reads better than the base pass (by size, ``scale_split``): a mask."""
        split = self.settings.scale_split * max(1.0, self.sizes[-1] / (2 * self.settings.imgsz))
        return long_sides(boxes.xyxy) * self.big_scale < split

    @property
    def big_pass_reads(self) -> bool:
        """Is the photo read at a second, bigger size (the big pass on and the photo big enough)?"""
        return self.settings.on(BigPass.name) and len(self.sizes) > 1

    def only_small(self, boxes: Boxes) -> bool:
        """Does the big pass read this photo, and are ``boxes`` (none, or all) small enough for it to keep?"""
        return self.big_pass_reads and bool(self.from_big_pass(boxes).all())

    def only_big(self, boxes: Boxes) -> bool:
        """Did the looks at ``imgsz`` find only corners too big for the big pass to keep, one of them sure
        (``skip_sure``)? Then the big pass would add nothing."""
        return (boxes.count > 0 and not self.from_big_pass(boxes).any()
                and float(boxes.scores.max()) >= self.settings.skip_sure)


Found = Mapping[str, Boxes]


class Stage1Pass:
    """One pass of stage 1 (see the module doc): the looks it reads and the boxes it keeps."""

    name: ClassVar[str]
    #: Passes whose boxes this one needs before it can say where to look.
    needs: ClassVar[tuple[str, ...]] = ()

    def waits_for(self, context: PhotoContext) -> tuple[str, ...]:
        """The passes read before this one on ``context``'s photo (:attr:`needs`)."""
        return self.needs

    def looks(self, context: PhotoContext, found: Found) -> list[Look]:
        raise NotImplementedError

    def chosen(self, context: PhotoContext, found: Found) -> Boxes:
        """This pass's boxes that the reading keeps, given every pass's (``found``)."""
        return found[self.name]


class BasePass(Stage1Pass):
    """The photo at ``imgsz``; with a big pass, only the corners big enough for this size."""

    name = "base"

    def looks(self, context: PhotoContext, found: Found) -> list[Look]:
        return [Look(context.photo, context.sizes[0], ("size", context.sizes[0]))]

    def chosen(self, context: PhotoContext, found: Found) -> Boxes:
        boxes = found[self.name]
        return boxes.where(~context.from_big_pass(boxes)) if "big" in found else boxes


class ViewsPass(BasePass):
    """The photo mirrored and upside down (``views``), at ``imgsz``; where the big pass reads the photo and
    the base pass found no big corner, not at all (``"skips"``: the views keep only big ones)."""

    name = "views"
    needs = ("base",)

    def waits_for(self, context: PhotoContext) -> tuple[str, ...]:
        """The base pass where the views may be skipped, else none: they then read in its batch."""
        return self.needs if context.settings.skips_pass(self.name) and context.big_pass_reads else ()

    def looks(self, context: PhotoContext, found: Found) -> list[Look]:
        size = context.sizes[0]
        if size != context.settings.imgsz or (context.settings.skips_pass(self.name)
                                              and context.only_small(found.get(BasePass.name, Boxes.empty()))):
            return []
        return [Look(cv2.flip(context.photo, -1 if fx and fy else (1 if fx else 0)), size, ("size", size), (fx, fy))
                for fx, fy in (VIEW_FLIPS[view] for view in context.settings.views)]


class BigPass(Stage1Pass):
    """A big photo again at ``big_share`` of its long side: its small corners (and, with tiles, not the smallest);
    where the 320-px looks found only big corners, one of them sure, not at all (``"skips"``)."""

    name = "big"
    needs = ("base", "views")

    def looks(self, context: PhotoContext, found: Found) -> list[Look]:
        if len(context.sizes) < 2 or (context.settings.skips_pass(self.name) and context.only_big(
                Boxes.concat([found[name] for name in self.needs if name in found]))):
            return []
        return [Look(context.photo, context.sizes[-1], ("size", context.sizes[-1]))]

    def small(self, context: PhotoContext, found: Found) -> Boxes:
        boxes = found[self.name]
        return boxes.where(context.from_big_pass(boxes))

    def chosen(self, context: PhotoContext, found: Found) -> Boxes:
        boxes = self.small(context, found)
        if "tiles" in found:
            return boxes.where(long_sides(boxes.xyxy) * context.big_scale >= context.settings.tile_below)
        return boxes


class TilesPass(Stage1Pass):
    """Tiles of the photo scaled by :func:`tile_scale`: the corners under ``tile_below`` at the big pass."""

    name = "tiles"
    needs = ("big",)

    def looks(self, context: PhotoContext, found: Found) -> list[Look]:
        if "big" not in found:
            return []
        height, width = context.photo.shape[:2]
        big_sides = long_sides(BigPass().small(context, found).xyxy) * context.big_scale
        scale = tile_scale(context.settings, height, width, big_sides)
        if scale is None:
            return []
        sw, sh = round(width * scale), round(height * scale)
        scaled = cv2.resize(context.photo, (sw, sh), interpolation=cv2.INTER_AREA)
        tile = context.settings.max_imgsz
        return [window_look(scaled, (x0, y0, x0 + tile, y0 + tile), tile, ("tile", x0, y0), scale)
                for y0 in tile_starts(sh, tile, TILE_OVERLAP) for x0 in tile_starts(sw, tile, TILE_OVERLAP)]

    def chosen(self, context: PhotoContext, found: Found) -> Boxes:
        boxes = found[self.name]
        return boxes.where(long_sides(boxes.xyxy) * context.big_scale < context.settings.tile_below)


class LookAroundPass(Stage1Pass):
    """Windows of ``look_window`` index sides about each corner read, each read alone at ``look_size``.

    Windows of about one place and size are read once (:data:`LOOK_MERGE`, :data:`LOOK_SAME_SIZE`,
    surer corners first).
    """

    name = "look_around"

    def windows(self, context: PhotoContext, corners: Sequence[Corner]) -> list[tuple[int, int, int, int]]:
        height, width = context.photo.shape[:2]
        chosen: list[tuple[float, float, float]] = []
        low, high = LOOK_SAME_SIZE
        for corner in sorted(corners, key=lambda c: -c.confidence):
            x0, y0, x1, y1 = corner.box
            half = context.settings.look_window * max(x1 - x0, y1 - y0) / 2
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            if not any(abs(cx - x) < LOOK_MERGE * h and abs(cy - y) < LOOK_MERGE * h and low < half / h < high
                       for x, y, h in chosen):
                chosen.append((cx, cy, half))
        out = []
        for cx, cy, half in chosen:
            x0, y0 = int(max(0, cx - half)), int(max(0, cy - half))
            x1, y1 = int(min(width, cx + half)), int(min(height, cy + half))
            if x1 - x0 >= MIN_WINDOW and y1 - y0 >= MIN_WINDOW:
                out.append((x0, y0, x1, y1))
        return out

    def around(self, context: PhotoContext, corners: Sequence[Corner]) -> list[Look]:
        """The looks about ``corners`` (each its own batch)."""
        return [window_look(context.photo, window, context.settings.look_size, ("window", k))
                for k, window in enumerate(self.windows(context, corners))]

    def looks(self, context: PhotoContext, found: Found) -> list[Look]:
        return []  # it reads after pairing, about the cards read: :meth:`around`


#: Every pass by name, in the order they run.
PASSES: dict[str, type[Stage1Pass]] = {p.name: p for p in (BasePass, ViewsPass, BigPass, TilesPass, LookAroundPass)}


def photo_passes(settings: ReaderSettings) -> list[Stage1Pass]:
    """The passes over the whole photo that ``settings`` turn on, in order (the look-around reads later)."""
    return [PASSES[name]() for name in settings.passes if name != LookAroundPass.name]


def read_looks(network: Stage1Network, looks: Sequence[Look], conf: float) -> list[Boxes]:
    """Each look's boxes in the photo's px; the looks of one batch key go to the network together."""
    batches: dict[Hashable, list[int]] = {}
    for k, look in enumerate(looks):
        batches.setdefault(look.batch, []).append(k)
    out: list[Boxes] = [Boxes.empty()] * len(looks)
    for members in batches.values():
        found = network.stage1([looks[k].image for k in members], looks[members[0]].size, conf)
        for k, boxes in zip(members, found):
            out[k] = looks[k].to_photo(boxes)
    return out


def read_passes(network: Stage1Network, passes: Sequence[Stage1Pass], context: PhotoContext, conf: float,
                on_pass: Callable[[str, Boxes], None] | None = None) -> Boxes:
    """Every pass's looks read (those of passes that need no other's boxes in the same batches), then
    the boxes each pass keeps, in pass order. ``on_pass`` sees each pass's boxes as read (a probe)."""
    found: dict[str, Boxes] = {}
    queued: list[tuple[Stage1Pass, list[Look]]] = []

    def flush() -> None:
        read = iter(read_looks(network, [look for _, looks in queued for look in looks], conf))
        for stage, looks in queued:
            if looks:
                found[stage.name] = Boxes.concat([next(read) for _ in looks])
                if on_pass is not None:
                    on_pass(stage.name, found[stage.name])
        queued.clear()

    for stage in passes:
        if stage.waits_for(context) and queued:
            flush()
        queued.append((stage, stage.looks(context, found)))
    flush()
    return Boxes.concat([stage.chosen(context, found) for stage in passes if stage.name in found])
