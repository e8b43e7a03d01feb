"""The IPython extension: ``%load_ext bottleneck_lsp``, then ``%%bottleneck`` profiles a
cell once, in the kernel (its state is live: it cannot be run again per pass), and shows
its lines ranked under it: an HTML table in Jupyter, text elsewhere. ``%bottleneck CODE``
does the same for one line. Options as on the command line: ``--top N``,
``--min-share SHARE``.

The cell runs through ``job/in_process.py``: the sampler over the whole cell, the autograd
profiler in windows of it (ops, op CPU time and memory per line), one document, the same
ranking as ``bottleneck-lsp profile``. The cell's code is compiled under a name made from
its text (``cell-`` and a hash: inductor's caches keep the names a graph was made from), its
IPython syntax transformed as the kernel would; the kernel's tracebacks and the table call
it ``In[N]``, and the kernel's other cells ``In[M]`` (their functions' lines are the user's).
"""

from __future__ import annotations

import argparse
import hashlib
import linecache
import os
import re
import sys
from types import TracebackType
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class

from .analysis.ranking import Thresholds
from .cli_args import share_value
from .formats import cell_table
from .job.in_process import CellRun, profile_code

_DEFAULTS = Thresholds(top=10)  # a cell's table lists more than a report's first lines


_OPTION = re.compile(r"\s*--(top|min-share)(?:=|\s+)(\S+)")
USAGE = "options: --top N, --min-share SHARE (0.05 or 5%)"


class UsageError(Exception):
    """Bad options: said in one line, nothing runs."""


def parse(line: str) -> tuple[Thresholds, str]:
    """The options at the front of ``line`` as thresholds, and the code after them (what
    ``%bottleneck`` profiles)."""
    top, min_share = _DEFAULTS.top, _DEFAULTS.min_share
    rest = line
    while (match := _OPTION.match(rest)) is not None:
        name, value = match.groups()
        try:
            if name == "top":
                top = int(value)
                if top < 1:
                    raise ValueError(value)
            else:
                min_share = share_value(value)
        except (ValueError, argparse.ArgumentTypeError):
            raise UsageError(f"%bottleneck: --{name} {value}: not a valid value ({USAGE})") from None
        rest = rest[match.end() :]
    if rest.lstrip().startswith("--"):
        raise UsageError(f"%bottleneck: unknown option {rest.split()[0]} ({USAGE})")
    return Thresholds(top=top, min_share=min_share), rest.strip()


@magics_class
class BottleneckMagics(Magics):
    @line_cell_magic
    def bottleneck(self, line: str, cell: str | None = None) -> None:
        """Profile this cell (``%%bottleneck``) or this line (``%bottleneck CODE``) once, here:
        its lines ranked by wall time, with op CPU time, memory and ops per line."""
        try:
            thresholds, code = parse(line)
        except UsageError as exc:
            print(exc)
            return
        source = cell if cell is not None else code
        if not source.strip():
            print("%bottleneck: nothing to profile (give a line of code, or use %%bottleneck on a cell)")
            return
        shell: Any = self.shell
        known = kernel_cells(shell)
        here = _calling_cell(known)  # (the kernel's name for this cell: its call of the magic)
        number = known.pop(here) if here is not None else shell.execution_count
        python = shell.transform_cell(source)  # the kernel's own rewriting of its syntax, line for line
        if cell is not None:  # numbered as the cell shows it: its line 1 is %%bottleneck's
            source, python = f"%%bottleneck {line}".rstrip() + "\n" + source, "\n" + python
        # Named by its text, not its number: torch.compile's caches keep the file names a graph
        # was made from, and the same cell run again (another number) finds its graphs there
        name = os.path.join(os.getcwd(), f"cell-{hashlib.sha1(python.encode()).hexdigest()[:12]}")
        linecache.cache[name] = (len(source), None, source.splitlines(True), name)
        _filename_map(shell)[name] = number  # (IPython's tracebacks then say "Cell In[N]")
        compiled = compile(python, name, "exec", dont_inherit=True)
        labels = {path: f"In[{n}]" for path, n in known.items()}
        run = profile_code(compiled, shell.user_ns, name, os.getcwd(), {**labels, name: f"In[{number}]"})
        _show(run, name, thresholds, labels)
        if run.error is not None:
            # as without the magic: the traceback from the cell's own line (this frame hidden
            # by IPython, the profiler's frames left out)
            __tracebackhide__ = True  # (read by IPython)
            raise run.error.with_traceback(_from_cell(run.error.__traceback__, name))


def _filename_map(shell: Any) -> dict[Any, Any]:
    """IPython's map of the names it compiled cells under to their numbers (its compiler's
    ``_filename_map``, which its tracebacks read); a new empty one where it keeps none."""
    known = getattr(getattr(shell, "compile", None), "_filename_map", None)
    return known if isinstance(known, dict) else {}


def kernel_cells(shell: Any) -> dict[str, int]:
    """The names the kernel compiled its cells under (IPython's ``<ipython-input-3-...>``,
    ipykernel's ``.../ipykernel_PID/HASH.py``, the magic's own), each with its number (its
    tracebacks' ``In[3]``)."""
    return {
        name: number
        for name, number in _filename_map(shell).items()
        if isinstance(name, str) and isinstance(number, int)
    }


def _calling_cell(cells: dict[str, int]) -> str | None:
    """The name of the kernel's cell whose code called the magic, from the stack (IPython 9
    counts a cell before it runs: its ``execution_count`` is then the next cell's)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename in cells:
            return frame.f_code.co_filename
        frame = frame.f_back  # type: ignore[assignment]
    return None


def _from_cell(tb: TracebackType | None, name: str) -> TracebackType | None:
    """A traceback from its first frame in the cell's code (all of it where none is)."""
    here = tb
    while here is not None and here.tb_frame.f_code.co_filename != name:
        here = here.tb_next
    return here if here is not None else tb


def _show(run: CellRun, name: str, thresholds: Thresholds, cells: dict[str, str]) -> None:
    from IPython.display import display

    bundle = {
        "text/plain": cell_table.text(run.document, name, thresholds, cells),
        "text/html": cell_table.html_table(run.document, name, thresholds, cells),
    }
    display(bundle, raw=True)  # type: ignore[no-untyped-call]


def load_ipython_extension(ipython: Any) -> None:
    ipython.register_magics(BottleneckMagics)
