"""The orientation network's recipe: which way each corner index faces (``corner_orientation.onnx``).

The renderer knows every index's angle (``geometry/*.json``: each box's ``"angle"``), so the
labels come free with the training scenes. Each labelled box gives ``copies`` square crops
(:func:`vision.orientation.orientation_crop`), each turned by a random angle (the label
turns with it), scaled by 0.8-1.25 and shifted a little, as stage 1's boxes are; training
adds quarter turns, inverted ink (light-on-dark decks), gamma and sensor noise. The network
(:func:`orientation_net`, 7 small convolutions, 0.1 M weights) regresses the angle's cosine
and sine. The shipped network is trained for 6 epochs on crops of the training designs'
scenes (``data/synth_dr3``, ``data/synth_pal``, ``data/table_dr``, ``data/table_words``; about
half an hour on 2 cores), and ``--check`` measures its angle error on the held-out designs'
labelled indices (``data/calib``, ``data/test``) each epoch; the model card gives the figures.
``tiplu train orientation`` goes on from the shipped network by default (``--from models``, its ONNX
turned back into weights; ``--from scratch`` for new weights); its settings are
:class:`~vision.training.fit.settings.OrientationSettings`.

>>> from vision.orientation import orientation_crop
>>> crops, angles = orientation_samples([], copies=1)
>>> crops.shape, angles.shape
((0, 32, 32), (0,))
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision.detector import MODELS_DIR
from vision.images import read_image
from vision.orientation import ORIENTATION_SIZE, orientation_crop, orientation_input, output_angles
from vision.settings import ORIENTATION_FILE
from vision.training.fit.networks import OPSET, quiet_legacy_onnx_export
from vision.training.fit.resume import SCRATCH, network_from_onnx, start_file
from vision.training.fit.settings import TRAIN, OrientationSettings


class OrientationError(ValueError):
    """Training data or a network file that cannot be used; the message says what to give instead."""


def orientation_samples(folders: Sequence[Path], copies: int = 2, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Crops (N, 32, 32 gray uint8) and the angle each index faces (degrees) from rendered scene folders.

    ``copies`` crops per labelled box, each turned at random; ``copies=1`` keeps the photo's
    own angle (for measuring).
    """
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    angles: list[float] = []
    for folder in folders:
        files = sorted((Path(folder) / "geometry").glob("*.json"))
        if not files:
            raise OrientationError(f"{folder}: no geometry/*.json; render scenes with 'tiplu generate' first")
        for path in files:
            scene = json.loads(path.read_text())
            gray = cv2.cvtColor(read_image(Path(folder) / scene["image"]), cv2.COLOR_BGR2GRAY)
            for box in scene["boxes"]:
                for _ in range(copies):
                    turn, scale, shift = 0.0, 1.0, (0.0, 0.0)
                    if copies > 1:
                        turn, scale = float(rng.uniform(0, 360)), float(rng.uniform(0.8, 1.25))
                        dx, dy = rng.uniform(-0.1, 0.1, 2)
                        shift = (float(dx), float(dy))
                    crops.append(orientation_crop(gray, box["bbox"], turn, scale, shift))
                    angles.append((float(box["angle"]) - turn) % 360)
    return (np.array(crops, np.uint8).reshape(-1, ORIENTATION_SIZE, ORIENTATION_SIZE),
            np.array(angles, np.float32))


def augment(crops: np.ndarray, angles: np.ndarray, rng: np.random.Generator,
            invert: float = TRAIN.orientation.invert) -> tuple[np.ndarray, np.ndarray]:
    """Quarter turns (the label follows), inverted ink for ``invert`` of them, gamma and noise: new uint8 crops, angles."""
    crops, angles = crops.copy(), angles.copy()
    quarter = rng.integers(0, 4, len(crops))
    for k in range(1, 4):
        sel = quarter == k
        crops[sel] = np.rot90(crops[sel], k, axes=(1, 2))
        angles[sel] = (angles[sel] - 90 * k) % 360
    inverted = rng.random(len(crops)) < invert
    crops[inverted] = 255 - crops[inverted]
    x = 255 * (crops.astype(np.float32) / 255) ** rng.uniform(0.6, 1.6, (len(crops), 1, 1))
    x += rng.uniform(0, 12, (len(crops), 1, 1)) * rng.normal(0, 1, x.shape)
    return np.clip(x, 0, 255).astype(np.uint8), angles


def orientation_net() -> Any:
    """The network: 32x32 gray in, (cos, sin) of the angle out."""
    from torch import nn

    def block(cin: int, cout: int) -> nn.Sequential:
        return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))

    return nn.Sequential(block(1, 16), block(16, 16), nn.MaxPool2d(2), block(16, 32), block(32, 32), nn.MaxPool2d(2),
                         block(32, 64), block(64, 64), nn.MaxPool2d(2), block(64, 96), nn.AdaptiveAvgPool2d(1),
                         nn.Flatten(), nn.Linear(96, 2))


