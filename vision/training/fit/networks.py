"""The networks the recipes train, and how each is written as the ONNX file the reader loads.

Stage 1 is an Ultralytics YOLO11n built from ``train_config/yolo11n-corner.yaml`` (no
pretrained weights, nothing downloaded) that boxes every corner index as one class. Stage 2
is a small CNN (:func:`corner_net`) that names the card from a crop of each corner. Two stages
because a from-scratch 53-class YOLO barely moves on a few hundred labelled corners and two CPU
cores, while a class-agnostic box and a small crop classifier learn fast. Ultralytics runs
offline here (:func:`offline_environment`): no downloads, no auto-install, a bundled font.

>>> offline_environment(Path("/tmp/tiplu-yolo-doctest")).joinpath("Arial.ttf").is_file()
True
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path
from typing import Any

import numpy as np

from vision.training.data.dataset import BACKGROUND
from vision.training.fit.settings import TrainError

CONFIG_DIR = Path(__file__).resolve().parent / "train_config"
#: Stage 1's architecture (YOLO11n with one class).
DEFAULT_DETECTOR_YAML = CONFIG_DIR / "yolo11n-corner.yaml"
#: The ONNX opset every network is written at (ONNX Runtime >= 1.14 runs it).
OPSET = 17
TRAIN_EXTRA = "training needs the train extra (a few GB): .venv/bin/pip install -e '.[train]'"


def offline_environment(config_dir: Path | None = None) -> Path:
    """Make Ultralytics work with no network: no downloads, no auto-install, a local font.

    Ultralytics fetches ``Arial.ttf`` into its config dir for plots unless it finds one, so
    the bundled DejaVu Sans is copied there under that name. Call before importing it.
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


def ultralytics() -> Any:
    """Ultralytics' ``YOLO`` class, offline and with every logger of runs elsewhere off; :class:`TrainError` without it."""
    offline_environment()
    try:
        from ultralytics import YOLO
        from ultralytics.utils import SETTINGS
    except ImportError as exc:
        raise TrainError(TRAIN_EXTRA) from exc
    off = {k: False for k in ("sync", "wandb", "mlflow", "comet", "clearml", "neptune", "dvc",
                                "tensorboard", "raytune", "vscode_msg", "openvino_msg")}
    SETTINGS.update({k: v for k, v in off.items() if k in SETTINGS})
    return YOLO


@contextmanager
def quiet_ultralytics() -> Iterator[None]:
    """Ultralytics logs and prints to stdout, which carries ``tiplu enrol --json``: only its warnings, on stderr."""
    from ultralytics.utils import LOGGER
    level, handlers = LOGGER.level, LOGGER.handlers[:]
    for handler in handlers:
        LOGGER.removeHandler(handler)
    LOGGER.addHandler(quiet := logging.StreamHandler(sys.stderr))
    LOGGER.setLevel(logging.WARNING)
    try:
        with redirect_stdout(sys.stderr):
            yield
    finally:
        LOGGER.removeHandler(quiet)
        for handler in handlers:
            LOGGER.addHandler(handler)
        LOGGER.setLevel(level)


def quiet_legacy_onnx_export() -> None:
    """Silence torch's notices that its TorchScript-based ONNX exporter is the legacy one: tiplu
    exports with it on purpose (``dynamo=False``)."""
    warnings.filterwarnings("ignore", message=".*legacy TorchScript-based ONNX export.*")
    warnings.filterwarnings("ignore", message="The feature will be removed.*")


def corner_net(num_classes: int = BACKGROUND + 1) -> Any:
    """The stage-2 crop classifier: an 8-layer CNN, ~0.3 M parameters, ending in a global pool (any crop size)."""
    import torch.nn as nn

    def block(cin: int, cout: int) -> list[nn.Module]:
        return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.SiLU()]

    return nn.Sequential(
        *block(3, 16), nn.MaxPool2d(2),
        *block(16, 32), *block(32, 32), nn.MaxPool2d(2),
        *block(32, 64), *block(64, 64), nn.MaxPool2d(2),
        *block(64, 128), *block(128, 128), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
        nn.Linear(128, num_classes))


def to_tensor(crops: np.ndarray) -> Any:
    """BGR uint8 crops (N, h, w, 3) as the float RGB NCHW tensor stage 2 reads."""
    import torch
    return torch.from_numpy(np.ascontiguousarray(crops[..., ::-1].transpose(0, 3, 1, 2))).float() / 255.0


def export_classifier(net: Any, path: Path, crop_size: tuple[int, int]) -> Path:
    """Write the crop classifier ``net`` as ONNX (opset :data:`OPSET`, a dynamic batch, ``crop_size``
    (w, h) crops), as the app reads it."""
    import torch

    quiet_legacy_onnx_export()
    torch.onnx.export(net.cpu().eval(), (torch.zeros(1, 3, crop_size[1], crop_size[0]),), str(path), dynamo=False,
                      opset_version=OPSET, input_names=["crops"], output_names=["logits"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}})
    return path


def export_detector(checkpoint: Path, path: Path, imgsz: int) -> Path:
    """Write a stage-1 checkpoint as ONNX with a dynamic input size (the reader runs it at 320 to 960 px)."""
    YOLO = ultralytics()
    quiet_legacy_onnx_export()
    try:
        import onnxslim  # noqa: F401
        simplify = True
    except ImportError:
        simplify = False
    with quiet_ultralytics():
        exported = YOLO(str(checkpoint)).export(format="onnx", imgsz=imgsz, dynamic=True, opset=OPSET,
                                                simplify=simplify, device="cpu")
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(exported, path)
    return path
