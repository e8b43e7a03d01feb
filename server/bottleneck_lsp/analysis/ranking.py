"""Pure functions over a result document: one row per source line, the CPU/GPU verdict.

Every pass measures something different about a line; ``hotspots`` joins them into one
row per line, each column with one stated denominator, and ranks the rows by one column:
device time when the run is GPU-bound, else wall time (the sample pass), else what was
measured. Everything the user sees reads this one ranking: the CLI's hotspot list and
compiler-style lines, the diagnostics, lenses and hovers, the server's summary.

``conclude`` adds them to a document (status, verdict, ranking), once, where it is made;
the presentation reads ``doc.ranking``. Nothing here runs code or touches the disk.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..notebook.cell_paths import cell_of
from ..paths import module_path
from ..paths.root_map import outermost_root, relative_to
from ..schema.contract import JOB_STOPPED
from ..schema.model import (
    CallFromLine,
    Cell,
    Disagreement,
    Document,
    Function,
    LingeringThread,
    OpLine,
    Pass,
    PassName,
    PassStatus,
    RankedLine,
    Ranking,
    SampledLine,
    Samples,
    ThreadLine,
    Verdict,
)
from . import coverage, distributed

Hotspot = RankedLine  # a ranked row, as the presentation calls it

# Columns, also the diagnostics' codes (the ranking column's).
WALL = "wall-time"  # sample pass: main-thread wall time at the line
PYTHON = "python-time"  # sample pass: of which running Python (not in a C call)
COMPILING = "compile-time"  # sample pass: of which while torch.compile compiled (one-time)
IMPORTING = "import-time"  # the one run: of which while torch imported its compiler stack (one-time)
THREADS = "thread-time"  # sample pass: other threads' wall time at the line (threads the script runs)
CPU = "cpu-op-time"  # cpu pass: torch ops' self CPU time
DEVICE = "device-time"  # cuda pass: kernels, copies
WAIT = "device-wait"  # cuda pass: the CPU blocked on the device
MEMORY = "memory"  # cpu/cuda pass with memory: bytes the line's ops allocated, live at the peak
RSS = "peak-rss"  # sample pass: how much the process's peak RSS rose while the line ran (whole run)

COLUMNS = (WALL, PYTHON, COMPILING, IMPORTING, THREADS, CPU, DEVICE, WAIT, MEMORY, RSS)
BYTES = (MEMORY, RSS)  # columns of bytes, not seconds
KIND_LABEL = {
    WALL: "wall time",
    PYTHON: "Python time",
    COMPILING: "wall time while torch.compile compiled",
    IMPORTING: "wall time while torch imported its compiler stack",
    THREADS: "other threads' wall time",
    CPU: "op CPU time",
    DEVICE: "device time",
    WAIT: "wall time waiting on the device",
    MEMORY: "memory at the peak",
    RSS: "the process's peak RSS",
}
SHORT = {
    WALL: "wall",
    PYTHON: "Python",
    COMPILING: "compile",
    IMPORTING: "import",
    THREADS: "threads",
    CPU: "op CPU",
    DEVICE: "device",
    WAIT: "wait",
    MEMORY: "memory",
    RSS: "peak RSS",
}
# What each column's share is a share of: stated once, shown with the report.
DENOMINATOR = {
    WALL: "the main thread's sampled wall time (sample pass)",
    PYTHON: "the same sampled wall time: the part spent running Python, not in a C call",
    COMPILING: "the same sampled wall time: the part while torch.compile compiled (one-time work)",
    IMPORTING: (
        "the same sampled wall time: the part while torch imported its compiler stack for the script "
        "(one-time work)"
    ),
    THREADS: "the same sampled wall time: other threads' sampled wall time at the line, as a share of it",
    CPU: "all torch ops' self CPU time (cpu pass)",
    DEVICE: "all device time: kernels, memcpy, memset (cuda pass)",
    WAIT: "the cuda pass's wall time",
    MEMORY: "the pass's memory peak: the most the script's allocations (on the pass's device) held at once",
    RSS: (
        "the process's peak RSS over the whole run (sample pass): the line's part is how much "
        "the peak rose while it ran"
    ),
}


@dataclass(frozen=True)
class Thresholds:
    """Which lines are hotspots, and how loud each is. Shares are fractions (0.1 = 10%)."""

    min_share: float = 0.05  # a line at or above this share is always shown
    top: int = 3  # the top N lines are shown even under min_share
    warning_share: float = 0.20  # at or above: a warning (see ``severity``)
    min_memory_share: float = 0.10  # a line holding this share of the memory peak is shown
    rank_spread: float = 1.5  # distributed: the slowest rank at this many times the median is said


def amount(cell: Cell, kind: str) -> float:
    """A cell's absolute figure: seconds, or bytes for the memory column."""
    return float(cell.bytes or 0) if kind in BYTES else cell.time_s


