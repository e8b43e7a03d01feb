"""A notebook's cells: the server's name for each (its key) and the client's.

A result names a line of a notebook by the cell's path, ``/w/nb.ipynb#cell4``: the cell's
place among the ``.ipynb``'s cells (markdown included) as it was profiled. The server keeps
annotations under that path's URI, the cell's *key*, whatever the editor shows since. A
client that syncs notebooks (VS Code) names each cell by a URI of its own
(``vscode-notebook-cell:...#W3s...``), from which no path can be read: only the notebook
documents it has open say which of their cells is which.

Cells are matched by their text, not only their place: the cells as profiled (the server's
``bases``: one text per cell key) are aligned with the open notebook's cells (``align``),
so that a cell inserted, deleted or edited in the editor leaves the marks on the code they
were made for. The match is made when the notebook opens, when its cells are inserted,
deleted or moved, and when a new result comes; typing in a cell does not change it. A key
whose notebook is not open has no client URI: nothing is published for it until the
notebook opens (a file URI made up for a cell would lead the Problems panel to the
notebook's JSON, and its marks would show twice once the notebook opens).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from urllib.parse import unquote

from lsprotocol import types
from pygls import uris
from pygls.workspace import Workspace

from ..notebook.cell_paths import cell_path, split_cell_path
from ..notebook.document import notebook_cells
from .annotations import canonical_uri, file_uri

# script path -> URI -> the lines of the text that was profiled (the server's ``bases``)
Bases = Mapping[str, Mapping[str, list[str] | None]]
_LOCATION = re.compile(r'"uri":("file://[^"]*%23cell[1-9][0-9]*")')


def key(notebook: str, index: int) -> str:
    """The key of cell ``index`` (1-based) of the notebook at path ``notebook``."""
    return file_uri(cell_path(notebook, index))


def cell_of_key(uri: str) -> tuple[str, int] | None:
    """(the notebook's path, the cell's number) that a key names; None for other URIs."""
    if not uri.startswith("file:") or "%23cell" not in uri:
        return None
    path = uris.to_fs_path(uri)
    return split_cell_path(path) if path else None


def disk_bases(notebook: str) -> dict[str, list[str] | None]:
    """key -> lines of every cell of the notebook as it is on disk now: what a run of it
    profiles, and what its marks are placed from."""
    cells = notebook_cells(notebook)
    return {key(notebook, i): list(lines) for i, lines in enumerate(cells or (), start=1)}


def client_locations(diagnostics: str, target_of: Callable[[str], str | None]) -> str:
    """Diagnostics (JSON text) with the cell keys of their locations (a backward line's
    forward lines) as the client names those cells; a key with no cell open is left."""

    def client(match: re.Match[str]) -> str:
        target = target_of(json.loads(match.group(1)))
        return f'"uri":{json.dumps(target)}' if target is not None else match.group(0)

    return _LOCATION.sub(client, diagnostics)


def _likeness(profiled: Sequence[str] | None, current: Sequence[str]) -> float:
    if profiled is None:
        return 0.0
    return difflib.SequenceMatcher(None, profiled, current, autojunk=False).ratio()


def align(profiled: Sequence[Sequence[str] | None], current: Sequence[Sequence[str]]) -> dict[int, int]:
    """Where each profiled cell (0-based; None: its text is not known) stands among the
    current cells (0-based), for those that are still there: a cell with the same text, in
    the same order; among cells that changed, the one most like it (tracking.place then
    keeps only the marks whose line's text stands in it)."""
    unknown = object()
    a = [tuple(cell) if cell is not None else unknown for cell in profiled]
    b = [tuple(cell) for cell in current]
    out: dict[int, int] = {}
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.update({i: j1 + i - i1 for i in range(i1, i2)})
        elif tag == "replace":
            free = list(range(j1, j2))
            for i in range(i1, i2):
                if not free:
                    break
                same_place = j1 + i - i1
                best = max(free, key=lambda j: (_likeness(profiled[i], current[j]), -abs(j - same_place)))
                out[i] = best
                free.remove(best)
    return out


@dataclass
class _Match:
    """One open notebook's cells matched with its keys."""

    path: str
    index_of: dict[str, int] = field(default_factory=dict)  # client cell URI (unquoted) -> cell number
    cell_of: dict[int, str] = field(default_factory=dict)  # cell number -> client cell URI, as sent
    position_of: dict[int, int] = field(default_factory=dict)  # cell number -> 1-based place in the editor


class NotebookCells:
    """The open notebooks' cells matched with the keys (made when needed, kept until the
    notebook's cells change place or a new result comes: ``forget``), and the client cell
    URIs that diagnostics were published to."""

    def __init__(self) -> None:
        self._matches: dict[str, _Match] = {}  # notebook URI (unquoted) -> its match
        self.published: dict[str, str] = {}  # client cell URI -> the key whose diagnostics it shows

    def forget(self, notebook_uri: str | None = None) -> None:
        """Match the cells again when next asked (of one notebook, or of all)."""
        if notebook_uri is None:
            self._matches.clear()
        else:
            self._matches.pop(unquote(notebook_uri), None)

    def key_of(self, workspace: Workspace, bases: Bases, uri: str) -> str:
        """The key under which the annotations of the document at ``uri`` are kept: a
        client cell URI's cell key (the URI itself for a cell that matches no profiled
        cell), else the file URI as this server spells it."""
        notebook = workspace.get_notebook_document(cell_uri=uri)
        if notebook is None:
            return canonical_uri(uri)
        match = self._match(workspace, bases, notebook)
        index = match.index_of.get(unquote(uri)) if match is not None else None
        return key(match.path, index) if match is not None and index is not None else uri

    def target_of(self, workspace: Workspace, bases: Bases, uri: str) -> str | None:
        """Where the annotations kept under ``uri`` are shown: a cell key's client cell URI
        (None while its notebook is not open, or the cell is not in it), else ``uri``."""
        cell = cell_of_key(uri)
        if cell is None:
            return uri
        found = self._open_match(workspace, bases, cell[0])
        return found[1].cell_of.get(cell[1]) if found is not None else None

    def place_of(self, workspace: Workspace, bases: Bases, uri: str) -> tuple[str, int] | None:
        """A cell key's notebook (file URI) and the cell's 1-based place in it: in the
        editor when the notebook is open there, else as profiled; None for other URIs."""
        cell = cell_of_key(uri)
        if cell is None:
            return None
        found = self._open_match(workspace, bases, cell[0])
        if found is None:
            return file_uri(cell[0]), cell[1]
        position = found[1].position_of.get(cell[1])
        return found[0].uri, position if position is not None else cell[1]

    def _open_match(
        self, workspace: Workspace, bases: Bases, path: str
    ) -> tuple[types.NotebookDocument, _Match] | None:
        for notebook in workspace.notebook_documents.values():
            if uris.to_fs_path(notebook.uri) == path:
                match = self._match(workspace, bases, notebook)
                return (notebook, match) if match is not None else None
        return None

    def _match(self, workspace: Workspace, bases: Bases, notebook: types.NotebookDocument) -> _Match | None:
        """The notebook's cells matched with its keys (None: not a notebook on disk)."""
        name = unquote(notebook.uri)
        match = self._matches.get(name)
        if match is not None:
            return match
        path = uris.to_fs_path(notebook.uri)
        if not path:
            return None
        current = []
        for cell in notebook.cells:
            document = workspace.text_documents.get(unquote(cell.document))
            current.append(document.source.splitlines() if document is not None else [])
        profiled = _profiled(bases, path)
        where = align(profiled, current) if profiled else {i: i for i in range(len(current))}
        match = _Match(path)
        for i, j in where.items():
            cell_uri = notebook.cells[j].document
            match.index_of[unquote(cell_uri)] = i + 1
            match.cell_of[i + 1] = cell_uri
            match.position_of[i + 1] = j + 1
        self._matches[name] = match
        return match


def _profiled(bases: Bases, notebook: str) -> list[list[str] | None]:
    """The notebook's cells as profiled (each cell's lines; None where not known)."""
    found: dict[int, list[str] | None] = {}
    for files in bases.values():
        for uri, lines in files.items():
            cell = cell_of_key(uri)
            if cell is not None and cell[0] == notebook:
                found[cell[1]] = lines
    return [found.get(i) for i in range(1, max(found, default=0) + 1)]
