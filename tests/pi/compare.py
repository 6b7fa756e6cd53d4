"""Compare the arm64 readings of ``tiplu detect`` with the x86 ones: the same cards, confidences within 1e-3.

Why: the Pi runs the same ONNX models through onnxruntime's and OpenCV's arm64 builds
(NEON kernels instead of AVX), under the numpy that apt's picamera2 accepts. Floating point
may differ in the last digits; a different card, or a confidence that moves by more than
1e-3, means the Pi would read the table differently from the laptop the model was checked on.

The confidence check holds against an x86 run with the same numpy, OpenCV and onnxruntime
as the Pi's venv (``tests/pi/run`` builds one): other versions decode and resize photos a
little differently (the Pi's ``opencv-python<4.12`` against x86's 5.x moved confidences by up
to 0.007 here, with the same cards). ``--cards-only`` compares with such a run: the same cards
are still required, the confidence gap is only reported.

Each file holds ``tiplu detect`` JSON lines; photos are matched by file name, so the two
runs may use different folders. ``--served`` adds ``POST /api/detect`` answers (one JSON
object per line, with ``image`` naming the photo) that must read the same as the arm64 run.

Example::

    python tests/pi/compare.py x86.jsonl arm64.jsonl --served served.jsonl
    # sample_images: 6 photos, 31 cards, the same on both; largest confidence gap 0.0002 ...
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

TOLERANCE = 1e-3


def readings(path: Path) -> dict[str, dict[str, Any]]:
    """The readings in a JSON-lines file, keyed by the photo's file name.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write('{"image": "a/b/tiplu.jpg", "cards": []}\\n\\n')
    >>> list(readings(Path(f.name)))
    ['tiplu.jpg']
    >>> os.unlink(f.name)
    """
    found: dict[str, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            reading = json.loads(line)
            found[Path(reading["image"]).name] = reading
    return found


def differences(name: str, want: dict[str, Any], got: dict[str, Any], tolerance: float | None = TOLERANCE
                ) -> tuple[list[str], float, float]:
    """What differs between two readings of one photo: (problems, largest confidence gap, largest card box gap in px).

    Cards are compared in order (the detector's order is part of its answer), and so are
    the corner detections behind them. ``tolerance=None`` leaves confidences unchecked.

    >>> a = {"cards": [{"card": "5D", "confidence": 0.6955, "box": [1, 2, 3, 4]}], "corners": []}
    >>> b = {"cards": [{"card": "5D", "confidence": 0.6951, "box": [1, 2, 3, 4.5]}], "corners": []}
    >>> differences("x.jpg", a, b)
    ([], 0.0004, 0.5)
    >>> differences("x.jpg", a, {"cards": [], "corners": []})[0]
    ["x.jpg: cards ['5D'] on x86, [] on arm64"]
    """
    problems: list[str] = []
    worst_confidence = 0.0
    worst_box = 0.0
    for key in ("cards", "corners"):
        left, right = want.get(key, []), got.get(key, [])
        names_left = [item["card"] for item in left]
        names_right = [item["card"] for item in right]
        if names_left != names_right:
            problems.append(f"{name}: {key} {names_left} on x86, {names_right} on arm64")
            continue
        for a, b in zip(left, right):
            gap = round(abs(a["confidence"] - b["confidence"]), 6)
            worst_confidence = max(worst_confidence, gap)
            if tolerance is not None and gap > tolerance:
                problems.append(f"{name}: {key} {a['card']} confidence {a['confidence']} on x86, "
                                f"{b['confidence']} on arm64 (more than {tolerance} apart)")
            if key == "cards":  # two corners of one card name and near-equal confidence may swap places
                worst_box = max([worst_box, *(abs(p - q) for p, q in zip(a["box"], b["box"]))])
    return problems, worst_confidence, round(worst_box, 3)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("x86", type=Path, help="tiplu detect JSON lines from this machine")
    parser.add_argument("arm64", type=Path, help="tiplu detect JSON lines from the arm64 root")
    parser.add_argument("--served", type=Path, help="POST /api/detect answers from the arm64 server")
    parser.add_argument("--tolerance", type=float, default=TOLERANCE, help="largest confidence gap allowed")
    parser.add_argument("--cards-only", action="store_true",
                        help="require the same cards only; report the confidence gap (x86 ran other versions)")
    args = parser.parse_args(argv)
    tolerance = None if args.cards_only else args.tolerance

    x86, arm64 = readings(args.x86), readings(args.arm64)
    problems: list[str] = []
    if not x86:
        problems.append(f"{args.x86}: no readings")
    if set(x86) != set(arm64):
        problems.append(f"photos differ: {sorted(x86)} on x86, {sorted(arm64)} on arm64")
    worst_confidence = worst_box = 0.0
    cards = 0
    for name in sorted(set(x86) & set(arm64)):
        found, confidence, box = differences(name, x86[name], arm64[name], tolerance)
        problems += found
        worst_confidence, worst_box = max(worst_confidence, confidence), max(worst_box, box)
        cards += len(x86[name].get("cards", []))
    served = readings(args.served) if args.served else {}
    if args.served and not served:
        problems.append(f"{args.served}: the server answered no reading")
    for name, reading in served.items():
        if name not in arm64:
            problems.append(f"{name}: served, but not read by tiplu detect on arm64")
            continue
        found, _confidence, _box = differences(name, arm64[name], reading, tolerance)
        problems += [f"served {line}" for line in found]

    for line in problems:
        print("DIFFERENT:", line)
    verdict = "FAIL" if problems else "PASS"
    allowed = "not checked" if tolerance is None else f"allowed {tolerance}"
    print(f"{verdict}: {len(x86)} photos, {cards} cards on x86; largest confidence gap {worst_confidence:.4f} "
          f"({allowed}), largest card box gap {worst_box:.1f} px"
          + (f"; the arm64 server read {len(served)} photo(s) the same" if served and not problems else ""))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
