"""The process's peak RSS over the whole run, placed on the lines that raised it.

The kernel keeps the process's high-water mark of resident memory (``ru_maxrss``): reading
it costs half a microsecond. The sampler reads it at each charge of the main thread's time
(``sampler.py``): when it went up since the last read, the line being charged raised it,
by that much. The line that raised it last holds the whole run's peak, wherever the run's
recording windows were (their memory column covers only what they recorded). What a read
can miss: a rise during a look's gap lands on the line charged next; memory other threads
allocate lands on the main thread's line at that time; the windows' own event buffers count
too (said when the peak came during one).

Standard library only: it runs in the user's interpreter.
"""

from __future__ import annotations

import resource
import time
from typing import Any

_KB = 1024  # ru_maxrss is in kilobytes on Linux


def _maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


class PeakWatch:
    """Which lines raised the process's peak RSS, and where it was last raised."""

    def __init__(self) -> None:
        self.began = time.perf_counter_ns()
        self.start_kb = self.kb = _maxrss_kb()
        self.raised: dict[tuple[str, int], int] = {}  # per line, kilobytes
        self.peak: tuple[str, int] | None = None
        self.peak_at_ns = 0
        self.peak_windowed = False

    def look(self, key: tuple[str, int], windowed: bool) -> None:
        """The main thread's time is being charged to ``key`` (``windowed``: while a window
        of the one run records)."""
        kb = _maxrss_kb()
        if kb <= self.kb:
            return
        self.raised[key] = self.raised.get(key, 0) + kb - self.kb
        self.kb = kb
        self.peak = key
        self.peak_at_ns = time.perf_counter_ns()
        self.peak_windowed = windowed

    def raised_bytes(self, key: tuple[str, int]) -> int:
        return self.raised.get(key, 0) * _KB

    def document(self) -> dict[str, Any]:
        """The samples' ``peak_rss``: the peak, the start, and where and when it was reached."""
        out: dict[str, Any] = {"bytes": self.kb * _KB, "start_bytes": self.start_kb * _KB}
        if self.peak is not None:
            out.update(
                file=self.peak[0],
                line=self.peak[1],
                at_s=round((self.peak_at_ns - self.began) / 1e9, 6),
                windowed=self.peak_windowed,
            )
        return out