# A line holding less than this at the memory peak is no memory hotspot, whatever its share
# of a small peak (a 68.6 KB peak line read as "74.6% of it", a warning): its share counts
# for nothing in marking lines (the figures stay in the document, the hover and the report)
MEMORY_FLOOR_BYTES = 1_000_000


# ... and a line that raised the process's peak RSS by less than this: the high-water mark
# moves by pages and by the allocator's own caching, and Python's objects raise it a little
# everywhere
RSS_FLOOR_BYTES = 20_000_000


def memory_share(row: Hotspot) -> float:
    """The row's share of the memory peak, as it counts for marking the line: 0 below
    ``MEMORY_FLOOR_BYTES``."""
    cell = row.columns.get(MEMORY)
    if cell is None or (cell.bytes or 0) < MEMORY_FLOOR_BYTES:
        return 0.0
    return cell.share


def rss_share(row: Hotspot) -> float:
    """The row's share of the process's peak RSS (how much it raised it), as it counts for
    marking the line: 0 below ``RSS_FLOOR_BYTES``."""
    cell = row.columns.get(RSS)
    if cell is None or (cell.bytes or 0) < RSS_FLOOR_BYTES:
        return 0.0
    return cell.share


WAITED = 0.1  # other threads on a CPU for less than this part of their time at a line: they waited


def waited(on_cpu_s: float | None, wall_s: float) -> bool:
    """Whether threads that spent ``wall_s`` at a line mostly waited there (a lock, an event,
    a queue, I/O) rather than ran: their CPU clocks moved for under ``WAITED`` of it (None:
    no per-thread clock, not known)."""
    return on_cpu_s is not None and on_cpu_s < WAITED * wall_s


def threads_waited(cell: Cell) -> bool:
    """``waited``, for the threads column's cell."""
    return waited(cell.running_s, cell.time_s)


def loudness(row: Hotspot) -> float:
    """The share a row's mark is as loud as: its ranking column's, or for a line marked for
    another column (where the CPU waits on the device) that column's; its share of the
    memory peak when that is larger. Other threads that only waited at a line count for
    the part of their time they ran."""
    if row.kind in row.columns:
        return max(row.share, memory_share(row), rss_share(row))
    return max((_loud(kind, c) for kind, c in row.columns.items()), default=0.0)


def _loud(kind: str, cell: Cell) -> float:
    if kind == RSS and (cell.bytes or 0) < RSS_FLOOR_BYTES:
        return 0.0
    if kind == THREADS and threads_waited(cell) and cell.running_s is not None:  # (for mypy)
        return cell.share * cell.running_s / cell.time_s
    return cell.share


def marked_for(row: Hotspot) -> str:
    """The column a line is marked for (a diagnostic's code, a SARIF rule): its ranking
    column's, else where the CPU waits, else the memory it holds."""
    if row.kind in row.columns:
        return row.kind
    for kind in (WAIT, THREADS, MEMORY, RSS):
        if kind in row.columns:
            return kind
    return row.kind


WARNING, INFORMATION, HINT = "warning", "information", "hint"


def severity(row: Hotspot, thresholds: Thresholds) -> str:
    """How loud a row's mark is, the one scale for the report and the editor: a warning at
    ``warning_share`` or more, information at ``min_share`` or more, a hint for a line
    shown only as one of the top N."""
    share = loudness(row)
    if share >= thresholds.warning_share:
        return WARNING
    return INFORMATION if share >= thresholds.min_share else HINT


def kernel_label(name: str) -> str:
    """A device activity's name, short enough for a lens: no ``void``, template arguments
    or parameters, no namespace (``vectorized_elementwise_kernel``, ``Memcpy DtoH``)."""
    text = name[5:] if name.startswith("void ") else name
    text = text.replace("(anonymous namespace)::", "")
    cuts = [i for i in (text.find("<"), text.find("(")) if i > 0]
    text = text[: min(cuts)].strip() if cuts else text
    text = text.rsplit("::", 1)[-1]
    return text if len(text) <= 48 else text[:45] + "..."


