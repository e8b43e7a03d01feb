"""Analysis and presentation on a recorded result (examples/train.py, CPU, torch 2.13),
edit tracking and settings: pure functions, no process started."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter

from bottleneck_lsp import analysis, report
from bottleneck_lsp.analysis import Thresholds
from bottleneck_lsp.lsp import annotations, tracking
from bottleneck_lsp.lsp.settings import Settings, merge
from bottleneck_lsp.result import load, validate

FIXTURE = Path(__file__).parent / "fixtures" / "train-cpu.json"


def recorded() -> dict:
    return json.loads(FIXTURE.read_text())


def test_recorded_result_is_valid_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    assert validate(recorded()) == []
    bad = recorded()
    bad["version"] = 99
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    try:
        load(path)
    except ValueError as exc:
        assert "this tool reads 1" in str(exc)
    else:
        raise AssertionError("a version 99 document was accepted")


def test_hotspots_respect_thresholds_and_rank_by_share() -> None:
    doc = recorded()
    spots = analysis.hotspots(doc, Thresholds(min_share=0.05, top=3))
    shares = [h.share for h in spots]
    assert shares == sorted(shares, reverse=True)
    for kind in (analysis.CPU, analysis.PYTHON):
        of_kind = [h for h in spots if h.kind == kind]
        assert all(h.share >= 0.05 for h in of_kind[3:])
    strict = analysis.hotspots(doc, Thresholds(min_share=1.0, top=1))
    assert len([h for h in strict if h.kind == analysis.CPU]) == 1
    assert analysis.verdict(doc) is None  # no CUDA pass in this recording


def test_text_report_sections_and_compiler_lines() -> None:
    text = report.render(recorded(), cwd="/")
    text.encode("ascii")
    assert (
        text.index("Environment Summary")
        < text.index("cProfile output")
        < text.index("autograd profiler output (CPU mode)")
    )
    assert "CUDA mode" not in text
    assert any(": warning: " in line and "% of CPU time" in line for line in text.splitlines())


def test_annotations_one_diagnostic_per_line_with_lens_and_hover() -> None:
    doc = recorded()
    items = annotations.build(doc, Thresholds())
    keys = [(a.uri, a.line) for a in items if a.hotspots]
    assert len(keys) == len(set(keys))
    hot = max((a for a in items if a.hotspots), key=lambda a: a.hotspots[0].share)
    text = annotations.diagnostic(hot, Thresholds())
    assert text is not None and text.isascii()
    diag = json.loads(text)
    assert diag["source"] == "bottleneck"
    assert diag["range"]["start"]["line"] == hot.line
    assert diag["data"]["hotspots"][0]["share"] == hot.hotspots[0].share
    # what a client's LSP library makes of it: a valid Diagnostic with the same message
    typed = default_converter().structure(diag, types.Diagnostic)
    assert typed.message.split("\n")[0] == annotations.message(hot.hotspots[0])
    assert typed.code == hot.hotspots[0].kind
    lens = annotations.code_lens(hot)
    assert lens is not None and lens.command is not None and "%" in lens.command.title
    assert "| pass | kind |" in annotations.hover([hot], doc)


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
