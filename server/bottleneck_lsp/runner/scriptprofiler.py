"""A script that starts torch's profiler itself, while a pass records with it.

torch runs one profiler at a time. A second one, started while a pass records, takes the
session over, and when it stops the pass's recording is gone, the events from before it
included (measured, torch 2.13: ``profile()`` inside a pass's profiler left the pass with
0 events, and torch warned "disableProfiler called but no active profiling session"). The
pass yields instead: ``yield_to_script`` wraps the functions every one of torch's
profilers starts through (``torch.profiler.profile``, ``torch.autograd.profiler.profile``,
``emit_nvtx``, ``emit_itt``, the legacy profiler), and the first call from the script
ends the pass's recording (what it recorded until then is kept), then starts the script's
profiler, which runs as without us. (Code that calls torch's private starts directly, such
as ``torch.autograd._enable_profiler``, is not seen.) A profiler of ours started while the
wrappers are on (a window of the one run, a segment of the device's recording between
windows) starts within ``ours()``: not the script's. Standard library only: it runs in the
user's interpreter.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..notebook.cell_paths import short_place

# (module, function): where torch's profilers look these up when they start
STARTS = (
    ("torch.autograd.profiler", "_prepare_profiler"),
    ("torch.autograd.profiler", "_enable_profiler"),
    ("torch.autograd.profiler_legacy", "_enable_profiler_legacy"),
)


# Our own profilers starting now (``ours``), by thread
_starting = threading.local()


@contextmanager
def ours() -> Iterator[None]:
    """A profiler of ours starts in here: the wrappers of ``yield_to_script`` let it start
    without taking it for the script's (before this, the first window of a GPU's one run, and
    the device's own recording in the sample pass on a GPU, ended that recording as if the
    script had started a profiler: tests/test_gpu_one_run_handoffs.py)."""
    _starting.depth = getattr(_starting, "depth", 0) + 1
    try:
        yield
    finally:
        _starting.depth -= 1


# The modules a profiler's start goes through: the caller after them started it.
_PROFILER_MODULES = ("torch.autograd.profiler", "torch.profiler", "bottleneck_lsp.")


@dataclass(frozen=True)
class Starter:
    """Who started a profiler: the innermost line of the user's files on the stack, and
    the library module that made the call when the script did not itself ("" when it did)."""

    file: str = ""
    line: int = 0
    library: str = ""
    thread: bool = False  # started from a thread other than the pass's

    def words(self) -> str:
        """The note's opening: "the script started torch's profiler itself at a.py:5, and
        torch runs one profiler at a time"."""
        at = f" at {short_place(self.file, self.line)}" if self.line else ""
        who = (
            f"torch's profiler was started by {self.library} (called{at or ' from outside your files'})"
            if self.library
            else f"the script started torch's profiler itself{at}"
        )
        where = " in another thread" if self.thread else ""
        return f"{who}{where}, and torch runs one profiler at a time"


def starter(is_user: Callable[[str], bool], thread: bool = False) -> Starter:
    """Who is starting a profiler now (called from the wrapped start, ``yield_to_script``)."""
    frame: Any = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith(_PROFILER_MODULES):
        frame = frame.f_back
    library = ""
    if frame is not None and not is_user(frame.f_code.co_filename):
        library = str(frame.f_globals.get("__name__", "")) or os.path.basename(frame.f_code.co_filename)
    while frame is not None and not is_user(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return Starter(library=library or "?", thread=thread)
    return Starter(frame.f_code.co_filename, frame.f_lineno, library, thread)


def yield_to_script(on_start: Callable[[bool], None]) -> Callable[[], None]:
    """Call ``on_start(True)`` (once, in this process) before the script starts a profiler
    of torch's; returns what undoes the wrapping (also done at that first call). From a
    thread other than this one, ``on_start(False)``: the pass still ends its recording
    there (measured, torch 2.13: a pass recording its own thread left running while a
    script's thread started a profiler, the process died of SIGSEGV; ended from that
    thread, torch warns that it found no session, and the script runs on), and says so."""
    owner = os.getpid()
    thread = threading.get_ident()
    patched: list[tuple[Any, str, Any, Any]] = []
    once = threading.Lock()  # two threads starting profilers at once: one yield
    fired: list[bool] = []

    def undo() -> None:
        while patched:
            module, name, original, wrapper = patched.pop()
            if getattr(module, name, None) is wrapper:
                setattr(module, name, original)

    def wrap(original: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            # (a forked worker's profiler is not this pass's business; nor is one of ours)
            if os.getpid() == owner and not getattr(_starting, "depth", 0):
                with once:
                    first = not fired
                    if first:
                        fired.append(True)
                if first:
                    undo()
                    try:
                        on_start(threading.get_ident() == thread)
                    except Exception:  # noqa: BLE001 - ending ours must not fail the script's start
                        pass
            return original(*args, **kwargs)

        return wrapper

    for module_name, name in STARTS:
        module = sys.modules.get(module_name)  # loaded with torch; a torch without: nothing
        original = getattr(module, name, None)
        if module is None or original is None:
            continue
        wrapper = wrap(original)
        setattr(module, name, wrapper)
        patched.append((module, name, original, wrapper))
    return undo


# What to do about a profiler the script starts: its own (False), or a library's (True)
OWN_PROFILER_ADVICE = {
    False: "for the whole script, run it with its own profiler off",
    True: (
        "for the whole script, turn off the library's profiling (autotuning, for one) while you use this tool"
    ),
}
