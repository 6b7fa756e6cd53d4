"""Train tiplu's two-stage card-corner detector offline on CPU (or GPU), then export ONNX.

Stage 1 is an Ultralytics YOLO11n built from ``vision/training/fit/train_config/yolo11n-corner.yaml``
(no pretrained weights, nothing downloaded) that finds card-corner indices as ONE class.
Stage 2 is a small CNN (:class:`CornerNet`) that names the card from a crop of each corner.
Two stages because a from-scratch 53-class YOLO barely moves on a few hundred labelled
corners and two CPU cores, while a class-agnostic box and a 32x48 crop classifier learn fast.

Examples::

    tiplu train detector data/real/data.yaml --epochs 60 --imgsz 320
    tiplu train detector data/real/data.yaml --resume runs/tiplu/detector/weights/last.pt
    tiplu train classifier data/real data/synth --epochs 30
    tiplu train export --detector runs/tiplu/detector/weights/best.pt \\
        --classifier runs/tiplu/classifier/best.pt --out models

``python -m vision.training.fit.names ...`` takes the same arguments.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.detector import CLASSIFIER_FILE, CROP_H, CROP_W, DETECTOR_FILE, crop_corner
from vision.geometry import box_iou
from vision.orientation import ORIENTATION_FILE
from vision.settings import ReaderSettings, write_settings
from vision.training.data.dataset import Sample, iter_samples, read_sample, write_class_names
from vision.training.data.decks import Deck, load_decks

CONFIG_DIR = Path(__file__).resolve().parent / "train_config"
DEFAULT_DETECTOR_YAML = CONFIG_DIR / "yolo11n-corner.yaml"
OPSET = 17


class TrainError(ValueError):
    """Training cannot start; the message says what to install or which path to fix."""


def offline_environment(config_dir: Path | None = None) -> Path:
    """Make Ultralytics work with no network: no downloads, no auto-install, a local font.

    Ultralytics fetches ``Arial.ttf`` into its config dir for plots unless it finds one, so
    the bundled DejaVu Sans is copied there under that name. Call before importing it.

    >>> offline_environment(Path("/tmp/tiplu-yolo-doctest")).joinpath("Arial.ttf").is_file()
    True
    """
    cfg = config_dir or Path(os.environ.get("TIPLU_YOLO_CONFIG_DIR", "runs/yolo_config")).resolve()
    cfg.mkdir(parents=True, exist_ok=True)
    for name in ("Arial.ttf", "Arial.Unicode.ttf"):
        if not (cfg / name).is_file():
            shutil.copyfile(CONFIG_DIR / "DejaVuSans.ttf", cfg / name)
    os.environ["YOLO_CONFIG_DIR"] = str(cfg)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ["YOLO_AUTOINSTALL"] = "0"
    os.environ.setdefault("WANDB_MODE", "disabled")
    return cfg


def _ultralytics():
    offline_environment()
    try:
        import ultralytics
        from ultralytics import YOLO
        from ultralytics.utils import SETTINGS
    except ImportError as exc:
        raise TrainError("training needs the train extra (a few GB): .venv/bin/pip install -e '.[train]'") from exc
    off = {k: False for k in ("sync", "wandb", "mlflow", "comet", "clearml", "neptune", "dvc",
                                "tensorboard", "raytune", "vscode_msg", "openvino_msg")}
    SETTINGS.update({k: v for k, v in off.items() if k in SETTINGS})
    return ultralytics, YOLO


def train_detector(data: Path, *, epochs: int = 60, imgsz: int = 320, batch: int = 16,
                   model: Path = DEFAULT_DETECTOR_YAML, weights: Path | None = None,
                   resume: Path | None = None, project: Path = Path("runs/tiplu"),
                   name: str = "detector", device: str = "cpu", workers: int = 2,
                   patience: int = 100, fraction: float = 1.0, single_cls: bool = True) -> Path:
    """Train the class-agnostic corner detector; returns the best checkpoint path.

    ``weights`` fine-tunes from an earlier checkpoint (e.g. synthetic pre-training, then real
    train split); ``resume`` continues an interrupted run with its own saved arguments.
    ``single_cls=False`` trains the single-stage alternative (53 classes, no classifier).
    """
    _, YOLO = _ultralytics()
    if resume is not None:
        if not resume.is_file():
            raise TrainError(f"{resume}: no such checkpoint to resume (look in {project}/*/weights/last.pt)")
        yolo = YOLO(str(resume))
        yolo.train(resume=True)
    else:
        if not Path(data).is_file():
            raise TrainError(f"{data}: no data.yaml; run 'python -m vision.training.data.dataset import-real' first")
        yolo = YOLO(str(weights if weights is not None else model))
        yolo.train(data=str(data), epochs=epochs, imgsz=imgsz, batch=batch, device=device,
                   workers=workers, single_cls=single_cls, project=str(project.resolve()), name=name,
                   exist_ok=True, pretrained=str(weights) if weights is not None else False, amp=device != "cpu", plots=False,
                   patience=patience, fraction=fraction, seed=0, deterministic=False,
                   degrees=15.0, scale=0.5, fliplr=0.5, mosaic=1.0, close_mosaic=5,
                   hsv_s=0.6, hsv_v=0.5, cache=True, warmup_epochs=1.0 if weights else 3.0)
    best = Path(yolo.trainer.best)
    return best if best.is_file() else Path(yolo.trainer.last)


BACKGROUND = len(CLASS_NAMES)  # classifier output 53: "not a corner" (rejects stage-1 false hits)


def _augment_box(rng: np.random.Generator, box: np.ndarray, img_w: int, img_h: int) -> np.ndarray:
    """Jitter a pixel box the way stage-1 boxes differ from labels (shift and scale ~10%)."""
    x1, y1, x2, y2 = box
    w, h = x2 - x1, y2 - y1
    dx, dy = rng.normal(0, 0.07, 2) * (w, h)
    sw, sh = np.exp(rng.normal(0, 0.1, 2))
    cx, cy = (x1 + x2) / 2 + dx, (y1 + y2) / 2 + dy
    return np.array([cx - w * sw / 2, cy - h * sh / 2, cx + w * sw / 2, cy + h * sh / 2])


#: Shares of classifier crops shown in grey, with their colour channels shuffled (else), and inverted: a
#: light-on-dark or four-colour deck keeps each suit's shape but not its colour.
GREY_SHARE, SHUFFLE_SHARE, INVERT_SHARE = 0.15, 0.15, 0.1


def _augment_pixels(rng: np.random.Generator, crop: np.ndarray) -> np.ndarray:
    """Photometric changes seen on real tables: 180-degree turn, light, blur, noise, grey."""
    if rng.random() < 0.5:
        crop = crop[::-1, ::-1]
    out: np.ndarray = crop.astype(np.float32)
    out = out * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    out = out * rng.uniform(0.85, 1.15, 3)[None, None, :]
    if rng.random() < GREY_SHARE:
        out = out.mean(axis=2, keepdims=True).repeat(3, axis=2)
    elif rng.random() < SHUFFLE_SHARE:
        out = out[..., rng.permutation(3)]
    if rng.random() < INVERT_SHARE:
        out = 255.0 - out
    if rng.random() < 0.3:
        out = cv2.GaussianBlur(out, (3, 3), rng.uniform(0.3, 1.2))
    if rng.random() < 0.3:
        out = out + rng.normal(0, rng.uniform(2, 10), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def build_crops(samples: Sequence[Sample], copies: int = 8, background: float = 0.3,
                seed: int = 0, max_images: int | None = None,
                crop_size: tuple[int, int] = (CROP_W, CROP_H)) -> tuple[np.ndarray, np.ndarray]:
    """Augmented classifier crops from labelled photos: (N, h, w, 3) uint8 BGR and labels.

    ``crop_size`` is the classifier's input (w, h), 32x48 unless the campaign chose another
    (:func:`vision.training.fit.resume.extend_plan`).

    Each labelled corner gives ``copies`` jittered crops; ``background`` times as many crops
    again come from random same-sized boxes that do not overlap a label (class 53).
    """
    rng = np.random.default_rng(seed)
    xs: list[np.ndarray] = []
    ys: list[int] = []
    items = list(samples)
    if max_images is not None and len(items) > max_images:
        items = [items[i] for i in rng.choice(len(items), max_images, replace=False)]
    for s in items:
        if not s.boxes:
            continue
        read = read_sample(s)
        if read is None:
            continue
        img, boxes = read
        h, w = img.shape[:2]
        for b, box in zip(s.boxes, boxes):
            for _ in range(copies):
                xs.append(_augment_pixels(rng, crop_corner(img, _augment_box(rng, box, w, h), size=crop_size)))
                ys.append(b.cls)
        n_bg = int(round(len(boxes) * copies * background))
        for _ in range(n_bg):
            ref = boxes[rng.integers(len(boxes))]
            bw, bh = (ref[2] - ref[0]) * rng.uniform(0.7, 1.4), (ref[3] - ref[1]) * rng.uniform(0.7, 1.4)
            if rng.random() < 0.5:
                cx, cy = ref[0] + rng.normal(0, 2.0) * bw, ref[1] + rng.normal(0, 2.0) * bh
            else:
                cx, cy = rng.uniform(0, w), rng.uniform(0, h)
            cand = np.array([cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2])
            if box_iou(cand, boxes).max() > 0.1:
                continue
            xs.append(_augment_pixels(rng, crop_corner(img, cand, size=crop_size)))
            ys.append(BACKGROUND)
    if not xs:
        raise TrainError("no labelled corners found to train the classifier on")
    return np.stack(xs), np.array(ys, dtype=np.int64)


def augmented_copies(crops: np.ndarray, labels: np.ndarray, copies: int = 1,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``copies`` pixel-augmented versions (:func:`_augment_pixels`) of crops already cut, with their labels.

    For crops saved unaugmented, such as stage 1's own boxes (:mod:`vision.training.data.hard_crops`),
    so that each epoch sees them lit, blurred and turned differently.

    >>> x, y = augmented_copies(np.zeros((3, 48, 32, 3), np.uint8), np.array([0, 5, 53]), copies=2)
    >>> x.shape, y.tolist()
    ((6, 48, 32, 3), [0, 5, 53, 0, 5, 53])
    """
    rng = np.random.default_rng(seed)
    out = [_augment_pixels(rng, crop) for _ in range(copies) for crop in crops]
    if not out:
        return np.zeros((0,) + crops.shape[1:], np.uint8), np.zeros(0, np.int64)
    return np.stack(out), np.tile(np.asarray(labels, np.int64), copies)


