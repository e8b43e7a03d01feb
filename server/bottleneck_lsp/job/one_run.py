"""One run: the cpu pass and cProfile's table recorded in windows of the sample pass's run
(``runner/windows.py``), so that the script runs once.

``planned`` says when a job runs once: the sample and cpu passes are both planned, with
exact lines, and nothing asks for a run per pass (``--separate-runs``, a time-boxed
``--duration`` window per pass, raw recordings, a distributed launch). The device pass
(``cuda``, on a GPU) still runs the script again: its kernel links were checked with the
Python tracer on a whole run (docs/gpu.md). ``placed`` turns the runner's windowed part
into the document's cpu pass and, where cProfile rode in the windows, its cprofile pass.

Host side: schema types only.
"""

from __future__ import annotations

from ..schema.model import Pass, PassName, RunnerPart
from .spec import JobSpec


def planned(spec: JobSpec, passes: list[PassName]) -> bool:
    """Whether the job records the cpu pass (and cProfile) in the sample pass's run."""
    return (
        not spec.separate_runs
        and spec.duration is None
        and spec.save_raw is None
        and not spec.distributed
        and spec.exact_lines
        and PassName.SAMPLE in passes
        and PassName.CPU in passes
    )


def coverage(cpu: Pass) -> str:
    """ "recorded in 3 windows, 2.40 s of the 11.0 s run (22%)" ("" for a whole-run pass)."""
    windows = cpu.windows
    if windows is None:
        return ""
    share = windows.recorded_s / windows.run_s if windows.run_s > 0 else 0.0
    plural = "s" if windows.count != 1 else ""
    return (
        f"recorded in {windows.count} window{plural}, {windows.recorded_s:.2f} s of the "
        f"{windows.run_s:.2f} s run ({share:.0%})"
    )


def placed(windowed: RunnerPart, sample: Pass) -> list[Pass]:
    """The passes the sample pass's run recorded in windows, in the document's order: the
    cprofile pass (where cProfile rode in the windows), then the cpu pass. Their status is
    the run's (the sample pass's, as the job left it: a timeout, a stop)."""
    made: list[Pass] = []
    cpu = windowed.as_pass()
    cpu.update(status=sample.status, exit_code=sample.exit_code)
    covered = coverage(cpu)
    if covered:
        cpu.notes.insert(0, f"op CPU time and memory {covered}: shares are of the recorded time")
        cpu.update(notes=cpu.notes)
    table = windowed.cprofile
    if table is not None:
        note = (
            f"cProfile counted the calls within the windows of the one run ({covered or 'none recorded'}); "
            "counts and times are of those windows, not the whole run (--separate-runs: a run of its own)"
        )
        made.append(
            Pass.given(
                name=PassName.CPROFILE,
                status=sample.status,
                exit_code=sample.exit_code,
                within=PassName.SAMPLE,
                notes=[note],
                script_wall_s=table.script_wall_s,
                event_count=table.event_count,
                totals=table.totals,
                functions=table.functions,
                call_sites=table.call_sites,
                postprocess_s=table.postprocess_s,
            )
        )
    made.append(cpu)
    return made
