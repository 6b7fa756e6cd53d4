"""The Table camera on a Raspberry Pi, tested with a fake picamera2 that serves photos or a video.

picamera2 exists only on Raspberry Pi OS (apt's python3-picamera2), so the package below
stands in for it: the same calls tiplu makes (``Picamera2()``, ``sensor_resolution``,
``create_still_configuration(main=..., lores=...)``, ``configure``, ``start``,
``capture_array(stream)``, ``close``), the same layouts (``main`` RGB888, which is B, G, R
in memory; ``lores`` YUV420 planar), frames read from ``FAKE_PICAMERA2_SOURCE`` (a video
file that loops, or a folder of images; ``none``: no camera attached, which
``Picamera2.global_camera_info()`` then says) and every capture logged to ``FAKE_PICAMERA2_LOG``.
Like libcamera, it holds the camera from ``Picamera2()`` to ``close()``: a second
``Picamera2()`` meanwhile (``rpicam-still`` in another process) fails as busy.
It is written to a temporary folder and put on ``sys.path`` (or ``PYTHONPATH`` for a real
server), so ``TIPLU_CAMERA=auto`` finds it as it would find the real one.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import cv2
import numpy as np
import pytest

import web.camera as camera_module
from web.app import create_app
from web.camera import IDLE_SECONDS, camera_for, find_camera, idle_setting, usb_webcams
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


def _held():
    """The file that says the camera is held (by any process), as libcamera's acquire() does."""
    return os.environ["FAKE_PICAMERA2_SOURCE"].rstrip("/") + ".held"


