"""Exports that other tools open: speedscope (validated against speedscope's file format
schema, and replayed as speedscope replays it: every frame closed in order) and a
Chrome/Perfetto trace (the Trace Event Format's structure: complete events, properly
nested per track). From a real CPU run, and from the real H200 recording (GPU work on
its own tracks, each kernel naming the line that launched it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest

CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")
SCHEMA = json.loads((Path(__file__).parent / "schemas" / "speedscope-file-format-schema.json").read_text())
FIXTURES = Path(__file__).parent / "fixtures"

SCRIPT = """import torch

x = torch.randn(400, 400)
w = torch.randn(400, 400)
for _ in range(40):
    a = x @ w @ w  # PLANTED
    b = torch.relu(x) + 1
"""


def planted_line(path: Path) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "# PLANTED" in t)


def export(script: Path, fmt: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "profile", "--passes", "sample,cpu", "--format", fmt, "-o", str(out), *extra, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=script.parent,
    )


def scratch_folders() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("bottleneck-lsp-raw-")}


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("exports")
    script = folder / "planted.py"
    script.write_text(SCRIPT)
    before = scratch_folders()
    out: dict[str, Any] = {"script": script, "line": planted_line(script)}
    for fmt in ("speedscope", "trace"):
        done = export(script, fmt, folder / f"out.{fmt}.json")
        assert done.returncode == 0, done.stderr[-3000:]
        out[fmt] = json.loads((folder / f"out.{fmt}.json").read_text())
    assert scratch_folders() == before  # the recording made for the export is gone
    return out


def check_trace(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """The Trace Event Format as Perfetto reads it; returns the complete ('X') events."""
    assert isinstance(trace["traceEvents"], list) and trace["displayTimeUnit"] in ("ms", "ns")
    complete = []
    names: dict[tuple[int, int], str] = {}
    for event in trace["traceEvents"]:
        assert event["ph"] in ("X", "M"), event
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int), event
        if event["ph"] == "M":
            assert event["name"] in ("process_name", "thread_name", "process_sort_index"), event
            if event["name"] == "thread_name":
                names[event["pid"], event["tid"]] = event["args"]["name"]
            continue
        assert isinstance(event["name"], str) and event["name"]
        assert isinstance(event["ts"], (int, float)) and event["ts"] >= 0, event
        assert isinstance(event["dur"], (int, float)) and event["dur"] >= 0, event
        assert isinstance(event["args"], dict) and "file" in event["args"], event
        complete.append(event)
    tracks: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    for event in complete:
        tracks[event["pid"], event["tid"]].append(event)
    for track, events in tracks.items():
        assert track in names, f"track {track} has no name"
        ends: list[float] = []  # a slice either follows the open one or lies inside it
        for event in sorted(events, key=lambda e: (e["ts"], -e["dur"])):
            while ends and event["ts"] >= ends[-1]:
                ends.pop()
            end = event["ts"] + event["dur"]
            assert not ends or end <= ends[-1] + 0.002, (track, event)  # rounding to ns
            ends.append(end)
    return complete


def replay_evented(profile: dict[str, Any], frames: int) -> dict[int, float]:
    """Open and close as speedscope does (in order, a close names the innermost open
    frame); returns each frame's self time."""
    stack: list[tuple[int, float]] = []
    self_time: dict[int, float] = defaultdict(float)
    last = profile["startValue"]
    for event in profile["events"]:
        assert event["at"] >= last, event  # in time order
        if stack:
            self_time[stack[-1][0]] += event["at"] - last
        last = event["at"]
        assert 0 <= event["frame"] < frames
        if event["type"] == "O":
            stack.append((event["frame"], event["at"]))
        else:
            assert stack and stack[-1][0] == event["frame"], event
            stack.pop()
    assert not stack and last <= profile["endValue"] + 1e-6
    return self_time


