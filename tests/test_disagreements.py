"""Passes that did not do the same work are said to disagree; passes that did, never.

Real runs with real torch (sample, cprofile and cpu passes, as by default on a CPU)."""

from __future__ import annotations

import sys
from pathlib import Path

from bottleneck_lsp import analysis, report
from bottleneck_lsp.lsp.server import _summary
from helpers import SCRIPTS, run_typed

PASSES = ("sample", "cprofile", "cpu")


def test_a_script_doing_different_work_per_pass_is_flagged(tmp_path: Path) -> None:
    doc = run_typed("counts_vary.py", str(tmp_path / "runs"), passes=PASSES)
    found = analysis.disagreements(doc)
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
    assert "passes disagree on call counts" in _summary(doc, [])
    assert doc.ranking is not None and doc.ranking.disagreements == found


def test_a_script_doing_the_same_work_is_not_flagged() -> None:
    doc = run_typed("counts_steady.py", passes=PASSES)
    assert doc.status == "ok"
    cpu = doc.pass_named("cpu")
    expected = {"batches", "forward", "depth"} | ({"<listcomp>"} if sys.version_info < (3, 12) else set())
    assert cpu is not None and {f.function for f in cpu.function_calls} >= expected
    assert analysis.disagreements(doc) == []
    assert "disagree" not in report.render(doc)