def _usable(part: Pass | None) -> Pass | None:
    return part if part is not None and part.status not in (PassStatus.SKIPPED, PassStatus.CRASHED) else None


MIN_TICKS = 20  # fewer looks than this (a script of a few ms): wall time is too coarse to rank by


def ranking_kind(doc: Document) -> str | None:
    """The column rows are ranked by: device time when GPU-bound, else wall time (when the
    sampler looked at least ``MIN_TICKS`` times), else whatever was measured (op CPU time,
    device time, then wall time however coarse)."""
    sample, cpu, cuda = (_usable(doc.pass_named(n)) for n in (PassName.SAMPLE, PassName.CPU, PassName.CUDA))
    has_device = cuda is not None and cuda.totals is not None and (cuda.totals.self_device_us or 0) > 0
    if doc.verdict is not None and doc.verdict.bound == "gpu" and has_device:
        return DEVICE
    samples = sample.samples if sample is not None else None
    if samples is not None and samples.lines and samples.ticks >= MIN_TICKS:
        return WALL
    if cpu is not None and cpu.lines:
        return CPU
    if has_device:
        return DEVICE
    if cuda is not None and cuda.lines:
        return CPU
    if samples is not None and samples.lines:
        return WALL
    return None


_NO_CELL = frozenset({"cell"})  # a script's line has no cell: the key is left out


class _Rows:
    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], Hotspot] = {}

    def get(self, entry: SampledLine | OpLine | ThreadLine) -> Hotspot:
        key = (entry.file, entry.line)
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = RankedLine(
                file=entry.file,
                line=entry.line,
                column=entry.column,
                text=entry.text,
                function=entry.function,
                exact=entry.exact if isinstance(entry, OpLine) else True,
                share=0.0,
                time_s=0.0,
                columns={},
                absent=_NO_CELL,
            )
        elif not row.text and entry.text:
            row.text, row.column = entry.text, entry.column
        return row


# The one run: when the cpu pass's windows took less than this part of the sampled time, the
# wall time column would be the time sampled outside them. Off (0): the windows are no fair
# sample of the run (the first opens with the script and records its start, up to a second
# or 2,000 torch calls), and leaving them out took a start phase's time off its lines (the
# fidelity corpus's lbfgs_closure.py read its forward line at 8-15% against 46%); the wall
# column keeps the windows' time, less what recording was measured to cost (runner/samplepass.py).
WINDOWED_APART = 0.0


def windows_apart(samples: Samples | None) -> bool:
    """Whether the wall time column leaves the one run's windows out (``WINDOWED_APART``)."""
    windowed = samples.windowed_s if samples is not None else None
    return windowed is not None and samples is not None and 0 < windowed < WINDOWED_APART * samples.wall_s


def _add_sampled(rows: _Rows, part: Pass) -> None:
    if part.samples is None:
        return
    total = part.samples.wall_s
    apart = windows_apart(part.samples)
    if apart:
        total -= part.samples.windowed_s or 0.0
    for entry in part.samples.lines:
        wall, scale = entry.wall_s, 1.0
        if apart:
            wall = round(entry.wall_s - (entry.windowed_s or 0.0), 6)
            if wall <= 0:
                continue  # sampled in the windows only
            scale = wall / entry.wall_s
        row = rows.get(entry)
        row.columns[WALL] = Cell(
            time_s=wall, share=entry.wall_share if not apart else round(wall / total, 6) if total > 0 else 0.0
        )
        python = round(entry.python_s * scale, 6)
        row.columns[PYTHON] = Cell(time_s=python, share=round(python / total, 6) if total > 0 else 0.0)
        # (no window records while torch imports: that part is all outside them)
        for kind, seconds in (
            (COMPILING, round(entry.compiling_s * scale, 6)),
            (IMPORTING, entry.importing_s),
        ):
            if seconds > 0:
                row.columns[kind] = Cell(
                    time_s=seconds, share=round(seconds / total, 6) if total > 0 else 0.0
                )
        peak = part.samples.peak_rss
        if entry.rss_raised_bytes > 0 and peak is not None and peak.bytes > 0:
            row.columns[RSS] = Cell(
                time_s=0.0, share=round(entry.rss_raised_bytes / peak.bytes, 6), bytes=entry.rss_raised_bytes
            )
    # Other threads' time, on their lines (the main thread may only wait for them, at a join)
    for other in part.samples.threads:
        row = rows.get(other)
        seen = row.columns.get(THREADS)  # another thread at the same line
        wall = round((seen.time_s if seen is not None else 0.0) + other.wall_s, 6)
        running = None
        if other.cpu_s is not None and (seen is None or seen.running_s is not None):
            before = seen.running_s if seen is not None and seen.running_s is not None else 0.0
            running = round(before + other.cpu_s, 6)
        row.columns[THREADS] = Cell(
            time_s=wall, share=round(wall / total, 6) if total > 0 else 0.0, running_s=running
        )


