"""Text presentation: the old tool's sections, then hotspots as compiler-style lines.

ASCII only, like ``torch.utils.bottleneck``'s output (paths are printed as they are).
"""

from __future__ import annotations

import os
from typing import Any

from . import analysis
from .analysis import Hotspot, Thresholds

RULE = "-" * 80
TOP_ROWS = 15

BANNER = """\
bottleneck-lsp: a summary of where your script spends its time, as an initial
step for debugging bottlenecks (successor of torch.utils.bottleneck).

Your script ran once per pass, each time in a fresh process: under cProfile,
under the autograd profiler on the CPU, and again on the GPU when one is present.
Costs are charged to the exact lines of your files that caused them.
Timings under CUDA are asynchronous: read CPU-mode numbers with care there."""


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


def environment_lines(doc: dict[str, Any]) -> list[str]:
    env = doc.get("environment")
    out = _section("Environment Summary")
    if env is None:
        return [*out, "(no environment was collected)"]
    torch = env.get("torch")
    py = env["python"]
    if torch:
        debug = " DEBUG" if torch["debug"] else ""
        out.append(f"PyTorch {torch['version']}{debug} compiled w/ CUDA {torch['cuda_compiled']}")
    else:
        out.append(f"PyTorch not importable: {env.get('torch_error')}")
    runtime = ""
    if torch and torch.get("cuda_available"):
        devices = ", ".join(torch["devices"]) or "none"
        runtime = f" and CUDA {torch['cuda_compiled']} on {devices}"
    out.append(f"Running with Python {py['version']} ({py['executable']}){runtime}")
    out.append(f"OS: {env['os']}")
    out.append("")
    out.append("Installed packages (filtered; read from package metadata):")
    out += [p["spec"] for p in env.get("packages", [])] or ["(none matched)"]
    return out


def _status_line(part: dict[str, Any]) -> str:
    status = part["status"]
    if status == "skipped":
        return f"(pass skipped: {part.get('skip_reason')})"
    text = f"pass status: {status}"
    if part.get("exit_code") not in (None, 0):
        text += f", exit code {part['exit_code']}"
    if status == "timeout":
        text += f" after {part.get('timeout_s')} s (partial results where the profiler could stop)"
    if part.get("wall_s") is not None:
        text += f"; {part.get('wall_s', 0):.2f} s in the pass"
    startup = part.get("startup") or {}
    if startup.get("import_torch_s") is not None:
        text += f", import torch {startup['import_torch_s']:.2f} s (not charged to lines)"
    if startup.get("cuda_init_s") is not None:
        text += f", CUDA init {startup['cuda_init_s']:.2f} s"
    return text


def cprofile_lines(part: dict[str, Any] | None, cwd: str) -> list[str]:
    out = _section("cProfile output")
    if part is None:
        return [*out, "(pass not run)"]
    out.append(_status_line(part))
    if "functions" not in part:
        return out
    totals = part["totals"]
    out.append(f"{totals['calls']:>12} function calls in {totals['tottime_s']:.3f} seconds")
    out.append("")
    out.append(f"   Ordered by: internal time (top {TOP_ROWS})")
    out.append("")
    out.append("   ncalls  tottime  percall  cumtime  percall filename:lineno(function)")
    funcs = sorted(part["functions"], key=lambda f: f["tottime_s"], reverse=True)[:TOP_ROWS]
    for f in funcs:
        calls = f["ncalls"]
        ncalls = str(calls) if calls == f["primitive_calls"] else f"{calls}/{f['primitive_calls']}"
        per_t = f["tottime_s"] / calls if calls else 0.0
        per_c = f["cumtime_s"] / f["primitive_calls"] if f["primitive_calls"] else 0.0
        where = f"{_where(f['file'], cwd)}:{f['line']}({f['function']})"
        out.append(
            f"{ncalls:>9} {f['tottime_s']:8.3f} {per_t:8.3f} {f['cumtime_s']:8.3f} {per_c:8.3f} {where}"
        )
    return out


