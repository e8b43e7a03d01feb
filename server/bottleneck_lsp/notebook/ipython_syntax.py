"""A code cell's IPython syntax (``%time``, ``%%time``, ``!cmd``, ``x?``) made Python,
keeping every line where it is, so that measures land on the cell's own lines.

With IPython in the profiled Python, its own transformer does it, as a kernel would (line
magics and shell escapes become ``get_ipython()`` calls on their line; a cell magic turns
the whole cell into one call, on its first line). Without IPython, such lines cannot run:
each becomes ``pass`` (a cell magic: the whole cell), with a note naming it. A ``%%time``
cell runs its body as plain code, so that its lines are measured rather than hidden in
the magic's call (its timing print is left out).
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass, field

from .document import Cell

_HELP = re.compile(r"^[\w.\[\]()'\"]*\?{1,2}$")  # obj? obj??
_ASSIGNED = re.compile(r"^[\w.\[\], ]+=\s*[%!]")  # x = !ls, x = %time f()
_TIME_CELL = "%%time"


@dataclass
class CellSource:
    source: str  # Python, line for line with the cell
    notes: list[str] = field(default_factory=list)
    uses_ipython: bool = False  # the source calls get_ipython()


def has_ipython() -> bool:
    return importlib.util.find_spec("IPython") is not None


def _compiles(source: str) -> bool:
    try:
        compile(source, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True


def _magic_line(stripped: str) -> bool:
    return (
        stripped.startswith(("%", "!"))
        or bool(_HELP.match(stripped))
        or (stripped.startswith("?") and len(stripped) > 1)
        or bool(_ASSIGNED.match(stripped))
    )


def to_python(cell: Cell, ipython: bool | None = None) -> CellSource:
    """``cell``'s code as Python with its lines in place. ``ipython``: whether IPython is
    there to transform it (looked up when None)."""
    lines = cell.source.splitlines()
    notes: list[str] = []
    first = next((i for i, text in enumerate(lines) if text.strip()), None)
    if first is not None and lines[first].strip().split()[0] == _TIME_CELL:
        lines[first] = ""
        notes.append(
            f"cell {cell.index}: %%time was left out so that the cell's lines are measured one by one"
        )
    source = "\n".join(lines) + "\n"
    if _compiles(source):
        return CellSource(source, notes)
    if ipython if ipython is not None else has_ipython():
        from IPython.core.inputtransformer2 import TransformerManager

        made: str = TransformerManager().transform_cell(source)  # type: ignore[no-untyped-call]
        return CellSource(made, notes, uses_ipython="get_ipython()" in made)
    return _without_ipython(cell, lines, notes)


def _without_ipython(cell: Cell, lines: list[str], notes: list[str]) -> CellSource:
    first = next((text.strip() for text in lines if text.strip()), "")
    if first.startswith("%%"):
        magic = first.split()[0]
        notes.append(
            f"cell {cell.index} ({magic}) was skipped: a cell magic needs IPython, which the "
            "profiled Python does not have"
        )
        return CellSource("\n" * len(lines), notes)
    out = []
    for number, text in enumerate(lines, start=1):
        stripped = text.strip()
        if stripped and _magic_line(stripped):
            indent = text[: len(text) - len(text.lstrip())]
            out.append(indent + "pass")
            notes.append(
                f"cell {cell.index}, line {number} (`{stripped[:60]}`) was skipped: IPython syntax, "
                "and the profiled Python has no IPython"
            )
        else:
            out.append(text)
    return CellSource("\n".join(out) + "\n", notes)
