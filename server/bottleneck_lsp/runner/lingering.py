"""The runner's exit, bounded: a script that has ended while its process would not (a thread
it started waits for ever, an atexit handler blocks) is described in the pass's results,
and the process ends.

Python's exit joins every thread that is not a daemon, then runs the atexit handlers; either
can wait for ever, and a bare run of such a script never ends. The runner has written its
results by then (``__main__._Run.conclude``), so nothing measured is at stake: after
``EXIT_GRACE_S`` a watcher (a ``_thread``, which the exit does not join) records, for each
thread that holds the exit, its name, where it is (the innermost frame, and the line of the
user's files it waits at) and whether it is waiting or running (its CPU clock, read twice),
writes that into the results as ``lingering`` with a note, and ends the process.

The watcher needs the GIL. Should the exit hold it for ever (a C++ destructor joining a
thread), ``faulthandler`` (a C thread) writes every thread's Python stack to
``LINGER_STACKS_SUFFIX`` beside the results after ``BACKSTOP_S`` more, and ends the process:
the host says so.

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

import faulthandler
import linecache
import os
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType

from ..notebook.cell_paths import short_place
from ..schema.contract import LINGER_STACKS_SUFFIX
from ..schema.model import Lingering, LingeringThread, PassStatus, RunnerPart
from .paths import FileClassifier, is_runner_file

EXIT_GRACE_S = 5.0  # after the results are written, for the threads and atexit handlers
BACKSTOP_S = 10.0  # ... then faulthandler's, should the watcher never get the GIL
CPU_LOOK_S = 0.2  # a thread whose CPU clock moves by under a quarter of this is waiting
_STACK_FRAMES = 12  # frames kept of each thread's stack, innermost ones


def watch(
    part: RunnerPart,
    out: str,
    files: FileClassifier | None,
    write: Callable[[str, RunnerPart], None],
    exit_now: Callable[[int], None],
    code: int,
    grace: float = EXIT_GRACE_S,
) -> None:
    """Arm the watcher and the backstop for the exit that follows (``exit_now(code)``, the
    real ``os._exit``, ends the process once the lingering threads are described)."""
    import _thread

    me = os.getpid()
    try:  # (faulthandler keeps the file open)
        stacks = open(out + LINGER_STACKS_SUFFIX, "w", encoding="utf-8")
        faulthandler.dump_traceback_later(grace + BACKSTOP_S, exit=True, file=stacks)
    except (OSError, RuntimeError, ValueError):
        pass

    def watcher() -> None:
        time.sleep(grace)
        if os.getpid() != me:  # pragma: no cover - a fork of the exiting process
            return
        try:
            # A pass stopped mid-run (a timeout, a window, a cancel) leaves the script's
            # threads where they were: normal, nothing to explain; its exit is bounded alike.
            stopped = part.status == PassStatus.TERMINATED
            threads = [] if stopped else describe(sys._current_frames(), files, _thread.get_ident())
            if threads:
                ended = part.script_wall_s or part.wall_s or 0.0
                lingering = Lingering(script_ended_s=ended, grace_s=grace, threads=threads)
                part.update(lingering=lingering)
                part.add_note(note(lingering, part.rank))
                write(out, part)
        finally:
            cancel(out)
            exit_now(code)

    _thread.start_new_thread(watcher, ())


def cancel(out: str) -> None:
    """The exit went through: no backstop, no stacks file."""
    faulthandler.cancel_dump_traceback_later()
    try:
        os.unlink(out + LINGER_STACKS_SUFFIX)
    except OSError:
        pass


def describe(frames: dict[int, FrameType], files: FileClassifier | None, me: int) -> list[LingeringThread]:
    """The threads that hold the exit: every live thread that is not a daemon, and the main
    thread when it is in an atexit handler (not when it only joins the others)."""
    known = dict(getattr(threading, "_active", {}))
    main = threading.main_thread().ident
    found: list[tuple[int, str, FrameType]] = []
    for ident, frame in frames.items():
        if ident == me:
            continue
        thread = known.get(ident)
        if ident == main:
            if _joining(frame):
                continue
            found.append((ident, "MainThread (an atexit handler)", frame))
        elif thread is not None and not thread.daemon:
            found.append((ident, thread.name, frame))
    if not found:
        return []
    before = {ident: _cpu_s(ident) for ident, _, _ in found}
    time.sleep(CPU_LOOK_S)
    out = []
    for ident, name, frame in found:
        start, end = before[ident], _cpu_s(ident)
        running = None if start is None or end is None else end - start >= CPU_LOOK_S / 4
        out.append(_thread_entry(name, frame, files, running))
    return out


def _joining(frame: FrameType | None) -> bool:
    """Whether the main thread is in threading's shutdown (joining the other threads)."""
    while frame is not None:
        if frame.f_code.co_name == "_shutdown" and frame.f_code.co_filename == threading.__file__:
            return True
        frame = frame.f_back
    return False


def _cpu_s(ident: int) -> float | None:
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(ident))
    except (AttributeError, OSError, OverflowError):
        return None


def _thread_entry(
    name: str, frame: FrameType, files: FileClassifier | None, running: bool | None
) -> LingeringThread:
    entry = LingeringThread.given(
        name=name,
        state="unknown" if running is None else "running" if running else "waiting",
        where=f"{short_place(frame.f_code.co_filename, frame.f_lineno)} in {frame.f_code.co_name}",
    )
    stack: list[str] = []
    here: FrameType | None = frame
    while here is not None:
        code = here.f_code
        if not is_runner_file(code.co_filename):
            path = files.resolve(code.co_filename) if files is not None else None
            if path is not None and "file" in entry.absent:
                entry.update(
                    file=path,
                    line=here.f_lineno,
                    function=code.co_name,
                    code=linecache.getline(code.co_filename, here.f_lineno or 0).strip(),
                )
            if len(stack) < _STACK_FRAMES:
                stack.append(f'  File "{code.co_filename}", line {here.f_lineno}, in {code.co_name}')
        here = here.f_back
    entry.update(stack="\n".join(reversed(stack)))
    return entry


def note(lingering: Lingering, rank: int | None) -> str:
    """The pass's note: which threads held its exit, and where."""
    said = []
    for thread in lingering.threads:
        verb = "runs" if thread.state == "running" else "waits"
        if thread.file:
            code = f" ({thread.code})" if thread.code else ""
            at = f"{short_place(thread.file, thread.line)}{code}"
        else:
            at = thread.where
        said.append(f'thread "{thread.name}" {verb} at {at}')
    who = f"rank {rank}: " if rank is not None else ""
    return (
        f"{who}the script ended at {lingering.script_ended_s:.1f} s, but its process did not exit: "
        + "; ".join(said)
        + f". The runner ended it after {lingering.grace_s:g} s, with its results kept "
        "(a plain run would not end)"
    )