def autograd_lines(part: dict[str, Any] | None, mode: str) -> list[str]:
    if part is None:
        return []
    if part["status"] == "skipped":
        label = "CUDA pass" if mode == "CUDA" else "CPU pass"
        return [*_section(f"autograd profiler output ({label} skipped)"), _status_line(part)]
    out = _section(f"autograd profiler output ({mode} mode)")
    out.append(_status_line(part))
    if "ops" not in part:
        return out
    device = mode == "CUDA"
    out.append(f"        top {TOP_ROWS} events sorted by cpu_time_total")
    out.append("")
    header = f"{'Name':<44} {'Self CPU':>11} {'CPU total':>11} {'Calls':>8}"
    if device:
        header += f" {'Self device':>12}"
    out.append(header)
    out.append("-" * len(header))
    for op in part["ops"][:TOP_ROWS]:
        row = (
            f"{_ascii(op['name'])[:44]:<44} {_ms(op['self_cpu_us'] / 1e6):>11} "
            f"{_ms(op['cpu_total_us'] / 1e6):>11} {op['count']:>8}"
        )
        if device:
            row += f" {_ms(op['self_device_us'] / 1e6):>12}"
        out.append(row)
    totals = part["totals"]
    out.append("-" * len(header))
    tail = f"Self CPU time total: {_ms(totals['self_cpu_us'] / 1e6)}; {part.get('event_count', 0)} events"
    if device:
        tail += f"; self device time total: {_ms(totals['self_device_us'] / 1e6)}"
    out.append(tail)
    summary = part.get("device")
    if device and summary:
        kinds = summary["by_kind"]
        out.append(
            f"Device: {part.get('device_event_count', 0)} events ({kinds['kernel']['count']} kernels, "
            f"{kinds['memcpy']['count']} memcpy, {kinds['memset']['count']} memset), busy "
            f"{_ms(summary['busy_s'])} of {summary['wall_s']:.2f} s"
            + (
                f"; the CPU waited {_ms(summary['wait_s'])} on the device"
                if summary.get("wait_s") is not None
                else ""
            )
        )
        for k in summary.get("top_kernels", [])[:5]:
            out.append(
                f"  {_ms(k['time_s']):>11} x{k['count']:<6} {_ascii(analysis.kernel_label(k['name']))}"
            )
    unattr = part.get("unattributed") or {}
    if device and unattr.get("self_device_us"):
        out.append(
            f"Device time not attributable to your files: {_ms(unattr['self_device_us'] / 1e6)} "
            f"({unattr.get('device_share', 0.0) * 100:.1f}%)"
        )
    if unattr.get("self_cpu_us"):
        out.append(
            f"Not attributable to your files: {_ms(unattr['self_cpu_us'] / 1e6)} "
            f"({unattr['cpu_share'] * 100:.1f}%), e.g. "
            + ", ".join(o["name"] for o in unattr.get("ops", [])[:3])
        )
    return out


def timeline_lines(part: dict[str, Any] | None) -> list[str]:
    """The timeline pass: device activity alone, the run at nearly its own speed."""
    if part is None:
        return []
    if part["status"] == "skipped":
        return [*_section("device timeline (skipped)"), _status_line(part)]
    out = [*_section("device timeline (kernels only, no Python stacks)"), _status_line(part)]
    summary = part.get("device")
    if not summary:
        return out
    out.append(
        f"busy {_ms(summary['busy_s'])} of {summary['wall_s']:.2f} s; "
        f"device work {_ms(summary['device_time_s'])}"
        + (
            f"; the CPU waited {_ms(summary['wait_s'])} on the device"
            if summary.get("wait_s") is not None
            else ""
        )
    )
    for k in summary.get("top_kernels", [])[:5]:
        out.append(f"  {_ms(k['time_s']):>11} x{k['count']:<6} {_ascii(analysis.kernel_label(k['name']))}")
    return out


