"""One run: the cpu pass and cProfile's table recorded in windows of the sample pass's run
(``runner/windows.py``), so that the script runs once.

``planned`` says when a job runs once: the sample and cpu passes are both planned, with
exact lines, and nothing asks for a run per pass (``--separate-runs``, a time-boxed
``--duration`` window per pass, raw recordings, a distributed launch). The device pass
(``cuda``) and the sample pass's device recording need the whole run on a GPU: there, for
now, each pass runs the script (docs/gpu.md); windows on a GPU wait for a device to
check them on. ``placed`` turns the runner's windowed part
into the document's cpu pass and, where cProfile rode in the windows, its cprofile pass.

Host side: schema types only.
"""

from __future__ import annotations

from ..analysis import coverage
from ..schema.contract import COVERAGE_NOTE
from ..schema.model import Pass, PassName, RunnerPart
from . import cprofile_ride
from .spec import JobSpec


def planned(spec: JobSpec, passes: list[PassName], gpu: bool) -> bool:
    """Whether the job records the cpu pass (and cProfile) in the sample pass's run. Not
    where a GPU may be (``gpu``): the sample pass records the device's activity whole-run
    there, for the verdict, and torch runs one profiler at a time."""
    return (
        not gpu
        and not spec.separate_runs
        and spec.duration is None
        and spec.save_raw is None
        and not spec.distributed
        and spec.exact_lines
        and PassName.SAMPLE in passes
        and PassName.CPU in passes
    )


def placed(windowed: RunnerPart, sample: Pass) -> list[Pass]:
    """The passes the sample pass's run recorded in windows, in the document's order: the
    cprofile pass (where cProfile rode in the windows), then the cpu pass. Their status is
    the run's (the sample pass's, as the job left it: a timeout, a stop)."""
    made: list[Pass] = []
    cpu = windowed.as_pass()
    cpu.update(status=sample.status, exit_code=sample.exit_code)
    covered = coverage.covered(cpu)
    if covered:
        cpu.notes.insert(0, f"{COVERAGE_NOTE} {covered}: shares are of the recorded time")
        cpu.update(notes=cpu.notes)
    table = windowed.cprofile
    if table is not None:
        note = (
            f"cProfile counted the calls within the windows of the one run ({covered or 'none recorded'}); "
            "counts and times are of those windows, not the whole run (--separate-runs: a run of its own)"
        )
        made.append(cprofile_ride.table_pass(table, PassName.SAMPLE, sample.status, sample.exit_code, note))
    made.append(cpu)
    return made
