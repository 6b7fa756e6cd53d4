"""Writing model folders: a recipe's networks as the ONNX files and ``model.json`` the reader loads.

:func:`export_models` writes a new folder from trained networks (``tiplu train export`` from a resume
point, :func:`export_resume_point`); :func:`ensemble_model` gives a folder several stage-2 networks;
:func:`write_model_folder` writes a base folder again with some networks replaced (enrolment,
"Improve from corrections").
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scorer import CLASS_NAMES
from vision.detector import (CLASSIFIER_FILE, DETECTOR_FILE, INFO_FILE, MODELS_DIR, SHIPPED_CROP, ModelError,
                             load_detector, model_classifiers, model_crop_size, read_model_json)
from vision.orientation import ORIENTATION_FILE
from vision.settings import ReaderSettings, write_settings
from vision.training.data.dataset import write_class_names
from vision.training.fit.networks import OPSET, export_classifier, export_detector
from vision.training.fit.resume import (STATE_FILE, crop_size_of, load_classifier, load_detector as load_resumed,
                                        read_state, ultralytics_checkpoint)
from vision.training.fit.settings import RESUME_DIR, TrainError

WORK = Path("runs") / "train" / "export"


def export_models(detector: Path, classifier: Any | None, out: Path = Path("models"), imgsz: int = 320,
                  metrics: dict[str, object] | None = None, max_imgsz: int | None = None,
                  crop_size: tuple[int, int] = SHIPPED_CROP, orientation: Path | None = None) -> list[Path]:
    """Write ``corners.onnx`` (from the stage-1 checkpoint ``detector``), ``corner_classifier.onnx`` (the stage-2
    network ``classifier``, at ``crop_size`` (w, h) crops), ``classes.txt`` and ``model.json``.

    ``orientation`` (an exported ``corner_orientation.onnx``, :mod:`vision.training.fit.orientation`)
    is copied in and named in ``model.json``, so that pairing takes the indices' angles.
    The detector is exported with a dynamic input size (so the app may run it at 320 to 960 px),
    opset 17; no torch is needed afterwards. ``imgsz`` and ``max_imgsz`` (default three times
    ``imgsz``) bound the per-photo input size; every other setting is
    :class:`vision.settings.ReaderSettings`' shipped value (all passes on).
    """
    out.mkdir(parents=True, exist_ok=True)
    written = [export_detector(detector, out / DETECTOR_FILE, imgsz)]
    if classifier is not None:
        written.append(export_classifier(classifier, out / CLASSIFIER_FILE, crop_size))
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
    (out / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    written += [out / "classes.txt", out / INFO_FILE]
    return written


def export_resume_point(out: Path, folder: Path = RESUME_DIR, base: Path = MODELS_DIR,
                        work: Path = WORK) -> list[Path]:
    """A model folder from the resume point in ``folder``: each network it holds exported, the others (and the
    orientation network) taken from ``base``; the input size of the model the campaign started from."""
    state = read_state(folder)
    if "detector" not in state and "classifier" not in state:
        raise TrainError(f"{folder / STATE_FILE}: no network trained yet; run 'tiplu train corners' or 'names' first")
    sizes = state.get("model_json", {})
    metrics = {"version": "campaign"} | {f"{k}_epochs": state[k]["epochs_done"] for k in ("detector", "classifier")
                                           if k in state}
    if "detector" in state and "classifier" in state:
        det = ultralytics_checkpoint(load_resumed(folder), work / "export_detector.pt")
        shipped = base / ORIENTATION_FILE
        return export_models(det, load_classifier(folder), out, imgsz=int(sizes.get("imgsz", 320)), metrics=metrics,
                             crop_size=crop_size_of(state), orientation=shipped if shipped.is_file() else None)
    detector = ultralytics_checkpoint(load_resumed(folder), work / "export_detector.pt") if "detector" in state else None
    nets: list[Any] = [None] * len(model_classifiers(base))
    if "classifier" in state:
        if crop_size_of(state) != model_crop_size(base):
            raise TrainError(f"{folder}: stage 2 learnt at {crop_size_of(state)} crops, {base}'s reader cuts "
                             f"{model_crop_size(base)}: train corners too, or export beside another base")
        nets[0] = load_classifier(folder)
    return write_model_folder(base, out, nets, {"from": str(folder)} | metrics, detector, tag="campaign")


def write_model_folder(base: Path, out: Path, nets: Sequence[Any], note: dict[str, Any],
                       detector: Path | None = None, tag: str = "enrolled") -> list[Path]:
    """``out`` as a model folder: the base's settings, its detector (or ``detector``, a stage-1
    checkpoint, exported), ``nets`` as its stage-2 networks (named as the base's
    ``"classifiers"``; ``None`` keeps the base's network), ``note`` as ``"enrolled"``; the version is the base's
    plus ``+tag`` (``0.2+enrolled``, then ``0.2+enrolled+corrected``)."""
    out.mkdir(parents=True, exist_ok=True)
    if detector is None:
        shutil.copyfile(base / DETECTOR_FILE, out / DETECTOR_FILE)
    else:
        export_detector(detector, out / DETECTOR_FILE, ReaderSettings().imgsz)
    members = model_classifiers(base)
    if len(nets) != len(members):
        raise TrainError(f"{base}: {len(members)} stage-2 networks, but {len(nets)} were fine-tuned")
    for net, member in zip(nets, members):
        if net is None:  # kept as the base has it
            shutil.copyfile(base / member, out / member)
        else:
            export_classifier(net, out / member, model_crop_size(base))
    write_class_names(out)
    info = read_model_json(base)
    base_version = info.get("metrics", {}).get("version", "?")
    info |= {"format": info.get("format", "tiplu-corners-v1"), "metrics": {"version": f"{base_version}+{tag}"},
             "enrolled": note | {"base": str(base), "base_version": base_version}}
    carried = copy_orientation(base, out)
    (out / INFO_FILE).write_text(json.dumps(info, indent=2) + "\n")
    return [out / DETECTOR_FILE, *(out / m for m in members), *carried, out / "classes.txt", out / INFO_FILE]


def copy_orientation(base: Path, out: Path) -> list[Path]:
    """Copy the orientation network that ``base``'s ``model.json`` names into ``out`` (a folder
    written with ``base``'s settings: an ensemble, an enrolled deck); the copied files."""
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
