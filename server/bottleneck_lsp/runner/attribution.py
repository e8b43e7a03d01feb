"""Profiler event tree -> the user's source lines, in one streaming walk.

The walk uses the profiler's event tree (``kineto_results.experimental_event_tree()``),
never torch's FunctionEvent lists. Python call nodes (PyCall, PyCCall) carry the frame
that made the call; the innermost such frame in a user file is the line an op belongs to.
Operators (``a @ b``) make no call node of their own; the runner's TorchFunctionMode
(see ``linemarker.make_line_marker``) adds one whose caller is the operator's line. Without
the Python tracer (the cpu pass) the tree has no call node at all: the mode runs each torch
call inside a range named after its line (``lineranges.py``), and ``ranges`` says which.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from ..schema.contract import COLLECTIVE_PREFIXES
from .comms import message_bytes
from .device import WAIT_CALLS, Activity
from .lineranges import Site
from .provenance import CompiledGraph, CompiledGraphs, Place, event_key

BACKWARD_PREFIX = "autograd::engine::evaluate_function: "
NO_OP = "(device work outside any op)"
TOP_OPS = 5
# torch.compile's own ranges (torch 2.13): the whole compile session ("dynamo"), a compiled
# module's backward, compiled at its first call inside that call's op
# ("entire_backward_compile"), and each timed phase ("_compile.compile_inner (dynamo_timed)").
# What runs under them is compilation (tracing with fake tensors, code generation), not the
# script's ops.
COMPILE_RANGES = frozenset({"dynamo", "entire_backward_compile"})
COMPILE_RANGE_SUFFIX = " (dynamo_timed)"
# The ranges its compiled code runs in at each call (torch 2.13): their own time is the
# compiled runtime's Python, like a record_function range's; the ops inside are the line's.
COMPILED_RUNTIME = frozenset(
    {
        "CompiledFunction",
        "CompiledFunctionBackward",
        "AOTDispatcher Runtime Wrapper Prologue",
        "Pregraph bytecode",
        "TorchDynamo Cache Lookup",
    }
)
COMPILED_RUNTIME_PREFIXES = ("Torch-Compiled Region", "## Call CompiledFxGraph")
TOP_LINKS = 5


_MISSING = object()


class _Frame(NamedTuple):
    """A frame as ``Attributor._context`` reads it, made from a line range's site."""

    file_name: str
    line_number: int
    function_name: str


class Resolver(Protocol):
    """Maps a file name as the profiler reports it to the user's file, or None."""

    def resolve(self, file_name: str) -> str | None: ...


@dataclass(frozen=True)
class EventKinds:
    """The event tree's tags (as integers) and the TorchScript scope, as the tree that is
    walked spells them: torch's enums for a live profile, the reader's for a recording."""

    py_call: int
    py_ccall: int
    torch_op: int
    kineto: int
    torchscript_scope: Any
    allocation: int = -1  # memory events (profile_memory=True)
    user_scope: Any = None  # record_function ranges (DataLoader, optimizer, the user's)

    @staticmethod
    def of_torch() -> EventKinds:
        from torch._C._profiler import RecordScope, _EventType

        # pybind enums come back as new objects: compare their integer values.
        return EventKinds(
            int(_EventType.PyCall.value),
            int(_EventType.PyCCall.value),
            int(_EventType.TorchOp.value),
            int(_EventType.Kineto.value),
            RecordScope.TORCHSCRIPT_FUNCTION,
            int(_EventType.Allocation.value),
            RecordScope.USER_SCOPE,
        )


