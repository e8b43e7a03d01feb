"""The kernels torch.compile generated, on the source lines they were made from.

Inductor keeps, for each kernel it generates, the stack traces of the FX nodes it was made
from (its *provenance*: ``torch._inductor.config.trace.provenance_tracking_level``), and
writes them to its structured trace as the artifact
``inductor_provenance_tracking_kernel_stack_traces``: ``{"cpp_fused_add_mul_1:4": [trace,
...]}``, the kernel's name and its *debug handle*, the same handle commented in the
generated wrapper's code right above the kernel's call (``# [Provenance debug handles]
cpp_fused_add_mul_1:4``). Its records for one graph come in one order, on a cache hit as on
a miss: ``inductor_output_code`` (the wrapper's file), the provenance, then
``fx_graph_cache_{hit,miss,bypass}`` (the graph's cache key, which names the profiler's
``## Call CompiledFxGraph <key> ##`` range around each call of the graph).

From them, for each graph (``CompiledGraph``):
- the op recording (``attribution.py``) charges each kernel's event under that range to the
  kernel's lines: a C++ kernel is its own event with ``cpp.enable_kernel_profile``
  (``graph_0_cpp_fused_add_mul_1``), an extern kernel is the aten op it calls
  (``extern_kernels.addmm`` -> ``aten::addmm``), matched in the order the wrapper calls them;
- the sampler (``sampler.py``) charges a look at the wrapper's frame, at a kernel's call, to
  that kernel's lines.
A kernel fused from ops of several lines is split over them by how many of its ops (FX
nodes with a stack trace) each line gave it (``Kernel.places``). A backward graph's kernels
stay on the ``.backward()`` line, as eager backward ops do, and link to the forward lines
they differentiate.

``enable`` turns both options on before the script runs. They change what inductor
generates (a profiler range around each C++ kernel) and its cache key: a profiled compile
does not reuse a bare run's cached code, and its compiled code keeps about its speed
(``benchmarks/compiled_kernels.py``).

Standard library only (torch is handed in): it runs in the user's interpreter.
"""

from __future__ import annotations

import functools
import json
import linecache
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .paths import FileClassifier

STACK_TRACES = "inductor_provenance_tracking_kernel_stack_traces"
CACHE_ARTIFACTS = frozenset({"fx_graph_cache_hit", "fx_graph_cache_miss", "fx_graph_cache_bypass"})
OUTPUT_CODE = "inductor_output_code"
CALL_RANGE = "## Call CompiledFxGraph "  # + key + " ##": the profiler's range around a graph's call
HANDLE_COMMENT = "[Provenance debug handles] "
# inductor's options, set through its environment variables when its config is not loaded yet
# (loading it imports torch's compiler stack: a second of start-up for a script that never
# compiles), else on the loaded config; last, the option's value where the variable is not
# set (its default, put back after a kernel's cell)
OPTIONS = (
    ("INDUCTOR_PROVENANCE", "1", ("trace", "provenance_tracking_level"), 1, 0),
    ("TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE", "1", ("cpp", "enable_kernel_profile"), True, False),
)
MAX_GRAPHS = 1000

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>\S+)\n(?P<code>[^\n]*)')
_GRAPH_PREFIX = re.compile(r"^graph_\d+_")
_ATEN = re.compile(r"^(?:torch\.ops\.)?aten\.(?P<op>[A-Za-z0-9_]+)(?:\.[A-Za-z0-9_]+)?$")


def enable(undo: list[Callable[[], None]] | None = None) -> bool:
    """Turn inductor's provenance and per-kernel profiler events on for this process (the
    user's own setting of either, by its environment variable, is kept). False: inductor's
    loaded config has neither option (an older torch). ``undo`` (a kernel's cell, which
    leaves the kernel as it found it): gets what puts each setting back."""
    config = sys.modules.get("torch._inductor.config")
    found = False
    for variable, value, (section, name), setting, default in OPTIONS:
        if config is None:
            if variable not in os.environ:
                os.environ[variable] = value
                if undo is not None:
                    undo.append(functools.partial(_unset, variable, section, name, default))
            found = True
            continue
        part = getattr(config, section, None)
        if part is not None and hasattr(part, name):
            found = True
            if variable not in os.environ:
                before = getattr(part, name)
                setattr(part, name, setting)
                if undo is not None:
                    undo.append(functools.partial(setattr, part, name, before))
    return found


def _unset(variable: str, section: str, name: str, default: object) -> None:
    """The environment variable ``enable`` set goes; where inductor's config was loaded
    meanwhile (and read it), the option goes back to its default."""
    os.environ.pop(variable, None)
    config = sys.modules.get("torch._inductor.config")
    part = getattr(config, section, None) if config is not None else None
    if part is not None and hasattr(part, name):
        setattr(part, name, default)


