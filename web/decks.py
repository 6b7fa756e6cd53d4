"""Decks a family taught tiplu, kept in the instance folder, and the one background job that learns them.

Why here: the web page lets a family teach tiplu its own deck (four suit photos, see
:mod:`vision.training.fit.enrol`) and improve it from the cards corrected in photo reviews,
without a terminal. Learning takes minutes, so it runs in a background thread owned by
the app (:class:`DeckRunner`, one job at a time); the page polls its status. The photos
are checked before a job starts with :mod:`vision.enrolment` (runtime code); only the
jobs' work imports training, through :mod:`vision.training.api`. A deck is
a folder beside the ledger, never in ``models/``::

    decks/<name>/deck.json      {"title", "kind", "current": "v2", "versions": [...]}
    decks/<name>/photos/        the enrolment photos (spades.jpg ... clubs.jpg, jokers.jpg)
    decks/<name>/v1/, v2/       model folders, as ``tiplu detect --model`` reads them

A new version is written under a temporary name, renamed into place and only then
named ``current`` in ``deck.json`` (itself replaced in one rename), so a crash or a
failed run leaves the deck as it was; the version before stays on disk. A deck the
family no longer wants is removed the same way round (:func:`remove_deck`): renamed
out of the list in one step, then deleted.

>>> deck_name_for("Grandma's deck!"), deck_name_for("हजुरआमा")
('grandma-s-deck', 'deck')
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import threading
import traceback
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from flask import Flask, current_app

from scorer import Message, TipluError
from vision.detector import MODELS_DIR
from web.db import folder_beside_ledger
from web.errors import BadRequest, Conflict, NotFound, Unavailable
from web.i18n import N_, _, translate
from web.payloads import DECK_NAME, deck_name

DECK_FILE = "deck.json"
NO_SUCH_DECK = N_("deck: there is no deck called %(name)s; teach it on the Decks page or choose the standard deck")
#: How a removed deck's folder is renamed before it is deleted (a dot name: never listed as a deck).
TRASH_PREFIX = ".removed-"
#: What a deck is: learnt from suit photos, or the shipped model improved from corrections.
ENROLLED, CORRECTED = "enrolled", "corrections"
#: The deck that "Improve from corrections" makes of the shipped model.
STANDARD_CORRECTED = "standard-corrections"
STANDARD_CORRECTED_TITLE = N_("standard + corrections")
SUITS = ("spades", "hearts", "diamonds", "clubs")
JOKERS = "jokers"
#: The photo fields as messages name them.
PHOTO_WORDS = (N_("spades"), N_("hearts"), N_("diamonds"), N_("clubs"), N_("jokers"))
#: Fine-tuning schedule of the web page's runs (``TIPLU_DECK_EPOCHS``, ``TIPLU_DECK_COPIES`` make tests quick).
DEFAULT_EPOCHS, DEFAULT_COPIES = 6, 40

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Deck:
    """An enrolled deck in the instance folder: its name (the folder), title, kind and current model version."""

    name: str
    title: str
    kind: str
    current: str
    folder: Path
    versions: tuple[str, ...] = ()

    @property
    def model_folder(self) -> Path:
        """The model folder photos of a session with this deck are read with."""
        return self.folder / self.current

    @property
    def photos(self) -> tuple[Path, ...]:
        """The four suit photos it was taught with, in order (none for the standard deck's copy)."""
        found = tuple(self.folder / "photos" / f"{suit}.jpg" for suit in SUITS)
        return found if all(p.is_file() for p in found) else ()

    @property
    def jokers(self) -> Path | None:
        path = self.folder / "photos" / f"{JOKERS}.jpg"
        return path if path.is_file() else None

    @property
    def shown_title(self) -> str:
        """The title in the page's language (the standard deck's improved copy has a translated one)."""
        return _(self.title) if self.kind == CORRECTED else self.title

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "kind": self.kind, "current": self.current,
                "versions": list(self.versions)}


def deck_name_for(title: str) -> str:
    """A folder name from a deck's title: lower-case letters, digits and dashes ("deck" when none are left)."""
    name = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40].strip("-")
    return name or "deck"


def decks_folder(app: Flask | None = None) -> Path:
    """Where decks live: ``DECKS_DIR``, else ``decks/`` next to the ledger (``instance/decks``)."""
    return folder_beside_ledger("DECKS_DIR", "decks", app)


