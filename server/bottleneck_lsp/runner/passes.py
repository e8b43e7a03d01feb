"""The profiling passes: cProfile, and the autograd profiler in CPU or CUDA mode.

Each pass object has ``start()`` and ``finish() -> dict``; the runner calls ``finish``
however the script ended (normally, by exception, SystemExit, SIGTERM or os._exit),
so a pass always reports what it measured up to that point.
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from collections.abc import Callable
from types import CodeType
from typing import Any

from ..contract import PYTHON_HEAVY_CALLS, PYTHON_HEAVY_RATIO
from . import callsites, compiletime, device, kinetolog, memory, recording, scriptprofiler
from .attribution import TOP_LINKS, TOP_OPS, Attributor, LineStats
from .callsites import position_fields, source_position
from .device import Activity
from .entrycount import EntryCounter
from .lineranges import LineRanges
from .ownstats import without_runner
from .paths import FileClassifier, is_runner_file
from .sampler import ThreadSampler

TOP_FUNCTIONS = 30
TOP_KERNELS = 5
KERNEL_NAME_CHARS = 300


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
        self.started = 0.0
        self.stopped = 0.0

    def start(self) -> None:
        # A child the script forks (a DataLoader's worker) runs unprofiled, as without us:
        # install_exit_hooks drops the 3.11 profile hook, not 3.12's sys.monitoring tool.
        # (Before the profile starts: calls made here after it would be in its table.)
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self.profiler.disable)
        self.started = time.perf_counter()
        self.profiler.enable()

    def stop(self) -> None:
        self.profiler.disable()
        if not self.stopped:
            self.stopped = time.perf_counter()

    def finish(self) -> dict[str, Any]:
        import pstats

        begin = time.perf_counter()
        stats: dict[Any, Any] = pstats.Stats(self.profiler).stats  # type: ignore[attr-defined]
        # The runner's own calls (it starts and stops the profiler) are not the script's work.
        stats = without_runner(stats, is_runner_file, lambda key: self.files.is_user(key[0]))
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
            "postprocess_s": round(time.perf_counter() - begin, 6),
        }


class MemoryGuard:
    """Whether the process grew past a third of the memory that was available when the
    pass started. The profiler keeps every event until it stops, and reading them back
    takes about as much again; past this, the recording stops rather than the machine
    running out of memory. Linux (/proc); elsewhere it never trips."""

    CHECK_EVERY = 1024  # torch calls between looks (a look: one small /proc read)

    def __init__(self) -> None:
        self.start = self.resident()
        available = _meminfo_kb("MemAvailable")
        self.allowance = available * 1024 // 3 if available else 0

    @staticmethod
    def resident() -> int:
        try:
            with open("/proc/self/statm", "rb") as handle:
                return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            return 0

    def over(self) -> bool:
        return self.allowance > 0 and self.resident() - self.start > self.allowance


def _meminfo_kb(field: str) -> int:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def make_line_marker(
    torch: Any,
    budget: int,
    on_budget: Callable[[str], None],
    guard: MemoryGuard | None = None,
    ranges: LineRanges | None = None,
) -> Any:
    """A TorchFunctionMode that every torch call made from Python passes through.

    Operators such as ``a @ b`` or ``x * y`` make no Python call event, so the
    profiler could only name the enclosing function. With ``ranges`` (the cpu pass, no
    Python tracer) each call runs inside a profiler range named after the innermost line
    of the user's files (see ``lineranges.py``). Without (the tracer on: the cuda pass,
    ``--no-exact-lines``) the mode's own call node records the caller's frame: the exact
    line of the operator. It also counts torch calls, and calls ``on_budget("calls")``
    once when ``budget`` (when positive) is reached, or ``on_budget("memory")`` when
    ``guard`` trips, in this process only (a forked worker inherits the mode; its calls
    are not this profile's).
    """
    from torch.overrides import TorchFunctionMode

    every = MemoryGuard.CHECK_EVERY
    getframe = sys._getframe
    fast: Any = _record_function_fast(torch)
    user = ranges.user if ranges is not None else {}
    sites = ranges.sites if ranges is not None else {}
    backward_calls = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
    compiling = compiletime.tracing_check(torch)

    class LineMarker(TorchFunctionMode):
        calls = 0
        tripped = False  # also set in a forked child (a DataLoader worker): not this profile
        site: tuple[CodeType, int] | None = None  # the user's code and instruction of the call

        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if compiling():
                # TorchDynamo tracing a compiled function: what it sees here goes into its
                # graph and guards. A plain call keeps the marker out of both (counting
                # here made it guard on the count and recompile at every call, until its
                # limit sent the function back to eager); the compiled code then runs
                # without passing through the marker, as without us.
                return func(*args, **(kwargs or {}))
            self.calls += 1
            if self.tripped:
                return func(*args, **(kwargs or {}))
            if self.calls == budget:
                self.tripped = True
                on_budget("calls")
                return func(*args, **(kwargs or {}))
            if guard is not None and self.calls % every == 0 and guard.over():
                self.tripped = True
                on_budget("memory")
                return func(*args, **(kwargs or {}))
            if ranges is None:
                return func(*args, **(kwargs or {}))
            frame: Any = getframe(1)
            while frame is not None:
                code = frame.f_code
                known = user.get(id(code))
                if known[1] if known is not None else ranges.is_user(code):
                    break
                frame = frame.f_back
            if frame is None:  # no frame of the user's: torch's own threads, library code
                return func(*args, **(kwargs or {}))
            if func in backward_calls:
                name = ranges.name(frame, True)
            else:
                name = sites.get((id(frame.f_code), frame.f_lasti)) or ranges.name(frame, False)
            self.site = (frame.f_code, frame.f_lasti)  # where a warning torch gives is from
            with fast(name):
                return func(*args, **(kwargs or {}))

    marker = LineMarker()
    # A forked worker inherits the mode: its calls are not this profile's. (A flag set at
    # fork rather than os.getpid() per call: a system call, about 1 us here.)
    mine = weakref.ref(marker)

    def forked() -> None:
        found = mine()
        if found is not None:
            found.tripped = True

    if hasattr(os, "register_at_fork"):  # POSIX; elsewhere nothing forks a worker
        os.register_at_fork(after_in_child=forked)
    return marker


def place_warnings(marker: Any) -> Callable[[], None]:
    """Show a warning torch gives inside a marked call (Python names the marker's frame,
    the innermost one, here in the runner's private folder) at the user's line that made
    the call, as without us; returns what undoes it."""
    import warnings

    own = make_line_marker.__code__.co_filename
    previous = warnings.showwarning

    def show(
        message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
    ) -> None:
        site = getattr(marker, "site", None)
        if filename == own and site is not None:
            code, lasti = site
            filename, line = code.co_filename, None
            lineno = next((n for start, end, n in code.co_lines() if start <= lasti < end and n), lineno)
        previous(message, category, filename, lineno, file, line)

    warnings.showwarning = show

    def undo() -> None:
        if warnings.showwarning is show:
            warnings.showwarning = previous

    return undo


def _record_function_fast(torch: Any) -> Any:
    """torch's cheapest profiler range (a context manager taking a name), or None."""
    return getattr(getattr(torch._C, "_profiler", None), "_RecordFunctionFast", None)


class ScriptCallMarker:
    """Gives calls of ``torch.jit.script`` functions a Python call node (whose caller is
    the calling line), or with ``ranges`` a range named after the calling line, as
    ``LineMarker`` does for torch calls: the profiler records no event for calling a
    ScriptFunction, whose own lines it cannot see either."""

    def __init__(self, torch: Any, ranges: LineRanges | None = None) -> None:
        self.cls: Any = getattr(torch._C, "ScriptFunction", None)
        self.original: Any = None
        self.ranges = ranges
        self.fast: Any = _record_function_fast(torch)

    def __enter__(self) -> None:
        if self.cls is None:
            return
        original: Any = self.cls.__call__
        self.original = original
        ranges, fast = self.ranges, self.fast

        def scripted_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
            if ranges is not None:
                frame = ranges.innermost(sys._getframe(1))
                if frame is not None:
                    with fast(ranges.name(frame, False)):
                        return original(fn, *args, **kwargs)
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
        self,
        name: str,
        torch: Any,
        files: FileClassifier,
        exact_lines: bool,
        event_budget: int = 0,
        save_raw: str | None = None,
        script: str = "",
        memory: bool = False,
        collectives: bool = False,
        shapes: bool = False,
    ) -> None:
        self.name = name
        self.collectives = collectives  # a distributed rank: keep its collective ops
        self.shapes = shapes  # and the bytes they sent, from the input shapes recorded
        self.script = script  # named in a raw recording
        self.torch = torch
        self.files = files
        self.device = "cuda" if name == "cuda" else None
        # Lines from the line marker alone (lineranges.py) in the cpu pass; the cuda pass
        # keeps the Python tracer (its device threads and kernel links were checked on an
        # H200 with it), as does --no-exact-lines (functions from the tracer's call nodes).
        # A feature check: torch without _RecordFunctionFast (before 2.2) keeps the tracer.
        ranged = exact_lines and self.device is None and _record_function_fast(torch) is not None
        self.ranges = LineRanges(files) if ranged else None
        # With the line marker's ranges, the threads the script starts are recorded too and
        # the marker follows them (``follow_threads``); the cuda pass and --no-exact-lines
        # keep the main thread's ops, as checked on a GPU. torch's ``_profiler_enabled()``
        # reads False in every thread then (it asks for this thread's profiler).
        # Not with memory: torch records no allocation event then (torch 2.13).
        capable = self.ranges is not None and records_every_thread(torch)
        self.every_thread = capable and not memory
        self.threads_need_no_memory = capable and memory  # what the note on threads says
        self.profiler, self.description = make_profiler(
            torch,
            with_stack=self.ranges is None,
            device=self.device,
            memory=memory,
            shapes=shapes,
            every_thread=self.every_thread,
        )
        self._unfollow: Callable[[], None] | None = None
        self._unwarn: Callable[[], None] | None = None  # place_warnings, while the script runs
        self._unyield: Callable[[], None] | None = None  # scriptprofiler, while we record
        self.script_profiler: scriptprofiler.Starter | None = None  # who started one, where
        # Entries into the user's functions (the "passes disagree" check) are counted as
        # cProfile counts them (entrycount.py): without the tracer always; with it on
        # Python 3.12+ too, where cProfile counts every thread and the tracer's call nodes
        # only the main thread's (a threaded script read as disagreeing). On 3.10/3.11 the
        # counter is a profile hook and would take the tracer's place, and both count the
        # main thread there.
        self.counter: EntryCounter | None = None
        if self.ranges is not None or sys.version_info >= (3, 12):
            self.counter = EntryCounter(lambda code: files.is_user(code.co_filename))
        self.save_raw = save_raw
        self.raw_note = ""
        # Memory events count toward the budget: with them a torch call costs about twice
        # the profiler's memory (a loop of tiny ops: 731 MB -> 1,523 MB), so it counts twice.
        self.memory = memory
        self.event_budget = max(event_budget // 2, 1) if memory and event_budget else event_budget
        self.guard = MemoryGuard()
        self.marker = (
            make_line_marker(torch, self.event_budget, self._budget_reached, self.guard, self.ranges)
            if exact_lines
            else None
        )
        self.script_calls = ScriptCallMarker(torch, self.ranges) if exact_lines else None
        self.exact_lines = exact_lines
        self.started = 0.0
        self.stopped = 0.0
        self.recorded_until = 0.0
        self.running = False
        self.recording = False
        self.budget_hit = ""  # "calls" or "memory": why the recording stopped early
        self.stop_s = 0.0  # the profiler's own stop (it turns every recorded event into results)
        self.grown = 0  # bytes the process had grown by then
        self.calls_recorded = 0  # torch calls recorded by then

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
        self.stop_s = time.perf_counter() - self.recorded_until

    def _budget_reached(self, why: str) -> None:
        # The profiler keeps every event until it stops (16-190 KB a torch call with
        # stacks, measured on real models), so a long run stops recording; the script runs on.
        self.budget_hit = why
        self.grown = MemoryGuard.resident() - self.guard.start
        self.calls_recorded = self.marker.calls if self.marker is not None else 0
        self._end_recording()

    def _yield_to_script(self, here: bool) -> None:
        """The script starts torch's profiler itself (``scriptprofiler.py``): end the
        recording (kept), and let the script's profiler run as without us, without our
        line ranges in it. ``here`` False: started from another thread (said in the note)."""
        self.script_profiler = scriptprofiler.starter(self.files.is_user, thread=not here)
        self._unyield = None
        if self.script_calls is not None:  # (also after the event budget ended the recording)
            self.script_calls.__exit__()
        if not self.recording:
            return
        if self.marker is not None:
            self.marker.tripped = True
        self._budget_reached("script_profiler")  # the recording ends early, as at the budget

    def start(self) -> None:
        self.profiler.__enter__()
        self.recording = True
        self._unyield = scriptprofiler.yield_to_script(self._yield_to_script)
        if self.marker is not None:
            self.marker.__enter__()
            self._unwarn = place_warnings(self.marker)
            if self.every_thread:
                self._unfollow = follow_threads(self.marker)
        if self.script_calls is not None:
            self.script_calls.__enter__()
        self.running = True
        self.started = time.perf_counter()
        if self.counter is not None:
            self.counter.enable()

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        if self.counter is not None:
            self.counter.disable()
        self.stopped = time.perf_counter()
        if self._unyield is not None:
            self._unyield()
            self._unyield = None
        if self._unfollow is not None:
            self._unfollow()
            self._unfollow = None
        if self.script_calls is not None:
            self.script_calls.__exit__()
        if self.marker is not None:
            try:
                self.marker.__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - the script may have left modes pushed
                pass
        if self._unwarn is not None:
            self._unwarn()
            self._unwarn = None
        self._end_recording()
        # Ended from another thread (the script's thread started a profiler), a pass that
        # records its own thread only is not ended: torch ends the calling thread's session,
        # and the main thread's goes on recording to the end. Ending it here, after the
        # script's profiler ran, killed the process (SIGSEGV, torch 2.13, measured): it is
        # left to the process's end, and the note says the recording was lost.

    def finish(self) -> dict[str, Any]:
        begin = time.perf_counter()
        results = self.profiler.kineto_results
        marker_site = None
        if self.marker is not None and self.ranges is None:
            code = type(self.marker).__torch_function__.__code__
            marker_site = (code.co_filename, code.co_firstlineno)
        tree = results.experimental_event_tree()
        wall_ns = int(((self.recorded_until or self.stopped) - self.started) * 1e9)
        entries = self._function_entries()
        if self.save_raw:
            self._save_raw(tree, results, marker_site, wall_ns, entries)
        attributor = Attributor(
            self.files,
            marker_site,
            device=self.device is not None,
            ranges=self.ranges.table if self.ranges is not None else None,
        )
        if entries is not None:
            attributor.take_function_entries(entries)
        if self.collectives:
            attributor.collectives = []
        attributor.consume(tree)
        activities = None
        if self.device is not None:
            activities, _runtime = device.from_kineto(results.events())
        out = autograd_document(attributor, activities, wall_ns)
        if self.raw_note:
            out.setdefault("notes", []).append(self.raw_note)
        if attributor.collectives is not None:
            out["collectives"] = collective_entries(attributor.collectives, self.shapes)
        if self.budget_hit:
            recorded = self.recorded_until - self.started
            calls = self.calls_recorded
            out["event_budget"] = {
                "reason": self.budget_hit,
                "torch_calls": calls,
                "recorded_s": round(recorded, 6),
            }
            if self.budget_hit == "script_profiler" and self.script_profiler is not None:
                why = f"{self.script_profiler.words()}: this pass ended its recording there"
                if self.script_profiler.thread and attributor.event_count == 0:
                    why += " (stopped from that thread, it lost what it had recorded of its own)"
                advice = _OWN_PROFILER_ADVICE[bool(self.script_profiler.library)]
            elif self.budget_hit == "memory":
                why = (
                    f"the process had grown by {self.grown / 1e9:.1f} GB, a third of the memory "
                    "available when the pass started"
                )
                advice = "profile fewer steps"
            else:
                why = "to bound its memory"
                advice = "raise --event-budget, or profile fewer steps"
                if self.memory:
                    advice = (
                        "with memory recorded a torch call counts twice: raise --event-budget, "
                        "leave memory out of --passes, or profile fewer steps"
                    )
            after = f" after {calls} torch call{'s' if calls != 1 else ''}" if self.marker is not None else ""
            out.setdefault("notes", []).append(
                f"the profiler stopped{after} ({recorded:.1f} s into the script): "
                f"{why}; the rest ran unprofiled and shares cover the recorded part ({advice})"
            )
        if attributor.compile_events:
            out.setdefault("notes", []).append(
                f"torch.compile's own work in this pass, {attributor.compile_ns / 1e9:.2f} s under its "
                f"compile ranges ({attributor.compile_events:,} events: tracing, code generation), "
                "is left out of the op CPU time and the op table: it is compilation, not your ops"
            )
        heavy = python_heavy_note(
            attributor.python_events, self.stop_s + time.perf_counter() - begin, self.stopped - self.started
        )
        if heavy:
            out.setdefault("notes", []).append(heavy)
        out.update(
            {
                "script_wall_s": round(self.stopped - self.started, 6),
                "event_count": attributor.event_count,
                "garbled_frames": attributor.garbled_frames,
                "exact_lines": self.exact_lines,
                "torch_calls": self.marker.calls if self.marker is not None else None,
                "postprocess_s": round(time.perf_counter() - begin, 6),
            }
        )
        return out

    def _function_entries(self) -> list[tuple[str, int, str, int]] | None:
        """(file name, first line, function, entries) of the user's functions, as the
        counter saw them; None when the tracer's call nodes count them (``Attributor``)."""
        return self.counter.entries() if self.counter is not None else None

    def _save_raw(
        self,
        tree: Any,
        results: Any,
        marker_site: tuple[str, int] | None,
        wall_ns: int,
        entries: list[tuple[str, int, str, int]] | None,
    ) -> None:
        assert self.save_raw is not None
        extra: dict[str, Any] = {}
        if self.ranges is not None:
            extra["line_ranges"] = self.ranges.header()
        if entries is not None:
            extra["function_entries"] = [list(e) for e in entries]
        self.raw_note = save_raw(
            self.save_raw,
            self,
            wall_ns,
            tree,
            results.events(),
            exact_lines=self.exact_lines,
            marker_site=list(marker_site) if marker_site else None,
            **extra,
        )


MAX_COLLECTIVES = 20_000  # per rank and pass, the first ones in time


def collective_entries(
    found: list[tuple[int, int, str, LineStats, int]], sizes: bool
) -> list[dict[str, Any]]:
    """A rank's collective ops in the order they started, each with its start on the
    wall clock (the profiler's clock is the system's: ranks on one machine compare) and,
    with ``sizes`` (input shapes recorded), the bytes it sent."""
    found.sort(key=lambda c: c[0])
    return [
        {
            "name": name,
            "start_ns": start,
            "duration_us": _us(dur),
            "file": line.file,
            "line": line.line,
            **({"bytes": sent} if sizes else {}),
        }
        for start, dur, name, line, sent in found[:MAX_COLLECTIVES]
    ]


def save_raw(path: str, run: Any, wall_ns: int, tree: Any, events: Any, **extra: Any) -> str:
    """Write a raw recording of a pass (``run``: its torch, name, script, files and profiler
    description) and say so; a failure is reported, never raised: the results still count."""
    try:
        names: set[str] = set()
        nodes, count = recording.dump_tree(tree, names)
        names.update(site[0] for site in extra.get("line_ranges", {}).values())
        names.update(entry[0] for entry in extra.get("function_entries", []))
        recording.write(
            path,
            {
                **recording_header(run.torch, run.name, run.script, run.files, names, wall_ns),
                **extra,
                "profiler": run.description,
                "tree_node_count": count,
                "tree": nodes,
                "events": recording.dump_events(events),
            },
        )
    except Exception as exc:  # noqa: BLE001 - the results still count
        return f"raw recording not written: {type(exc).__name__}: {exc}"
    return f"raw recording written to {path}"


def _accepts(func: Any, name: str) -> bool:
    import inspect

    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _every_thread_config(torch: Any) -> Any:
    """torch's profiler configuration that records every thread's ops (a feature check:
    ``profile_all_threads``, torch 2.6 and later), or None."""
    try:
        from torch._C._profiler import _ExperimentalConfig

        return _ExperimentalConfig(profile_all_threads=True)
    except (ImportError, TypeError, AttributeError):
        return None


def records_every_thread(torch: Any) -> bool:
    """Whether this torch's autograd profiler can record the ops of every thread."""
    return _every_thread_config(torch) is not None and _accepts(
        torch.autograd.profiler.profile, "experimental_config"
    )


def follow_threads(marker: Any) -> Callable[[], None]:
    """Push the line marker in every thread started from now on (torch keeps function modes
    per thread), at the thread's first Python call; returns what undoes it for threads
    started later. A profile hook of ``threading``'s that removes itself at once: the
    thread runs with the hook it would have had."""
    import threading

    previous = threading.getprofile() if hasattr(threading, "getprofile") else None

    def first_call(_frame: Any, _event: str, _arg: Any) -> None:
        sys.setprofile(previous)
        try:
            marker.__enter__()
        except Exception:  # noqa: BLE001 - the thread runs unmarked, never fails for it
            pass

    threading.setprofile(first_call)
    return lambda: threading.setprofile(previous)


def make_profiler(
    torch: Any,
    with_stack: bool,
    device: str | None,
    cpu: bool = True,
    memory: bool = False,
    shapes: bool = False,
    every_thread: bool = False,
) -> tuple[Any, str]:
    """torch's autograd profiler, by feature rather than version: with a device, CUPTI
    kernel events need Kineto (``use_kineto=True``; its default, False, selects a GPU
    fallback that records no kernel at all, measured on an H200 with torch 2.11).
    ``every_thread`` (where ``records_every_thread``): the ops of the threads the script
    starts too; by default torch records the starting thread's and autograd's only."""
    profile = torch.autograd.profiler.profile
    kwargs: dict[str, Any] = {"with_stack": with_stack}
    if memory:
        kwargs["profile_memory"] = True  # allocation events, charged to lines (memory.py)
    if shapes:
        kwargs["record_shapes"] = True
    described_extra = ""
    if every_thread:
        kwargs["experimental_config"] = _every_thread_config(torch)
        described_extra = ", experimental_config=_ExperimentalConfig(profile_all_threads=True)"
    if device is not None:
        kwargs["use_device"] = device
        if _accepts(profile, "use_kineto"):
            kwargs["use_kineto"] = True
        if not cpu and _accepts(profile, "use_cpu"):
            kwargs["use_cpu"] = False
    described = ", ".join(f"{k}={v!r}" for k, v in kwargs.items() if k != "experimental_config")
    described += described_extra
    # kineto's start and stop lines kept out of the script's stderr (kinetolog.py)
    return kinetolog.Quiet(profile(**kwargs)), f"torch.autograd.profiler.profile({described})"


def recording_header(
    torch: Any, pass_name: str, script: str, files: FileClassifier, names: set[str], wall_ns: int
) -> dict[str, Any]:
    """What a raw recording says about where it was made, and which of its file names
    were the user's files (decided there, where the files were). ``script``: the script's
    path; ``files.roots[0]`` is its folder."""
    device_name = None
    try:
        if torch.cuda.is_available():
            device_name = torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001 - a name is a nicety
        pass
    import platform
    import sys

    return {
        "pass": pass_name,
        "script": script,
        "recorded_on": {
            "torch": torch.__version__,
            "cuda": getattr(torch.version, "cuda", None),
            "device": device_name,
            "python": platform.python_version(),
            "platform": sys.platform,
        },
        "roots": files.roots,
        "files": {name: files.resolve(name) for name in sorted(names)},
        "script_wall_ns": wall_ns,
    }


PLACED_AT_LEAST = 0.5  # of the script's wall time, placed on lines by the sample pass, or a note


class SamplePass:
    """The light pass, run first: a thread samples the main thread's line every
    millisecond (wall, CPU and Python time per line; see ``sampler.py``), and, with a GPU,
    the device's activity is recorded alone (no Python stacks, no CPU ops, no line marker).
    The script runs at nearly its own speed, so the busy time measured here against wall
    time decides the CPU/GPU verdict (a traced run inflates the CPU side)."""

    name = "sample"

    def __init__(
        self, files: FileClassifier, torch: Any = None, save_raw: str | None = None, script: str = ""
    ) -> None:
        self.files = files
        self.torch = torch
        self.script = script
        self.save_raw = save_raw
        self.sampler = ThreadSampler(files, compiling=compiletime.compiling_flag(torch))
        self.device: Any = None
        self.description = ""
        if torch is not None:
            self.device, self.description = make_profiler(torch, with_stack=False, device="cuda", cpu=False)
        self.started = 0.0
        self.stopped = 0.0
        self.running = False
        self.device_until = 0.0  # when the device's recording ended
        self.device_paused_ns = 0  # time set aside (the sampler's) before that
        self._unyield: Callable[[], None] | None = None  # scriptprofiler, while it records
        self.script_profiler: scriptprofiler.Starter | None = None  # who started one, where

    def start(self) -> None:
        if self.device is not None:
            self.device.__enter__()
            self._unyield = scriptprofiler.yield_to_script(self._yield_to_script)
        self.running = True
        self.started = time.perf_counter()
        self.sampler.start()

    def compiled_at(self) -> list[tuple[str, int, float]]:
        """The lines the sampler found running while torch.compile compiled, and how long
        (seconds, the most first)."""
        found = sorted(self.sampler.compiling_ns.items(), key=lambda kv: kv[1], reverse=True)
        return [(path, line, ns / 1e9) for (path, line), ns in found if ns >= 10_000_000]

    def set_aside(self, begin: bool) -> None:
        """Time charged to no line, left out of the pass's wall time, from ``begin=True``
        until ``begin=False`` (torch's compiler stack loading, ``compilerstack.py``)."""
        if begin:
            self.sampler.pause()
        else:
            self.sampler.resume()

    def _yield_to_script(self, here: bool) -> None:
        """The script starts torch's profiler itself (``scriptprofiler.py``): the device's
        recording ends (kept), and the verdict covers the part recorded. ``here`` False:
        started from another thread (said in the note)."""
        self._unyield = None
        self.script_profiler = scriptprofiler.starter(self.files.is_user, thread=not here)
        self._end_device()

    def _end_device(self) -> None:
        if self.device is None or self.device_until:
            return
        self.device_until = time.perf_counter()
        self.device_paused_ns = self.sampler.paused_until_now()  # set aside by then
        try:
            self.torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - what was recorded still counts
            pass
        self.device.__exit__(None, None, None)

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        self.sampler.stop()
        self.stopped = time.perf_counter()
        if self._unyield is not None:
            self._unyield()
            self._unyield = None
        self._end_device()  # (from another thread: see AutogradPass.stop)

    def finish(self) -> dict[str, Any]:
        begin = time.perf_counter()
        samples = self.sampler.document()
        for line in (*samples["lines"], *samples["threads"]):
            line.update(position_fields(line["file"], line["line"]))
        wall_ns = int((self.stopped - self.started) * 1e9) - self.sampler.paused_ns
        out: dict[str, Any] = {"script_wall_s": round(wall_ns / 1e9, 6), "samples": samples, "notes": []}
        placed = samples["wall_s"] - samples["outside_s"]
        if wall_ns >= 50_000_000 and placed < PLACED_AT_LEAST * wall_ns / 1e9:
            # 97-99% of it normally: the shares are then of a part of the run only
            heard = samples["signal_looks"] + samples["late_signals"]
            due = int(wall_ns / 1e9 / samples["signal_interval_s"])
            # A few ticks may come before the script blocks the signal (in CI: some did)
            unheard = heard < 0.1 * due and not samples["timer_released"]
            why = (
                f"its timer's signal, SIGALRM, reached the main thread {heard} times of about {due}: "
                "does the script block it?"
                if unheard
                else "its looks came late: a busy machine?"
            )
            out["notes"].append(
                f"the sample pass placed only {placed / (wall_ns / 1e9):.0%} of the script's "
                f"{wall_ns / 1e9:.2f} s on its lines ({why}); the wall time column covers that "
                "part of the run only"
            )
        if self.device is not None:
            events = list(self.device.kineto_results.events())
            if self.save_raw:
                out["notes"].append(save_raw(self.save_raw, self, wall_ns, [], events))
            activities, runtime = device.from_kineto(events)
            recorded_ns = wall_ns
            said = self.script_profiler
            if said is not None:
                recorded_ns = int((self.device_until - self.started) * 1e9) - self.device_paused_ns
                recorded_ns = max(0, min(wall_ns, recorded_ns))
                if said.thread and not events:
                    # ended from that thread, the main thread's recording gave nothing back
                    recorded_ns = 0
                    what = "the device's activity recorded until then was lost (stopped from that thread)"
                else:
                    what = (
                        f"the device's activity was recorded for the first {recorded_ns / 1e9:.2f} s "
                        f"of the script's {wall_ns / 1e9:.2f} s only, and the CPU/GPU verdict covers "
                        "that part"
                    )
                out["notes"].append(f"{said.words()}: {what} ({_OWN_PROFILER_ADVICE[bool(said.library)]})")
            out["device"] = device.summarize(activities, recorded_ns, runtime)
            out["device_event_count"] = sum(1 for a in activities if a.on_device)
        out["postprocess_s"] = round(time.perf_counter() - begin, 6)
        return out


# What to do about a profiler the script starts: its own (False), or a library's (True)
_OWN_PROFILER_ADVICE = {
    False: "for the whole script, run it with its own profiler off",
    True: (
        "for the whole script, turn off the library's profiling (autotuning, for one) while you use this tool"
    ),
}


def python_heavy_note(python_events: int, recording_s: float, script_s: float) -> str:
    """The note for a Python-heavy script's autograd pass ("" when it is not one)."""
    if python_events < PYTHON_HEAVY_CALLS or recording_s < PYTHON_HEAVY_RATIO * max(script_s, 0.0):
        return ""
    return (
        f"the Python tracer recorded {python_events:,} Python calls and generator resumes; stopping "
        f"the profiler and reading them took {recording_s:.1f} s after {script_s:.2f} s of script. The "
        "sample and cProfile passes give each line's wall and Python time for less, without op CPU "
        "time and memory (--passes sample,cprofile); or profile fewer steps"
    )


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
    if s.forward_links or s.forward_device_links:
        by_line: dict[tuple[str, int], list[int]] = {}
        for links, slot in ((s.forward_links, 0), (s.forward_device_links, 1)):
            for key, ns in links.items():
                fwd = a.forward_line_of(key)
                if fwd is not None and fwd.line > 0:  # 0: module-level code, no line known
                    acc = by_line.setdefault((fwd.file, fwd.line), [0, 0])
                    acc[slot] += ns
        ranked = sorted(by_line.items(), key=lambda kv: kv[1][0] + kv[1][1], reverse=True)[:TOP_LINKS]
        entry["forward_lines"] = [
            {"file": f, "line": ln, "backward_cpu_us": _us(ns[0]), "backward_device_us": _us(ns[1])}
            for (f, ln), ns in ranked
        ]
    return entry


def _kernels(kernels: dict[str, list[int]]) -> list[dict[str, Any]]:
    ranked = sorted(kernels.items(), key=lambda kv: kv[1][0], reverse=True)[:TOP_KERNELS]
    return [
        {
            "name": name[:KERNEL_NAME_CHARS],
            "kind": device.kind_of(name),
            "device_us": _us(v[0]),
            "count": v[1],
        }
        for name, v in ranked
    ]


def _device_fields(a: Attributor, s: LineStats) -> dict[str, Any]:
    return {
        "device_count": s.device_count,
        "kernels": _kernels(s.kernels),
        "wait_us": _us(s.wait_ns),
        "wait_share": _share(s.wait_ns, a.total_wait_ns),
    }


TOP_TABLE_OPS = 50


def autograd_document(a: Attributor, activities: list[Activity] | None, wall_ns: int) -> dict[str, Any]:
    """A walked profile as the pass's part of the result document. ``activities``: the
    device events and runtime calls (the CUDA pass), charged here to the ops that
    launched them; None for the CPU pass."""
    with_device = activities is not None
    summary = None
    device_events = 0
    if activities is not None:
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
            "self_cpu_us": _us(a.total_self_ns),
            "self_device_us": _us(a.total_device_ns),
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
            "self_cpu_us": _us(un.self_ns),
            "self_device_us": _us(un.device_ns),
            "cpu_share": _share(un.self_ns, a.total_self_ns),
            "device_share": _share(un.device_ns, a.total_device_ns),
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
                "self_cpu_us": _us(o.self_ns),
                "cpu_total_us": _us(o.total_ns),
                "self_device_us": _us(o.device_ns),
            }
            for name, o in table
        ],
    }
    if recorded is not None:
        un_live = a.unattributed.memory[3] if a.unattributed.memory is not None else 0
        out["memory"] = {**recorded, "outside_your_files_at_peak_bytes": un_live}
    if summary is not None:
        out["totals"]["wait_us"] = _us(a.total_wait_ns)
        out["unattributed"].update(_device_fields(a, un))
        out["device"] = summary
        out["device_event_count"] = device_events
    return out
