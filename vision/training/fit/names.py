"""Stage 2's recipe: the crop classifier that names each corner stage 1 boxes (``corner_classifier.onnx``).

Its data mix (:func:`names_crops`): crops of the labelled corners of photo folders, each jittered
as stage 1's boxes are (:func:`build_crops`), crops of rendered card faces on random tables
(:func:`face_crops`), crops already cut (stage 1's own boxes, :mod:`vision.training.data.hard_crops`),
and "not a corner" crops; every crop lit, blurred, noised, turned and recoloured as real tables
show them (:func:`_augment_pixels`). Its network is :func:`~vision.training.fit.networks.corner_net`,
its one training loop :func:`fit_classifier`. :func:`train_names` is the recipe that
``tiplu train names``, the campaign's loop, enrolment and "Improve from corrections" all call,
differing only in their :class:`~vision.training.fit.settings.NamesSettings`, the device and the
start point.

    tiplu train names data/real data/synth_dr --epochs 2          # from models/, or the resume point
    tiplu train names data/real --extra-crops runs/stage1_crops.npz --device cuda
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from scorer import CLASS_NAMES
from vision.detector import CLASSIFIER_FILE, MODELS_DIR, SHIPPED_CROP, crop_corner
from vision.geometry import box_iou
from vision.training.data.dataset import BACKGROUND, Sample, iter_samples, read_sample
from vision.training.data.decks import Deck, load_decks
from vision.training.fit.networks import TRAIN_EXTRA, corner_net, to_tensor
from vision.training.fit.resume import (classifier_start, crop_size_of, load_classifier, network_state, new_phase,
                                        read_state, save_classifier, stage_lr, start_crop_size, write_state)
from vision.training.fit.settings import REAL, RESUME_DIR, TRAIN, NamesSettings, TrainError


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
                crop_size: tuple[int, int] = SHIPPED_CROP) -> tuple[np.ndarray, np.ndarray]:
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
               crop_size: tuple[int, int] = SHIPPED_CROP) -> tuple[np.ndarray, np.ndarray]:
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
        raise TrainError("no card faces to crop; render them with 'tiplu train decks' first")
    return np.stack(xs), np.array(ys, dtype=np.int64)


def _face_crop(rng: np.random.Generator, bgra: np.ndarray, box: np.ndarray, turn_any: float = 0.0,
               crop_size: tuple[int, int] = SHIPPED_CROP) -> np.ndarray:
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


def fit_classifier(net: Any, crops: np.ndarray, labels: np.ndarray, *, epochs: int, lr: float,
                   settings: NamesSettings = TRAIN.names, device: str = "cpu",
                   progress: Callable[[int, int, float], None] | None = None) -> Any:
    """Train the crop classifier ``net`` in memory on ``crops`` (N, h, w, 3 BGR) and ``labels``.

    The one training loop of stage 2: AdamW at ``settings.weight_decay``, one cycle over
    ``epochs`` peaking at ``lr``, cross-entropy with ``settings.label_smoothing``, batches of
    ``settings.batch``. ``progress(epoch, epochs, mean loss)`` after each epoch (1-based).
    Returns ``net`` in eval mode. Seed torch first for a repeatable run.
    """
    import torch

    batch = settings.batch
    net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=settings.weight_decay)
    steps = math.ceil(len(crops) / batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(1, epochs * steps))
    xt, yt = to_tensor(crops), torch.from_numpy(labels)
    loss_fn = torch.nn.CrossEntropyLoss(label_smoothing=settings.label_smoothing)
    for epoch in range(epochs):
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
    return net.cpu().eval()


def photo_samples(folders: Sequence[Path]) -> list[Sample]:
    """The labelled photos of YOLO folders (each one's ``train/`` split where it has one)."""
    samples: list[Sample] = []
    for folder in folders:
        folder = Path(folder)
        samples.extend(iter_samples(folder / "train" if (folder / "train" / "images").is_dir() else folder))
    return samples


def names_crops(folders: Sequence[Path], settings: NamesSettings = TRAIN.names, *,
                crop_size: tuple[int, int] = SHIPPED_CROP, seed: int = 0,
                extra: tuple[np.ndarray, np.ndarray] | None = None,
                given: tuple[np.ndarray, np.ndarray] | None = None,
                say: Callable[[str], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Stage 2's data mix: crops (N, h, w, 3 BGR at ``crop_size``) and their labels.

    ``settings.copies`` jittered crops of each labelled corner of ``folders`` (:func:`build_crops`, at most
    ``settings.max_images`` photos), ``settings.face_copies`` of each corner of the rendered ``settings.decks``
    (:func:`face_crops`), ``settings.extra_copies`` augmented copies of the ``extra`` crops (stage 1's own
    boxes, :func:`augmented_copies`), and the ``given`` crops as they are (an enrolment's own).
    """
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    for name, crops in (("--extra-crops", extra), ("the given crops", given)):
        if crops is not None and len(crops[0]) and crops[0].shape[1:3] != (crop_size[1], crop_size[0]):
            raise TrainError(f"{name} are {crops[0].shape[2]}x{crops[0].shape[1]}, stage 2 learns at "
                             f"{crop_size[0]}x{crop_size[1]}: cut them at that size (tiplu train stage1-crops --crop)")
    samples = photo_samples(folders)
    if samples:
        parts.append(build_crops(samples, copies=settings.copies, background=settings.background, seed=seed,
                                 max_images=settings.max_images, crop_size=crop_size))
    if settings.decks:
        parts.append(face_crops(load_decks(settings.decks), copies=settings.face_copies, seed=seed,
                                turn_any=settings.turn_any, crop_size=crop_size))
    if extra is not None and len(extra[0]):
        parts.append(augmented_copies(extra[0], extra[1], settings.extra_copies, seed))
    if given is not None and len(given[0]):
        parts.append(given)
    if not parts:
        raise TrainError("no crops to train stage 2 on: give photo folders, decks, or crops")
    if say is not None:
        say(f"names: {sum(len(p[0]) for p in parts)} crops from {len(samples)} photos"
            + (f", {len(extra[0]) * settings.extra_copies} of stage 1's boxes" if extra is not None else ""))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def calibration_crops(folder: Path, crop_size: tuple[int, int]) -> np.ndarray:
    """Crops of a photo folder's first 40 photos (NCHW float): what stage 2's batch norms are calibrated on
    when it starts from ONNX without crops of its own (``tiplu train init``)."""
    x, _ = build_crops(list(iter_samples(folder))[:40], copies=2, seed=0, crop_size=crop_size)
    return to_tensor(x).numpy()


def train_names(folders: Sequence[Path], settings: NamesSettings = TRAIN.names, *,
                start: Path | str = MODELS_DIR, resume_dir: Path | None = RESUME_DIR, device: str = "cpu",
                member: str = CLASSIFIER_FILE, extra: tuple[np.ndarray, np.ndarray] | None = None,
                given: tuple[np.ndarray, np.ndarray] | None = None, seed: int | None = None,
                progress: Callable[[int, int, float], None] | None = None,
                moving: Callable[[float, int], None] | None = None,
                say: Callable[[str], None] | None = print) -> Any:
    """Train stage 2 on its data mix (:func:`names_crops`) for ``settings.epochs`` (None: to its phase's end).

    The run goes on from the resume point in ``resume_dir`` where there is one, else starts from ``start``
    (a model folder's network ``member`` turned back from ONNX, batch norms calibrated on the run's own crops;
    a checkpoint; ``scratch``); one cycle peaking at the phase's rate where the run starts
    (:func:`fit_classifier`); the resume point is rewritten at the end. Without ``resume_dir`` (an enrolment)
    the phase is the run itself. ``seed`` (default: the epochs done) seeds the crops and torch.
    ``progress(epoch, epochs, loss)`` after each epoch, ``moving(epochs done, epochs)`` after each batch.
    Returns the network, trained, in eval mode.
    """
    try:
        import torch
    except ImportError as exc:
        raise TrainError(TRAIN_EXTRA) from exc
    state: dict[str, Any] = {}
    st = new_phase(settings)
    if resume_dir is not None and (resume_dir / "state.json").is_file():
        state = read_state(resume_dir)
        st = state.get("classifier", st)
    e0 = int(st["epochs_done"])
    seed = e0 if seed is None else seed
    size = crop_size_of({"classifier": st}) if "crop" in st else start_crop_size(start)
    t0 = time.time()
    x, y = names_crops(folders, settings, crop_size=size, seed=seed, extra=extra, given=given, say=say)
    torch.manual_seed(seed)
    sample = to_tensor(x)[torch.randperm(len(x))[:256]].numpy()
    if resume_dir is not None:
        state = network_state(resume_dir, "names", start, settings, lambda: classifier_start(start, sample, member))
        st = state["classifier"]
        net = load_classifier(resume_dir)
    else:
        net = classifier_start(start, sample, member)
    epochs = settings.epochs if settings.epochs is not None else int(st["plan_epochs"]) - e0
    if epochs < 1:
        raise TrainError(f"stage 2's phase has run out at epoch {e0}: add one with 'tiplu train extend names "
                         "--epochs N --lr-max A --lr-min B --reason WHY', or give --epochs")
    lr = stage_lr(st, e0)
    batches = max(1, -(-len(x) // settings.batch))
    learnt = [0]

    def batch_done(module: Any, _inputs: Any, _output: Any) -> None:
        if module.training and moving is not None:
            learnt[0] += 1
            moving(learnt[0] / batches, epochs)

    def epoch_done(epoch: int, total: int, loss: float) -> None:
        if say is not None and progress is None:
            say(f"names: epoch {e0 + epoch} ({epoch}/{total} of this run) loss {loss:.4f}")
        if progress is not None:
            progress(epoch, total, loss)

    hook = net.register_forward_hook(batch_done)  # fit_classifier calls the net once a batch
    try:
        net = fit_classifier(net, x, y, epochs=epochs, lr=lr, settings=settings, device=device, progress=epoch_done)
    finally:
        hook.remove()
    if resume_dir is not None:
        save_classifier(net, resume_dir)
        st["epochs_done"] = e0 + epochs
        st["chunks"].append({"data": [str(f) for f in folders], "decks": settings.decks, "from_epoch": e0,
                             "epochs": epochs, "lr": lr, "turn_any": settings.turn_any, "device": device,
                             "minutes": round((time.time() - t0) / 60, 1)}
                            | ({"extra_crops": len(extra[0]), "extra_copies": settings.extra_copies}
                               if extra is not None else {}))
        write_state(state, resume_dir)
        if say is not None:
            say(f"resume point: names epoch {st['epochs_done']} saved in {resume_dir}")
    return net


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
    from vision.training.fit.quantize import dequantized

    models = [dequantized(p) for p in paths]  # an int8 network's float weights: averaged, then quantized again
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


def classifier_accuracy(net, crops: np.ndarray, labels: np.ndarray) -> float:
    """Top-1 accuracy of the crop classifier on fixed crops."""
    import torch
    net.eval()
    with torch.no_grad():
        pred = torch.cat([net(to_tensor(crops[i:i + 512])).argmax(1) for i in range(0, len(crops), 512)])
    return float((pred.numpy() == labels).mean())