def face_crops(decks: Sequence[Deck], copies: int = 6, background: float = 0.3,
               seed: int = 0, turn_any: float = 0.0,
               crop_size: tuple[int, int] = (CROP_W, CROP_H)) -> tuple[np.ndarray, np.ndarray]:
    """Classifier crops cut from rendered card faces (``vision.training.data.decks``), many designs cheaply.

    Each face is laid on a random table colour, turned (half the time up to 15 degrees,
    else up to 45, as cards lie in a maal spread), shrunk to a random photo scale, and each
    corner index box (jittered) is cropped like a detector box would be (``turn_any`` of
    them turned anywhere in 0-360 degrees, for a rotation-complete classifier); ``background``
    adds index-sized crops of the card middle (pips, pictures) as class 53.
    """
    rng = np.random.default_rng(seed)
    index = {n: i for i, n in enumerate(CLASS_NAMES)}
    xs: list[np.ndarray] = []
    ys: list[int] = []
    for deck in decks:
        for card, face in deck.faces.items():
            if card not in index:
                continue
            bgra = face.image
            h, w = bgra.shape[:2]
            boxes = [np.array(b, float) for b in face.boxes.values()]
            jobs = [(b, index[card]) for b in boxes for _ in range(copies)]
            for _ in range(int(round(len(jobs) * background))):
                ref = boxes[0]
                bw, bh = ref[2] - ref[0], ref[3] - ref[1]
                x0, y0 = rng.uniform(0, max(1, w - bw)), rng.uniform(0, max(1, h - bh))
                cand = np.array([x0, y0, x0 + bw, y0 + bh])
                if box_iou(cand, np.array(boxes)).max() < 0.05:
                    jobs.append((cand, BACKGROUND))
            for box, label in jobs:
                xs.append(_face_crop(rng, bgra, box, turn_any, crop_size))
                ys.append(label)
    if not xs:
        raise TrainError("no card faces to crop; render them with 'python -m vision.training.data.decks' first")
    return np.stack(xs), np.array(ys, dtype=np.int64)


