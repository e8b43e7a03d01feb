"""A notebook cell's code, named as a file: ``/work/nb.ipynb#cell5``.

The engine keys every measure by (file, line). A notebook's cells are compiled each under
its own name, the notebook's path with the cell's number as a URI fragment, so that the
lines of every cell are distinct keys and a line number is the line within its cell, as
the user reads it on screen. Cells are counted as the notebook's ``cells`` list, 1-based,
markdown cells included.
"""

from __future__ import annotations

import os
import re

NOTEBOOK_SUFFIX = ".ipynb"
_CELL = re.compile(r"^(?P<notebook>.+\.ipynb)#cell(?P<index>[1-9][0-9]*)$")


def is_notebook(path: str) -> bool:
    return path.lower().endswith(NOTEBOOK_SUFFIX)


def cell_path(notebook: str, index: int) -> str:
    """The name the code of cell ``index`` (1-based) of ``notebook`` is compiled under."""
    return f"{notebook}#cell{index}"


def split_cell_path(path: str) -> tuple[str, int] | None:
    """(the notebook's path, the cell's number) of a cell's name; None for any other path."""
    match = _CELL.match(path)
    if match is None:
        return None
    return match.group("notebook"), int(match.group("index"))


def cell_of(path: str) -> int | None:
    """The cell's number when ``path`` names a notebook cell's code."""
    found = split_cell_path(path)
    return found[1] if found else None


def place_text(path: str, line: int | None, shown_path: str | None = None) -> str:
    """Where a line is, in words a user finds it by: ``nb.ipynb cell 5, line 3`` for a
    cell, ``script.py:12`` for a file. ``shown_path``: the path as to be printed (relative,
    say), of the file or of the cell's name."""
    shown = path if shown_path is None else shown_path
    number = "?" if line is None else str(line)
    found = split_cell_path(shown)
    if found is not None:
        return f"{found[0]} cell {found[1]}, line {number}"
    return f"{shown}:{number}"


def short_place(path: str, line: int | None) -> str:
    """``place_text`` with the file's name only."""
    return place_text(path, line, os.path.basename(path))
