"""Run a command module (one with ``add_arguments(parser)`` and ``run(args)``).

The same module serves ``python -m vision.training.generate ...`` and ``tiplu generate ...``.

>>> import vision.training.generate
>>> run_command(vision.training.generate, ["--help"])  # doctest: +SKIP
"""

from __future__ import annotations

import argparse
from types import ModuleType
from typing import Sequence


def run_command(module: ModuleType, argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Parse ``argv`` with the module's arguments and return its ``run`` exit code."""
    name = module.__spec__.name if module.__spec__ else module.__name__
    parser = argparse.ArgumentParser(prog=prog or f"python -m {name}",
                                     description=(module.__doc__ or "").strip().split("\n")[0])
    module.add_arguments(parser)
    return int(module.run(parser.parse_args(None if argv is None else list(argv))) or 0)
