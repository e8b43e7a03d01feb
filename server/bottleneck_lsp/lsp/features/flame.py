"""``bottleneck.flame``: the last run's sampled stacks, folded, for a client's flame graph
(VS Code's flame graph view): each frame with its label (``train.py:42`` and its function for
the user's, the function for a library's), the URI of the user's files, and the stacks with
their time."""

from __future__ import annotations

import os
from typing import Any

from pygls import uris

from ...analysis.compare import relative
from ...job.spec import JobError
from ...schema.model import Document, Flame, PassName
from ..server import BottleneckServer
from .targets import last_result

FLAME = "bottleneck.flame"


def _flame(doc: Document) -> Flame | None:
    part = doc.pass_named(PassName.SAMPLE)
    samples = part.samples if part is not None else None
    return samples.flame if samples is not None else None


def frames(ls: BottleneckServer, doc: Document, flame: Flame) -> list[dict[str, Any]]:
    out = []
    for frame in flame.frames:
        short = relative(doc, frame.file)
        uri = (uris.from_fs_path(frame.file) or "") if frame.user and os.path.isabs(frame.file) else ""
        out.append(
            ls.cell_place(uri)
            | {
                "label": f"{short}:{frame.line} {frame.function}" if frame.user else frame.function,
                "file": short,
                "line": frame.line,
                "function": frame.function,
                "user": frame.user,
                "uri": uri,
            }
        )
    return out


def flame(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """The folded stacks of a script's last result (the given script URI, or the script
    whose hot lines are in that file, else the last one profiled)."""
    try:
        script, doc = last_result(ls, args)
    except JobError as exc:
        return {"script": None, "message": str(exc)}
    folded = _flame(doc)
    name = os.path.basename(script)
    if folded is None or not folded.stacks:
        why = (
            "the result has no sampled stacks (no sample pass, or made before schema version 4)"
            if folded is None
            else "no look of the sampler saw your code"
        )
        return {
            "script": uris.from_fs_path(script),
            "name": name,
            "message": f"{name}: no stacks to draw: {why}.",
        }
    return {
        "script": uris.from_fs_path(script),
        "name": name,
        "frames": frames(ls, doc, folded),
        "stacks": [{"frames": s.frames, "time_s": s.time_s} for s in folded.stacks],
        "total_s": round(sum(s.time_s for s in folded.stacks), 6),
        "dropped_s": folded.dropped_s,
    }


def register(server: BottleneckServer) -> None:
    server.command(FLAME)(flame)
