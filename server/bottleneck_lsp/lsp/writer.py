"""Outgoing messages written from a thread of their own, never from the event loop.

pygls writes each stdio message to stdout and flushes it on the event loop. A pipe holds
64 KB: a publish of thousands of diagnostics (megabytes of JSON) then blocks the loop until
the client has read nearly all of it, and a slow client stalls every other request.
``QueuedWriter`` wraps pygls' writer: ``write`` only queues the bytes; one thread writes
them in order. A broken pipe is raised to the caller on its next write, as pygls expects.
"""

from __future__ import annotations

import atexit
import queue
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pygls.io_ import Writer

DRAIN_TIMEOUT_S = 10.0  # at exit: the longest wait for queued messages to be written


class QueuedWriter:
    def __init__(self, inner: Writer) -> None:
        self._inner = inner
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._error: BaseException | None = None
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="bottleneck-lsp-writer", daemon=True)
        self._thread.start()
        atexit.register(self.drain)

    def write(self, data: bytes) -> None:
        if self._error is not None:
            raise BrokenPipeError(f"the client's end is closed: {self._error}")
        if not self._closed:
            self._queue.put(data)

    def _run(self) -> None:
        while True:
            data = self._queue.get()
            if data is None:
                return
            try:
                self._inner.write(data)
            except (OSError, ValueError) as exc:  # broken pipe, or a closed stream
                self._error = exc
                return

    def drain(self, timeout: float = DRAIN_TIMEOUT_S) -> None:
        """Write out what is queued (waiting at most ``timeout`` seconds); later writes are
        dropped."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def close(self) -> None:
        self.drain()
        atexit.unregister(self.drain)
        try:
            self._inner.close()
        except (OSError, ValueError):
            pass
