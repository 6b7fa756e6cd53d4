"""The Table camera on a Raspberry Pi, tested with a fake picamera2 that serves photos or a video.

picamera2 exists only on Raspberry Pi OS (apt's python3-picamera2), so the package below
stands in for it: the same calls tiplu makes (``Picamera2()``, ``sensor_resolution``,
``create_still_configuration(main=..., lores=...)``, ``configure``, ``start``,
``capture_array(stream)``, ``close``), the same layouts (``main`` RGB888, which is B, G, R
in memory; ``lores`` YUV420 planar), frames read from ``FAKE_PICAMERA2_SOURCE`` (a video
file that loops, or a folder of images) and every capture logged to ``FAKE_PICAMERA2_LOG``.
It is written to a temporary folder and put on ``sys.path`` (or ``PYTHONPATH`` for a real
server), so ``TIPLU_CAMERA=auto`` finds it as it would find the real one.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import cv2
import numpy as np
import pytest

from web.camera import find_camera
from web_support import CHROMIUM, Server, make_video, open_table_camera, phone_page, picture

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
PHOTO = SAMPLES / "maal_spread.jpg"

FAKE_PICAMERA2 = '''
"""A stand-in for picamera2 (see tests/test_camera_picamera2.py)."""
import json
import os
import time
from pathlib import Path

import cv2

SUFFIXES = (".jpg", ".jpeg", ".png")


class Picamera2:
    def __init__(self, camera_num=0):
        self.source = os.environ["FAKE_PICAMERA2_SOURCE"]
        self.log = os.environ.get("FAKE_PICAMERA2_LOG")
        self.position = 0
        self.video = None
        if os.path.isfile(self.source):
            self.video = cv2.VideoCapture(self.source)
        first = self._next()
        self.sensor_resolution = (first.shape[1], first.shape[0])
        self.config = None
        self.started = False

    def _next(self):
        if self.video is not None:
            ok, image = self.video.read()
            if not ok:
                self.video.set(cv2.CAP_PROP_POS_FRAMES, 0)
                ok, image = self.video.read()
        else:
            found = sorted(p for p in Path(self.source).glob("*") if p.suffix.lower() in SUFFIXES)
            ok = bool(found)
            image = cv2.imread(str(found[self.position % len(found)])) if ok else None
            self.position += 1
        if not ok or image is None:
            raise RuntimeError("Camera frontend has timed out!")
        return image

    def create_still_configuration(self, main=None, lores=None, **kwargs):
        main = {"format": "BGR888", "size": self.sensor_resolution, **(main or {})}
        return {"main": main, "lores": None if lores is None else {"format": "YUV420", **lores}}

    def configure(self, config):
        lores = config.get("lores")
        if lores is not None:
            width, height = lores["size"]
            if lores["format"] != "YUV420" or width % 2 or height % 2 or width > self.sensor_resolution[0]:
                raise RuntimeError(f"lores {lores} is not possible")
        self.config = config

    def start(self):
        if self.config is None:
            raise RuntimeError("Camera has not been configured")
        self.started = True

    def capture_array(self, name="main"):
        if not self.started:
            raise RuntimeError("Camera is not running")
        stream = self.config.get(name)
        if stream is None:
            raise KeyError(name)
        image = self._next()
        size = tuple(stream["size"])
        if size != (image.shape[1], image.shape[0]):
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
        if name == "lores":
            image = cv2.cvtColor(image, cv2.COLOR_BGR2YUV_I420)
        if self.log:
            with open(self.log, "a") as out:
                out.write(json.dumps({"stream": name, "shape": list(image.shape), "at": time.time()}) + "\\n")
        return image

    def stop(self):
        self.started = False

    def close(self):
        self.started = False
        if self.video is not None:
            self.video.release()
'''


def install_fake(folder: Path) -> Path:
    """Write the fake ``picamera2`` package under ``folder`` and return the folder to put on the path."""
    package = folder / "picamera2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(FAKE_PICAMERA2)
    return folder


def captures(log: Path) -> list[dict[str, Any]]:
    """The fake camera's captures so far: ``{"stream", "shape", "at"}``, oldest first."""
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def fake_picamera2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fake picamera2 importable in this process, serving ``PHOTO`` from a folder; yields its log."""
    shots = tmp_path / "shots"
    shots.mkdir()
    (shots / "001.jpg").write_bytes(PHOTO.read_bytes())
    log = tmp_path / "picamera2.log"
    monkeypatch.setenv("FAKE_PICAMERA2_SOURCE", str(shots))
    monkeypatch.setenv("FAKE_PICAMERA2_LOG", str(log))
    monkeypatch.syspath_prepend(str(install_fake(tmp_path / "fake")))
    monkeypatch.delitem(sys.modules, "picamera2", raising=False)
    yield log
    sys.modules.pop("picamera2", None)


def test_auto_takes_picamera2_full_size_for_the_photo_and_lores_for_the_preview(fake_picamera2: Path) -> None:
    camera = find_camera("auto")
    assert camera is not None and camera.source == "picamera2"
    photo = picture(PHOTO)
    assert np.array_equal(camera.frame(), photo), "the capture is the main stream, full size, in OpenCV's order"

    jpeg = camera.preview_jpeg()
    shown = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert shown is not None, "the preview is a JPEG"
    height, width = photo.shape[:2]
    assert shown.shape[1] == 640 and abs(shown.shape[0] - 640 * height / width) <= 2
    expected = cv2.resize(photo, (shown.shape[1], shown.shape[0]), interpolation=cv2.INTER_AREA)
    gap = np.abs(shown.astype(int) - expected.astype(int)).mean(axis=(0, 1))
    assert (gap < 12).all(), f"the preview's colours are off (YUV420 read wrongly?): mean gap per channel {gap}"
    streams = [(c["stream"], c["shape"]) for c in captures(fake_picamera2)]
    assert streams == [("main", [height, width, 3]), ("lores", [shown.shape[0] * 3 // 2, 640])]


def test_the_preview_is_taken_at_most_five_times_a_second_however_often_it_is_asked(fake_picamera2: Path) -> None:
    camera = find_camera("picamera2")
    assert camera is not None
    asked, started = 0, time.monotonic()
    while time.monotonic() - started < 1.0:
        camera.preview_jpeg()
        asked += 1
    taken = [c for c in captures(fake_picamera2) if c["stream"] == "lores"]
    assert asked > 20, "the kept preview answers at once"
    assert 1 <= len(taken) <= 6, f"{len(taken)} frames taken for {asked} previews in one second"


def test_a_picamera2_that_fails_answers_oserror_and_is_opened_again(fake_picamera2: Path, tmp_path: Path) -> None:
    camera = find_camera("picamera2")
    assert camera is not None
    assert camera.frame().shape == picture(PHOTO).shape
    (tmp_path / "shots").rename(tmp_path / "away")
    with pytest.raises(OSError, match="gave no picture"):
        camera.frame()
    with pytest.raises(OSError, match="cannot be opened"):
        camera.preview_jpeg()
    (tmp_path / "away").rename(tmp_path / "shots")
    assert camera.frame().shape == picture(PHOTO).shape


@pytest.mark.browser
@pytest.mark.server
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")
def test_a_phone_previews_captures_and_reads_through_picamera2(tmp_path: Path) -> None:
    video = make_video(tmp_path / "table.avi", [PHOTO, SAMPLES / "real_maal.jpg"])
    log = tmp_path / "picamera2.log"
    fake = install_fake(tmp_path / "fake")
    server = Server(tmp_path / "pi.db", env={"TIPLU_CAMERA": "auto", "PYTHONPATH": str(fake),
                                             "FAKE_PICAMERA2_SOURCE": str(video), "FAKE_PICAMERA2_LOG": str(log)})
    try:
        server.call("POST", "/api/sessions", {"players": ["Hari", "Sita", "Ram"]})
        with phone_page(timeout_ms=30_000) as page:
            open_table_camera(page, server.base)
            assert page.evaluate("() => document.getElementById('camera-view').naturalWidth") == 640
            first = page.evaluate("() => document.getElementById('camera-view').src")
            page.wait_for_function("(first) => document.getElementById('camera-view').src !== first", arg=first)

            page.locator("#camera-shoot").tap()
            page.wait_for_selector("#photo-body", state="visible")
            found = page.locator("#photo-cards .photo-card").count()
            assert found > 0
            page.locator("#photo-use").tap()
            assert len(page.input_value('input[name="p1_cards"]').split()) == found
    finally:
        server.kill()
    taken = captures(log)
    main = [c for c in taken if c["stream"] == "main"]
    lores = [c for c in taken if c["stream"] == "lores"]
    height, width = picture(PHOTO).shape[:2]
    assert [c["shape"] for c in main] == [[height, width, 3]], "one capture, full size"
    assert len(lores) >= 2 and all(c["shape"][1] == 640 for c in lores), "the preview came from lores"
    gaps = [b["at"] - a["at"] for a, b in zip(lores, lores[1:])]
    assert min(gaps) >= 0.19, f"previews taken closer than 1/5 s apart: {min(gaps):.3f} s"
