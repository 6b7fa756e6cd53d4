"""One recipe per network, each run for one short epoch on tiny data on the CPU, offline.

Marked ``train`` (needs the train extra: torch + Ultralytics); each proves its recipe runs end to
end from the shipped model and gives what it always gave (a resume point, then a model folder or
an ONNX file the reader loads), not that the network gets any better. Stage 1 and stage 2 start
from the shipped ONNX turned back into weights (:mod:`vision.training.fit.resume`), as
``tiplu train`` does; the orientation network from its shipped ONNX too.
"""

from __future__ import annotations

import dataclasses
import json
import socket
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ultralytics")
pytest.importorskip("torch")

from vision.detector import CLASSIFIER_FILE, DETECTOR_FILE, MODELS_DIR, CardDetector, model_crop_size  # noqa: E402
from vision.images import read_image  # noqa: E402
from vision.orientation import ORIENTATION_FILE  # noqa: E402
from vision.training.data.dataset import import_real  # noqa: E402
from vision.training.fit.settings import TRAIN  # noqa: E402

REAL = Path(__file__).resolve().parent / "data" / "real_val"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_images"


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """No socket may connect; the list of the attempts made (none, the tests check)."""
    attempts: list[object] = []

    def no_network(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("TIPLU_YOLO_CONFIG_DIR", str(tmp_path / "yolo_config"))
    monkeypatch.chdir(tmp_path)
    return attempts


def _bytes_differ(a: Path, b: Path) -> bool:
    return a.read_bytes() != b.read_bytes()


@pytest.mark.train
def test_the_corners_recipe_goes_on_from_the_shipped_model_and_exports_a_folder_the_reader_loads(
        tmp_path: Path, offline: list[object]) -> None:
    import torch

    from vision.training.fit.corners import photos_of, train_corners
    from vision.training.fit.export import export_resume_point
    from vision.training.fit.resume import detector_start, load_detector

    import_real(REAL, tmp_path / "data", val_fraction=0.34, seed=1)
    settings = dataclasses.replace(TRAIN.corners, epochs=1, imgsz=64, batch=4, workers=0, snapshot_every=1)
    resume = tmp_path / "resume"
    weights = train_corners(tmp_path / "data" / "data.yaml", settings, resume_dir=resume, real=REAL,
                            work=tmp_path / "work")
    state = json.loads((resume / "state.json").read_text())
    run = state["detector"]["chunks"][0]
    assert weights == resume / "detector.pt" and state["detector"]["epochs_done"] == 1
    assert run["done"] == 1 and run["lr0"] == pytest.approx(TRAIN.corners.lr_max) and run["device"] == "cpu"
    assert [p.name for p in (tmp_path / "work" / "snapshots").iterdir()] == ["detector_e1.pt"]
    # the batch norms keep the start point's statistics (freeze_norms) while the convolutions learn
    start = detector_start(MODELS_DIR, photos_of(tmp_path / "data" / "data.yaml", REAL)).state_dict()
    trained = load_detector(resume).state_dict()
    norms = [k for k in start if k.endswith(("running_mean", "running_var"))]
    convs = [k for k in start if k.endswith("conv.weight")]
    assert norms and all(torch.allclose(trained[k], start[k], rtol=1e-3, atol=1e-3) for k in norms)
    assert any(not torch.allclose(trained[k], start[k], rtol=1e-3, atol=1e-3) for k in convs)
    again = train_corners(tmp_path / "data" / "data.yaml", settings, resume_dir=resume, real=REAL,
                          work=tmp_path / "work")
    assert json.loads((again.parent / "state.json").read_text())["detector"]["epochs_done"] == 2, "goes on"
    written = export_resume_point(tmp_path / "model", resume)
    assert {p.name for p in written} >= {DETECTOR_FILE, CLASSIFIER_FILE, "model.json"}
    assert _bytes_differ(tmp_path / "model" / DETECTOR_FILE, MODELS_DIR / DETECTOR_FILE)
    assert not _bytes_differ(tmp_path / "model" / CLASSIFIER_FILE, MODELS_DIR / CLASSIFIER_FILE), "stage 2 as shipped"
    reader = CardDetector(tmp_path / "model")
    assert all(c.card for c in reader.detect(read_image(SAMPLES / "tunnela.jpg"), conf=0.0))
    assert offline == []


@pytest.mark.train
def test_the_names_recipe_goes_on_from_the_shipped_model_and_exports_a_folder_the_reader_loads(
        tmp_path: Path, offline: list[object]) -> None:
    from vision.training.fit.export import export_resume_point
    from vision.training.fit.names import train_names

    settings = dataclasses.replace(TRAIN.names, epochs=1, copies=1, decks=None)
    resume = tmp_path / "resume"
    said: list[str] = []
    net = train_names([REAL], settings, resume_dir=resume, say=said.append)
    state = json.loads((resume / "state.json").read_text())["classifier"]
    assert state["epochs_done"] == 1 and state["crop"] == list(model_crop_size(MODELS_DIR))
    assert state["chunks"][0]["lr"] == pytest.approx(TRAIN.names.lr_max) and not net.training
    assert said[-1].startswith("resume point: names epoch 1")
    export_resume_point(tmp_path / "model", resume)
    assert _bytes_differ(tmp_path / "model" / CLASSIFIER_FILE, MODELS_DIR / CLASSIFIER_FILE)
    assert not _bytes_differ(tmp_path / "model" / DETECTOR_FILE, MODELS_DIR / DETECTOR_FILE), "stage 1 as shipped"
    reader = CardDetector(tmp_path / "model")
    assert (reader.settings.crop_w, reader.settings.crop_h) == model_crop_size(MODELS_DIR)
    corners = reader.detect(read_image(SAMPLES / "tunnela.jpg"))
    assert corners and all(c.card for c in corners)
    assert offline == []


@pytest.mark.train
def test_the_orientation_recipe_starts_from_the_shipped_network_and_writes_one_the_reader_runs(
        tmp_path: Path, offline: list[object]) -> None:
    from vision.orientation import orientation_input
    from vision.training.data.generate import generate_dataset
    from vision.training.fit.orientation import orientation_samples, orientation_start, train_orientation

    generate_dataset(tmp_path / "scenes", 3, seed=5, size=(480, 360), decks="drawn")
    crops, _ = orientation_samples([tmp_path / "scenes"], copies=1)
    import onnxruntime as ort
    import torch
    shipped = ort.InferenceSession(str(MODELS_DIR / ORIENTATION_FILE), providers=["CPUExecutionProvider"])
    x = orientation_input(crops[:32])
    with torch.no_grad():
        ours = orientation_start(MODELS_DIR, crops).eval()(torch.from_numpy(x)).numpy()
    # the shipped network is int8 (v0.8.7): the float network rebuilt from its weights computes what it does but
    # for the rounding of its 8-bit activations (a few hundredths of the angle's cosine and sine)
    assert np.abs(ours - shipped.run(None, {shipped.get_inputs()[0].name: x})[0]).max() < 0.05, "the same network"
    said: list[str] = []
    settings = dataclasses.replace(TRAIN.orientation, epochs=1, copies=6)
    wrote = train_orientation([tmp_path / "scenes"], tmp_path / "model" / ORIENTATION_FILE, settings,
                              check=[tmp_path / "scenes"], start=MODELS_DIR, say=said.append)
    assert wrote.is_file() and said[-1].startswith("epoch 1/1: loss ") and "median error" in said[-1]
    for path in MODELS_DIR.iterdir():
        if path.suffix == ".onnx" and path.name != ORIENTATION_FILE or path.name in ("classes.txt", "model.json"):
            (tmp_path / "model" / path.name).write_bytes(path.read_bytes())
    found = CardDetector(tmp_path / "model").angles(read_image(SAMPLES / "tunnela.jpg"), np.array([[10.0, 10, 40, 60]]))
    assert found is not None and found.shape == (1,) and 0 <= found[0] < 360
    assert offline == []


@pytest.mark.parametrize("argv, words", [
    (["train", "corners", "nowhere.yaml"], "nowhere.yaml: no data.yaml"),
    (["train", "names", "--set", "copies=many"], "copies=many: give int"),
    (["train", "names", "--set", "speed=2"], "give KEY=VALUE with KEY one of"),
    (["accumulate", "detector", "data.yaml"], "tiplu train corners"),
])
def test_a_bad_training_command_says_what_to_fix(argv: list[str], words: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from web.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert words in capsys.readouterr().err


def test_train_help_lists_the_networks_and_every_setting() -> None:
    from io import StringIO

    from web.cli import main

    out = StringIO()
    assert main(["train", "--help"], stdout=out) == 0
    assert all(network in out.getvalue() for network in ("corners", "names", "orientation"))
    out = StringIO()
    assert main(["train", "corners", "--help"], stdout=out) == 0
    listed = out.getvalue()
    assert all(f"{f.name}=" in listed for f in dataclasses.fields(TRAIN.corners)) and "--device" in listed
