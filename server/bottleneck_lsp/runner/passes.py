"""The profiling passes: cProfile, and the autograd profiler in CPU or CUDA mode.

Each pass object has ``start()`` and ``finish() -> dict``; the runner calls ``finish``
however the script ended (normally, by exception, SystemExit, SIGTERM or os._exit),
so a pass always reports what it measured up to that point.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from . import callsites
from .attribution import TOP_LINKS, TOP_OPS, Attributor, LineStats
from .callsites import position_fields, source_position
from .paths import FileClassifier, is_runner_file
from .sampler import LineSampler

TOP_FUNCTIONS = 30


def _us(ns: int) -> float:
    return round(ns / 1000.0, 3)


def _share(part: float, total: float) -> float:
    return round(part / total, 6) if total > 0 else 0.0


class CProfilePass:
    name = "cprofile"

    def __init__(self, files: FileClassifier) -> None:
        import cProfile

        self.files = files
        self.profiler = cProfile.Profile()
        self.sampler = LineSampler(files)
        self.started = 0.0
        self.stopped = 0.0

    def start(self) -> None:
        self.started = time.perf_counter()
        self.sampler.start()
        self.profiler.enable()

    def stop(self) -> None:
        self.profiler.disable()
        self.sampler.stop()
        if not self.stopped:
            self.stopped = time.perf_counter()

    def finish(self) -> dict[str, Any]:
        import pstats

        begin = time.perf_counter()
        stats: dict[Any, Any] = pstats.Stats(self.profiler).stats  # type: ignore[attr-defined]
        # The runner's own frames (it stops the profiler) are not the script's work.
        stats = {k: v for k, v in stats.items() if not is_runner_file(k[0])}
        total_tt = sum(v[2] for v in stats.values())
        total_calls = sum(v[1] for v in stats.values())
        functions: list[dict[str, Any]] = []
        user_keys: dict[tuple[str, int, str], str] = {}
        for key in stats:
            path = self.files.resolve(key[0])
            if path is not None:
                user_keys[key] = path
        ranked = sorted(stats.items(), key=lambda kv: kv[1][2], reverse=True)
        chosen = {k for k, _ in ranked[:TOP_FUNCTIONS]} | set(user_keys)
        for key, (cc, nc, tt, ct, _callers) in ranked:
            if key not in chosen:
                continue
            path = user_keys.get(key)
            functions.append(
                {
                    "file": path or key[0],
                    "line": key[1],
                    "function": key[2],
                    "user": path is not None,
                    "ncalls": nc,
                    "primitive_calls": cc,
                    "tottime_s": round(tt, 6),
                    "cumtime_s": round(ct, 6),
                    "share": _share(tt, total_tt),
                }
            )
        sites = callsites.attribute(stats, user_keys, total_tt)
        return {
            "script_wall_s": round(self.stopped - self.started, 6),
            "event_count": total_calls,
            "totals": {"tottime_s": round(total_tt, 6), "calls": total_calls},
            "functions": functions,
            "call_sites": sites,
            "samples": {
                "interval_s": self.sampler.interval,
                "total": self.sampler.total,
                "lines": [
                    {**line, **position_fields(line["file"], line["line"])} for line in self.sampler.lines()
                ],
            },
            "postprocess_s": round(time.perf_counter() - begin, 6),
        }


def make_line_marker(torch: Any, budget: int, on_budget: Callable[[], None]) -> Any:
    """A TorchFunctionMode that adds one Python call node per torch call.

    Operators such as ``a @ b`` or ``x * y`` make no Python call event, so the
    profiler could only name the enclosing function. Under this mode every torch
    call passes through ``__torch_function__``, whose call node records the caller's
    frame: the exact line of the operator. It also counts torch calls, and calls
    ``on_budget`` once when ``budget`` (when positive) is reached, in this process only
    (a forked worker inherits the mode; its calls are not this profile's).
    """
    from torch.overrides import TorchFunctionMode

    owner = os.getpid()

    class LineMarker(TorchFunctionMode):
        calls = 0

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            self.calls += 1
            if self.calls == budget and os.getpid() == owner:
                on_budget()
            return func(*args, **(kwargs or {}))

    return LineMarker()


class ScriptCallMarker:
    """Gives calls of ``torch.jit.script`` functions a Python call node (whose caller is
    the calling line), as ``LineMarker`` does for torch calls: the profiler records no
    event for calling a ScriptFunction, whose own lines it cannot see either."""

    def __init__(self, torch: Any) -> None:
        self.cls: Any = getattr(torch._C, "ScriptFunction", None)
        self.original: Any = None

    def __enter__(self) -> None:
        if self.cls is None:
            return
        original: Any = self.cls.__call__
        self.original = original

        def scripted_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
            return original(fn, *args, **kwargs)

        try:
            self.cls.__call__ = scripted_call
        except (TypeError, AttributeError):
            self.original = None

    def __exit__(self, *exc: object) -> None:
        if self.original is not None:
            self.cls.__call__ = self.original
            self.original = None


class AutogradPass:
    """The autograd profiler with Python call stacks, attributed to lines on exit."""

    def __init__(
        self, name: str, torch: Any, files: FileClassifier, exact_lines: bool, event_budget: int = 0
    ) -> None:
        self.name = name
        self.torch = torch
        self.files = files
        self.device = "cuda" if name == "cuda" else None
        self.profiler = torch.autograd.profiler.profile(with_stack=True, use_device=self.device)
        self.event_budget = event_budget
        self.marker = make_line_marker(torch, event_budget, self._budget_reached) if exact_lines else None
        self.script_calls = ScriptCallMarker(torch) if exact_lines else None
        self.exact_lines = exact_lines
        self.started = 0.0
        self.stopped = 0.0
        self.recorded_until = 0.0
        self.running = False
        self.recording = False
        self.budget_hit = False

    def _end_recording(self) -> None:
        """Stop the profiler (once); what it recorded stays for ``finish``."""
        if not self.recording:
            return
        self.recording = False
        if self.device is not None:
            try:
                self.torch.cuda.synchronize()
            except Exception:  # noqa: BLE001 - a failed device still has CPU events
                pass
        self.recorded_until = time.perf_counter()
        self.profiler.__exit__(None, None, None)

    def _budget_reached(self) -> None:
        # Memory bound: the profiler keeps every event until it stops (about 2.5 KB an
        # event with stacks here), so a long run stops recording; the script runs on.
        self.budget_hit = True
        self._end_recording()

    def start(self) -> None:
        self.profiler.__enter__()
        self.recording = True
        if self.marker is not None:
            self.marker.__enter__()
        if self.script_calls is not None:
            self.script_calls.__enter__()
        self.running = True
        self.started = time.perf_counter()

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        self.stopped = time.perf_counter()
        if self.script_calls is not None:
            self.script_calls.__exit__()
        if self.marker is not None:
            try:
                self.marker.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the script may have left modes pushed
                pass
        self._end_recording()

    def finish(self) -> dict[str, Any]:
        begin = time.perf_counter()
        results = self.profiler.kineto_results
        marker_site = None
        if self.marker is not None:
            code = type(self.marker).__torch_function__.__code__
            marker_site = (code.co_filename, code.co_firstlineno)
        attributor = Attributor(self.files, marker_site)
        attributor.consume(results.experimental_event_tree())
        device_events = 0
        if self.device is not None:
            device_events = attributor.add_device_events(results.events())
        out = _autograd_document(attributor)
        if self.budget_hit:
            out["event_budget"] = {
                "torch_calls": self.event_budget,
                "recorded_s": round(self.recorded_until - self.started, 6),
            }
            out["notes"] = [
                f"the profiler stopped after {self.event_budget} torch calls "
                f"({self.recorded_until - self.started:.1f} s into the script) to bound its memory; "
                "the rest ran unprofiled and shares cover the recorded part (raise --event-budget)"
            ]
        out.update(
            {
                "script_wall_s": round(self.stopped - self.started, 6),
                "event_count": attributor.event_count,
                "device_event_count": device_events,
                "garbled_frames": attributor.garbled_frames,
                "exact_lines": self.exact_lines,
                "torch_calls": self.marker.calls if self.marker is not None else None,
                "postprocess_s": round(time.perf_counter() - begin, 6),
            }
        )
        return out


def _ops_list(ops: dict[str, list[int]], total_ns: int) -> list[dict[str, Any]]:
    ranked = sorted(ops.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)
    return [
        {
            "name": name,
            "self_cpu_us": _us(v[0]),
            "self_device_us": _us(v[1]),
            "count": v[2],
        }
        for name, v in ranked[:TOP_OPS]
    ]


def _line_entry(a: Attributor, s: LineStats) -> dict[str, Any]:
    column, text = source_position(s.file, s.line)
    entry: dict[str, Any] = {
        "file": s.file,
        "line": s.line,
        "column": column,
        "text": text,
        "function": s.function,
        "exact": s.exact,
        "self_cpu_us": _us(s.self_ns),
        "self_device_us": _us(s.device_ns),
        "cpu_share": _share(s.self_ns, a.total_self_ns),
        "device_share": _share(s.device_ns, a.total_device_ns),
        "count": s.count,
        "ops": _ops_list(s.ops, s.self_ns),
        "backward": s.backward,
        "forward_lines": [],
        "opaque": sorted(s.opaque),
    }
    if s.forward_links:
        by_line: dict[tuple[str, int], int] = {}
        for seq, ns in s.forward_links.items():
            fwd = a.forward_line_of(seq)
            if fwd is not None:
                by_line[(fwd.file, fwd.line)] = by_line.get((fwd.file, fwd.line), 0) + ns
        ranked = sorted(by_line.items(), key=lambda kv: kv[1], reverse=True)[:TOP_LINKS]
        entry["forward_lines"] = [
            {"file": f, "line": ln, "backward_cpu_us": _us(ns)} for (f, ln), ns in ranked
        ]
    return entry


def _autograd_document(a: Attributor) -> dict[str, Any]:
    lines = [s for s in a.lines.values() if s.self_ns > 0 or s.device_ns > 0]
    lines.sort(key=lambda s: s.self_ns + s.device_ns, reverse=True)
    ops = sorted(a.ops.items(), key=lambda kv: kv[1].total_ns, reverse=True)
    un = a.unattributed
    return {
        "totals": {
            "self_cpu_us": _us(a.total_self_ns),
            "self_device_us": _us(a.total_device_ns),
        },
        "lines": [_line_entry(a, s) for s in lines],
        "unattributed": {
            "self_cpu_us": _us(un.self_ns),
            "self_device_us": _us(un.device_ns),
            "cpu_share": _share(un.self_ns, a.total_self_ns),
            "count": un.count,
            "ops": _ops_list(un.ops, un.self_ns),
        },
        "ops": [
            {
                "name": name,
                "count": o.count,
                "self_cpu_us": _us(o.self_ns),
                "cpu_total_us": _us(o.total_ns),
                "self_device_us": _us(o.device_ns),
            }
            for name, o in ops[:50]
        ],
    }
