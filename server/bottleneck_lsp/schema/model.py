"""The result document as types: one dataclass per object of docs/result-schema.md.

``Document.from_json`` checks a document against these types (every key known, every
value of its type, the path of the first problem in the error) and ``to_json`` writes it
back unchanged: keys a document did not have stay absent. Standard library only, like the
contract (the runner may import it).

This is the schema's one definition: ``result.validate`` uses it, and a test checks that
docs/result-schema.md names every field.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

T = TypeVar("T", bound="Node")
P = TypeVar("P", bound="Pass")
_NOT_JSON = {"json": False}  # a field's metadata: derived, never read or written as JSON


class ModelError(ValueError):
    """A document that does not fit the types; the message names where (``passes[2].lines[0].line``)."""


@dataclass(kw_only=True)
class Node:
    """A JSON object. ``absent``: the keys this one did not have (written back absent)."""

    absent: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    @classmethod
    def from_json(cls: type[T], data: Any, path: str = "") -> T:
        return _structure(cls, data, path or cls.__name__)  # type: ignore[no-any-return]

    def to_json(self) -> dict[str, Any]:
        return _unstructure(self)  # type: ignore[no-any-return]

    @classmethod
    def given(cls: type[T], **values: Any) -> T:
        """One made here with these values only: its other keys (those with a default) are
        left out when it is written, as a runner leaves out what does not apply."""
        left_out = frozenset(key for name, key, _, default in _fields(cls) if default and name not in values)
        return cls(**values, absent=left_out)

    def update(self, **values: Any) -> None:
        """Set these fields; each is written from now on (no longer ``absent``)."""
        for name, value in values.items():
            setattr(self, name, value)
        self.absent = self.absent - {_json_name(name) for name in values}

    def update_json(self, data: dict[str, Any], path: str = "") -> None:
        """``update`` with fields given as JSON (``data``'s keys), checked and converted as
        ``from_json`` does; ModelError names the first that does not fit."""
        by_key = {key: (name, ftype) for name, key, ftype, _ in _fields(type(self))}
        values = {}
        for key, value in data.items():
            if key not in by_key:
                raise ModelError(f"{path or type(self).__name__} has an unknown key {str(key)[:40]!r}")
            name, ftype = by_key[key]
            values[name] = _structure(ftype, value, f"{path or type(self).__name__}.{key}")
        self.update(**values)


class _Word(str, enum.Enum):
    """A word of the document from a fixed set: a ``str`` (it compares, hashes and formats
    as its value, and JSON writes it as one), checked when it is read."""

    def __str__(self) -> str:
        return str.__str__(self)

    def __format__(self, spec: str) -> str:
        return str.__format__(self, spec)


class PassName(_Word):
    SAMPLE = "sample"
    CPROFILE = "cprofile"
    CPU = "cpu"
    CUDA = "cuda"


class PassStatus(_Word):
    OK = "ok"
    EXIT = "exit"
    ERROR = "error"
    SYNTAX_ERROR = "syntax_error"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    TERMINATED = "terminated"
    CRASHED = "crashed"
    SKIPPED = "skipped"


# -- the document ----------------------------------------------------------------------------
@dataclass(kw_only=True)
class Tool(Node):
    name: str
    version: str


@dataclass(kw_only=True)
class PythonInfo(Node):
    version: str
    implementation: str
    executable: str


@dataclass(kw_only=True)
class TorchInfo(Node):
    version: str
    git_version: str | None = None
    debug: bool = False
    cuda_compiled: str | None = None
    hip_compiled: str | None = None
    cuda_available: bool = False
    cudnn: int | None = None
    cuda_driver: int | None = None
    devices: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Package(Node):
    name: str
    spec: str


@dataclass(kw_only=True)
class Environment(Node):
    python: PythonInfo
    os: str
    machine: str = ""
    torch: TorchInfo | None = None
    torch_error: str | None = None
    packages: list[Package] = field(default_factory=list)


@dataclass(kw_only=True)
class ScriptError(Node):
    type: str
    message: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    function: str | None = None
    end_line: int | None = None
    end_column: int | None = None
    traceback: str = ""
    rank: int | None = None  # a distributed job: the rank that failed
    at_ns: int | None = None  # ... and when (the system clock): the first failure is the cause


@dataclass(kw_only=True)
class Startup(Node):
    import_torch_s: float | None = None
    import_torch_lazy_s: float | None = None
    # loaded by the script: set aside (separate runs' sample pass), or on its line (the one run)
    compiler_stack_in_run_s: float | None = None
    inductor_in_run_s: float | None = None  # what torch.compile imports with inductor, the same way
    cuda_init_s: float | None = None


@dataclass(kw_only=True)
class OutputTail(Node):
    stdout: str = ""
    stderr: str = ""


@dataclass(kw_only=True)
class Prestarted(Node):
    waited_s: float


@dataclass(kw_only=True)
class LingeringThread(Node):
    """A thread that held the process's exit after the script ended."""

    name: str
    state: str  # "waiting", "running" (its CPU clock moved), "unknown"
    where: str  # its innermost frame: "threading.py:327 in wait"
    file: str | None = None  # the innermost line of the user's files on its stack
    line: int | None = None
    function: str | None = None
    code: str = ""  # that line's text
    stack: str = ""  # its Python stack, innermost last


@dataclass(kw_only=True)
class Lingering(Node):
    """The script ended, its results were written, but its process did not exit within the
    grace: what held it, and the runner ended it."""

    script_ended_s: float
    grace_s: float
    threads: list[LingeringThread] = field(default_factory=list)


# -- the sample pass ---------------------------------------------------------------------------
@dataclass(kw_only=True)
class SampledLine(Node):
    file: str
    line: int
    column: int = 1
    text: str = ""
    function: str = ""
    ticks: int = 0
    wall_s: float = 0.0
    cpu_s: float | None = None
    python_s: float = 0.0
    wall_share: float = 0.0
    cpu_share: float | None = None
    compiling_s: float = 0.0
    importing_s: float = 0.0  # the one run: of wall_s, while torch imported its compiler stack (one-time)
    rss_raised_bytes: int = 0  # how much the process's peak RSS rose while the line ran (runner/peakrss.py)
    windowed_s: float | None = None  # the one run: of wall_s, sampled while a window recorded


@dataclass(kw_only=True)
class ThreadLine(Node):
    thread: str
    file: str
    line: int
    column: int = 1
    text: str = ""
    function: str = ""
    wall_s: float = 0.0
    cpu_s: float | None = None  # of it, on a CPU (its thread's clock): little means it waited


@dataclass(kw_only=True)
class SampledFunction(Node):
    """A Python function's sampled time (runner/stacks.py): ``self_s`` as the innermost frame
    (running, or in a C call it made), ``total_s`` anywhere on the main thread's stack."""

    file: str
    line: int  # the function's first line
    function: str
    self_s: float
    total_s: float
    user: bool = False  # in the user's files


@dataclass(kw_only=True)
class FlameFrame(Node):
    """A frame of the flame graph: the user's at the line it was at, a library's at its
    function's first line."""

    file: str
    line: int
    function: str
    user: bool = False


@dataclass(kw_only=True)
class FlameStack(Node):
    frames: list[int]  # indexes into ``Flame.frames``, outermost first
    time_s: float


@dataclass(kw_only=True)
class Flame(Node):
    """The main thread's sampled stacks, folded (runner/stacks.py): what a flame graph draws."""

    frames: list[FlameFrame] = field(default_factory=list)
    stacks: list[FlameStack] = field(default_factory=list)  # the most time first
    dropped_s: float = 0.0  # looks at stacks left out (past the bounds)


@dataclass(kw_only=True)
class PeakRss(Node):
    """The process's peak RSS over the sampled run, and the line that raised it last."""

    bytes: int
    start_bytes: int  # when the script started
    file: str | None = None  # None: it never rose while the script ran
    line: int | None = None
    at_s: float | None = None  # into the run
    windowed: bool = False  # reached while a recording window was open (its buffers count)


@dataclass(kw_only=True)
class Samples(Node):
    interval_s: float
    signal_interval_s: float | None = None
    ticks: int = 0
    signal_looks: int = 0
    late_signals: int = 0
    kept_looks: int = 0
    timer_released: bool = False
    wall_s: float = 0.0
    cpu_s: float | None = None
    outside_s: float = 0.0
    sampler_cpu_s: float | None = None
    windowed_s: float | None = None  # the one run: of wall_s, on the user's lines while a window recorded
    peak_rss: PeakRss | None = None
    functions: list[SampledFunction] = field(default_factory=list)  # the most total time first
    flame: Flame | None = None  # the folded stacks (none in a progress snapshot)
    lines: list[SampledLine] = field(default_factory=list)
    threads: list[ThreadLine] = field(default_factory=list)


# -- torch.compile's own records (the sample pass) -----------------------------------------------
@dataclass(kw_only=True)
class GraphBreak(Node):
    """Where TorchDynamo broke a compiled function's graph: the line of the user's files
    (``file``, ``line``), torch's reason, how many times."""

    file: str
    line: int
    reason: str  # torch's own first line ("Unsupported Tensor.item() call with ...")
    explanation: str = ""
    hints: list[str] = field(default_factory=list)
    count: int = 1
    function: str = ""  # the compiled function it split


@dataclass(kw_only=True)
class Recompile(Node):
    """A compiled function compiled again: the guard that failed, at the line of the call
    that made it (``file``, ``line``)."""

    file: str
    line: int
    function: str  # the function compiled again
    reason: str  # the guard that failed ("tensor 'x' size mismatch at index 0. expected 8, actual 16")
    count: int = 1
    limit: bool = False  # it hit the recompile limit: torch runs the function without compiling from then on


@dataclass(kw_only=True)
class CompileCall(Node):
    """A ``torch.compile`` call of the user's files (decorator, ``torch.compile(model)``,
    ``model.compile()``) and what became of what it compiled."""

    file: str
    line: int
    target: str  # the function or module's name
    graphs: int = 0
    graph_breaks: int = 0
    recompiles: int = 0
    limit: bool = False  # a recompile limit was hit


@dataclass(kw_only=True)
class Dynamo(Node):
    """What torch.compile recorded of the run (TorchDynamo's structured trace)."""

    calls: list[CompileCall] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    # compiles made again because the one run's recording windows changed torch's mode stack
    # (the line marker's mode): the profiler's doing, left out of the above
    profiler_recompiles: int = 0


# -- device activity (the sample pass on a GPU, the cuda pass) ---------------------------------
@dataclass(kw_only=True)
class DeviceBusy(Node):
    device: int
    busy_s: float


@dataclass(kw_only=True)
class KindTotal(Node):
    time_s: float
    count: int


@dataclass(kw_only=True)
class TopKernel(Node):
    name: str
    kind: str
    time_s: float
    count: int


@dataclass(kw_only=True)
class DeviceSummary(Node):
    wall_s: float
    device_time_s: float = 0.0
    busy_s: float = 0.0
    busy_by_device: list[DeviceBusy] = field(default_factory=list)
    by_kind: dict[str, KindTotal] = field(default_factory=dict)
    wait_s: float | None = None
    wait_calls: int | None = None
    module_loading_s: float = 0.0
    top_kernels: list[TopKernel] = field(default_factory=list)


# -- the cprofile pass -------------------------------------------------------------------------
@dataclass(kw_only=True)
class Totals(Node):
    """A pass's totals: cProfile's (tottime_s, calls) or the autograd passes' (the rest)."""

    tottime_s: float | None = None
    calls: int | None = None
    self_cpu_us: float | None = None
    self_device_us: float | None = None
    wait_us: float | None = None


@dataclass(kw_only=True)
class Function(Node):
    file: str
    line: int
    function: str
    user: bool
    ncalls: int
    primitive_calls: int
    tottime_s: float
    cumtime_s: float
    share: float


@dataclass(kw_only=True)
class CallSite(Node):
    file: str
    line: int
    column: int
    text: str
    function: str
    callee: str
    exact: bool
    ncalls: int
    tottime_s: float
    cumtime_s: float
    share: float


# -- the autograd passes -----------------------------------------------------------------------
@dataclass(kw_only=True)
class LineOp(Node):
    name: str
    self_cpu_us: float
    self_device_us: float = 0.0
    count: int = 0


@dataclass(kw_only=True)
class Kernel(Node):
    name: str
    kind: str
    device_us: float
    count: int


@dataclass(kw_only=True)
class ForwardLink(Node):
    file: str
    line: int
    backward_cpu_us: float = 0.0
    backward_device_us: float = 0.0


@dataclass(kw_only=True)
class MadeFrom(Node):
    """A line of the user's files a compiled kernel was made from: ``ops`` of its FX nodes."""

    file: str
    line: int
    ops: int = 1


@dataclass(kw_only=True)
class CompiledKernel(Node):
    """One of a line's ops that torch.compile generated (``name`` as in ``ops``), with the
    lines inductor made it from (its provenance). A kernel made from several lines has its
    time split over them by their ``ops``; a backward line's kernels differentiate them."""

    name: str
    made_from: list[MadeFrom] = field(default_factory=list)


@dataclass(kw_only=True)
class LineMemory(Node):
    """What a line's ops allocated during an autograd pass (``profile_memory``)."""

    allocated_bytes: int = 0
    allocations: int = 0
    freed_bytes: int = 0  # of those, freed before the pass ended
    live_at_peak_bytes: int = 0  # of those, live at the pass's peak
    peak_share: float = 0.0  # live_at_peak_bytes / the pass's peak_bytes


@dataclass(kw_only=True)
class MemorySummary(Node):
    """A pass's memory: allocations made while it profiled, on its device."""

    device: str
    peak_bytes: int  # the most the script's allocations added up to at once
    allocated_bytes: int = 0
    allocations: int = 0
    freed_bytes: int = 0
    live_at_end_bytes: int = 0
    frees_of_earlier_memory: int = 0
    peak_at_s: float | None = None
    allocator_bytes_at_peak: int | None = None
    reserved_bytes_at_peak: int | None = None
    peak_file: str | None = None
    peak_line: int | None = None
    outside_your_files_at_peak_bytes: int = 0


@dataclass(kw_only=True)
class OpLine(Node):
    """A line's op costs in an autograd pass (``lines[]``; ``unattributed`` has no place)."""

    file: str = ""
    line: int = 0
    column: int = 1
    text: str = ""
    function: str = ""
    exact: bool = True
    self_cpu_us: float = 0.0
    self_device_us: float = 0.0
    cpu_share: float = 0.0
    device_share: float = 0.0
    count: int = 0
    ops: list[LineOp] = field(default_factory=list)
    backward: bool = False
    forward_lines: list[ForwardLink] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    compiled: list[CompiledKernel] = field(default_factory=list)
    device_count: int = 0
    kernels: list[Kernel] = field(default_factory=list)
    wait_us: float = 0.0
    wait_share: float = 0.0
    memory: LineMemory | None = None


@dataclass(kw_only=True)
class OpTotal(Node):
    name: str
    count: int
    self_cpu_us: float
    cpu_total_us: float
    self_device_us: float = 0.0


@dataclass(kw_only=True)
class FunctionCalls(Node):
    file: str
    line: int
    function: str
    count: int


@dataclass(kw_only=True)
class EventBudget(Node):
    reason: str = "calls"
    torch_calls: int = 0
    recorded_s: float = 0.0


@dataclass(kw_only=True)
class Windows(Node):
    """What an autograd pass recorded in windows of the one run covers (docs/performance.md,
    "One run"): how many windows, their recorded seconds of the run's, the time spent on
    them (recording and reading), the torch calls they recorded, and each window as
    [seconds into the run, seconds long, torch calls] (the first ``MAX_SPANS``)."""

    count: int
    recorded_s: float
    run_s: float
    spent_s: float
    torch_calls: int
    per_call_us: float = 0.0  # what recording cost a torch call, measured before the script ran
    spans: list[list[float]] = field(default_factory=list)


@dataclass(kw_only=True)
class Collective(Node):
    """A collective op a rank ran (a distributed job's cpu and cuda passes), in start order."""

    name: str
    start_ns: int  # on the system clock: ranks on one machine compare
    duration_us: float
    file: str = ""  # the line that issued it ("" outside the user's files)
    line: int = 0
    # what it sent: its input tensors (c10d:: ops; 0 for the backends' own); None: not recorded
    bytes: int | None = None


@dataclass(kw_only=True)
class Pass(Node):
    """One pass's part; which keys it has depends on the pass (docs/result-schema.md)."""

    name: PassName
    status: PassStatus
    exit_code: int | None = None
    skip_reason: str | None = None
    omit: bool = False
    error: ScriptError | None = None
    notes: list[str] = field(default_factory=list)
    startup: Startup | None = None
    warm: bool = False
    wall_s: float | None = None
    peak_rss_mb: float | None = None
    output_tail: OutputTail | None = None
    timeout_s: float | None = None
    # --duration: stopped after this many seconds, as asked; what it recorded until then
    stopped_after_s: float | None = None
    signal: str | None = None
    lingering: Lingering | None = None  # its process did not exit after the script ended
    child_processes: int = 0
    prestarted: Prestarted | None = None
    script_wall_s: float | None = None
    postprocess_s: float | None = None
    event_count: int = 0
    replayed_from: str | None = None
    recorded_on: dict[str, Any] = field(default_factory=dict)
    # sample
    samples: Samples | None = None
    dynamo: Dynamo | None = None  # torch.compile's graph breaks and recompiles (absent: nothing compiled)
    device: DeviceSummary | None = None
    device_event_count: int = 0
    # cprofile
    within: PassName | None = None  # recorded in that pass's run ("cpu"), not one of its own
    totals: Totals | None = None
    functions: list[Function] = field(default_factory=list)
    call_sites: list[CallSite] = field(default_factory=list)
    # cpu, cuda
    lines: list[OpLine] = field(default_factory=list)
    unattributed: OpLine | None = None
    ops: list[OpTotal] = field(default_factory=list)
    function_calls: list[FunctionCalls] = field(default_factory=list)
    exact_lines: bool = True
    garbled_frames: int = 0
    memory: MemorySummary | None = None
    torch_calls: int | None = None
    event_budget: EventBudget | None = None
    windows: Windows | None = None  # recorded in windows of the one run, not the whole run
    # distributed jobs
    rank: int | None = None
    collectives: list[Collective] = field(default_factory=list)

    def add_note(self, note: str) -> None:
        """One more note; ``notes`` is written from now on."""
        self.notes.append(note)
        self.update(notes=self.notes)


# -- a runner's part, as it writes it -----------------------------------------------------------
@dataclass(kw_only=True)
class CProfileTable(Node):
    """cProfile's table, recorded in the cpu pass's run: the job makes it its cprofile pass
    (job/cprofile_ride.py)."""

    script_wall_s: float
    event_count: int
    totals: Totals
    functions: list[Function]
    call_sites: list[CallSite]
    postprocess_s: float


@dataclass(kw_only=True)
class RunnerPart(Pass):
    """One runner's part, as it writes it and the host reads it: its pass, and beside it
    what the job takes out of it (never in the document's pass): the environment (the
    first pass's), and cProfile's table recorded in the cpu pass's run."""

    environment: Environment | None = None
    cprofile: CProfileTable | None = None
    # the sample pass's run recorded the cpu pass in windows (runner/windows.py): its part
    windowed: RunnerPart | None = None
    # ... and on a GPU the cuda pass (device time, kernels and waits) in the same windows
    windowed_device: RunnerPart | None = None

    def as_pass(self) -> Pass:
        """The pass alone, as the document holds it."""
        values = {name: getattr(self, name) for name, _, _, _ in _fields(Pass)}
        return Pass(**values, absent=self.absent - {"environment", "cprofile", "windowed", "windowed_device"})


# -- what analysis adds ------------------------------------------------------------------------
@dataclass(kw_only=True)
class Verdict(Node):
    bound: str
    device_busy_fraction: float
    busy_s: float
    device_time_s: float
    cpu_op_time_s: float | None = None
    wall_s: float
    module_loading_s: float = 0.0
    wait_s: float | None = None
    wait_fraction: float | None = None
    source: str = ""
    traced: bool = False
    rule: str = ""
    # the pass it comes from: "pass" in JSON (a Python keyword), see _JSON_NAMES
    pass_: str = ""


@dataclass(kw_only=True)
class Spread(Node):
    """A column's value on each rank (``values``, in ``Distributed.ranks``' order): seconds,
    or bytes for the memory column; a line a rank never ran counts 0 there."""

    values: list[float]
    min: float
    median: float
    max: float
    max_rank: int


@dataclass(kw_only=True)
class Cell(Node):
    share: float
    time_s: float
    bytes: int | None = None  # the memory column: bytes live at the peak (time_s is 0)
    running_s: float | None = None  # the threads column: of its time, on a CPU (the rest waited)
    spread: Spread | None = None  # a distributed job: share and time_s are the ranks' medians


@dataclass(kw_only=True)
class CallFromLine(Node):
    name: str
    cumtime_s: float
    count: int


@dataclass(kw_only=True)
class RankedLine(Node):
    """One source line, every column measured for it (``columns``); ``share`` and
    ``time_s`` are the ranking column's, ``kind`` (set by its ``Ranking``; not in JSON)."""

    file: str
    line: int
    column: int
    text: str
    function: str
    exact: bool
    share: float
    time_s: float
    columns: dict[str, Cell]
    path: str = ""  # ``file`` relative to the document's ``root`` ("" outside it)
    # a notebook's line: its cell (1-based over all cells; ``file`` is then ``nb.ipynb#cellN``
    # and ``line`` the line within the cell); absent elsewhere
    cell: int | None = None
    count: int = 0
    ops: list[LineOp] = field(default_factory=list)
    device_count: int = 0
    kernels: list[Kernel] = field(default_factory=list)
    backward: bool = False
    forward_lines: list[ForwardLink] = field(default_factory=list)
    calls: list[CallFromLine] = field(default_factory=list)
    opaque: list[str] = field(default_factory=list)
    compiled: list[CompiledKernel] = field(default_factory=list)
    memory: LineMemory | None = None
    # the one run: the sampler found the line, no window of the cpu pass recorded it
    unrecorded: bool = False
    kind: str = field(default="", compare=False, metadata=_NOT_JSON)

    @property
    def key(self) -> tuple[str, int]:
        return (self.file, self.line)


@dataclass(kw_only=True)
class Disagreement(Node):
    file: str
    line: int
    function: str
    counts: dict[str, int]
    spread: int


@dataclass(kw_only=True)
class Ranking(Node):
    ranked_by: str | None
    denominators: dict[str, str] = field(default_factory=dict)
    disagreements: list[Disagreement] = field(default_factory=list)
    lines: list[RankedLine] = field(default_factory=list)

    def __post_init__(self) -> None:
        for line in self.lines:
            line.kind = self.ranked_by or ""


@dataclass(kw_only=True)
class RankRun(Node):
    """One rank's own parts of a distributed job's passes."""

    rank: int
    passes: list[Pass]


@dataclass(kw_only=True)
class Launch(Node):
    """How a distributed job was launched: torchrun's --nproc-per-node and other options."""

    nproc_per_node: int
    options: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class RankSummary(Node):
    rank: int
    status: PassStatus
    wall_s: float | None = None  # the script's wall time on this rank (sample pass, else cpu)
    collectives: int = 0  # collective ops it issued (cpu pass)
    collective_s: float = 0.0  # their time: transfer and waiting
    wait_s: float = 0.0  # of which waiting for the last rank to arrive
    transfer_s: float = 0.0
    last: int = 0  # collectives this rank entered last
    bytes: int | None = None  # what its collectives sent (their input tensors); None: not recorded


@dataclass(kw_only=True)
class ExcessLine(Node):
    """A line on the straggler over the other ranks' median (the ranking column)."""

    file: str
    line: int
    text: str
    function: str
    rank_s: float
    others_median_s: float
    excess_s: float


@dataclass(kw_only=True)
class Straggler(Node):
    rank: int
    last: int  # collectives it entered last
    matched: int  # of how many matched across the ranks
    late_s: float  # on average, how long after the others' median it arrived
    lines: list[ExcessLine] = field(default_factory=list)


@dataclass(kw_only=True)
class Distributed(Node):
    """What analysis makes of a distributed job's ranks."""

    world_size: int
    ranks: list[RankSummary]
    column: str = ""  # the column spreads and excess are read in (the ranking's)
    matched: int = 0  # collectives matched across the ranks, by order per op name
    straggler: Straggler | None = None
    notes: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Replay(Node):
    file: str
    format_version: int


@dataclass(kw_only=True)
class SourceFile(Node):
    """A file of the ranking as it was when its run ended: one short hash per line of its
    text, indentation left out. What ``diff`` aligns two versions of the file by."""

    file: str
    hashes: list[str]


@dataclass(kw_only=True)
class Document(Node):
    schema: str
    version: int
    tool: Tool
    created: str = ""
    script: str
    module: str | None = None  # run as ``python -m module`` (``script``: its file)
    args: list[str]
    cwd: str
    roots: list[str]
    root: str = ""  # what the ranking's relative paths are relative to
    python: str
    environment: Environment | None = None
    passes: list[Pass]
    status: PassStatus
    exit_code: int | None = None
    runs: int | None = None  # how many times the job ran the script (each rank counted once)
    verdict: Verdict | None = None
    ranking: Ranking | None = None
    replay: Replay | None = None
    # a distributed job: how it was launched, each rank's parts, what analysis made of them
    launch: Launch | None = None
    ranks: list[RankRun] = field(default_factory=list)
    distributed: Distributed | None = None
    sources: list[SourceFile] = field(default_factory=list)  # the ranking's files, line by line

    def pass_named(self, name: str) -> Pass | None:
        return next((p for p in self.passes if p.name == name), None)


# -- structuring -------------------------------------------------------------------------------
_JSON_NAMES = {"pass_": "pass"}  # fields whose JSON key is a Python keyword


def _json_name(name: str) -> str:
    return _JSON_NAMES.get(name, name)


_FIELDS: dict[str, tuple[tuple[str, str, Any, bool], ...]] = {}


def _fields(cls: type) -> tuple[tuple[str, str, Any, bool], ...]:
    """(attribute, JSON key, resolved type, has a default) per field, ``absent`` aside."""
    known = _FIELDS.get(cls.__qualname__)
    if known is not None:
        return known
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if f.name == "absent" or f.metadata.get("json") is False:
            continue
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        out.append((f.name, _json_name(f.name), hints[f.name], has_default))
    _FIELDS[cls.__qualname__] = found = tuple(out)
    return found


class _PathError(Exception):
    """Raised inside the converters with the path from the failing value up (built only on
    the way out: the path of every value is never made)."""

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.path = path

    def under(self, step: str) -> _PathError:
        self.path = step + self.path
        return self


Converter = Callable[[Any], Any]
_NONE_ABSENT: frozenset[str] = frozenset()
_CONVERTERS: dict[Any, Converter] = {}


def _structure(tp: Any, value: Any, path: str) -> Any:
    try:
        return _converter(tp)(value)
    except _PathError as problem:
        raise ModelError(f"{path}{problem.path} {problem.message}") from None


def _converter(tp: Any) -> Converter:
    """A function that checks and converts one value of type ``tp``, made once per type."""
    found = _CONVERTERS.get(tp)
    if found is None:
        found = _CONVERTERS[tp] = _make_converter(tp)
    return found


def _make_converter(tp: Any) -> Converter:
    if isinstance(tp, type) and issubclass(tp, Node):
        return _node_converter(tp)
    origin = typing.get_origin(tp)
    if origin in (Union, types.UnionType):
        options = [o for o in typing.get_args(tp) if o is not type(None)]
        inner = _converter(options[0])
        nullable = len(options) < len(typing.get_args(tp))

        def optional(value: Any) -> Any:
            if value is None:
                if nullable:
                    return None
                raise _PathError("is null")
            return inner(value)

        return optional
    if origin is list:
        item = _converter(typing.get_args(tp)[0])

        def each(value: Any) -> Any:
            if not isinstance(value, list):
                raise _PathError("is not a list")
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(item(v))
                except _PathError as problem:
                    raise problem.under(f"[{i}]") from None
            return out

        return each
    if origin is dict:
        item = _converter(typing.get_args(tp)[1])

        def mapping(value: Any) -> Any:
            if not isinstance(value, dict):
                raise _PathError("is not an object")
            out = {}
            for k, v in value.items():
                try:
                    out[str(k)] = item(v)
                except _PathError as problem:
                    raise problem.under(f".{k}") from None
            return out

        return mapping
    if tp is Any:
        return lambda value: value
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        members = {member.value: member for member in tp}

        def word(value: Any) -> Any:
            if not isinstance(value, str):
                raise _PathError(f"is not a str: {str(value)[:40]!r}")
            found = members.get(value)
            if found is None:
                raise _PathError(f"is {value[:40]!r}")
            return found

        return word
    if tp in (bool, int, float, str):
        accept: tuple[type, ...] = (int, float) if tp is float else (tp,)
        reject_bool = tp is not bool

        def primitive(value: Any) -> Any:
            if isinstance(value, accept) and not (reject_bool and isinstance(value, bool)):
                return value
            raise _PathError(f"is not a {tp.__name__}: {str(value)[:40]!r}")

        return primitive
    raise TypeError(f"model: no rule for {tp!r}")


def _node_converter(cls: type[Node]) -> Converter:
    plan: list[tuple[str, str, Converter | None, bool]] = []
    known: set[str] = set()

    def node(value: Any) -> Any:
        if not plan:  # filled on first use: the field types may refer to later classes
            for name, key, ftype, has_default in _fields(cls):
                plan.append((name, key, _converter(ftype), has_default))
                known.add(key)
        if not isinstance(value, dict):
            raise _PathError("is not an object")
        for k in value:
            if k not in known:
                raise _PathError(f"has an unknown key {str(k)[:40]!r}")
        kwargs: dict[str, Any] = {}
        absent = []
        for name, key, convert, has_default in plan:
            if key in value:
                assert convert is not None
                try:
                    kwargs[name] = convert(value[key])
                except _PathError as problem:
                    raise problem.under(f".{key}") from None
            elif has_default:
                absent.append(key)
            else:
                raise _PathError("is missing", f".{key}")
        return cls(**kwargs, absent=frozenset(absent) if absent else _NONE_ABSENT)

    return node


def _unstructure(value: Any) -> Any:
    if isinstance(value, Node):
        absent = value.absent
        return {
            key: _unstructure(getattr(value, name))
            for name, key, _, _ in _fields(type(value))
            if key not in absent
        }
    if isinstance(value, list):
        return [_unstructure(v) for v in value]
    if isinstance(value, dict):
        return {k: _unstructure(v) for k, v in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    return value


def field_names() -> dict[str, list[str]]:
    """Every object type's JSON keys, by type name (for the schema document's test)."""
    out = {}
    for obj in list(globals().values()):
        if isinstance(obj, type) and issubclass(obj, Node) and obj is not Node:
            out[obj.__name__] = [key for _, key, _, _ in _fields(obj)]
    return out
