"""The shape of the code: layers that depend one way and modules without import circles.

Read from the source (``ast``), so a late import inside a function counts too, and so does an
import under ``if TYPE_CHECKING:`` (type hints) for circles: a circle closed for the type checker
is still a circle a reader has to follow. Only a module's script block does not count for the
layers; no training module has one that reaches the CLI. ``web`` may use ``vision`` and ``scorer``; ``vision`` may use ``scorer``; ``scorer`` uses
nothing else of tiplu and no I/O library; runtime ``vision`` never reaches into
``vision.training``; and ``web`` reaches training only through ``vision.training.api``,
the one documented interface (the Decks page's jobs and the ``tiplu`` training commands).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import TypeGuard

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scorer", "vision", "web")
#: What each layer may import from tiplu (prefixes).
ALLOWED = {"scorer": ("scorer",), "vision": ("vision", "scorer"), "web": ("web", "vision", "scorer")}
NO_IO_IN_SCORER = ("flask", "cv2", "sqlite3", "sqlite_utils", "numpy", "onnxruntime", "socket", "os", "pathlib")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_script_block(node: ast.stmt) -> bool:
    """``if __name__ == "__main__":``, where ``python -m vision.training.X`` hands over to the ``tiplu`` CLI."""
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__")


def is_type_checking_block(node: ast.AST) -> TypeGuard[ast.If]:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for type hints, never run."""
    return isinstance(node, ast.If) and (
        (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
        or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING"))


def import_nodes(path: Path, *, type_checking: bool = True) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of ``path``, at module level or inside a function or class, but those
    of the script block; with ``type_checking=False`` not those under ``if TYPE_CHECKING:`` either
    (its ``else:`` runs, so it counts)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            if node is tree and isinstance(child, ast.stmt) and is_script_block(child):
                continue
            if not type_checking and is_type_checking_block(child):
                for other in child.orelse:
                    visit(other)
                continue
            visit(child)

    visit(tree)
    return found


def imports_of(path: Path, *, type_checking: bool = True) -> set[str]:
    """Every module ``path`` imports, absolute names, wherever the import stands (but the script block)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in import_nodes(path, type_checking=type_checking):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


SOURCES = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}
#: The one module of ``vision.training`` that ``web`` may import (see its docstring).
TRAINING_INTERFACE = "vision.training.api"


def tiplu_imports(module: str) -> set[str]:
    """The tiplu modules that ``module`` imports: at module level, inside functions (a late import is still
    a dependency, and still closes a circle) and under ``if TYPE_CHECKING:`` (a circle for the reader)."""
    names = imports_of(SOURCES[module], type_checking=True)
    return {n for n in names if n in SOURCES and n != module}


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_each_module_imports_only_its_own_layer_and_below(module: str) -> None:
    layer = module.split(".")[0]
    ours = {name for name in imports_of(SOURCES[module]) if name.split(".")[0] in PACKAGES}
    assert all(name.startswith(ALLOWED[layer]) for name in ours), sorted(ours)
    if layer == "vision" and not module.startswith("vision.training"):
        assert not any(name.startswith("vision.training") for name in ours), "runtime vision imports training code"
    if layer == "web":
        training = sorted(name for name in ours if name.startswith("vision.training")
                          and name != TRAINING_INTERFACE and not name.startswith(TRAINING_INTERFACE + "."))
        assert not training, f"web reaches training only through {TRAINING_INTERFACE}: {training}"
    if layer == "scorer":
        assert not {name.split(".")[0] for name in imports_of(SOURCES[module])} & set(NO_IO_IN_SCORER)


def test_no_import_circles() -> None:
    graph = {module: tiplu_imports(module) for module in SOURCES}
    circles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target):], target])
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # a package's __init__ re-exporting its submodules is not a circle of behaviour
    real = [c for c in circles if not any(c[i + 1].startswith(c[i] + ".") and SOURCES[c[i]].name == "__init__.py"
                                          for i in range(len(c) - 1))]
    assert real == []


def test_no_training_module_imports_web_script_blocks_included() -> None:
    """Training never points back up at the CLI or the app, not even from ``if __name__ == "__main__":``."""
    found = []
    for module, path in SOURCES.items():
        if module.startswith("vision.training"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                found += [f"{module}: {n}" for n in names if n.split(".")[0] == "web"]
    assert found == []


def yolo_train_calls(tree: ast.AST) -> list[int]:
    """The lines that call Ultralytics' ``YOLO.train``: ``.train(...)`` on a name bound to ``YOLO(...)``, or on
    ``YOLO(...)`` itself (a torch network's ``net.train()`` is no such call)."""
    def makes_yolo(node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "YOLO"

    bound = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign) and makes_yolo(node.value)
             for target in node.targets if isinstance(target, ast.Name)}
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "train"
            and (makes_yolo(node.func.value) or (isinstance(node.func.value, ast.Name) and node.func.value.id in bound))]


def test_one_recipe_calls_yolo_train() -> None:
    """Stage 1 has one recipe (:func:`vision.training.fit.corners.train_corners`): ``tiplu train corners``, a
    GPU run, the campaign and enrolment all reach Ultralytics' training through it."""
    calls = [(module, line) for module, path in SOURCES.items()
             for line in yolo_train_calls(ast.parse(path.read_text(encoding="utf-8")))]
    assert [module for module, _ in calls] == ["vision.training.fit.corners"], calls
    assert yolo_train_calls(ast.parse("y = YOLO('a')\ny.train(data='d')\nnet.train()\nYOLO('b').train()")) == [2, 4]


def test_the_training_interface_lists_what_it_offers() -> None:
    """``vision.training.api``'s docstring is its contract: every name it offers is named there."""
    from vision.training import api

    assert api.__doc__ is not None
    unnamed = [name for name in api.__all__ if f"`{name}`" not in api.__doc__]
    assert not unnamed, f"name these in vision.training.api's docstring: {unnamed}"
    offered = {name for name in vars(api) if not name.startswith(("_", "@")) and name != "annotations"}
    assert set(api.__all__) == offered, "every name vision.training.api imports is in its __all__"


def test_the_app_loads_no_training_until_a_job_runs() -> None:
    """The app with every page (and the Decks page's checks) imports neither training nor torch."""
    code = ("import sys; from web.app import create_app; import web.decks, web.views, vision.enrolment\n"
            "create_app({'TESTING': True, 'DATABASE': ':memory:'})\n"
            "print(sorted(m for m in sys.modules if m.startswith('vision.training') or m.split('.')[0] in "
            "('torch', 'ultralytics', 'onnx')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_browser_tests_wait_on_functions_not_expressions() -> None:
    """Playwright re-``eval``s a plain expression given to ``wait_for_function`` on every poll,
    which the app's Content-Security-Policy (``script-src 'self'``) refuses; a function is
    evaluated once, through the debugger, and then called. So a wait that is not already true
    at its first check fails only on a slow machine, as it did in CI."""
    plain = []
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "wait_for_function" and node.args
                    and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                    and not node.args[0].value.lstrip().startswith(("(", "function", "async"))):
                plain.append(f"{path.name}:{node.lineno}")
    assert not plain, f"write these waits as '() => ...': {plain}"