def _add_ops(rows: _Rows, part: Pass, with_cpu: bool, with_memory: bool) -> None:
    wall = part.script_wall_s or 0.0
    cuda = part.name == PassName.CUDA
    for entry in part.lines:
        if not entry.exact and entry.function == "<module>":
            # Known only as "somewhere at module level" (--no-exact-lines): no line to
            # show it on (the module's "def line" is line 1, an import or a docstring).
            continue
        has_cpu = with_cpu and entry.self_cpu_us > 0
        held = with_memory and entry.memory is not None and entry.memory.live_at_peak_bytes > 0
        if not (held or has_cpu or (cuda and (entry.self_device_us > 0 or entry.wait_us > 0))):
            continue  # nothing of this pass's columns to show for the line
        row = rows.get(entry)
        if held and entry.memory is not None:
            memory = entry.memory
            row.columns[MEMORY] = Cell(share=memory.peak_share, time_s=0.0, bytes=memory.live_at_peak_bytes)
            row.memory = memory
        if has_cpu:
            row.columns[CPU] = Cell(time_s=entry.self_cpu_us / 1e6, share=entry.cpu_share)
            row.count = entry.count
            row.ops = entry.ops
            row.backward = row.backward or entry.backward
            row.forward_lines = entry.forward_lines or row.forward_lines
            row.opaque = entry.opaque or row.opaque
            row.compiled = entry.compiled or row.compiled
            row.exact = row.exact and entry.exact
        if not cuda:
            continue
        if entry.self_device_us > 0:
            row.columns[DEVICE] = Cell(time_s=entry.self_device_us / 1e6, share=entry.device_share)
            row.kernels = entry.kernels
            row.device_count = entry.device_count
            row.backward = row.backward or entry.backward
            if not row.ops:
                row.ops = entry.ops
            if any(link.backward_device_us for link in entry.forward_lines):
                row.forward_lines = entry.forward_lines
        wait = entry.wait_us / 1e6
        if wait > 0:
            row.columns[WAIT] = Cell(time_s=wait, share=round(min(wait / wall, 1.0), 6) if wall > 0 else 0.0)


# The one run: a line's op CPU recorded in the windows is scaled to the whole run by how much
# more of its sampled wall time the run had than its windows: its own ratio when the windows
# saw it for at least this long, else the run's (the script's lines in all against in the
# windows). Windows over-represent the run's start (the first opens with the script), and the
# sampler sees the whole run. One-time work (torch.compile compiling, torch importing its
# compiler stack) is in neither side: the sampler never counts it as a window's time, and
# no op of it is in the column (a line whose import took 2 s of its 2.02 s read 64% of op
# CPU for a 2 ms op, scaled by its import)
MIN_WINDOWED_S = 0.002
EXTRAPOLATED = "each line's scaled to the whole run by its sampled wall time there against in the windows"


def _extrapolate_cpu(rows: _Rows, samples: Samples) -> None:
    """The op CPU column of a cpu pass recorded in windows of the one run, for the whole run
    (``MIN_WINDOWED_S``): each line's time scaled, shares of the scaled total."""
    sampled = {(e.file, e.line): e for e in samples.lines}
    inside = sum(e.windowed_s or 0.0 for e in samples.lines)
    overall = sum(_running_s(e) for e in samples.lines) / inside if inside > 0 else 1.0
    cells = [row.columns[CPU] for row in rows.rows.values() if CPU in row.columns]
    for row in rows.rows.values():
        cell = row.columns.get(CPU)
        if cell is None:
            continue
        entry = sampled.get(row.key)
        if entry is None:
            continue  # never sampled: as recorded
        windowed = entry.windowed_s or 0.0
        scale = _running_s(entry) / windowed if windowed >= MIN_WINDOWED_S else overall
        cell.time_s = round(cell.time_s * max(scale, 1.0), 6)
    total = sum(cell.time_s for cell in cells)
    for cell in cells:
        cell.share = round(cell.time_s / total, 6) if total > 0 else 0.0


