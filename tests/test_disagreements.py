"""Passes that did not do the same work are said to disagree; passes that did, never.

Real runs with real torch (sample, cprofile and cpu passes, as by default on a CPU)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.formats import report
from bottleneck_lsp.lsp import annotations
from bottleneck_lsp.lsp.summary import summary_line
from helpers import SCRIPTS, marker_line, run_typed

PASSES = ("sample", "cprofile", "cpu")
SEPARATE = {"separate_runs": True}  # passes disagree only between runs: one per pass


def test_a_script_doing_different_work_per_pass_is_flagged(tmp_path: Path) -> None:
    doc = run_typed("counts_vary.py", str(tmp_path / "runs"), passes=PASSES, **SEPARATE)
    found = ranking.disagreements(doc)
    assert [d.function for d in found] == ["step"], found
    step = found[0]
    # the cprofile pass ran second (10 + 7 calls), the cpu pass third (10 + 14)
    assert step.counts == {"cprofile": 17, "cpu": 24}
    assert step.line == 14 and step.file == str(SCRIPTS / "counts_vary.py")
    text = report.render(doc, cwd=str(SCRIPTS))
    assert (
        "counts_vary.py:14:1: warning: passes disagree on call counts: `step` ran "
        "17 times under cprofile, 24 times under cpu." in text
    )
    assert "passes disagree on call counts" in summary_line(doc, [])
    assert doc.ranking is not None and doc.ranking.disagreements == found


def test_a_script_doing_the_same_work_is_not_flagged() -> None:
    doc = run_typed("counts_steady.py", passes=PASSES, **SEPARATE)
    assert doc.status == "ok"
    cpu = doc.pass_named("cpu")
    expected = {"batches", "forward", "depth"} | ({"<listcomp>"} if sys.version_info < (3, 12) else set())
    assert cpu is not None and {f.function for f in cpu.function_calls} >= expected
    assert ranking.disagreements(doc) == []
    assert "disagree" not in report.render(doc)


def test_an_autograd_pass_alone_counts_nothing_it_could_not_compare() -> None:
    """With no other pass that counts entries (cprofile, cuda), the cpu pass does not count
    them: the check has nothing to compare with, and on 3.10/3.11 the counter is a profile
    hook that costs what cProfile costs. Its lines are the same."""
    alone = run_typed("counts_steady.py", passes=("sample", "cpu"))
    paired = run_typed("counts_steady.py", passes=("cprofile", "cpu"))
    cpu_alone, cpu_paired = alone.pass_named("cpu"), paired.pass_named("cpu")
    assert cpu_alone is not None and cpu_paired is not None
    assert cpu_alone.status == "ok" and cpu_alone.function_calls == []
    assert {f.function for f in cpu_paired.function_calls} >= {"batches", "forward", "depth"}
    assert {(r.file, r.line) for r in cpu_alone.lines} == {(r.file, r.line) for r in cpu_paired.lines}


@pytest.mark.parametrize("exact_lines", [True, False], ids=["line-marker", "python-tracer"])
def test_a_threaded_script_doing_the_same_work_is_not_flagged(exact_lines: bool) -> None:
    """On Python 3.12+ cProfile counts every thread's calls; the Python tracer (the cuda
    pass's, and the cpu pass's without exact lines) records the main thread's only, so its
    counts read as a disagreement there until the counter counted them instead."""
    doc = run_typed("counts_threaded.py", passes=("cprofile", "cpu"), exact_lines=exact_lines)
    assert doc.status == "ok"
    expected = 8 if sys.version_info >= (3, 12) else 3
    cprofile, cpu = doc.pass_named("cprofile"), doc.pass_named("cpu")
    assert cprofile is not None and cpu is not None
    assert [f.ncalls for f in cprofile.functions if f.user and f.function == "work"] == [expected]
    assert [f.count for f in cpu.function_calls if f.function == "work"] == [expected]
    assert ranking.disagreements(doc) == []
    assert "disagree" not in report.render(doc)


def test_a_thread_the_script_starts_is_named_where_a_pass_does_not_see_it() -> None:
    """With the Python tracer (the cuda pass, --no-exact-lines) torch's profiler records the
    main thread's ops; cProfile before 3.12 its calls: the passes say so when the script
    started a thread itself (the sample pass's own thread, which the runner starts, is not
    counted)."""
    doc = run_typed("counts_threaded.py", passes=("sample", "cprofile", "cpu"), **SEPARATE)
    notes = {p.name: [n for n in p.notes if "thread(s)" in n] for p in doc.passes}
    assert notes["sample"] == []
    assert notes["cpu"] == []  # it records every thread's ops (the next test)
    traced = run_typed("counts_threaded.py", passes=("cpu",), exact_lines=False)
    assert [n for p in traced.passes for n in p.notes if "thread(s)" in n] == [
        "the script started 1 thread(s); torch's profiler records the ops of the script's main "
        "thread (and autograd's), not theirs (the sample pass lists the lines other threads ran)"
    ]
    if sys.version_info < (3, 12):
        assert (
            len(notes["cprofile"]) == 1
            and "cProfile counts the main thread's calls only" in notes["cprofile"][0]
        )
    else:
        assert notes["cprofile"] == []
    assert "the script started 1 thread(s)" in report.render(traced)
    with_memory = run_typed("counts_threaded.py", passes=("cpu", "memory"))
    assert [n for p in with_memory.passes for n in p.notes if "thread(s)" in n] == [
        "the script started 1 thread(s); torch's profiler records the ops of the script's main "
        "thread (and autograd's), not theirs; without memory among the passes, this pass records "
        "theirs too (the sample pass lists the lines other threads ran)"
    ]
    steady = run_typed("counts_steady.py", passes=("cpu",))
    assert not any("thread(s)" in n for p in steady.passes for n in p.notes)


def test_the_ops_of_threads_the_script_starts_are_charged_to_their_lines() -> None:
    """The cpu pass records every thread's ops (torch's profile_all_threads) and its line
    marker follows the threads the script or a library starts: the thread's matmul is the
    first hotspot line, the main thread's line is there, the pool worker's has its ops."""
    doc = run_typed("threaded_hot.py", passes=("cpu",))
    assert doc.status == "ok"
    cpu = doc.pass_named("cpu")
    assert cpu is not None and not any("thread(s)" in n for n in cpu.notes), cpu.notes
    text = report.render(doc, cwd=str(SCRIPTS))
    hot = text[text.index("Hotspots by source line") :].splitlines()
    rows = [row for row in hot if "threaded_hot.py:" in row]
    assert "threaded_hot.py:12" in rows[0], hot[:8]  # the thread's matmul, first
    # the pool worker's line and the main thread's (small: not always above the table's
    # threshold) have their ops
    # (torch calls counted: which of a line's ops are its top five by time varies between
    # runs among ops this small, and a check of their names failed one run in five)
    calls = {ln.line: ln.count for ln in cpu.lines}
    assert calls.get(16) == 12, cpu.lines  # 4 calls of pooled(): a slice, a multiply, a sum
    assert calls.get(27) == 3, cpu.lines  # a + 1, three times


def test_a_threads_hot_line_is_shown_and_marked_with_the_default_passes() -> None:
    """With the default passes (memory on: the cpu pass sees the main thread's ops only), the
    sample pass's other-thread looks put the thread's line in the hotspot table, its
    compiler-style line, the diagnostic, the lens and the hover: where the main thread only
    waits (``thread.join()``), the work is on the thread's line."""
    doc = run_typed("threaded_hot.py")
    assert doc.status == "ok"
    hot_line = 12
    row = next(r for r in ranking.hotspots(doc) if r.line == hot_line)
    cell = row.columns[ranking.THREADS]
    assert cell.share > 0.5 and ranking.marked_for(row) == ranking.THREADS
    text = report.render(doc, cwd=str(SCRIPTS))
    table = text[text.index("Hotspots by source line") :].splitlines()
    shown = next(x for x in table if f"threaded_hot.py:{hot_line}  " in x)
    assert f"{cell.share * 100:.1f}%" in shown and "(a @ a).sum()" in shown
    assert "  threads: the same sampled wall time: other threads'" in text
    said = next(x for x in text.splitlines() if x.startswith(f"threaded_hot.py:{hot_line}:9: warning: "))
    assert "other threads ran here" in said and "of the main thread's" in said
    items = annotations.build(doc, ranking.Thresholds())
    marked = next(a for a in items if a.row is not None and a.line == hot_line - 1)
    diagnostic = json.loads(annotations.diagnostic(marked, ranking.Thresholds()) or "{}")
    assert diagnostic["code"] == ranking.THREADS and "other threads ran here" in diagnostic["message"]
    lens = annotations.code_lens(marked)
    assert lens is not None and lens.command is not None
    assert lens.command.title.startswith("threads "), lens.command.title
    assert "| threads |" in annotations.hover([marked], doc)


def test_a_thread_that_only_waits_at_a_line_is_said_to_wait_not_run() -> None:
    """The watcher thread of waits_forever.py is blocked in ``stop.wait()`` the whole run:
    the threads column reads its CPU clock and says it waited there (a note, not the
    warning a running thread's line gets); the working thread of threaded_hot.py above
    still reads "ran" (issue 44: a waiting thread was described as working)."""
    doc = run_typed("waits_forever.py", passes=("sample",))
    assert doc.status == "ok"
    waits = marker_line("waits_forever.py", "WAITS")
    row = next(r for r in ranking.all_rows(doc) if r.line == waits)
    cell = row.columns[ranking.THREADS]
    assert cell.running_s is not None and cell.running_s < 0.1 * cell.time_s and ranking.threads_waited(cell)
    assert ranking.severity(row, ranking.Thresholds()) != ranking.WARNING
    text = report.render(doc, cwd=str(SCRIPTS))
    said = next(x for x in text.splitlines() if x.startswith(f"waits_forever.py:{waits}:5: "))
    assert said.startswith(f"waits_forever.py:{waits}:5: note: other threads waited here "), said
    assert "of it on a CPU: blocked in a lock, an event, a queue or I/O, not running)" in said
    assert "  watcher: " in text and "on a CPU (waiting)" in text
