"""IPython's syntax made Python line for line: by IPython's own transformer where it is
installed, else each such line skipped (``pass``) with a note naming it."""

from __future__ import annotations

import pytest

from bottleneck_lsp.notebook.document import Cell
from bottleneck_lsp.notebook.ipython_syntax import to_python

CELL = Cell(
    3,
    "code",
    "import torch\n%time x = torch.ones(3)\nfor i in range(2):\n"
    "    !echo {i}\n    y = x * i\nfiles = !ls\nx.sum?\n",
)


def test_plain_python_is_left_as_it_is() -> None:
    made = to_python(Cell(1, "code", "x = 1\nprint(x % 2)\n"), ipython=False)
    assert made.source == "x = 1\nprint(x % 2)\n" and made.notes == []


def test_without_ipython_each_magic_line_is_skipped_in_place_and_named() -> None:
    made = to_python(CELL, ipython=False)
    lines = made.source.splitlines()
    assert lines == [
        "import torch",
        "pass",
        "for i in range(2):",
        "    pass",  # the loop's body keeps its indentation: it still compiles
        "    y = x * i",
        "pass",
        "pass",
    ]
    compile(made.source, "cell", "exec")
    assert made.notes[0] == (
        "cell 3, line 2 (`%time x = torch.ones(3)`) was skipped: IPython syntax, and the profiled "
        "Python has no IPython"
    )
    assert [n.split(" (")[0] for n in made.notes] == [
        "cell 3, line 2",
        "cell 3, line 4",
        "cell 3, line 6",
        "cell 3, line 7",
    ]


def test_without_ipython_a_cell_magic_skips_its_cell_except_time() -> None:
    made = to_python(Cell(2, "code", "%%bash\necho hi\nls\n"), ipython=False)
    assert made.source.strip() == "" and made.source.count("\n") == 3
    assert made.notes == [
        "cell 2 (%%bash) was skipped: a cell magic needs IPython, which the profiled Python does not have"
    ]
    timed = to_python(Cell(4, "code", "%%time\nx = 1\ny = x + 1\n"), ipython=False)
    assert timed.source.splitlines() == ["", "x = 1", "y = x + 1"]  # the body on its own lines
    assert timed.notes == ["cell 4: %%time was left out so that the cell's lines are measured one by one"]


def test_with_ipython_every_line_stays_where_it_was() -> None:
    pytest.importorskip("IPython")
    made = to_python(CELL, ipython=True)
    lines = made.source.splitlines()
    assert len(lines) == len(CELL.lines)
    assert lines[1] == "get_ipython().run_line_magic('time', 'x = torch.ones(3)')"
    assert lines[3].strip().startswith("get_ipython().system(")
    assert lines[4] == "    y = x * i"
    assert made.uses_ipython and made.notes == []
