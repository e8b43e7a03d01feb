"""Analysis and presentation on a recorded result (examples/train.py, CPU, torch 2.13),
edit tracking and settings: pure functions, no process started."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.analysis.ranking import Thresholds
from bottleneck_lsp.analysis.result import load, validate
from bottleneck_lsp.formats import report, wording
from bottleneck_lsp.lsp import annotations, tracking
from bottleneck_lsp.lsp.summary import summary_line
from bottleneck_lsp.schema.model import Cell, Document
from bottleneck_lsp.settings import Settings, merge

FIXTURE = Path(__file__).parent / "fixtures" / "train-cpu.json"


def recorded_json() -> dict:
    return json.loads(FIXTURE.read_text())


def recorded() -> Document:
    return Document.from_json(recorded_json())


def test_recorded_result_is_valid_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    assert validate(recorded_json()) == []
    bad = recorded_json()
    bad["version"] = 99
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    try:
        load(path)
    except ValueError as exc:
        assert "this tool reads 2" in str(exc)
    else:
        raise AssertionError("a version 99 document was accepted")


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


def test_text_report_sections_and_one_compiler_line_per_line() -> None:
    text = report.render(recorded(), cwd="/")
    text.encode("ascii")
    assert (
        text.index("Environment Summary")
        < text.index("Sampled time per line")
        < text.index("cProfile output")
        < text.index("autograd profiler output (CPU mode)")
        < text.index("Hotspots by source line")
    )
    assert "CUDA mode" not in text
    assert "start-up, not charged to lines: import torch" in text and "torch's compiler stack" in text
    compiler = [line for line in text.splitlines() if re.match(r"\S+:\d+:\d+: (warning|note): ", line)]
    assert (
        compiler[0].startswith("work/main/examples/train.py:42:9: warning: ")
        or ":42:9: warning: " in compiler[0]
    )
    assert "% of wall time" in compiler[0] and "% of op CPU time" in compiler[0]
    assert "backward of line 23" in compiler[0]
    where = [line.split(": ", 1)[0] for line in compiler]
    assert len(where) == len(set(where))  # one per line
    table = text[text.index("Hotspots by source line") :]
    assert "  wall  Python  op CPU" in table and "Ranked by wall time" in table
    assert "wall: the main thread's sampled wall time (sample pass)" in table


def test_annotations_one_diagnostic_per_line_with_lens_and_hover() -> None:
    doc = recorded()
    items = annotations.build(doc, Thresholds())
    keys = [(a.uri, a.line) for a in items if a.row]
    assert len(keys) == len(set(keys))
    hot = next(a for a in items if a.row)
    assert hot.row is not None and hot.line == 41  # 0-based: line 42, the first row
    text = annotations.diagnostic(hot, Thresholds())
    assert text is not None and text.isascii()
    diag = json.loads(text)
    assert diag["source"] == "bottleneck"
    assert diag["range"]["start"]["line"] == hot.line
    assert diag["data"]["row"]["share"] == hot.row.share
    assert diag["data"]["row"]["columns"]["cpu-op-time"]["share"] == hot.row.columns[ranking.CPU].share
    # what a client's LSP library makes of it: a valid Diagnostic with the same message
    typed = default_converter().structure(diag, types.Diagnostic)
    assert typed.message == wording.message(hot.row)
    assert typed.code == ranking.WALL
    assert typed.related_information and typed.related_information[0].location.range.start.line in (
        20,
        22,
        40,
    )
    lens = annotations.code_lens(hot)
    assert lens is not None and lens.command is not None
    assert re.match(r"\d+\.\d% wall · \d+ ms · aten::mm ×330 · op CPU \d+%$", lens.command.title)
    hover = annotations.hover([hot], doc)
    assert "| wall (ranked by) |" in hover and "| op CPU |" in hover and "Ops from this line" in hover
    # the server's summary names the same first line
    summary = summary_line(doc, items)
    assert "top line train.py:42" in summary and "% of wall time" in summary


def test_lenses_and_diagnostics_only_above_the_thresholds() -> None:
    doc = recorded()
    few = annotations.build(doc, Thresholds(min_share=0.3, top=1))
    assert [a.line + 1 for a in few if a.row] == [42, 23]  # >= 30%, or the top 1


def _change(
    line: int, col: int, end_line: int, end_col: int, text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, col), types.Position(end_line, end_col)), text=text
    )


def test_tracking_moves_keeps_and_drops() -> None:
    a = annotations.Annotation("s", "u", 2, "y = f(x)")
    lines = ["a", "b", "c", "y = f(x)"]
    assert [x.line for x in tracking.apply_change([a], _change(0, 0, 0, 0, "c\n"), lines)] == [3]
    # Enter at the end of the hot line itself: the line's text is still there
    after = ["a", "b", "y = f(x)", ""]
    assert [x.line for x in tracking.apply_change([a], _change(2, 8, 2, 8, "\n"), after)] == [2]
    # the hot line edited: dropped
    edited = ["a", "b", "y = g(x)"]
    assert tracking.apply_change([a], _change(2, 4, 2, 5, "g"), edited) == []
    # lines removed above
    assert [x.line for x in tracking.apply_change([a], _change(0, 0, 1, 0, ""), ["b", "y = f(x)"])] == [1]
    # a whole-document change keeps only what still matches
    full = types.TextDocumentContentChangeWholeDocument(text="x")
    assert tracking.apply_change([a], full, ["a", "b", "y = f(x)"]) == [a]
    assert tracking.apply_change([a], full, ["a", "b", "z"]) == []


def test_settings_merge_reports_bad_values_and_keeps_good_ones() -> None:
    s = merge(Settings(), {"bottleneck": {"top": 3, "minShare": 2, "nope": 1, "passes": ["cpu"]}})
    assert s.top == 3 and s.passes == ("cpu",)
    assert s.min_share == Settings().min_share
    assert any("minShare" in p for p in s.problems) and any("nope" in p for p in s.problems)
    assert merge(Settings(), "junk").problems


def test_the_distributed_settings_are_checked_as_the_command_line_checks_them() -> None:
    s = merge(Settings(), {"torchrunArgs": ["--nnodes=2", "--node_rank", "1"], "collectiveSizes": True})
    assert s.torchrun_args == ("--nnodes", "2", "--node-rank", "1") and s.collective_sizes and not s.problems
    bad = merge(s, {"torchrunArgs": ["--run-path", "x.py"], "collectiveSizes": "yes"})
    assert bad.torchrun_args == s.torchrun_args and bad.collective_sizes  # the good values stay
    assert any("'torchrunArgs': torchrun option --run-path is not supported here" in p for p in bad.problems)
    assert any("'collectiveSizes': expected true or false" in p for p in bad.problems), bad.problems


def test_the_duration_setting_takes_seconds_and_0_or_null_for_the_whole_run() -> None:
    s = merge(Settings(), {"duration": 30})
    assert s.duration == 30.0 and not s.problems
    assert merge(s, {"duration": 0}).duration is None and merge(s, {"duration": None}).duration is None
    bad = merge(s, {"duration": -1})
    assert bad.duration == 30.0  # the good value stays
    assert any(
        "'duration': expected seconds (a positive number), or 0 for the whole run" in p for p in bad.problems
    )


def test_a_python_share_that_would_print_as_zero_is_left_out() -> None:
    row = ranking.all_rows(recorded())[0]
    wall = row.columns[ranking.WALL]
    row.columns[ranking.PYTHON] = Cell(time_s=wall.time_s * 0.0001, share=0.0001)
    assert "running Python" not in wording.message(row)
    row.columns[ranking.PYTHON] = Cell(time_s=wall.time_s * 0.2, share=0.2)
    assert "20.0% running Python" in wording.message(row)


def test_a_diagnostic_ends_where_its_line_does_in_utf16_units() -> None:
    """LSP positions count UTF-16 code units: an emoji is two, so a range made of code
    points ended one short on such a line."""
    hot = next(a for a in annotations.build(recorded(), Thresholds()) if a.row)
    text = "loss = model(x)  # \U0001f525 hot"
    diag = json.loads(annotations.diagnostic(dataclasses.replace(hot, text=text), Thresholds()) or "{}")
    span = diag["range"]["end"]["character"] - diag["range"]["start"]["character"]
    assert span == len(text) + 1  # one character outside the BMP: two units


def test_a_function_lens_counts_its_calls_in_words() -> None:
    """A hot function's lens and hover say "1 call", not "1 calls" (seen on pytorch/examples'
    vae: its train() ran once)."""
    items = annotations.build(recorded(), Thresholds())
    hot = next(a for a in items if a.function is not None)
    once = dataclasses.replace(hot, function=dataclasses.replace(hot.function, ncalls=1), memo={})
    assert annotations.lens_title(once).endswith("· 1 call"), annotations.lens_title(once)
    assert f"`{hot.function.function}`: 1 call," in annotations.hover([once], None)
    twice = dataclasses.replace(once, function=dataclasses.replace(hot.function, ncalls=2), memo={})
    assert annotations.lens_title(twice).endswith("· 2 calls")


def test_a_line_of_one_torch_call_says_so_in_its_hover() -> None:
    """The hover's ops note said "Ops from this line (1 calls)" on a line that made one torch
    call (seen through Emacs's Eglot, on `x = torch.randn(...)`)."""
    items = annotations.build(recorded(), Thresholds())
    hot = next(a for a in items if a.row is not None and a.row.ops)
    once = dataclasses.replace(hot, row=dataclasses.replace(hot.row, count=1), memo={})
    assert "Ops from this line (1 call): " in annotations.hover([once], None)
    many = dataclasses.replace(hot, row=dataclasses.replace(hot.row, count=3), memo={})
    assert "Ops from this line (3 calls): " in annotations.hover([many], None)
