"""The camera's readings kept as they are: ``tiplu detect``'s JSON for fixed photos, compared with
the readings recorded in ``tests/data/golden/readings.json``.

A change to the reader (its passes, naming, pairing, layout or doubts) that changes a card, a
confidence by more than 1e-4, a box, a group or a doubt fails here. When a change of reading is
meant (a new model, a fix), record the readings again and say so in the commit:
``TIPLU_WRITE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden_reading.py``.

The photos: the committed samples, the committed real photos (``tests/data/real_val``) and whole
tables of the two held-out designs rendered from the report's seeds (:func:`vision.training.measure.report.table_scenes`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from vision.detector import load_detector
from vision.images import read_image
from vision.pipeline import read_photo

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "data" / "golden" / "readings.json"
#: Tables of each held-out design, rendered from the report's seed 0 (declared, maal spread, tunnela in
#: turn), and far tables (a 12-megapixel photo, read in tiles too).
TABLES = 6
FAR_TABLES = 1
TOLERANCE = 1e-4


def golden_photos() -> Iterator[tuple[str, np.ndarray]]:
    """(name, BGR photo) of every photo the golden readings cover."""
    for path in sorted((ROOT / "sample_images").glob("*.jpg")):
        yield f"sample_images/{path.name}", read_image(path)
    for path in sorted((ROOT / "tests" / "data" / "real_val" / "images").iterdir()):
        yield f"real_val/{path.name}", read_image(path)
    from vision.training.measure.report import FAR, HELD_OUT_DESIGNS, table_scenes
    for design in HELD_OUT_DESIGNS:
        for k, (image, _) in enumerate(table_scenes(design, TABLES, 0)):
            yield f"table/{design}/{k}", image
        for k, (image, _) in enumerate(table_scenes(design, FAR_TABLES, 0, framing=FAR)):
            yield f"far/{design}/{k}", image


def readings() -> dict[str, Any]:
    """Each golden photo's reading as ``tiplu detect`` prints it (JSON types)."""
    detector = load_detector()
    return {name: json.loads(json.dumps(read_photo(image, detector, name=name).to_dict()))
            for name, image in golden_photos()}


def differences(expected: Any, got: Any, where: str = "") -> list[str]:
    """Where ``got`` differs from ``expected``: numbers beyond :data:`TOLERANCE`, anything else at all.

    >>> differences({"a": [1.0, "x"]}, {"a": [1.00001, "x"]}), differences({"a": 1}, {"a": 2})
    ([], ['.a: 1 != 2'])
    >>> differences({"a": 1}, {"a": 1, "b": 0})
    [": keys ['a'] != ['a', 'b']"]
    """
    if isinstance(expected, dict) and isinstance(got, dict):
        if sorted(expected) != sorted(got):
            return [f"{where}: keys {sorted(expected)} != {sorted(got)}"]
        return [d for key in expected for d in differences(expected[key], got[key], f"{where}.{key}")]
    if isinstance(expected, list) and isinstance(got, list):
        if len(expected) != len(got):
            return [f"{where}: {len(expected)} items != {len(got)}: {expected!r:.300} != {got!r:.300}"]
        return [d for k, (a, b) in enumerate(zip(expected, got)) for d in differences(a, b, f"{where}[{k}]")]
    numbers = (int, float)
    if (isinstance(expected, numbers) and isinstance(got, numbers) and not isinstance(expected, bool)
            and not isinstance(got, bool)):
        return [] if math.isclose(expected, got, rel_tol=0, abs_tol=TOLERANCE) else [f"{where}: {expected} != {got}"]
    return [] if expected == got else [f"{where}: {expected!r} != {got!r}"]


@pytest.fixture(scope="module")
def current() -> dict[str, Any]:
    pytest.importorskip("vision.training.data.scenes")
    got = readings()
    if os.environ.get("TIPLU_WRITE_GOLDEN"):
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n")
    return got


def test_the_golden_photos_are_all_there(current: dict[str, Any]) -> None:
    expected = json.loads(GOLDEN.read_text())
    assert sorted(current) == sorted(expected)
    assert sum(len(r["cards"]) for r in expected.values()) > 200
    assert any(r["doubts"] for r in expected.values())


@pytest.mark.parametrize("name", sorted(json.loads(GOLDEN.read_text())) if GOLDEN.is_file() else [])
def test_a_photo_reads_as_recorded(name: str, current: dict[str, Any]) -> None:
    expected = json.loads(GOLDEN.read_text())[name]
    assert differences(expected, current[name]) == []