def _face_crop(rng: np.random.Generator, bgra: np.ndarray, box: np.ndarray, turn_any: float = 0.0,
               crop_size: tuple[int, int] = (CROP_W, CROP_H)) -> np.ndarray:
    """One augmented crop of ``box`` from a BGRA face laid on a random table background."""
    bw, bh = box[2] - box[0], box[3] - box[1]
    s = int(max(bw, bh))
    h, w = bgra.shape[:2]
    x0, y0 = int(box[0]) - s, int(box[1]) - s
    x1, y1 = int(box[2]) + s, int(box[3]) + s
    region = np.zeros((y1 - y0, x1 - x0, 4), np.uint8)
    sx0, sy0, sx1, sy1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    region[sy0 - y0:sy1 - y0, sx0 - x0:sx1 - x0] = bgra[sy0:sy1, sx0:sx1]
    bg = np.empty(region.shape[:2] + (3,), np.float32)
    bg[:] = rng.uniform(0, 255, 3)
    bg += rng.normal(0, rng.uniform(0, 25), bg.shape)
    alpha = region[..., 3:4].astype(np.float32) / 255.0
    img = region[..., :3].astype(np.float32) * alpha + bg * (1 - alpha)
    img = np.clip(img, 0, 255).astype(np.uint8)
    local = box - [x0, y0, x0, y0]
    angle = rng.uniform(-15, 15) if rng.random() < 0.5 else rng.uniform(-45, 45)
    if turn_any and rng.random() < turn_any:
        angle = rng.uniform(0, 360)
    centre = ((local[0] + local[2]) / 2, (local[1] + local[3]) / 2)
    m = cv2.getRotationMatrix2D(centre, angle, 1.0)
    img = cv2.warpAffine(img, m, (img.shape[1], img.shape[0]), borderMode=cv2.BORDER_REFLECT)
    pts = np.array([[local[0], local[1], 1], [local[2], local[1], 1], [local[2], local[3], 1],
                    [local[0], local[3], 1]]) @ m.T
    rot = np.array([pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max()])
    f = float(np.exp(rng.uniform(np.log(0.2), np.log(1.0))))
    img = cv2.resize(img, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
    rot = rot * f
    if rng.random() < 0.5:
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
        hh = img.shape[1]
        rot = np.array([hh - rot[3], rot[0], hh - rot[1], rot[2]])
    crop = crop_corner(img, _augment_box(rng, rot, img.shape[1], img.shape[0]), size=crop_size)
    return _augment_pixels(rng, crop)


def corner_net(num_classes: int = BACKGROUND + 1):
    """The stage-2 crop classifier: an 8-layer CNN, ~0.3 M parameters, ~17 M MACs per 3x48x32 crop."""
    import torch.nn as nn

    def block(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.SiLU()]

    return nn.Sequential(
        *block(3, 16), nn.MaxPool2d(2),
        *block(16, 32), *block(32, 32), nn.MaxPool2d(2),
        *block(32, 64), *block(64, 64), nn.MaxPool2d(2),
        *block(64, 128), *block(128, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
        nn.Linear(128, num_classes))


def _to_tensor(crops: np.ndarray):
    import torch
    return torch.from_numpy(np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2))).float() / 255.0


