"""The one door into training: what the app and the ``tiplu`` training commands may use of it.

This is the only module of :mod:`vision.training` that ``web/`` imports
(``tests/test_architecture.py`` holds it to that): the Decks page's background jobs
(teaching a deck, improving one from corrections, in :mod:`web.decks`) and the training
commands of :mod:`web.cli` (``tiplu train``, ``generate``, ``report``, ``calibrate``,
``eval-model``, ``enrol``). The rest of the package can then be rearranged
without touching the app, and anyone reading ``web/`` sees in one place what it asks of
training.

Why a door, and not a wall: learning a family's deck is the app's own feature, so the page
must start it; but training needs the ``train`` extra (torch, onnx, Ultralytics), which
``tiplu serve`` must never load. So ``web/`` imports this module only inside the functions
that train (the jobs' work, each command's module, which :mod:`web.cli` imports when that
command runs). What the page needs *before* a job starts (the 13 cards of a suit photo, the
calibration setting, whether the train extra is installed) is no training: it lives in the
runtime module :mod:`vision.enrolment`.

It offers, by use:

- **learning a deck** (:mod:`vision.training.fit.enrol`): :func:`enrol` and its result
  :class:`Enrolment`, :func:`improve` and :class:`Improvement`, their defaults
  :data:`COPIES`, :data:`EPOCHS`, :data:`REHEARSAL_COPIES`, :data:`SCENES`, :data:`TABLE_SCENES`,
  :data:`TUNED` (how many stage-2 networks are fine-tuned, :func:`tuned_networks` of a folder), and the error they
  raise, :class:`EnrolError` (from :mod:`vision.enrolment`);
- **data** (:mod:`vision.training.data`): :func:`import_real`, :func:`pack_yolo`, :func:`tile_yolo`,
  :func:`turned_copies`, :func:`generate_dataset` with :data:`CROP_CARD_PX`,
  :data:`MIN_VISIBLE`, :data:`SCENE_TYPES`, :data:`HOLDOUT_DECK`; licensed real photos of other
  cameras with their credit (:mod:`~vision.training.data.photo_import`): :func:`import_photos`, :func:`shared_source`,
  :class:`PhotoSource`, :data:`PHOTO_CAMERAS`, :data:`PHOTO_LABELS`, :data:`PHOTO_LICENCES`; the SVG decks
  (:func:`svg_deck`, :func:`installed_svg_decks`, :func:`render_deck`,
  :func:`load_svg_faces`, :func:`contact_sheet`); crops of stage 1's own boxes (:func:`hard_crops`,
  :func:`save_hard_crops`, :func:`load_hard_crops`); a family's review of labelled photos, what
  "Improve from corrections" learns from (:mod:`~vision.training.data.review`: :func:`review_folder`,
  :class:`Review`); errors :class:`DatasetError`, :class:`DeckError`,
  :class:`SceneError`;
- **the recipes** (:mod:`vision.training.fit`), one per network of :data:`NETWORKS`, their settings
  (:class:`TrainSettings`, :data:`TRAIN`, :func:`with_overrides`, :func:`setting_help`):
  :func:`train_corners`, :func:`train_names`, :func:`train_orientation`; a campaign of them from one
  resume point (:func:`campaign`, :func:`init_from_onnx`, :func:`extend_plan`, :func:`read_state`,
  :data:`RESUME_DIR` (outside the package, never committed), :data:`REAL`, :data:`STATE_KEYS`);
  model folders (:func:`export_resume_point`, :func:`average_classifiers`, :func:`ensemble_model`);
  int8 copies of a folder's networks (:mod:`~vision.training.fit.quantize`):
  :func:`quantize_model`, :data:`QUANTIZABLE`, :class:`QuantizeError`; errors :class:`TrainError`,
  :class:`OrientationError`;
- **measuring** (:mod:`vision.training.measure`): :func:`evaluate`, :func:`build_report`,
  :func:`enrolled_rows` (:mod:`~vision.training.measure.enrol_report`; :data:`TEST_DESIGNS`, :data:`TABLECLOTHS`,
  :data:`ENROL_CLOTH`; :func:`webcam_improved_rows`, :data:`WEBCAM_CORRECTIONS`), :func:`markdown_table`,
  :func:`write_report_metrics`, :data:`ANGLES`, :data:`FAR_SCENES`, :data:`WEBCAM_SCENES`, :data:`HELD_OUT_DESIGNS`, :data:`LOCATE_CONF`, :data:`MATCH_IOU`, :func:`calibrate`, :func:`write_calibration`,
  :data:`METHODS`; errors :class:`ReportError`, :class:`CalibrationSplitError`.

Importing it loads the training modules but neither torch nor Ultralytics: those are
imported by the functions that need them.
"""

