"""A run as a speedscope file (www.speedscope.app, its file format schema).

- The sample pass's wall time, as a sampled profile: one stack per line of the user's
  files, function then line (the sampler keeps the innermost user line of each look, not
  whole call stacks), weighted by the seconds charged to it; time outside the user's
  files as one frame of its own.
- The sampler's whole stacks of the main thread (``samples.flame``), as a second sampled
  profile: the user's frames at their lines, library frames as their functions.
- The autograd pass's torch ops, as an evented profile per thread: each top-level op
  under a frame for the user line that called it, nested ops under it as they ran. Frames
  carry ``file`` and ``line``, so speedscope's detail view names the line.
"""

from __future__ import annotations

import os
from collections import defaultdict
from typing import Any

from .. import __version__
from ..analysis.timeline import Op, Place, Timeline, nested
from ..notebook.cell_paths import short_place
from ..schema.model import Document, PassName

SCHEMA = "https://www.speedscope.app/file-format-schema.json"


class _Frames:
    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.frames: list[dict[str, Any]] = []
        self._index: dict[tuple[str, str, int], int] = {}

    def _shown(self, path: str) -> str:
        if self.cwd and path.startswith(self.cwd.rstrip("/") + "/"):
            return os.path.relpath(path, self.cwd)
        return path

    def get(self, name: str, file: str = "", line: int = 0) -> int:
        key = (name, file, line)
        index = self._index.get(key)
        if index is None:
            frame: dict[str, Any] = {"name": name}
            if file:
                frame["file"] = self._shown(file)
            if line > 0:
                frame["line"] = line
            index = self._index[key] = len(self.frames)
            self.frames.append(frame)
        return index

    def line(self, place: Place) -> int:
        if not place.file:
            return self.get("(torch ops begun outside your files)")
        where = f"{short_place(place.file, place.line)}"
        name = f"{where} {place.text}" if place.text else where
        if not place.exact:
            name = f"{place.function} ({where}, line not known)"
        return self.get(name, place.file, place.line)


def _sampled(doc: Document, frames: _Frames) -> dict[str, Any] | None:
    part = doc.pass_named(PassName.SAMPLE)
    samples = part.samples if part is not None else None
    if samples is None or not samples.lines:
        return None
    stacks: list[list[int]] = []
    weights: list[float] = []
    for entry in samples.lines:
        if entry.wall_s <= 0:
            continue
        function = frames.get(entry.function or "<module>", entry.file)
        line = frames.line(Place(entry.file, entry.line, entry.function, entry.text, True))
        stacks.append([function, line])
        weights.append(entry.wall_s)
    if samples.outside_s > 0:
        stacks.append([frames.get("(outside your files: start-up, libraries)")])
        weights.append(samples.outside_s)
    return {
        "type": "sampled",
        "name": f"{os.path.basename(doc.script)}: wall time per line (sample pass, main thread)",
        "unit": "seconds",
        "startValue": 0,
        "endValue": sum(weights),
        "samples": stacks,
        "weights": weights,
    }


def _stacked(doc: Document, frames: _Frames) -> dict[str, Any] | None:
    """The sampler's whole stacks (``samples.flame``), outermost frame first: the user's
    frames at their lines, library frames as their functions."""
    part = doc.pass_named(PassName.SAMPLE)
    flame = part.samples.flame if part is not None and part.samples is not None else None
    if flame is None or not flame.stacks:
        return None
    index = []
    for frame in flame.frames:
        if frame.user:
            name = f"{frame.function} ({short_place(frame.file, frame.line)})"
            index.append(frames.get(name, frame.file, frame.line))
        else:
            index.append(frames.get(frame.function, frame.file, frame.line))
    weights = [stack.time_s for stack in flame.stacks]
    return {
        "type": "sampled",
        "name": f"{os.path.basename(doc.script)}: sampled stacks (sample pass, main thread)",
        "unit": "seconds",
        "startValue": 0,
        "endValue": sum(weights),
        "samples": [[index[i] for i in stack.frames] for stack in flame.stacks],
        "weights": weights,
    }


def _evented(ops: list[Op], name: str, t0: int, frames: _Frames) -> dict[str, Any]:
    events: list[dict[str, Any]] = []
    # open spans: (end, frames to close, innermost first)
    stack: list[tuple[int, list[int]]] = []

    def close_to(depth: int) -> None:
        while len(stack) > depth:
            end, opened = stack.pop()
            for frame in opened:
                events.append({"type": "C", "frame": frame, "at": (end - t0) / 1000})

    end_ns = t0
    for op, depth in nested(ops):
        close_to(depth)
        at = (op.start_ns - t0) / 1000
        opened = []
        if depth == 0:
            line = frames.line(op.place)
            events.append({"type": "O", "frame": line, "at": at})
            opened.append(line)
        frame = frames.get(op.name, op.place.file, op.place.line)
        events.append({"type": "O", "frame": frame, "at": at})
        opened.insert(0, frame)
        end = op.start_ns + op.duration_ns
        stack.append((end, opened))
        end_ns = max(end_ns, end)
    close_to(0)
    return {
        "type": "evented",
        "name": name,
        "unit": "microseconds",
        "startValue": 0,
        "endValue": (end_ns - t0) / 1000,
        "events": events,
    }


def render(doc: Document | None, timeline: Timeline | None, cwd: str = "") -> dict[str, Any]:
    frames = _Frames(cwd)
    profiles: list[dict[str, Any]] = []
    script = os.path.basename(doc.script if doc is not None else timeline.script if timeline else "")
    sampled = _sampled(doc, frames) if doc is not None else None
    if sampled is not None:
        profiles.append(sampled)
    stacked = _stacked(doc, frames) if doc is not None else None
    if stacked is not None:
        profiles.append(stacked)
    if timeline is not None and timeline.ops:
        threads: dict[int, list[Op]] = defaultdict(list)
        for op in timeline.ops:
            threads[op.thread].append(op)
        t0 = timeline.start_ns
        ordered = sorted(threads.items(), key=lambda kv: min(o.start_ns for o in kv[1]))
        for number, (thread, ops) in enumerate(ordered):
            label = "main thread" if number == 0 else f"thread {thread}"
            name = f"{script}: torch ops, {label} ({timeline.pass_name} pass)"
            profiles.append(_evented(ops, name, t0, frames))
    return {
        "$schema": SCHEMA,
        "shared": {"frames": frames.frames},
        "profiles": profiles,
        "name": script,
        "activeProfileIndex": 0,
        "exporter": f"bottleneck-lsp {__version__}",
    }
