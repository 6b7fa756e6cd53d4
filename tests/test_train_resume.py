"""The resume point: recovered from the shipped ONNX exactly, small, and each recipe goes on from it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("ultralytics")

import torch  # noqa: E402

from vision.detector import MODELS_DIR, model_crop_size  # noqa: E402
from vision.training.fit import campaign  # noqa: E402
from vision.training.fit import resume as acc  # noqa: E402
from vision.training.fit.names import calibration_crops, train_names  # noqa: E402
from vision.training.fit.settings import TRAIN  # noqa: E402

REAL = Path(__file__).resolve().parent / "data" / "real_val"


def _onnx(path: Path, x: np.ndarray) -> np.ndarray:
    import onnxruntime as ort
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return sess.run(None, {sess.get_inputs()[0].name: x})[0]


def test_classifier_recovered_from_onnx_computes_the_same_logits() -> None:
    """The shipped stage 2 is int8 (:mod:`vision.training.fit.quantize`): the float network rebuilt from its
    dequantized weights computes what it does but for the rounding of its 8-bit activations."""
    crops = calibration_crops(REAL, model_crop_size(MODELS_DIR))
    net = acc.classifier_from_onnx(MODELS_DIR / "corner_classifier.onnx", crops).eval()
    with torch.no_grad():
        ours = net(torch.from_numpy(crops)).numpy()
    shipped = _onnx(MODELS_DIR / "corner_classifier.onnx", crops)
    assert np.abs(torch.softmax(torch.from_numpy(ours), 1).numpy()
                  - torch.softmax(torch.from_numpy(shipped), 1).numpy()).max() < 0.15
    assert (ours.argmax(1) == shipped.argmax(1)).mean() >= 0.95
    net.train()
    with torch.no_grad():  # batch statistics now: the same function up to sampling noise
        assert (net(torch.from_numpy(crops)).argmax(1) == torch.from_numpy(ours).argmax(1)).float().mean() > 0.9


def test_detector_round_trip_through_the_fp16_resume_point(tmp_path: Path) -> None:
    photos = acc.photo_batch(REAL, size=320, count=4)
    model = acc.detector_from_onnx(MODELS_DIR / "corners.onnx", photos).eval()
    reference = _onnx(MODELS_DIR / "corners.onnx", photos[:2])
    with torch.no_grad():
        ours = model(torch.from_numpy(photos[:2]))[0].numpy()
    assert np.abs(ours - reference)[:, 4].max() < 1e-3, "box scores equal the shipped model's"
    size = acc.save_detector(model, tmp_path).stat().st_size
    assert size < 6e6
    again = acc.load_detector(tmp_path).eval()
    with torch.no_grad():
        half = again(torch.from_numpy(photos[:2]))[0].numpy()
    assert np.abs(half - reference)[:, 4].max() < 0.02, "fp16 weights keep the scores"


def test_a_names_run_continues_the_campaign(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    monkeypatch.chdir(tmp_path)
    crops = calibration_crops(REAL, model_crop_size(MODELS_DIR))
    acc.save_classifier(acc.classifier_from_onnx(MODELS_DIR / "corner_classifier.onnx", crops), tmp_path / "r")
    acc.write_state({"classifier": {"epochs_done": 3, "plan_epochs": 10, "lr_max": 1e-3, "lr_min": 1e-4,
                                    "chunks": [], "crop": list(model_crop_size(MODELS_DIR))}}, tmp_path / "r")
    before = {k: v.clone() for k, v in acc.load_classifier(tmp_path / "r").state_dict().items()}
    settings = dataclasses.replace(TRAIN.names, epochs=1, copies=1, decks=None)
    train_names([REAL], settings, resume_dir=tmp_path / "r", say=None)
    saved = json.loads((tmp_path / "r" / "state.json").read_text())["classifier"]
    assert saved["epochs_done"] == 4 and saved["chunks"][0]["from_epoch"] == 3
    assert saved["chunks"][0]["lr"] == pytest.approx(acc.scheduled_lr(3, 10, 1e-3, 1e-4))
    after = acc.load_classifier(tmp_path / "r").state_dict()
    assert any(not torch.equal(before[k].half(), after[k].half()) for k in before if before[k].is_floating_point())


def test_missing_resume_point_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(acc.TrainError, match="tiplu train init"):
        acc.read_state(tmp_path)


def test_the_resume_point_lives_in_a_run_folder_never_in_the_package() -> None:
    """Every run rewrites it, so it is not committed: the default is under the git-ignored ``runs/``."""
    assert acc.RESUME_DIR.parts[0] == "runs" and not acc.RESUME_DIR.is_absolute()
    package = Path(acc.__file__).resolve().parent
    assert package not in acc.RESUME_DIR.resolve().parents


def test_without_a_resume_point_a_network_starts_from_the_shipped_models(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "r"
    begun: list[int] = []

    def begin() -> object:
        begun.append(1)
        return acc.classifier_from_onnx(MODELS_DIR / "corner_classifier.onnx",
                                        calibration_crops(REAL, model_crop_size(MODELS_DIR)))

    state = acc.network_state(folder, "names", MODELS_DIR, TRAIN.names, begin)
    assert f"no names resume point in {folder}: starting from {MODELS_DIR}" in capsys.readouterr().err
    assert state["classifier"]["origin"] == str(MODELS_DIR) and state["classifier"]["epochs_done"] == 0
    assert state["classifier"]["crop"] == list(model_crop_size(MODELS_DIR)) and "detector" not in state
    assert {p.name for p in folder.iterdir()} == {"classifier.pt", "state.json"}
    assert acc.network_state(folder, "names", MODELS_DIR, TRAIN.names, begin) == state, "read, not made again"
    assert begun == [1] and capsys.readouterr().err == ""


def test_restarting_one_stage_keeps_the_other_and_says_why(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    campaign.init_from_onnx(MODELS_DIR, REAL, folder)
    state = acc.read_state(folder)
    assert acc.crop_size_of(state) == model_crop_size(MODELS_DIR), "stage 2 goes on at the model's crop size"
    state["detector"].update(epochs_done=1, chunks=[{"from_epoch": 0, "epochs": 1}])
    state["classifier"].update(epochs_done=2, chunks=[{"from_epoch": 0, "epochs": 2}])
    acc.write_state(state, folder)
    campaign.init_from_onnx(MODELS_DIR, REAL, folder, stages=["detector"], reason="too much rotation")
    again = acc.read_state(folder)
    assert again["detector"]["epochs_done"] == 0 and again["classifier"]["epochs_done"] == 2
    assert again["detector"]["discarded"] == [{"reason": "too much rotation", "chunks": [{"from_epoch": 0, "epochs": 1}]}]


def test_restarting_one_stage_of_no_campaign_is_refused_with_a_message(tmp_path: Path) -> None:
    from io import StringIO

    from web.cli import main
    err = StringIO()
    code = main(["train", "init", "--from", str(MODELS_DIR), "--real", str(REAL), "--networks", "corners",
                 "--resume-dir", str(tmp_path / "new")], stdout=StringIO(), stderr=err)
    assert code == 2
    assert "no campaign to restart detector of" in err.getvalue() and "leave out --networks" in err.getvalue()
    assert not (tmp_path / "new").exists() or not any((tmp_path / "new").iterdir()), "nothing half-written"


def test_a_names_run_adds_stage1_crops_and_records_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tiplu train names --extra-crops``: the crops join the epoch's own, the run counts them, and a
    state.json written by an older campaign still reads."""
    from io import StringIO

    from vision.training.data.hard_crops import hard_crops, save_hard_crops
    from web.cli import main
    monkeypatch.chdir(tmp_path)
    extra = save_hard_crops(hard_crops(MODELS_DIR, [REAL], max_images=3), tmp_path / "stage1.npz")
    crops = calibration_crops(REAL, model_crop_size(MODELS_DIR))
    acc.save_classifier(acc.classifier_from_onnx(MODELS_DIR / "corner_classifier.onnx", crops), tmp_path / "r")
    old_chunk = {"data": ["data/real"], "decks": "train", "from_epoch": 0, "epochs": 2, "lr": 1e-3, "turn_any": 0.5,
                 "minutes": 3.0, "best": "runs/accumulate/classifier/best.pt"}
    acc.write_state({"detector": {"epochs_done": 0, "plan_epochs": 60, "lr_max": 4e-3, "lr_min": 2e-4, "chunks": []},
                     "classifier": {"epochs_done": 2, "plan_epochs": 10, "lr_max": 1e-3, "lr_min": 1e-4,
                                    "chunks": [old_chunk], "crop": list(model_crop_size(MODELS_DIR))}}, tmp_path / "r")
    out, err = StringIO(), StringIO()
    code = main(["train", "names", str(REAL), "--epochs", "1", "--set", "decks=none", "--set", "copies=1",
                 "--extra-crops", str(extra), "--set", "extra_copies=2", "--resume-dir", str(tmp_path / "r")],
                stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    given = len(np.load(extra)["labels"])
    assert f", {2 * given} of stage 1's boxes" in out.getvalue()
    assert json.loads(out.getvalue().splitlines()[-1])["names"] == {"epochs_done": 3, "plan_epochs": 10}
    chunks = acc.read_state(tmp_path / "r")["classifier"]["chunks"]
    assert chunks[0] == old_chunk
    assert chunks[1]["extra_crops"] == given and chunks[1]["extra_copies"] == 2
    assert chunks[1]["from_epoch"] == 2 and chunks[1]["data"] == [str(REAL)]


def test_loop_checks_the_extra_crops_before_any_epoch(tmp_path: Path) -> None:
    from io import StringIO

    from web.cli import main
    acc.write_state({"detector": {"epochs_done": 0, "plan_epochs": 60, "lr_max": 4e-3, "lr_min": 2e-4, "chunks": []},
                     "classifier": {"epochs_done": 0, "plan_epochs": 10, "lr_max": 1e-3, "lr_min": 1e-4,
                                    "chunks": []}}, tmp_path / "r")
    err = StringIO()
    assert main(["train", "loop", "--names-data", str(REAL), "--extra-crops", str(tmp_path / "none.npz"),
                 "--resume-dir", str(tmp_path / "r")], stdout=StringIO(), stderr=err) == 2
    assert "none.npz: no such crops file; make one with tiplu train stage1-crops" in err.getvalue()
    assert acc.read_state(tmp_path / "r")["classifier"]["chunks"] == []


def test_a_new_phase_restarts_the_rate_where_the_stage_stands(tmp_path: Path) -> None:
    """A finished plan (rate at its floor) goes on with a warm restart; the old phase stays on record."""
    from web.cli import main
    folder = tmp_path / "r"
    acc.write_state({"detector": {"epochs_done": 60, "plan_epochs": 60, "lr_max": 4e-3, "lr_min": 2e-4, "chunks": []},
                     "classifier": {"epochs_done": 40, "plan_epochs": 40, "lr_max": 1e-3, "lr_min": 5e-5,
                                    "chunks": []}}, folder)
    assert acc.stage_lr(acc.read_state(folder)["detector"], 60) == pytest.approx(2e-4)
    assert main(["train", "extend", "corners", "--epochs", "20", "--lr-max", "2e-3", "--lr-min", "1e-4",
                 "--reason", "cascade-heavy scenes", "--resume-dir", str(folder)]) == 0
    st = acc.read_state(folder)["detector"]
    assert (st["plan_start"], st["plan_epochs"]) == (60, 80)
    assert acc.stage_lr(st, 60) == pytest.approx(2e-3) and acc.stage_lr(st, 80) == pytest.approx(1e-4)
    assert acc.stage_lr(st, 70) == pytest.approx(acc.scheduled_lr(10, 20, 2e-3, 1e-4))
    assert st["phases"] == [{"plan_epochs": 60, "lr_max": 4e-3, "lr_min": 2e-4, "plan_start": 0, "ended_at": 60,
                             "next_because": "cascade-heavy scenes"}]
    assert acc.read_state(folder)["classifier"]["plan_epochs"] == 40


@pytest.mark.parametrize("argv, words", [
    (["names", "--epochs", "0", "--lr-max", "1e-3", "--lr-min", "1e-4"], "1 or more epochs"),
    (["corners", "--epochs", "5", "--lr-max", "1e-4", "--lr-min", "1e-3"], "lr_min <= lr_max"),
    (["corners", "--epochs", "5", "--lr-max", "1e-3", "--lr-min", "1e-4", "--crop", "48x72"],
     "a crop size is the classifier's"),
    (["names", "--epochs", "5", "--lr-max", "1e-3", "--lr-min", "1e-4", "--crop", "48x300"], "8 to 256 px"),
])
def test_a_bad_phase_is_refused_with_a_reason(tmp_path: Path, argv: list[str], words: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from web.cli import main
    acc.write_state({"detector": {"epochs_done": 1, "plan_epochs": 60, "lr_max": 4e-3, "lr_min": 2e-4, "chunks": []},
                     "classifier": {"epochs_done": 1, "plan_epochs": 40, "lr_max": 1e-3, "lr_min": 5e-5,
                                    "chunks": []}}, tmp_path)
    before = (tmp_path / "state.json").read_text()
    assert main(["train", "extend", *argv, "--reason", "x", "--resume-dir", str(tmp_path)]) == 2
    assert words in capsys.readouterr().err
    assert (tmp_path / "state.json").read_text() == before


def test_a_phase_at_other_crops_trains_and_exports_what_the_app_reads(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``extend names --crop 40x60``: the run cuts its crops at that size, the export writes a classifier
    that takes them and a model.json that says so, and the app reads photos with it."""
    from io import StringIO

    from vision.detector import CardDetector
    from vision.images import read_image
    from web.cli import main
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "r"
    crops = calibration_crops(REAL, model_crop_size(MODELS_DIR))
    acc.save_classifier(acc.classifier_from_onnx(MODELS_DIR / "corner_classifier.onnx", crops), folder)
    acc.save_detector(acc.detector_from_onnx(MODELS_DIR / "corners.onnx", acc.photo_batch(REAL, size=320, count=2)),
                      folder)
    acc.write_state({"detector": {"epochs_done": 1, "plan_epochs": 60, "lr_max": 4e-3, "lr_min": 2e-4, "chunks": []},
                     "classifier": {"epochs_done": 4, "plan_epochs": 4, "lr_max": 1e-3, "lr_min": 5e-5,
                                    "chunks": [], "crop": [48, 72]}}, folder)
    assert main(["train", "extend", "names", "--epochs", "2", "--lr-max", "5e-4", "--lr-min", "2e-5",
                 "--crop", "40x60", "--reason", "other crops", "--resume-dir", str(folder)]) == 0
    st = acc.read_state(folder)["classifier"]
    assert st["crop"] == [40, 60] and st["phases"][-1]["crop"] == [48, 72]
    err = StringIO()
    assert main(["train", "names", str(REAL), "--epochs", "1", "--set", "decks=none", "--set", "copies=1",
                 "--resume-dir", str(folder)], stdout=StringIO(), stderr=err) == 0, err.getvalue()
    assert main(["train", "export", "--out", str(tmp_path / "m"), "--resume-dir", str(folder)],
                stdout=StringIO(), stderr=err) == 0, err.getvalue()
    assert model_crop_size(tmp_path / "m") == (40, 60)
    detector = CardDetector(tmp_path / "m")
    photo = read_image(next((REAL / "images").iterdir()))
    assert detector.classify(photo, np.array([[10.0, 10.0, 40.0, 50.0]])).shape == (1, 54)


def test_averaged_classifiers_are_the_mean_of_their_weights(tmp_path: Path) -> None:
    """``tiplu train average-classifier``: each float weight is the mean; another network is refused. The shipped
    stage 2 is int8: it is averaged as the float network it computes (:func:`vision.training.fit.quantize.dequantized`)."""
    from io import StringIO

    import onnx
    from onnx import numpy_helper

    from vision.training.fit.quantize import dequantized
    from web.cli import main
    shipped = tmp_path / "float.onnx"
    onnx.save(dequantized(MODELS_DIR / "corner_classifier.onnx"), str(shipped))
    other = onnx.load(str(shipped))
    first = other.graph.initializer[0]
    moved = numpy_helper.to_array(first) + 1.0
    first.CopyFrom(numpy_helper.from_array(moved.astype(np.float32), first.name))
    onnx.save(other, str(tmp_path / "b.onnx"))
    out = StringIO()
    assert main(["train", "average-classifier", str(tmp_path / "soup.onnx"), str(shipped), str(tmp_path / "b.onnx")],
                stdout=out) == 0
    soup = {w.name: numpy_helper.to_array(w) for w in onnx.load(str(tmp_path / "soup.onnx")).graph.initializer}
    base = {w.name: numpy_helper.to_array(w) for w in onnx.load(str(shipped)).graph.initializer}
    assert np.allclose(soup[first.name], base[first.name] + 0.5, atol=1e-6)
    assert all(np.array_equal(soup[k], base[k]) for k in base if k != first.name)
    crops = calibration_crops(REAL, model_crop_size(MODELS_DIR))[:4]
    twice = tmp_path / "twice.onnx"
    assert main(["train", "average-classifier", str(twice), str(shipped), str(shipped)], stdout=StringIO()) == 0
    assert np.allclose(_onnx(twice, crops), _onnx(shipped, crops), atol=1e-5)
    int8 = MODELS_DIR / "corner_classifier.onnx"
    assert main(["train", "average-classifier", str(twice), str(int8), str(int8)], stdout=StringIO()) == 0
    assert np.allclose(_onnx(twice, crops), _onnx(shipped, crops), atol=1e-5)
    err = StringIO()
    assert main(["train", "average-classifier", str(tmp_path / "x.onnx"), str(shipped), str(MODELS_DIR / "corners.onnx")],
                stdout=StringIO(), stderr=err) == 2
    assert "not the same network" in err.getvalue()


def test_crops_of_another_size_are_refused_before_any_epoch() -> None:
    """Stage 1's own boxes cut at 32x48 cannot join a run at 48x72: the message says how to cut them."""
    import dataclasses

    from vision.training.fit.names import names_crops
    settings = dataclasses.replace(TRAIN.names, decks=None)
    small = (np.zeros((2, 48, 32, 3), np.uint8), np.array([0, 1]))
    with pytest.raises(acc.TrainError, match="--extra-crops are 32x48, stage 2 learns at 48x72"):
        names_crops([], settings, crop_size=(48, 72), extra=small)
    x, y = names_crops([], settings, crop_size=(32, 48), extra=small)
    assert x.shape == (2, 48, 32, 3) and y.tolist() == [0, 1]