def angle_errors(predicted: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Absolute angle differences in degrees, 0-180.

    >>> angle_errors(np.array([350.0, 90.0]), np.array([10.0, 270.0])).tolist()
    [20.0, 180.0]
    """
    return np.abs((predicted - angles + 180) % 360 - 180)


def predict_angles(net: Any, crops: np.ndarray) -> np.ndarray:
    """The angles a torch network gives crops (degrees)."""
    import torch

    net.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(crops), 1024):
            out.append(net(torch.from_numpy(orientation_input(crops[start:start + 1024]))).numpy())
    return output_angles(np.concatenate(out)) if out else np.zeros(0)


def orientation_start(start: Path | str, crops: np.ndarray) -> Any:
    """The network at the start point ``start``: :data:`~vision.training.fit.resume.SCRATCH` (new weights), a model
    folder's orientation network or an ``.onnx`` file turned back into weights (batch norms calibrated on
    ``crops``), or a ``.pt`` state dict."""
    import torch

    net = orientation_net()
    if str(start) == SCRATCH:
        return net
    path = start_file(start, ORIENTATION_FILE, "orientation")
    if path.suffix == ".onnx":
        return network_from_onnx(net, path, orientation_input(crops[:256]))
    net.load_state_dict(torch.load(str(path), map_location="cpu", weights_only=True))
    return net


def fit_orientation(crops: np.ndarray, angles: np.ndarray, settings: OrientationSettings = TRAIN.orientation, *,
                    start: Path | str = SCRATCH, seed: int = 0, device: str = "cpu",
                    check: tuple[np.ndarray, np.ndarray] | None = None,
                    epoch_done: Callable[[int, float, float | None], None] | None = None) -> Any:
    """Train the network from ``start`` on crops and angles (one-cycle AdamW); ``epoch_done(epoch, loss, median
    error on check)``."""
    import torch

    batch = settings.batch
    if len(crops) < batch:
        raise OrientationError(f"{len(crops)} crops are too few to train on; render more scenes (at least {batch} boxes)")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = orientation_start(start, crops).to(device)
    steps = len(crops) // batch
    optimiser = torch.optim.AdamW(net.parameters(), settings.lr_max, weight_decay=settings.weight_decay)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, settings.lr_max, total_steps=settings.epochs * steps)
    for epoch in range(settings.epochs):
        net.train()
        order = rng.permutation(len(crops))
        total = 0.0
        for step in range(steps):
            pick = order[step * batch:(step + 1) * batch]
            x, a = augment(crops[pick], angles[pick], rng, settings.invert)
            radians = torch.from_numpy(a.astype(np.float32) * (math.pi / 180))
            target = torch.stack([torch.cos(radians), torch.sin(radians)], 1).to(device)
            loss = ((net(torch.from_numpy(orientation_input(x)).to(device)) - target) ** 2).sum(1).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        net.cpu()
        median = float(np.median(angle_errors(predict_angles(net, check[0]), check[1]))) if check else None
        net.to(device)
        if epoch_done:
            epoch_done(epoch, total / steps, median)
    return net.cpu()


def export_orientation(net: Any, path: Path, opset: int = OPSET) -> Path:
    """The network as ONNX (dynamic batch), the file :class:`vision.detector.CardDetector` loads."""
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    quiet_legacy_onnx_export()
    torch.onnx.export(net.cpu().eval(), (torch.zeros(1, 1, ORIENTATION_SIZE, ORIENTATION_SIZE),), str(path),
                      dynamo=False, input_names=["crops"], output_names=["cos_sin"],
                      dynamic_axes={"crops": {0: "n"}, "cos_sin": {0: "n"}}, opset_version=opset)
    return path


def train_orientation(folders: Sequence[Path], out: Path, settings: OrientationSettings = TRAIN.orientation, *,
                      check: Sequence[Path] = (), start: Path | str = MODELS_DIR, device: str = "cpu", seed: int = 0,
                      say: Callable[[str], None] = print) -> Path:
    """The orientation network's recipe: crops from ``folders`` (``settings.copies`` of each labelled index), the
    network from ``start`` trained on them, exported to ``out``; ``check`` folders are measured each epoch."""
    started = time.perf_counter()
    crops, angles = orientation_samples(folders, settings.copies, seed)
    held = orientation_samples(check, 1) if check else None
    say(f"{len(crops)} training crops" + (f", {len(held[0])} to check" if held else ""))

    def epoch_done(epoch: int, loss: float, median: float | None) -> None:
        checked = "" if median is None else f", median error {median:.1f} degrees on the check folders"
        say(f"epoch {epoch + 1}/{settings.epochs}: loss {loss:.3f}{checked} ({time.perf_counter() - started:.0f} s)")

    net = fit_orientation(crops, angles, settings, start=start, seed=seed, device=device, check=held,
                          epoch_done=epoch_done)
    return export_orientation(net, out)
