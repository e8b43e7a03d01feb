"""A timeline as a Chrome trace (Trace Event Format, JSON): opens in Perfetto
(ui.perfetto.dev) and chrome://tracing.

One process for the CPU (a track per thread: the torch ops, nested as they ran) and one
per GPU (its kernels, copies and memsets). Every event's ``args`` name the user's line:
``file`` (relative to ``cwd`` when under it), ``line``, ``function`` and the line's
``source``; device work also names the ``op`` that launched it.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from .. import __version__
from ..analysis.timeline import Place, Timeline, nested

CPU_PID = 1
GPU_PID = 100  # + the device's index


def _where(place: Place, cwd: str) -> dict[str, Any]:
    if not place.file:
        return {"file": "(not in your files)"}
    rel = (
        os.path.relpath(place.file, cwd)
        if cwd and place.file.startswith(cwd.rstrip("/") + "/")
        else place.file
    )
    where: dict[str, Any] = {"file": rel, "line": place.line, "function": place.function}
    if place.text:
        where["source"] = place.text
    if not place.exact:
        where["exact"] = False  # the function is known, not its line
    return where


def _us(ns: int) -> float:
    return round(ns / 1000, 3)


def render(timeline: Timeline, cwd: str = "") -> dict[str, Any]:
    t0 = timeline.start_ns
    script = os.path.basename(timeline.script)
    events: list[dict[str, Any]] = [
        {
            "ph": "M",
            "name": "process_name",
            "pid": CPU_PID,
            "tid": 0,
            "args": {"name": f"{script}: torch ops"},
        },
        {"ph": "M", "name": "process_sort_index", "pid": CPU_PID, "tid": 0, "args": {"sort_index": 0}},
    ]
    threads: dict[int, list[Any]] = defaultdict(list)
    for op in timeline.ops:
        threads[op.thread].append(op)
    for number, (thread, ops) in enumerate(
        sorted(threads.items(), key=lambda kv: min(o.start_ns for o in kv[1]))
    ):
        label = "main thread" if number == 0 else f"thread {thread}"
        events.append(
            {"ph": "M", "name": "thread_name", "pid": CPU_PID, "tid": thread, "args": {"name": label}}
        )
        for op, _depth in nested(ops):
            events.append(
                {
                    "ph": "X",
                    "cat": "cpu_op",
                    "name": op.name,
                    "pid": CPU_PID,
                    "tid": thread,
                    "ts": _us(op.start_ns - t0),
                    "dur": _us(op.duration_ns),
                    "args": _where(op.place, cwd),
                }
            )
    lanes: dict[int, list[int]] = defaultdict(list)  # per device: each lane's last end
    for work in sorted(timeline.device, key=lambda d: d.start_ns):
        # Work on several streams can overlap: a lane (track) each, so that no track holds
        # two slices that overlap without one inside the other.
        ends = lanes[work.device]
        lane = next((i for i, end in enumerate(ends) if end <= work.start_ns), len(ends))
        if lane == len(ends):
            ends.append(0)
        ends[lane] = work.start_ns + work.duration_ns
        events.append(
            {
                "ph": "X",
                "cat": "gpu_memcpy" if work.name.startswith("Memcpy") else "kernel",
                "name": work.name,
                "pid": GPU_PID + work.device,
                "tid": lane,
                "ts": _us(work.start_ns - t0),
                "dur": _us(work.duration_ns),
                "args": {"op": work.op or "(none known)", **_where(work.place, cwd)},
            }
        )
    for device, ends in sorted(lanes.items()):
        pid = GPU_PID + device
        events.append(
            {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": f"GPU {device}"}}
        )
        for lane in range(len(ends)):
            name = "device work" if lane == 0 else f"device work (overlapping, {lane + 1})"
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": lane, "args": {"name": name}})
    return {
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "exporter": f"bottleneck-lsp {__version__}",
            "script": timeline.script,
            "pass": timeline.pass_name,
            "recorded_on": timeline.recorded_on,
        },
    }
