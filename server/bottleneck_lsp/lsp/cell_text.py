"""A notebook's cells as they are on disk, read once per version of the file.

Placing a notebook's marks reads the text of each cell that has some (and, when a result is
made, of every cell): one parse of the ``.ipynb`` serves them all while the file is
unchanged, so a notebook with many marked cells and large outputs is not read again per cell.
"""

from __future__ import annotations

import functools
import os

from ..notebook.document import NotebookError, read_notebook


@functools.lru_cache(maxsize=8)
def _cells(path: str, _mtime_ns: int, _size: int) -> tuple[tuple[str, ...], ...] | None:
    try:
        notebook = read_notebook(path)
    except NotebookError:
        return None
    return tuple(tuple(cell.lines) for cell in notebook.cells)


def notebook_cells(path: str) -> tuple[tuple[str, ...], ...] | None:
    """Each cell's lines (every cell, markdown included, in order) of the notebook at
    ``path`` as it is on disk now; None when it cannot be read or is not a notebook."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _cells(path, stat.st_mtime_ns, stat.st_size)


def cell_lines(path: str, index: int) -> list[str] | None:
    """The lines of cell ``index`` (1-based) of the notebook at ``path`` on disk now."""
    cells = notebook_cells(path)
    if cells is None or not 1 <= index <= len(cells):
        return None
    return list(cells[index - 1])
