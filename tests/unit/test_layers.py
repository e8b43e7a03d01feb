"""The package's shape, as docs/architecture.md states it: each package imports only the
layers below it, and no module imports another that imports it back, not even under
``TYPE_CHECKING``. Read from the source (ast), so a new import that breaks the shape fails
here in seconds."""

from __future__ import annotations

import ast
from pathlib import Path

from repository import PACKAGE

# package -> the packages it may import (besides itself and the package root's __version__)
ALLOWED = {
    "notebook": set(),
    "schema": set(),
    "runner": {"schema", "notebook"},
    "paths": {"schema", "notebook"},
    "processes": {"schema", "runner", "notebook"},
    "analysis": {"schema", "paths", "runner", "notebook"},
    "formats": {"schema", "analysis", "notebook"},
    "job": {"schema", "paths", "processes", "analysis", "runner", "notebook"},
    "settings": {"schema", "analysis", "job", "notebook"},
    "lsp": {"schema", "paths", "processes", "analysis", "formats", "job", "runner", "settings", "notebook"},
}
TOP = {"__init__", "__main__", "cli", "cli_args", "entry", "magic"}  # the entry points: anything


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> the package's modules (or packages) it imports, ``TYPE_CHECKING`` included."""
    out: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = _module(path)
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = ".".join(
                        here[: len(here) - node.level + 1] + ([node.module] if node.module else [])
                    )
                else:
                    base = node.module or ""
                if not base.startswith("bottleneck_lsp"):
                    continue
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    as_file = PACKAGE.parent / (full.replace(".", "/") + ".py")
                    as_folder = PACKAGE.parent / full.replace(".", "/")
                    found.add(full if as_file.exists() or as_folder.is_dir() else base)
            elif isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("bottleneck_lsp")}
        out[name] = found
    return out


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_each_package_imports_only_the_layers_below_it() -> None:
    wrong = []
    for module, targets in _imports().items():
        layer = _layer(module)
        if layer in TOP or layer == "":
            continue
        assert layer in ALLOWED, f"{module}: a package docs/architecture.md does not name"
        for target in targets:
            other = _layer(target)
            if other not in ("", layer) and other not in ALLOWED[layer]:
                wrong.append(f"{module} imports {target}")
    assert wrong == [], wrong


def test_at_most_eight_modules_at_the_top() -> None:
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert set(top) <= TOP and len(top) <= 8, top


def test_no_import_cycle_even_under_type_checking() -> None:
    edges = _imports()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(module: str, stack: list[str]) -> None:
        state[module] = 1
        stack.append(module)
        for target in sorted(edges.get(module, ())):
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], target])
            elif target not in state:
                visit(target, stack)
        stack.pop()
        state[module] = 2

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    assert cycles == [], cycles
