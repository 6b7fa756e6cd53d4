"""Helpers shared by the web, API and ledger tests (imported as ``web_support``)."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from contextlib import contextmanager
from typing import IO, Any, Iterator

PLAYERS = ["Anna", "Ben", "Carla", "Dan"]


def nepali_round(winner: str | None = "Anna", finish: str | None = "melds", tiplu: str | None = "JC",
                 **players: dict[str, Any]) -> dict[str, Any]:
    """RULES.md example 1 by default; keyword arguments replace a player's entry."""
    entries: dict[str, Any] = {"Anna": {"seen": True, "maal": 5}, "Ben": {"seen": True, "maal": 2},
                               "Carla": {"seen": True, "maal": 10}, "Dan": {"seen": False, "maal": 3}}
    entries.update(players)
    return {"tiplu": tiplu, "winner": winner, "finish": finish, "players": entries}


def serve_command() -> list[str]:
    script = Path(sys.executable).with_name("tiplu")
    if script.exists():
        return [str(script), "serve"]
    return [sys.executable, "-m", "web.serve"]


class Server:
    """One server process on a free port, with a tiny JSON client."""

    def __init__(self, db_path: Path, *extra: str, env: dict[str, str] | None = None) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "TIPLU_SECRET_KEY": "server-test", **(env or {})}
        self.process = subprocess.Popen([*serve_command(), "--port", "0", "--db", str(db_path), "--no-qr", *extra],
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        assert self.process.stdout is not None, "stdout is a pipe"
        self.stdout: IO[str] = self.process.stdout
        self.output: list[str] = []
        deadline = time.monotonic() + 30
        self.base = ""
        while time.monotonic() < deadline:
            line = self.stdout.readline()
            if not line:
                break
            self.output.append(line)
            match = re.search(r"open (http://127\.0\.0\.1:\d+)/", line)
            if match:
                self.base = match.group(1)
            if "Press Ctrl-C" in line:
                break
        if not self.base:
            self.kill()
            raise RuntimeError("server did not start:\n" + "".join(self.output))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        for line in self.stdout:
            self.output.append(line)

    def call(self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
             ) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return response.status, json.loads(raw) if raw else None
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def if_match(self, path: str) -> dict[str, str]:
        """``If-Match`` with the ``ETag`` of ``path``'s GET now (a round's edit or delete must carry it)."""
        with urllib.request.urlopen(self.base + path, timeout=30) as response:
            return {"If-Match": response.headers["ETag"]}

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)


def if_match(client: Any, url: str) -> dict[str, str]:
    """``If-Match`` with the round's ``ETag`` as its GET gives it now: what an API edit or delete must carry."""
    return {"If-Match": client.get(url).headers["ETag"]}


def form_version(client: Any, session_id: int, number: int) -> dict[str, str]:
    """The hidden ``version`` field the round's edit and delete forms carry, as the page gives it now."""
    page = client.get(f"/sessions/{session_id}/rounds/{number}/edit").get_data(as_text=True)
    match = re.search(r'name="version" value="([^"]*)"', page)
    assert match, "the edit form carries the round's version"
    return {"version": match.group(1)}


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PHONE = {"width": 360, "height": 740}


@contextmanager
def phone_page(timeout_ms: int = 15_000, **context: Any) -> Iterator[Any]:
    """A tab of Debian's Chromium sized and touched like a 360 px phone (Playwright drives it).

    ``context`` adds browser-context options, e.g. ``locale="hi-IN"``.
    """
    import pytest
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        options: dict[str, Any] = {"viewport": PHONE, "device_scale_factor": 1, "is_mobile": True, "has_touch": True}
        browser_context = browser.new_context(**{**options, **context})
        tab = browser_context.new_page()
        tab.set_default_timeout(timeout_ms)
        try:
            yield tab
        finally:
            browser_context.close()
            browser.close()


