"""Training that goes on across runs: a small resume point outside the repository, and commands to go on.

A CPU run has two shared cores and a few hours; a GPU is lent now and then. So the
campaign's state lives in a resume folder, ``runs/accumulate/resume/`` by default
(:data:`RESUME_DIR`, relative to the working directory and git-ignored like every run's
output; ``--resume-dir`` picks another):

- ``detector.pt``: stage 1's EMA weights as an fp16 ``state_dict`` (~5 MB, not a pickled model),
- ``classifier.pt``: stage 2's weights, fp16 (~0.6 MB),
- ``state.json``: epochs done per stage, the planned schedule, the data recipe and every
  chunk run so far (what, when, how long, loss).

Each stage follows one cosine schedule over ``plan_epochs``; a run trains a chunk of
epochs from the resume point with the learning rate falling linearly from the schedule's
value at the chunk's start to its value at the chunk's end (Ultralytics' ``lr0``/``lrf``),
and the detector's resume point is rewritten after every epoch, so a run killed at any
time loses at most one epoch. Optimiser moments are not kept (they would triple the size);
each chunk starts with a short warm-up instead.

Where the folder holds no resume point, training starts from the shipped ONNX files in
``models/`` (:func:`resume_or_start`, as ``tiplu accumulate init --from models`` does):
:func:`detector_from_onnx` and :func:`classifier_from_onnx` put the fused weights back into
trainable models, with batch norms calibrated so the network computes the same function.
A resume point is never committed: a campaign's result is shipped as ONNX files
(``tiplu accumulate export``), and the next campaign starts from those.

    tiplu accumulate init --from models
    tiplu accumulate detector runs/mix_dr.yaml --epochs 2
    tiplu accumulate classifier data/real data/synth_dr --epochs 2 --decks train
    tiplu accumulate loop --detector-data runs/mix_dr.yaml \
        --classifier-data data/real data/synth_dr --rounds 100      # the background campaign
    ... --extra-crops runs/stage1_crops.npz    # also stage 1's own boxes (tiplu train stage1-crops)
    tiplu accumulate extend detector --epochs 20 --lr-max 0.002 --lr-min 0.0001 \
        --reason "cascade-heavy scenes"                          # a new phase once a plan has run out
    tiplu accumulate extend classifier --epochs 8 --lr-max 0.0005 --lr-min 0.00002 \
        --crop 48x72 --reason "bigger crops"                   # stage 2 at a bigger input from here on
    tiplu accumulate export --out runs/candidate
    tiplu accumulate status

>>> round(scheduled_lr(0, 10, 0.01, 0.001), 4), round(scheduled_lr(10, 10, 0.01, 0.001), 4)
(0.01, 0.001)
"""

from __future__ import annotations

import json
import math
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import cv2
import numpy as np

from vision.detector import (CLASSIFIER_FILE, CROP_H, CROP_W, DETECTOR_FILE, MODELS_DIR, letterbox, model_crop_size,
                             network_input)
from vision.orientation import ORIENTATION_FILE
from vision.training.data.hard_crops import load_hard_crops
from vision.training.fit.names import (DEFAULT_DETECTOR_YAML, TrainError, _ultralytics, corner_net, export_models,
                                   train_classifier)

#: The default resume folder: under the git-ignored ``runs/``, never in the package.
RESUME_DIR = Path("runs") / "accumulate" / "resume"
#: Photos whose batch statistics calibrate the networks rebuilt from ONNX (their ``train/`` split if present).
REAL = Path("data") / "real"
STATE_FILE = "state.json"
STAGES = ("detector", "classifier")
#: Default schedules: (plan_epochs, lr at epoch 0, lr at plan end).
PLANS: dict[str, tuple[int, float, float]] = {"detector": (60, 0.004, 0.0002), "classifier": (40, 1e-3, 5e-5)}