def base_model(app: Flask | None = None) -> Path:
    """The shipped (or ``TIPLU_MODEL``) model folder: the standard deck, and where enrolment starts."""
    configured = (app or current_app).config.get("MODEL_PATH")
    path = Path(configured) if configured else MODELS_DIR
    return path.parent if path.suffix == ".onnx" else path


def _read_deck(folder: Path) -> Deck | None:
    try:
        info = json.loads((folder / DECK_FILE).read_text())
        deck = Deck(folder.name, str(info["title"]), str(info.get("kind", ENROLLED)), str(info["current"]), folder,
                    tuple(info.get("versions") or ()))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return deck if deck.model_folder.is_dir() else None


def list_decks(folder: Path) -> list[Deck]:
    """The decks ready to use (a deck still being learnt for the first time has no ``deck.json`` yet)."""
    if not folder.is_dir():
        return []
    found = (_read_deck(path) for path in sorted(folder.iterdir()) if DECK_NAME.match(path.name))
    return [deck for deck in found if deck is not None]


def find_deck(folder: Path, name: str | None) -> Deck | None:
    """The deck called ``name``, or None when there is none (or it is broken)."""
    if not name or not DECK_NAME.match(name):
        return None
    return _read_deck(folder / name)


def deck_named(name: str, app: Flask | None = None) -> Deck:
    """The deck called ``name`` in the instance folder, or :class:`~web.errors.NotFound` saying so."""
    found = find_deck(decks_folder(app), name)
    if found is None:
        raise NotFound(_(NO_SUCH_DECK, name=name))
    return found


def check_deck(name: Any, app: Flask | None = None) -> str | None:
    """A deck chosen for a session: its name when it exists, None for the standard deck, else a 400."""
    chosen = deck_name(name)
    if chosen is not None and find_deck(decks_folder(app), chosen) is None:
        raise BadRequest(_(NO_SUCH_DECK, name=chosen))
    return chosen


def deck_in_use(deck: str | None, app: Flask | None = None) -> str | None:
    """The deck a session with ``deck`` reads its photos with now: its name, or None for the standard deck
    (chosen, or standing in for a deck that is gone)."""
    found = find_deck(decks_folder(app), deck)
    return found.name if found is not None else None


def model_for(deck: str | None, app: Flask | None = None) -> tuple[str | None, str | None]:
    """The model folder a session's photos are read with, and a notice when its deck is gone.

    A session whose deck folder was deleted falls back to the standard model; the notice
    says so, so the table knows why the reading may be worse.
    """
    app = app or current_app
    standard = app.config.get("MODEL_PATH") or None
    if deck is None:
        return standard, None
    found = find_deck(decks_folder(app), deck)
    if found is None:
        return standard, _("The deck %(name)s is missing from the server, so the standard deck read this photo; "
                           "choose a deck in the session's settings.", name=deck)
    return str(found.model_folder), None


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Replace a small JSON file in one rename, so a reader sees the old or the new one, never half."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(temporary, path)


def switch_version(folder: Path, title: str, kind: str, built: Path) -> Deck:
    """Make the model folder ``built`` (inside ``folder``, a temporary name) the deck's next current version.

    It is renamed to ``v<N>``, then ``deck.json`` names it current in one rename. The
    version before stays; older ones are removed.
    """
    old = _read_deck(folder)
    versions = list(old.versions) if old is not None else []
    number = 1 + max((int(v[1:]) for v in versions if re.fullmatch(r"v\d+", v)), default=0)
    version = f"v{number}"
    os.replace(built, folder / version)
    _write_json(folder / DECK_FILE, {"title": title, "kind": kind, "current": version,
                                     "versions": versions[-1:] + [version]})
    for stale in versions[:-1]:
        shutil.rmtree(folder / stale, ignore_errors=True)
    deck = _read_deck(folder)
    assert deck is not None, f"{folder}: just written"
    return deck


# --- the background job ------------------------------------------------------------------------------

#: What the Decks page says of the job, step by step (:func:`status_message`).
READING = N_("Reading the photos of %(title)s…")
LEARNING = N_("Learning %(title)s: round %(n)s of %(total)s")
CHECKING_DOUBT = N_("Checking doubt on %(n)s scenes of %(title)s…")
LEARNT = N_("Learnt %(title)s from %(n)s crops in %(s)s s. Choose it for a session in its settings.")
IMPROVED = N_("%(title)s improved from %(n)s corrections: version %(version)s is in use.")
STOPPED = N_("Learning %(title)s stopped: %(why)s")
UNEXPECTED = N_("%(error)s (the server's log has the details); try again")


