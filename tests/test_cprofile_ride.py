"""The cprofile pass recorded in the cpu pass's run where the script's time is in C
(cprofile_ride.py, runner/ownstats.py's through_runner): one run of the script fewer, the
same table as a run of its own, and a run of its own after all when the cpu pass's run
was slowed.

Real jobs with real torch; the splice itself on real cProfile statistics of a real
TorchFunctionMode."""

from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import sys
from pathlib import Path
from typing import Any

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.formats import report
from bottleneck_lsp.job import cprofile_ride
from bottleneck_lsp.job.job import Job, JobEvent
from bottleneck_lsp.job.spec import JobSpec
from bottleneck_lsp.runner.ownstats import through_runner, without_runner
from bottleneck_lsp.schema.model import (
    CProfileTable,
    Document,
    EventBudget,
    Function,
    Pass,
    SampledLine,
    Samples,
    Tool,
    Totals,
)
from helpers import SCRIPTS, compiled, marker_line, typed


def _run(script: str, **spec: Any) -> tuple[Document, list[JobEvent]]:
    events: list[JobEvent] = []
    spec.setdefault("separate_runs", True)  # (the one run records cProfile in its windows)
    job = Job(JobSpec(script=str(SCRIPTS / script), python=sys.executable, **spec), on_event=events.append)
    doc = asyncio.run(job.run())
    typed(doc.to_json())  # the schema's one definition holds the new key too
    return doc, events


def _started(events: list[JobEvent]) -> list[tuple[str, int, int]]:
    return [(e.pass_name, e.index, e.total) for e in events if e.kind == "pass_start"]


def _calls(functions: list[Function]) -> dict[str, int]:
    """Call counts of the script's functions and of the torch and time calls it made."""
    return {
        f.function: f.ncalls
        for f in functions
        if f.user or any(name in f.function for name in ("sleep", "tanh", "relu", "sum", "randn"))
    }


def test_a_script_whose_time_is_in_c_gets_its_cprofile_table_from_the_cpu_pass() -> None:
    doc, events = _run("ops_bound.py")
    # two runs of the script: the progress counts three until the sample pass has told
    assert _started(events) == [("sample", 0, 3), ("cpu", 1, 2)]
    assert [(e.pass_name, e.index, e.total) for e in events if e.kind == "pass_end"] == [
        ("sample", 0, 2),
        ("cpu", 1, 2),
    ]
    assert [p.name for p in doc.passes] == ["sample", "cprofile", "cpu"]
    ridden = doc.pass_named("cprofile")
    assert ridden is not None and ridden.status == "ok" and ridden.within == "cpu"
    assert ridden.wall_s is None  # no process of its own
    # what the user reads: the table under "cProfile output", and why it has no run of its own
    text = report.render(doc, cwd=str(SCRIPTS))
    assert "under the autograd profiler on the CPU with cProfile in the same run." in " ".join(
        text.split("Costs are charged")[0].split()
    )
    section = text.split("cProfile output")[1].split("autograd profiler output")[0]
    assert "note: recorded in the cpu pass's run, one run of the script fewer" in section
    assert 'so "passes disagree" has no second run to compare (--separate-cprofile' in section
    assert "12    " in section and "ops_bound.py:10(step)" in section
    # the same table as cProfile's run of its own: the same calls, counted once each
    alone, alone_events = _run("ops_bound.py", separate_cprofile=True)
    assert _started(alone_events) == [("sample", 0, 3), ("cprofile", 1, 3), ("cpu", 2, 3)]
    own = alone.pass_named("cprofile")
    assert own is not None and own.within is None and own.wall_s is not None
    assert _calls(ridden.functions) == _calls(own.functions)
    assert _calls(ridden.functions)["step"] == 12
    assert _calls(ridden.functions)["<built-in method time.sleep>"] == 12
    # the sleeping is the most time in both tables (1.2 s of it)
    for table in (ridden, own):
        top = max(table.functions, key=lambda f: f.tottime_s)
        assert top.function == "<built-in method time.sleep>", top
        assert top.tottime_s >= 1.1
    # the first line the user sees is the same either way, and so are the calls its hover
    # lists (cProfile's calls made from it)
    hot = marker_line("ops_bound.py")
    assert doc.ranking is not None and alone.ranking is not None
    first, first_alone = doc.ranking.lines[0], alone.ranking.lines[0]
    assert first.line == first_alone.line == hot
    assert [(c.name, c.count) for c in first.calls] == [(c.name, c.count) for c in first_alone.calls]
    assert [(c.name, c.count) for c in first.calls] == [("sleep", 12)]


