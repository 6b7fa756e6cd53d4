"""A campaign: many short runs of the recipes from one resume point, and its phases.

``tiplu train loop`` alternates one epoch of stage 1 (:func:`~vision.training.fit.corners.train_corners`)
and one of stage 2 (:func:`~vision.training.fit.names.train_names`) for hours in the background;
every epoch updates the resume point, so it can be killed at any time and started again with the
same command. ``tiplu train init`` starts a campaign (or restarts a network of it, saying why)
from a model folder's ONNX files; ``tiplu train extend`` gives a network a new phase
(:func:`~vision.training.fit.resume.extend_plan`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from vision.detector import MODELS_DIR, model_crop_size
from vision.training.data.hard_crops import load_hard_crops
from vision.training.fit.corners import train_corners
from vision.training.fit.names import calibration_crops, train_names
from vision.training.fit.resume import (STAGES, STATE_FILE, classifier_start, crop_size_of, detector_start,
                                        network_state, read_state, write_state)
from vision.training.fit.settings import REAL, RESUME_DIR, TRAIN, TrainError, TrainSettings


def init_from_onnx(models: Path = MODELS_DIR, real: Path = REAL, folder: Path = RESUME_DIR,
                   stages: Sequence[str] = STAGES, reason: str | None = None,
                   settings: Any = TRAIN) -> dict[str, Any]:
    """Start a campaign (or restart some ``stages`` of it, saying why) from a model folder's ONNX files.

    A restarted stage keeps its old runs under ``discarded`` with the ``reason``; stage 2 goes
    on at the crop size of the models' classifier.
    """
    if set(stages) != set(STAGES) and not (folder / STATE_FILE).is_file():
        raise TrainError(f"{folder}: no campaign to restart {', '.join(stages)} of; "
                         "a new campaign starts both networks (leave out --networks)")
    train = real / "train" if (real / "train").is_dir() else real
    old = read_state(folder) if (folder / STATE_FILE).is_file() and set(stages) != set(STAGES) else {}
    state = {k: v for k, v in old.items()}
    for key in STAGES:
        if key in stages and key in state:
            del state[key]
    if not (folder / STATE_FILE).is_file() or not old:
        write_state({"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, folder)
    else:
        write_state(state, folder)
    if "detector" in stages:
        network_state(folder, "corners", models, settings.corners, lambda: detector_start(models, train))
    if "classifier" in stages:
        network_state(folder, "names", models, settings.names,
                      lambda: classifier_start(models, calibration_crops(train, model_crop_size(models))))
    state = read_state(folder)
    for key in stages:
        discarded = old.get(key, {}).get("discarded", []) + (
            [{"reason": reason, "chunks": old[key]["chunks"]}] if old.get(key, {}).get("chunks") else [])
        if discarded:
            state[key]["discarded"] = discarded
    write_state(state, folder)
    return state


def campaign(corners_data: Path | None, names_data: Sequence[Path], rounds: int, *,
             settings: TrainSettings = TRAIN, folder: Path = RESUME_DIR, start: Path | str = MODELS_DIR,
             device: str = "cpu", extra_crops: Sequence[Path] = (), real: Path = REAL) -> dict[str, Any]:
    """Alternate one epoch of stage 1 on ``corners_data`` and one of stage 2 on ``names_data`` ``rounds`` times
    (each stops at its phase's end). ``extra_crops`` (stage 1's own boxes) go to every stage-2 epoch; they are
    checked before the first epoch. A network without a resume point starts from ``start``."""
    started = (folder / STATE_FILE).is_file() and "classifier" in read_state(folder)
    extra = load_hard_crops(extra_crops, crop_size_of(read_state(folder)) if started else model_crop_size(MODELS_DIR)
                            ) if extra_crops else None
    corners = dataclasses.replace(settings.corners, epochs=1)
    names = dataclasses.replace(settings.names, epochs=1)

    def left(key: str) -> bool:
        state = read_state(folder) if (folder / STATE_FILE).is_file() else {}
        return key not in state or state[key]["epochs_done"] < state[key]["plan_epochs"]

    for _ in range(rounds):
        progressed = False
        if corners_data is not None and left("detector"):
            train_corners(corners_data, corners, start=start, resume_dir=folder, device=device, real=real)
            progressed = True
        if names_data and left("classifier"):
            train_names(names_data, names, start=start, resume_dir=folder, device=device, extra=extra)
            progressed = True
        if not progressed:
            break
    if not (folder / STATE_FILE).is_file():
        raise TrainError("nothing to train: give --corners-data, --names-data or both")
    return read_state(folder)
