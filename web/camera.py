"""A camera attached to the server (laptop webcam, Raspberry Pi camera) as a second way to photograph cards.

Why on the server: a laptop or Pi above the table can take the photo itself,
with a live preview in the browser (a JPEG refreshed a few times a second), while
a phone simply uses its own camera through ``<input type="file" capture>``.
The camera is found once per app: ``CAMERA`` (or ``$TIPLU_CAMERA``) is ``auto``
(picamera2 when installed, else OpenCV device 0 when ``/dev/video*`` exists),
``none``, an OpenCV device number, a device path, a video file or a folder of
images. A video file or a folder is read like a camera (the video loops, the
folder's images come round in name order): a rehearsal of the evening with no
camera attached, and how the tests drive the real preview and capture. Without a
camera every camera endpoint answers 404 and the pages hide the button.

A camera that stops answering (unplugged, file gone) makes that request answer
503; it is opened afresh on the next request, so plugging it back in is enough.
A camera left unused for ``IDLE_SECONDS`` (``CAMERA_IDLE_SECONDS``, or
``$TIPLU_CAMERA_IDLE``; ``0`` keeps it open) is released, so another program
(``rpicam-still``, the README's camera test) can open it; the next photo opens it again.

On a Pi, ``auto`` asks picamera2 which cameras it sees: with none (a Pi with
picamera2 installed and only a USB webcam) it takes the first USB webcam through
OpenCV instead.

The preview stays light enough for a Pi 4: it is scaled on the server (picamera2's
small ``lores`` stream, else the frame shrunk to ``PREVIEW_WIDTH``) and taken at most
``PREVIEW_MAX_FPS`` times a second however many phones ask; the others get the same
JPEG. The capture always reads the full-resolution ``main`` stream.

>>> find_camera("none") is None
True
"""

from __future__ import annotations

import glob
import importlib
import os
import threading
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from flask import Flask

PREVIEW_WIDTH = 640
PREVIEW_MAX_FPS = 5.0
IDLE_SECONDS = 60.0
#: Where Linux lists video devices, and where their nodes are (the tests point these at fakes).
VIDEO4LINUX = "/sys/class/video4linux"
DEVICES = "/dev"
CAMERA_EXTENSION = "tiplu_camera"
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp"})
_probing = threading.Lock()


class ImageFolder:
    """A folder of photos that answers like ``cv2.VideoCapture``: each ``read()`` gives the next image.

    The folder is listed again on every read, so images added or removed (or the whole
    folder going away) show at once.
    """

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.position = 0

    def images(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)

    def isOpened(self) -> bool:  # noqa: N802  (the cv2.VideoCapture name)
        return bool(self.images())

    def read(self) -> tuple[bool, np.ndarray | None]:
        found = self.images()
        if not found:
            return False, None
        path = found[self.position % len(found)]
        self.position += 1
        return True, cv2.imread(str(path), cv2.IMREAD_COLOR)

    def release(self) -> None:
        self.position = 0


def preview_size(sensor: tuple[int, int], width: int = PREVIEW_WIDTH) -> tuple[int, int]:
    """The picamera2 ``lores`` size for the preview: ``width`` wide, the sensor's shape, even sides.

    Every libcamera stream shows the same field of view, so a ``lores`` of another shape
    would be squashed; YUV420 needs even sides.

    >>> preview_size((4608, 2592))   # Camera Module 3 (16:9)
    (640, 360)
    >>> preview_size((4056, 3040))   # HQ camera (4:3)
    (640, 480)
    """
    sensor_width, sensor_height = sensor
    width = min(width, sensor_width) // 2 * 2
    return width, max(2, round(width * sensor_height / sensor_width / 2) * 2)


def usb_webcams(sysfs: str | None = None, devices: str | None = None) -> list[str]:
    """The device paths of the USB webcams' picture nodes, in number order.

    Only USB devices count: on a Pi, ``/dev/video*`` also holds the ISP's and the codec's
    nodes (and a Pi 5's camera front end), which OpenCV cannot take a picture from. A UVC
    webcam makes two nodes, pictures at index 0 and metadata at 1; the first is kept.

    >>> usb_webcams("/nonexistent")
    []
    """
    sysfs = sysfs or VIDEO4LINUX
    devices = devices or DEVICES
    found: list[tuple[int, str]] = []
    for node in glob.glob(os.path.join(sysfs, "video*")):
        name = os.path.basename(node)
        if not name[len("video"):].isdigit():
            continue
        device = os.path.realpath(os.path.join(node, "device"))
        index = Path(node, "index")
        first = not index.exists() or index.read_text().strip() in ("", "0")
        if "/usb" in device and first:
            found.append((int(name[len("video"):]), os.path.join(devices, name)))
    return [path for _number, path in sorted(found)]