class Picamera2:
    @staticmethod
    def global_camera_info():
        if os.environ["FAKE_PICAMERA2_SOURCE"] == "none":
            return []
        return [{"Model": "fake", "Location": 2, "Rotation": 0, "Id": "/base/fake", "Num": 0}]

    def __init__(self, camera_num=0):
        self.source = os.environ["FAKE_PICAMERA2_SOURCE"]
        self.log = os.environ.get("FAKE_PICAMERA2_LOG")
        if not self.global_camera_info():
            raise IndexError("list index out of range")
        try:
            os.close(os.open(_held(), os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            raise RuntimeError("Failed to acquire camera: Device or resource busy") from None
        self.held = True
        self.position = 0
        self.video = None
        if os.path.isfile(self.source):
            self.video = cv2.VideoCapture(self.source)
        try:
            first = self._next()
        except RuntimeError:
            self.close()
            raise
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
        if self.held:
            self.held = False
            os.unlink(_held())
            if self.log:
                with open(self.log, "a") as out:
                    out.write(json.dumps({"stream": "closed", "at": time.time()}) + "\\n")
'''


def install_fake(folder: Path) -> Path:
    """Write the fake ``picamera2`` package under ``folder`` and return the folder to put on the path."""
    package = folder / "picamera2"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(FAKE_PICAMERA2)
    return folder


def captures(log: Path) -> list[dict[str, Any]]:
    """The fake camera's captures so far: ``{"stream", "shape", "at"}``, oldest first."""
    return [entry for entry in events(log) if entry["stream"] != "closed"]


def events(log: Path) -> list[dict[str, Any]]:
    """The fake camera's log: its captures and ``{"stream": "closed"}`` when it was let go, oldest first."""
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


def wait_for(condition: Any, seconds: float = 10.0) -> bool:
    """Poll ``condition`` every 50 ms until it is true or ``seconds`` have passed; its last answer."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return bool(condition())


def another_program_opens_the_camera() -> str:
    """``rpicam-still``'s part: another user of the camera opens it and lets it go; what picamera2 said."""
    try:
        importlib.import_module("picamera2").Picamera2().close()
    except RuntimeError as error:
        return str(error)
    return "opened"


def test_an_idle_picamera2_is_released_so_another_program_can_open_it(fake_picamera2: Path, tmp_path: Path) -> None:
    camera = find_camera("picamera2", idle_seconds=0.6)
    assert camera is not None
    camera.frame()
    assert camera.is_open
    assert "Device or resource busy" in another_program_opens_the_camera(), "held while in use, as on a Pi"

    watched_until = time.monotonic() + 1.5  # a phone watching the preview keeps it open
    while time.monotonic() < watched_until:
        camera.preview_jpeg()
        time.sleep(0.05)
    assert camera.is_open and not [e for e in events(fake_picamera2) if e["stream"] == "closed"]

    assert wait_for(lambda: not camera.is_open), "released once idle"
    closed = [e for e in events(fake_picamera2) if e["stream"] == "closed"]
    idle = closed[0]["at"] - captures(fake_picamera2)[-1]["at"]
    assert len(closed) == 1 and 0.55 <= idle < 5, f"released {idle:.2f} s after the last frame, not 0.6 s"
    assert another_program_opens_the_camera() == "opened"
    assert camera.frame().shape == picture(PHOTO).shape, "the next photo opens it again"
    assert camera.is_open


@pytest.mark.parametrize(("value", "seconds"), [(None, 60.0), ("", 60.0), ("5", 5.0), ("0.5", 0.5),
                                                ("0", None), ("never", None), (30, 30.0)])
def test_the_idle_time_is_a_setting(value: object, seconds: float | None) -> None:
    assert idle_setting(value) == seconds


def test_a_wrong_idle_setting_keeps_the_minute_and_says_why(fake_picamera2: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    app = create_app({"TESTING": True, "DATABASE": ":memory:", "CAMERA": "picamera2", "CAMERA_IDLE_SECONDS": "soon"})
    camera = camera_for(app)
    assert camera is not None and camera.idle_seconds == IDLE_SECONDS
    assert "must be a number of seconds" in caplog.text


def fake_video4linux(root: Path, nodes: dict[str, tuple[str, int]], video: Path | None = None) -> None:
    """A ``/sys/class/video4linux`` and ``/dev`` under ``root``: each node's device folder and index.

    A node named in ``nodes`` gets ``/dev/<node>``; the first USB one is ``video`` (a real
    video file OpenCV reads as the webcam).
    """
    for node, (device, index) in nodes.items():
        folder = root / "sys" / "class" / "video4linux" / node
        folder.mkdir(parents=True)
        (root / "sys" / "devices" / device).mkdir(parents=True, exist_ok=True)
        (folder / "device").symlink_to(root / "sys" / "devices" / device)
        (folder / "index").write_text(f"{index}\n")
        (root / "dev").mkdir(exist_ok=True)
        (root / "dev" / node).write_bytes(video.read_bytes() if video and "usb" in device and index == 0 else b"")


PI4_NODES = {  # a Pi 4's own nodes: the codec and the ISP (not cameras OpenCV can read)
    "video10": ("platform/soc/bcm2835-codec", 0),
    "video11": ("platform/soc/bcm2835-codec", 0),
    "video13": ("platform/soc/bcm2835-isp", 0),
}
WEBCAM = {"video1": ("platform/scb/fd500000.pcie/pci0000:00/usb1/1-1/1-1.3/1-1.3:1.0", 0),
          "video2": ("platform/scb/fd500000.pcie/pci0000:00/usb1/1-1/1-1.3/1-1.3:1.0", 1)}


@pytest.mark.parametrize(("nodes", "found"), [
    ({**PI4_NODES, **WEBCAM}, ["video1"]),
    (PI4_NODES, []),
    ({}, []),
    ({**WEBCAM, "video4": ("platform/scb/usb2/2-1/2-1:1.0", 0)}, ["video1", "video4"]),
])
def test_usb_webcams_are_the_usb_picture_nodes(tmp_path: Path, nodes: dict[str, tuple[str, int]],
                                               found: list[str]) -> None:
    fake_video4linux(tmp_path, nodes)
    webcams = usb_webcams(str(tmp_path / "sys" / "class" / "video4linux"), str(tmp_path / "dev"))
    assert webcams == [str(tmp_path / "dev" / name) for name in found]


def test_picamera2_without_a_camera_falls_back_to_a_usb_webcam(fake_picamera2: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    video = make_video(tmp_path / "webcam.avi", [PHOTO])
    fake_video4linux(tmp_path, {**PI4_NODES, **WEBCAM}, video)
    monkeypatch.setattr(camera_module, "VIDEO4LINUX", str(tmp_path / "sys" / "class" / "video4linux"))
    monkeypatch.setattr(camera_module, "DEVICES", str(tmp_path / "dev"))
    monkeypatch.setenv("FAKE_PICAMERA2_SOURCE", "none")

    camera = find_camera("auto")
    assert camera is not None and camera.source == str(tmp_path / "dev" / "video1"), "the USB webcam, through OpenCV"
    frame = camera.frame()
    photo = picture(PHOTO)
    assert frame.shape == photo.shape
    assert np.abs(frame.astype(int) - photo.astype(int)).mean() < 6, "the webcam's picture (MJPG-compressed)"
    assert captures(fake_picamera2) == [], "picamera2 took no picture"


def test_picamera2_without_a_camera_and_no_webcam_means_no_camera(fake_picamera2: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    fake_video4linux(tmp_path, PI4_NODES)
    monkeypatch.setattr(camera_module, "VIDEO4LINUX", str(tmp_path / "sys" / "class" / "video4linux"))
    monkeypatch.setattr(camera_module, "DEVICES", str(tmp_path / "dev"))
    monkeypatch.setenv("FAKE_PICAMERA2_SOURCE", "none")
    assert find_camera("auto") is None, "no camera: the pages hide the button instead of failing on each photo"
