"""The one run's progress (job/progress.py): the runner's file so far, read and made the
document so far, ranked; a file caught half written is skipped."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.job import progress
from bottleneck_lsp.schema.model import Document
from repository import ONE_RUN


def _runner_file(tmp_path: Path) -> tuple[Path, Document]:
    """The fixture's one run as the runner writes its progress: the sample pass's part with
    its windowed (cpu) part; and the document before the run (no pass)."""
    raw = json.loads(ONE_RUN.read_text())
    sample = next(p for p in raw["passes"] if p["name"] == "sample")
    cpu = next(p for p in raw["passes"] if p["name"] == "cpu")
    part: dict[str, Any] = {**sample, "windowed": cpu}
    path = tmp_path / "sample.json.progress.json"
    path.write_text(json.dumps(part))
    before = Document.from_json({**raw, "passes": [], "ranking": None})
    return path, before


def test_the_document_so_far_is_ranked_as_the_end_would_be(tmp_path: Path) -> None:
    path, before = _runner_file(tmp_path)
    seen, part = progress._read(str(path), 0)
    assert part is not None and seen > 0
    now = progress.so_far(before, part)
    assert [p.name for p in now.passes] == ["sample", "cpu"]  # (no cProfile table so far)
    assert now.ranking is not None and now.ranking.lines
    whole = ranking.conclude(Document.from_json(json.loads(ONE_RUN.read_text())))
    assert whole.ranking is not None
    assert now.ranking.lines[0].key == whole.ranking.lines[0].key  # the same first line
    assert progress._read(str(path), seen) == (seen, None)  # unchanged: nothing new


def test_a_half_written_file_is_skipped(tmp_path: Path) -> None:
    path, _ = _runner_file(tmp_path)
    path.write_text(path.read_text()[:500])
    assert progress._read(str(path), 0) == (0, None)
    assert progress._read(str(tmp_path / "missing.json"), 0) == (0, None)


def test_watch_emits_each_new_file_until_cancelled(tmp_path: Path) -> None:
    path, before = _runner_file(tmp_path)
    got: list[int] = []

    async def main() -> None:
        watching = asyncio.ensure_future(progress.watch(str(path), before, lambda doc, n: got.append(n)))
        for _ in range(100):
            await asyncio.sleep(0.05)
            if got:
                break
        watching.cancel()
        await asyncio.gather(watching, return_exceptions=True)

    asyncio.run(main())
    assert got == [3]  # the fixture's three windows, once