def picamera2_cameras() -> int | None:
    """How many cameras picamera2 sees; None when it cannot say (an older picamera2, a broken stack)."""
    try:
        return len(importlib.import_module("picamera2").Picamera2.global_camera_info())
    except Exception:  # noqa: BLE001 - whatever the camera stack raises, the camera is tried as before
        return None


def open_picamera2() -> tuple[Any, bool]:
    """Start the Pi camera: a full-resolution BGR ``main`` stream and a small YUV420 ``lores`` one.

    Returns the camera and whether ``lores`` exists (a camera stack that refuses it still
    works; the preview then shrinks ``main``). picamera2's ``RGB888`` is laid out B, G, R,
    OpenCV's order.
    """
    camera = importlib.import_module("picamera2").Picamera2()
    main = {"format": "RGB888"}
    try:
        lores = {"size": preview_size(tuple(camera.sensor_resolution)), "format": "YUV420"}
        camera.configure(camera.create_still_configuration(main=main, lores=lores))
        has_lores = True
    except (RuntimeError, ValueError, TypeError, AttributeError):
        camera.configure(camera.create_still_configuration(main=main))
        has_lores = False
    camera.start()
    return camera, has_lores


class Camera:
    """One opened camera shared by every request thread (a lock serialises reads).

    ``source`` is ``"picamera2"``, an OpenCV device (number or path), a video file or a
    folder of images; it is opened on the first frame and kept open until it fails or
    has given no frame for ``idle_seconds`` (None: kept open). ``preview_interval`` is the
    shortest time between two frames taken for previews.

    >>> Camera(0, idle_seconds=0.5).idle_seconds
    0.5
    """

    def __init__(self, source: int | str, preview_interval: float = 1 / PREVIEW_MAX_FPS,
                 idle_seconds: float | None = IDLE_SECONDS) -> None:
        self.source = source
        self.preview_interval = preview_interval
        self.idle_seconds = idle_seconds
        self._lock = threading.Lock()
        self._device: Any = None
        self._lores = False
        self._last_used = 0.0
        self._idle_watch: threading.Thread | None = None
        self._preview_lock = threading.Lock()
        self._preview: tuple[int, float, bytes] | None = None  # (width, monotonic time taken, JPEG)

    def _open(self) -> Any:
        if self._device is None:
            if self.source == "picamera2":
                try:
                    self._device, self._lores = open_picamera2()
                except Exception as error:  # noqa: BLE001 - no camera, busy, cable out: all "cannot be opened"
                    raise OSError(f"camera 'picamera2' cannot be opened: {error}") from None
            else:
                folder = isinstance(self.source, str) and os.path.isdir(self.source)
                capture = ImageFolder(str(self.source)) if folder else cv2.VideoCapture(self.source)
                if not capture.isOpened():
                    raise OSError(f"camera {self.source!r} cannot be opened")
                self._device = capture
            self._watch_idle()
        self._last_used = time.monotonic()
        return self._device

    def _watch_idle(self) -> None:
        """Start the thread that releases the camera once it has been idle for ``idle_seconds``."""
        if self.idle_seconds is None or (self._idle_watch is not None and self._idle_watch.is_alive()):
            return
        self._idle_watch = threading.Thread(target=self._release_when_idle, name="camera-idle", daemon=True)
        self._idle_watch.start()

    def _release_when_idle(self) -> None:
        """Sleep until the camera has been idle for ``idle_seconds``, then release it (under the lock: never mid-frame)."""
        assert self.idle_seconds is not None
        while True:
            time.sleep(max(self._last_used + self.idle_seconds - time.monotonic(), 0.01))
            with self._lock:
                if self._device is None:
                    return
                if time.monotonic() - self._last_used >= self.idle_seconds:
                    self._close()
                    return

    @property
    def is_open(self) -> bool:
        """Whether the device is held now (between the first frame and a failure or the idle release)."""
        return self._device is not None

    def _close(self) -> None:
        """Forget a device that failed, so the next frame opens it again (a camera plugged back in)."""
        device, self._device = self._device, None
        self._preview = None
        for name in ("release", "close"):  # OpenCV's and picamera2's
            if device is not None and hasattr(device, name):
                try:
                    getattr(device, name)()
                except Exception:  # noqa: BLE001 - a failed camera may fail to close too; it is forgotten anyway
                    pass
                break

    def _picamera2(self, stream: str) -> np.ndarray:
        """One picamera2 frame of ``stream`` (``main`` BGR, or ``lores`` YUV420 turned BGR); closes it on failure."""
        device = self._open()
        try:
            array = device.capture_array(stream)
        except Exception as error:  # noqa: BLE001 - whatever the camera stack raises, reopen next time
            self._close()
            raise OSError(f"camera {self.source!r} gave no picture: {error}") from None
        self._last_used = time.monotonic()  # idle counts from the end of the last frame
        if stream == "lores":
            return cv2.cvtColor(array, cv2.COLOR_YUV2BGR_I420)
        return np.ascontiguousarray(array[:, :, :3])

    def frame(self) -> np.ndarray:
        """One BGR frame at the camera's full resolution."""
        with self._lock:
            if self.source == "picamera2":
                return self._picamera2("main")
            device = self._open()
            ok, image = device.read()
            if not ok and isinstance(device, cv2.VideoCapture) and device.get(cv2.CAP_PROP_FRAME_COUNT) > 0:
                device.set(cv2.CAP_PROP_POS_FRAMES, 0)  # a video file: loop, like a camera that keeps going
                ok, image = device.read()
            if not ok or image is None:
                self._close()
                raise OSError(f"camera {self.source!r} gave no picture")
            self._last_used = time.monotonic()
            return image

    def preview_frame(self) -> np.ndarray:
        """A BGR frame for the preview: picamera2's small ``lores`` stream when there is one, else :meth:`frame`."""
        if self.source == "picamera2":
            with self._lock:
                self._open()
                if self._lores:
                    return self._picamera2("lores")
        return self.frame()

    def preview_jpeg(self, width: int = PREVIEW_WIDTH) -> bytes:
        """A small JPEG of the current view, for the live preview.

        Taken at most once per ``preview_interval``: phones asking in between get the
        last one, so ten phones watching cost the camera no more than one.
        """
        with self._preview_lock:
            kept = self._preview
            if kept is not None and kept[0] == width and time.monotonic() - kept[1] < self.preview_interval:
                return kept[2]
            taken = time.monotonic()
            image = self.preview_frame()
            if image.shape[1] > width:
                scale = width / image.shape[1]
                image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
            ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 75])
            if not ok:
                raise OSError("the preview could not be encoded")
            jpeg = encoded.tobytes()
            self._preview = (width, taken, jpeg)
            return jpeg


