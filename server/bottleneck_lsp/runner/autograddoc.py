"""An autograd pass's part of the result document, from its walked event tree
(``attribution.Attributor``): lines, ops, the unattributed rest, memory, device time.
``job/replay.py`` builds the same part from a raw recording.

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

from typing import Any

from . import device, memory
from .attribution import TOP_LINKS, TOP_OPS, Attributor, LineStats
from .callsites import source_position
from .device import Activity
from .units import share, us

TOP_KERNELS = 5
TOP_MADE_FROM = 5  # a compiled kernel's lines listed
KERNEL_NAME_CHARS = 300


def _ops_list(ops: dict[str, list[int]], total_ns: int) -> list[dict[str, Any]]:
    ranked = sorted(ops.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)
    return [
        {
            "name": name,
            "self_cpu_us": us(v[0]),
            "self_device_us": us(v[1]),
            "count": v[2],
        }
        for name, v in ranked[:TOP_OPS]
    ]


def line_entry(a: Attributor, s: LineStats) -> dict[str, Any]:
    """A line's entry of the pass's part (without its memory): read only."""
    return _line_entry(a, s)


def _line_entry(a: Attributor, s: LineStats) -> dict[str, Any]:
    column, text = source_position(s.file, s.line)
    entry: dict[str, Any] = {
        "file": s.file,
        "line": s.line,
        "column": column,
        "text": text,
        "function": s.function,
        "exact": s.exact,
        "self_cpu_us": us(s.self_ns),
        "self_device_us": us(s.device_ns),
        "cpu_share": share(s.self_ns, a.total_self_ns),
        "device_share": share(s.device_ns, a.total_device_ns),
        "count": s.count,
        "ops": _ops_list(s.ops, s.self_ns),
        "backward": s.backward,
        "forward_lines": [],
        "opaque": sorted(s.opaque),
    }
    if s.compiled:
        entry["compiled"] = _compiled(s)
    if s.forward_links or s.forward_device_links or s.compiled_links:
        by_line: dict[tuple[str, int], list[int]] = {}
        for links, slot in ((s.forward_links, 0), (s.forward_device_links, 1)):
            for key, ns in links.items():
                fwd = a.forward_line_of(key)
                if fwd is not None and fwd.line > 0:  # 0: module-level code, no line known
                    acc = by_line.setdefault((fwd.file, fwd.line), [0, 0])
                    acc[slot] += ns
        for place, (cpu_ns, device_ns) in s.compiled_links.items():  # compiled backward kernels
            acc = by_line.setdefault(place, [0, 0])
            acc[0] += cpu_ns
            acc[1] += device_ns
        ranked = sorted(by_line.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)[:TOP_LINKS]
        entry["forward_lines"] = [
            {"file": f, "line": ln, "backward_cpu_us": us(ns[0]), "backward_device_us": us(ns[1])}
            for (f, ln), ns in ranked
        ]
    return entry


def _compiled(s: LineStats) -> list[dict[str, Any]]:
    """The line's ops that are torch.compile's kernels (the most time first), each with the
    lines it was made from and their ops."""
    ranked = sorted(s.compiled, key=lambda name: sum(s.ops.get(name, (0, 0))[:2]), reverse=True)
    return [
        {
            "name": name,
            "made_from": [{"file": f, "line": ln, "ops": n} for f, ln, n in s.compiled[name][:TOP_MADE_FROM]],
        }
        for name in ranked[:TOP_OPS]
    ]


def _kernels(kernels: dict[str, list[int]]) -> list[dict[str, Any]]:
    ranked = sorted(kernels.items(), key=lambda kv: kv[1][0], reverse=True)[:TOP_KERNELS]
    return [
        {
            "name": name[:KERNEL_NAME_CHARS],
            "kind": device.kind_of(name),
            "device_us": us(v[0]),
            "count": v[1],
        }
        for name, v in ranked
    ]


def _device_fields(a: Attributor, s: LineStats) -> dict[str, Any]:
    return {
        "device_count": s.device_count,
        "kernels": _kernels(s.kernels),
        "wait_us": us(s.wait_ns),
        "wait_share": share(s.wait_ns, a.total_wait_ns),
    }


TOP_TABLE_OPS = 50


def compile_work_note(a: Attributor) -> str:
    """What the pass left out as torch.compile's own work (its compile ranges)."""
    return (
        f"torch.compile's own work in this pass, {a.compile_ns / 1e9:.2f} s under its "
        f"compile ranges ({a.compile_events:,} events: tracing, code generation), "
        "is left out of the op CPU time and the op table: it is compilation, not your ops"
    )


