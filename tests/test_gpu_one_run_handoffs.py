"""The sample pass's recording of the device on a GPU, live, on this CPU-only machine (a
recording of the CPU's ops stands in for the device's, as below): alone over the whole run
when each pass runs apart, and in a GPU's one run: the windows record "the device" too while
the sample pass's device-only recording pauses for each window and goes on after it, in
segments (``samplepass.py``: torch runs one profiler at a time). Here a recording of the CPU's
ops stands in for the device's (a CPU-only torch records no device), so that the handoffs run
as on a GPU: a segment still recording when a window opens would make the window's profiler
fail, an op recorded by none (or by two) would change the count below. What the windows'
device recordings hold on a GPU is replayed from a real H200 recording (test_replay.py)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = """\
import time
import torch

x = torch.zeros(4)
end = time.perf_counter() + {seconds}
while time.perf_counter() < end:
    x = x + 1
    time.sleep(0.002)
print("adds", int(x[0]))
"""

# ... and starts torch's profiler itself 5 s before its end, for 50 adds of its own
OWN_PROFILER = (
    SCRIPT.replace(
        "    time.sleep(0.002)\n",
        "    time.sleep(0.002)\n"
        "    if not own and time.perf_counter() > end - 5.0:\n"
        "        before = int(x[0])\n"
        "        with torch.profiler.profile() as prof:\n"
        "            for _ in range(50):\n"
        "                x = x + 1\n"
        "        own = sum(1 for event in prof.events() if event.name == 'aten::add')\n",
    )
    .replace("x = torch.zeros(4)\n", "x = torch.zeros(4)\nown = before = 0\n")
    .replace("int(x[0]))", "int(x[0]), 'own', own, 'before', before)")
)

DRIVER = """\
import json, sys, torch
from bottleneck_lsp.runner import samplepass
from bottleneck_lsp.runner.paths import FileClassifier
from bottleneck_lsp.runner.profilerconfig import make_profiler

folder, script, out, mode = sys.argv[1:]
# the CPU's ops stand in for the device's work: recorded alone, as the device's would be
samplepass.device_recording = lambda torch: make_profiler(torch, with_stack=False, device=None)
sample = samplepass.SamplePass(
    FileClassifier([folder]), torch, save_raw=folder + "/loop.sample.raw.json.gz", script=script
)
if mode == "windows":
    sample.record_windows(torch, memory=False, with_cprofile=False, device=True)
code = compile(open(script).read(), script, "exec")
sample.start()
try:
    exec(code, {"__name__": "__main__"})
finally:
    sample.stop()
doc = sample.finish()
windows = sample.windows
json.dump(
    {
        "segments": len(sample.segments),
        "device_error": sample.device_error,
        "ended": windows.ended if windows else "",
        "windows": doc["windowed"]["windows"] if windows else None,
        "device_windows": doc["windowed_device"]["windows"] if windows else None,
        "notes": doc["notes"] + (doc["windowed"].get("notes", []) if windows else []),
    },
    open(out, "w"),
)
"""


def _adds(path: Path) -> int:
    with gzip.open(path, "rt") as handle:
        events = json.load(handle)["events"]
    return sum(1 for event in events if event["name"] == "aten::add")


def _run(folder: Path, mode: str, seconds: float, text: str = SCRIPT) -> tuple[dict[str, Any], int]:
    """The driver's account of the run, and the adds the script counted."""
    script = folder / "loop.py"
    script.write_text(text.format(seconds=seconds))
    out = folder / "run.json"
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, str(folder), str(script), str(out), mode],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run: dict[str, Any] = json.loads(out.read_text())
    assert run["device_error"] == "", run
    assert not [n for n in run["notes"] if "failed" in n], run["notes"]
    if " own " in done.stdout:  # (OWN_PROFILER's counts)
        run["own"], run["before"] = (int(n) for n in done.stdout.split()[3::2])
    return run, int(done.stdout.split("adds ")[1].split()[0])


def _ours_not_the_scripts(run: dict[str, Any]) -> None:
    assert run["ended"] in ("", "end"), run
    assert not [n for n in run["notes"] if "profiler" in n], run["notes"]


def test_alone_the_device_recording_covers_the_whole_run(tmp_path: Path) -> None:
    run, adds = _run(tmp_path, "whole", 2.0)
    _ours_not_the_scripts(run)
    assert run["segments"] == 1, run
    assert _adds(tmp_path / "loop.sample.raw.json.gz") == adds


def test_each_op_is_in_one_recording_the_segments_or_a_window(tmp_path: Path) -> None:
    run, adds = _run(tmp_path, "windows", 9.0)
    _ours_not_the_scripts(run)
    count = run["windows"]["count"]
    assert count >= 2, run  # (the second opens once the run paid for the first: 4.7 s in)
    assert run["device_windows"]["count"] == count
    # a segment after each window (the last one's until the end; none if the run ended in one)
    assert run["segments"] in (count, count - 1), run
    windows = [tmp_path / f"loop.cuda.window{n}.raw.json.gz" for n in range(1, count + 1)]
    in_windows = [_adds(path) for path in windows]
    in_segments = _adds(tmp_path / "loop.sample.raw.json.gz")
    assert all(in_windows) and in_segments > 0, (in_windows, in_segments)
    # every add the script made, recorded once: by a window or by the segments between them
    assert sum(in_windows) + in_segments == adds, (in_windows, in_segments, adds)


def test_a_profiler_the_script_starts_ends_the_windows_and_the_device_recording(tmp_path: Path) -> None:
    """Both yield to it (torch runs one profiler at a time), said once, at the script's line:
    every add before it is in exactly one of our recordings, its own in its own, and none
    after it in ours."""
    run, adds = _run(tmp_path, "windows", 9.0, OWN_PROFILER)
    assert run["ended"] == "script_profiler", run
    said = [n for n in run["notes"] if "started torch's profiler" in n]
    assert said and said[0].startswith("the script started torch's profiler itself at loop.py:12"), run[
        "notes"
    ]
    count = run["windows"]["count"]
    in_windows = sum(_adds(tmp_path / f"loop.cuda.window{n}.raw.json.gz") for n in range(1, count + 1))
    in_segments = _adds(tmp_path / "loop.sample.raw.json.gz")
    assert run["own"] == 50 and in_segments > 0 and adds >= run["before"] + 50, (run, adds)
    assert in_windows + in_segments == run["before"], (in_windows, in_segments, run["before"])
