"""Write a synthetic Marriage-table dataset in Ultralytics YOLO layout.

``tiplu generate OUT --count N --seed S`` writes::

    OUT/images/NAME.jpg      the photo-like scene
    OUT/labels/NAME.txt      one "class cx cy w h" line per visible corner index
    OUT/geometry/NAME.json   cards, outlines, groups, which corner each box is (see scenes.py)
    OUT/train.txt, val.txt   image lists; OUT/data.yaml (path, train, val, nc, names)
    OUT/classes.txt          the 53 class names, one a line (scorer.CLASS_NAMES order)

Image ``i`` is drawn from ``numpy.random.default_rng([seed, i])``, so a run is reproducible
image by image (same seed -> byte-identical labels, geometry and JPEGs) and can be split
across worker processes without changing the result.

>>> import tempfile
>>> with tempfile.TemporaryDirectory() as d:
...     summary = generate_dataset(d, 2, seed=1, size=(320, 240), decks="drawn")
>>> summary.count, summary.boxes > 0
(2, True)
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence, TextIO

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.training.data.dataset import write_class_names
from vision.training.data.decks import HOLDOUT_DECK, Deck, load_decks
from vision.training.data.procedural import random_decks
from vision.training.data.scenes import (CROP_CARD_PX, MIN_VISIBLE, SCENE_TYPES, RenderedScene, SceneError,
                                    render_scene)

#: How often each scene type is drawn when none is asked for.
SCENE_WEIGHTS: dict[str, float] = {"table": 0.25, "meld_row": 0.2, "fan": 0.15, "tunnela": 0.15,
                                   "maal_spread": 0.15, "single": 0.1}


@dataclass(frozen=True)
class Summary:
    """What :func:`generate_dataset` wrote: image and box counts, split sizes and seconds."""

    out_dir: str
    count: int
    train: int
    val: int
    boxes: int
    seconds: float

    def to_dict(self) -> dict:
        return {"out_dir": self.out_dir, "count": self.count, "train": self.train, "val": self.val,
                "boxes": self.boxes, "seconds": round(self.seconds, 2)}


_WORKER: dict = {}


def _init_worker(decks: str, holdout: str, cache: str | None) -> None:
    _WORKER["decks"] = load_decks(decks, holdout=holdout, cache_dir=Path(cache) if cache else None)


def _one(job: tuple) -> tuple[str, int, bool]:
    (out, seed, i, size, crop, scenes, weights, effects, min_visible, val, quality, px, randomise,
     procedural, random_palettes, words) = job
    decks: list[Deck] = _WORKER["decks"]
    rng = np.random.default_rng([seed, i])
    scene = scenes[int(rng.choice(len(scenes), p=weights))]
    if procedural and rng.random() < procedural:
        fresh = random_decks(rng, int(rng.integers(1, 3)), random_palettes)
        decks = fresh + [decks[int(rng.integers(len(decks)))]] if rng.random() < 0.3 else fresh
    r = render_scene(rng, scene, size=size, decks=decks, crop=crop, effects=effects,
                     min_visible=min_visible, card_px_range=px, randomise=randomise, words=words)
    name = f"s{seed}_{i:06d}"
    q = quality if quality else int(rng.integers(55, 96))
    boxes = write_scene(Path(out), name, r, q, seed=seed, index=i, split="val" if val else "train")
    return name, boxes, val


def write_scene(out: Path, name: str, scene: RenderedScene, quality: int, **about: object) -> int:
    """Write one rendered scene into the folders ``out/images``, ``labels`` and ``geometry``
    (made when missing) as this module's layout says; the geometry also names its image,
    its JPEG quality and ``about``. Returns the number of corner boxes labelled.

    Enrolment writes its scenes the same way (:func:`vision.training.fit.enrol.write_scenes`),
    so :func:`vision.training.measure.calibrate.read_split` reads both.
    """
    ok, buf = cv2.imencode(".jpg", scene.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise SceneError(f"JPEG encoding failed for {name}")
    for sub in ("images", "labels", "geometry"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    (out / "images" / f"{name}.jpg").write_bytes(buf.tobytes())
    h, w = scene.image.shape[:2]
    (out / "labels" / f"{name}.txt").write_text("".join(b.yolo(w, h) + "\n" for b in scene.labels))
    geo = dict(scene.geometry) | {"image": f"images/{name}.jpg", **about, "jpeg_quality": quality}
    (out / "geometry" / f"{name}.json").write_text(json.dumps(geo, separators=(",", ":")))
    return len(scene.labels)


def generate_dataset(out_dir: str | os.PathLike, count: int, seed: int = 0, *,
                     size: tuple[int, int] = (1280, 960), crop: bool = False,
                     decks: str = "train", holdout: str = HOLDOUT_DECK,
                     val_fraction: float = 0.1, scenes: Sequence[str] | None = None,
                     effects: bool = True, min_visible: float = MIN_VISIBLE,
                     quality: int | None = None, workers: int = 1, start: int = 0,
                     cache_dir: str | None = None, progress: TextIO | None = None,
                     card_px: tuple[float, float] = CROP_CARD_PX, randomise: bool = False,
                     procedural: float = 0.0, random_palettes: float = 0.0, words: float = 0.0) -> Summary:
    """Render ``count`` scenes into ``out_dir`` (see the module doc for the layout).

    ``decks``: ``train`` (drawn + SVG decks except ``holdout``), ``holdout``, ``drawn`` or
    ``svg``; ``crop`` centres the view on a card with cards ``card_px`` (min, max) px wide
    (use a square ``size`` such as 640x640); images with index ``i < val_fraction * count`` form the
    validation list (``decks="holdout"`` puts everything in ``val.txt`` and ``test.txt``).
    ``start`` offsets the image indices, so a second run can extend a set. ``progress``
    gets a line every 100 images. ``randomise`` turns on domain randomisation (any angle,
    strong tilt, hands, phones, coins, webcam and low-light frames); ``procedural`` is the
    share of scenes drawn with fresh procedural designs (:mod:`vision.training.data.procedural`,
    never a held-out one), and ``random_palettes`` the share of those designs inked in a palette drawn
    at random (:func:`~vision.training.data.procedural.random_palette`); ``words`` the share of scenes
    with printed words on the table (:func:`~vision.training.data.effects.draw_words`).
    """
    if count < 1:
        raise SceneError(f"count must be at least 1, got {count}")
    if not 0.0 <= procedural <= 1.0:
        raise SceneError(f"procedural is a share of the scenes, from 0 to 1; got {procedural:g}")
    if not 0.0 <= words <= 1.0:
        raise SceneError(f"words is a share of the scenes, from 0 to 1; got {words:g}")
    if not 0.0 <= random_palettes <= 1.0:
        raise SceneError(f"random palettes are a share of the designs, from 0 to 1; got {random_palettes:g}")
    chosen = list(scenes) if scenes else list(SCENE_WEIGHTS)
    for s in chosen:
        if s not in SCENE_TYPES:
            raise SceneError(f"unknown scene {s!r}; use one of {', '.join(SCENE_TYPES)}")
    weights = np.array([SCENE_WEIGHTS.get(s, 0.1) for s in chosen], float)
    weights /= weights.sum()
    out = Path(out_dir)
    for sub in ("images", "labels", "geometry"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    all_val = decks == "holdout"
    n_val = count if all_val else int(round(val_fraction * count))
    jobs = [(str(out), seed, i, tuple(size), crop, chosen, weights, effects, min_visible,
             i - start < n_val, quality, tuple(card_px), randomise, procedural, random_palettes, words)
            for i in range(start, start + count)]
    t0 = time.time()
    results: list[tuple[str, int, bool]] = []
    if workers > 1:
        import multiprocessing as mp
        ctx = mp.get_context("fork")
        with ctx.Pool(workers, _init_worker, (decks, holdout, cache_dir)) as pool:
            for k, res in enumerate(pool.imap(_one, jobs, chunksize=4)):
                results.append(res)
                if progress and (k + 1) % 100 == 0:
                    print(f"{k + 1}/{count} images, {time.time() - t0:.0f} s", file=progress, flush=True)
    else:
        _init_worker(decks, holdout, cache_dir)
        for k, job in enumerate(jobs):
            results.append(_one(job))
            if progress and (k + 1) % 100 == 0:
                print(f"{k + 1}/{count} images, {time.time() - t0:.0f} s", file=progress, flush=True)
    train = [f"./images/{n}.jpg" for n, _, v in results if not v]
    val = [f"./images/{n}.jpg" for n, _, v in results if v]
    _append_list(out / "train.txt", train)
    _append_list(out / "val.txt", val)
    if all_val:
        _append_list(out / "test.txt", val)
    write_class_names(out)
    names = "\n".join(f"  {i}: '{n}'" for i, n in enumerate(CLASS_NAMES))
    test_line = "test: test.txt\n" if (out / "test.txt").exists() else ""
    (out / "data.yaml").write_text(
        f"# synthetic Marriage-table corner indices (vision/training/data/generate.py), decks={decks}\n"
        f"path: {out.resolve()}\ntrain: train.txt\nval: val.txt\n{test_line}"
        f"nc: {len(CLASS_NAMES)}\nnames:\n{names}\n")
    return Summary(str(out), len(results), len(train), len(val), sum(b for _, b, _ in results),
                   time.time() - t0)


def study_visibility(count: int = 300, seed: int = 0, decks: str = "drawn",
                     readable_rank: float = 0.6, readable_pip: float = 0.5,
                     verbose: bool = True) -> dict[float, float]:
    """Measure which :data:`~vision.training.data.scenes.MIN_VISIBLE` threshold best predicts a readable corner.

    Renders ``count`` crops (all scene types), records every partly visible corner with the
    visible fraction of its whole index, of its rank glyph and of its pip, and calls a corner
    *readable* when at least ``readable_rank`` of the rank and ``readable_pip`` of the pip
    show. Returns threshold -> agreement (share of partly-hidden corners where
    ``visible >= threshold`` equals *readable*); prints the table when ``verbose``.
    Example: ``study_visibility(400, 0, "train")``.
    """
    decks_list = load_decks(decks)
    rows = []
    for i in range(count):
        rng = np.random.default_rng([seed, i])
        scene = SCENE_TYPES[i % len(SCENE_TYPES)]
        r = render_scene(rng, scene, size=(640, 640), decks=decks_list, crop=True,
                         min_visible=1e-3, parts=True)
        for b in r.geometry["boxes"]:
            if b["name"] != "JOKER" and b["visible_pip"] >= 0 and b["visible_rank"] >= 0:
                rows.append((b["visible"], b["visible_rank"], b["visible_pip"]))
    arr = np.array(rows)
    partial = arr[arr[:, 0] < 0.999]
    readable = (partial[:, 1] >= readable_rank) & (partial[:, 2] >= readable_pip)
    table = {}
    for t in np.round(np.arange(0.1, 1.0, 0.05), 2):
        table[float(t)] = float(((partial[:, 0] >= t) == readable).mean())
    if verbose:
        print(f"corners: {len(arr)}, fully visible: {len(arr) - len(partial)}, "
              f"partly hidden: {len(partial)}, of those readable: {int(readable.sum())}")
        hist, edges = np.histogram(partial[:, 0], bins=10, range=(0, 1))
        print("visible-fraction histogram of partly hidden corners:",
              " ".join(f"{e:.1f}:{h}" for e, h in zip(edges, hist)))
        for t, agree in table.items():
            print(f"threshold {t:.2f}: agreement {agree:.3f}")
    return table


def _append_list(path: Path, lines: list[str]) -> None:
    old = path.read_text().splitlines() if path.exists() else []
    merged = sorted(set(old) | set(lines))
    path.write_text("".join(f"{line}\n" for line in merged))

