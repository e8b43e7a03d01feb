"""The ranking's files kept as line hashes (job/sources.py), for ``diff``."""

from __future__ import annotations

from pathlib import Path

from bottleneck_lsp.job import sources
from bottleneck_lsp.schema.model import Document
from repository import recorded


def test_every_file_of_the_ranking_is_read_line_by_line(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("# -*- coding: latin-1 -*-\nx = 'caf\xe9'\n\n  x = 1\n", encoding="latin-1")
    assert sources.file_hashes(str(script)) == [
        sources.line_hash("# -*- coding: latin-1 -*-"),
        sources.line_hash("x = 'caf\xe9'"),
        sources.line_hash(""),
        sources.line_hash("x = 1"),  # indentation left out
    ]
    assert sources.file_hashes(str(tmp_path / "gone.py")) is None
    doc: Document = recorded()
    assert doc.ranking is not None
    for row in doc.ranking.lines:  # one of the ranking's files is here, the others are not
        row.file = str(tmp_path / f"gone{row.line % 3}.py")
    doc.ranking.lines[0].file = str(script)
    kept = sources.read(doc)
    assert [s.file for s in kept] == [str(script)] and len(kept[0].hashes) == 4
    assert len({sources.line_hash("a"), sources.line_hash("b")}) == 2
