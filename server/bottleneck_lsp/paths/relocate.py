"""A result made on another machine, shown on the files here.

The document names its files under its ``root`` (the workspace folder or ``--root`` where
it was made) and keeps each ranked line's text. Here that root stands for a local folder
(``find_root``: the folder given, or the folder under it that holds the script); each line
is shown where its text still stands: at its recorded number, else at the one line of the
file with that text. Lines whose text is nowhere (or in several places), files that are
not here, and paths outside the recorded root are skipped, and said so. Only files under
the local folder are ever read (``root_map``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from ..notebook.cell_paths import split_cell_path
from ..notebook.document import NotebookError, read_notebook
from ..schema.model import Document, Function, Pass, RankedLine
from .root_map import RootMap, outermost_root, relative_to

MAX_FILE_BYTES = 16 * 1024**2  # a source file larger than this is not read
MAX_WALK = 20_000  # folder entries looked at when searching for the script
_SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv", "build", "dist"}

NOT_HERE = "no such file here"
OUTSIDE = "outside the recorded root"
CHANGED = "its text is no longer in the file"
AMBIGUOUS = "its text is in the file more than once"
NO_TEXT = "no line text recorded"


@dataclass
class Skipped:
    path: str  # relative to the recorded root (the recorded path when outside it)
    line: int
    text: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} ({self.reason})"


@dataclass
class Relocated:
    doc: Document  # the result with its files and lines as they are here
    root: str  # the local folder that stands for the recorded root
    shown: int = 0  # ranked lines shown (at their number or moved)
    moved: int = 0  # of which found at another number
    skipped: list[Skipped] = field(default_factory=list)


def recorded_root(doc: Document) -> str:
    return doc.root or outermost_root(doc.roots, doc.script)


class _Files:
    """The local files, read once each (stripped lines), and where recorded lines are."""

    def __init__(self, doc: Document, local_root: str) -> None:
        self.root = recorded_root(doc)
        self.map = RootMap(self.root, local_root)
        self._lines: dict[str, list[str] | None] = {}
        self._notebooks: dict[str, list[list[str]] | None] = {}  # path -> each cell's stripped lines

    def rel(self, path: str) -> str:
        return relative_to(path, self.root) or path

    def local(self, path: str, rel: str = "") -> str | None:
        return self.map.join(rel) if rel else self.map.here(path)

    def lines(self, local: str) -> list[str] | None:
        if local not in self._lines:
            cell = split_cell_path(local)
            self._lines[local] = _read(local) if cell is None else self._cell(*cell)
        return self._lines[local]

    def _cell(self, notebook: str, index: int) -> list[str] | None:
        """A notebook cell's lines (``nb.ipynb#cell4``: the notebook is the file that must be
        here), the notebook read once for all its cells."""
        if notebook not in self._notebooks:
            try:
                cells = read_notebook(notebook).cells if os.path.isfile(notebook) else None
            except NotebookError:
                cells = None
            self._notebooks[notebook] = [[line.strip() for line in c.lines] for c in cells] if cells else None
        cells_here = self._notebooks[notebook]
        return cells_here[index - 1] if cells_here is not None and index <= len(cells_here) else None

    def find(self, file: str, line: int, text: str, rel: str = "") -> tuple[str, int] | Skipped:
        """Where a recorded line stands here: (local file, line), or why it is skipped."""
        where = rel or self.rel(file)
        text = text.strip()
        local = self.local(file, rel)
        if local is None:
            return Skipped(where, line, text, OUTSIDE)
        lines = self.lines(local)
        if lines is None:
            return Skipped(where, line, text, NOT_HERE)
        if not text:
            return Skipped(where, line, text, NO_TEXT)
        if 1 <= line <= len(lines) and lines[line - 1] == text:
            return local, line
        found = [i + 1 for i, t in enumerate(lines) if t == text]
        if len(found) == 1:
            return local, found[0]
        return Skipped(where, line, text, CHANGED if not found else AMBIGUOUS)


def _read(path: str) -> list[str] | None:
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > MAX_FILE_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.strip() for line in handle]
    except OSError:
        return None


def find_root(doc: Document, folder: str) -> str:
    """The local folder that stands for the result's recorded root: ``folder`` when the
    script is there at its recorded relative path, else the folder under ``folder`` that
    holds it so (the one where most ranked lines' text stands, when several do)."""
    folder = os.path.abspath(folder)
    root = recorded_root(doc)
    script_rel = relative_to(doc.script, root) or os.path.basename(doc.script)
    if os.path.isfile(os.path.join(folder, script_rel)):
        return folder
    parts = script_rel.split(os.sep)
    candidates = []
    for local_root in _folders_holding(folder, parts[-1]):
        base = local_root
        # the script's folder here is base; climb as many levels as script_rel has folders
        for part in reversed(parts[:-1]):
            if os.path.basename(base) != part:
                break
            base = os.path.dirname(base)
        else:
            candidates.append(base)
    if not candidates:
        return folder
    return max(candidates, key=lambda c: _fits(doc, c))


def _folders_holding(folder: str, name: str) -> list[str]:
    found, seen = [], 0
    for current, dirs, files in os.walk(folder):
        seen += len(dirs) + len(files)
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIP_DIRS)
        if name in files:
            found.append(current)
        if seen > MAX_WALK:
            break
    return found


