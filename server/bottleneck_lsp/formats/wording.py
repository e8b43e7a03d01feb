"""The words for a row and a verdict, written once for the CLI and the editor.

``message`` is a row's full sentence (compiler-style lines, diagnostics); ``lens`` its short
form (code lenses); ``verdict_sentence`` the CPU/GPU verdict. ``plain=True`` gives ASCII
(the CLI's report is ASCII, like the old tool's).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..analysis.distributed import ratio
from ..analysis.ranking import (
    COLUMNS,
    COMPILING,
    CPU,
    DEVICE,
    IMPORTING,
    KIND_LABEL,
    MEMORY,
    PYTHON,
    RSS,
    SHORT,
    THREADS,
    WAIT,
    WALL,
    Hotspot,
    Thresholds,
    kernel_label,
    rss_share,
    threads_waited,
)
from ..analysis.ranking import memory_share as share_of_peak
from ..notebook.cell_paths import short_place, split_cell_path
from ..schema.model import (
    CompileCall,
    Disagreement,
    Distributed,
    ForwardLink,
    GraphBreak,
    MadeFrom,
    Recompile,
    Straggler,
    Verdict,
)

_GRAPH_PREFIX = re.compile(r"^graph_\d+_")  # inductor's C++ kernels' profiler events (``provenance.py``)

NOTABLE_MEMORY_SHARE = Thresholds().min_memory_share
RANK_SPREAD = Thresholds().rank_spread


def top_line(row: Hotspot) -> str:
    """The first row of a ranking as a summary names it: ``train.py:42 50.8% of wall time``."""
    return f"{short_place(row.file, row.line)} {row.share * 100:.1f}% of {KIND_LABEL[row.kind]}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"


def size(n: float) -> str:
    """Bytes in decimal units, as torch's memory tools print them (1 MB = 10^6 bytes)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


def _notable(row: Hotspot, memory_share: float) -> bool:
    """Memory is worded where the line holds at least ``memory_share`` of the peak (the
    threshold that annotates a line for its memory: every figure is in the document, the
    hover and the report's memory section)."""
    return MEMORY in row.columns and share_of_peak(row) >= memory_share


def counted(n: int, noun: str) -> str:
    """``1 call``, ``2 calls``."""
    return f"{n} {noun}{'s' if n != 1 else ''}"


def held_at_failure(row: Hotspot, held: int) -> str:
    count = row.memory.allocations if row.memory is not None else 0
    return (
        f"holds {size(held)} when the script ran out of memory (allocated here and not freed; "
        f"{counted(count, 'allocation')} in all)"
    )


def rss_text(row: Hotspot) -> str:
    """How much the line raised the process's peak RSS over the whole run."""
    cell = row.columns[RSS]
    return f"raised the process's peak RSS by {size(cell.bytes or 0)} ({cell.share * 100:.1f}% of the peak)"


def memory_text(row: Hotspot) -> str:
    """What the line holds at the memory peak, and what it allocated in all."""
    cell, memory = row.columns[MEMORY], row.memory
    text = f"holds {size(cell.bytes or 0)} at the memory peak ({cell.share * 100:.1f}% of it)"
    if memory is not None and memory.allocations:
        text += (
            f"; allocated {size(memory.allocated_bytes)} in {counted(memory.allocations, 'allocation')}, "
            f"{size(memory.freed_bytes)} freed"
        )
    return text


def _times(plain: bool) -> str:
    return "x" if plain else "×"


def ops_text(row: Hotspot, n: int = 3, plain: bool = False) -> str:
    return ", ".join(f"{o.name} {_times(plain)}{o.count}" for o in row.ops[:n])


def kernels_text(row: Hotspot, n: int = 3, plain: bool = False) -> str:
    return ", ".join(f"{kernel_label(k.name)} {_times(plain)}{k.count}" for k in row.kernels[:n])


