"""Where a recipe starts and goes on from: resume points, and the shipped ONNX turned back into weights.

A CPU run has two shared cores and a few hours; a GPU is lent now and then. So a campaign's
state lives in a resume folder, ``runs/train/resume/`` by default (:data:`RESUME_DIR`,
relative to the working directory and git-ignored like every run's output; ``--resume-dir``
picks another):

- ``detector.pt``: stage 1's EMA weights as an fp16 ``state_dict`` (~5 MB, not a pickled model),
- ``classifier.pt``: stage 2's weights, fp16 (~0.6 MB),
- ``state.json``: epochs done per network, its schedule's phase, and every run so far (what,
  when, how long, loss). The networks are kept under their old keys, ``"detector"`` (corners)
  and ``"classifier"`` (names) (:data:`STATE_KEYS`), so older resume points go on.

Each network follows one cosine schedule over its phase (:mod:`.settings`); a run trains some
epochs of it from the resume point, and the resume point is rewritten after every epoch, so a
run killed at any time loses at most one epoch. Optimiser moments are not kept (they would
triple the size); each run starts with a short warm-up instead.

Where the folder holds no resume point for a network, its recipe starts from a *start point*
(:func:`detector_start`, :func:`classifier_start`): by default the shipped ONNX files in
``models/``, whose fused weights :func:`detector_from_onnx` and :func:`network_from_onnx` put back
into trainable networks, with batch norms calibrated so the network computes the same function;
or a checkpoint; or ``scratch``. A resume point is never committed: a campaign's result is shipped
as ONNX files (``tiplu train export``), and the next campaign starts from those.

>>> round(scheduled_lr(0, 10, 0.01, 0.001), 4), round(scheduled_lr(10, 10, 0.01, 0.001), 4)
(0.01, 0.001)
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np

from vision.detector import CLASSIFIER_FILE, DETECTOR_FILE, MODELS_DIR, letterbox, model_crop_size, network_input
from vision.settings import ReaderSettings
from vision.training.fit.networks import DEFAULT_DETECTOR_YAML, corner_net, ultralytics
from vision.training.fit.settings import REAL, RESUME_DIR, TRAIN, CornersSettings, NamesSettings, TrainError

STATE_FILE = "state.json"
#: Each network's key in ``state.json`` and its weights file.
STATE_KEYS = {"corners": "detector", "names": "classifier"}
STAGES = tuple(STATE_KEYS.values())
#: A start point that is no model: the network's own initial weights.
SCRATCH = "scratch"


def scheduled_lr(epoch: float, plan_epochs: int, lr_max: float, lr_min: float) -> float:
    """The campaign's cosine learning rate at ``epoch`` (clamped at the plan's end)."""
    t = min(max(epoch / max(plan_epochs, 1), 0.0), 1.0)
    return lr_min + (lr_max - lr_min) * (1 + math.cos(math.pi * t)) / 2


def stage_lr(stage: dict[str, Any], epoch: float) -> float:
    """The learning rate of a stage's current phase at campaign ``epoch``.

    A phase (:func:`extend_plan`) starts its cosine at ``plan_start``; the first one at 0.

    >>> round(stage_lr({"plan_start": 60, "plan_epochs": 80, "lr_max": 0.01, "lr_min": 0.001}, 60), 4)
    0.01
    """
    start = int(stage.get("plan_start", 0))
    return scheduled_lr(epoch - start, int(stage["plan_epochs"]) - start, float(stage["lr_max"]),
                        float(stage["lr_min"]))


def extend_plan(stage: str, epochs: int, lr_max: float, lr_min: float, reason: str,
                folder: Path = RESUME_DIR, crop_size: tuple[int, int] | None = None) -> dict[str, Any]:
    """Give ``stage`` a new cosine phase of ``epochs`` more epochs, starting where it stands.

    Why: a plan that has run its course ends at its lowest rate, so a campaign that goes on
    with new data (say, scenes of the cards a report still misses) needs a warm restart from
    the same weights, not a new ``init``. The old phase is kept under ``phases`` with the
    ``reason`` for the new one. ``crop_size`` (w, h; classifier only) changes the crops stage 2
    learns at from this phase on (:func:`crop_size_of`); the weights carry over, since the
    network ends in a global pool.
    """
    if stage not in STAGES:
        raise TrainError(f"no stage {stage!r}; choose one of {', '.join(STAGES)}")
    if epochs < 1 or not 0 < lr_min <= lr_max:
        raise TrainError(f"a phase needs 1 or more epochs and 0 < lr_min <= lr_max, not {epochs}, {lr_min}, {lr_max}")
    if crop_size is not None and (stage != "classifier" or not all(8 <= n <= 256 for n in crop_size)):
        raise TrainError(f"a crop size is the classifier's, each side 8 to 256 px, not {crop_size} for the {stage}")
    state = read_state(folder)
    st = state[stage]
    done = int(st["epochs_done"])
    st.setdefault("phases", []).append({k: st[k] for k in ("plan_epochs", "lr_max", "lr_min")}
                                       | {"plan_start": int(st.get("plan_start", 0)), "ended_at": done,
                                          "next_because": reason}
                                       | ({"crop": list(crop_size_of(state))} if crop_size is not None else {}))
    st.update({"plan_start": done, "plan_epochs": done + epochs, "lr_max": lr_max, "lr_min": lr_min})
    if crop_size is not None:
        st["crop"] = list(crop_size)
    write_state(state, folder)
    return state


def crop_size_of(state: dict[str, Any]) -> tuple[int, int]:
    """The crop size (w, h) stage 2 learns at: the last phase's choice, else the shipped reader's.

    >>> crop_size_of({"classifier": {}}), crop_size_of({"classifier": {"crop": [32, 48]}})
    ((48, 72), (32, 48))
    """
    shipped = ReaderSettings()
    w, h = state["classifier"].get("crop", (shipped.crop_w, shipped.crop_h))
    return int(w), int(h)


def read_state(folder: Path = RESUME_DIR) -> dict[str, Any]:
    """``state.json`` of a resume point; a clear error when there is none."""
    path = folder / STATE_FILE
    if not path.is_file():
        raise TrainError(f"{path}: no resume point; train a network there first ('tiplu train corners ...' or "
                         "'tiplu train names ...' start from models/ by themselves), or 'tiplu train init --from models'")
    return json.loads(path.read_text())


def write_state(state: dict[str, Any], folder: Path = RESUME_DIR) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{STATE_FILE}.tmp"
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    os.replace(tmp, folder / STATE_FILE)


def _save_half(module: Any, path: Path) -> Path:
    """An fp16 state dict, written aside and renamed, so a reader (a commit, an export) never sees half a file."""
    import torch
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    torch.save({k: v.detach().half() if v.is_floating_point() else v for k, v in module.state_dict().items()}, tmp)
    os.replace(tmp, path)
    return path


def _onnx_weights(path: Path) -> tuple[dict[str, np.ndarray], list[tuple[str, str | None]]]:
    """A network's float weights by name, and each convolution's (weight, bias) names; an int8 network
    (:mod:`vision.training.fit.quantize`) is read as the float network it computes, so an int8 stage 2 is
    fine-tuned from the weights it runs with."""
    from onnx import numpy_helper

    from vision.training.fit.quantize import dequantized
    model = dequantized(path)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    convs = [(n.input[1], n.input[2] if len(n.input) > 2 else None) for n in model.graph.node if n.op_type == "Conv"]
    return inits, convs


def _calibrate(model: Any, batch: Any, fused_bias: dict[Any, Any]) -> None:
    """Turn each identity batch norm (holding only a bias) into one with real statistics.

    In eval mode the model computes the fused ONNX function exactly; a forward pass records
    each batch norm's input mean and variance, which then become its running statistics,
    with scale and shift set so the output is unchanged (x -> x + bias) in eval mode and
    nearly so in training mode, where the batch's own statistics are used.
    """
    import torch
    stats: dict[Any, tuple[Any, Any]] = {}

    def hook(module: Any, inputs: Any, _out: Any) -> None:
        x = inputs[0].detach().float()
        stats[module] = (x.mean((0, 2, 3)), x.var((0, 2, 3), unbiased=False))

    handles = [bn.register_forward_hook(hook) for bn in fused_bias]
    model.eval()
    with torch.no_grad():
        model(batch)
    for h in handles:
        h.remove()
    with torch.no_grad():
        for bn, bias in fused_bias.items():
            mean, var = stats[bn]
            bn.running_mean.copy_(mean)
            bn.running_var.copy_(var)
            bn.weight.copy_(torch.sqrt(var + bn.eps))
            bn.bias.copy_(mean + bias)


def detector_from_onnx(onnx_path: Path, calibration: np.ndarray, yaml: Path = DEFAULT_DETECTOR_YAML) -> Any:
    """A trainable Ultralytics ``DetectionModel`` computing what a fused stage-1 ONNX computes.

    ``calibration`` is a float32 NCHW batch of letterboxed photos (RGB, 0-1).
    """
    import torch
    ultralytics()
    from ultralytics.nn.tasks import DetectionModel
    inits, _ = _onnx_weights(onnx_path)
    model = DetectionModel(str(yaml), nc=1, verbose=False)
    modules = dict(model.named_modules())
    fused: dict[Any, Any] = {}
    loaded = set()
    with torch.no_grad():
        for name, param in model.named_parameters():
            if name in inits:
                param.copy_(torch.from_numpy(inits[name].copy()))
                loaded.add(name)
        for name, module in modules.items():
            if isinstance(module, torch.nn.BatchNorm2d):
                module = cast(Any, module)
                conv = name[:-len("bn")] + "conv"
                if f"{conv}.weight" not in inits or f"{conv}.bias" not in inits:
                    raise TrainError(f"{onnx_path}: no fused weights for {conv}; is it a YOLO11n corner model?")
                fused[module] = torch.from_numpy(inits[f"{conv}.bias"].copy())
                module.weight.fill_(1.0)
                module.bias.copy_(fused[module])
                module.running_mean.zero_()
                module.running_var.fill_(1.0 - module.eps)
                loaded.add(f"{conv}.weight")
    missing = [n for n, _ in model.named_parameters() if n not in loaded and ".bn." not in n]
    if missing:
        raise TrainError(f"{onnx_path}: weights missing for {', '.join(missing[:5])}")
    _calibrate(model, torch.from_numpy(calibration), fused)
    return model


def network_from_onnx(net: Any, onnx_path: Path, calibration: np.ndarray) -> Any:
    """``net`` (a torch network of convolutions each followed by a batch norm, then one linear layer: stage 2's
    :func:`~vision.training.fit.networks.corner_net`, the orientation network) with a fused ONNX file's weights,
    batch norms calibrated on ``calibration`` (NCHW float)."""
    import torch
    inits, convs = _onnx_weights(onnx_path)
    layers: list[Any] = [m for m in net.modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.BatchNorm2d,
                                                                   torch.nn.Linear))]
    pairs = [(layers[i], layers[i + 1]) for i in range(0, len(layers) - 1, 2)
             if isinstance(layers[i], torch.nn.Conv2d)]
    if len(pairs) != len(convs):
        raise TrainError(f"{onnx_path}: {len(convs)} convolutions, the network has {len(pairs)}")
    fused: dict[Any, Any] = {}
    with torch.no_grad():
        for (conv, bn), (w, b) in zip(pairs, convs):
            conv.weight.copy_(torch.from_numpy(inits[w].copy()))
            fused[bn] = torch.from_numpy(inits[b].copy()) if b else torch.zeros(conv.out_channels)
            bn.weight.fill_(1.0)
            bn.bias.copy_(fused[bn])
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        linear = layers[-1]
        gemm = [n for n in inits if inits[n].ndim == 2 and inits[n].shape in (tuple(linear.weight.shape),
                                                                               tuple(linear.weight.shape[::-1]))]
        if not gemm:
            raise TrainError(f"{onnx_path}: no weights for the last layer {tuple(linear.weight.shape)}")
        weight = inits[gemm[0]] if inits[gemm[0]].shape == tuple(linear.weight.shape) else inits[gemm[0]].T
        bias = next(inits[n] for n in inits if inits[n].ndim == 1 and inits[n].shape == (linear.out_features,)
                    and n not in {b for _, b in convs})
        linear.weight.copy_(torch.from_numpy(weight.copy()))
        linear.bias.copy_(torch.from_numpy(bias.copy()))
    _calibrate(net, torch.from_numpy(calibration), fused)
    return net


def classifier_from_onnx(onnx_path: Path, calibration: np.ndarray) -> Any:
    """The stage-2 :func:`~vision.training.fit.networks.corner_net` with a fused ONNX classifier's weights."""
    return network_from_onnx(corner_net(), onnx_path, calibration)


