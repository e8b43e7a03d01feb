"""Text presentation: the old tool's sections, then hotspots as compiler-style lines.

ASCII only, like ``torch.utils.bottleneck``'s output (paths are printed as they are).
"""

from __future__ import annotations

import os
import textwrap

from ..analysis import compiled, coverage, ranking
from ..analysis.distributed import ratio
from ..analysis.ranking import Hotspot, Thresholds
from ..notebook.cell_paths import cell_of, is_notebook, place_text
from ..schema.model import DeviceSummary, Document, Pass, PassName, PassStatus
from . import wording

RULE = "-" * 80
TOP_ROWS = 15

BANNER = """\
bottleneck-lsp: a summary of where your script spends its time, as an initial
step for debugging bottlenecks (successor of torch.utils.bottleneck)."""
_RAN = {
    PassName.SAMPLE: "sampled (wall and CPU time per line, at nearly the script's own speed)",
    PassName.CPROFILE: "under cProfile",
    PassName.CPU: "under the autograd profiler on the CPU",
    PassName.CUDA: "under the autograd profiler on the GPU",
}


def banner(doc: Document) -> list[str]:
    """The report's opening: what ran (the passes that did), and how costs are charged."""
    # a pass recorded in another's run (the cprofile pass in the cpu pass's, the cpu pass in
    # windows of the sample pass's) is not a run
    within = {p.within for p in doc.passes if p.within is not None and p.status == PassStatus.OK}
    windowed = [p for p in doc.passes if p.windows is not None and p.status != PassStatus.SKIPPED]
    ran = [
        _RAN[p.name] + (" with cProfile in the same run" if p.name in within else "")
        for p in doc.passes
        if p.status != PassStatus.SKIPPED and p.name in _RAN and p.within is None and p.windows is None
    ]
    if not ran:
        return [BANNER, "", "No pass ran.", ""]
    if windowed and doc.pass_named(PassName.SAMPLE) is not None:
        inside = ["the autograd profiler on the CPU"] + (["cProfile"] if PassName.SAMPLE in within else [])
        ran[0] = (
            _RAN[PassName.SAMPLE] + " for its whole run, with " + " and ".join(inside) + " in windows of "
            f"that same run ({coverage.covered(windowed[0])})"
        )
    how = ", ".join(ran[:-1]) + (" and " if len(ran) > 1 else "") + ran[-1]
    what = "Your script"
    if is_notebook(doc.script):  # cells are counted as on screen: markdown included
        what = "Your notebook's code cells, in order as one program,"
    if windowed:
        runs = doc.runs or len(ran)
        text = f"{what} ran {'once' if runs == 1 else f'{runs} times'}: {how}."
    else:
        text = f"{what} ran once per pass, each in a process of its own: {how}."
    if is_notebook(doc.script):
        text += " Cells are numbered as the notebook lists them, markdown cells included."
    window = ranking.window_s(doc)
    if window is not None:
        text += (
            f" Passes were stopped after {window:g} s (--duration): their figures cover"
            " what ran until then, a window that each pass, at its own speed, took further or"
            " less far into the script."
        )
    lines = [BANNER, "", *textwrap.wrap(text, 80)]
    lines.append("Costs are charged to the exact lines of your files that caused them.")
    if PassName.CUDA in [p.name for p in doc.passes if p.status != PassStatus.SKIPPED]:
        lines.append("Timings under CUDA are asynchronous: read CPU-mode numbers with care there.")
    return [*lines, ""]


def _section(title: str) -> list[str]:
    return [RULE, f"  {title}", RULE]


def _ascii(text: str) -> str:
    return text.encode("ascii", "replace").decode("ascii")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _where(path: str, cwd: str) -> str:
    try:
        rel = os.path.relpath(path, cwd)
    except ValueError:
        return path
    return path if rel.startswith(os.pardir + os.sep) else rel


def _at(path: str, line: int | None, cwd: str, column: int | None = None) -> str:
    """``script.py:12`` (``:col`` with ``column``) or, in a notebook, ``nb.ipynb cell 5, line 3``."""
    shown = _where(path, cwd)
    if cell_of(shown) is not None:
        return place_text(path, line or 0, shown)
    return f"{shown}:{line}" + (f":{column}" if column is not None else "")