def _cell_text(row: Hotspot, kind: str, plain: bool) -> str:
    cell = row.columns[kind]
    if kind == MEMORY:
        return memory_text(row)
    if kind == RSS:
        return rss_text(row)
    if kind == WAIT:
        return (
            f"the CPU waited {ms(cell.time_s)} here on the device ({cell.share * 100:.1f}% of the cuda pass)"
        )
    if kind == THREADS:
        waited = threads_waited(cell)
        text = (
            f"other threads {'waited' if waited else 'ran'} here {ms(cell.time_s)} of wall time "
            f"({cell.share * 100:.1f}% of the main thread's"
        )
        if cell.running_s is not None:
            text += f"; {ms(cell.running_s)} of it on a CPU"
        return text + (": blocked in a lock, an event, a queue or I/O, not running)" if waited else ")")
    text = f"{cell.share * 100:.1f}% of {KIND_LABEL[kind]} ({ms(cell.time_s)}"
    if kind == CPU and row.count:
        text += f", {counted(row.count, 'call')}"
    if kind == DEVICE and row.device_count:
        text += f", {row.device_count} kernels"
    text += ")"
    if kind == CPU and row.ops:
        text += ": " + ops_text(row, plain=plain)
    if kind == DEVICE and row.kernels:
        text += ": " + kernels_text(row, plain=plain)
        launchers = [o.name for o in row.ops if o.self_device_us]
        if launchers:
            text += " launched by " + ", ".join(launchers[:3])
    return text


def rank_spread(row: Hotspot, at_least: float = RANK_SPREAD) -> str:
    """A distributed job's line whose slowest rank stands out in the ranking column:
    "rank 1: 2.1x the median" ("" when it does not, or outside a distributed job)."""
    cell = row.columns.get(row.kind)
    spread = cell.spread if cell is not None else None
    if spread is None or spread.max <= 0:
        return ""
    times = ratio(spread)
    if times < at_least:
        return ""
    if times == float("inf"):
        return f"rank {spread.max_rank} only"
    return f"rank {spread.max_rank}: {times:.1f}x the median"


def spread_text(row: Hotspot, kind: str) -> str:
    """The column's value across the ranks: "ranks: min 0.52 s, median 0.95 s, max 1.37 s (rank 0)"."""
    cell = row.columns.get(kind)
    s = cell.spread if cell is not None else None
    if s is None:
        return ""
    show = size if kind == MEMORY else ms
    return f"ranks: min {show(s.min)}, median {show(s.median)}, max {show(s.max)} (rank {s.max_rank})"


def straggler_sentence(s: Straggler, d: Distributed) -> str:
    waited = ", ".join(f"rank {r.rank}: {ms(r.wait_s)}" for r in d.ranks if r.rank != s.rank)
    return (
        f"rank {s.rank} is the straggler: it entered {s.last} of {s.matched} collectives last, "
        f"{ms(s.late_s)} after the other ranks' median on average; the others waited for it "
        f"({waited})"
    )


def excess_sentence(s: Straggler, rank_s: float, others_s: float) -> str:
    return (
        f"rank {s.rank} (the straggler) spent {ms(rank_s)} here against a median of "
        f"{ms(others_s)} on the other ranks"
    )


def kernel_name(name: str) -> str:
    """A compiled kernel's event as inductor names the kernel: ``graph_0_cpp_fused_relu_0`` ->
    ``cpp_fused_relu_0`` (an extern kernel keeps its aten op's name)."""
    return _GRAPH_PREFIX.sub("", name, count=1)


def compiled_text(row: Hotspot, plain: bool = False) -> str:
    """torch.compile's kernels on a line ("" for none): "compiled by torch.compile:
    cpp_fused_add_mul_1, aten::addmm"; a kernel made from several lines names them, and the
    part of its time this line was given (by how many of its ops each line gave it); a
    backward line's kernels name the forward lines they differentiate."""
    if not row.compiled:
        return ""
    quote = "" if plain else "`"
    names = ", ".join(f"{quote}{kernel_name(k.name)}{quote}" for k in row.compiled[:3])
    if row.backward:
        return f"compiled backward by torch.compile: {names}"
    text = f"compiled by torch.compile: {names}"
    for kernel in row.compiled[:3]:
        others = [m for m in kernel.made_from if (m.file, m.line) != (row.file, row.line)]
        if not others:
            continue
        ops = sum(m.ops for m in kernel.made_from)
        mine = ops - sum(m.ops for m in others)
        text += (
            f" ({quote}{kernel_name(kernel.name)}{quote} fused ops of {forward_lines_text(row, others)} too: "
            f"its time split by ops, {mine} of {ops} here)"
        )
    return text


