"""One-epoch training of both stages on six real photos, offline, then ONNX export and inference.

Marked ``train`` (needs the train extra: torch + ultralytics); it proves the training
pipeline runs end to end without touching the network, not that the model is any good.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ultralytics")
pytest.importorskip("torch")

from vision.detector import CardDetector  # noqa: E402
from vision.settings import SCHEMA, ReaderSettings  # noqa: E402
from vision.training.data.dataset import import_real  # noqa: E402

REAL = Path(__file__).resolve().parent / "data" / "real_val"


@pytest.mark.train
def test_one_epoch_each_stage_offline_then_onnx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    attempts: list[object] = []

    def no_network(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    monkeypatch.setenv("TIPLU_YOLO_CONFIG_DIR", str(tmp_path / "yolo_config"))
    from vision.training.fit.names import export_models, offline_environment, train_classifier, train_detector

    offline_environment(tmp_path / "yolo_config")
    import_real(REAL, tmp_path / "data", val_fraction=0.34, seed=1)
    det = train_detector(tmp_path / "data" / "data.yaml", epochs=1, imgsz=64, batch=4, workers=0,
                         project=tmp_path / "runs", name="det")
    assert det.is_file()
    cls = train_classifier([tmp_path / "data"], epochs=1, copies=1, out=tmp_path / "runs" / "cls")
    assert cls.is_file() and (tmp_path / "runs" / "cls" / "last.pt").is_file()
    resumed = train_classifier([tmp_path / "data"], epochs=2, copies=1, out=tmp_path / "runs" / "cls",
                               resume=tmp_path / "runs" / "cls" / "last.pt")
    assert resumed.is_file()
    written = export_models(det, cls, tmp_path / "models", imgsz=64)
    assert {p.name for p in written} == {"corners.onnx", "corner_classifier.onnx", "classes.txt", "model.json"}
    exported = CardDetector(tmp_path / "models")
    shipped = ReaderSettings()
    assert json.loads((tmp_path / "models" / "model.json").read_text())["schema"] == SCHEMA
    assert (exported.settings.passes, exported.settings.look_window) == (shipped.passes, shipped.look_window), \
        "reads with every pass, as shipped"
    assert exported.settings.classifiers == ("corner_classifier.onnx",) and exported.settings.orientation is None
    corners = exported.detect(np.full((120, 160, 3), 200, np.uint8), conf=0.0)
    assert all(c.card for c in corners)
    assert attempts == []