def find_camera(setting: str | None, idle_seconds: float | None = IDLE_SECONDS) -> Camera | None:
    """The camera that ``setting`` names, or None (see the module docstring).

    >>> find_camera("2").source
    2
    """
    raw = (setting or "auto").strip()
    setting = raw.lower()
    if setting in ("none", "off", "no", ""):
        return None
    source: int | str
    if setting == "auto":
        try:
            importlib.import_module("picamera2")
        except ImportError:
            webcams = usb_webcams()
            if webcams:
                source = webcams[0]
            elif glob.glob(os.path.join(DEVICES, "video*")):
                source = 0
            else:
                return None
        else:
            if picamera2_cameras() == 0:  # picamera2, but no Pi camera: a USB webcam, if there is one
                webcams = usb_webcams()
                if not webcams:
                    return None
                source = webcams[0]
            else:
                source = "picamera2"
    elif setting == "picamera2":
        source = "picamera2"
    else:
        source = int(setting) if setting.isdigit() else raw
    return Camera(source, idle_seconds=idle_seconds)


def idle_setting(value: object) -> float | None:
    """``CAMERA_IDLE_SECONDS`` read: seconds before an unused camera is released; 0 or "never" keeps it open.

    >>> idle_setting("90"), idle_setting(0), idle_setting("never"), idle_setting(None)
    (90.0, None, None, 60.0)
    >>> idle_setting("soon")
    Traceback (most recent call last):
    ValueError: CAMERA_IDLE_SECONDS (TIPLU_CAMERA_IDLE) must be a number of seconds or "never", not 'soon'
    """
    if value is None or value == "":
        return IDLE_SECONDS
    if str(value).strip().lower() == "never":
        return None
    try:
        seconds = float(str(value))
    except ValueError:
        raise ValueError(f'CAMERA_IDLE_SECONDS (TIPLU_CAMERA_IDLE) must be a number of seconds or "never", '
                         f"not {value!r}") from None
    return seconds if seconds > 0 else None


def camera_for(app: Flask) -> Camera | None:
    """The app's camera, found on first use and remembered (one probe, however many threads ask)."""
    if CAMERA_EXTENSION not in app.extensions:
        with _probing:
            if CAMERA_EXTENSION not in app.extensions:
                setting = app.config.get("CAMERA") or os.environ.get("TIPLU_CAMERA") or "auto"
                idle = app.config.get("CAMERA_IDLE_SECONDS", os.environ.get("TIPLU_CAMERA_IDLE"))
                try:
                    idle_seconds = idle_setting(idle)
                except ValueError as error:
                    app.logger.warning("%s; the camera is released after %d s", error, IDLE_SECONDS)
                    idle_seconds = IDLE_SECONDS
                app.extensions[CAMERA_EXTENSION] = find_camera(str(setting), idle_seconds)
    found: Camera | None = app.extensions[CAMERA_EXTENSION]
    return found
