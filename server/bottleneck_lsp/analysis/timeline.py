"""An autograd pass as a timeline: every torch op and device activity, with its user line.

Read from a raw recording (``profile --save-raw``; ``--format trace`` and ``speedscope``
make one for themselves) and attributed as ``replay`` attributes it, so a live run and a
recording from a GPU machine give the same timeline. ``formats.chrome_trace`` and ``formats.speedscope``
render it. No torch here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ..runner.attribution import LineStats
from ..runner.callsites import source_position
from ..schema.model import PassName
from .recorded import RecordingError, open_recording


@dataclass(frozen=True, slots=True)
class Place:
    """A line of the user's files (``file`` empty: none, the op began outside them)."""

    file: str
    line: int
    function: str
    text: str
    exact: bool  # False: the op's line is not known, only its function (``line`` is the def)


NOWHERE = Place("", 0, "", "", False)


@dataclass(slots=True)
class Op:
    start_ns: int
    duration_ns: int
    thread: int
    name: str
    place: Place


@dataclass(slots=True)
class DeviceWork:
    start_ns: int
    duration_ns: int
    device: int
    name: str
    op: str  # the op that launched it ("" when none is known)
    place: Place


@dataclass
class Timeline:
    script: str  # where the script is here
    pass_name: str  # cpu or cuda
    recorded_on: dict[str, object]
    ops: list[Op] = field(default_factory=list)
    device: list[DeviceWork] = field(default_factory=list)

    @property
    def start_ns(self) -> int:
        starts = [o.start_ns for o in self.ops] + [d.start_ns for d in self.device]
        return min(starts) if starts else 0

    @property
    def end_ns(self) -> int:
        ends = [o.start_ns + o.duration_ns for o in self.ops]
        ends += [d.start_ns + d.duration_ns for d in self.device]
        return max(ends) if ends else 0


def from_recording(path: str, root: str | None = None) -> Timeline:
    """The timeline of one recorded autograd pass; RecordingError says what is wrong."""
    opened = open_recording(path, root)
    if opened.name == PassName.SAMPLE:
        raise RecordingError(f"{path} is a sample pass's recording: it holds no torch ops")
    attributor = opened.attributor()
    attributor.timeline = []
    attributor.device_timeline = []
    attributor.consume(opened.roots)
    if opened.name == PassName.CUDA:
        attributor.add_device_events(opened.activities)
    places: dict[int, Place] = {}

    def place(stats: LineStats) -> Place:
        known = places.get(id(stats))
        if known is None:
            if not stats.file:
                known = NOWHERE
            else:
                text = source_position(stats.file, stats.line)[1] if os.path.isfile(stats.file) else ""
                known = Place(stats.file, stats.line, stats.function, text, stats.exact)
            places[id(stats)] = known
        return known

    timeline = Timeline(opened.files.script_path(), opened.name, dict(opened.recorded_on))
    timeline.ops = [Op(s, d, t, n, place(at)) for s, d, t, n, at in attributor.timeline]
    timeline.device = [
        DeviceWork(a.start_ns, a.duration_ns, a.device_index, a.name, op, place(at))
        for a, at, op in attributor.device_timeline
    ]
    return timeline


def nested(ops: list[Op]) -> list[tuple[Op, int]]:
    """One thread's ops in start order, each with its depth: an op inside another (its
    start within the other's span) is nested one deeper. Spans are clamped to their
    parent's (the profiler's clock can put a child's end a few ns past its parent's)."""
    out: list[tuple[Op, int]] = []
    ends: list[int] = []  # the open ops' ends, outermost first
    for op in sorted(ops, key=lambda o: (o.start_ns, -o.duration_ns)):
        while ends and op.start_ns >= ends[-1]:
            ends.pop()
        end = op.start_ns + op.duration_ns
        if ends and end > ends[-1]:
            op = Op(op.start_ns, ends[-1] - op.start_ns, op.thread, op.name, op.place)
            end = ends[-1]
        out.append((op, len(ends)))
        ends.append(end)
    return out