def environment_lines(doc: Document) -> list[str]:
    env = doc.environment
    out = _section("Environment Summary")
    if env is None:
        return [*out, "(no environment was collected)"]
    torch = env.torch
    if torch is not None:
        debug = " DEBUG" if torch.debug else ""
        out.append(f"PyTorch {torch.version}{debug} compiled w/ CUDA {torch.cuda_compiled}")
    else:
        out.append(f"PyTorch not importable: {env.torch_error}")
    runtime = ""
    if torch is not None and torch.cuda_available:
        runtime = f" and CUDA {torch.cuda_compiled} on {', '.join(torch.devices) or 'none'}"
    out.append(f"Running with Python {env.python.version} ({env.python.executable}){runtime}")
    out.append(f"OS: {env.os}")
    out.append("")
    out.append("Installed packages (filtered; read from package metadata):")
    out += [p.spec for p in env.packages] or ["(none matched)"]
    return out


def _status_line(part: Pass) -> str:
    if part.status == PassStatus.SKIPPED:
        return f"(pass skipped: {part.skip_reason})"
    text = f"pass status: {part.status}"
    if part.signal is not None and part.status == PassStatus.CRASHED:  # not our own stop's kill
        text += f", killed by {part.signal}"
    elif part.exit_code not in (None, 0) and part.status != PassStatus.TIMEOUT:  # a timeout's: our kill's
        text += f", exit code {part.exit_code}"
    if part.status == PassStatus.TIMEOUT:
        text += f" after {part.timeout_s} s (partial results where the profiler could stop)"
    if part.stopped_after_s is not None:
        text += (
            f", stopped after {part.stopped_after_s:g} s as asked (--duration): what it recorded until then"
        )
    if part.wall_s is not None:
        text += f"; {part.wall_s:.2f} s in the pass"
    startup = part.startup
    done_first = []
    if startup is not None and startup.import_torch_s is not None:
        done_first.append(f"import torch {startup.import_torch_s:.2f} s")
    if startup is not None and startup.import_torch_lazy_s:
        done_first.append(f"torch's compiler stack {startup.import_torch_lazy_s:.2f} s")
    if startup is not None and startup.cuda_init_s is not None:
        done_first.append(f"CUDA init {startup.cuda_init_s:.2f} s")
    if done_first and part.warm:
        text += "; forked with torch loaded (start-up paid once, by the fork server: "
        text += ", ".join(done_first) + ")"
    elif done_first:
        text += "; start-up, not charged to lines: " + ", ".join(done_first)
    for note in part.notes:
        text += f"\nnote: {_ascii(note)}"
    return text


def cprofile_lines(part: Pass | None, cwd: str) -> list[str]:
    out = _section("cProfile output")
    if part is None:
        return [*out, "(pass not run)"]
    out.append(_status_line(part))
    totals = part.totals
    if totals is None or totals.calls is None:
        return out
    out.append(f"{totals.calls:>12} function calls in {totals.tottime_s or 0.0:.3f} seconds")
    out.append("")
    out.append(f"   Ordered by: internal time (top {TOP_ROWS})")
    out.append("")
    out.append("   ncalls  tottime  percall  cumtime  percall filename:lineno(function)")
    for f in sorted(part.functions, key=lambda f: f.tottime_s, reverse=True)[:TOP_ROWS]:
        calls, primitive = f.ncalls, f.primitive_calls
        ncalls = str(calls) if calls == primitive else f"{calls}/{primitive}"
        per_t = f.tottime_s / calls if calls else 0.0
        per_c = f.cumtime_s / primitive if primitive else 0.0
        where = f"{_at(f.file, f.line, cwd)}({f.function})"
        out.append(f"{ncalls:>9} {f.tottime_s:8.3f} {per_t:8.3f} {f.cumtime_s:8.3f} {per_c:8.3f} {where}")
    return out


