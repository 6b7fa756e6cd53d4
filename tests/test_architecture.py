"""The shape of the code: layers that depend one way and modules without import circles.

Read from the source (``ast``), so a late import inside a function counts too.
``web`` may use ``vision`` and ``scorer``; ``vision`` may use ``scorer``; ``scorer`` uses
nothing else of tiplu and no I/O library; runtime ``vision`` never reaches into
``vision.training``.
"""

from __future__ import annotations

import ast
from pathlib import Path

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


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, absolute names, wherever the import stands (but the script block)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tree.body = [node for node in tree.body if not is_script_block(node)]
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


SOURCES = {module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))}


def tiplu_imports(module: str) -> set[str]:
    """The tiplu modules that ``module`` imports at module level (only those can form a circle)."""
    tree = ast.parse(SOURCES[module].read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            continue
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {n for n in names if n in SOURCES and n != module}


@pytest.mark.parametrize("module", sorted(SOURCES))
def test_each_module_imports_only_its_own_layer_and_below(module: str) -> None:
    layer = module.split(".")[0]
    ours = {name for name in imports_of(SOURCES[module]) if name.split(".")[0] in PACKAGES}
    assert all(name.startswith(ALLOWED[layer]) for name in ours), sorted(ours)
    if layer == "vision" and not module.startswith("vision.training"):
        assert not any(name.startswith("vision.training") for name in ours), "runtime vision imports training code"
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