def photo_batch(folder: Path, size: int = 320, count: int = 16) -> np.ndarray:
    """Up to ``count`` photos of a YOLO folder letterboxed to ``size``: what stage 1's batch norms are calibrated on."""
    from vision.training.data.dataset import iter_samples
    samples = list(iter_samples(folder))[:count]
    if not samples:
        raise TrainError(f"{folder}: no images to calibrate batch norms with; import the real data first")
    return network_input([letterbox(np.asarray(cv2.imread(str(s.image))), size)[0] for s in samples])


def save_detector(model: Any, folder: Path = RESUME_DIR) -> Path:
    """Stage 1's weights as an fp16 state dict."""
    return _save_half(model, folder / "detector.pt")


def save_classifier(net: Any, folder: Path = RESUME_DIR) -> Path:
    """Stage 2's weights as an fp16 state dict."""
    return _save_half(net, folder / "classifier.pt")


def _state_dict(path: Path) -> dict[str, Any]:
    """The float32 weights of a resume point's file or of a checkpoint (``{"model": ...}``, Ultralytics' or ours)."""
    import torch
    found = torch.load(str(path), map_location="cpu", weights_only=False)
    if isinstance(found, dict) and "model" in found:
        found = found.get("ema") or found["model"]
    if hasattr(found, "state_dict"):
        found = found.state_dict()
    return {k: v.float() if v.is_floating_point() else v for k, v in found.items()}