#: Ultralytics augmentation for stage 1. Small turns only: Ultralytics turns a box label into the
#: axis-aligned box of its turned corners, so at 45 degrees a tight index box grows about twice too
#: big, and big turns and up-down flips teach stage 1 loose boxes (its real-photo box mAP falls).
#: Every other angle comes from the generator's ``--randomise`` scenes, whose boxes are tight around
#: the turned ink.
DETECTOR_AUGMENT: dict[str, float] = {"degrees": 10.0, "perspective": 0.0, "scale": 0.5, "fliplr": 0.5,
                                      "flipud": 0.0, "mosaic": 1.0, "close_mosaic": 0, "hsv_s": 0.7, "hsv_v": 0.5}


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
    """The crop size (w, h) stage 2 learns at: the last phase's choice, else the app's default.

    >>> crop_size_of({"classifier": {}}), crop_size_of({"classifier": {"crop": [48, 72]}})
    ((32, 48), (48, 72))
    """
    w, h = state["classifier"].get("crop", (CROP_W, CROP_H))
    return int(w), int(h)


def read_state(folder: Path = RESUME_DIR) -> dict[str, Any]:
    """``state.json`` of a resume point; a clear error when there is none."""
    path = folder / STATE_FILE
    if not path.is_file():
        raise TrainError(f"{path}: no resume point; run 'tiplu accumulate init --from models' (or train: a "
                         "detector, classifier or loop step starts from models/ by itself)")
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
    import onnx
    from onnx import numpy_helper
    model = onnx.load(str(path))
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
    _ultralytics()
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


def classifier_from_onnx(onnx_path: Path, calibration: np.ndarray) -> Any:
    """The stage-2 :func:`~vision.training.fit.names.corner_net` with a fused ONNX classifier's weights."""
    import torch
    inits, convs = _onnx_weights(onnx_path)
    net = corner_net()
    layers: list[Any] = [m for m in net if isinstance(m, (torch.nn.Conv2d, torch.nn.BatchNorm2d, torch.nn.Linear))]
    pairs = [(layers[i], layers[i + 1]) for i in range(0, len(layers) - 1, 2)
             if isinstance(layers[i], torch.nn.Conv2d)]
    if len(pairs) != len(convs):
        raise TrainError(f"{onnx_path}: {len(convs)} convolutions, corner_net has {len(pairs)}")
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
        gemm = [n for n in inits if n.endswith(".weight") and inits[n].ndim == 2]
        linear.weight.copy_(torch.from_numpy(inits[gemm[0]].copy()))
        linear.bias.copy_(torch.from_numpy(inits[gemm[0][:-len("weight")] + "bias"].copy()))
    _calibrate(net, torch.from_numpy(calibration), fused)
    return net


def _photo_batch(folder: Path, size: int = 320, count: int = 16) -> np.ndarray:
    from vision.training.data.dataset import iter_samples
    samples = list(iter_samples(folder))[:count]
    if not samples:
        raise TrainError(f"{folder}: no images to calibrate batch norms with; import the real data first")
    return network_input([letterbox(np.asarray(cv2.imread(str(s.image))), size)[0] for s in samples])


def _crop_batch(folder: Path, crop_size: tuple[int, int] = (CROP_W, CROP_H)) -> np.ndarray:
    from vision.training.data.dataset import iter_samples
    from vision.training.fit.names import _to_tensor, build_crops
    x, _ = build_crops(list(iter_samples(folder))[:40], copies=2, seed=0, crop_size=crop_size)
    return _to_tensor(x).numpy()


def save_detector(model: Any, folder: Path = RESUME_DIR) -> Path:
    """Stage 1's weights as an fp16 state dict."""
    return _save_half(model, folder / "detector.pt")


def save_classifier(net: Any, folder: Path = RESUME_DIR) -> Path:
    """Stage 2's weights as an fp16 state dict."""
    return _save_half(net, folder / "classifier.pt")


def load_detector(folder: Path = RESUME_DIR, yaml: Path = DEFAULT_DETECTOR_YAML) -> Any:
    """A float32 ``DetectionModel`` from the resume point."""
    import torch
    _ultralytics()
    from ultralytics.nn.tasks import DetectionModel
    model = DetectionModel(str(yaml), nc=1, verbose=False)
    sd = torch.load(str(folder / "detector.pt"), map_location="cpu", weights_only=True)
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in sd.items()})
    return model


