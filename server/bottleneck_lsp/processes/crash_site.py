"""Where a crashed pass's script was when it died (a segmentation fault, an abort): the
innermost frame of the user's files in the traceback that faulthandler, which the runner
enables for the script, printed to its stderr. Read from a runner's part as the host reads
it: the error then has a line, which the report names and the editor marks."""

from __future__ import annotations

import os
import re

from ..schema.model import Pass, PassStatus

_FATAL = re.compile(r"^Fatal Python error: (?P<what>.+?)\s*$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S.*?)\s*$')


def _under(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(os.path.realpath(root) + os.sep) for root in roots if root)


def place(part: Pass, roots: list[str]) -> None:
    """Give a crashed part's error the crash's kind and its line in the user's files."""
    error = part.error
    if part.status != PassStatus.CRASHED or error is None or error.file:
        return
    lines = error.traceback.splitlines()
    what = next((m["what"] for text in lines if (m := _FATAL.match(text))), None)
    if what is None:
        return
    signal = part.signal
    error.update(type=f"{what} ({signal})" if signal else what)
    for text in lines:  # most recent call first
        frame = _FRAME.match(text)
        if frame is not None and _under(frame["file"], roots):
            error.update(
                message="the script crashed here",
                file=frame["file"],
                line=int(frame["line"]),
                function=frame["function"],
            )
            return
    error.update(message="the script crashed outside your files (see the traceback)")