def load_detector(folder: Path = RESUME_DIR, yaml: Path = DEFAULT_DETECTOR_YAML, path: Path | None = None) -> Any:
    """A float32 ``DetectionModel`` from the resume point in ``folder`` (or the checkpoint ``path``)."""
    ultralytics()
    from ultralytics.nn.tasks import DetectionModel
    model = DetectionModel(str(yaml), nc=1, verbose=False)
    model.load_state_dict(_state_dict(path or folder / "detector.pt"))
    return model


def load_classifier(folder: Path = RESUME_DIR, path: Path | None = None) -> Any:
    """Stage 2 from the resume point in ``folder`` (or the checkpoint ``path``)."""
    net = corner_net()
    net.load_state_dict(_state_dict(path or folder / "classifier.pt"))
    return net


def ultralytics_checkpoint(model: Any, path: Path) -> Path:
    """Write ``model`` as a checkpoint that ``YOLO(path)`` loads (to train or export it)."""
    import torch
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model, "train_args": {}, "epoch": -1, "date": time.strftime("%Y-%m-%d")}, path)
    return path


def start_file(start: Path | str, name: str, network: str) -> Path:
    """The file a start point names: ``start`` itself, or the file ``name`` in the model folder ``start``."""
    path = Path(start) / name if Path(start).is_dir() else Path(start)
    if not path.is_file():
        raise TrainError(f"{path}: no start point; give a model folder (models), a {network} .onnx or .pt, or scratch")
    return path