def event_key(name: str) -> str:
    """A profiler event's name as the provenance names its kernel: ``graph_0_cpp_fused_x_1``
    -> ``cpp_fused_x_1``; an aten op stays ``aten::addmm``."""
    return _GRAPH_PREFIX.sub("", name, count=1)


def kernel_key(name: str) -> str:
    """A kernel's name in the provenance as its profiler event is named (``event_key``):
    ``extern_kernels.addmm`` and ``aten.addmm.default`` -> ``aten::addmm``."""
    if name.startswith("extern_kernels."):
        return "aten::" + name.removeprefix("extern_kernels.")
    match = _ATEN.match(name)
    if match is not None:
        return "aten::" + match.group("op")
    return name


@dataclass
class Place:
    """One of the user's lines a kernel was made from: ``ops`` of its FX nodes came from it."""

    file: str
    line: int
    function: str
    ops: int


@dataclass
class Kernel:
    name: str  # as the provenance names it (``cpp_fused_add_mul_1``, ``extern_kernels.addmm``)
    handle: int
    places: list[Place]  # the most ops first
    looks: list[int] = field(default_factory=list)  # the sampler's looks given to each place

    @property
    def ops(self) -> int:
        return sum(p.ops for p in self.places)

    def pick(self) -> Place:
        """The place the sampler's next look at this kernel goes to: in turn, each place as
        often as its part of the kernel's ops (a look is not split)."""
        if len(self.places) == 1:
            return self.places[0]
        if not self.looks:
            self.looks = [0] * len(self.places)
        total = sum(self.looks) + 1
        ops = self.ops
        best = max(range(len(self.places)), key=lambda i: self.places[i].ops * total / ops - self.looks[i])
        self.looks[best] += 1
        return self.places[best]