def autograd_lines(part: Pass | None, mode: str) -> list[str]:
    if part is None:
        return []
    if part.status == PassStatus.SKIPPED:
        label = "CUDA pass" if mode == "CUDA" else "CPU pass"
        return [*_section(f"autograd profiler output ({label} skipped)"), _status_line(part)]
    out = _section(f"autograd profiler output ({mode} mode)")
    out.append(_status_line(part))
    totals = part.totals
    if totals is None or totals.self_cpu_us is None:
        return out
    device = mode == "CUDA"
    out.append(f"        top {TOP_ROWS} events sorted by cpu_time_total")
    out.append("")
    header = f"{'Name':<44} {'Self CPU':>11} {'CPU total':>11} {'Calls':>8}"
    if device:
        header += f" {'Self device':>12}"
    out.append(header)
    out.append("-" * len(header))
    for op in part.ops[:TOP_ROWS]:
        row = (
            f"{_ascii(op.name)[:44]:<44} {_ms(op.self_cpu_us / 1e6):>11} "
            f"{_ms(op.cpu_total_us / 1e6):>11} {op.count:>8}"
        )
        if device:
            row += f" {_ms(op.self_device_us / 1e6):>12}"
        out.append(row)
    out.append("-" * len(header))
    tail = f"Self CPU time total: {_ms(totals.self_cpu_us / 1e6)}; {part.event_count} events"
    if device:
        tail += f"; self device time total: {_ms((totals.self_device_us or 0.0) / 1e6)}"
    out.append(tail)
    summary = part.device
    if device and summary is not None:
        counts = {
            k: (v.count if (v := summary.by_kind.get(k)) else 0) for k in ("kernel", "memcpy", "memset")
        }
        out += _device_lines(
            summary,
            f"Device: {part.device_event_count} events ({counts['kernel']} kernels, "
            f"{counts['memcpy']} memcpy, {counts['memset']} memset), ",
        )
    unattr = part.unattributed
    if unattr is None:
        return out
    if device and unattr.self_device_us:
        out.append(
            f"Device time not attributable to your files: {_ms(unattr.self_device_us / 1e6)} "
            f"({unattr.device_share * 100:.1f}%)"
        )
    if unattr.self_cpu_us:
        out.append(
            f"Not attributable to your files: {_ms(unattr.self_cpu_us / 1e6)} "
            f"({unattr.cpu_share * 100:.1f}%), e.g. " + ", ".join(o.name for o in unattr.ops[:3])
        )
    return out


def sample_lines(part: Pass | None) -> list[str]:
    """The sample pass: what the sampler covered, and the device when it was recorded."""
    if part is None:
        return []
    out = [*_section("Sampled time per line (sample pass: the script at nearly its own speed)")]
    out.append(_status_line(part))
    samples = part.samples
    if samples is not None:
        cpu = samples.cpu_s
        out.append(
            f"{samples.ticks} looks every {samples.interval_s * 1000:.0f} ms: "
            f"{samples.wall_s:.3f} s of the main thread's wall time"
            + (f" ({cpu:.3f} s on the CPU)" if cpu is not None else "")
            + f", {samples.outside_s:.3f} s of it outside your files"
        )
        if samples.threads:
            out.append("Other threads (wall time at their innermost line of your files, and of it on a CPU):")
            for t in samples.threads[:5]:
                on_cpu = ""
                if t.cpu_s is not None:
                    waiting = " (waiting)" if ranking.waited(t.cpu_s, t.wall_s) else ""
                    on_cpu = f", {_ms(t.cpu_s)} on a CPU{waiting}"
                out.append(f"  {t.thread}: {_ms(t.wall_s)} at {t.file}:{t.line}{on_cpu}")
    if part.device is not None:
        out += _device_lines(part.device, "device: ")
    return out


def _short(path: str, cwd: str) -> str:
    """A file as the function table names it: an installed package's from its package
    (``torch/_tensor.py``), the user's as ``_where`` does."""
    marker = "site-packages" + os.sep
    return path.rsplit(marker, 1)[1] if marker in path else _where(path, cwd)


def function_lines(part: Pass | None, cwd: str) -> list[str]:
    """The function table of the sampled stacks, the way py-spy's top shows it: the whole run,
    the most total time first; cProfile's exact counts follow where it recorded."""
    samples = part.samples if part is not None else None
    if samples is None or not samples.functions:
        return []
    out = _section("Functions by sampled time (whole run, from the sampler's stacks; cProfile-style)")
    total = max(f.total_s for f in samples.functions)  # (the script's outermost frame: all of it)
    out.append(
        f"   Ordered by: total time (top {TOP_ROWS}); own: as the innermost Python frame (its C calls "
        "included); shares of the sampled time"
    )
    out.append("")
    out.append(f"{'own':>9} {'own%':>6} {'total':>9} {'total%':>6}  function (file:line)")

    def pct(seconds: float) -> str:
        return f"{seconds / total * 100:5.1f}%" if total > 0 else "     -"

    for f in samples.functions[:TOP_ROWS]:
        where = place_text(f.file, f.line, _short(f.file, cwd))
        own, whole = f"{_ms(f.self_s):>9} {pct(f.self_s):>6}", f"{_ms(f.total_s):>9} {pct(f.total_s):>6}"
        out.append(f"{own} {whole}  {f.function} ({where})")
    flame = samples.flame
    if flame is not None and flame.stacks:
        out.append("")
        out.append(
            f"   The same stacks as a flame graph ({len(flame.stacks):,} distinct): "
            "in VS Code, Bottleneck: Show Flame Graph; elsewhere, --format speedscope"
        )
    return out


