"""``bottleneck.pinBaseline`` and ``bottleneck.clearBaseline``: what a script's later runs
are compared with, until cleared (else its previous run)."""

from __future__ import annotations

import os
from typing import Any

from pygls import uris

from ...job.spec import JobError
from ..server import BottleneckServer
from .targets import last_result, named_script, script_of

PIN = "bottleneck.pinBaseline"
UNPIN = "bottleneck.clearBaseline"


async def pin_baseline(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Pin a script's last result (the given script URI, or the last one profiled) as the
    baseline its later runs are compared with, until it is cleared."""
    try:
        script, doc = last_result(ls, args)
    except JobError as exc:
        return ls.refuse(str(exc))
    ls.state.baselines[script] = doc
    ls.replace_results(script, doc)
    await ls.refresh_lenses()
    ls.log(f"{os.path.basename(script)}: baseline pinned (the run of {doc.created or 'now'})")
    return {"pinned": uris.from_fs_path(script), "created": doc.created}


async def clear_baseline(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Clear the pinned baseline (of the given script URI or of the script whose hot lines
    are in that file, or of every script): lenses compare with the previous run again."""
    targets = list(ls.state.baselines)
    try:
        named = named_script(args)
    except JobError as exc:
        return ls.refuse(str(exc))
    if named is not None:
        targets = [script_of(ls, named)]
    cleared = [t for t in targets if ls.state.baselines.pop(t, None) is not None]
    for script in cleared:
        doc = ls.state.results.get(script)
        if doc is not None:
            ls.replace_results(script, doc)
    if cleared:
        await ls.refresh_lenses()
    return {"cleared": [uris.from_fs_path(t) for t in cleared]}


def register(server: BottleneckServer) -> None:
    server.command(PIN)(pin_baseline)
    server.command(UNPIN)(clear_baseline)
