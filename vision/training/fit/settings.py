"""Every setting of the three training recipes, typed, with the value ``tiplu train`` uses, explained once.

One recipe per network: stage 1 (:class:`CornersSettings`, the YOLO that boxes every corner
index), stage 2 (:class:`NamesSettings`, the small networks that name a corner's crop) and the
orientation network (:class:`OrientationSettings`, which way an index faces). Each holds its
data mix, its schedule and its other hyperparameters; :class:`TrainSettings` holds the three.
``tiplu train``, enrolment and "Improve from corrections" (:data:`ENROL`) and a run on a GPU all
call the same recipes (:mod:`.corners`, :mod:`.names`, :mod:`.orientation`); they differ only in
these settings and the device. The start point is no setting: a model folder (its ONNX files
turned back into weights, :mod:`.resume`), a checkpoint, or the resume point a run goes on from.

A schedule is one cosine from ``lr_max`` to ``lr_min`` over ``plan_epochs`` (a *phase*;
``tiplu train extend`` adds one); a run trains ``epochs`` of it from where its resume point
stands, so a campaign of many short runs follows the same curve as one long run.

>>> TRAIN.corners.imgsz, TRAIN.names.lr_max, ENROL.names.epochs
(320, 0.001, 6)
>>> with_overrides(TRAIN.corners, ["lr_max=0.002", "val=false"]).lr_max
0.002
>>> setting_help(CornersSettings)["imgsz"]
"Input size (px) stage 1 trains at: the reader's base pass reads at 320."
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, TypeVar

#: Where a campaign's resume point lives by default (under the git-ignored ``runs/``, never in the package).
RESUME_DIR = Path("runs") / "train" / "resume"
#: Real photos whose batch statistics calibrate a network turned back from ONNX (their ``train/`` split if present).
REAL = Path("data") / "real"
#: The networks, by the name of their recipe (``tiplu train corners|names|orientation``).
NETWORKS = ("corners", "names", "orientation")


class TrainError(ValueError):
    """Training cannot start; the message says what to install, which path or which setting to fix."""


@dataclass(frozen=True)
class CornersSettings:
    """Stage 1's recipe: an Ultralytics YOLO11n boxing every corner index as one class (``corners.onnx``)."""

    #: Epochs this run trains (None: to the end of the schedule's phase).
    epochs: int | None = None
    #: Length of the schedule's phase in epochs: the cosine falls from ``lr_max`` to ``lr_min`` over it.
    plan_epochs: int = 60
    #: Learning rate at the phase's start (SGD).
    lr_max: float = 0.004
    #: Learning rate at the phase's end.
    lr_min: float = 0.0002
    #: Epochs of warm-up at each run's start (no optimiser moments are kept between runs).
    warmup_epochs: float = 0.3
    #: SGD momentum.
    momentum: float = 0.9
    #: Input size (px) stage 1 trains at: the reader's base pass reads at 320.
    imgsz: int = 320
    #: Photos per batch.
    batch: int = 16
    #: Data-loading processes (0: in the training process).
    workers: int = 2
    #: Share of the training photos each epoch sees.
    fraction: float = 1.0
    #: Turns (degrees) of Ultralytics' augmentation. Small: it boxes a turned label by its turned corners, so at
    #: 45 degrees a tight index box grows twice too big; every other angle comes from ``--randomise`` scenes.
    degrees: float = 10.0
    #: Perspective warp of the augmentation.
    perspective: float = 0.0
    #: Scale change of the augmentation (share).
    scale: float = 0.5
    #: Share of photos mirrored left to right.
    fliplr: float = 0.5
    #: Share of photos flipped upside down (none: it loosens the boxes, as big turns do).
    flipud: float = 0.0
    #: Share of batches laid as mosaics of four photos.
    mosaic: float = 1.0
    #: The last epochs trained without mosaics.
    close_mosaic: int = 0
    #: Saturation and value changes of the augmentation (shares).
    hsv_s: float = 0.7
    hsv_v: float = 0.5
    #: Measure the val split after each epoch (its box mAP goes into the resume point's state).
    val: bool = True
    #: Keep the batch norms' statistics as the start point has them (each batch norm read in eval mode while the
    #: rest learns). A run that lets them follow its training batches (mosaics of rendered scenes) changes what the
    #: network computes even at a learning rate of zero: it lost tables before it learnt anything.
    freeze_norms: bool = True
    #: Keep every K-th epoch's weights too (``snapshots/`` beside the run; 0: none), to measure a long phase at several points.
    snapshot_every: int = 0

    def augmentation(self) -> dict[str, float]:
        """The augmentation as Ultralytics' training arguments.

        >>> CornersSettings().augmentation()["degrees"]
        10.0
        """
        keys = ("degrees", "perspective", "scale", "fliplr", "flipud", "mosaic", "close_mosaic", "hsv_s", "hsv_v")
        return {k: getattr(self, k) for k in keys}