def _device_lines(summary: DeviceSummary, head: str) -> list[str]:
    """A pass's device summary: busy time against wall time, the CPU's waits, top kernels."""
    wait = summary.wait_s
    out = [
        f"{head}busy {_ms(summary.busy_s)} of {summary.wall_s:.2f} s; "
        f"device work {_ms(summary.device_time_s)}"
        + (f"; the CPU waited {_ms(wait)} on the device" if wait is not None else "")
    ]
    for k in summary.top_kernels[:5]:
        out.append(f"  {_ms(k.time_s):>11} x{k.count:<6} {_ascii(ranking.kernel_label(k.name))}")
    return out


def _pct(row: Hotspot, kind: str) -> str:
    cell = row.columns.get(kind)
    return f"{cell.share * 100:5.1f}%" if cell is not None else "     -"


def _slowest(row: Hotspot) -> str:
    cell = row.columns.get(row.kind)
    if cell is None or cell.spread is None or cell.spread.max <= 0:
        return "-"
    times = ratio(cell.spread)
    return (
        f"{cell.spread.max_rank}: only" if times == float("inf") else f"{cell.spread.max_rank}: {times:.1f}x"
    )


def hotspot_table(hotspots: list[Hotspot], cwd: str, denominators: dict[str, str] | None = None) -> list[str]:
    """One row per line, ranked by one column (the first); each column's denominator below
    (``denominators``: the document's ranking's, else the columns' own)."""
    out = _section("Hotspots by source line")
    if not hotspots:
        return [*out, "(no line of your files passed the thresholds)"]
    ranked_by = hotspots[0].kind
    columns = [ranked_by, *[k for k in ranking.COLUMNS if k != ranked_by and k != ranking.WAIT]]
    present = [
        k for k in columns if any(k in h.columns and ranking.amount(h.columns[k], k) > 0 for h in hotspots)
    ]
    ranked = [h.columns.get(ranked_by) for h in hotspots]
    spread = any(c is not None and c.spread is not None for c in ranked)
    slowest = f"  {'slowest rank':>12}" if spread else ""
    widths = [max(6, len(ranking.SHORT[k])) for k in present]
    out.append(
        "  ".join(f"{ranking.SHORT[k]:>{w}}" for k, w in zip(present, widths, strict=True))
        + f"  {'time':>11}{slowest}  line"
    )
    for h in hotspots:
        where = f"{_at(h.file, h.line, cwd)}"
        cells = "  ".join(f"{_pct(h, k):>{w}}" for k, w in zip(present, widths, strict=True))
        rank = f"  {_slowest(h):>12}" if spread else ""
        time = _ms(h.time_s) if ranked_by in h.columns else "-"  # shown for another column
        out.append(f"{cells}  {time:>11}{rank}  {where}  {_ascii(h.text)[:60]}")
    out.append("")
    out.append(f"Ranked by {ranking.KIND_LABEL[ranked_by]}; time is that column's. Shares are of:")
    if ranked_by != ranking.WALL and any(ranking.WALL in h.columns for h in hotspots):
        out.insert(
            -1, f"(wall time has fewer than {ranking.MIN_TICKS} samples: too short a run to rank by it)"
        )
    for k in present:
        out.append(f"  {ranking.SHORT[k]}: {(denominators or {}).get(k) or ranking.DENOMINATOR[k]}")
    if spread:
        out.append(
            "  distributed: each share and time is the ranks' median; slowest rank: the rank with the "
            "most, as a multiple of the median"
        )
    return out


MEMORY_ROWS = 5


RSS_ROWS = 3


