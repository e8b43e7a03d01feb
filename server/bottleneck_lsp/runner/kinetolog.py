"""Kineto's start and stop lines kept out of the script's stderr.

torch 2.13's profiler library writes ``USDT:... profiler_start`` and ``profiler_stop`` (and,
at some log levels, ``STAGE:... Completed Stage``) straight to file descriptor 2 whenever a
profiler starts or stops, whatever the log level. Each pass would print them among the
script's own output. ``dropped`` points fd 2 at a temporary file while the profiler starts
or stops, then writes back everything else that arrived meanwhile (another thread of the
script, a kineto warning), in order.

Standard library only (the runner imports it).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

_DROPPED = re.compile(rb"^(USDT|STAGE):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ \w+\.cpp:\d+\] ")


@contextlib.contextmanager
def dropped() -> Iterator[None]:
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no fd 2, or a closed sys.stderr: nothing to keep clean
        yield
        return
    capture = tempfile.TemporaryFile()
    os.dup2(capture.fileno(), 2)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        capture.seek(0)
        kept = b"".join(line for line in capture.read().splitlines(keepends=True) if not _DROPPED.match(line))
        capture.close()
        if kept:
            with contextlib.suppress(OSError):
                os.write(2, kept)


class Quiet:
    """A profiler whose start and stop go through ``dropped``; everything else is the
    profiler's own (``kineto_results``, ...). ``profilerconfig.make_profiler`` makes every one so."""

    def __init__(self, profiler: Any) -> None:
        self._profiler = profiler

    def __enter__(self) -> Quiet:
        with dropped():
            self._profiler.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        with dropped():
            return self._profiler.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._profiler, name)