def _fits(doc: Document, local_root: str) -> int:
    files = _Files(doc, local_root)
    rows = doc.ranking.lines if doc.ranking is not None else []
    return sum(1 for r in rows[:50] if not isinstance(files.find(r.file, r.line, r.text, r.path), Skipped))


def relocate(doc: Document, local_root: str) -> Relocated:
    """``doc`` with its ranked lines, hot functions and error moved onto the files under
    ``local_root``; what could not be placed is left out and listed."""
    files = _Files(doc, local_root)
    out = Relocated(doc=doc, root=files.map.local_root)
    moved: dict[tuple[str, int], tuple[str, int]] = {}
    rows: list[RankedLine] = []
    for row in doc.ranking.lines if doc.ranking is not None else []:
        where = files.find(row.file, row.line, row.text, row.path)
        if isinstance(where, Skipped):
            out.skipped.append(where)
            continue
        moved[row.key] = where
        out.shown += 1
        out.moved += where[1] != row.line
        rows.append(replace(row, file=where[0], line=where[1], path=files.rel(row.file)))
    for row in rows:  # links between rows follow them; a link to a line not shown goes
        row.forward_lines = [
            replace(link, file=moved[link.file, link.line][0], line=moved[link.file, link.line][1])
            for link in row.forward_lines
            if (link.file, link.line) in moved
        ]
    ranking = None
    if doc.ranking is not None:
        disagreements = [
            replace(d, file=moved[d.file, d.line][0], line=moved[d.file, d.line][1])
            for d in doc.ranking.disagreements
            if (d.file, d.line) in moved
        ]
        ranking = replace(doc.ranking, lines=rows, disagreements=disagreements)
    script = files.local(doc.script) or os.path.join(out.root, os.path.basename(doc.script))
    out.doc = replace(
        doc,
        script=script,
        roots=[out.root],
        root=out.root,
        passes=[_pass_here(p, files) for p in doc.passes],
        ranking=ranking,
    )
    return out


def _pass_here(part: Pass, files: _Files) -> Pass:
    """A pass with its user functions (cProfile) and its error placed here; the rest of its
    tables keep the recorded paths (the report says what ran where it ran)."""
    functions = part.functions
    if any(f.user for f in functions):
        functions = [g for f in functions if (g := _function_here(f, files)) is not None]
    error = part.error
    if error is not None and error.file:
        local = files.local(error.file)
        error = replace(error, file=local if local and files.lines(local) is not None else None)
    if functions is part.functions and error is part.error:
        return part
    return replace(part, functions=functions, error=error)


def _function_here(func: Function, files: _Files) -> Function | None:
    if not func.user:
        return func
    local = files.local(func.file)
    lines = files.lines(local) if local else None
    if local is None or lines is None:
        return None
    name = func.function.rsplit(".", 1)[-1]
    define = re.compile(rf"(async\s+)?def\s+{re.escape(name)}\b")
    # at its line, or below it past the decorators (cProfile names the first decorator)
    for offset in range(0, 20):
        number = func.line + offset
        if number > len(lines):
            break
        text = lines[number - 1]
        if define.match(text):
            return replace(func, file=local, line=func.line)
        if offset and not text.startswith("@") and text:
            break
    found = [i + 1 for i, t in enumerate(lines) if define.match(t)]
    return replace(func, file=local, line=found[0]) if len(found) == 1 else None