def peak_rss_lines(doc: Document, cwd: str) -> list[str]:
    """The process's peak RSS over the whole run (the sample pass's), where it was reached
    and the lines that raised it most (``runner/peakrss.py``)."""
    sample = doc.pass_named(PassName.SAMPLE)
    peak = sample.samples.peak_rss if sample is not None and sample.samples is not None else None
    if peak is None:
        return []
    size = wording.size
    text = (
        f"Whole run: the process's peak RSS was {size(peak.bytes)} "
        f"({size(peak.start_bytes)} when the script started)"
    )
    if peak.file is not None and peak.line is not None:
        text += f", last raised at {_at(peak.file, peak.line, cwd)}"
        text += f", {peak.at_s:.2f} s in" if peak.at_s is not None else ""
        text += " (during a recording window: its buffers count)" if peak.windowed else ""
    out = [text + "."]
    rows = [r for r in (doc.ranking.lines if doc.ranking else []) if ranking.RSS in r.columns]
    rows.sort(key=lambda r: -(r.columns[ranking.RSS].bytes or 0))
    if rows:
        raised = ", ".join(
            f"{_at(r.file, r.line, cwd)} +{size(r.columns[ranking.RSS].bytes or 0)}" for r in rows[:RSS_ROWS]
        )
        out.append(f"Lines that raised it most: {raised}.")
    return out


def memory_lines(doc: Document, cwd: str, thresholds: Thresholds) -> list[str]:
    """The memory peak and the lines holding most of it (docs/memory.md), and the process's
    peak RSS over the whole run."""
    part = next(
        (p for p in (doc.pass_named(PassName.CUDA), doc.pass_named(PassName.CPU)) if p and p.memory), None
    )
    whole = peak_rss_lines(doc, cwd)
    if part is None or part.memory is None:
        return [*_section("Memory"), *whole] if whole else []
    m = part.memory
    size = wording.size
    out = _section(f"Memory by source line ({part.name} pass, {m.device})")
    out += whole
    where = f" at {_at(m.peak_file, m.peak_line, cwd)}" if m.peak_file and m.peak_line else ""
    when = f", {m.peak_at_s:.2f} s in" if m.peak_at_s is not None else ""
    out.append(f"Peak: {size(m.peak_bytes)} held at once by allocations made while profiling{when}{where}.")
    if m.allocator_bytes_at_peak is not None:
        reserved = m.reserved_bytes_at_peak
        cached = f", and had reserved {size(reserved)} from the device" if reserved else ""
        held = size(m.allocator_bytes_at_peak)
        out.append(f"The allocator held {held} then (memory from before included){cached}.")
    out.append(
        f"Allocated {size(m.allocated_bytes)} in {m.allocations:,} allocations, freed {size(m.freed_bytes)}; "
        f"{size(m.live_at_end_bytes)} still live when the pass ended."
    )
    rows = [r for r in (doc.ranking.lines if doc.ranking else []) if ranking.MEMORY in r.columns]
    # the table lists every line's figures (the floor under which a line is not marked for
    # its memory, ``ranking.MEMORY_FLOOR_BYTES``, applies to marking, not to this table)
    rows.sort(key=lambda r: -r.columns[ranking.MEMORY].share)
    shown = [
        r
        for i, r in enumerate(rows)
        if i < MEMORY_ROWS or r.columns[ranking.MEMORY].share >= thresholds.min_memory_share
    ]
    if shown:
        out.append("")
        out.append(f"{'at peak':>9}  {'share':>6}  {'allocated':>9}  {'allocs':>7}  {'freed':>9}  line")
    for r in shown:
        cell, mem = r.columns[ranking.MEMORY], r.memory
        allocated, count, freed = (
            (mem.allocated_bytes, mem.allocations, mem.freed_bytes) if mem is not None else (0, 0, 0)
        )
        out.append(
            f"{size(cell.bytes or 0):>9}  {cell.share * 100:5.1f}%  {size(allocated):>9}  {count:>7}  "
            f"{size(freed):>9}  {_at(r.file, r.line, cwd)}  {_ascii(r.text)[:50]}"
        )
    if m.outside_your_files_at_peak_bytes:
        out.append(f"Outside your files at the peak: {size(m.outside_your_files_at_peak_bytes)}.")
    return out


def compiler_lines(hotspots: list[Hotspot], cwd: str, thresholds: Thresholds) -> list[str]:
    """``path:line:col: warning: ...``, one per line: terminals and editors make links of them."""
    out = []
    for h in hotspots:
        level = "warning" if ranking.severity(h, thresholds) == ranking.WARNING else "note"
        text = wording.message(h, plain=True, memory_share=thresholds.min_memory_share)
        out.append(f"{_at(h.file, h.line, cwd, h.column)}: {level}: {text}")
    return out


