"""Train the network that says which way a corner index faces (``corner_orientation.onnx``).

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

from vision.images import read_image
from vision.orientation import ORIENTATION_SIZE, orientation_crop, orientation_input, output_angles

BATCH = 128
LEARNING_RATE = 3e-3


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


def augment(crops: np.ndarray, angles: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Quarter turns (the label follows), inverted ink for 30%, gamma and noise: new uint8 crops, angles."""
    crops, angles = crops.copy(), angles.copy()
    quarter = rng.integers(0, 4, len(crops))
    for k in range(1, 4):
        sel = quarter == k
        crops[sel] = np.rot90(crops[sel], k, axes=(1, 2))
        angles[sel] = (angles[sel] - 90 * k) % 360
    inverted = rng.random(len(crops)) < 0.3
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


def fit_orientation(crops: np.ndarray, angles: np.ndarray, *, epochs: int = 6, seed: int = 0,
                    check: tuple[np.ndarray, np.ndarray] | None = None,
                    epoch_done: Callable[[int, float, float | None], None] | None = None) -> Any:
    """Train a new network on crops and angles (one-cycle AdamW); ``epoch_done(epoch, loss, median error on check)``."""
    import torch

    if len(crops) < BATCH:
        raise OrientationError(f"{len(crops)} crops are too few to train on; render more scenes (at least {BATCH} boxes)")
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    net = orientation_net()
    steps = len(crops) // BATCH
    optimiser = torch.optim.AdamW(net.parameters(), LEARNING_RATE, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, LEARNING_RATE, total_steps=epochs * steps)
    for epoch in range(epochs):
        net.train()
        order = rng.permutation(len(crops))
        total = 0.0
        for step in range(steps):
            pick = order[step * BATCH:(step + 1) * BATCH]
            x, a = augment(crops[pick], angles[pick], rng)
            radians = torch.from_numpy(a.astype(np.float32) * (math.pi / 180))
            target = torch.stack([torch.cos(radians), torch.sin(radians)], 1)
            loss = ((net(torch.from_numpy(orientation_input(x))) - target) ** 2).sum(1).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item()
        median = float(np.median(angle_errors(predict_angles(net, check[0]), check[1]))) if check else None
        if epoch_done:
            epoch_done(epoch, total / steps, median)
    return net


def export_orientation(net: Any, path: Path, opset: int = 17) -> Path:
    """The network as ONNX (dynamic batch), the file :class:`vision.detector.CardDetector` loads."""
    import torch

    from vision.training.fit.names import quiet_legacy_onnx_export

    path.parent.mkdir(parents=True, exist_ok=True)
    quiet_legacy_onnx_export()
    torch.onnx.export(net.cpu().eval(), (torch.zeros(1, 1, ORIENTATION_SIZE, ORIENTATION_SIZE),), str(path),
                      dynamo=False, input_names=["crops"], output_names=["cos_sin"],
                      dynamic_axes={"crops": {0: "n"}, "cos_sin": {0: "n"}}, opset_version=opset)
    return path


def train_orientation(folders: Sequence[Path], out: Path, *, check: Sequence[Path] = (), epochs: int = 6,
                      copies: int = 2, seed: int = 0, say: Callable[[str], None] = print) -> Path:
    """Crops from ``folders``, a network trained on them, exported to ``out``; ``check`` folders are measured each epoch."""
    start = time.perf_counter()
    crops, angles = orientation_samples(folders, copies, seed)
    held = orientation_samples(check, 1) if check else None
    say(f"{len(crops)} training crops" + (f", {len(held[0])} to check" if held else ""))

    def epoch_done(epoch: int, loss: float, median: float | None) -> None:
        checked = "" if median is None else f", median error {median:.1f} degrees on the check folders"
        say(f"epoch {epoch + 1}/{epochs}: loss {loss:.3f}{checked} ({time.perf_counter() - start:.0f} s)")

    net = fit_orientation(crops, angles, epochs=epochs, seed=seed, check=held, epoch_done=epoch_done)
    return export_orientation(net, out)
