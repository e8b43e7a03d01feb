"""When a job runs the script once, and the passes its windowed part becomes (job/one_run.py)."""

from __future__ import annotations

from bottleneck_lsp.job import one_run
from bottleneck_lsp.job.spec import JobSpec
from bottleneck_lsp.schema.model import PassName, PassStatus, RunnerPart, Windows

DEFAULT = [PassName.SAMPLE, PassName.CPROFILE, PassName.CPU, PassName.CUDA]


def test_one_run_is_the_default_with_or_without_a_gpu() -> None:
    spec = JobSpec(script="/w/train.py")
    assert one_run.planned(spec, DEFAULT, gpu=False)
    assert one_run.planned(spec, DEFAULT, gpu=True)
    # on a GPU the windows' raw recordings are kept (benchmarks/device/check.sh); on a CPU
    # --save-raw records each pass whole, in a run of its own
    raw = JobSpec(script="/w/train.py", save_raw="/tmp/raw")
    assert one_run.planned(raw, DEFAULT, gpu=True)
    assert not one_run.planned(raw, DEFAULT, gpu=False)
    for asked in (
        JobSpec(script="/w/train.py", separate_runs=True),
        JobSpec(script="/w/train.py", duration=5.0),
        JobSpec(script="/w/train.py", exact_lines=False),
        JobSpec(script="/w/train.py", nproc_per_node=2),
    ):
        assert not one_run.planned(asked, DEFAULT, gpu=False), asked
        assert not one_run.planned(asked, DEFAULT, gpu=True), asked
    assert not one_run.planned(spec, [PassName.CPU], gpu=False)  # one pass: its own run anyway
    assert not one_run.planned(spec, [PassName.SAMPLE, PassName.CPROFILE], gpu=False)


def _windowed() -> RunnerPart:
    part = RunnerPart.given(name=PassName.CPU, status=PassStatus.OK, exit_code=0)
    part.update(windows=Windows(count=2, recorded_s=0.5, run_s=4.0, spent_s=0.7, torch_calls=10))
    return part


def test_the_windowed_part_becomes_the_cpu_pass_with_the_runs_status() -> None:
    sample = RunnerPart.given(name=PassName.SAMPLE, status=PassStatus.TIMEOUT, exit_code=None).as_pass()
    made = one_run.placed(_windowed(), sample)
    assert [p.name for p in made] == [PassName.CPU]  # no cProfile table rode: no cprofile pass
    cpu = made[0]
    assert cpu.status == PassStatus.TIMEOUT and cpu.exit_code is None
    assert cpu.notes[0] == (
        "op CPU time and memory recorded in 2 windows, 0.50 s of the 4.00 s run (12%): "
        "shares are of the recorded time"
    )
    assert "windowed" not in cpu.to_json() and cpu.to_json()["windows"]["count"] == 2


def test_on_a_gpu_the_windows_device_part_becomes_the_cuda_pass_after_the_cpu_pass() -> None:
    sample = RunnerPart.given(name=PassName.SAMPLE, status=PassStatus.OK, exit_code=0).as_pass()
    device = RunnerPart.given(name=PassName.CUDA, status=PassStatus.OK, exit_code=0)
    device.update(windows=Windows(count=2, recorded_s=0.5, run_s=4.0, spent_s=0.7, torch_calls=10))
    made = one_run.placed(_windowed(), sample, device)
    assert [p.name for p in made] == [PassName.CPU, PassName.CUDA]
    assert made[1].notes[0] == (
        "device time, kernels and device memory recorded in 2 windows, 0.50 s of the 4.00 s run (12%): "
        "shares are of the recorded time"
    )