def dynamo_lines(doc: Document, cwd: str) -> list[str]:
    """torch.compile's section: each call's graphs, breaks and recompiles; each break with
    torch's reason and hints; each recompile with the guard that failed."""
    found = compiled.dynamo(doc)
    if found is None:
        return []
    out = _section("torch.compile: graph breaks and recompiles (from torch's own records)")
    for c in found.calls:
        out.append(f"{_at(c.file, c.line, cwd)}  {wording.compile_call_text(c)}")
    for b in found.graph_breaks:
        out.append(f"graph break at {_at(b.file, b.line, cwd)}" + (f" x{b.count}" if b.count > 1 else ""))
        out.append(f"    {_ascii(b.reason)}")
        if b.explanation:
            out.append(f"    {_ascii(b.explanation)}")
        out += [f"    hint: {_ascii(h)}" for h in b.hints[:2]]
    for r in found.recompiles:
        again = "hit the recompile limit" if r.limit else f"recompiled x{r.count}"
        out.append(f"{r.function} {again}, called at {_at(r.file, r.line, cwd)}: {_ascii(r.reason)}")
    if found.profiler_recompiles:
        out.append(
            f"(left out: {wording.counted(found.profiler_recompiles, 'compile')} that torch made again "
            "because the profiler's recording windows put its line marker on torch's mode stack; a run "
            "without the profiler does not make them)"
        )
    if len(out) == 3:
        out.append("(nothing compiled by torch.compile in your files)")
    return out


def dynamo_compiler_lines(doc: Document, cwd: str) -> list[str]:
    """A graph break or a recompile as a compiler-style warning on its line."""
    found = compiled.dynamo(doc)
    if found is None:
        return []
    out = [
        f"{_at(b.file, b.line, cwd, 1)}: warning: {_ascii(wording.graph_break_text(b))}"
        for b in found.graph_breaks
    ]
    for r in found.recompiles:
        level = "warning" if r.limit else "note"
        out.append(f"{_at(r.file, r.line, cwd, 1)}: {level}: {_ascii(wording.recompile_text(r))}")
    return out


def error_lines(doc: Document, cwd: str) -> list[str]:
    failed = ranking.failed_pass(doc)
    if failed is None or failed.error is None:
        return []
    error = failed.error
    on = f" on rank {error.rank}" if error.rank is not None else ""
    out = _section(f"Script failed{on} ({failed.status} in the {failed.name} pass)")
    if ranking.runner_never_started(doc):
        out += [ranking.never_started_message(doc) + " Choose another with --python. It said:", ""]
    out += error.traceback.rstrip().splitlines()
    holders = ranking.out_of_memory_holders(doc)
    if holders:
        out += ["", "Out of memory. The lines holding the most memory when it failed:"]
        out += [
            f"{_at(row.file, row.line, cwd, row.column)}: error: {wording.held_at_failure(row, held)}"
            for row, held in holders
        ]
    if error.file:
        out.append(
            f"{_at(error.file, error.line, cwd, error.column or 1)}: error: "
            f"{f'rank {error.rank}: ' if error.rank is not None else ''}{error.type}: {_ascii(error.message)}"
        )
    module = ranking.run_as_module(doc)
    if module is not None:
        where = "" if module.base == doc.cwd else f" --cwd {module.base}"
        command = f"bottleneck-lsp profile{where} -m {module.name}"
        out.append(f"The script is in a package: profile it as a module, `{command}`.")
    return out


def lingering_lines(doc: Document, cwd: str) -> list[str]:
    """``path:line:col: warning:`` for each thread that held a pass's process after the
    script ended (the runner ended it: ``runner/lingering.py``)."""
    out = []
    for part, thread in ranking.lingering_threads(doc):
        words = ranking.lingering_words(part, thread)
        if thread.file and thread.line:
            out.append(f"{_at(thread.file, thread.line, cwd, 1)}: warning: {_ascii(words)}")
        else:
            out.append(f"warning: {_ascii(words)}")
    return out


