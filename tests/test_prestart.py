"""Without a fork server (``--no-fork``), the pass after cProfile is started while
cProfile runs, so that its interpreter's start-up (import torch, 2-3 s) overlaps the
cProfile pass (issue 7). It waits, start-up done, until its turn: it must run nothing of
the script before that, and go away when its pass will not run."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from bottleneck_lsp.job.job import Job
from bottleneck_lsp.job.spec import JobSpec
from helpers import marker_line, run_job
from lsp_helpers import runner_pids


def part(doc: dict[str, Any], name: str) -> dict[str, Any]:
    return next(p for p in doc["passes"] if p["name"] == name)


def run(spec: JobSpec) -> dict[str, Any]:
    return asyncio.run(Job(spec).run()).to_json()


def test_the_pass_after_cprofile_starts_ahead_and_attributes_as_without() -> None:
    ahead = run_job("fn_call.py", passes=("cprofile", "cpu"), fork=False)
    assert ahead["status"] == "ok"
    assert "prestarted" not in part(ahead, "cprofile")
    assert part(ahead, "cpu")["prestarted"]["waited_s"] >= 0
    alone = run_job("fn_call.py", passes=("cprofile", "cpu"), prestart=False, fork=False)
    assert "prestarted" not in part(alone, "cpu")
    hot = marker_line("fn_call.py")
    assert part(ahead, "cpu")["lines"][0]["line"] == part(alone, "cpu")["lines"][0]["line"] == hot


def test_a_runner_started_ahead_runs_nothing_when_its_pass_is_skipped(tmp_path: Path) -> None:
    script = tmp_path / "counts_runs_then_exits.py"
    script.write_text(
        "import sys\nwith open('runs.txt', 'a') as f:\n    f.write('ran\\n')\nsys.exit(3)\n", encoding="utf-8"
    )
    spec = JobSpec(
        script=str(script), python=sys.executable, cwd=str(tmp_path), passes=("cprofile", "cpu"), fork=False
    )
    doc = run(spec)
    assert part(doc, "cprofile")["status"] == "exit"
    cpu = part(doc, "cpu")
    assert cpu["status"] == "skipped"
    assert cpu["skip_reason"] == "the script exited with status 3 in the cprofile pass"
    assert (tmp_path / "runs.txt").read_text() == "ran\n"  # once: the waiting runner never ran it
    assert runner_pids(script.name) == []


def test_stopping_during_cprofile_takes_the_waiting_runner_too(tmp_path: Path) -> None:
    script = tmp_path / "loops_for_ever.py"
    script.write_text("import torch\nx = torch.randn(64, 64)\nwhile True:\n    y = x @ x\n", encoding="utf-8")
    spec = JobSpec(script=str(script), python=sys.executable, passes=("cprofile", "cpu"), fork=False)

    async def scenario() -> tuple[dict[str, Any], int]:
        job = Job(spec)
        task = asyncio.ensure_future(job.run())
        seen = 0
        for _ in range(600):  # both runners up: cProfile's and the waiting CPU pass's
            seen = len(runner_pids(script.name))
            if seen == 2:
                break
            await asyncio.sleep(0.05)
        job.stop()
        return (await task).to_json(), seen

    doc, seen = asyncio.run(scenario())
    assert seen == 2
    assert part(doc, "cprofile")["status"] == "cancelled"
    assert part(doc, "cpu")["skip_reason"] == "the job was stopped"
    assert runner_pids(script.name) == []
