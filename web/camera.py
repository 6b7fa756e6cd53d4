"""A camera attached to the server (laptop webcam, Raspberry Pi camera) as a second way to photograph cards.

Why on the server: a laptop or Pi above the table can take the photo itself,
with a live preview in the browser (a JPEG refreshed a few times a second), while
a phone simply uses its own camera through ``<input type="file" capture>``.
The camera is found once per app: ``CAMERA`` (or ``$TIPLU_CAMERA``) is ``auto``
(picamera2 when installed, else OpenCV device 0 when ``/dev/video*`` exists),
``none``, an OpenCV device number or a device path. Without a camera every
camera endpoint answers 404 and the pages hide the button.

>>> find_camera("none") is None
True
"""

from __future__ import annotations

import glob
import importlib
import os
import threading
from typing import Any

import cv2
import numpy as np
from flask import Flask

PREVIEW_WIDTH = 640
CAMERA_EXTENSION = "tiplu_camera"
_probing = threading.Lock()


class Camera:
    """One opened camera shared by every request thread (a lock serialises reads).

    ``source`` is ``"picamera2"`` or an OpenCV device (number or path); it is opened
    on the first frame and kept open.
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
                capture = cv2.VideoCapture(self.source)
                if not capture.isOpened():
                    raise OSError(f"camera {self.source!r} cannot be opened")
                self._device = capture
        return self._device

    def frame(self) -> np.ndarray:
        """One BGR frame at the camera's full resolution."""
        with self._lock:
            device = self._open()
            if self.source == "picamera2":
                return np.ascontiguousarray(device.capture_array())
            ok, image = device.read()
            if not ok or image is None:
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
    setting = (setting or "auto").strip().lower()
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
    return Camera(int(setting) if setting.isdigit() else setting)


def camera_for(app: Flask) -> Camera | None:
    """The app's camera, found on first use and remembered (one probe, however many threads ask)."""
    if CAMERA_EXTENSION not in app.extensions:
        with _probing:
            if CAMERA_EXTENSION not in app.extensions:
                setting = app.config.get("CAMERA") or os.environ.get("TIPLU_CAMERA") or "auto"
                app.extensions[CAMERA_EXTENSION] = find_camera(str(setting))
    found: Camera | None = app.extensions[CAMERA_EXTENSION]
    return found
