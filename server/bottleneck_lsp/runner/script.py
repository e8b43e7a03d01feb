"""Running the user's script as ``python script.py args`` would, and describing how it ended."""

from __future__ import annotations

import _thread
import os
import runpy
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable
from typing import Any

from ..schema.contract import ORIGINAL_PYTHONPATH
from ..schema.model import ScriptError
from .paths import FileClassifier

_SIGNAL = signal.signal  # the real one, whatever a pass or hook puts in its place

_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__))


class ScriptSyntaxError(Exception):
    """The script does not compile; carries the location Python reported."""

    def __init__(self, info: ScriptError) -> None:
        super().__init__(info.message)
        self.info = info


def compile_script(path: str) -> types.CodeType:
    """Compile the script from its bytes, so a coding header is honoured as Python does."""
    with open(path, "rb") as handle:
        source = handle.read()
    return compile_named(source, path)


def compile_named(source: str | bytes, path: str) -> types.CodeType:
    """Compile ``source`` under the name ``path`` (a file's, or a notebook cell's); a
    ``ScriptSyntaxError`` where it does not compile."""
    try:
        return compile(source, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ScriptSyntaxError(
            ScriptError.given(
                type=type(exc).__name__,
                message=exc.msg or str(exc),
                file=os.path.abspath(exc.filename or path),
                line=exc.lineno,
                column=exc.offset,
                end_line=getattr(exc, "end_lineno", None),
                end_column=getattr(exc, "end_offset", None),
                traceback="".join(traceback.format_exception_only(type(exc), exc)),
            )
        ) from None
    except ValueError as exc:  # null bytes in the source
        raise ScriptSyntaxError(
            ScriptError.given(
                type="SyntaxError",
                message=str(exc),
                file=os.path.abspath(path),
                line=1,
                column=1,
                end_line=None,
                end_column=None,
                traceback=f"SyntaxError: {exc}\n",
            )
        ) from None


def prepare_process(
    script: str,
    args: list[str],
    cwd: str,
    strip_path: str | None,
    module: str | None = None,
    argv0: str | None = None,
) -> None:
    """Make this process look like ``python script args`` started in ``cwd`` (with
    ``module``: ``python -m module args``, whose ``sys.path[0]`` is ``cwd`` and whose
    ``sys.argv[0]`` is the module's file, ``script``). ``argv0``: the script's name as
    typed (``sys.argv[0]``), when it is not ``script``."""
    if strip_path:
        real = os.path.realpath(strip_path)
        sys.path[:] = [p for p in sys.path if not p or os.path.realpath(p) != real]
        original = os.environ.pop(ORIGINAL_PYTHONPATH, None)
        if original is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = original
    # python resolves a linked script: its sys.path[0] is the target's folder
    script_dir = os.path.abspath(cwd) if module else os.path.dirname(os.path.realpath(script))
    if sys.path and sys.path[0] in ("", os.getcwd(), os.path.realpath(os.getcwd())):
        sys.path[0] = script_dir
    else:
        sys.path.insert(0, script_dir)
    sys.argv[:] = [argv0 or script, *args]
    os.chdir(cwd)


def main_module(script: str | None) -> types.ModuleType:
    """A fresh ``__main__`` module (``script``: its ``__file__``; None for a notebook's,
    which has none), in ``sys.modules``."""
    main = types.ModuleType("__main__")
    if script is not None:
        main.__file__ = script
    main.__dict__.update(
        {
            "__builtins__": __builtins__,
            "__cached__": None,
            "__spec__": None,
            "__loader__": None,
            "__package__": None,
        }
    )
    sys.modules["__main__"] = main
    return main


def run_as_main(code: types.CodeType, script: str) -> None:
    """Execute compiled code as the ``__main__`` module."""
    exec(code, main_module(script).__dict__)


def run_module_as_main(module: str) -> None:
    """Execute a module as ``python -m module`` would: its package imported first, then the
    module (a package: its ``__main__``) as ``__main__``, with ``__spec__`` set, as
    ``python -m cProfile -m module`` runs it."""
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _runpy_frame(file_name: str) -> bool:
    """A frame of runpy's, which ran the module (``-m``): not the user's traceback."""
    return file_name == "<frozen runpy>" or file_name == runpy.__file__


def describe_exception(exc: BaseException, files: FileClassifier) -> ScriptError:
    """The exception, its innermost location in the user's files, and a traceback
    with the runner's own frames left out."""
    entries = [
        e
        for e in traceback.extract_tb(exc.__traceback__)
        if not e.filename.startswith(_RUNNER_DIR + os.sep) and not _runpy_frame(e.filename)
    ]
    location: traceback.FrameSummary | None = None
    for entry in entries:
        if files.is_user(entry.filename):
            location = entry
    text = "Traceback (most recent call last):\n" if entries else ""
    text += "".join(traceback.format_list(entries))
    text += "".join(traceback.format_exception_only(type(exc), exc))
    return ScriptError.given(
        type=type(exc).__name__,
        message=str(exc),
        file=files.resolve(location.filename) if location else None,
        line=location.lineno if location else None,
        column=(getattr(location, "colno", None) or 0) + 1 if location else None,
        function=location.name if location else None,
        traceback=text[-20000:],
    )


def exit_code_of(exc: SystemExit) -> int:
    """The process exit status Python would give for this SystemExit."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 1


class ChildCounter:
    """Counts the processes the script starts (fork, and multiprocessing's spawn and
    forkserver): the profile covers this process only, and the report says so."""

    def __init__(self) -> None:
        self.count = 0
        pid = os.getpid()

        def forked() -> None:
            if os.getpid() == pid:
                self.count += 1

        os.register_at_fork(after_in_parent=forked)
        try:
            from multiprocessing import process
        except ImportError:  # pragma: no cover - multiprocessing is always there on CPython
            return
        start = process.BaseProcess.start
        counter = self

        def counted_start(proc: Any) -> None:
            before = counter.count
            start(proc)
            # A fork was counted by the hook above; spawn and forkserver fork nothing here.
            if os.getpid() == pid and counter.count == before:
                counter.count += 1

        process.BaseProcess.start = counted_start  # type: ignore[method-assign,assignment]


class ThreadCounter:
    """Counts the threads the user's code starts (``threading.Thread(...).start()`` called
    from the user's files): torch's profiler records the ops of the thread that started it
    (and autograd's), cProfile before Python 3.12 the calls of that thread only, and the
    report says so. Threads a library starts (a DataLoader's pin-memory thread, a thread
    pool's workers) are not counted."""

    def __init__(self, files: FileClassifier) -> None:
        import threading

        self.count = 0
        pid = os.getpid()
        start = threading.Thread.start
        here = threading.__file__
        counter = self

        def counted_start(thread: Any) -> None:
            start(thread)
            if os.getpid() != pid:
                return
            frame: types.FrameType | None = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename == here:
                frame = frame.f_back  # a Thread subclass's start() calling ours
            if frame is not None and files.is_user(frame.f_code.co_filename):
                counter.count += 1

        threading.Thread.start = counted_start  # type: ignore[method-assign,assignment]


def ignore_term() -> None:
    """SIGTERM ignored from here on (the results are being written; the parent's SIGKILL
    after its grace is the backstop), whatever ``install_exit_hooks`` put in front."""
    _SIGNAL(signal.SIGTERM, signal.SIG_IGN)


class Terminated(BaseException):
    """Raised in the main thread when the runner is asked to stop (SIGTERM)."""


STOP_AGAIN_S = 0.5  # a stop not yet taken is sent again this often (install_exit_hooks)


def install_exit_hooks(on_hard_exit: Callable[[int], None], on_term: Callable[[], None]) -> None:
    """Turn SIGTERM into ``Terminated`` (after calling ``on_term``) and let ``os._exit``
    save results first.

    SIGTERM stays the runner's while the script runs: the only one it gets is a stop, a
    timeout or its parent's death, and each must end the pass with what it measured. A
    handler the script sets for it (``SIG_IGN``, or a checkpoint-on-preemption handler) is
    kept aside: ``signal.getsignal`` returns it, and the processes the script forks get it,
    as without us. (Installed, it made a stop wait for the parent's SIGKILL and lose every
    result.)

    In this process only: a forked child (a pool's or a DataLoader's worker) gets, at the
    fork, what it would have had without us: the script's SIGTERM handling, the real
    ``os._exit`` and ``signal`` functions, no profile hook. A Python handler runs between
    bytecodes only, so a worker's SIGTERM landing just before a blocking wait would never
    be acted on, and ``Pool.terminate()`` would wait for it for ever.
    """
    kept: dict[str, Any] = {"handler": signal.getsignal(signal.SIGTERM), "again": False}
    real_signal, real_getsignal = signal.signal, signal.getsignal

    def terminate(signum: int, frame: object) -> None:
        on_term()
        if not kept["again"] and os.getpid() == pid:
            kept["again"] = True
            # the low-level call: threading's Thread.start takes a lock that the main thread,
            # interrupted here, may be holding
            _thread.start_new_thread(_stop_again, ())
        raise Terminated()

    def _stop_again() -> None:
        # ``Terminated`` can be swallowed where Python ignores exceptions: a handler run
        # inside an at-fork hook (logging's, when a DataLoader forks its workers), a
        # ``__del__``, or the script's own ``except BaseException``; the pass would then run
        # on until the parent's SIGKILL and lose its results. So the stop is sent again until
        # the runner has taken it (``ignore_term``, its first step in writing the results).
        while True:
            time.sleep(STOP_AGAIN_S)
            if real_getsignal(signal.SIGTERM) is not terminate:
                return
            os.kill(pid, signal.SIGTERM)

    real_signal(signal.SIGTERM, terminate)
    pid = os.getpid()

    def kept_signal(signalnum: Any, handler: Any) -> Any:
        if signalnum == signal.SIGTERM and os.getpid() == pid:
            before = kept["handler"]
            real_signal(signalnum, handler)  # its checks: a bad handler raises as before
            real_signal(signalnum, terminate)
            kept["handler"] = handler
            return before
        return real_signal(signalnum, handler)

    def kept_getsignal(signalnum: Any) -> Any:
        if signalnum == signal.SIGTERM and os.getpid() == pid:
            return kept["handler"]
        return real_getsignal(signalnum)

    signal.signal = kept_signal
    signal.getsignal = kept_getsignal
    real_exit = os._exit

    def hooked_exit(status: int) -> None:
        try:
            on_hard_exit(status)
        except BaseException:  # noqa: BLE001 - never block the exit
            pass
        real_exit(status)

    os._exit = hooked_exit  # type: ignore[assignment]

    def in_forked_child() -> None:
        if real_getsignal(signal.SIGTERM) is terminate:
            handler = kept["handler"]
            real_signal(signal.SIGTERM, signal.SIG_DFL if handler is None else handler)
        if signal.signal is kept_signal:
            signal.signal, signal.getsignal = real_signal, real_getsignal
        if os._exit is hooked_exit:
            os._exit = real_exit
        sys.setprofile(None)

    os.register_at_fork(after_in_child=in_forked_child)