def _describe(h: Hotspot) -> str:
    label = analysis.KIND_LABEL[h.kind]
    if h.kind == analysis.PYTHON:
        calls = ", ".join(f"{c['name']} x{c['count']}" for c in h.ops[:3])
        text = f"{h.share * 100:.1f}% of {label} ({h.count} samples, {_ms(h.time_s)})"
        if calls:
            text += f": calls {calls}"
    elif h.kind == analysis.DEVICE:
        kernels = ", ".join(f"{analysis.kernel_label(k['name'])} x{k['count']}" for k in h.kernels[:3])
        ops = ", ".join(o["name"] for o in h.ops if o.get("self_device_us"))
        text = f"{h.share * 100:.1f}% of {label}: {_ms(h.time_s)} in {h.count} kernels ({kernels})"
        if ops:
            text += f" launched by {ops}"
    elif h.kind == analysis.WAIT:
        text = f"the CPU waited {_ms(h.time_s)} here for the device ({h.share * 100:.1f}% of the CUDA pass)"
    else:
        ops = ", ".join(f"{o['name']} x{o['count']}" for o in h.ops[:3])
        text = f"{h.share * 100:.1f}% of {label}: {ops}, {_ms(h.time_s)}"
    if h.backward and h.forward_lines:
        fwd = ", ".join(f"line {f['line']}" for f in h.forward_lines[:3])
        text += f" (backward of {fwd})"
    if not h.exact:
        text += f" (somewhere in {h.function}; the profiler cannot name the line)"
    if h.opaque:
        text += f" (inside {', '.join(h.opaque)}: its own lines are not visible to the profiler)"
    return _ascii(text)


def hotspot_table(hotspots: list[Hotspot], cwd: str) -> list[str]:
    out = _section("Hotspots by source line")
    if not hotspots:
        return [*out, "(no line of your files passed the thresholds)"]
    for h in hotspots:
        where = f"{_where(h.file, cwd)}:{h.line}"
        out.append(f"{h.share * 100:5.1f}%  {_ms(h.time_s):>11}  {h.kind:<12} {where}  {_ascii(h.text)[:60]}")
    return out


def compiler_lines(hotspots: list[Hotspot], cwd: str, thresholds: Thresholds) -> list[str]:
    """``path:line:col: warning: ...``: terminals and editors turn these into links."""
    out = []
    for h in hotspots:
        level = "warning" if analysis.severity(h.share, thresholds) == "warning" else "note"
        out.append(f"{_where(h.file, cwd)}:{h.line}:{h.column}: {level}: {_describe(h)}")
    return out


def error_lines(doc: dict[str, Any], cwd: str) -> list[str]:
    error = analysis.first_error(doc)
    if error is None:
        return []
    out = _section(f"Script failed ({error['status']} in the {error['pass']} pass)")
    out += error.get("traceback", "").rstrip().splitlines()
    if error.get("file"):
        column = error.get("column") or 1
        out.append(
            f"{_where(error['file'], cwd)}:{error['line']}:{column}: error: "
            f"{error['type']}: {_ascii(error['message'])}"
        )
    return out


def verdict_sentence(v: dict[str, Any]) -> str:
    """The verdict in one line of plain text (the CLI, the server's summary and hover)."""
    text = (
        f"{v['bound'].upper()}-bound: the device was busy {v['device_busy_fraction'] * 100:.0f}% "
        f"of {v['wall_s']:.2f} s"
    )
    if v.get("module_loading_s"):
        text += f" (one-time CUDA module loading, {v['module_loading_s']:.3f} s, set aside)"
    if v.get("wait_s") is not None:
        text += f"; the CPU waited {v['wait_s']:.3f} s on the device"
    return text + "."


def verdict_lines(doc: dict[str, Any]) -> list[str]:
    v = doc.get("verdict")
    if not v:
        return []
    out = [*_section("CPU-bound or GPU-bound?"), verdict_sentence(v)]
    if "source" in v:
        out.append(
            f"Busy {v['busy_s']:.3f} s (the union of kernel and copy intervals; {v['device_time_s']:.3f} s "
            f"of device work in all) against wall time, measured in {v['source']}."
        )
    return out


def render(doc: dict[str, Any], thresholds: Thresholds | None = None, cwd: str | None = None) -> str:
    thresholds = thresholds or Thresholds()
    cwd = cwd or doc.get("cwd") or os.getcwd()
    spots = analysis.hotspots(doc, thresholds)
    lines = [BANNER, ""]
    lines += environment_lines(doc)
    lines += cprofile_lines(analysis.pass_named(doc, "cprofile"), cwd)
    lines += autograd_lines(analysis.pass_named(doc, "cpu"), "CPU")
    lines += timeline_lines(analysis.pass_named(doc, "timeline"))
    lines += autograd_lines(analysis.pass_named(doc, "cuda"), "CUDA")
    lines += verdict_lines(doc)
    lines += error_lines(doc, cwd)
    lines += hotspot_table(spots, cwd)
    lines += ["", *compiler_lines(spots, cwd, thresholds)]
    return "\n".join(lines) + "\n"
