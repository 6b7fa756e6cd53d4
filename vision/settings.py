"""Every setting of a model folder's ``model.json``, typed, with the value tiplu ships, explained once.

``model.json`` has three parts: the **settings** (its top-level keys, :class:`ReaderSettings`:
how the reader looks at a photo), the fitted ``"calibration"`` (:mod:`vision.calibration`: when a
card is doubtful, which faint corners count, and the fingerprint of what it was fitted on) and the
measured ``"metrics"`` (the model card's figures; nothing reads them at run time). Its
``"schema"`` says which spelling it uses; :func:`upgrade` reads every older folder (the shipped
models before schema 2, enrolled decks, exported candidates), where a missing key meant what
:data:`BEFORE_SCHEMA_2` says, not what tiplu ships now.

Each stage-1 pass (:mod:`vision.passes`) is on when ``"passes"`` lists it; its own settings
are read only then.

>>> settings = read_settings_json({"schema": 2, "passes": ["base", "big"]}, "model.json")
>>> settings.passes, settings.imgsz, settings.max_imgsz
(('base', 'big'), 320, 960)
>>> read_settings_json({"imgsz": 320}, "model.json").passes      # an older folder, without the newer passes
('base',)
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from scorer import CLASS_NAMES

#: The spelling of ``model.json`` this tiplu writes.
SCHEMA = 2
#: The model folder's files.
INFO_FILE = "model.json"
CLASSES_FILE = "classes.txt"
DETECTOR_FILE = "corners.onnx"
CLASSIFIER_FILE = "corner_classifier.onnx"
ORIENTATION_FILE = "corner_orientation.onnx"
#: The stage-1 passes, in the order they run (:mod:`vision.passes`).
PASS_NAMES = ("base", "views", "big", "tiles", "look_around")
#: Stage 1's other looks at the photo at ``imgsz``, by name: which axes each flips (x, y).
#: ``"mirror"``: mirrored left to right; ``"turn180"``: upside down.
VIEW_FLIPS: dict[str, tuple[bool, bool]] = {"mirror": (True, False), "turn180": (True, True)}
#: The passes a reading may skip where the looks before them show they would add nothing (``"skips"``).
SKIP_NAMES = ("views", "big")
#: Named sets of passes a caller may read with instead of a model's own (``--profile``, ``TIPLU_PROFILE``):
#: ``"full"`` every pass the model turns on; ``"fast"`` for small machines, without the passes that cost
#: most for least (``bench/bench_profiles.py`` measures each pass; the model card gives the figures).
PROFILES: dict[str, tuple[str, ...]] = {"full": PASS_NAMES, "fast": ("base", "big", "tiles")}
#: The keys of ``model.json`` that are not settings.
SECTIONS = ("schema", "calibration", "metrics")


class ModelError(ValueError):
    """The model files are missing or unusable; the message says which file to provide or what to fix."""


class SettingsError(ModelError):
    """``model.json`` holds a setting tiplu cannot use; the message names the key and what to give."""


@dataclass(frozen=True)
class ReaderSettings:
    """How the reader looks at a photo: the settings part of ``model.json``, with the values tiplu ships."""

    #: Which backend reads the folder (:data:`vision.detector.BACKENDS`).
    format: str = "tiplu-corners-v1"
    #: The stage-1 passes that run (:data:`PASS_NAMES`, in that order; ``"base"`` always).
    passes: tuple[str, ...] = PASS_NAMES
    #: Stage 1's input size (px) for the base pass and its views: close-ups and a table's big corners.
    imgsz: int = 320
    #: The largest input of the big pass (px).
    max_imgsz: int = 960
    #: The big pass reads a photo at this share of its long side (a multiple of 32, at most ``max_imgsz``).
    big_share: float = 0.75
    #: With a big pass, a corner comes from the big pass when its long side at a big input of twice
    #: ``imgsz`` is under this many px (in proportion at a bigger input), else from the base pass.
    scale_split: float = 64.0
    #: The tiles pass reads a big photo whose corners at the big pass are mostly under this many px (long side).
    tile_below: float = 18.0
    #: The views pass's looks (:data:`VIEW_FLIPS`), read in one batch with the base pass (after it where
    #: they may be skipped).
    views: tuple[str, ...] = ("mirror", "turn180")
    #: Passes skipped where the looks before them show they would add nothing (:data:`SKIP_NAMES`; none: every
    #: pass on reads). ``"views"``: where the big pass reads the photo and the base pass found no big corner
    #: (a table: the big pass boxes its corners, and the views keep only big ones). ``"big"``: where
    #: every box the 320-px looks found is big (the big pass would keep only small ones) and one reaches ``skip_sure``.
    skips: tuple[str, ...] = SKIP_NAMES
    #: The score one box of the 320-px looks must reach for the ``"big"`` skip: a close-up is sure to be one.
    skip_sure: float = 0.5
    #: The look-around pass's windows about each card read: their side in index sides.
    look_window: float = 8.0
    #: The input size (px) at which the look-around pass reads each window.
    look_size: int = 320
    #: Boxes overlapping more than this IoU are one corner seen twice (class-agnostic NMS).
    nms_iou: float = 0.6
    #: Stage 2's crop of each box (w x h px) and the margin it adds on each side (share of the box).
    crop_w: int = 48
    crop_h: int = 72
    crop_margin: float = 0.15
    #: Turns (degrees) at which a squarish box is also cut and named; the surest view names it.
    crop_turns: tuple[float, ...] = (0.0, 45.0, -45.0)
    #: Stage 2's networks (files in the folder, the first :data:`CLASSIFIER_FILE`); their probabilities
    #: are averaged.
    classifiers: tuple[str, ...] = (CLASSIFIER_FILE, "corner_classifier_2.onnx")
    #: The network that says which way each index faces (a file in the folder); None: pairing by the crops alone.
    orientation: str | None = ORIENTATION_FILE
    #: The card names of the classifier's outputs, in order (the folder's ``classes.txt``).
    classes: tuple[str, ...] = field(default=tuple(CLASS_NAMES))

    def on(self, name: str) -> bool:
        """Does the pass ``name`` run?

        >>> ReaderSettings(passes=("base",)).on("views")
        False
        """
        return name in self.passes

    def skips_pass(self, name: str) -> bool:
        """May the pass ``name`` be skipped where the looks before it show it would add nothing?

        >>> ReaderSettings().skips_pass("big"), ReaderSettings(skips=()).skips_pass("big")
        (True, False)
        """
        return name in self.skips

    def with_profile(self, profile: str) -> ReaderSettings:
        """These settings reading only the passes of :data:`PROFILES`' ``profile`` that they turn on.

        >>> ReaderSettings().with_profile("fast").passes
        ('base', 'big', 'tiles')
        >>> ReaderSettings().with_profile("slow")
        Traceback (most recent call last):
        ...
        vision.settings.SettingsError: profile 'slow': give one of full, fast
        """
        if profile not in PROFILES:
            raise SettingsError(f"profile {profile!r}: give one of {', '.join(PROFILES)}")
        return dataclasses.replace(self, passes=tuple(p for p in self.passes if p in PROFILES[profile]))

    def to_json(self) -> dict[str, Any]:
        """The settings as ``model.json`` spells them (schema :data:`SCHEMA`; ``classes`` live in ``classes.txt``).

        >>> ReaderSettings().to_json()["schema"], ReaderSettings().to_json()["views"]
        (2, ['mirror', 'turn180'])
        """
        out: dict[str, Any] = {"schema": SCHEMA}
        for f in fields(self):
            if f.name != "classes":
                value = getattr(self, f.name)
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out


#: What a ``model.json`` written before schema 2 meant by a missing key: its folder was read as
#: these say (one view, no big pass unless ``max_imgsz`` says so, no tiles, no windows, no pass
#: skipped, upright 32 x 48 crops of one classifier, no orientation network).
BEFORE_SCHEMA_2: dict[str, Any] = {"big_share": 0.5, "tile_below": 0.0, "views": [], "skips": [], "look_window": 0.0,
                                   "crop_w": 32, "crop_h": 48, "crop_turns": [0.0],
                                   "classifiers": [CLASSIFIER_FILE], "orientation": None}


def upgrade(raw: Mapping[str, Any], where: str = INFO_FILE) -> dict[str, Any]:
    """``model.json`` in the spelling of schema :data:`SCHEMA`, every setting given.

    A file without ``"schema"`` (every folder written before it) gets :data:`BEFORE_SCHEMA_2` for
    its missing keys, its ``max_imgsz`` is its ``imgsz`` when absent, its ``"mirror_view": true``
    is the views ``["mirror"]``, and its passes are those its settings turn on.

    >>> old = upgrade({"imgsz": 320, "mirror_view": True, "calibration": {"faint_above": 0.1}})
    >>> old["schema"], old["views"], old["passes"], old["crop_w"], old["calibration"]
    (2, ['mirror'], ['base', 'views'], 32, {'faint_above': 0.1})
    >>> upgrade({"schema": 3})
    Traceback (most recent call last):
    ...
    vision.settings.SettingsError: model.json: schema 3 is newer than this tiplu reads (2); update tiplu
    """
    info = dict(raw)
    schema = info.get("schema", 1)
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 1:
        raise SettingsError(f"{where}: \"schema\" must be a whole number, not {schema!r}")
    if schema > SCHEMA:
        raise SettingsError(f"{where}: schema {schema} is newer than this tiplu reads ({SCHEMA}); update tiplu")
    if schema > 1 and "mirror_view" in info:
        raise SettingsError(f"{where}: \"mirror_view\" is no setting of schema {schema}; give \"views\"")
    if schema == 1:
        if "mirror_view" in info:
            if "views" in info:
                raise SettingsError(f"{where}: give \"views\" alone; \"mirror_view\" is its older spelling")
            mirror = info.pop("mirror_view")
            if not isinstance(mirror, bool):
                raise SettingsError(f"{where}: \"mirror_view\" must be true or false, not {mirror!r}")
            info["views"] = ["mirror"] if mirror else []
        info = BEFORE_SCHEMA_2 | info
        info.setdefault("max_imgsz", info.get("imgsz", ReaderSettings.imgsz))
        if "passes" not in info:
            imgsz = info.get("imgsz", ReaderSettings.imgsz)
            turned_on = {"views": bool(info["views"]), "big": _is_number(imgsz) and info["max_imgsz"] > imgsz,
                         "tiles": _positive(info["tile_below"]),
                         "look_around": _positive(info["look_window"])}
            info["passes"] = ["base"] + [name for name in PASS_NAMES[1:] if turned_on[name]]
    info["schema"] = SCHEMA
    return info


def _positive(value: Any) -> bool:
    return _is_number(value) and value > 0


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _file_name(value: Any) -> bool:
    return isinstance(value, str) and value.endswith(".onnx") and Path(value).name == value


def read_settings_json(raw: Mapping[str, Any], where: str = INFO_FILE,
                       classes: Sequence[str] | None = None) -> ReaderSettings:
    """:class:`ReaderSettings` from a ``model.json`` (any schema, :func:`upgrade`); a :class:`SettingsError`
    naming the key when one is unusable. Keys tiplu does not read (an export's ``opset``) are kept out.

    >>> read_settings_json({"schema": 2, "crop_turns": ["x"]})
    Traceback (most recent call last):
    ...
    vision.settings.SettingsError: model.json: "crop_turns" must be a list of numbers, not ['x']
    """
    info = upgrade(raw, where)
    defaults = ReaderSettings()
    values: dict[str, Any] = {}
    for f in fields(ReaderSettings):
        if f.name == "classes" or f.name not in info:
            continue
        value, default = info[f.name], getattr(defaults, f.name)
        if f.name == "orientation":
            ok = value is None or _file_name(value)
            what = f"the name of an .onnx file in the model folder ({ORIENTATION_FILE}) or null"
        elif isinstance(default, int) and not isinstance(default, bool):
            ok = _is_number(value) and float(value).is_integer() and value > 0
            what = "a whole number of px"
        elif isinstance(default, float):
            ok = _is_number(value) and value >= 0
            what = "a number, 0 or more"
        elif isinstance(default, str):
            ok = isinstance(value, str) and bool(value)
            what = "a name"
        elif f.name == "crop_turns":
            ok = isinstance(value, list) and all(_is_number(v) for v in value)
            what = "a list of numbers"
        else:
            ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
            what = "a list of names"
        if not ok:
            raise SettingsError(f"{where}: {json.dumps(f.name)} must be {what}, not {value!r}")
        if isinstance(value, list):
            value = tuple(float(v) for v in value) if f.name == "crop_turns" else tuple(value)
        elif value is not None:
            value = type(default)(value)
        values[f.name] = value
    settings = dataclasses.replace(defaults, **values)
    if classes is not None:
        settings = dataclasses.replace(settings, classes=tuple(classes))
    return check_settings(settings, where)


def check_settings(settings: ReaderSettings, where: str = INFO_FILE) -> ReaderSettings:
    """The settings, checked as a whole (the passes' names and order, views, classifiers).

    >>> check_settings(ReaderSettings(passes=("big", "base")))
    Traceback (most recent call last):
    ...
    vision.settings.SettingsError: model.json: "passes" must list passes from ['base', 'views', 'big', 'tiles', 'look_around'] in that order, "base" first, not ['big', 'base']
    """
    passes = list(settings.passes)
    if (not passes or passes[0] != "base" or not set(passes) <= set(PASS_NAMES)
            or passes != sorted(passes, key=PASS_NAMES.index) or len(set(passes)) < len(passes)):
        raise SettingsError(f"{where}: \"passes\" must list passes from {list(PASS_NAMES)} in that order, "
                            f"\"base\" first, not {passes!r}")
    views = list(settings.views)
    if not set(views) <= set(VIEW_FLIPS) or len(set(views)) < len(views):
        raise SettingsError(f"{where}: \"views\" must list distinct views from {list(VIEW_FLIPS)}, not {views!r}")
    skips = list(settings.skips)
    if not set(skips) <= set(SKIP_NAMES) or len(set(skips)) < len(skips):
        raise SettingsError(f"{where}: \"skips\" must list distinct passes from {list(SKIP_NAMES)}, not {skips!r}")
    members = list(settings.classifiers)
    if not members or not all(_file_name(m) for m in members) or members[0] != CLASSIFIER_FILE:
        raise SettingsError(f"{where}: \"classifiers\" must list .onnx file names in the model folder, "
                            f"the first being {CLASSIFIER_FILE}, not {members!r}")
    if not settings.crop_turns:
        return dataclasses.replace(settings, crop_turns=(0.0,))
    return settings


def read_model_json(folder: Path) -> dict[str, Any]:
    """The ``model.json`` of a model folder as written (any schema), ``{}`` when there is none.

    >>> from vision.detector import MODELS_DIR
    >>> read_model_json(MODELS_DIR)["format"]
    'tiplu-corners-v1'
    """
    path = folder / INFO_FILE
    if not path.is_file():
        return {}
    try:
        info = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise SettingsError(f"{path}: not readable JSON ({error}); export the model again") from None
    if not isinstance(info, dict):
        raise SettingsError(f"{path}: expected a JSON object with the model's settings")
    return info


def read_classes(folder: Path) -> tuple[str, ...]:
    """The folder's ``classes.txt`` (the classifier's card names in order), or the 53 cards."""
    path = folder / CLASSES_FILE
    if not path.is_file():
        return tuple(CLASS_NAMES)
    return tuple(c.strip() for c in path.read_text().splitlines() if c.strip())


def read_settings(folder: Path) -> ReaderSettings:
    """A model folder's settings (its ``model.json`` in any schema, its ``classes.txt``).

    >>> from vision.detector import MODELS_DIR
    >>> read_settings(MODELS_DIR) == ReaderSettings()
    True
    """
    return read_settings_json(read_model_json(folder), str(folder / INFO_FILE), read_classes(folder))


def write_settings(info: dict[str, Any], settings: ReaderSettings) -> dict[str, Any]:
    """``info`` (a ``model.json``'s object) with ``settings`` in it, in schema :data:`SCHEMA`: its
    sections and the keys that are no settings (an export's ``opset``) kept.

    >>> write_settings({"opset": 17, "mirror_view": True}, ReaderSettings(views=()))["views"]
    []
    """
    kept = {k: v for k, v in info.items() if k not in {f.name for f in fields(ReaderSettings)} and k != "mirror_view"}
    return kept | settings.to_json()


def fingerprint(parts: Mapping[str, Any]) -> str:
    """A short hash of JSON-able ``parts`` (sorted keys): equal when they are equal.

    >>> fingerprint({"a": 1, "b": [2.0]}) == fingerprint({"b": [2.0], "a": 1}), len(fingerprint({}))
    (True, 16)
    """
    text = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