def train_classifier(datasets: Sequence[Path], *, epochs: int = 30, copies: int = 8,
                     out: Path = Path("runs/tiplu/classifier"), resume: Path | None = None,
                     weights: Path | None = None, batch: int = 128, lr: float = 2e-3,
                     max_images: int | None = None, seed: int = 0,
                     val_data: Path | None = None, decks: str | None = None,
                     face_copies: int = 6, device: str = "cpu", turn_any: float = 0.0,
                     extra: tuple[np.ndarray, np.ndarray] | None = None, extra_copies: int = 1,
                     crop_size: tuple[int, int] = (CROP_W, CROP_H)) -> Path:
    """Train the crop classifier on the train splits of YOLO folders; returns ``best.pt``.

    ``crop_size`` (w, h) is the input it learns at; the network ends in a global pool, so
    weights trained at one size carry on at another.

    Saves ``last.pt`` every epoch (``resume`` continues it) and ``best.pt`` at the lowest
    training loss. ``val_data`` only prints accuracy on its val crops: it never selects.
    ``extra`` adds crops already cut (and their labels), ``extra_copies`` augmented copies each
    (:func:`augmented_copies`), e.g. :func:`vision.training.data.hard_crops.load_hard_crops`.
    """
    try:
        import torch
    except ImportError as exc:
        raise TrainError("training needs the train extra (a few GB): .venv/bin/pip install -e '.[train]'") from exc
    torch.manual_seed(seed)
    samples: list[Sample] = []
    for d in datasets:
        d = Path(d)
        root = d / "train" if (d / "train" / "images").is_dir() else d
        samples.extend(iter_samples(root))
    t0 = time.time()
    x, y = build_crops(samples, copies=copies, seed=seed, max_images=max_images, crop_size=crop_size)
    if decks:
        fx, fy = face_crops(load_decks(decks), copies=face_copies, seed=seed, turn_any=turn_any, crop_size=crop_size)
        x, y = np.concatenate([x, fx]), np.concatenate([y, fy])
    if extra is not None and len(extra[0]):
        ex, ey = augmented_copies(extra[0], extra[1], extra_copies, seed)
        x, y = np.concatenate([x, ex]), np.concatenate([y, ey])
        print(f"classifier: {len(ex)} of the crops are given ones ({len(extra[0])} x {extra_copies})", flush=True)
    print(f"classifier: {len(x)} crops from {len(samples)} images in {time.time() - t0:.0f}s", flush=True)
    vx = vy = None
    if val_data is not None:
        vroot = Path(val_data)
        vs = list(iter_samples(vroot / "val" if (vroot / "val" / "images").is_dir() else vroot))
        vx, vy = build_crops(vs, copies=1, background=0.0, seed=seed + 1, crop_size=crop_size)
    net = corner_net().to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=5e-4)
    start = 0
    if resume is not None or weights is not None:
        ck = torch.load(str(resume or weights), map_location=device, weights_only=False)
        net.load_state_dict(ck["model"])
        if resume is not None:
            opt.load_state_dict(ck["optimizer"])
            start = ck["epoch"] + 1
    out.mkdir(parents=True, exist_ok=True)
    best_score = -math.inf

    def epoch_done(epoch: int, epochs: int, loss: float) -> None:
        nonlocal best_score
        msg = f"epoch {epoch}/{epochs} loss {loss:.4f}"
        if vx is not None and vy is not None:
            acc = classifier_accuracy(net.cpu(), vx, vy)
            net.to(device)
            msg += f" val_acc {acc:.4f}"
        print(msg, flush=True)
        ck = {"model": {k: v.cpu() for k, v in net.state_dict().items()}, "optimizer": opt.state_dict(),
              "epoch": epoch - 1, "classes": list(CLASS_NAMES) + ["BACKGROUND"]}
        torch.save(ck, out / "last.pt")
        if -loss >= best_score:
            best_score = -loss
            torch.save(ck, out / "best.pt")

    fit_classifier(net, x, y, epochs=epochs, lr=lr, batch=batch, device=device, optimizer=opt, start=start,
                   progress=epoch_done)
    return out / "best.pt"


