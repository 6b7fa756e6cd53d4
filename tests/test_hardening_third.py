"""Issue 55, in the app: crafted photos, the guessing budget, devices, lost edits and a full disk.

Each test runs the real app on a real SQLite file; the crafted photos are files in
``tests/data/crafted/`` (``tests/make_crafted_images.py`` writes them).
"""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from flask import Flask
from flask.testing import FlaskClient

from vision.images import MAX_SCANS, ImageError, decode_image

CRAFTED = Path(__file__).resolve().parent / "data" / "crafted"
ROOT = Path(__file__).resolve().parent.parent


# --- rows 4, 5, 10: crafted photos -----------------------------------------------------------------

@pytest.mark.parametrize("name, says", [
    ("hidden_frame.jpg", "marker FF 00"),
    ("unknown_marker.jpg", "marker FF 02"),
    ("two_frames.jpg", "two frames"),
    ("many_scans.jpg", f"300 scans, over the {MAX_SCANS}"),
    ("thin_16x12000.png", "too thin to be a photo of cards"),
])
def test_a_crafted_photo_is_a_400_that_says_why(client: FlaskClient, name: str, says: str) -> None:
    data = (CRAFTED / name).read_bytes()
    with pytest.raises(ImageError, match=says):
        decode_image(data)
    response = client.post("/api/detect", data={"image": (io.BytesIO(data), name)},
                           content_type="multipart/form-data")
    assert response.status_code == 400 and says in response.get_json()["error"], response.get_json()


def test_opencv_decodes_no_more_pixels_than_the_limit_in_any_process_of_the_app() -> None:
    """The hidden 9000 x 9000 frame, handed to OpenCV directly after the app is imported: refused."""
    script = ("import web.app, cv2, numpy as np, sys\n"
              "data = np.frombuffer(open(sys.argv[1], 'rb').read(), np.uint8)\n"
              "try:\n    image = cv2.imdecode(data, cv2.IMREAD_COLOR)\nexcept cv2.error:\n    image = None\n"
              "print('refused' if image is None else image.shape)\n")
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", script, str(CRAFTED / "hidden_frame.jpg")], capture_output=True,
                          text=True, env=env, timeout=120, check=True)
    assert done.stdout.strip() == "refused", done.stdout + done.stderr