def forward_lines_text(row: Hotspot, links: Sequence[ForwardLink | MadeFrom]) -> str:
    """The forward lines a backward line differentiates: ``line 23, 21`` in the row's file;
    in a notebook, by cell (``cell 3, line 11``); elsewhere, by file."""
    if all(f.file == row.file for f in links):
        return "line " + ", ".join(str(f.line) for f in links)
    home = split_cell_path(row.file)
    words = []
    for f in links:
        cell = split_cell_path(f.file)
        if f.file == row.file:
            words.append(f"line {f.line}")
        elif cell is not None and home is not None and cell[0] == home[0]:
            words.append(f"cell {cell[1]}, line {f.line}")
        else:
            words.append(short_place(f.file, f.line))
    return "; ".join(words)


def message(row: Hotspot, plain: bool = False, memory_share: float = NOTABLE_MEMORY_SHARE) -> str:
    """The row's sentence: the ranking column first, then every other column measured (memory
    where the line holds at least ``memory_share`` of the peak: ``Thresholds.min_memory_share``)."""
    order = [row.kind, *[k for k in COLUMNS if k != row.kind]] if row.kind in row.columns else list(COLUMNS)
    parts = []
    for kind in order:
        if kind not in row.columns or kind in (PYTHON, COMPILING, IMPORTING):
            continue  # parts of the wall time, said with it
        if kind == MEMORY and not _notable(row, memory_share):
            continue
        if kind == RSS and rss_share(row) < memory_share:
            continue
        text = _cell_text(row, kind, plain)
        if kind == WALL and PYTHON in row.columns and row.columns[PYTHON].share >= 0.0005:  # shows as 0.1%
            text = text[:-1] + f", {row.columns[PYTHON].share * 100:.1f}% running Python)"
        if kind == WALL and COMPILING in row.columns and _notable_part(row, COMPILING):
            text += f", {compiling_text(row)}"
        if kind == WALL and IMPORTING in row.columns:
            text += f", {importing_text(row)}"
        parts.append(text)
    if row.unrecorded:
        parts.append("not in the recorded windows (no op CPU time or memory)")
    if not row.ops and row.calls:
        parts.append("calls " + ", ".join(f"{c.name} {_times(plain)}{c.count}" for c in row.calls[:3]))
    text = "; ".join(parts)
    if row.backward and row.forward_lines:
        text += "; backward of " + forward_lines_text(row, row.forward_lines[:3])
    if row.compiled:
        text += "; " + compiled_text(row, plain)
    spread = rank_spread(row)
    if spread:
        text += f"; {spread} ({spread_text(row, row.kind)})"
    if not row.exact:
        text += f"; somewhere in {row.function}, the profiler cannot name the line"
    if row.opaque:
        text += f"; inside {', '.join(row.opaque)}: its own lines are not visible to the profiler"
    return text.encode("ascii", "replace").decode("ascii") if plain else text


def _notable_part(row: Hotspot, column: str) -> bool:
    """A part of the line's wall time worth a clause: 1% of it or more (a compile's first
    milliseconds on a loop's line, before torch says the compile is the profiler's, are not)."""
    wall = row.columns.get(WALL)
    return wall is None or row.columns[column].time_s >= 0.01 * wall.time_s


def compiling_text(row: Hotspot) -> str:
    """The part of a line's wall time during which torch.compile compiled."""
    cell, wall = row.columns[COMPILING], row.columns.get(WALL)
    of = f" of the line's {ms(wall.time_s)}" if wall is not None else ""
    return f"{ms(cell.time_s)}{of} while torch.compile compiled (one-time work)"


def importing_text(row: Hotspot) -> str:
    """The part of a line's wall time during which torch imported its compiler stack."""
    cell, wall = row.columns[IMPORTING], row.columns.get(WALL)
    of = f" of the line's {ms(wall.time_s)}" if wall is not None else ""
    return f"{ms(cell.time_s)}{of} while torch imported its compiler stack (one-time work)"


