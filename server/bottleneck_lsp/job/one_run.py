"""One run: the cpu pass and cProfile's table recorded in windows of the sample pass's run
(``runner/windows.py``), so that the script runs once.

``planned`` says when a job runs once: the sample and cpu passes are both planned, with
exact lines, and nothing asks for a run per pass (``--separate-runs``, a time-boxed
``--duration`` window per pass, a distributed launch, and on a CPU raw recordings). On a GPU
the windows record the device's activity too (the cuda pass's columns), and the sample
pass's device recording pauses while they do (docs/gpu.md; ``benchmarks/device/check.sh``
compares it with the separate runs on hardware), and ``--save-raw`` keeps each window's
recording. ``placed`` turns the runner's windowed parts into the
document's cpu pass (and cuda pass) and, where cProfile rode in the windows, its cprofile pass.

Host side: schema types only.
"""

from __future__ import annotations

from ..analysis import coverage
from ..schema.contract import COVERAGE_NOTE, COVERAGE_NOTE_DEVICE
from ..schema.model import Pass, PassName, RunnerPart
from . import cprofile_ride
from .spec import JobSpec


def planned(spec: JobSpec, passes: list[PassName], gpu: bool) -> bool:
    """Whether the job records the cpu pass (and cProfile, and on a GPU the cuda pass) in
    the sample pass's run (``gpu``: where a GPU may be)."""
    return (
        not spec.separate_runs
        and spec.duration is None
        # (on a GPU, each window's raw recording: a run's device work is in its windows)
        and (spec.save_raw is None or gpu)
        and not spec.distributed
        and spec.exact_lines
        and PassName.SAMPLE in passes
        and PassName.CPU in passes
    )


def placed(windowed: RunnerPart, sample: Pass, on_device: RunnerPart | None = None) -> list[Pass]:
    """The passes the sample pass's run recorded in windows, in the document's order: the
    cprofile pass (where cProfile rode in the windows), then the cpu pass, then on a GPU
    the cuda pass (``on_device``, from the same windows). Their status is the run's (the
    sample pass's, as the job left it: a timeout, a stop)."""
    made: list[Pass] = []
    cpu = _covering(windowed.as_pass(), sample, COVERAGE_NOTE)
    covered = coverage.covered(cpu)
    table = windowed.cprofile
    if table is not None:
        note = (
            f"cProfile counted the calls within the windows of the one run ({covered or 'none recorded'}); "
            "counts and times are of those windows, not the whole run (--separate-runs: a run of its own)"
        )
        made.append(cprofile_ride.table_pass(table, PassName.SAMPLE, sample.status, sample.exit_code, note))
    made.append(cpu)
    if on_device is not None:
        made.append(_covering(on_device.as_pass(), sample, COVERAGE_NOTE_DEVICE))
    return made


def _covering(part: Pass, sample: Pass, what: str) -> Pass:
    """A windowed pass with the run's status, its notes opening with what (``what``) it
    covers."""
    part.update(status=sample.status, exit_code=sample.exit_code)
    covered = coverage.covered(part)
    if covered:
        part.notes.insert(0, f"{what} {covered}: shares are of the recorded time")
        part.update(notes=part.notes)
    return part