def ranks_lines(doc: Document, cwd: str) -> list[str]:
    """A distributed job: each rank, its collectives and waiting; the straggler and its lines."""
    d = doc.distributed
    if d is None:
        return []
    launch = doc.launch
    how = f"torchrun --nproc-per-node {launch.nproc_per_node}" if launch is not None else "torchrun"
    if launch is not None and launch.options:
        how += " " + " ".join(launch.options)
    out = _section(f"Ranks ({how}: {d.world_size} ranks here)")
    out.append(
        f"{'rank':>4}  {'status':<10} {'script':>9}  {'collectives':>11}  {'in them':>9}  "
        f"{'waiting':>9}  {'last in':>7}  {'sent':>9}"
    )
    for r in d.ranks:
        wall = f"{r.wall_s:.2f} s" if r.wall_s is not None else "-"
        out.append(
            f"{r.rank:>4}  {r.status:<10} {wall:>9}  {r.collectives:>11}  {r.collective_s:>7.3f} s  "
            f"{r.wait_s:>7.3f} s  {r.last:>7}  {wording.size(r.bytes) if r.bytes is not None else '-':>9}"
        )
    out.append(
        "script: its wall time, start-up aside; collectives: ops issued (cpu pass); in them: their "
        "time, transfer and waiting; waiting: for the last rank to arrive, matched by order per op; "
        "last in: collectives it entered last; sent: their input tensors' bytes (with --collective-sizes, "
        "or the editor's setting of that name)"
    )
    out.append(
        f"The pass tables above are rank {d.ranks[0].rank}'s; the hotspots below are the ranks' medians."
    )
    out += d.notes
    s = d.straggler
    if s is None:
        if d.world_size > 1 and d.matched:
            out.append("No straggler: no rank entered most collectives last by a measurable margin.")
        return out
    out += ["", wording.straggler_sentence(s, d) + "."]
    if s.lines:
        out.append(f"Its lines above the other ranks' median ({ranking.KIND_LABEL.get(d.column, d.column)}):")
        for e in s.lines:
            out.append(
                f"  {_at(e.file, e.line, cwd)}  +{_ms(e.excess_s).strip()} "
                f"({_ms(e.rank_s).strip()} against {_ms(e.others_median_s).strip()})  {_ascii(e.text)[:60]}"
            )
    return out


def straggler_compiler_lines(doc: Document, cwd: str) -> list[str]:
    s = doc.distributed.straggler if doc.distributed is not None else None
    if s is None:
        return []
    return [
        f"{_at(e.file, e.line, cwd, 1)}: warning: {wording.excess_sentence(s, e.rank_s, e.others_median_s)}"
        for e in s.lines[:1]
    ]


def verdict_lines(doc: Document) -> list[str]:
    v = doc.verdict
    if v is None:
        return []
    out = [*_section("CPU-bound or GPU-bound?"), wording.verdict_sentence(v)]
    if v.source:
        out.append(
            f"Busy {v.busy_s:.3f} s (the union of kernel and copy intervals; {v.device_time_s:.3f} s "
            f"of device work in all) against wall time, measured in {v.source}."
        )
    return out


def render(doc: Document, thresholds: Thresholds | None = None, cwd: str | None = None) -> str:
    thresholds = thresholds or Thresholds()
    cwd = cwd or doc.cwd or os.getcwd()
    spots = ranking.hotspots(doc, thresholds)
    lines = banner(doc)
    lines += environment_lines(doc)
    lines += sample_lines(doc.pass_named(PassName.SAMPLE))
    lines += function_lines(doc.pass_named(PassName.SAMPLE), cwd)
    lines += cprofile_lines(doc.pass_named(PassName.CPROFILE), cwd)
    lines += autograd_lines(doc.pass_named(PassName.CPU), "CPU")
    lines += autograd_lines(doc.pass_named(PassName.CUDA), "CUDA")
    lines += verdict_lines(doc)
    lines += ranks_lines(doc, cwd)
    lines += error_lines(doc, cwd)
    lines += hotspot_table(spots, cwd, doc.ranking.denominators if doc.ranking is not None else None)
    lines += memory_lines(doc, cwd, thresholds)
    lines += dynamo_lines(doc, cwd)
    lines += ["", *compiler_lines(spots, cwd, thresholds), *straggler_compiler_lines(doc, cwd)]
    lines += dynamo_compiler_lines(doc, cwd)
    lines += lingering_lines(doc, cwd)
    lines += [
        f"{_at(d.file, d.line, cwd, 1)}: warning: {wording.disagreement_sentence(d)}"
        for d in ranking.found_disagreements(doc)
    ]
    return "\n".join(lines) + "\n"