def deck_job_shown(page: Any) -> tuple[str, str, float] | None:
    """What the Decks page shows of its job: its state, the step's message and the bar's value; None while the
    page reloads (it does when the job is done)."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        state, message, value = page.evaluate(
            "() => [document.getElementById('deck-job').dataset.state, "
            "document.getElementById('deck-job-message').textContent, document.getElementById('deck-progress').value]")
    except PlaywrightError:
        return None
    return str(state), str(message), float(value)


def multipart(fields: dict[str, str], image: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body with ``fields`` and the PNG ``image`` as ``image``; returns (body, content type)."""
    boundary = "tiplu-test-boundary"
    out = io.BytesIO()
    for name, value in fields.items():
        out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    out.write(f'--{boundary}\r\nContent-Disposition: form-data; name="image"; filename="p.png"\r\n'
              f"Content-Type: image/png\r\n\r\n".encode() + image + f"\r\n--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"


def shipped_model_files(folder: Path, *, with_json: bool = False) -> Path:
    """Copy the shipped model's networks (every ``.onnx``) and ``classes.txt`` into ``folder``,
    and its ``model.json`` too when ``with_json``: a model folder a test may change."""
    from vision.detector import INFO_FILE, MODELS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    for path in MODELS_DIR.iterdir():
        if path.suffix == ".onnx" or path.name == "classes.txt" or (with_json and path.name == INFO_FILE):
            (folder / path.name).write_bytes(path.read_bytes())
    return folder


def held_out_deck() -> Any:
    """The design enrolment tests teach: the held-out nicu-white when its package is installed, else a drawn deck."""
    from vision.training.data.decks import DeckError, drawn_decks, load_decks
    try:
        return load_decks("holdout")[0]
    except (DeckError, IndexError):
        return drawn_decks()[0]


def suit_photos(seed: int = 7) -> list[tuple[str, Any, list[tuple[float, float]]]]:
    """Enrolment photos of :func:`held_out_deck` in memory: (suit, BGR photo, where each card's centre lies)."""
    from vision.training.fit.enrol import compose_suit_photos
    return compose_suit_photos(held_out_deck().faces, seed)


def write_suit_photos(folder: Path, photos: list[tuple[str, Any, list[tuple[float, float]]]]) -> list[Path]:
    """The suit photos as JPEG files (spades.jpg ... clubs.jpg, in enrolment order), then jokers.jpg (two jokers;
    a king of spades stands in for a deck without one, as a family's odd joker would)."""
    from vision.training.fit.enrol import write_enrolment_photos
    deck = held_out_deck()
    return write_enrolment_photos(folder, photos, deck.faces.get("JOKER") or deck.faces["KS"])


def expected_uncertain(reading: Any, calibration: Any, conf: float = 0.25) -> list[bool]:
    """Which cards of a :class:`vision.pipeline.PhotoReading` the calibration should mark uncertain: a
    clamped copy, a card of faint corners only, one under the thresholds, one read from a small index that
    may show its twin's pip (:meth:`vision.calibration.Calibration.twin_doubtful`), or one its doubt score flags."""
    from vision.doubt_score import feature_rows
    rows = feature_rows(reading.corners, reading.cards)

    def index_side(card: Any) -> float:
        return max(max(x2 - x1, y2 - y1) for x1, y1, x2, y2 in (reading.corners[i].box for i in card.corners))

    return [card.clamped or all(reading.corners[i].confidence < conf for i in card.corners)
            or calibration.doubtful(card.confidence, card.alternatives)
            or calibration.twin_doubtful(card.card, card.alternatives, index_side(card))
            or (calibration.score is not None and calibration.score.flags(row))
            for card, row in zip(reading.cards, rows)]


def calibration_folders(tmp_path: Path, seeds: tuple[int, int], scene: str, count: int = 2) -> Path:
    """Render ``tmp_path/calib`` and ``tmp_path/test`` (``count`` scenes of the held-out designs each, one
    seed a split) and copy the shipped model with its ``model.json`` to ``tmp_path/model``, which it returns."""
    from web.cli import main
    for split, seed in zip(("calib", "test"), seeds):
        out, err = io.StringIO(), io.StringIO()
        assert main(["generate", str(tmp_path / split), "--count", str(count), "--seed", str(seed), "--decks",
                     "holdout", "--scenes", scene], stdout=out, stderr=err) == 0, err.getvalue()
    return shipped_model_files(tmp_path / "model", with_json=True)


def tiplu_in_process(*args: str) -> subprocess.CompletedProcess[str]:
    """``tiplu ARGS`` in this process, as a finished process would report it."""
    from web.cli import main
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), stdout=out, stderr=err)
    return subprocess.CompletedProcess(["tiplu", *args], code, out.getvalue(), err.getvalue())


def picture(path: Path) -> Any:
    """A photo as OpenCV reads it (BGR), failing the test where it cannot be read."""
    import cv2
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert image is not None, path
    return image


def make_video(path: Path, frames: list[Path], repeat: int = 3) -> Path:
    """An MJPG video of photos, each shown ``repeat`` frames (all at the first photo's size): a camera
    that ``TIPLU_CAMERA`` or a fake picamera2 can read."""
    import cv2
    height, width = picture(frames[0]).shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 5, (width, height))
    assert writer.isOpened(), "OpenCV can write an MJPG video"
    for frame in frames:
        image = cv2.resize(picture(frame), (width, height))
        for _ in range(repeat):
            writer.write(image)
    writer.release()
    return path


def open_table_camera(page: Any, base: str, session: int = 1, player: str = "Sita", target: str = "p1_cards") -> None:
    """A phone on a new round's form: the tiplu entered (maal is valued from it), the Table camera opened for
    ``player``'s maal cards, and its live preview showing a frame."""
    page.goto(f"{base}/sessions/{session}/rounds/new")
    page.fill("#tiplu", "JC")
    page.locator(f'.player-row[data-player="{player}"] details.more > summary').tap()
    page.locator(f'.photo-tools[data-target="{target}"] .camera-open').tap()
    page.wait_for_function("() => document.getElementById('camera-view').naturalWidth > 0")