def test_one_run_is_not_compared_with_itself_for_passes_disagree() -> None:
    doc, _ = _run("ops_bound.py")
    ridden = doc.pass_named("cprofile")
    cpu = doc.pass_named("cpu")
    assert ridden is not None and ridden.within == "cpu" and cpu is not None
    step = next(f for f in ridden.functions if f.function == "step")
    step.ncalls = step.primitive_calls = 11  # as if the tables disagreed
    assert ranking.disagreements(doc) == []
    ridden.within = None  # two runs that disagree are still reported
    found = ranking.disagreements(doc)
    assert [(d.function, d.counts) for d in found] == [("step", {"cprofile": 11, "cpu": 12})]


def test_a_cpu_pass_run_slowed_by_the_table_gives_cprofile_a_run_of_its_own() -> None:
    doc, events = _run("ops_bound_slowed_by_cprofile.py")
    # planned as two runs; the cpu pass's took 1.7x the sample pass's: cprofile ran third
    assert _started(events) == [("sample", 0, 3), ("cpu", 1, 2), ("cprofile", 2, 3)]
    assert [p.name for p in doc.passes] == ["sample", "cpu", "cprofile"]
    alone = doc.pass_named("cprofile")
    assert alone is not None and alone.status == "ok" and alone.within is None
    assert alone.wall_s is not None
    note = next(n for n in alone.notes if n.startswith("run after the cpu pass, alone"))
    assert f"(more than {cprofile_ride.MAX_COST}x)" in note, note
    text = report.render(doc, cwd=str(SCRIPTS))
    assert "note: run after the cpu pass, alone: the cpu pass's run, with cProfile in it, took" in text
    assert doc.ranking is not None and doc.ranking.lines[0].line == marker_line(
        "ops_bound_slowed_by_cprofile.py"
    )


def test_a_script_whose_time_is_in_python_keeps_cprofile_in_a_run_of_its_own() -> None:
    doc, events = _run("python_bound.py")
    assert _started(events) == [("sample", 0, 3), ("cprofile", 1, 3), ("cpu", 2, 3)]
    own = doc.pass_named("cprofile")
    assert own is not None and own.within is None
    share = cprofile_ride.python_share(doc.pass_named("sample"))
    assert share is not None and share > cprofile_ride.MAX_PYTHON_SHARE


# -- the choice, figure by figure ---------------------------------------------------------


def _passes(
    body: float = 2.0, python: float = 0.02, cpu_body: float = 2.0, events: int = 20_000, **cpu: Any
) -> tuple[Document, Pass]:
    sample = Pass(
        name="sample",
        status="ok",
        script_wall_s=body,
        samples=Samples(
            interval_s=0.001,
            wall_s=body,
            lines=[SampledLine(file="/w/a.py", line=3, wall_s=body, python_s=python * body)],
        ),
    )
    doc = Document(
        schema="x",
        version=2,
        tool=Tool(name="t", version="0"),
        script="/w/a.py",
        args=[],
        cwd="/w",
        roots=["/w"],
        python="python3",
        passes=[sample],
        status="ok",
    )
    cpu_pass = Pass(
        name="cpu", status=cpu.pop("status", "ok"), script_wall_s=cpu_body, event_count=events, **cpu
    )
    return doc, cpu_pass


RIDER = CProfileTable(
    script_wall_s=2.0,
    event_count=10,
    totals=Totals(tottime_s=1.9, calls=10),
    functions=[],
    call_sites=[],
    postprocess_s=0.0,
)