@dataclass(frozen=True)
class JobStatus:
    """What the page's progress bar shows: the job, its state, its step and how far, what it made or why it failed.

    ``step`` is the learner's step (``"photos"``, ``"learning"``, ``"calibration"``, see
    :class:`vision.training.fit.enrol.Progress`), ``fraction`` how much of it is done and ``share``
    how much of the whole job; ``epoch`` of ``epochs`` counts the step's units (photos read,
    rounds learnt of ``rounds``, scenes read of ``scenes``: doubt is checked on them after the
    rounds, none when ``scenes`` is 0). ``error`` is why a job failed (a :class:`scorer.Message`
    when the learner gave one). ``result`` holds the figures of a finished job (``crops`` and
    ``seconds`` of an enrolment; ``corrections`` and ``version`` of an improvement);
    :func:`status_message` words it all in the page's language.

    >>> JobStatus("enrol", "grandma", "Grandma", "running", step="learning", share=0.5).progress
    0.51
    """

    kind: str = ""
    deck: str = ""
    title: str = ""
    state: str = "idle"
    epoch: int = 0
    epochs: int = 0
    error: str = ""
    result: Mapping[str, Any] = field(default_factory=dict)
    rounds: int = 0
    scenes: int = 0
    step: str = ""
    fraction: float = 0.0
    share: float = 0.0

    @property
    def progress(self) -> float:
        """0 to 1: a sliver once the job runs, then the learner's share of the whole job done."""
        if self.state == "done":
            return 1.0
        if self.state != "running":
            return 0.0
        return round(0.02 + 0.98 * self.share, 3)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "result": dict(self.result), "error": translate(self.error),
                "progress": self.progress, "message": status_message(self)}


def status_message(status: JobStatus) -> str:
    """The job's state in words, in the request's language: a running job's step and how much of it is done
    (a failure says why, in the learner's words).

    >>> status_message(JobStatus("improve", "x", "Grandma", "done", result={"corrections": 3, "version": 2}))
    'Grandma improved from 3 corrections: version 2 is in use.'
    >>> status_message(JobStatus("enrol", "x", "Grandma", "running", step="calibration", fraction=0.4, scenes=100))
    'Checking doubt on 100 scenes of Grandma… 40%'
    >>> status_message(JobStatus("enrol", "x", "Grandma", "running", step="learning", fraction=0.26, epoch=3,
    ...                          epochs=12))
    'Learning Grandma: round 3 of 12 · 26%'
    """
    title: str = Message(status.title) if status.deck == STANDARD_CORRECTED else status.title
    if status.state == "failed":
        message = Message(STOPPED, title=title, why=status.error)
    elif status.state == "done" and status.kind == "enrol":
        message = Message(LEARNT, title=title, n=status.result.get("crops", 0), s=status.result.get("seconds", 0))
    elif status.state == "done":
        message = Message(IMPROVED, title=title, n=status.result.get("corrections", 0),
                          version=status.result.get("version", ""))
    elif status.state == "running":
        percent = f"{round(100 * status.fraction)}%"
        if status.step == "calibration":
            return f"{translate(Message(CHECKING_DOUBT, title=title, n=status.scenes))} {percent}"
        if status.step == "learning":
            words = translate(Message(LEARNING, title=title, n=min(status.epoch, status.epochs),
                                      total=status.epochs or status.rounds))
            return f"{words} · {percent}"
        return f"{translate(Message(READING, title=title))} {percent}"
    else:
        return ""
    return translate(message)


Progress = Callable[[Any], None]  # takes a vision.training.fit.enrol.Progress (the job's work imports training)


