"""Diagnostics, lenses and hovers (lsp/annotations.py) of a recorded result, as a client
reads them; the server's summary line (lsp/summary.py)."""

from __future__ import annotations

import dataclasses
import json
import re

from lsprotocol import types
from pygls.protocol import default_converter

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.analysis.ranking import Thresholds
from bottleneck_lsp.formats import wording
from bottleneck_lsp.lsp import annotations
from bottleneck_lsp.lsp.summary import summary_line
from repository import one_run, recorded


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


def test_a_one_run_hover_and_summary_say_what_the_windows_cover() -> None:
    doc = one_run()
    items = annotations.build(doc, Thresholds())
    hot = next(a for a in items if a.row)
    assert hot.line == 41  # line 42, loss.backward(), as in the whole-run recording
    hover = annotations.hover([hot], doc)
    assert re.search(
        r"\| op CPU \| \d+\.\d% \| [\d.]+ ms \| all torch ops' self CPU time \(cpu pass\), recorded in 3 "
        r"windows, 1\.62 s of the 4\.80 s run \(34%\) \|",
        hover,
    ), hover
    summary = summary_line(doc, items)
    assert summary.startswith("train.py: done; top line train.py:42") and summary.endswith(
        "; ran once, op CPU and memory recorded in 3 windows, 1.62 s of the 4.80 s run (34%)"
    ), summary