def test_which_scripts_ride_and_which_tables_are_kept() -> None:
    assert cprofile_ride.may_ride(_passes()[0], ["cpu"])
    assert not cprofile_ride.may_ride(_passes()[0], ["cuda"])  # no cpu pass to ride in
    assert not cprofile_ride.may_ride(_passes(body=0.5)[0], ["cpu"])  # a run of its own costs little
    assert not cprofile_ride.may_ride(_passes(python=0.2)[0], ["cpu"])  # cProfile would slow it

    doc, cpu = _passes(cpu_body=2.2)
    made, why = cprofile_ride.ridden(RIDER, cpu, doc)
    assert made is not None and made.within == "cpu" and why == ""
    assert "took 1.10x the sample pass's run, recording 9,091 events a second" in made.notes[0]
    refused = [
        (_passes(cpu_body=2.4), RIDER, "took 1.20x the sample pass's (more than 1.15x)"),
        (_passes(events=120_000), RIDER, "recorded 60,000 events a second (more than 50,000)"),
        (
            _passes(event_budget=EventBudget(reason="calls", torch_calls=9, recorded_s=1.0)),
            RIDER,
            "event budget",
        ),
        (_passes(status="error"), RIDER, "ended with status error"),
        (_passes(), None, "could not record cProfile's table"),
    ]
    for (doc, cpu), rider, reason in refused:
        made, why = cprofile_ride.ridden(rider, cpu, doc)
        assert made is None and reason in why, (reason, why)


# -- the splice, on real cProfile statistics of a real TorchFunctionMode ---------------------


def test_the_splice_reads_as_the_scripts_table_without_the_mode(tmp_path: Path) -> None:
    import torch

    mode_file = str(tmp_path / "marker.py")
    marker = compiled(
        Path(mode_file),
        "import torch\n"
        "from torch.overrides import TorchFunctionMode\n"
        "class Marker(TorchFunctionMode):\n"
        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
        "        seen = id(func)  # the handler's own calls\n"
        "        return func(*args, **(kwargs or {}))\n",
    )
    user_file = str(tmp_path / "script.py")
    user = compiled(
        Path(user_file),
        "import torch\n"
        "def step(a, b):\n"
        "    c = a @ b\n"  # an operator: no call cProfile sees
        "    return c.relu().sum() + id(c) * 0\n"  # methods, and a builtin the handler calls too
        "def main(a, b):\n"
        "    for _ in range(20):\n"
        "        step(a, b)\n",
    )
    a, b = torch.randn(600, 600), torch.randn(600, 600)
    user["main"](a, b)  # first calls' one-time work (allocator, thread pool) before any table

    def table(with_mode: bool) -> dict[Any, Any]:
        profile = cProfile.Profile()
        if with_mode:
            with marker["Marker"]():
                profile.enable()
                user["main"](a, b)
                profile.disable()
        else:
            profile.enable()
            user["main"](a, b)
            profile.disable()
        return pstats.Stats(profile).stats  # type: ignore[attr-defined,no-any-return]

    def is_marked(name: str) -> bool:
        return name == mode_file or name.endswith(os.path.join("torch", "overrides.py"))

    def is_user(key: Any) -> bool:
        return bool(key[0] == user_file)

    plain = {k[2]: v for k, v in without_runner(table(False), is_marked, is_user).items()}
    raw = table(True)
    assert any(k[0] == mode_file for k in raw)  # the handler was recorded
    naive = {k[2]: v for k, v in without_runner(raw, is_marked, is_user).items()}
    spliced = {k[2]: v for k, v in without_runner(through_runner(raw, is_marked), is_marked, is_user).items()}
    relu = "<method 'relu' of 'torch._C.TensorBase' objects>"
    ident = "<built-in method builtins.id>"
    # counts: each call once, as without the mode (the naive table loses relu's primitive calls)
    for name in ("main", "step", relu, ident):
        assert spliced[name][:2] == plain[name][:2], (name, spliced[name][:2], plain[name][:2])
    assert naive[relu][:2] != plain[relu][:2]
    # time: the operator's matmul (n^3 work, against n^2 for relu and sum) is step's own
    # time, as without the mode: the row with the most own time; the naive table dropped it
    # with the handler, leaving step its few lines of Python
    assert max(plain, key=lambda name: plain[name][2]) == "step", plain["step"]
    assert max(spliced, key=lambda name: spliced[name][2]) == "step", spliced["step"]
    assert naive["step"][2] < 0.1 * spliced["step"][2], (naive["step"], spliced["step"])
    total = sum(v[2] for v in spliced.values())
    assert 0.8 * spliced["main"][3] <= total <= 1.05 * spliced["main"][3]