def fit_classifier(net: Any, crops: np.ndarray, labels: np.ndarray, *, epochs: int, lr: float = 2e-3,
                   batch: int = 128, device: str = "cpu", optimizer: Any = None, start: int = 0,
                   progress: Callable[[int, int, float], None] | None = None) -> Any:
    """Train the crop classifier ``net`` in memory on ``crops`` (N, h, w, 3 BGR) and ``labels``.

    The one training loop of stage 2: AdamW (``optimizer``, when resuming, else a new one
    at ``lr``), a one-cycle schedule over ``epochs`` fast-forwarded to epoch ``start``,
    cross-entropy with 0.05 label smoothing. ``progress(epoch, epochs, mean loss)`` after
    each epoch (1-based); :func:`train_classifier` saves its checkpoints there and
    :func:`vision.training.fit.enrol.fine_tune_classifier` reports progress. Returns ``net``
    in eval mode. Seed torch first for a repeatable run.
    """
    import torch

    opt = optimizer or torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=5e-4)
    steps = math.ceil(len(crops) / batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(1, epochs * steps))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # fast-forwarding a resumed schedule
        for _ in range(start * steps):
            sched.step()
    xt, yt = _to_tensor(crops), torch.from_numpy(labels)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=0.05)
    for epoch in range(start, epochs):
        net.train()
        perm = torch.randperm(len(xt))
        total = 0.0
        for i in range(steps):
            idx = perm[i * batch:(i + 1) * batch]
            opt.zero_grad()
            loss = loss_fn(net(xt[idx].to(device)), yt[idx].to(device))
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        if progress is not None:
            progress(epoch + 1, epochs, total / len(xt))
    return net.eval()