def _running_s(entry: SampledLine) -> float:
    """A line's sampled wall time less its one-time work."""
    return max(entry.wall_s - entry.compiling_s - entry.importing_s, 0.0)


def _add_calls(rows: dict[tuple[str, int], Hotspot], part: Pass) -> None:
    """cProfile's calls made from a line, as detail of rows that exist (exact sites only)."""
    for site in part.call_sites:
        row = rows.get((site.file, site.line))
        if row is not None and site.exact:
            row.calls.append(CallFromLine(name=site.callee, cumtime_s=site.cumtime_s, count=site.ncalls))
    for row in rows.values():
        row.calls.sort(key=lambda c: c.cumtime_s, reverse=True)
        del row.calls[5:]


def all_rows(doc: Document) -> list[Hotspot]:
    """Every measured line as one row, ranked (see the module's docstring)."""
    kind = ranking_kind(doc)
    if kind is None:
        return []
    rows = _Rows()
    sample, cpu, cuda = (_usable(doc.pass_named(n)) for n in (PassName.SAMPLE, PassName.CPU, PassName.CUDA))
    if sample is not None:
        _add_sampled(rows, sample)
    # memory on the device when the cuda pass recorded it, else the cpu pass's
    memory = cuda if cuda is not None and cuda.memory is not None else cpu
    if cpu is not None:
        _add_ops(rows, cpu, with_cpu=True, with_memory=memory is cpu)
        if _extrapolated(doc) and sample is not None and sample.samples is not None:
            _extrapolate_cpu(rows, sample.samples)
    if cuda is not None:
        _add_ops(rows, cuda, with_cpu=cpu is None, with_memory=memory is cuda)
    cprofile = doc.pass_named(PassName.CPROFILE)
    if cprofile is not None:
        _add_calls(rows.rows, cprofile)
    out = []
    # the one run: lines the sampler never found while a window recorded
    seen = (
        {(e.file, e.line) for e in sample.samples.lines if e.windowed_s}
        if cpu is not None and cpu.windows is not None and sample is not None and sample.samples is not None
        else None
    )
    for row in rows.rows.values():
        if seen is not None and WALL in row.columns and CPU not in row.columns and row.key not in seen:
            row.update(unrecorded=True)
        cell = row.columns.get(kind)
        row.kind = kind
        row.share, row.time_s = (cell.share, cell.time_s) if cell is not None else (0.0, 0.0)
        out.append(row)
    out.sort(key=lambda r: (-r.share, -sum(c.share for c in r.columns.values()), r.file, r.line))
    return out


def _extrapolated(doc: Document) -> bool:
    cpu, sample = _usable(doc.pass_named(PassName.CPU)), _usable(doc.pass_named(PassName.SAMPLE))
    return (
        cpu is not None
        and cpu.windows is not None
        and bool(cpu.windows.count)
        and sample is not None
        and sample.samples is not None
    )


def denominators(doc: Document) -> dict[str, str]:
    """What each column's share is of, for this document: the columns recorded in windows
    of the one run say how much of it they cover."""
    out = {k: DENOMINATOR[k] for k in COLUMNS}
    cpu = doc.pass_named(PassName.CPU)
    covered = coverage.covered(cpu)
    if covered:
        out[CPU] += f", {covered}" + (f"; {EXTRAPOLATED}" if _extrapolated(doc) else "")
        out[MEMORY] += f" ({covered})"
        sample = doc.pass_named(PassName.SAMPLE)
        samples = sample.samples if sample is not None else None
        if windows_apart(samples):
            for kind in (WALL, PYTHON, COMPILING):
                out[kind] += ", outside the cpu pass's recording windows"
        elif samples is not None and samples.windowed_s:
            out[WALL] += ", the recording windows included (less what recording was measured to cost)"
    on_device = coverage.covered(doc.pass_named(PassName.CUDA))  # (a GPU's one run)
    if on_device:
        out[DEVICE] += f", {on_device}"
    return out