def detector_start(start: Path | str, photos: Path) -> Any:
    """Stage 1 at the start point ``start``: a model folder's (or a file's) ONNX turned back into weights, batch
    norms calibrated on ``photos`` (a YOLO folder); a checkpoint (``.pt``, a resume point's or Ultralytics');
    or :data:`SCRATCH`, the architecture's initial weights."""
    if str(start) == SCRATCH:
        ultralytics()
        from ultralytics.nn.tasks import DetectionModel
        return DetectionModel(str(DEFAULT_DETECTOR_YAML), nc=1, verbose=False)
    path = start_file(start, DETECTOR_FILE, "stage-1")
    return detector_from_onnx(path, photo_batch(photos)) if path.suffix == ".onnx" else load_detector(path=path)


def classifier_start(start: Path | str, crops: np.ndarray, member: str = CLASSIFIER_FILE) -> Any:
    """Stage 2 at the start point ``start``: a model folder's network ``member`` (or an ``.onnx`` file) turned
    back into weights, batch norms calibrated on ``crops`` (NCHW float); a checkpoint (``.pt``); or :data:`SCRATCH`."""
    if str(start) == SCRATCH:
        return corner_net()
    path = start_file(start, member, "stage-2")
    return classifier_from_onnx(path, crops) if path.suffix == ".onnx" else load_classifier(path=path)


def start_crop_size(start: Path | str) -> tuple[int, int]:
    """The crop size stage 2 learns at from ``start``: a model folder's (its settings), else the shipped reader's."""
    if str(start) != SCRATCH and Path(start).is_dir():
        return model_crop_size(Path(start))
    shipped = ReaderSettings()
    return shipped.crop_w, shipped.crop_h


def new_phase(settings: CornersSettings | NamesSettings) -> dict[str, Any]:
    """A network's state at its start: no epochs done, the settings' phase, no runs."""
    return {"epochs_done": 0, "plan_epochs": settings.plan_epochs, "lr_max": settings.lr_max,
            "lr_min": settings.lr_min, "chunks": []}


def network_state(folder: Path, network: str, start: Path | str, settings: CornersSettings | NamesSettings,
                  begin: Any) -> dict[str, Any]:
    """The campaign's state in ``folder`` with ``network``'s entry; where it has none, the network is started
    (``begin()`` gives its weights at ``start``, saved as its resume point) and that is said on stderr.

    Why: a resume point is never committed, so a fresh checkout has none; the shipped model is
    where training goes on from.
    """
    key = STATE_KEYS[network]
    state: dict[str, Any] = read_state(folder) if (folder / STATE_FILE).is_file() else {
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    if key not in state:
        print(f"no {network} resume point in {folder}: starting from {start}", file=sys.stderr, flush=True)
        (save_detector if key == "detector" else save_classifier)(begin(), folder)
        state[key] = new_phase(settings) | {"origin": str(start)}
        if key == "classifier":
            state[key]["crop"] = list(start_crop_size(start))
        if str(start) != SCRATCH and Path(start).is_dir():
            state.setdefault("model_json", {k: v for k, v in json.loads((Path(start) / "model.json").read_text()).items()
                                            if k in ("imgsz", "max_imgsz", "scale_split")})
        write_state(state, folder)
    return state