@dataclass
class CompiledGraph:
    key: str  # inductor's FX graph cache key
    wrapper: str  # the generated wrapper module's file
    backward: bool  # an AOTAutograd backward graph (its inputs include tangents)
    kernels: list[Kernel]  # in the wrapper's order (the debug handles')
    at_line: dict[int, Kernel]  # a line of the wrapper -> the kernel it calls
    # the kernels by their events' name (``kernel_key``), each name's in calling order
    in_order: dict[str, list[Kernel]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.in_order = {}
        for kernel in self.kernels:
            self.in_order.setdefault(kernel_key(kernel.name), []).append(kernel)


def moved(name: str, line: int, code: str, named: dict[str, list[str]]) -> str | None:
    """The user's file a stack trace names by another path: inductor's cache key has no file
    names, so a graph compiled from the same code elsewhere (another checkout, a project that
    moved, a copy of the script) is found in its cache with that place's traces. The user's
    file of the same name (``named``: the user's files by name) whose line ``line`` reads
    ``code``, or None."""
    said = code.strip()
    if not said:
        return None
    for path in named.get(os.path.basename(name), ()):
        if linecache.getline(path, line).strip() == said:
            return path
    return None


def places_of(traces: list[str], files: FileClassifier) -> list[Place]:
    """A kernel's lines: of each of its FX nodes' stack traces, the innermost frame in the
    user's files; counted per line, the most first."""
    counted: dict[tuple[str, int], Place] = {}
    named: dict[str, list[str]] | None = None  # the user's files by name, once, if needed
    for trace in traces:
        found = None
        for match in _FRAME.finditer(trace):
            line = int(match.group("line"))
            path = files.resolve(match.group("file"))
            if path is None:
                if named is None:
                    named = {}
                    for known in files.user_files():
                        named.setdefault(os.path.basename(known), []).append(known)
                path = moved(match.group("file"), line, match.group("code"), named)
            if path is not None:
                found = (path, line, match.group("function"))
        if found is None:
            continue
        place = counted.get(found[:2])
        if place is None:
            counted[found[:2]] = Place(found[0], found[1], found[2], 1)
        else:
            place.ops += 1
    return sorted(counted.values(), key=lambda p: (-p.ops, p.file, p.line))


def read_wrapper(path: str) -> tuple[dict[int, int], bool]:
    """The generated wrapper's lines that call a kernel (line -> the kernel's debug handle:
    the first statement after its handle's comment), and whether it is a backward graph's."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return {}, False
    calls: dict[int, int] = {}
    backward = False
    waiting: int | None = None
    for number, text in enumerate(lines, start=1):
        stripped = text.strip()
        if stripped.endswith("= args") and "tangents_" in stripped:
            backward = True
        at = stripped.find(HANDLE_COMMENT)
        if stripped.startswith("#"):
            if at >= 0:
                _, _, handle_text = stripped[at + len(HANDLE_COMMENT) :].rpartition(":")
                waiting = int(handle_text) if handle_text.isdigit() else None
            continue
        if waiting is not None and stripped:
            calls[number] = waiting
            waiting = None
    return calls, backward


class CompiledGraphs:
    """The graphs inductor compiled in this run, from its structured trace (``dynamo_log.py``
    hands each record to ``record``)."""

    def __init__(self, files: FileClassifier | None) -> None:
        self.files = files  # (None: read from a raw recording, ``from_json``)
        self.by_key: dict[str, CompiledGraph] = {}
        self.by_wrapper: dict[str, CompiledGraph] = {}
        self._wrapper = ""  # the graph being compiled: its wrapper's file
        self._traces: dict[str, list[str]] | None = None  # ... and its provenance
        self.on_graph: list[Any] = []  # called with each new graph (the sampler's registration)

    def record(self, metadata: dict[str, Any], payload: Any) -> None:
        if OUTPUT_CODE in metadata:
            found = metadata[OUTPUT_CODE] or {}
            self._wrapper = str(found.get("file_path") or found.get("filename") or "")
            self._traces = None
            return
        artifact = metadata.get("artifact")
        if not isinstance(artifact, dict) or not isinstance(payload, str):
            return
        name = artifact.get("name")
        if name == STACK_TRACES:
            try:
                traces = json.loads(payload)
            except ValueError:
                return
            self._traces = traces if isinstance(traces, dict) else None
        elif name in CACHE_ARTIFACTS:
            try:
                key = json.loads(payload).get("key")
            except (ValueError, AttributeError):
                key = None
            self._graph(str(key) if key else "")

    def _graph(self, key: str) -> None:
        traces, wrapper = self._traces, self._wrapper
        self._traces, self._wrapper = None, ""
        if not traces or not wrapper or self.files is None or len(self.by_wrapper) >= MAX_GRAPHS:
            return
        calls, backward = read_wrapper(wrapper)
        kernels: dict[int, Kernel] = {}
        for named, stack in traces.items():
            name, _, handle = str(named).rpartition(":")
            if not handle.isdigit() or not isinstance(stack, list):
                continue
            places = places_of([str(text) for text in stack], self.files)
            if places:
                kernels[int(handle)] = Kernel(name, int(handle), places)
        if not kernels:
            return
        at_line = {line: kernels[h] for line, h in calls.items() if h in kernels}
        graph = CompiledGraph(key, wrapper, backward, [kernels[h] for h in sorted(kernels)], at_line)
        if key:
            self.by_key[key] = graph
        self.by_wrapper[wrapper] = graph
        for call in self.on_graph:
            call(graph)

    def to_json(self) -> list[dict[str, Any]]:
        """The graphs as a raw recording keeps them (``rawsave.py``): what a replay's walk needs."""
        return [
            {
                "key": graph.key,
                "backward": graph.backward,
                "kernels": [
                    {
                        "name": k.name,
                        "handle": k.handle,
                        "places": [[p.file, p.line, p.function, p.ops] for p in k.places],
                    }
                    for k in graph.kernels
                ],
            }
            for graph in self.by_key.values()
        ]

    @staticmethod
    def from_json(data: Any) -> CompiledGraphs | None:
        """A raw recording's graphs (``to_json``; None without any). A recording may come from
        anywhere: what does not have the expected shape is left out."""
        if not isinstance(data, list):
            return None
        graphs = CompiledGraphs(None)
        for entry in data[:MAX_GRAPHS]:
            if not isinstance(entry, dict) or not isinstance(entry.get("key"), str):
                continue
            kernels = []
            for k in entry.get("kernels") or []:
                if (
                    not isinstance(k, dict)
                    or not isinstance(k.get("name"), str)
                    or not isinstance(k.get("handle"), int)
                ):
                    continue
                places = [
                    Place(p[0], p[1], p[2], p[3])
                    for p in k.get("places") or []
                    if isinstance(p, list)
                    and len(p) == 4
                    and isinstance(p[0], str)
                    and isinstance(p[2], str)
                    and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in (p[1], p[3]))
                ]
                if places:
                    kernels.append(Kernel(k["name"], k["handle"], places))
            if kernels:
                key = entry["key"]
                graphs.by_key[key] = CompiledGraph(key, "", bool(entry.get("backward")), kernels, {})
        return graphs if graphs.by_key else None

    def of_range(self, name: str) -> CompiledGraph | None:
        """The graph a ``## Call CompiledFxGraph <key> ##`` range runs, if known."""
        if not name.startswith(CALL_RANGE):
            return None
        return self.by_key.get(name[len(CALL_RANGE) :].removesuffix(" ##").strip())