def ranking(doc: Document) -> Ranking:
    """The one ranking (``doc.ranking``): what the report, the diagnostics, lenses and
    hovers show, in the same order."""
    rows = all_rows(doc)
    for row in rows:
        row.path = relative_to(row.file, doc.root) or ""
        cell = cell_of(row.file)
        if cell is not None:
            row.update(cell=cell)
    return Ranking(
        ranked_by=rows[0].kind if rows else ranking_kind(doc),
        disagreements=disagreements(doc),
        denominators=denominators(doc),
        lines=rows,
    )


def conclude(doc: Document) -> Document:
    """The document's verdicts over the passes it holds, added in place: status, exit
    code, CPU/GPU verdict, the one ranking (the verdict first: the ranking reads it)."""
    doc.status, doc.exit_code = overall_status(doc)
    doc.verdict = verdict(doc)
    doc.root = outermost_root(doc.roots, doc.script)
    doc.ranking = ranking(doc)
    changed = {"status", "exit_code", "verdict", "ranking", "root"}
    if doc.ranks:  # a distributed job: every line as the ranks' median, with its spread
        per_rank = [ranking(replace(doc, passes=run.passes)) for run in doc.ranks]
        doc.ranking, doc.distributed = distributed.merge(doc.ranks, per_rank)
        world = distributed.world_size(doc.launch)
        if world > len(doc.ranks):
            doc.distributed.notes.append(
                f"this report covers {len(doc.ranks)} of the job's {world} ranks (those of this node); "
                "with --parts-dir, node 0 reports them all"
            )
        changed.add("distributed")
    doc.absent = doc.absent - changed
    return doc


def hotspots(doc: Document, thresholds: Thresholds | None = None) -> list[Hotspot]:
    """The rows worth showing, loudest first: at or above ``min_share`` in the ranking
    column, or among its ``top`` N; lines where the CPU waits on the device or other
    threads spend ``min_share`` of the main thread's wall time, and lines holding
    ``min_memory_share`` of the memory peak, whatever their time."""
    thresholds = thresholds or Thresholds()

    def waits(r: Hotspot) -> bool:  # where the CPU waits on the device: always worth a mark
        cell = r.columns.get(WAIT)
        return cell is not None and r.kind != WAIT and cell.share >= thresholds.min_share

    def threads(r: Hotspot) -> bool:  # the work of the script's other threads
        cell = r.columns.get(THREADS)
        return cell is not None and r.kind != THREADS and cell.share >= thresholds.min_share

    rows = doc.ranking.lines if doc.ranking is not None else all_rows(doc)
    return [
        r
        for rank, r in enumerate(rows)
        if (r.share > 0 and (r.share >= thresholds.min_share or rank < thresholds.top))
        or waits(r)
        or threads(r)
        or memory_share(r) >= thresholds.min_memory_share
        or rss_share(r) >= thresholds.min_memory_share
    ]


def hot_functions(doc: Document, thresholds: Thresholds | None = None) -> list[Function]:
    """User functions from cProfile whose cumulative time passes the threshold."""
    thresholds = thresholds or Thresholds()
    part = doc.pass_named(PassName.CPROFILE)
    total = (part.totals.tottime_s or 0.0) if part is not None and part.totals is not None else 0.0
    if part is None or total <= 0:
        return []
    funcs = [f for f in part.functions if f.user and f.function != "<module>"]
    funcs.sort(key=lambda f: f.cumtime_s, reverse=True)
    return [
        f
        for rank, f in enumerate(funcs)
        if f.cumtime_s > 0 and (f.cumtime_s / total >= thresholds.min_share or rank < thresholds.top)
    ]


