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

>>> find_camera("none") is None
True
"""

from __future__ import annotations

import glob
import importlib
import os
import threading
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from flask import Flask

PREVIEW_WIDTH = 640
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


class Camera:
    """One opened camera shared by every request thread (a lock serialises reads).

    ``source`` is ``"picamera2"``, an OpenCV device (number or path), a video file or a
    folder of images; it is opened on the first frame and kept open until it fails.
    """

    def __init__(self, source: int | str) -> None:
        self.source = source
        self._lock = threading.Lock()
        self._device: Any = None

    def _open(self) -> Any:
        if self._device is None:
            if self.source == "picamera2":
                camera = importlib.import_module("picamera2").Picamera2()
                camera.configure(camera.create_still_configuration(main={"format": "RGB888"}))
                camera.start()
                self._device = camera
            else:
                folder = isinstance(self.source, str) and os.path.isdir(self.source)
                capture = ImageFolder(str(self.source)) if folder else cv2.VideoCapture(self.source)
                if not capture.isOpened():
                    raise OSError(f"camera {self.source!r} cannot be opened")
                self._device = capture
        return self._device

    def _close(self) -> None:
        """Forget a device that failed, so the next frame opens it again (a camera plugged back in)."""
        device, self._device = self._device, None
        if device is not None and hasattr(device, "release"):
            device.release()

    def frame(self) -> np.ndarray:
        """One BGR frame at the camera's full resolution."""
        with self._lock:
            device = self._open()
            if self.source == "picamera2":
                return np.ascontiguousarray(device.capture_array())
            ok, image = device.read()
            if not ok and isinstance(device, cv2.VideoCapture) and device.get(cv2.CAP_PROP_FRAME_COUNT) > 0:
                device.set(cv2.CAP_PROP_POS_FRAMES, 0)  # a video file: loop, like a camera that keeps going
                ok, image = device.read()
            if not ok or image is None:
                self._close()
                raise OSError(f"camera {self.source!r} gave no picture")
            return image

    def preview_jpeg(self, width: int = PREVIEW_WIDTH) -> bytes:
        """A small JPEG of the current view, for the live preview."""
        image = self.frame()
        if image.shape[1] > width:
            scale = width / image.shape[1]
            image = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        ok, encoded = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 75])
        if not ok:
            raise OSError("the preview could not be encoded")
        return encoded.tobytes()


def find_camera(setting: str | None) -> Camera | None:
    """The camera that ``setting`` names, or None (see the module docstring).

    >>> find_camera("2").source
    2
    """
    raw = (setting or "auto").strip()
    setting = raw.lower()
    if setting in ("none", "off", "no", ""):
        return None
    if setting == "auto":
        try:
            importlib.import_module("picamera2")
        except ImportError:
            pass
        else:
            return Camera("picamera2")
        return Camera(0) if glob.glob("/dev/video*") else None
    if setting == "picamera2":
        return Camera("picamera2")
    return Camera(int(setting) if setting.isdigit() else raw)


def camera_for(app: Flask) -> Camera | None:
    """The app's camera, found on first use and remembered (one probe, however many threads ask)."""
    if CAMERA_EXTENSION not in app.extensions:
        with _probing:
            if CAMERA_EXTENSION not in app.extensions:
                setting = app.config.get("CAMERA") or os.environ.get("TIPLU_CAMERA") or "auto"
                app.extensions[CAMERA_EXTENSION] = find_camera(str(setting))
    found: Camera | None = app.extensions[CAMERA_EXTENSION]
    return found
