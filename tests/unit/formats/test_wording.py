"""A hot line's words (formats/wording.py)."""

from __future__ import annotations

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.formats import wording
from bottleneck_lsp.schema.model import Cell
from repository import recorded


def test_a_python_share_that_would_print_as_zero_is_left_out() -> None:
    row = ranking.all_rows(recorded())[0]
    wall = row.columns[ranking.WALL]
    row.columns[ranking.PYTHON] = Cell(time_s=wall.time_s * 0.0001, share=0.0001)
    assert "running Python" not in wording.message(row)
    row.columns[ranking.PYTHON] = Cell(time_s=wall.time_s * 0.2, share=0.2)
    assert "20.0% running Python" in wording.message(row)