def _entries(part: Pass | None, first_line: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    """A pass's entries into the user's functions, summed by (file, function name): torch
    names a generator's resumption by the line it resumes at, cProfile by its first line."""
    out: dict[tuple[str, str], int] = {}
    if (
        part is None
        or part.status != PassStatus.OK
        or part.event_budget is not None
        or part.stopped_after_s is not None
    ):
        return out  # a pass cut short did not run (or record) the whole script
    if part.within is not None:
        return out  # recorded in another pass's run (job/cprofile_ride.py): the same counts
    found = (
        [(f.file, f.function, f.line, f.ncalls) for f in part.functions if f.user]
        if part.name == PassName.CPROFILE
        else [(f.file, f.function, f.line, f.count) for f in part.function_calls]
    )
    for file, function, line, count in found:
        if count > 0:
            k = (file, function)
            out[k] = out.get(k, 0) + count
            if line > 0:
                first_line[k] = min(first_line.get(k, line), line)
    return out


def window_s(doc: Document) -> float | None:
    """The window the job's passes were stopped after (``--duration``), when one was."""
    return max((p.stopped_after_s for p in doc.passes if p.stopped_after_s is not None), default=None)


def found_disagreements(doc: Document) -> list[Disagreement]:
    """The disagreements the document's ranking carries (computed once, when it was made)."""
    return doc.ranking.disagreements if doc.ranking is not None else []


def disagreements(doc: Document, limit: int = 3) -> list[Disagreement]:
    """Functions of the user's files that the passes entered a different number of times.

    Every pass runs the script afresh; a script whose work depends on unseeded randomness,
    the clock or outside data does not do the same work each time, and figures from
    different passes then describe different runs. Counted: cProfile's calls and the
    autograd passes' function entries (a counter, runner/entrycount.py, that counts as
    cProfile does: the main thread on Python 3.11 and earlier, every thread on 3.12+; on
    3.10 and 3.11 the Python tracer's call nodes where a pass records with it, the cuda
    pass's and ``--no-exact-lines``, main thread), passes that ran to the end, each in a
    run of its own (not a cprofile pass recorded in the cpu pass's run)."""
    lines: dict[tuple[str, str], int] = {}
    counts = {
        name: _entries(doc.pass_named(name), lines)
        for name in (PassName.CPROFILE, PassName.CPU, PassName.CUDA)
    }
    present = {name: c for name, c in counts.items() if c}
    out: list[Disagreement] = []
    if len(present) >= 2:
        keys = set.intersection(*(set(c) for c in present.values()))
        for key in sorted(keys):
            seen = {name.value: c[key] for name, c in present.items()}
            if len(set(seen.values())) > 1:
                spread = max(seen.values()) - min(seen.values())
                file, function = key
                line = lines.get(key, 1)
                out.append(Disagreement(file=file, line=line, function=function, counts=seen, spread=spread))
    out.sort(key=lambda d: -d.spread)
    return out[:limit]


GPU_BOUND_BUSY = 0.5
_LIGHT_SOURCE = "the sample pass (device activity only: no Python stacks, no CPU ops)"
_TRACED_SOURCE = (
    "the CUDA pass (traced with Python stacks and CPU ops, which slow the CPU side: "
    "the verdict leans towards CPU-bound there)"
)
RULE = (
    "GPU-bound when the device is busy (kernels, copies) for at least half of the run's wall "
    "time, one-time CUDA module loading set aside; otherwise the CPU side (Python, op "
    "dispatch, data loading) is the limit."
)


def verdict(doc: Document) -> Verdict | None:
    """CPU-bound or GPU-bound, from the lightest run that measured the device.

    The device is the limit when it is busy (kernels, copies: the union of their
    intervals) for at least half of the run's wall time, CUDA's one-time lazy module
    loading set aside. The sample pass decides when it recorded the device: it records
    device activity only, so its own overhead does not decide the answer. Otherwise the
    CUDA pass does, and the verdict says it was traced.
    """
    for name, source, traced in (
        (PassName.SAMPLE, _LIGHT_SOURCE, False),
        (PassName.CUDA, _TRACED_SOURCE, True),
    ):
        part = doc.pass_named(name)
        if part is None or part.device is None:
            continue
        summary = part.device
        wall = summary.wall_s
        if wall <= 0:
            continue
        loading = min(summary.module_loading_s, wall)
        busy = summary.busy_s
        fraction = min(busy / max(wall - loading, 1e-9), 1.0)
        wait = summary.wait_s
        totals = (doc.pass_named(PassName.CPU) or part).totals
        return Verdict(
            bound="gpu" if fraction >= GPU_BOUND_BUSY else "cpu",
            device_busy_fraction=round(fraction, 4),
            busy_s=round(busy, 6),
            device_time_s=summary.device_time_s,
            cpu_op_time_s=round((totals.self_cpu_us or 0.0) / 1e6 if totals else 0.0, 6),
            wall_s=round(wall, 6),
            module_loading_s=round(loading, 6),
            wait_s=wait,
            wait_fraction=round(wait / wall, 4) if wait is not None else None,
            pass_=name,
            source=source,
            traced=traced,
            rule=RULE,
        )
    return None


def overall_status(doc: Document) -> tuple[PassStatus, int | None]:
    """The job's status and the exit code to pass through: the first pass that did
    not end cleanly decides; a run where every pass ended cleanly is "ok", 0, unless the
    job was stopped before some passes started ("cancelled", 130)."""
    stopped = False
    for part in doc.passes:
        if part.status in (PassStatus.OK, PassStatus.SKIPPED):
            stopped = stopped or part.skip_reason == JOB_STOPPED
            continue
        code = part.exit_code
        if part.status == PassStatus.TIMEOUT:
            code = 124
        elif part.status in (PassStatus.CANCELLED, PassStatus.TERMINATED):
            code = 130
        elif not isinstance(code, int) or code == 0:
            code = 1
        elif code < 0:  # killed by a signal: what a shell reports (SIGSEGV: 139)
            code = 128 - code
        return part.status, code
    return (PassStatus.CANCELLED, 130) if stopped else (PassStatus.OK, 0)


def runner_never_started(doc: Document) -> bool:
    """Whether the interpreter never ran the runner (``--python`` names no Python 3.10+,
    or something else): every pass that ran ended with an exit code, not a signal,
    before the runner wrote anything, not even the environment."""
    ran = [p for p in doc.passes if p.status != PassStatus.SKIPPED]
    return (
        doc.environment is None
        and bool(ran)
        and all(p.startup is None and p.signal is None and p.exit_code not in (None, 0) for p in ran)
    )


def never_started_message(doc: Document) -> str:
    first = next(p for p in doc.passes if p.status != PassStatus.SKIPPED)
    return (
        f"{doc.python} never ran the profiler's runner (it exited with code {first.exit_code} first): "
        "is it a Python 3.10+ interpreter?"
    )


def failed_pass(doc: Document) -> Pass | None:
    """The first pass whose script failed, with its error (``part.error``)."""
    return next((part for part in doc.passes if part.error is not None), None)


def lingering_threads(doc: Document) -> list[tuple[Pass, LingeringThread]]:
    """The threads that held a pass's process after its script ended (``Pass.lingering``),
    each once (every pass runs the same script: the first that saw it), ranks' included."""
    parts = [*doc.passes, *(p for r in doc.ranks for p in r.passes)]
    seen: set[tuple[str, str | None, int | None]] = set()
    found = []
    for part in parts:
        for thread in part.lingering.threads if part.lingering is not None else ():
            key = (thread.name, thread.file, thread.line)
            if key not in seen:
                seen.add(key)
                found.append((part, thread))
    return found


def lingering_words(part: Pass, thread: LingeringThread) -> str:
    """One thread that held the exit, in words (the report's line, the editor's diagnostic)."""
    assert part.lingering is not None
    verb = "runs here" if thread.state == "running" else "waits here"
    who = f"rank {part.rank}: " if part.rank is not None else ""
    return (
        f'{who}thread "{thread.name}" {verb} ({thread.where}): the script ended at '
        f"{part.lingering.script_ended_s:.1f} s, but its process did not exit; ended after "
        f"{part.lingering.grace_s:g} s (a plain run would not end)"
    )


_NO_PARENT_PACKAGE = "attempted relative import with no known parent package"


def run_as_module(doc: Document) -> module_path.Dotted | None:
    """When the script, run as a file, stopped at a relative import and lies in a package:
    the module it runs as with ``-m`` (and the folder to run that from)."""
    failed = failed_pass(doc)
    error = failed.error if failed is not None else None
    if doc.module or error is None or error.type != "ImportError" or _NO_PARENT_PACKAGE not in error.message:
        return None
    return module_path.module_of_file(doc.script)


_OOM_WORDS = ("out of memory", "can't allocate memory", "cannot allocate memory")
OOM_HOLDERS = 3


def out_of_memory_holders(doc: Document) -> list[tuple[Hotspot, int]]:
    """When the script died of an out-of-memory error: the lines holding the most memory
    then (bytes they allocated that were not freed by the end of the recording), most first;
    empty otherwise or without memory recorded."""
    failed = failed_pass(doc)
    error = failed.error if failed is not None else None
    if error is None or not (
        error.type.endswith("OutOfMemoryError") or any(w in error.message.lower() for w in _OOM_WORDS)
    ):
        return []
    held = [
        (row, row.memory.allocated_bytes - row.memory.freed_bytes)
        for row in (doc.ranking.lines if doc.ranking is not None else [])
        if row.memory is not None
    ]
    held = [(row, n) for row, n in held if n > 0 and row.line >= 1]
    held.sort(key=lambda item: -item[1])
    return held[:OOM_HOLDERS]
