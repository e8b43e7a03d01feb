"""The text report (formats/report.py) of a recorded result."""

from __future__ import annotations

import re

from bottleneck_lsp.formats import report
from repository import one_run, recorded


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


def test_a_one_run_report_says_the_script_ran_once_and_what_the_windows_cover() -> None:
    text = report.render(one_run(), cwd="/")
    opening = " ".join(text.split("Environment Summary")[0].split())
    assert re.search(
        r"Your script ran once: sampled \(wall and CPU time per line, at nearly the script's own speed\) "
        r"for its whole run, with the autograd profiler on the CPU and cProfile in windows of that same "
        r"run \(recorded in 3 windows, 1\.62 s of the 4\.80 s run \(34%\)\)\.",
        opening,
    ), opening
    assert "note: op CPU time and memory recorded in 3 windows, 1.62 s of the 4.80 s run (34%)" in text
    assert "note: cProfile counted the calls within the windows of the one run" in text
    table = text[text.index("Hotspots by source line") :]
    assert (
        "op CPU: all torch ops' self CPU time (cpu pass), recorded in 3 windows, 1.62 s of the 4.80 s"
        in table
    )
    first = next(line for line in text.splitlines() if re.match(r"\S+:\d+:\d+: (warning|note): ", line))
    assert ":42:9: warning: " in first and "% of op CPU time" in first
