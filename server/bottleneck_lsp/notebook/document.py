"""An ``.ipynb`` file read as its cells, checked: nbformat 4, each cell a type and a source.

Only what running the notebook needs is read (the cells' types and sources); outputs and
metadata are left alone. A file that is not such a notebook raises ``NotebookError`` with
one sentence that says what is wrong, before anything runs.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass

CODE = "code"
MARKDOWN = "markdown"
RAW = "raw"
_KINDS = (CODE, MARKDOWN, RAW)
MAX_BYTES = 256 * 1024 * 1024  # a notebook larger than this (outputs included) is refused


class NotebookError(ValueError):
    """The file is not a notebook this tool can run; the message says why."""


@dataclass(frozen=True)
class Cell:
    index: int  # 1-based, over every cell, markdown included: as the user counts them
    kind: str  # code, markdown or raw
    source: str

    @property
    def lines(self) -> list[str]:
        return self.source.splitlines()


@dataclass(frozen=True)
class Notebook:
    path: str
    cells: tuple[Cell, ...]
    language: str  # the kernel's language ("python" when the notebook does not say)

    @property
    def code_cells(self) -> list[Cell]:
        return [c for c in self.cells if c.kind == CODE]

    def cell(self, index: int) -> Cell | None:
        return self.cells[index - 1] if 1 <= index <= len(self.cells) else None


def _source(value: object, index: int, name: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise NotebookError(
        f"{name}: cell {index} has no source text (nbformat 4 wants a string or a list of strings)"
    )


def parse_notebook(text: str | bytes, path: str) -> Notebook:
    """The notebook in ``text`` (the file's content); ``path`` names it in messages."""
    name = os.path.basename(path)
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise NotebookError(f"{name} is not a notebook: it is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise NotebookError(f"{name} is not a notebook: its JSON is not an object")
    major = data.get("nbformat")
    if major is not None and major != 4:
        raise NotebookError(
            f"{name} is nbformat {major!r}; only nbformat 4 notebooks are read "
            "(Jupyter converts older ones: jupyter nbconvert --to notebook)"
        )
    if not isinstance(data.get("cells"), list):
        raise NotebookError(f"{name} is not a notebook: it has no list of cells")
    if major is None:
        raise NotebookError(f"{name} is not a notebook: it names no nbformat version (4)")
    metadata = data.get("metadata")
    language = _language(metadata if isinstance(metadata, dict) else {})
    if language != "python":
        raise NotebookError(f"{name} is a {language} notebook; only Python notebooks can be profiled")
    cells = []
    for index, raw in enumerate(data["cells"], start=1):
        if not isinstance(raw, dict):
            raise NotebookError(f"{name}: cell {index} is not an object")
        kind = raw.get("cell_type")
        if kind not in _KINDS:
            raise NotebookError(f"{name}: cell {index} has cell_type {kind!r} (code, markdown or raw)")
        cells.append(Cell(index, str(kind), _source(raw.get("source", ""), index, name)))
    return Notebook(path, tuple(cells), language)


def _language(metadata: dict[str, object]) -> str:
    info = metadata.get("language_info")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        return str(info["name"]).lower()
    kernel = metadata.get("kernelspec")
    if isinstance(kernel, dict) and isinstance(kernel.get("language"), str):
        return str(kernel["language"]).lower()
    return "python"


def read_notebook(path: str) -> Notebook:
    """The notebook at ``path``; ``NotebookError`` when it cannot be read or is not one."""
    try:
        size = os.path.getsize(path)
        if size > MAX_BYTES:
            raise NotebookError(
                f"{os.path.basename(path)} is {size // (1024 * 1024)} MiB; notebooks over "
                f"{MAX_BYTES // (1024 * 1024)} MiB are not read (clear its outputs)"
            )
        with open(path, "rb") as handle:
            return parse_notebook(handle.read(), path)
    except OSError as exc:
        raise NotebookError(f"Cannot read {path}: {exc.strerror or exc}") from None


@functools.lru_cache(maxsize=8)
def _cells(path: str, _mtime_ns: int, _size: int) -> tuple[tuple[str, ...], ...] | None:
    try:
        notebook = read_notebook(path)
    except NotebookError:
        return None
    return tuple(tuple(cell.lines) for cell in notebook.cells)


def notebook_cells(path: str) -> tuple[tuple[str, ...], ...] | None:
    """Each cell's lines (every cell, in order) of the notebook at ``path`` as it is on disk
    now, parsed once per version of the file; None when it cannot be read or is not one."""
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