class LineStats:
    """Costs charged to one source line (or one function when ``exact`` is False)."""

    __slots__ = (
        "backward",
        "calls",
        "compiled",
        "compiled_links",
        "count",
        "device_count",
        "device_ns",
        "exact",
        "file",
        "forward_device_links",
        "forward_links",
        "function",
        "kernels",
        "line",
        "memory",
        "opaque",
        "ops",
        "self_ns",
        "wait_ns",
    )

    def __init__(self, file: str, line: int, function: str, exact: bool) -> None:
        self.file = file
        self.line = line
        self.function = function
        self.exact = exact
        self.self_ns = 0
        self.device_ns = 0
        self.device_count = 0
        self.wait_ns = 0  # the CPU blocked on the device (synchronize, blocking copies)
        self.count = 0
        self.calls = 0  # a function's record (exact False): times the main thread entered it
        self.ops: dict[str, list[int]] = {}  # name -> [self_ns, device_ns, count]
        self.kernels: dict[str, list[int]] = {}  # device activity name -> [ns, count]
        self.backward = False
        # (backward op's thread, autograd sequence number) -> ns: see forward_line_of
        self.forward_links: dict[tuple[int, int], int] = {}
        self.forward_device_links: dict[tuple[int, int], int] = {}  # device time of backward kernels
        self.opaque: set[str] = set()  # compiled regions whose own lines are invisible
        # torch.compile's kernels charged here (op name -> the lines they were made from, with
        # their ops' counts: ``provenance.py``); a backward line's kernels' time per forward line
        self.compiled: dict[str, tuple[tuple[str, int, int], ...]] = {}
        self.compiled_links: dict[tuple[str, int], list[int]] = {}  # (file, line) -> [cpu ns, device ns]
        self.memory: list[int] | None = None  # see memory.account: allocated, count, freed, live at peak

    def add_op(self, name: str, cpu_ns: int, device_ns: int, count: int) -> None:
        """Time and calls of op ``name`` on this line (the walk inlines the same: it runs
        once per event)."""
        entry = self.ops.get(name)
        if entry is None:
            self.ops[name] = [cpu_ns, device_ns, count]
        else:
            entry[0] += cpu_ns
            entry[1] += device_ns
            entry[2] += count


class OpStats:
    __slots__ = ("count", "device_ns", "self_ns", "total_ns")

    def __init__(self) -> None:
        self.count = 0
        self.self_ns = 0
        self.total_ns = 0
        self.device_ns = 0