class DeckRunner:
    """The app's one background learner: :meth:`start` runs a job in a thread and returns at once.

    A second job while one runs is refused (:class:`~web.errors.Conflict`), so two taps
    on the button, or two phones, never train twice at the same time.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._status = JobStatus()
        self._thread: threading.Thread | None = None

    def status(self) -> JobStatus:
        with self._lock:
            return self._status

    def verify_free(self) -> None:
        """Raise :class:`~web.errors.Conflict` naming the running job, if one runs."""
        status = self.status()
        if status.state == "running":
            raise Conflict(_("tiplu is already learning %(title)s; wait until it is done", title=status.title))

    @contextmanager
    def held_off(self, deck: str) -> Iterator[None]:
        """No job starts while the ``with`` block changes ``deck`` outside one (removes it), and a job
        running on that deck refuses the change (:class:`~web.errors.Conflict`). Once the block is
        done, what the last job said of that deck is forgotten (the page no longer shows it)."""
        with self._lock:
            if self._status.state == "running" and self._status.deck == deck:
                raise Conflict(_("tiplu is learning %(title)s right now: remove it when that is done",
                                 title=self._status.title))
            yield
            if self._status.deck == deck:
                self._status = JobStatus()

    def _update(self, **changes: Any) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)

    def start(self, kind: str, deck: str, title: str, work: Callable[[Progress], Mapping[str, Any]], *,
              rounds: int = 0, scenes: int = 0) -> JobStatus:
        """Run ``work(progress)`` in the background; what it returns becomes the status's ``result``.

        ``rounds`` and ``scenes`` are the schedule the learner follows (rounds of learning,
        scenes doubt is checked on after them), so the page can name each step.
        """
        with self._lock:
            if self._status.state == "running":
                raise Conflict(_("tiplu is already learning %(title)s; wait until it is done",
                                 title=self._status.title))
            self._status = JobStatus(kind, deck, title, "running", rounds=rounds, scenes=scenes)

        def progress(moved: Any) -> None:
            self._update(step=moved.step, fraction=moved.fraction, share=moved.share, epoch=moved.done,
                         epochs=moved.total)

        def run() -> None:
            try:
                result = work(progress)
            except TipluError as error:
                self._update(state="failed", error=error.message)
            except Exception as error:  # noqa: BLE001  (a failed run is shown on the page, never lost)
                log.error("deck job %s %s failed:\n%s", kind, deck, traceback.format_exc())
                self._update(state="failed", error=Message(UNEXPECTED, error=f"{type(error).__name__}: {error}"))
            else:
                self._update(state="done", result=dict(result))

        self._thread = threading.Thread(target=run, name=f"tiplu-deck-{kind}", daemon=True)
        self._thread.start()
        return self.status()

    def wait(self, timeout: float | None = None) -> JobStatus:
        """Wait for the running job (for tests)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return self.status()


def runner(app: Flask | None = None) -> DeckRunner:
    """The app's :class:`DeckRunner`, made on first use."""
    app = app or current_app
    with _runner_lock:
        found = app.extensions.get("tiplu_decks")
        if found is None:
            found = app.extensions["tiplu_decks"] = DeckRunner()
        return found


_runner_lock = threading.Lock()


@dataclass(frozen=True)
class Schedule:
    """How the page's runs learn: epochs, crops per corner index, and the scenes doubt is recalibrated on
    (0: the base model's calibration is kept; see :func:`vision.training.fit.enrol.recalibrate`, which the job reaches
    through :mod:`vision.training.api`)."""

    epochs: int
    copies: int
    calibration_scenes: int


def schedule(app: Flask) -> Schedule:
    """The page's runs' :class:`Schedule`: ``DECK_EPOCHS``, ``DECK_COPIES``, ``DECK_CALIBRATION_SCENES``.

    A calibration setting that is not 0 or a whole number from 2 is refused
    (:class:`~web.errors.BadRequest`) before a run starts, with the message ``tiplu enrol`` gives.
    """
    from vision.enrolment import CALIBRATION_SCENES, EnrolError, verify_calibration_scenes

    configured = app.config.get("DECK_CALIBRATION_SCENES")
    try:
        scenes = CALIBRATION_SCENES if configured is None else int(configured)
        verify_calibration_scenes(scenes)
    except EnrolError as error:
        raise BadRequest(f"TIPLU_DECK_CALIBRATION_SCENES: {translate(error)}") from None
    except ValueError:
        raise BadRequest(f"TIPLU_DECK_CALIBRATION_SCENES: {configured!r} is not a whole number; give 0 (keep the "
                         "base model's calibration) or at least 2") from None
    return Schedule(int(app.config.get("DECK_EPOCHS") or DEFAULT_EPOCHS),
                    int(app.config.get("DECK_COPIES") or DEFAULT_COPIES), scenes)


# --- teaching a deck -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Upload:
    """One uploaded photo of the teach form: which field (``spades`` ... ``jokers``), its file name, its bytes."""

    field: str
    filename: str
    data: bytes

    @property
    def label(self) -> str:
        """How messages name it: the file's name as the phone sent it, else the field."""
        return self.filename or _("the %(suit)s photo", suit=self.field)


