"""Running a notebook's code cells in order, once, as one program (as "Run All" would in a
fresh kernel), each cell compiled under its own name (``notebook/cell_paths.py``) so that
every measure lands on (cell, line).

Each cell's own text is put in ``linecache`` under its name (tracebacks, the lines' text
in the result), and the name is counted as the user's file. IPython's syntax is made
Python first (``notebook/ipython_syntax.py``); ``get_ipython()`` then returns a shell made
on first use, over the notebook's namespace, as in a kernel; ``display`` is there as in one.
"""

from __future__ import annotations

import linecache
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..notebook.cell_paths import cell_path
from ..notebook.document import NotebookError, read_notebook
from ..notebook.ipython_syntax import has_ipython, to_python
from ..schema.model import ScriptError
from .script import ScriptSyntaxError, compile_named, main_module


@dataclass
class CompiledNotebook:
    path: str
    cells: list[tuple[str, types.CodeType]] = field(default_factory=list)  # (cell's name, code)
    notes: list[str] = field(default_factory=list)
    uses_ipython: bool = False


def compile_notebook(path: str, claim: Callable[[str], None]) -> CompiledNotebook:
    """Every code cell compiled, in order; ``claim`` counts each cell's name as the user's.
    ``ScriptSyntaxError`` for a notebook that cannot be read or a cell that does not compile
    (named by its cell and line)."""
    try:
        notebook = read_notebook(path)
    except NotebookError as exc:
        raise ScriptSyntaxError(
            ScriptError.given(type="NotebookError", message=str(exc), traceback=f"NotebookError: {exc}\n")
        ) from None
    out = CompiledNotebook(path)
    ipython = has_ipython()
    for cell in notebook.code_cells:
        name = cell_path(path, cell.index)
        made = to_python(cell, ipython)
        out.notes += made.notes
        out.uses_ipython |= made.uses_ipython
        shown = [text + "\n" for text in cell.lines]
        # mtime None: linecache.checkcache keeps it (there is no file to look at)
        linecache.cache[name] = (len(cell.source), None, shown, name)
        claim(name)
        out.cells.append((name, compile_named(made.source, name)))
    return out


def run_notebook(compiled: CompiledNotebook) -> None:
    """Execute the cells in order in one ``__main__`` namespace; the first that raises ends it."""
    namespace = main_module(None).__dict__
    if compiled.uses_ipython:
        namespace["get_ipython"] = _Shell(namespace)
    namespace.setdefault("display", _display)
    for _name, code in compiled.cells:
        exec(code, namespace)


class _Shell:
    """``get_ipython()``: an IPython shell over the notebook's namespace, made on first call
    (its history off: a profile leaves nothing in the user's IPython folder)."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        self.namespace = namespace
        self.shell: Any = None

    def __call__(self) -> Any:
        if self.shell is None:
            from IPython.core.interactiveshell import InteractiveShell
            from traitlets.config import Config

            config = Config()
            config.HistoryManager.enabled = False
            main = main_module_of(self.namespace)
            self.shell = InteractiveShell.instance(config=config, user_ns=self.namespace, user_module=main)
        return self.shell


def main_module_of(namespace: dict[str, Any]) -> types.ModuleType:
    main = sys.modules["__main__"]
    return main if main.__dict__ is namespace else types.ModuleType("__main__")


def _display(*objects: Any, **kwargs: Any) -> None:
    """``display()`` as a notebook has it: IPython's where it is installed, else print."""
    try:
        from IPython.display import display
    except ImportError:
        print(*objects)
        return
    display(*objects, **kwargs)  # type: ignore[no-untyped-call]
