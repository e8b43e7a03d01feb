"""The one ranking (analysis/ranking.py) of a recorded result: rows, columns, thresholds."""

from __future__ import annotations

import dataclasses
import json

from bottleneck_lsp.analysis import coverage, ranking
from bottleneck_lsp.analysis.ranking import Thresholds
from bottleneck_lsp.formats import wording
from bottleneck_lsp.schema.model import Document, PassName
from repository import ONE_RUN, one_run, recorded


def test_one_row_per_line_ranked_by_wall_time_with_every_column() -> None:
    doc = recorded()
    rows = ranking.all_rows(doc)
    keys = [r.key for r in rows]
    assert len(keys) == len(set(keys))  # one row per line
    assert all(r.kind == ranking.WALL for r in rows)
    shares = [r.share for r in rows]
    assert shares == sorted(shares, reverse=True)
    top = rows[0]
    assert (top.line, top.text) == (42, "loss.backward()")  # the backward line, then the planted matmul
    assert rows[1].line == 23 and rows[1].text.startswith("h = torch.tanh(h @ self.mixer)")
    assert set(top.columns) >= {ranking.WALL, ranking.PYTHON, ranking.CPU}
    assert top.backward and {f.line for f in top.forward_lines} >= {23}
    # each column's shares are of one denominator, and add up to at most 1
    for kind in (ranking.WALL, ranking.CPU):
        assert sum(r.columns[kind].share for r in rows if kind in r.columns) <= 1.0 + 1e-6
    assert ranking.verdict(doc) is None  # no GPU in this recording
    # the ranking the document carries is this one, row for row
    assert doc.ranking is not None and doc.ranking.lines == rows


def test_thresholds_choose_the_rows_shown() -> None:
    doc = recorded()
    assert len(ranking.hotspots(doc, Thresholds(min_share=1.0, top=1))) == 1
    some = ranking.hotspots(doc, Thresholds(min_share=0.05, top=0))
    assert some and all(r.share >= 0.05 for r in some)
    many = ranking.hotspots(doc, Thresholds(min_share=1.0, top=5))
    assert [r.key for r in many] == [r.key for r in ranking.all_rows(doc)[:5]]


def test_without_the_sample_pass_rows_are_ranked_by_op_cpu_time() -> None:
    doc = recorded()
    doc.passes = [p for p in doc.passes if p.name != "sample"]
    rows = ranking.hotspots(ranking.conclude(doc), Thresholds())
    assert rows and all(r.kind == ranking.CPU for r in rows)
    assert rows[0].line == 42 and ranking.WALL not in rows[0].columns


def test_a_small_memory_peak_marks_no_line() -> None:
    """A line holding 68.6 KB at a small peak (74.6% of it) is no memory hotspot: under the
    floor, its share counts for nothing in marking lines (its figures stay)."""
    doc = one_run()
    row = next(r for r in ranking.all_rows(doc) if ranking.MEMORY in r.columns)
    cell = row.columns[ranking.MEMORY]
    small = dataclasses.replace(cell, share=0.746, bytes=68_600)
    big = dataclasses.replace(cell, share=0.746, bytes=ranking.MEMORY_FLOOR_BYTES)
    quiet = dataclasses.replace(row, share=0.0, columns={**row.columns, ranking.MEMORY: small})
    loud = dataclasses.replace(row, share=0.0, columns={**row.columns, ranking.MEMORY: big})
    assert ranking.memory_share(quiet) == 0.0 and ranking.memory_share(loud) == 0.746
    assert ranking.severity(quiet, Thresholds()) != ranking.WARNING
    assert ranking.severity(loud, Thresholds()) == ranking.WARNING


def _with_one_time_and_peak(importing_s: float, raised: int) -> ranking.Hotspot:
    """The one run's fixture, its optimizer line given import time and a rise of the peak RSS."""
    raw = json.loads(ONE_RUN.read_text())
    sample = next(p for p in raw["passes"] if p["name"] == "sample")
    line = sample["samples"]["lines"][-1]  # (sampled outside the windows: no windowed time)
    line.update(importing_s=importing_s, wall_s=importing_s or 0.01, windowed_s=0.0, rss_raised_bytes=raised)
    sample["samples"]["peak_rss"] = {
        "bytes": 400_000_000,
        "start_bytes": 260_000_000,
        "file": line["file"],
        "line": line["line"],
    }
    doc = ranking.conclude(Document.from_json(raw))
    return next(r for r in ranking.all_rows(doc) if r.key == (line["file"], line["line"]))


def test_one_time_import_and_the_peak_rss_are_columns_of_their_line() -> None:
    row = _with_one_time_and_peak(1.2, 80_000_000)
    assert row.columns[ranking.IMPORTING].time_s == 1.2
    assert row.columns[ranking.RSS].bytes == 80_000_000 and row.columns[ranking.RSS].share == 0.2
    text = wording.message(row)
    assert "1200 ms of the line's 1200 ms while torch imported its compiler stack (one-time work)" in text
    assert "raised the process's peak RSS by 80.0 MB (20.0% of the peak)" in text
    assert ranking.severity(row, Thresholds()) == ranking.WARNING  # (20% of the peak)


def test_a_small_rise_of_the_peak_rss_marks_no_line() -> None:
    row = _with_one_time_and_peak(0.0, ranking.RSS_FLOOR_BYTES - 1)
    assert ranking.RSS in row.columns and ranking.rss_share(row) == 0.0
    assert "peak RSS" not in wording.message(row)


def test_a_gpu_one_runs_device_column_says_what_its_windows_cover() -> None:
    """On a GPU's one run the cuda pass is recorded in the same windows as the cpu pass: the
    device column's legend says how much of the run they cover, as the op CPU column's does."""
    doc = one_run()
    cpu = doc.pass_named(PassName.CPU)
    assert cpu is not None and cpu.windows is not None
    assert ranking.denominators(doc)[ranking.DEVICE] == ranking.DENOMINATOR[ranking.DEVICE]
    doc.passes.append(dataclasses.replace(cpu, name=PassName.CUDA))
    said = ranking.denominators(doc)[ranking.DEVICE]
    assert said == f"{ranking.DENOMINATOR[ranking.DEVICE]}, {coverage.covered(cpu)}", said
    assert "recorded in" in said


def test_a_lines_one_time_work_does_not_scale_its_op_cpu_time() -> None:
    """The op CPU recorded in the windows is scaled by a line's sampled wall time over the
    run against in the windows; one-time work (importing, compiling) is on neither side: a
    line that also paid 10 s of it keeps its op CPU time (it read 64% of the op CPU for a
    2 ms op when its import scaled it)."""
    raw = json.loads(ONE_RUN.read_text())
    sample = next(p for p in raw["passes"] if p["name"] == "sample")
    line = max(sample["samples"]["lines"], key=lambda e: e.get("windowed_s") or 0.0)
    key = (line["file"], line["line"])

    def op_cpu(doc: Document) -> float:
        row = next(r for r in ranking.all_rows(doc) if r.key == key)
        return row.columns[ranking.CPU].time_s

    before = op_cpu(ranking.conclude(Document.from_json(json.loads(json.dumps(raw)))))
    for field in ("importing_s", "compiling_s"):
        changed = json.loads(json.dumps(raw))
        entry = next(
            e
            for e in next(p for p in changed["passes"] if p["name"] == "sample")["samples"]["lines"]
            if (e["file"], e["line"]) == key
        )
        entry.update({field: 10.0, "wall_s": entry["wall_s"] + 10.0})
        assert op_cpu(ranking.conclude(Document.from_json(changed))) == before, field