def export_classifier(net: Any, path: Path, crop_size: tuple[int, int] = (CROP_W, CROP_H)) -> Path:
    """Write the crop classifier ``net`` as ONNX (opset :data:`OPSET`, a dynamic batch, ``crop_size``
    (w, h) crops), as the app reads it."""
    import torch

    torch.onnx.export(net.cpu().eval(), (torch.zeros(1, 3, crop_size[1], crop_size[0]),), str(path), dynamo=False,
                      opset_version=OPSET, input_names=["crops"], output_names=["logits"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}})
    return path


def average_classifiers(paths: Sequence[Path], out: Path) -> Path:
    """Write the average of exported classifiers (``corner_classifier.onnx`` files) to ``out``.

    Why: two checkpoints of one run lie on one path, and their average (a "model soup")
    can read better than either (``tiplu train average-classifier`` of two epochs of the
    campaign, say). The files must hold the same network (the same weights by name and shape);
    each float weight is averaged, the rest is taken from the first file.
    """
    import onnx
    from onnx import numpy_helper

    if len(paths) < 2:
        raise TrainError("averaging needs two or more classifier files")
    models = [onnx.load(str(p)) for p in paths]
    weights = [{w.name: numpy_helper.to_array(w) for w in m.graph.initializer} for m in models]
    first = models[0]
    for path, other in zip(paths[1:], weights[1:]):
        if {k: v.shape for k, v in other.items()} != {k: v.shape for k, v in weights[0].items()}:
            raise TrainError(f"{path}: not the same network as {paths[0]}; average checkpoints of one classifier")
    for k, init in enumerate(first.graph.initializer):
        value = weights[0][init.name]
        if value.dtype.kind == "f":
            mean = np.mean([w[init.name] for w in weights], axis=0).astype(value.dtype)
            first.graph.initializer[k].CopyFrom(numpy_helper.from_array(mean, init.name))
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(first, str(out))
    return out


def copy_orientation(base: Path, out: Path) -> list[Path]:
    """Copy the orientation network that ``base``'s ``model.json`` names into ``out`` (a folder
    written with ``base``'s settings: an ensemble, an enrolled deck); the copied files."""
    from vision.detector import read_model_json

    name = read_model_json(base).get("orientation")
    if not isinstance(name, str) or not (base / name).is_file():
        return []
    shutil.copyfile(base / name, out / name)
    return [out / name]


def ensemble_model(base: Path, members: Sequence[Path], out: Path) -> list[Path]:
    """Write the model folder ``out``: ``base``'s detector, classes and settings, with ``members``
    (exported classifiers, ``corner_classifier.onnx`` files) as stage 2's networks, whose
    probabilities the detector averages (``model.json``'s ``"classifiers"``).

    Why: two stage-2 networks trained on different data read unseen designs better together
    than either alone (``tiplu train ensemble runs/candidate --base models models/corner_classifier.onnx
    runs/other/corner_classifier.onnx`` adds a second network to the shipped one). One member only
    replaces the classifier. The calibration is the base's: recalibrate with
    ``tiplu calibrate ... --write OUT/model.json``.
    """
    from vision.detector import INFO_FILE, ModelError, load_detector, read_model_json

    base, out = Path(base), Path(out)
    if not members:
        raise TrainError("an ensemble needs one or more classifier files")
    if not (base / DETECTOR_FILE).is_file():
        raise TrainError(f"{base}: no {DETECTOR_FILE}; give a model folder such as models/")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise TrainError(f"{out}: already exists; write the ensemble to a new folder")
    for member in members:
        if not Path(member).is_file():
            raise TrainError(f"{member}: no such classifier file")
    try:
        info = read_model_json(base)
    except ModelError as error:
        raise TrainError(str(error)) from None
    names = [CLASSIFIER_FILE] + [f"{Path(CLASSIFIER_FILE).stem}_{k}.onnx" for k in range(2, len(members) + 1)]
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(base / DETECTOR_FILE, out / DETECTOR_FILE)
    for member, name in zip(members, names):
        shutil.copyfile(member, out / name)
    if (base / "classes.txt").is_file():
        shutil.copyfile(base / "classes.txt", out / "classes.txt")
    carried = copy_orientation(base, out)
    (out / INFO_FILE).write_text(json.dumps(info | {"classifiers": names}, indent=2) + "\n")
    try:
        load_detector(out)
    except ModelError as error:
        raise TrainError(f"{out} does not load: {error}") from None
    return [out / DETECTOR_FILE, *(out / n for n in names), *carried, out / INFO_FILE]