def autograd_document(
    a: Attributor, activities: list[Activity] | None, wall_ns: int, charged: bool = False
) -> dict[str, Any]:
    """A walked profile as the pass's part of the result document. ``activities``: the
    device events and runtime calls (the CUDA pass), charged here to the ops that
    launched them (``charged``: already charged, window by window: ``windows.py``); None
    for the CPU pass."""
    with_device = activities is not None
    summary = None
    device_events = 0
    if activities is not None:
        if charged:
            device_events = sum(1 for x in activities if x.on_device)
        else:
            device_events = a.add_device_events(activities)
        summary = device.summarize(activities, wall_ns, runtime_recorded=True)
    recorded = memory.account(a.memory_events, "cuda" if with_device else "cpu", a.first_ns)
    peak = recorded["peak_bytes"] if recorded is not None else 0
    lines = [
        s
        for s in a.lines.values()
        if s.self_ns > 0 or s.device_ns > 0 or s.wait_ns > 0 or (s.memory is not None and s.memory[0] > 0)
    ]
    lines.sort(key=lambda s: s.self_ns + s.device_ns, reverse=True)
    ops = sorted(a.ops.items(), key=lambda kv: kv[1].total_ns, reverse=True)
    # Every op with device time stays in the table, so that its device column adds up.
    table = ops[:TOP_TABLE_OPS] + [kv for kv in ops[TOP_TABLE_OPS:] if kv[1].device_ns > 0]
    un = a.unattributed
    out: dict[str, Any] = {
        "totals": {
            "self_cpu_us": us(a.total_self_ns),
            "self_device_us": us(a.total_device_ns),
        },
        "lines": [
            {
                **_line_entry(a, s),
                **(_device_fields(a, s) if with_device else {}),
                **memory.line_fields(s, peak),
            }
            for s in lines
        ],
        "unattributed": {
            "self_cpu_us": us(un.self_ns),
            "self_device_us": us(un.device_ns),
            "cpu_share": share(un.self_ns, a.total_self_ns),
            "device_share": share(un.device_ns, a.total_device_ns),
            "count": un.count,
            "ops": _ops_list(un.ops, un.self_ns),
        },
        # Entries into the user's functions (as cProfile counts them): analysis compares them with
        # cProfile's counts to tell when the passes did not run the same work.
        "function_calls": [
            {"file": file, "line": line, "function": function, "count": count}
            for file, line, function, count in (
                a.function_entries
                if a.function_entries is not None
                else [
                    (s.file, s.line, s.function, s.calls) for s in a.lines.values() if s.calls and not s.exact
                ]
            )
        ],
        "ops": [
            {
                "name": name,
                "count": o.count,
                "self_cpu_us": us(o.self_ns),
                "cpu_total_us": us(o.total_ns),
                "self_device_us": us(o.device_ns),
            }
            for name, o in table
        ],
    }
    if recorded is not None:
        un_live = a.unattributed.memory[3] if a.unattributed.memory is not None else 0
        out["memory"] = {**recorded, "outside_your_files_at_peak_bytes": un_live}
    if summary is not None:
        out["totals"]["wait_us"] = us(a.total_wait_ns)
        out["unattributed"].update(_device_fields(a, un))
        out["device"] = summary
        out["device_event_count"] = device_events
    return out
