"""The versions behind a reading: Python, numpy, OpenCV and onnxruntime, and where each comes from.

Why: the arm64 check's 1e-3 agreement holds only between runs with the same numpy, OpenCV
and onnxruntime (other versions decode and resize photos a little differently), so
``tests/pi/run`` reports these for each side, and builds its x86 venv from ``--pins``: on
Trixie the Pi's venv takes numpy from apt, so ``pip freeze --local`` does not list it.
Standard library only; it runs with the Python whose packages it reports.

Example::

    python tests/pi/versions.py
    # Python 3.13.5; numpy 2.2.4 (apt), opencv-python 4.12.0.88 (venv), onnxruntime 1.23.2 (venv)
    python tests/pi/versions.py --pins
    # numpy==2.2.4 ...
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import platform
import sys
from pathlib import Path

PACKAGES = {"numpy": "numpy", "opencv-python": "cv2", "onnxruntime": "onnxruntime"}


def origin(module: str) -> str:
    """``venv`` when ``module`` is installed in this environment's own site-packages, else ``apt`` (the system's).

    >>> origin("argparse")
    'python'
    """
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return "missing"
    where = Path(spec.origin).resolve()
    if "site-packages" not in where.parts and "dist-packages" not in where.parts:
        return "python"
    return "venv" if where.is_relative_to(Path(sys.prefix).resolve()) and sys.prefix != sys.base_prefix else "apt"


def pins() -> list[str]:
    """``name==version`` for each package, as pip installs it."""
    return [f"{name}=={importlib.metadata.version(name)}" for name in PACKAGES]


def summary() -> str:
    """One line: the Python version and each package's version and origin."""
    parts = [f"{name} {importlib.metadata.version(name)} ({origin(module)})" for name, module in PACKAGES.items()]
    return f"Python {platform.python_version()}; " + ", ".join(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pins", action="store_true", help="print name==version lines for pip")
    args = parser.parse_args(argv)
    print("\n".join(pins()) if args.pins else summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
