"""The one run's progress: what the runner measured so far, shown as the run goes.

Each time a window of the one run closes (at most once a second), the runner replaces its
progress file (``schema.contract.progress_file``) with the sample pass's part so far and its
windowed part (``runner/samplepass.py``). ``watch`` looks for a new one every
``POLL_S`` while the run lasts, reads it off the event loop, and hands the document so far
(the passes before, and these) to the job's events: the server annotates the hot lines, the
command line names the top one. A file caught half written or of another shape is skipped:
the next one, or the end's results, follow.

Host side: schema types only.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from dataclasses import replace

from ..analysis import ranking
from ..schema.model import Document, ModelError, RunnerPart
from . import one_run

POLL_S = 0.5


def so_far(doc: Document, part: RunnerPart) -> Document:
    """The document as the run has it now: ``doc``'s passes, then the sample pass's part so
    far and what its windows recorded so far, ranked."""
    sample = part.as_pass()
    passes = [*doc.passes, sample]
    if part.windowed is not None:
        passes += one_run.placed(part.windowed, sample)
    return ranking.conclude(replace(doc, passes=passes))


def _read(path: str, seen: int) -> tuple[int, RunnerPart | None]:
    """The progress file's part, when it changed since ``seen`` (its modification time)."""
    try:
        changed = os.stat(path).st_mtime_ns
        if changed == seen:
            return seen, None
        with open(path, encoding="utf-8") as handle:
            return changed, RunnerPart.from_json(json.load(handle))
    except (OSError, ValueError, ModelError):
        return seen, None


async def watch(path: str, doc: Document, emit: Callable[[Document, int], None]) -> None:
    """Until cancelled: each new progress file, as the document so far and how many windows
    it has (``emit``)."""
    seen = 0
    while True:
        await asyncio.sleep(POLL_S)
        seen, part = await asyncio.to_thread(_read, path, seen)
        if part is None:
            continue
        windows = part.windowed.windows if part.windowed is not None else None
        now = await asyncio.to_thread(so_far, doc, part)
        emit(now, windows.count if windows is not None else 0)