class Attributor:
    """Consumes an event tree; holds per-line and per-op totals."""

    def __init__(
        self,
        files: Resolver,
        marker: tuple[str, int] | None = None,
        kinds: EventKinds | None = None,
        device: bool = False,
        ranges: Mapping[str, Site] | None = None,
        compiled: CompiledGraphs | None = None,
    ) -> None:
        """``marker``: the line marker's ``__torch_function__`` (its file and first line),
        whose call nodes the walk recognises (see ``_walk``). ``device``: keep what device
        attribution needs (ops by correlation id, the CPU's waits on the device).
        ``ranges``: the line marker's range names and the lines they stand for, when it
        recorded without the Python tracer (``lineranges.py``). ``compiled``: the graphs
        torch.compile made in this run, whose kernels go to the lines they were made from
        (``provenance.py``)."""
        kinds = kinds or EventKinds.of_torch()
        self.compiled = compiled
        # a kernel fused from several lines, charged to the first: (its line, its op name, its
        # own time, its places), split after the walk (``_split_kernels``)
        self._splits: list[tuple[LineStats, str, int, tuple[Place, ...]]] = []
        self.files = files
        self.marker = marker
        self.device = device
        self._py_call = kinds.py_call
        self._py_ccall = kinds.py_ccall
        self._torch_op = kinds.torch_op
        self._kineto = kinds.kineto
        self._torchscript = kinds.torchscript_scope
        self._user_scope = kinds.user_scope
        self._is_range: dict[str, bool] = {}  # op name -> a record_function range
        self._allocation = kinds.allocation
        self.ranges = ranges
        # a range name -> (its line's record, whether it is a backward call's)
        self._range_lines: dict[str, tuple[LineStats | None, bool]] = {}
        # Entries into the user's functions counted apart (no tracer): see
        # ``take_function_entries``; None: the tracer's call nodes count them.
        self.function_entries: list[tuple[str, int, str, int]] | None = None
        self.lines: dict[tuple[str, int, bool], LineStats] = {}
        self.ops: dict[str, OpStats] = {}
        self.unattributed = LineStats("", 0, "", False)
        # torch.compile's work (``COMPILE_RANGES``): left out of the op time and the op table
        self.compiling = LineStats("", 0, "", False)
        self.compile_ns = 0
        self.compile_events = 0
        self._is_compile: dict[str, bool] = {}  # op name -> one of torch.compile's ranges
        self.event_count = 0
        self.python_events = 0  # the Python tracer's call nodes (calls and generator resumes)
        self.garbled_frames = 0
        self.total_self_ns = 0
        self.total_device_ns = 0
        self.total_wait_ns = 0
        self._frames: dict[tuple[str, int, bool], LineStats | None] = {}
        # a Python call node's name -> (the callee's line record, whether it is the marker)
        self._callees: dict[str, tuple[LineStats | None, bool]] = {}
        # autograd sequence number -> (start, line) of the last top-level forward op that
        # carried it: an op records the number the next autograd node will take, so every op
        # from one node's creation to the next carries the same number, and the one that
        # created the node (which the backward op names) is the last of them. One op may
        # make several nodes (``linear`` on a 3-D input: a view, ``t``, ``addmm``, a view),
        # numbered on from its own: no op carries those, and they are the op's before them.
        # Per thread: torch numbers nodes per thread, and the cpu pass records every thread.
        self._forward_seq: dict[int, dict[int, tuple[int, LineStats | None]]] = {}
        self._forward_numbers: dict[int, list[int]] = {}  # per thread: its keys, sorted, once read
        self._main_tid: int | None = None  # the thread that started the profiler
        self._backward_windows: list[tuple[int, int, LineStats]] = []
        # top-level ops: (start, end, thread, line, name), for _uncount_contained
        self._top_level: list[tuple[int, int, int, LineStats, str]] = []
        # correlation id of an op -> (its line, its name, start, thread)
        self._correlation: dict[int, tuple[LineStats, str, int, int]] = {}
        # per thread: top-level backward ops as (start, end, sequence number), in order
        self._backward_ops: dict[int, list[tuple[int, int, int]]] = {}
        # Set to a list to keep every op as (start, duration, thread, name, its line) and
        # every device activity as (activity, its op's line, the op's name): exports.
        self.timeline: list[tuple[int, int, int, str, LineStats]] | None = None
        self.device_timeline: list[tuple[Any, LineStats, str]] | None = None
        # Memory events (profile_memory=True): (time, address, bytes, the allocator's total,
        # device, the line whose op allocated (a free's is not used), the allocator's
        # reserved bytes), see memory.py.
        self.memory_events: list[tuple[int, int, int, int, str, LineStats, int]] = []
        self.first_ns = 0  # the earliest root's start: the recording's time zero
        # Set to a list (a distributed rank) to keep every collective op (contract's
        # COLLECTIVE_PREFIXES) as (start, duration, name, its line, bytes sent): waiting
        # across ranks; the bytes of the dispatcher's c10d:: ops (0 for the others).
        self.collectives: list[tuple[int, int, str, LineStats, int]] | None = None

    # -- contexts -------------------------------------------------------------------
    def _context(self, frame: Any, exact: bool) -> LineStats | None:
        """The line record for a profiler frame (caller or callsite); None outside the
        user's files. Called only on a cache miss: the walk looks up
        ``(file_name, line_number, exact)`` in ``_frames`` itself."""
        file_name = frame.file_name
        line = frame.line_number
        function = frame.function_name
        key = (file_name, line, exact)
        path = self.files.resolve(file_name)
        stats: LineStats | None = None
        if path is not None:
            line_key = (path, line, exact)
            stats = self.lines.get(line_key)
            if stats is None:
                stats = LineStats(path, line, function, exact)
                self.lines[line_key] = stats
        self._frames[key] = stats
        return stats

    def _callee(self, name: str, callee: Any) -> tuple[LineStats | None, bool]:
        """What a Python call node's callee says, cached by the node's name (which torch
        makes of the callee's file, first line and function: one binding call instead of
        three)."""
        key = (callee.file_name, callee.line_number, False)
        inside = self._frames[key] if key in self._frames else self._context(callee, False)
        is_marker = False
        if self.marker is not None and callee.function_name == "__torch_function__":
            file_name, first_line = self.marker
            reported = callee.file_name
            is_marker = callee.line_number == first_line and (
                reported == file_name or file_name.endswith("/" + reported.lstrip("/"))
            )
        found = (inside, is_marker)
        self._callees[name] = found
        return found

    def _range_line(self, name: str) -> tuple[LineStats | None, bool] | None:
        """What a line marker's range stands for (cached), or None for any other op."""
        assert self.ranges is not None
        site = self.ranges.get(name)
        if site is None:
            return None
        key = (site.file_name, site.line, True)
        here = self._frames[key] if key in self._frames else self._context(_Frame(*site[:3]), True)
        found = (here, site.backward)
        self._range_lines[name] = found
        return found

    def take_function_entries(self, entries: Iterable[tuple[str, int, str, int]]) -> None:
        """Entries into functions as (file name, first line, function, count), counted
        apart from the profile: those in the user's files are kept, with their paths."""
        out = []
        for file_name, line, function, count in entries:
            path = self.files.resolve(file_name)
            if path is not None and count > 0:
                out.append((path, line, function, count))
        self.function_entries = out

    def _backward_context(self, start_ns: int) -> LineStats | None:
        """The ``.backward()`` line whose engine run covers this time (other threads)."""
        windows = self._backward_windows
        i = bisect.bisect_right(windows, start_ns, key=lambda w: w[0]) - 1
        if i >= 0 and windows[i][1] >= start_ns:
            return windows[i][2]
        return None

    # -- the walk ---------------------------------------------------------------------
    def consume(self, roots: list[Any]) -> None:
        """Walk the main thread's roots first, then other threads' roots: the autograd
        engine's device threads have no Python frames, so their ops go to the
        ``.backward()`` line whose engine run covers them; other threads' ops go to their
        own lines (the line marker's ranges) or outside the user's files."""
        roots = sorted(roots, key=lambda n: n.start_time_ns)
        if roots:
            self.first_ns = (
                roots[0].start_time_ns if self.first_ns == 0 else min(self.first_ns, roots[0].start_time_ns)
            )
        main_tid = roots[0].start_tid if roots else None
        if self._main_tid is None:
            self._main_tid = main_tid
        others = []
        for root in roots:
            if root.start_tid == main_tid:
                self._walk(root, None, count_calls=True)
            else:
                others.append(root)
        self._backward_windows.sort(key=lambda w: w[0])
        # Only the autograd engine's threads (those that ran backward ops) are claimed by
        # the .backward() running meanwhile: another thread's ops (the script's threads, a
        # library's, with the cpu pass recording every thread) are its own work.
        engine = {root.start_tid for root in others if root.name.startswith(BACKWARD_PREFIX)}
        for root in others:
            context = self._backward_context(root.start_time_ns) if root.start_tid in engine else None
            self._walk(root, context)
        self._split_kernels()
        self._uncount_contained()

    def _uncount_contained(self) -> None:
        """Nothing counted twice. A range (a ``record_function`` block, torch's own
        ``Optimizer.step#...`` or DataLoader ranges) is opened and closed from Python, so
        the event tree hangs it under the call that opened it: the ops that ran inside it
        become its siblings, not its children, and its self time would be its whole
        duration while those ops are also charged to their own lines. Here, per thread, a
        top-level op that contains other top-level ops keeps as self time only what its
        immediate contents did not take (contents are disjoint on one thread)."""
        events = self._top_level
        self._top_level = []
        if not events:
            return
        events.sort(key=lambda e: (e[2], e[0], -e[1]))
        covered: dict[int, int] = {}  # index of a container -> time of its immediate contents
        stack: list[int] = []
        tid = None
        for i, (start, end, thread, _target, _name) in enumerate(events):
            if thread != tid:
                stack.clear()
                tid = thread
            while stack and events[stack[-1]][1] < end:
                stack.pop()
            if stack and events[stack[-1]][0] <= start:
                parent = stack[-1]
                covered[parent] = covered.get(parent, 0) + (end - start)
            stack.append(i)
        for index, inner in covered.items():
            start, end, _thread, target, name = events[index]
            entry = target.ops.get(name)
            take = min(inner, end - start, target.self_ns, entry[0] if entry is not None else inner)
            if take <= 0:
                continue
            target.self_ns -= take
            if entry is not None:
                entry[0] -= take
            op = self.ops.get(name)
            if op is not None:
                op.self_ns -= take
            self.total_self_ns -= take

    def _walk(self, root: Any, root_ctx: LineStats | None, count_calls: bool = False) -> None:
        """Charge a root's ops to lines. ``count_calls``: count entries into the user's
        functions (the main thread's, as cProfile counts them: see ``function_calls``)."""
        py_call, py_ccall, torch_op, kineto = (
            self._py_call,
            self._py_ccall,
            self._torch_op,
            self._kineto,
        )
        # Locals, not attributes, in the loop below (it runs once per event).
        lines_ops, unattributed, torchscript, allocation = (
            self.ops,
            self.unattributed,
            self._torchscript,
            self._allocation,
        )
        frames, context, callees, callee_of = self._frames, self._context, self._callees, self._callee
        ranges, range_lines, range_line = self.ranges, self._range_lines, self._range_line
        missing: Any = _MISSING
        is_ranges, user_scope = self._is_range, self._user_scope
        top_level, device, correlation = self._top_level, self.device, self._correlation
        timeline, memory, collectives = self.timeline, self.memory_events, self.collectives
        events = 0
        python = 0
        total = 0
        compiling, is_compile = self.compiling, self._is_compile
        # The last top-level op's backward link (its line, its key), while its subtree is
        # walked (depth first: no other top-level op comes in between): a compile under it
        # is taken off the forward line's backward time too.
        link: tuple[LineStats, tuple[int, int]] | None = None
        # (node, context, enclosing op's line, enclosing op's name)
        stack: list[tuple[Any, LineStats | None, LineStats | None, str]] = [(root, root_ctx, None, "")]
        pop = stack.pop
        push = stack.append
        while stack:
            node, ctx, parent_line, parent_name = pop()
            tag = node.tag.value
            if ctx is compiling and tag != allocation:
                # Under torch.compile's ranges: none of it is the script's (the Python
                # tracer's call nodes included); its allocations count for the memory,
                # as not the user's (below).
                self.compile_events += tag == torch_op
                for child in node.children:
                    push((child, compiling, None, ""))
                continue
            if tag == torch_op:
                name = node.name
                if ranges is not None:
                    found = range_lines.get(name)
                    if found is None and name in ranges:
                        found = range_line(name)
                    if found is not None:
                        # A line marker's range: not an op; what ran inside is its line's.
                        here, backward = found
                        if here is not None:
                            if backward:
                                self._backward_windows.append((node.start_time_ns, node.end_time_ns, here))
                        else:
                            here = ctx
                        for child in node.children:
                            push((child, here, parent_line, parent_name))
                        continue
                events += 1
                dur = node.duration_time_ns
                target = ctx if ctx is not None else unattributed
                if "::" not in name:
                    compile_range = is_compile.get(name)
                    if compile_range is None:
                        compile_range = is_compile[name] = name in COMPILE_RANGES or name.endswith(
                            COMPILE_RANGE_SUFFIX
                        )
                    if compile_range and ranges is None:
                        # With the Python tracer (the cuda pass, --no-exact-lines) torch
                        # closes a range opened from Python when the call that opened it
                        # returns: it holds none of the compile's ops, which are charged
                        # where they ran, and it is taken off nothing.
                        for child in node.children:
                            push((child, ctx, parent_line, parent_name))
                        continue
                    if compile_range:  # torch.compile at work: not the script's ops
                        self.compile_ns += dur
                        self.compile_events += 1
                        if parent_line is not None:  # under an op (a lazily compiled backward)
                            parent_line.self_ns -= dur
                            parent_line.ops[parent_name][0] -= dur
                            lines_ops[parent_name].self_ns -= dur
                            total -= dur
                            if link is not None:
                                linked, key = link
                                linked.forward_links[key] -= dur
                        for child in node.children:
                            push((child, compiling, None, ""))
                        continue
                    is_range = is_ranges.get(name)
                    if is_range is None:
                        # A backend's collective work (``gloo:all_reduce``) is a user-scope
                        # range too, but an op: the rank's time in the collective.
                        is_range = is_ranges[name] = (
                            node.extra_fields.scope == user_scope and not name.startswith(COLLECTIVE_PREFIXES)
                        ) or (name in COMPILED_RUNTIME or name.startswith(COMPILED_RUNTIME_PREFIXES))
                    if is_range:
                        # A record_function range (a DataLoader's, an optimizer's, the
                        # user's, torch.compile's runtime): a context, not an op. Its time
                        # outside its ops is Python, which this pass's instruments slow down
                        # and the sample pass measures: counted, never charged as op time.
                        self._count_range(node, name, target)
                        graph = self.compiled.of_range(name) if self.compiled is not None else None
                        if graph is not None:  # a compiled graph's call: its kernels' lines
                            moved = self._kernels(node, graph, ctx, push, parent_line, parent_name)
                            if moved and link is not None:  # (linked to those lines instead)
                                linked, key = link
                                linked.forward_links[key] -= moved
                            continue
                        for child in node.children:
                            push((child, ctx, parent_line, parent_name))
                        continue
                target.self_ns += dur
                if timeline is not None:
                    timeline.append((node.start_time_ns, dur, node.start_tid, name, target))
                if collectives is not None and name.startswith(COLLECTIVE_PREFIXES):
                    sent = 0
                    if name.startswith("c10d::"):
                        fields = node.extra_fields
                        recorded = getattr(fields, "message_bytes", None)  # a recording's
                        sent = recorded if recorded is not None else message_bytes(name, fields)
                    collectives.append((node.start_time_ns, dur, name, target, sent))
                entry = target.ops.get(name)
                if entry is None:
                    target.ops[name] = [dur, 0, 1]
                else:
                    entry[0] += dur
                    entry[2] += 1
                op = lines_ops.get(name)
                if op is None:
                    op = lines_ops[name] = OpStats()
                op.count += 1
                op.self_ns += dur
                op.total_ns += dur
                total += dur
                if device:
                    # A kernel's linked correlation id is the one of the op that launched
                    # it (the innermost op: aten::mm under aten::matmul).
                    corr = node.correlation_id
                    if corr:
                        correlation[corr] = (target, name, node.start_time_ns, node.start_tid)
                if parent_line is not None:
                    parent_line.self_ns -= dur
                    parent_line.ops[parent_name][0] -= dur
                    lines_ops[parent_name].self_ns -= dur
                    total -= dur
                else:
                    link = None
                    target.count += 1
                    top_level.append((node.start_time_ns, node.end_time_ns, node.start_tid, target, name))
                    fields = node.extra_fields
                    if (
                        "::" not in name
                        and fields.scope == torchscript
                        and any(child.tag.value == torch_op for child in node.children)
                    ):
                        # (TorchScript's own "defaults", run at a first call, hides no op)
                        target.opaque.add(f"TorchScript function {name}")
                    seq = fields.sequence_number
                    if seq >= 0:
                        if name.startswith(BACKWARD_PREFIX):
                            target.backward = True
                            key = (node.start_tid, seq)
                            target.forward_links[key] = target.forward_links.get(key, 0) + dur
                            link = (target, key)
                            if device:
                                self._backward_ops.setdefault(node.start_tid, []).append(
                                    (node.start_time_ns, node.end_time_ns, seq)
                                )
                        else:
                            numbered = self._forward_seq.get(node.start_tid)
                            if numbered is None:
                                numbered = self._forward_seq[node.start_tid] = {}
                            seen = numbered.get(seq)
                            if seen is None or seen[0] <= node.start_time_ns:
                                numbered[seq] = (node.start_time_ns, ctx)
                for child in node.children:
                    push((child, ctx, target, name))
                continue
            if tag == py_ccall or tag == py_call:
                python += 1
                child_ctx = ctx
                is_marker = False
                try:
                    fields = node.extra_fields
                    caller = fields.caller
                    here = frames.get((caller.file_name, caller.line_number, True), missing)
                    if here is missing:
                        here = context(caller, True)
                    if here is not None:
                        child_ctx = here
                    if tag == py_call:
                        name = node.name
                        known = callees.get(name)
                        inside, is_marker = known if known is not None else callee_of(name, fields.callsite)
                        if inside is not None:
                            # Inside a user function: ops with no call node of their own
                            # belong to this function at a line the profiler cannot name.
                            child_ctx = inside
                            if count_calls:
                                inside.calls += 1
                    elif child_ctx is not None:
                        if "run_backward" in node.name:
                            self._backward_windows.append((node.start_time_ns, node.end_time_ns, child_ctx))
                except UnicodeDecodeError:
                    # torch 2.13 sometimes hands back garbled names for frames whose
                    # code objects are gone; such a node says nothing about lines.
                    self.garbled_frames += 1
                if is_marker:
                    # The marker calls the torch function from its own line: that C call's
                    # node says nothing about lines (its caller is the marker), so its
                    # children are taken directly, without reading its frame.
                    for child in node.children:
                        if child.tag.value == py_ccall:
                            for grandchild in child.children:
                                push((grandchild, child_ctx, parent_line, parent_name))
                        else:
                            push((child, child_ctx, parent_line, parent_name))
                    continue
                for child in node.children:
                    push((child, child_ctx, parent_line, parent_name))
                continue
            if tag == allocation:
                fields = node.extra_fields
                memory.append(
                    (
                        node.start_time_ns,
                        fields.ptr,
                        fields.alloc_size,
                        fields.total_allocated,
                        str(fields.device),
                        # (under torch.compile's ranges: torch's own, outside the user's files)
                        ctx if ctx is not None and ctx is not compiling else unattributed,
                        fields.total_reserved,
                    )
                )
                continue
            if tag == kineto and device and node.name in WAIT_CALLS:
                waited = node.duration_time_ns
                (ctx if ctx is not None else unattributed).wait_ns += waited
                self.total_wait_ns += waited
            for child in node.children:
                push((child, ctx, parent_line, parent_name))
        self.event_count += events
        self.python_events += python
        self.total_self_ns += total

    def _line_of(self, place: Place) -> LineStats | None:
        key = (place.file, place.line, True)
        return (
            self._frames[key]
            if key in self._frames
            else self._context(_Frame(place.file, place.line, place.function), True)
        )

    def _kernels(
        self,
        node: Any,
        graph: CompiledGraph,
        ctx: LineStats | None,
        push: Callable[[tuple[Any, LineStats | None, LineStats | None, str]], None],
        parent_line: LineStats | None,
        parent_name: str,
    ) -> int:
        """A compiled graph's call (``provenance.py``): each kernel's event, matched with the
        graph's kernels of its name in calling order, goes to the first of the lines it was
        made from (split over the others after the walk: ``_split_kernels``). A backward
        graph's kernels stay on the ``.backward()`` line (``ctx``) and link to the forward
        lines they were made from; returns that linked time (the caller takes it off the
        link to the line that called the compiled function)."""
        order = graph.in_order
        taken: dict[str, int] = {}
        moved = 0
        torch_op = self._torch_op
        children = []
        pending = list(node.children)
        python = (self._py_call, self._py_ccall)
        while pending:
            child = pending.pop()
            if child.tag.value in python or (self.ranges is not None and child.name in self.ranges):
                # the wrapper's Python calls (the Python tracer's nodes), or the line marker's
                # range around an extern kernel (a torch function the wrapper calls, seen from
                # the compiled function's frame): the kernel is inside
                pending.extend(child.children)
            else:
                children.append(child)
        for child in sorted(children, key=lambda c: c.start_time_ns):
            kernel = None
            if child.tag.value == torch_op:
                key = event_key(child.name)
                queue = order.get(key)
                index = taken.get(key, 0)
                if queue is not None and index < len(queue):
                    kernel = queue[index]
                    taken[key] = index + 1
            if kernel is None:
                push((child, ctx, parent_line, parent_name))
                continue
            places = tuple(kernel.places)
            made_from = tuple((p.file, p.line, p.ops) for p in places)
            if graph.backward:
                target = ctx if ctx is not None else self.unattributed
                target.compiled[child.name] = made_from
                dur = child.duration_time_ns
                ops = kernel.ops
                for p in places:
                    acc = target.compiled_links.setdefault((p.file, p.line), [0, 0])
                    acc[0] += dur * p.ops // ops
                moved += dur
                push((child, ctx, parent_line, parent_name))
                continue
            here = self._line_of(places[0]) or ctx
            if here is None:
                push((child, ctx, parent_line, parent_name))
                continue
            here.compiled[child.name] = made_from
            if len(places) > 1:
                inner = sum(c.duration_time_ns for c in child.children if c.tag.value == torch_op)
                self._splits.append((here, child.name, child.duration_time_ns - inner, places))
            push((child, here, parent_line, parent_name))
        return moved

    def _split_kernels(self) -> None:
        """A kernel fused from ops of several lines: its own time, charged to the first, split
        over them by how many of its ops each gave it (each line counts the kernel's call)."""
        for here, name, own, places in self._splits:
            ops = sum(p.ops for p in places)
            entry = here.ops.get(name)
            for place in places[1:]:
                other = self._line_of(place)
                part = own * place.ops // ops
                if other is None or other is here or entry is None or part <= 0:
                    continue
                here.self_ns -= part
                entry[0] -= part
                other.self_ns += part
                other.add_op(name, part, 0, 1)
                other.compiled[name] = here.compiled[name]
        self._splits.clear()

    def _count_range(self, node: Any, name: str, target: LineStats) -> None:
        """A record_function range on ``target``'s line: counted, timed in the op table's
        total, no self time (see ``_walk``)."""
        dur = node.duration_time_ns
        if self.timeline is not None:
            self.timeline.append((node.start_time_ns, dur, node.start_tid, name, target))
        entry = target.ops.get(name)
        if entry is None:
            target.ops[name] = [0, 0, 1]
        else:
            entry[2] += 1
        op = self.ops.get(name)
        if op is None:
            op = self.ops[name] = OpStats()
        op.count += 1
        op.total_ns += dur

    # -- device time (CUDA pass) --------------------------------------------------------
    def add_device_events(self, activities: Iterable[Activity]) -> int:
        """Charge device work (kernels, memcpy, memset) to the line of the op that
        launched it, and to that op. A kernel's ``linked_correlation_id`` is the
        ``correlation_id`` of the op that launched it (measured on an H200: 8,003 of 8,003
        kernels). Work with no such op goes to ``unattributed`` under the op name
        ``NO_OP``. Returns the number of device events seen."""
        seen = 0
        correlation = self._correlation
        for ops in self._backward_ops.values():
            ops.sort()
        for a in activities:
            if not a.on_device:
                continue
            seen += 1
            dur = a.duration_ns
            self.total_device_ns += dur
            owner = correlation.get(a.linked_correlation_id)
            made_from = None
            if owner is None:
                target, op_name = self.unattributed, NO_OP
            else:
                target, op_name, start, tid = owner
                made_from = target.compiled.get(op_name) if target.compiled else None
                if target.backward and made_from:
                    # a compiled backward kernel's work: for the forward lines it was made from
                    weight = sum(n for _, _, n in made_from)
                    for file, line, n in made_from:
                        acc = target.compiled_links.setdefault((file, line), [0, 0])
                        acc[1] += dur * n // weight
                elif target.backward:
                    seq = self._backward_seq(tid, start)
                    if seq is not None:
                        links = target.forward_device_links
                        links[(tid, seq)] = links.get((tid, seq), 0) + dur
            op = self.ops.get(op_name)
            if op is None:
                op = self.ops[op_name] = OpStats()
            op.device_ns += dur
            if made_from is not None and len(made_from) > 1 and not target.backward:
                # a compiled kernel fused from several lines: its work split as its CPU time is
                weight = sum(n for _, _, n in made_from)
                for file, line, n in made_from:
                    here = self._line_of(Place(file, line, target.function, n))
                    self._charge_device(here or target, a, op_name, dur * n // weight)
                continue
            self._charge_device(target, a, op_name, dur)
        return seen

    def end_recording(self) -> None:
        """One recording's events were all charged (a window of the one run, on a GPU):
        its ops' correlation ids go, so that another recording's, which may repeat them,
        find only their own ops."""
        self._correlation.clear()

    def _charge_device(self, target: LineStats, a: Activity, op_name: str, dur: int) -> None:
        target.device_ns += dur
        target.device_count += 1
        if self.device_timeline is not None:
            self.device_timeline.append((a, target, op_name))
        kernel = target.kernels.get(a.name)
        if kernel is None:
            target.kernels[a.name] = [dur, 1]
        else:
            kernel[0] += dur
            kernel[1] += 1
        target.add_op(op_name, 0, dur, 0)

    def _backward_seq(self, tid: int, start_ns: int) -> int | None:
        """The sequence number of the top-level backward op that ran an op starting at
        ``start_ns`` on thread ``tid`` (its kernels belong to that op's forward line)."""
        ops = self._backward_ops.get(tid)
        if not ops:
            return None
        i = bisect.bisect_right(ops, (start_ns, 1 << 62, 1 << 62)) - 1
        if i >= 0 and ops[i][0] <= start_ns <= ops[i][1]:
            return ops[i][2]
        return None

    # -- output -------------------------------------------------------------------------
    def forward_line_of(self, key: tuple[int, int]) -> LineStats | None:
        """The line of the forward op that made autograd node ``seq``, run backward on thread
        ``tid`` (``key``: (tid, seq); read after the walk). Nodes are numbered per thread: a
        backward on a thread that ran forward ops (the CPU engine runs it on the calling
        thread) is that thread's; one on a thread that ran none (autograd's device threads)
        is the main thread's."""
        tid, seq = key
        numbered = self._forward_seq.get(tid)
        if numbered is None:
            tid = self._main_tid if self._main_tid is not None else tid
            numbered = self._forward_seq.get(tid)
            if numbered is None:
                return None
        seen = numbered.get(seq)
        if seen is None:
            numbers = self._forward_numbers.setdefault(tid, [])
            if len(numbers) != len(numbered):
                numbers[:] = sorted(numbered)
            i = bisect.bisect_right(numbers, seq) - 1
            if i < 0:
                return None
            seen = numbered[numbers[i]]
        return seen[1]
