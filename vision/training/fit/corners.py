"""Stage 1's recipe: the YOLO that boxes every corner index (``corners.onnx``), trained by one call.

:func:`train_corners` is the one place tiplu calls Ultralytics' ``YOLO.train``
(``tests/test_architecture.py`` holds it to that): ``tiplu train corners``, a GPU run
(``--device cuda``), the campaign's loop and enrolment (``--detector-epochs``) all come here,
differing only in their :class:`~vision.training.fit.settings.CornersSettings`, the device and
the start point. A run goes on from the resume point in ``resume_dir`` where there is one, else
starts from ``start`` (the shipped ONNX turned back into weights, a checkpoint, or ``scratch``);
it follows the settings' cosine phase from where the resume point stands, its learning rate
falling linearly within the run (Ultralytics' ``lr0``/``lrf``), and rewrites the resume point
after every epoch.

    tiplu train corners data/mix.yaml --epochs 2                     # on the CPU, from models/
    tiplu train corners data/mix.yaml --device cuda --set batch=64   # the same recipe on a GPU
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from vision.detector import MODELS_DIR
from vision.training.fit.networks import quiet_ultralytics, ultralytics
from vision.training.fit.resume import (STATE_FILE, detector_start, load_detector, network_state, new_phase,
                                        save_detector, stage_lr, ultralytics_checkpoint, write_state)
from vision.training.fit.settings import REAL, RESUME_DIR, TRAIN, CornersSettings, TrainError

#: Where a run's own files go (Ultralytics' run folder, the start checkpoint, snapshots).
WORK = Path("runs") / "train"


def photos_of(data: Path, real: Path | None) -> Path:
    """The photos a start from ONNX calibrates its batch norms on: ``real`` (its ``train/`` split) where it
    exists, else the training data's own folder."""
    if real is not None and real.is_dir():
        return real / "train" if (real / "train").is_dir() else real
    return Path(data).parent


def norms_kept(trainer: Any) -> None:
    """Put every batch norm of the model being trained in eval mode (Ultralytics sets the whole model training at
    each epoch's start): its statistics stay the start point's (:attr:`CornersSettings.freeze_norms`)."""
    import torch

    for module in trainer.model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            module.eval()


def train_corners(data: Path, settings: CornersSettings = TRAIN.corners, *, start: Path | str = MODELS_DIR,
                  resume_dir: Path | None = RESUME_DIR, device: str = "cpu", work: Path = WORK / "corners",
                  real: Path | None = REAL, progress: Callable[[int, int, float], None] | None = None,
                  quiet: bool = False) -> Path:
    """Train stage 1 on ``data`` (a YOLO ``data.yaml``) for ``settings.epochs`` (None: to its phase's end).

    Returns the weights trained: the resume point's ``detector.pt``, or without ``resume_dir`` (an
    enrolment) the run's last checkpoint. ``progress(epoch, epochs, loss)`` after each epoch; ``quiet``
    keeps Ultralytics' lines off stdout.
    """
    if not Path(data).is_file():
        raise TrainError(f"{data}: no data.yaml; make one with 'tiplu generate' or 'tiplu train import-real'")
    YOLO = ultralytics()
    photos = photos_of(Path(data), real)
    if resume_dir is not None:
        state = network_state(resume_dir, "corners", start, settings, lambda: detector_start(start, photos))
        st = state["detector"]
        model = load_detector(resume_dir)
    else:
        state, st = {}, new_phase(settings)
        model = detector_start(start, photos)
    e0 = int(st["epochs_done"])
    epochs = settings.epochs if settings.epochs is not None else int(st["plan_epochs"]) - e0
    if epochs < 1:
        raise TrainError(f"stage 1's phase has run out at epoch {e0}: add one with 'tiplu train extend corners "
                         "--epochs N --lr-max A --lr-min B --reason WHY', or give --epochs")
    lr0, lr1 = stage_lr(st, e0), stage_lr(st, e0 + epochs)
    yolo = YOLO(str(ultralytics_checkpoint(model, work / "start.pt")))
    chunk: dict[str, Any] = {"data": str(data), "from_epoch": e0, "epochs": epochs, "imgsz": settings.imgsz,
                             "lr0": lr0, "lr_end": lr1, "device": device, "done": 0,
                             "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    st["chunks"].append(chunk)

    def on_epoch_end(trainer: Any) -> None:
        if trainer.epoch >= epochs:  # Ultralytics' final validation of best.pt calls this once more
            return
        losses = trainer.label_loss_items(trainer.tloss, prefix="train") if trainer.tloss is not None else {}
        chunk["done"] = trainer.epoch + 1
        chunk["loss"] = {k: round(float(v), 4) for k, v in losses.items()}
        chunk["fitness"] = None if trainer.fitness is None else round(float(trainer.fitness), 4)
        chunk["metrics"] = {k: round(float(v), 4) for k, v in (trainer.metrics or {}).items()}
        st["epochs_done"] = done = e0 + trainer.epoch + 1
        if resume_dir is not None:
            saved = save_detector(trainer.ema.ema, resume_dir)
            if settings.snapshot_every > 0 and done % settings.snapshot_every == 0:
                (work / "snapshots").mkdir(parents=True, exist_ok=True)
                shutil.copyfile(saved, work / "snapshots" / f"detector_e{done}.pt")
            write_state(state, resume_dir)
            print(f"resume point: corners epoch {done} saved in {resume_dir / STATE_FILE}", flush=True)
        if progress is not None:
            progress(trainer.epoch + 1, epochs, float(sum(chunk["loss"].values())))

    yolo.add_callback("on_fit_epoch_end", on_epoch_end)
    if settings.freeze_norms:
        yolo.add_callback("on_train_batch_start", norms_kept)
    with quiet_ultralytics() if quiet else nullcontext():
        yolo.train(data=str(data), epochs=epochs, imgsz=settings.imgsz, batch=settings.batch, device=device,
                   workers=settings.workers, single_cls=True, project=str(work.resolve()), name="run", exist_ok=True,
                   pretrained=True, amp=device != "cpu", plots=False, seed=e0, deterministic=False, optimizer="SGD",
                   lr0=lr0, lrf=lr1 / lr0, cos_lr=False, warmup_epochs=settings.warmup_epochs, warmup_bias_lr=lr0,
                   momentum=settings.momentum, cache=False, fraction=settings.fraction, val=settings.val,
                   verbose=not quiet, **settings.augmentation())
    return resume_dir / "detector.pt" if resume_dir is not None else Path(yolo.trainer.last)
