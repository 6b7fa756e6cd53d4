"""The table camera tested for real: ``TIPLU_CAMERA`` names a video file or a folder of images.

The video and the folder are made here from ``sample_images/``; OpenCV reads them
like a camera, so the live preview, the capture and the detector all run for real,
including a camera that disappears in the middle of the evening and comes back.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Iterator

import cv2
import numpy as np
import pytest
from flask.testing import FlaskClient

from web.app import create_app
from web.camera import find_camera
from web_support import CHROMIUM, Server, make_video, open_table_camera, phone_page, picture

SAMPLES = Path(__file__).resolve().parents[1] / "sample_images"
PHOTO = SAMPLES / "maal_spread.jpg"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    shots = tmp_path / "camera"
    shots.mkdir()
    shutil.copy(PHOTO, shots / "001.jpg")
    return shots


def test_a_video_file_is_a_camera_that_loops(tmp_path: Path) -> None:
    video = make_video(tmp_path / "table.avi", [SAMPLES / "tiplu.jpg", PHOTO], repeat=2)
    camera = find_camera(str(video))
    assert camera is not None
    sizes = {camera.frame().shape for _ in range(9)}  # 4 frames in the file: it loops twice
    assert len(sizes) == 1 and next(iter(sizes))[2] == 3
    jpeg = camera.preview_jpeg(width=320)
    decoded = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    assert decoded is not None and decoded.shape[1] == 320


def test_a_folder_is_a_camera_that_can_disappear_and_come_back(folder: Path, tmp_path: Path) -> None:
    shutil.copy(SAMPLES / "tiplu.jpg", folder / "002.jpg")
    camera = find_camera(str(folder))
    assert camera is not None
    first, second, third = camera.frame(), camera.frame(), camera.frame()
    assert np.array_equal(first, picture(PHOTO)) and not np.array_equal(first, second)
    assert np.array_equal(first, third), "the images come round in name order"
    gone = folder.rename(tmp_path / "unplugged")
    with pytest.raises(OSError, match="gave no picture|cannot be opened"):
        camera.frame()
    gone.rename(folder)
    assert camera.frame().shape == first.shape


def test_preview_and_capture_answer_503_while_the_camera_is_gone(folder: Path, tmp_path: Path) -> None:
    app = create_app({"TESTING": True, "DATABASE": str(tmp_path / "cam.db"), "SECRET_KEY": "t",
                      "WTF_CSRF_ENABLED": False, "CAMERA": str(folder)})
    client: FlaskClient = app.test_client()
    client.post("/api/sessions", json={"players": ["Hari", "Sita"]})
    assert "Table camera" in client.get("/sessions/1/rounds/new").get_data(as_text=True)
    preview = client.get("/camera/preview.jpg")
    assert preview.status_code == 200 and preview.mimetype == "image/jpeg"
    shown = cv2.imdecode(np.frombuffer(preview.data, np.uint8), cv2.IMREAD_COLOR)
    assert shown is not None and shown.shape[1] <= 640
    taken = client.post("/sessions/1/photos/camera", data={"purpose": "maal", "seat": "1"})
    assert taken.status_code == 201, taken.get_json()
    assert taken.get_json()["reading"]["cards"]
    gone = folder.rename(tmp_path / "unplugged")
    lost = client.get("/camera/preview.jpg")
    assert lost.status_code == 503 and "check it is connected" in lost.get_json()["error"]
    assert client.post("/sessions/1/photos/camera", data={"purpose": "maal"}).status_code == 503
    gone.rename(folder)
    assert client.get("/camera/preview.jpg").status_code == 200


@pytest.fixture
def camera_server(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    monkeypatch.setenv("TIPLU_CAMERA", str(folder))
    running = Server(tmp_path / "camera.db")
    yield running
    running.kill()


@pytest.mark.browser
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="needs Debian's /usr/bin/chromium")
def test_live_preview_and_capture_on_a_phone_through_a_camera_that_comes_and_goes(
        camera_server: Server, folder: Path, tmp_path: Path) -> None:
    camera_server.call("POST", "/api/sessions", {"players": ["Hari", "Sita", "Ram"]})
    with phone_page(timeout_ms=30_000) as page:
        open_table_camera(page, camera_server.base)

        gone = folder.rename(tmp_path / "unplugged")
        page.wait_for_function("() => document.getElementById('photo-status').textContent.length > 0")
        assert page.inner_text("#photo-status") == "The table camera gave no picture."
        gone.rename(folder)
        page.wait_for_function("() => document.getElementById('photo-status').textContent === ''")

        page.locator("#camera-shoot").tap()
        page.wait_for_selector("#photo-body", state="visible")
        found = page.locator("#photo-cards .photo-card").count()
        assert found > 0
        page.locator("#photo-use").tap()
        cards = page.input_value('input[name="p1_cards"]').split()
        assert len(cards) == found
