"""Lines torch writes to a runner's stderr because we profile, kept out of the script's
output on the host side.

torch's CPU allocator logs "Memory block of unknown size was allocated before the
profiling started" (c10's ``LOG(WARNING)``, straight to file descriptor 2) for the first
and then every 1000th free, within a memory recording, of a block allocated before it.
The one run's windows (runner/windows.py) record memory in short windows of a running
script, so its frees of blocks made outside them are many, and each job would print the
line among the script's own, at the script's time (no runner-side redirect can catch it
there). ``Unwanted`` drops whole lines that match, passing everything else on at once: a
partial line waits only while it may still become one of them.

Standard library only.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable

ALLOCATOR_WARNING = re.compile(
    rb"\[W\d{4} [\d:.]+ (?:\d+ )?CPUAllocator\.cpp:\d+\] Memory block of unknown size was allocated "
    rb"before the profiling started, profiler results will not include the deallocation event\r?\n"
)
_START = b"[W"


class Unwanted:
    """A filter between a stream's chunks and ``forward(text, data)``."""

    def __init__(
        self, forward: Callable[[str, bytes], None], pattern: re.Pattern[bytes] = ALLOCATOR_WARNING
    ) -> None:
        self.forward = forward
        self.pattern = pattern
        self.pending = b""  # the start of a line that may be an unwanted one
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        data = self.pending + data
        self.pending = b""
        kept: list[bytes] = []
        start = 0
        while start < len(data):
            end = data.find(b"\n", start)
            line = data[start:] if end < 0 else data[start : end + 1]
            if end < 0:
                if line.startswith(_START) or _START.startswith(line):
                    self.pending = line  # it may still be one
                else:
                    kept.append(line)
                break
            if line.startswith(_START) and self.pattern.fullmatch(line):
                self.dropped += 1
            else:
                kept.append(line)
            start = end + 1
        if kept:
            out = b"".join(kept)
            self.forward(self.decoder.decode(out), out)

    def end(self) -> None:
        """The stream ended: what waits is passed on."""
        rest, self.pending = self.pending, b""
        text = self.decoder.decode(rest, final=True)
        if rest or text:
            self.forward(text, rest)
