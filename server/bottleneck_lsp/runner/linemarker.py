"""The cpu and cuda passes' line marker: every torch call made from Python passes
through it (a TorchFunctionMode), which names the user's line that made it, counts the
calls against the event budget and watches the process's memory; and what goes with it
(warnings placed at the user's line, ``torch.jit.script`` calls, the threads the script
starts).

Standard library and torch only: it runs in the user's interpreter.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Callable
from types import CodeType
from typing import Any

from . import compiletime
from .lineranges import LineRanges


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


def backward_check(torch: Any) -> Callable[[], bool]:
    """Whether the autograd engine is running a node of a backward in this thread (a
    compiled backward's Python, a custom ``autograd.Function``'s ``backward``, a tensor
    hook). The engine restores the thread's state after each node, the profiler's callbacks
    and the function mode stack included: a recording started or stopped there, or the
    line marker pushed or popped there, is undone when the node returns (measured: a
    window opened in a compiled backward recorded nothing more, and torch warned "Requested
    callback is not found" when it stopped). So windows open and close, and recordings
    stop, outside a backward only."""
    task = getattr(torch._C, "_current_graph_task_id", None)
    if task is None:  # (every torch this tool supports has it)
        return lambda: False
    return lambda: task() != -1


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
    fast: Any = record_function_fast(torch)
    user = ranges.user if ranges is not None else {}
    sites = ranges.sites if ranges is not None else {}
    backward_calls = (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)
    compiling = compiletime.tracing_check(torch)
    in_backward = backward_check(torch)
    limit = budget if budget > 0 else 1 << 62  # (0: no budget)

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
            # (not inside a backward's node: see ``backward_check``; the first call after it)
            if self.calls >= limit and not in_backward():
                self.tripped = True
                on_budget("calls")
                return func(*args, **(kwargs or {}))
            if guard is not None and self.calls % every == 0 and guard.over() and not in_backward():
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


def record_function_fast(torch: Any) -> Any:
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
        self.fast: Any = record_function_fast(torch)

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