def lens(row: Hotspot, memory_share: float = NOTABLE_MEMORY_SHARE) -> str:
    """Short: the ranking column, its top op or kernel, the other columns' shares (memory as
    in ``message``)."""
    held = f"{size(row.columns[MEMORY].bytes or 0)} live at peak" if _notable(row, memory_share) else ""
    if row.kind not in row.columns:  # a line marked for another column (waits, memory)
        kinds = [k for k in (WALL, THREADS, CPU, DEVICE) if k in row.columns]
        parts = [f"{SHORT[k]} {row.columns[k].share * 100:.1f}%" for k in kinds]
        if WAIT in row.columns:
            parts.insert(0, f"waits {ms(row.columns[WAIT].time_s)} on the device")
        if held:
            parts.insert(0, f"{held} ({row.columns[MEMORY].share * 100:.0f}% of the peak)")
        return " · ".join(parts)
    head = f"{row.share * 100:.1f}% {SHORT[row.kind]} · {ms(row.time_s)}"
    if row.kind == DEVICE and row.kernels:
        top = row.kernels[0]
        head += f" · {kernel_label(top.name)} ×{top.count}"
    elif row.compiled:
        kernel = row.compiled[0].name
        count = next((o.count for o in row.ops if o.name == kernel), 0)
        head += f" · compiled: {kernel_name(kernel)}" + (f" ×{count}" if count else "")
    elif row.ops:
        head += f" · {row.ops[0].name} ×{row.ops[0].count}"
    rest = []
    if COMPILING in row.columns:
        rest.append(f"{ms(row.columns[COMPILING].time_s)} torch.compile compiling")
    if IMPORTING in row.columns:
        rest.append(f"{ms(row.columns[IMPORTING].time_s)} torch importing its compiler stack (once)")
    for kind in (WALL, THREADS, CPU, DEVICE):
        if kind != row.kind and kind in row.columns:
            rest.append(f"{SHORT[kind]} {row.columns[kind].share * 100:.0f}%")
    if WAIT in row.columns:
        rest.append(f"waits {ms(row.columns[WAIT].time_s)} on the device")
    if held:
        rest.append(held)
    if rss_share(row) >= memory_share:
        rest.append(f"+{size(row.columns[RSS].bytes or 0)} peak RSS")
    spread = rank_spread(row)
    if spread:
        rest.append(spread)
    return " · ".join([head, *rest])


def verdict_sentence(v: Verdict) -> str:
    """The verdict in one line of plain text."""
    busy = f"{v.device_busy_fraction * 100:.0f}%"
    text = f"{v.bound.upper()}-bound: the device was busy {busy} of {v.wall_s:.2f} s"
    if v.module_loading_s:
        text += f" (one-time CUDA module loading, {v.module_loading_s:.3f} s, set aside)"
    if v.wait_s is not None:
        text += f"; the CPU waited {v.wait_s:.3f} s on the device"
    return text + "."


def disagreement_sentence(d: Disagreement) -> str:
    """A function the passes entered a different number of times (analysis.disagreements)."""
    counts = ", ".join(f"{n:,} times under {name}" for name, n in d.counts.items())
    where = "module-level code" if d.function == "<module>" else f"`{d.function}`"
    return (
        f"passes disagree on call counts: {where} ran {counts}. The script did not do the "
        "same work in each pass (unseeded randomness, the clock, outside data?), so figures "
        "from different passes describe different runs; seed it for comparable figures."
    )


def _times_said(count: int) -> str:
    return "" if count == 1 else f" ({count} times)"


def graph_break_text(b: GraphBreak) -> str:
    """A graph break's diagnostic: where torch.compile split the function, and torch's why."""
    split = f" of {b.function}" if b.function else ""
    why = f"{b.reason} ({b.explanation})" if b.explanation else b.reason
    return f"torch.compile: graph break{split} here{_times_said(b.count)}: {why}"


def recompile_text(r: Recompile) -> str:
    """A recompile's diagnostic, on the call that made it."""
    if r.limit:
        return (
            f"torch.compile: {r.function} hit the recompile limit here; torch runs it without "
            f"compiling from then on (last guard that failed: {r.reason})"
        )
    return f"torch.compile: {r.function} compiled again{_times_said(r.count)} from this call: {r.reason}"


def compile_call_text(c: CompileCall) -> str:
    """What became of a torch.compile call's target: ``3 graphs, 2 graph breaks, 1 recompile``."""
    words = [
        counted(c.graphs, "graph"),
        counted(c.graph_breaks, "graph break"),
        counted(c.recompiles, "recompile"),
    ]
    limit = "; hit the recompile limit" if c.limit else ""
    return f"torch.compile of {c.target or 'this'}: " + ", ".join(words) + limit
