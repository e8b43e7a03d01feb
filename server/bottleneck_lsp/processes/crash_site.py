"""Where a crashed pass's script was when it died (a segmentation fault, an abort): the
innermost frame of the user's files in the traceback that faulthandler, which the runner
enables for the script, printed to its stderr. Read from a runner's raw part, before it is
typed: the error then has a line, which the report names and the editor marks."""

from __future__ import annotations

import os
import re
from typing import Any

_FATAL = re.compile(r"^Fatal Python error: (?P<what>.+?)\s*$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>\S.*?)\s*$')


def _under(path: str, roots: list[str]) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(os.path.realpath(root) + os.sep) for root in roots if root)


def place(raw: dict[str, Any], roots: list[str]) -> None:
    """Give a crashed part's error the crash's kind and its line in the user's files."""
    error = raw.get("error")
    if raw.get("status") != "crashed" or not isinstance(error, dict) or error.get("file"):
        return
    lines = str(error.get("traceback") or "").splitlines()
    what = next((m["what"] for text in lines if (m := _FATAL.match(text))), None)
    if what is None:
        return
    signal = raw.get("signal")
    error["type"] = f"{what} ({signal})" if signal else what
    for text in lines:  # most recent call first
        frame = _FRAME.match(text)
        if frame is not None and _under(frame["file"], roots):
            error["message"] = "the script crashed here"
            error.update(file=frame["file"], line=int(frame["line"]), function=frame["function"])
            return
    error["message"] = "the script crashed outside your files (see the traceback)"