def read_uploads(uploads: Sequence[Upload], *, max_bytes: int, max_pixels: int) -> list[np.ndarray]:
    """Decode and check the teach form's photos before anything is learnt; the CLI's messages when one is bad.

    Each suit photo must show 13 cards (:func:`vision.enrolment.find_cards`), the jokers
    photo 1 to 6; the same file twice (a photo chosen for two suits) is refused.
    """
    from vision.images import decode_image
    from vision.enrolment import CardsNotFound, find_cards, find_jokers

    by_field = {u.field: u for u in uploads}
    missing = [suit for suit in SUITS if suit not in by_field]
    if missing:
        raise BadRequest(_("choose a photo for each suit; missing: %(missing)s", missing=", ".join(
            _(suit) for suit in missing)))
    seen: dict[bytes, str] = {}
    images = []
    for upload in uploads:
        if upload.data in seen:
            raise BadRequest(_("%(photo)s was chosen for both %(first)s and %(second)s: photograph each suit "
                               "on its own", photo=upload.label, first=_(seen[upload.data]), second=_(upload.field)))
        seen[upload.data] = upload.field
        try:
            image = decode_image(upload.data, max_bytes=max_bytes, max_pixels=max_pixels)
        except TipluError as error:
            raise BadRequest(f"{upload.label}: {translate(error)}") from None
        try:
            if upload.field == JOKERS:
                find_jokers(image, upload.label)
            else:
                find_cards(image, "SHDC"[SUITS.index(upload.field)], upload.label)
        except CardsNotFound as error:
            show_failed_photo(image, error)
            raise
        images.append(image)
    return images


#: The longest side (px) of a refused photo as the page shows it, with the cards found outlined.
FAILED_PHOTO_SIDE = 800


def show_failed_photo(image: np.ndarray, error: Any) -> None:
    """Let the Decks page show the photo a teach form's check refused, with the cards found outlined
    (:func:`vision.enrolment.annotated`), inline: nothing is written to the instance folder for it."""
    import base64

    from flask import g, has_request_context
    from vision.enrolment import annotated

    if not has_request_context():
        return
    ok, jpeg = cv2.imencode(".jpg", annotated(image, error.search, FAILED_PHOTO_SIDE), [cv2.IMWRITE_JPEG_QUALITY, 80])
    if ok:
        g.deck_failed_photo = "data:image/jpeg;base64," + base64.b64encode(jpeg.tobytes()).decode("ascii")
        g.deck_failed_name = error.photo


def teach(title: str, uploads: Sequence[Upload], app: Flask | None = None) -> JobStatus:
    """Check the photos, keep them in a new deck folder and start learning the deck in the background.

    Raises :class:`~web.errors.BadRequest` (a bad photo, a title taken or missing) or
    :class:`~web.errors.Conflict` (a job already running) before anything is kept.
    """
    from vision.enrolment import EnrolError, missing_train_extra

    app = app or current_app
    title = " ".join(title.split())[:80]
    if not title:
        raise BadRequest(_("name the deck, e.g. \"Grandma's cards\""))
    missing = missing_train_extra()
    if missing:
        raise BadRequest(missing)
    name = deck_name_for(title)
    folder = decks_folder(app) / name
    if folder.exists():
        raise BadRequest(_("a deck called %(name)s is already here: give this one another name", name=title))
    max_bytes = int(app.config.get("MAX_CONTENT_LENGTH") or 16 * 1024 * 1024)
    max_pixels = int(app.config.get("MAX_PHOTO_PIXELS") or 40_000_000)
    plan = schedule(app)
    try:
        images = read_uploads(uploads, max_bytes=max_bytes, max_pixels=max_pixels)
    except EnrolError as error:
        raise BadRequest(translate(error)) from None
    job = runner(app)
    job.verify_free()
    (folder / "photos").mkdir(parents=True)
    paths = []
    for upload, image in zip(uploads, images):
        paths.append(folder / "photos" / f"{upload.field}.jpg")
        cv2.imwrite(str(paths[-1]), image, [cv2.IMWRITE_JPEG_QUALITY, 92])
    suits = [p for p in paths if p.stem in SUITS]
    jokers = next((p for p in paths if p.stem == JOKERS), None)
    base = base_model(app)

    def work(progress: Progress) -> Mapping[str, Any]:
        from vision.training.api import enrol

        built = folder / ".new"
        try:
            done = enrol(sorted(suits, key=lambda p: SUITS.index(p.stem)), built, jokers=jokers, base=base,
                         design=title, epochs=plan.epochs, copies=plan.copies,
                         calibration_scenes=plan.calibration_scenes, progress=progress)
            switch_version(folder, title, ENROLLED, built)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return {"crops": done.crops, "seconds": round(done.seconds)}

    from vision.training.api import tuned_networks

    try:
        return job.start("enrol", name, title, work, rounds=plan.epochs * tuned_networks(base),
                         scenes=plan.calibration_scenes)
    except Conflict:
        shutil.rmtree(folder, ignore_errors=True)
        raise


