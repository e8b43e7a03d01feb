"""A script that starts torch's profiler itself, while a pass records with it.

torch runs one profiler at a time. A second one, started while a pass records, takes the
session over, and when it stops the pass's recording is gone, the events from before it
included (measured, torch 2.13: ``profile()`` inside a pass's profiler left the pass with
0 events, and torch warned "disableProfiler called but no active profiling session"). The
pass yields instead: ``yield_to_script`` wraps the functions every one of torch's
profilers starts through (``torch.profiler.profile``, ``torch.autograd.profiler.profile``,
``emit_nvtx``, ``emit_itt``, the legacy profiler), and the first call from the script
ends the pass's recording (what it recorded until then is kept), then starts the script's
profiler, which runs as without us. Standard library only: it runs in the user's
interpreter.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

# (module, function): where torch's profilers look these up when they start
STARTS = (
    ("torch.autograd.profiler", "_prepare_profiler"),
    ("torch.autograd.profiler", "_enable_profiler"),
    ("torch.autograd.profiler_legacy", "_enable_profiler_legacy"),
)


def script_line(is_user: Callable[[str], bool]) -> tuple[str, int]:
    """The innermost line of the user's files on the calling stack: where the script
    started its profiler (("", 0) when none is)."""
    frame: Any = sys._getframe(1)
    while frame is not None and not is_user(frame.f_code.co_filename):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_lineno) if frame is not None else ("", 0)


def started_at(where: tuple[str, int] | None) -> str:
    """The note's words for it: "the script started torch's profiler itself at a.py:5, and
    torch runs one profiler at a time"."""
    file, line = where or ("", 0)
    at = f" at {os.path.basename(file)}:{line}" if line else ""
    return f"the script started torch's profiler itself{at}, and torch runs one profiler at a time"


def yield_to_script(on_start: Callable[[], None]) -> Callable[[], None]:
    """Call ``on_start`` (once, in this process) before the script starts a profiler of
    torch's; returns what undoes the wrapping (also done at that first call)."""
    owner = os.getpid()
    patched: list[tuple[Any, str, Any, Any]] = []

    def undo() -> None:
        while patched:
            module, name, original, wrapper = patched.pop()
            if getattr(module, name, None) is wrapper:
                setattr(module, name, original)

    def wrap(original: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if os.getpid() == owner:  # (a forked worker's profiler is not this pass's business)
                undo()
                on_start()
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