from __future__ import annotations

from vision.enrolment import EnrolError
from vision.training.data.dataset import DatasetError, import_real, pack_yolo, tile_yolo
from vision.training.data.decks import (HOLDOUT_DECK, DeckError, contact_sheet, installed_svg_decks, load_svg_faces,
                                        render_deck, svg_deck)
from vision.training.data.enrol_photos import TABLECLOTHS, TEST_DESIGNS
from vision.training.data.generate import generate_dataset
from vision.training.data.hard_crops import hard_crops, load_hard_crops, save_hard_crops
from vision.training.data.photo_import import CAMERAS as PHOTO_CAMERAS
from vision.training.data.photo_import import LABEL_KINDS as PHOTO_LABELS
from vision.training.data.photo_import import LICENCES as PHOTO_LICENCES
from vision.training.data.photo_import import Source as PhotoSource
from vision.training.data.photo_import import import_photos, shared_source
from vision.training.data.review import Review, review_folder
from vision.training.data.scenes import CROP_CARD_PX, MIN_VISIBLE, SCENE_TYPES, SceneError
from vision.training.data.turned import turned_copies
from vision.training.fit.campaign import campaign, init_from_onnx
from vision.training.fit.corners import train_corners
from vision.training.fit.enrol import (COPIES, EPOCHS, REHEARSAL_COPIES, SCENES, TABLE_SCENES, TUNED, Enrolment,
                                       Improvement, enrol, improve, tuned_networks)
from vision.training.fit.export import ensemble_model, export_resume_point
from vision.training.fit.names import average_classifiers, train_names
from vision.training.fit.orientation import OrientationError, train_orientation
from vision.training.fit.quantize import NETWORKS as QUANTIZABLE
from vision.training.fit.quantize import QuantizeError, quantize_model
from vision.training.fit.resume import STATE_KEYS, extend_plan, read_state
from vision.training.fit.settings import (NETWORKS, REAL, RESUME_DIR, TRAIN, TrainError, TrainSettings, setting_help,
                                          with_overrides)
from vision.training.measure.calibrate import METHODS, CalibrationSplitError, calibrate, write_calibration
from vision.training.measure.enrol_report import ENROL_CLOTH, WEBCAM_CORRECTIONS, enrolled_rows, webcam_improved_rows
from vision.training.measure.evaluate import LOCATE_CONF, MATCH_IOU, evaluate
from vision.training.measure.report import (ANGLES, FAR_SCENES, HELD_OUT_DESIGNS, WEBCAM_SCENES, ReportError,
                                            build_report, markdown_table, write_report_metrics)

__all__ = [
    # learning a deck
    "enrol", "Enrolment", "improve", "Improvement", "COPIES", "EPOCHS", "REHEARSAL_COPIES", "SCENES", "TABLE_SCENES",
    "TUNED", "tuned_networks", "EnrolError",
    # data
    "import_real", "pack_yolo", "tile_yolo", "turned_copies", "generate_dataset", "CROP_CARD_PX", "MIN_VISIBLE",
    "SCENE_TYPES", "HOLDOUT_DECK", "svg_deck", "installed_svg_decks", "render_deck", "load_svg_faces",
    "contact_sheet", "DatasetError", "DeckError", "SceneError", "import_photos", "shared_source", "PhotoSource",
    "PHOTO_CAMERAS", "PHOTO_LABELS", "PHOTO_LICENCES", "hard_crops", "save_hard_crops", "load_hard_crops", "Review",
    "review_folder",
    # the recipes
    "NETWORKS", "TrainSettings", "TRAIN", "with_overrides", "setting_help", "train_corners", "train_names",
    "train_orientation", "campaign", "init_from_onnx", "extend_plan", "read_state", "RESUME_DIR", "REAL",
    "STATE_KEYS", "export_resume_point", "average_classifiers", "ensemble_model", "TrainError", "OrientationError",
    "quantize_model", "QUANTIZABLE", "QuantizeError",
    # measuring
    "evaluate", "build_report", "enrolled_rows", "webcam_improved_rows", "WEBCAM_CORRECTIONS", "TEST_DESIGNS",
    "TABLECLOTHS", "ENROL_CLOTH", "markdown_table", "write_report_metrics", "ANGLES", "FAR_SCENES", "WEBCAM_SCENES",
    "HELD_OUT_DESIGNS", "LOCATE_CONF", "MATCH_IOU", "calibrate", "write_calibration", "METHODS", "ReportError", "CalibrationSplitError",
]