# --- improving a deck from corrections -------------------------------------------------------------------

def improve(name: str, corrections: Sequence[tuple[Path, str]], cards: int, app: Flask | None = None) -> JobStatus:
    """Start fine-tuning deck ``name`` (``standard`` for the shipped model) on kept corrections.

    ``corrections`` are (crop file, right card), of ``cards`` corrected cards. For the standard deck a copy,
    "standard + corrections" (:data:`STANDARD_CORRECTED`), is made or improved in the
    instance folder; ``models/`` is never written.
    """
    from vision.enrolment import missing_train_extra

    app = app or current_app
    missing = missing_train_extra()
    if missing:
        raise BadRequest(missing)
    folder_of_decks = decks_folder(app)
    if name in (STANDARD_CORRECTED, "standard"):
        name = STANDARD_CORRECTED
        deck = find_deck(folder_of_decks, name)
        title = STANDARD_CORRECTED_TITLE
        kind = CORRECTED
        start = deck.model_folder if deck is not None else base_model(app)
    else:
        deck = find_deck(folder_of_decks, name)
        if deck is None:
            raise BadRequest(_(NO_SUCH_DECK, name=name))
        title, kind, start = deck.title, deck.kind, deck.model_folder
    if not corrections:
        raise BadRequest(_("No corrections are kept for %(title)s yet: confirm or change cards in a photo review "
                           "and save the round first.", title=title))
    folder = folder_of_decks / name
    suits = deck.photos if deck is not None else ()
    jokers = deck.jokers if deck is not None else None
    plan = schedule(app)

    def work(progress: Progress) -> Mapping[str, Any]:
        from vision.training.api import improve as fine_tune

        crops, names = [], []
        for path, card in corrections:
            crop = cv2.imread(str(path))
            if crop is not None:
                crops.append(crop)
                names.append(card)
        folder.mkdir(parents=True, exist_ok=True)
        built = folder / ".new"
        shutil.rmtree(built, ignore_errors=True)
        try:
            done = fine_tune(start, built, crops, names, suit_photos=suits, jokers=jokers, epochs=plan.epochs,
                             copies=plan.copies, calibration_scenes=plan.calibration_scenes, progress=progress)
            new = switch_version(folder, title, kind, built)
        except BaseException:
            shutil.rmtree(built, ignore_errors=True)
            raise
        return {"corrections": cards, "crops": done.corrected_crops, "version": new.current[1:]}

    from vision.training.api import tuned_networks

    return runner(app).start("improve", name, title, work, rounds=plan.epochs * tuned_networks(start),
                             scenes=plan.calibration_scenes if suits else 0)


# --- removing a deck ---------------------------------------------------------------------------------------

def remove_deck(name: str, app: Flask | None = None) -> Deck:
    """Retire deck ``name``: its folder (photos and every version) is renamed to a trash name in one
    step, then deleted; returns the deck that was removed.

    Sessions that chose it read their photos with the standard deck from then on, with the
    notice :func:`model_for` gives; the corrections kept with their photos stay in the
    ledger. Refused while a job learns this deck (:class:`~web.errors.Conflict`, 409); if the
    rename fails the deck is untouched and still in use (:class:`~web.errors.Unavailable`).
    Trash left by an earlier removal that could not finish deleting is deleted first.
    """
    from web.photos import forget_detectors

    app = app or current_app
    deck = deck_named(name, app)
    folder = deck.folder.parent
    for stale in folder.glob(f"{TRASH_PREFIX}*"):
        shutil.rmtree(stale, ignore_errors=True)
    trash = folder / f"{TRASH_PREFIX}{deck.name}-{uuid.uuid4().hex[:8]}"
    with runner(app).held_off(deck.name):
        try:
            os.replace(deck.folder, trash)
        except OSError as error:
            log.error("removing deck %s: %s", deck.name, error)
            raise Unavailable(_("%(title)s could not be removed (%(why)s); it is still here and in use. "
                                "Try again, or check the server's disk.", title=deck.shown_title,
                                why=error.strerror or error)) from None
    shutil.rmtree(trash, ignore_errors=True)
    forget_detectors(deck.folder)
    return deck
