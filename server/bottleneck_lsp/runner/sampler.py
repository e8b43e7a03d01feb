"""Python time per source line, by sampling the main thread on CPU-time ticks.

cProfile knows functions, not lines; a plain Python loop (no calls) has no call site at
all. Every ``interval`` seconds of process CPU time (ITIMER_PROF), the signal handler
looks at the interrupted frame and counts the innermost line in the user's files.
Samples taken while a C call (a torch op) runs land when the call returns, on its line
or the next one: the autograd passes, not this sampler, place op time exactly.
"""

from __future__ import annotations

import os
import signal
from types import FrameType
from typing import Any

from .paths import FileClassifier


class LineSampler:
    def __init__(self, files: FileClassifier, interval: float = 0.001) -> None:
        self.files = files
        self.interval = interval
        self.counts: dict[tuple[str, int], list[Any]] = {}  # (path, line) -> [count, function]
        self.total = 0
        self._paths: dict[str, str | None] = {}
        self._previous: Any = None
        self._pid = os.getpid()
        self.available = hasattr(signal, "setitimer") and hasattr(signal, "SIGPROF")

    def _on_tick(self, signum: int, frame: FrameType | None) -> None:
        if os.getpid() != self._pid:
            return
        self.total += 1
        paths = self._paths
        while frame is not None:
            name = frame.f_code.co_filename
            path = paths.get(name, "")
            if path == "":
                path = paths[name] = self.files.resolve(name)
            if path is not None:
                key = (path, frame.f_lineno)
                entry = self.counts.get(key)
                if entry is None:
                    self.counts[key] = [1, frame.f_code.co_name]
                else:
                    entry[0] += 1
                return
            frame = frame.f_back

    def start(self) -> None:
        if not self.available:
            return
        self._previous = signal.signal(signal.SIGPROF, self._on_tick)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        if not self.available or self._previous is None:
            return
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, self._previous)
        self._previous = None

    def lines(self) -> list[dict[str, Any]]:
        """Per line: samples, seconds (samples x interval), share of all samples."""
        ranked = sorted(self.counts.items(), key=lambda kv: kv[1][0], reverse=True)
        return [
            {
                "file": path,
                "line": line,
                "function": function,
                "samples": count,
                "time_s": round(count * self.interval, 6),
                "share": round(count / self.total, 6) if self.total else 0.0,
            }
            for (path, line), (count, function) in ranked
        ]