def load_classifier(folder: Path = RESUME_DIR) -> Any:
    import torch
    net = corner_net()
    sd = torch.load(str(folder / "classifier.pt"), map_location="cpu", weights_only=True)
    net.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in sd.items()})
    return net


def ultralytics_checkpoint(model: Any, path: Path) -> Path:
    """Write ``model`` as a checkpoint that ``YOLO(path)`` loads (to train or export it)."""
    import torch
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model, "train_args": {}, "epoch": -1, "date": time.strftime("%Y-%m-%d")}, path)
    return path


def classifier_checkpoint(net: Any, path: Path) -> Path:
    """Write ``net`` in :func:`~vision.training.fit.names.train_classifier`'s checkpoint format."""
    import torch
    from scorer import CLASS_NAMES
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"model": net.state_dict(), "epoch": -1, "classes": list(CLASS_NAMES) + ["BACKGROUND"]}, path)
    return path


def init_from_onnx(models: Path = MODELS_DIR, real: Path = REAL, folder: Path = RESUME_DIR,
                   stages: Sequence[str] = STAGES, reason: str | None = None) -> dict[str, Any]:
    """Start a campaign (or restart some ``stages`` of it, saying why) from a model folder's ONNX files.

    A restarted stage keeps its old chunks under ``discarded`` with the ``reason``; stage 2 goes
    on at the crop size of the models' classifier.
    """
    if set(stages) != set(STAGES) and not (folder / STATE_FILE).is_file():
        raise TrainError(f"{folder}: no campaign to restart {', '.join(stages)} of; "
                         "a new campaign starts both stages (leave out --stages)")
    train = real / "train" if (real / "train").is_dir() else real
    size = model_crop_size(models)
    if "detector" in stages:
        save_detector(detector_from_onnx(models / DETECTOR_FILE, _photo_batch(train)), folder)
    if "classifier" in stages:
        save_classifier(classifier_from_onnx(models / CLASSIFIER_FILE, _crop_batch(train, size)), folder)
    origin = json.loads((models / "model.json").read_text()).get("metrics", {}).get("version", "?")
    old = read_state(folder) if (folder / STATE_FILE).is_file() and set(stages) != set(STAGES) else {}
    state = old or {"origin": f"{models}/ ONNX, model version {origin}",
                    "model_json": {k: v for k, v in json.loads((models / "model.json").read_text()).items()
                                   if k in ("imgsz", "max_imgsz", "scale_split")},
                    "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    for stage in stages:
        plan, hi, lo = PLANS[stage]
        discarded = old.get(stage, {}).get("discarded", []) + (
            [{"reason": reason, "chunks": old[stage]["chunks"]}] if old.get(stage, {}).get("chunks") else [])
        state[stage] = {"epochs_done": 0, "plan_epochs": plan, "lr_max": hi, "lr_min": lo, "chunks": []} | (
            {"discarded": discarded} if discarded else {}) | (
            {"crop": list(size)} if stage == "classifier" and size != (CROP_W, CROP_H) else {})
    write_state(state, folder)
    return state


def resume_or_start(folder: Path = RESUME_DIR, models: Path = MODELS_DIR, real: Path = REAL) -> dict[str, Any]:
    """The campaign's state in ``folder``; where it holds no resume point, a new campaign from the
    ONNX files of ``models`` first (:func:`init_from_onnx`, batch norms calibrated on ``real``), said on stderr.

    Why: a resume point is never committed, so a fresh checkout has none; the shipped model is
    where training goes on from.
    """
    if not (folder / STATE_FILE).is_file():
        print(f"no resume point in {folder}: starting from the ONNX files in {models} "
              f"(as 'tiplu accumulate init --from {models}')", file=sys.stderr, flush=True)
        init_from_onnx(models, real, folder)
    return read_state(folder)


def continue_detector(data: Path, epochs: int, *, imgsz: int = 320, batch: int = 16, workers: int = 2,
                      device: str = "cpu", folder: Path = RESUME_DIR, project: Path = Path("runs/accumulate"),
                      fraction: float = 1.0, snapshot_every: int = 0, real: Path = REAL) -> dict[str, Any]:
    """Train stage 1 for ``epochs`` more epochs of the campaign schedule; the resume point follows each epoch
    (none yet: the campaign starts from ``models/``, :func:`resume_or_start` with ``real``).

    ``snapshot_every`` K > 0 also keeps the weights of every campaign epoch divisible by K as
    ``project/snapshots/detector_e{N}.pt`` (the resume point's format): a long GPU phase can then be
    measured at several epochs and the best one kept, not only the last.
    """
    state = resume_or_start(folder, real=real)
    st = state["detector"]
    e0 = st["epochs_done"]
    lr0, lr1 = stage_lr(st, e0), stage_lr(st, e0 + epochs)
    _, YOLO = _ultralytics()
    start = ultralytics_checkpoint(load_detector(folder), project / "start.pt")
    yolo = YOLO(str(start))
    chunk = {"data": str(data), "from_epoch": e0, "epochs": epochs, "imgsz": imgsz, "lr0": lr0, "lr_end": lr1,
             "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "done": 0}
    st["chunks"].append(chunk)

    def on_epoch_end(trainer: Any) -> None:
        if trainer.epoch >= epochs:  # Ultralytics' final validation of best.pt calls this once more
            return
        saved = save_detector(trainer.ema.ema, folder)
        done = e0 + trainer.epoch + 1
        if snapshot_every > 0 and done % snapshot_every == 0:
            (project / "snapshots").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(saved, project / "snapshots" / f"detector_e{done}.pt")
        chunk["done"] = trainer.epoch + 1
        losses = trainer.label_loss_items(trainer.tloss, prefix="train") if trainer.tloss is not None else {}
        chunk["loss"] = {k: round(float(v), 4) for k, v in losses.items()}
        chunk["fitness"] = None if trainer.fitness is None else round(float(trainer.fitness), 4)
        chunk["metrics"] = {k: round(float(v), 4) for k, v in (trainer.metrics or {}).items()}
        st["epochs_done"] = done
        write_state(state, folder)
        print(f"resume point: detector epoch {st['epochs_done']} saved", flush=True)

    yolo.add_callback("on_fit_epoch_end", on_epoch_end)
    yolo.train(data=str(data), epochs=epochs, imgsz=imgsz, batch=batch, device=device, workers=workers,
               single_cls=True, project=str(project.resolve()), name="detector", exist_ok=True, pretrained=True,
               amp=device != "cpu", plots=False, seed=e0, deterministic=False, optimizer="SGD", lr0=lr0,
               lrf=lr1 / lr0, cos_lr=False, warmup_epochs=0.3, warmup_bias_lr=lr0, momentum=0.9,
               cache=False, fraction=fraction, val=True, **DETECTOR_AUGMENT)
    return state


def continue_classifier(data: Sequence[Path], epochs: int, *, decks: str | None = "train", copies: int = 2,
                        face_copies: int = 4, turn_any: float = 0.5, max_images: int | None = None,
                        folder: Path = RESUME_DIR, out: Path = Path("runs/accumulate/classifier"),
                        device: str = "cpu", extra_crops: Sequence[Path] = (),
                        extra_copies: int = 1, real: Path = REAL) -> dict[str, Any]:
    """Train stage 2 for ``epochs`` more (one cycle peaking at the campaign's rate), then save the resume point
    (none yet: the campaign starts from ``models/``, :func:`resume_or_start` with ``real``).

    ``turn_any`` is the share of face crops turned anywhere in 0-360 degrees (rotation-complete).
    ``extra_crops`` are ``.npz`` files of stage 1's own boxes (:mod:`vision.training.data.hard_crops`),
    added ``extra_copies`` times each, pixel-augmented afresh every chunk.
    """
    state = resume_or_start(folder, real=real)
    size = crop_size_of(state)
    extra = load_hard_crops(extra_crops, size) if extra_crops else None
    st = state["classifier"]
    e0 = st["epochs_done"]
    lr = stage_lr(st, e0)
    start = classifier_checkpoint(load_classifier(folder), out / "start.pt")
    t0 = time.time()
    best = train_classifier(list(data), epochs=epochs, copies=copies, out=out, weights=start, lr=lr,
                            max_images=max_images, decks=decks, face_copies=face_copies, seed=e0,
                            turn_any=turn_any, device=device, extra=extra, extra_copies=extra_copies,
                            crop_size=size)
    import torch
    net = corner_net()
    net.load_state_dict(torch.load(str(out / "last.pt"), map_location="cpu", weights_only=False)["model"])
    save_classifier(net, folder)
    st["epochs_done"] = e0 + epochs
    st["chunks"].append({"data": [str(d) for d in data], "decks": decks, "from_epoch": e0, "epochs": epochs,
                         "lr": lr, "turn_any": turn_any, "minutes": round((time.time() - t0) / 60, 1),
                         "best": str(best)} | ({"extra_crops": [str(p) for p in extra_crops],
                                                "extra_copies": extra_copies} if extra_crops else {}))
    write_state(state, folder)
    return state


def campaign(detector_data: Path | None, classifier_data: Sequence[Path], rounds: int, *,
              folder: Path = RESUME_DIR, decks: str | None = "train", max_images: int | None = 1500,
              imgsz: int = 320, batch: int = 16, workers: int = 2, extra_crops: Sequence[Path] = (),
              extra_copies: int = 1, real: Path = REAL) -> dict[str, Any]:
    """Alternate one detector epoch and one classifier epoch ``rounds`` times (stops at each plan's end).

    Meant to run in the background for hours: every step updates the resume point, so it can
    be killed at any time and started again with the same command. ``extra_crops`` go to every
    classifier epoch (:func:`continue_classifier`); they are checked before the first epoch. Without a
    resume point the campaign starts from ``models/`` (:func:`resume_or_start` with ``real``).
    """
    started = (folder / STATE_FILE).is_file()
    load_hard_crops(extra_crops, crop_size_of(read_state(folder)) if started else model_crop_size(MODELS_DIR))
    state = resume_or_start(folder, real=real)
    for _ in range(rounds):
        progressed = False
        if detector_data is not None and state["detector"]["epochs_done"] < state["detector"]["plan_epochs"]:
            state = continue_detector(detector_data, 1, imgsz=imgsz, batch=batch, workers=workers, folder=folder)
            progressed = True
        if classifier_data and state["classifier"]["epochs_done"] < state["classifier"]["plan_epochs"]:
            state = continue_classifier(classifier_data, 1, decks=decks, max_images=max_images, folder=folder,
                                        extra_crops=extra_crops, extra_copies=extra_copies)
            progressed = True
        if not progressed:
            break
    return state


def export_resume_point(out: Path, folder: Path = RESUME_DIR, work: Path = Path("runs/accumulate")) -> list[Path]:
    """ONNX model folder from the resume point (the input size of the model it started from, the
    export's default big pass: :func:`~vision.training.fit.names.export_models`)."""
    state = read_state(folder)
    det = ultralytics_checkpoint(load_detector(folder), work / "export_detector.pt")
    cls = classifier_checkpoint(load_classifier(folder), work / "export_classifier.pt")
    sizes = state.get("model_json", {})
    metrics = {"version": "campaign", "detector_epochs": state["detector"]["epochs_done"],
               "classifier_epochs": state["classifier"]["epochs_done"]}
    shipped = MODELS_DIR / ORIENTATION_FILE
    return export_models(det, cls, out, imgsz=int(sizes.get("imgsz", 320)), metrics=metrics,
                         crop_size=crop_size_of(state), orientation=shipped if shipped.is_file() else None)


if __name__ == "__main__":
    from web.cli import main

    raise SystemExit(main(["accumulate", *sys.argv[1:]]))
