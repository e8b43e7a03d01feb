"""Truthful hotspots: on every corpus script the first line the user sees (the CLI's first
compiler-style line, the server's summary) is the planted line with the most measured time,
and every planted line that takes at least 20% of the script's time is reported within 10
percentage points of its measured share in each column (wall time, op CPU time). The
passes never disagree on call counts: every corpus script does the same work each run.

Three runs without any profiler (fidelity/timing.py) and three profiled runs, interleaved,
medians compared; all use one intra-op thread (see docs/fidelity.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fidelity.checker import check, scripts


@pytest.mark.slow
@pytest.mark.parametrize("script", scripts(), ids=lambda p: p.name)
def test_corpus_script(script: Path) -> None:
    outcome = check(script)
    assert outcome.planted, "no planted line found"
    assert outcome.top_right, (outcome.shown_first, outcome.summary_top, outcome.planted, outcome.notes)
    assert "wall" in outcome.columns
    assert outcome.disagreements == []  # deterministic scripts: the passes ran the same work
    for planted in outcome.planted:
        if planted.measured_share >= 0.20:
            for column in outcome.columns:
                assert planted.error_pp(column) <= 10.0, (
                    column,
                    planted,
                    outcome.reported_top,
                    outcome.notes,
                )