def test_speedscope_validates_and_names_the_planted_line(made: dict[str, Any]) -> None:
    data, line = made["speedscope"], made["line"]
    jsonschema.Draft6Validator(SCHEMA).validate(data)
    frames = data["shared"]["frames"]
    sampled = next(p for p in data["profiles"] if p["type"] == "sampled")
    assert len(sampled["samples"]) == len(sampled["weights"])
    heaviest = max(zip(sampled["weights"], sampled["samples"], strict=True))[1]
    top = frames[heaviest[-1]]
    assert (top["file"], top["line"]) == ("planted.py", line) and "x @ w @ w" in top["name"], top

    # the whole stacks: the planted line's frame is in the stacks that hold most of the time
    stacked = next(
        p for p in data["profiles"] if p["name"].endswith("sampled stacks (sample pass, main thread)")
    )
    under = sum(
        w
        for w, s in zip(stacked["weights"], stacked["samples"], strict=True)
        if any((frames[i].get("file"), frames[i].get("line")) == ("planted.py", line) for i in s)
    )
    assert under > 0.5 * stacked["endValue"], (under, stacked["endValue"])

    evented = [p for p in data["profiles"] if p["type"] == "evented"]
    assert evented and evented[0]["name"].endswith("main thread (cpu pass)")
    self_time = replay_evented(evented[0], len(frames))
    by_line: dict[int, float] = defaultdict(float)  # op time under each line frame
    for index, spent in self_time.items():
        if frames[index].get("file") == "planted.py":
            by_line[frames[index]["line"]] += spent
    assert max(by_line, key=lambda k: by_line[k]) == line, dict(by_line)
    assert any(f["name"] == "aten::mm" and f.get("line") == line for f in frames)


def test_trace_is_well_formed_and_each_op_names_its_line(made: dict[str, Any]) -> None:
    events, line = check_trace(made["trace"]), made["line"]
    mm = [e for e in events if e["name"] == "aten::mm"]
    assert mm and all(e["args"]["file"] == "planted.py" and e["args"]["line"] == line for e in mm)
    assert mm[0]["args"]["source"] == "a = x @ w @ w  # PLANTED"
    time_by_line: dict[Any, float] = defaultdict(float)
    for e in events:
        time_by_line[e["args"].get("line")] += e["dur"]
    assert max(time_by_line, key=lambda k: time_by_line[k]) == line


def test_a_gpu_recording_becomes_a_trace_with_device_tracks(tmp_path: Path) -> None:
    out = tmp_path / "gpu.trace.json"
    done = subprocess.run(
        [CLI, "replay", str(FIXTURES / "cuda_gpu_bound.raw.json.gz"), "--format", "trace", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    trace = json.loads(out.read_text())
    events = check_trace(trace)
    kernels = [e for e in events if e["pid"] >= 100]
    gemm = [e for e in kernels if "gemm" in e["name"]]
    # the H200 recording: 40 matmul kernels, each launched by aten::mm on line 9
    assert len(gemm) == 40, len(gemm)
    assert all(e["args"]["line"] == 9 and e["args"]["op"] == "aten::mm" for e in gemm)
    assert gemm[0]["args"]["source"].startswith("y = x @ w")
    assert trace["otherData"]["recorded_on"].get("device", "").startswith("NVIDIA H200")


def test_a_trace_needs_an_autograd_pass(tmp_path: Path) -> None:
    script = tmp_path / "s.py"
    script.write_text("print('never run')\n")
    done = subprocess.run(
        [CLI, "profile", "--passes", "sample", "--format", "trace", str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "needs the cpu or cuda pass" in done.stderr
    assert "never run" not in done.stdout + done.stderr


def test_a_speedscope_file_needs_a_pass_with_a_timeline(tmp_path: Path) -> None:
    """cProfile alone has no timeline: refused before the run, not an empty file."""
    script = tmp_path / "s.py"
    script.write_text("print('never run')\n")
    out = tmp_path / "s.speedscope.json"
    done = subprocess.run(
        [CLI, "profile", "--passes", "cprofile", "--format", "speedscope", "-o", str(out), str(script)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "needs the sample, cpu or cuda pass" in done.stderr
    assert not out.exists() and "never run" not in done.stdout + done.stderr