@dataclass(frozen=True)
class NamesSettings:
    """Stage 2's recipe: the crop classifier (53 cards and "not a corner") that names each box stage 1 finds."""

    #: Epochs this run trains (None: to the end of the schedule's phase).
    epochs: int | None = None
    #: Length of the schedule's phase in epochs; each run is one cycle peaking at the phase's rate where it starts.
    plan_epochs: int = 40
    #: Learning rate at the phase's start (AdamW).
    lr_max: float = 1e-3
    #: Learning rate at the phase's end.
    lr_min: float = 5e-5
    #: AdamW weight decay.
    weight_decay: float = 5e-4
    #: Label smoothing of the cross-entropy.
    label_smoothing: float = 0.05
    #: Crops per batch.
    batch: int = 128
    #: Augmented crops per labelled corner of the photo folders (boxes jittered as stage 1's are).
    copies: int = 2
    #: "Not a corner" crops (random boxes off every label) per corner crop of a photo.
    background: float = 0.3
    #: Rendered card faces also cropped (``train``, ``drawn``, ``svg``; none: photos only); the held-out designs never.
    decks: str | None = "train"
    #: Augmented crops per corner of each rendered face (and of each enrolled card).
    face_copies: int = 4
    #: Share of the face crops turned anywhere in 0-360 degrees (the rest up to 45): cards lie at every angle.
    turn_any: float = 0.5
    #: A seeded sample of at most this many photos per run (None: all).
    max_images: int | None = None
    #: Augmented copies per run of each given crop (stage 1's own boxes, ``--extra-crops``).
    extra_copies: int = 1
    #: Augmented crops per corner of each drawn deck's faces mixed into an improvement of a model whose deck has
    #: no photos to learn again (the shipped model): a few corrected crops of one camera otherwise teach it to
    #: name every doubtful black card a club and wear away what it knows of other decks.
    rehearsal_copies: int = 0


@dataclass(frozen=True)
class OrientationSettings:
    """The orientation network's recipe: which way each corner index faces (``corner_orientation.onnx``)."""

    #: Epochs of the run (one cycle).
    epochs: int = 6
    #: Crops per labelled index, each turned at random (the label turns with it).
    copies: int = 2
    #: Crops per batch.
    batch: int = 128
    #: Peak learning rate of the one cycle (AdamW).
    lr_max: float = 3e-3
    #: AdamW weight decay.
    weight_decay: float = 1e-4
    #: Share of the crops with their ink inverted (light-on-dark decks).
    invert: float = 0.3


@dataclass(frozen=True)
class TrainSettings:
    """The three recipes' settings together: what a caller (``tiplu train``, enrolment) chooses."""

    corners: CornersSettings = field(default_factory=CornersSettings)
    names: NamesSettings = field(default_factory=NamesSettings)
    orientation: OrientationSettings = field(default_factory=OrientationSettings)

    def of(self, network: str) -> Any:
        """The settings of ``network`` (one of :data:`NETWORKS`)."""
        if network not in NETWORKS:
            raise TrainError(f"no network {network!r}; choose one of {', '.join(NETWORKS)}")
        return getattr(self, network)


#: ``tiplu train``'s settings: a campaign of short CPU runs (or one long GPU run) from the shipped model.
TRAIN = TrainSettings()
#: Enrolment and "Improve from corrections": stage 2 fine-tuned for 6 epochs at 1e-3 on a deck's own crops
#: (40 of each corner), stage 1 (when asked) at 0.002 falling to half on scenes of the enrolled cards.
ENROL = TrainSettings(
    corners=CornersSettings(plan_epochs=1, lr_max=0.002, lr_min=0.001, batch=8, workers=0, val=False),
    names=NamesSettings(epochs=6, plan_epochs=6, lr_max=1e-3, face_copies=40, turn_any=0.25, decks=None,
                        rehearsal_copies=2))

Settings = TypeVar("Settings", CornersSettings, NamesSettings, OrientationSettings)


def setting_help(cls: type) -> dict[str, str]:
    """Each setting's explanation: the ``#:`` comment above it in its class (read from the source, so it is written once)."""
    help_of: dict[str, str] = {}
    lines: list[str] = []
    for line in inspect.getsource(cls).splitlines():
        text = line.strip()
        if text.startswith("#:"):
            lines.append(text[2:].strip())
        elif (match := re.match(r"([a-z_]+):", text)) and not text.startswith("def"):
            help_of[match.group(1)] = " ".join(lines) or help_of.get(_previous(help_of), "")
            lines = []
        elif not text.startswith("#"):
            lines = []
    return help_of


def _previous(found: dict[str, str]) -> str:
    """The setting before (two settings under one comment share it)."""
    return next(reversed(found), "")


def _parse(value: str, kind: Any, name: str) -> Any:
    """``value`` as the setting ``name`` of type ``kind`` takes it; :class:`TrainError` saying what to give."""
    options = typing.get_args(kind) if isinstance(kind, types.UnionType) else (kind,)
    if type(None) in options and value.lower() in ("none", ""):
        return None
    for option in (o for o in options if o is not type(None)):
        try:
            if option is bool:
                if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return value.lower() in ("true", "1", "yes")
            return option(value)
        except ValueError:
            continue
    raise TrainError(f"{name}={value}: give {' or '.join(getattr(o, '__name__', str(o)) for o in options)}")


def with_overrides(settings: Settings, pairs: list[str]) -> Settings:
    """``settings`` with ``KEY=VALUE`` pairs (``--set lr_max=0.002``) put in, each read as its setting's type."""
    hints = typing.get_type_hints(type(settings))
    names = {f.name for f in fields(settings)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or key not in names:
            raise TrainError(f"--set {pair}: give KEY=VALUE with KEY one of {', '.join(sorted(names))}")
        changes[key] = _parse(value.strip(), hints[key], key)
    return dataclasses.replace(settings, **changes)