def classifier_accuracy(net, crops: np.ndarray, labels: np.ndarray) -> float:
    """Top-1 accuracy of the crop classifier on fixed crops."""
    import torch
    net.eval()
    with torch.no_grad():
        pred = torch.cat([net(_to_tensor(crops[i:i + 512])).argmax(1) for i in range(0, len(crops), 512)])
    return float((pred.numpy() == labels).mean())


def quiet_legacy_onnx_export() -> None:
    """Silence torch's notices that its TorchScript-based ONNX exporter is the legacy one: tiplu
    exports with it on purpose (``dynamo=False``)."""
    warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export.*")
    warnings.filterwarnings("ignore", message="The feature will be removed.*")


def export_models(detector: Path, classifier: Path | None, out: Path = Path("models"),
                  imgsz: int = 320, metrics: dict[str, object] | None = None,
                  max_imgsz: int | None = None, crop_size: tuple[int, int] = (CROP_W, CROP_H),
                  orientation: Path | None = None) -> list[Path]:
    """Write ``corners.onnx``, ``corner_classifier.onnx``, ``classes.txt`` and ``model.json``.

    ``crop_size`` (w, h) is the classifier's input, written to ``model.json`` (``crop_w``, ``crop_h``).
    ``orientation`` (an exported ``corner_orientation.onnx``, :mod:`vision.training.fit.orientation`)
    is copied in and named in ``model.json``, so that pairing takes the indices' angles.

    The detector is exported with a dynamic input size (so the app may run it at 320, 416
    or 640 px), opset 17, which ONNX Runtime >= 1.14 runs; no torch is needed afterwards.
    ``imgsz`` and ``max_imgsz`` (default three times ``imgsz``) bound the per-photo input size;
    every other setting is :class:`vision.settings.ReaderSettings`' shipped value (all passes on).
    """
    _, YOLO = _ultralytics()
    import torch

    quiet_legacy_onnx_export()
    out.mkdir(parents=True, exist_ok=True)
    try:
        import onnxslim  # noqa: F401
        simplify = True
    except ImportError:
        simplify = False
    onnx_path = Path(YOLO(str(detector)).export(format="onnx", imgsz=imgsz, dynamic=True, opset=OPSET,
                                                  simplify=simplify, device="cpu"))
    written = [out / DETECTOR_FILE]
    shutil.copyfile(onnx_path, written[0])
    if classifier is not None:
        net = corner_net()
        net.load_state_dict(torch.load(str(classifier), map_location="cpu", weights_only=False)["model"])
        net.eval()
        written.append(export_classifier(net, out / CLASSIFIER_FILE, crop_size))
    write_class_names(out)
    settings = ReaderSettings(imgsz=imgsz, max_imgsz=max_imgsz or 3 * imgsz, crop_w=crop_size[0], crop_h=crop_size[1],
                              classifiers=(CLASSIFIER_FILE,),
                              orientation=ORIENTATION_FILE if orientation is not None else None)
    info = write_settings({"stages": 2 if classifier is not None else 1, "opset": OPSET,
                           "classifier_outputs": list(CLASS_NAMES) + ["BACKGROUND"], "metrics": metrics or {}},
                          settings)
    if orientation is not None:
        shutil.copyfile(orientation, out / ORIENTATION_FILE)
        written.append(out / ORIENTATION_FILE)
    (out / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    written += [out / "classes.txt", out / "model.json"]
    return written


if __name__ == "__main__":
    from web.cli import main

    raise SystemExit(main(["train", *sys.argv[1:]]))
