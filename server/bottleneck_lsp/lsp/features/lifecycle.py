"""initialize (the settings from initializationOptions), initialized, the settings changed
(workspace/didChangeConfiguration), shutdown (jobs stopped, warm fork servers ended)."""

from __future__ import annotations

import asyncio

from lsprotocol import types

from ...settings import declared, merge
from .. import reportdir
from ..server import BottleneckServer

# The settings warm fork servers depend on (their change ends them)
WARM_FIELDS = ("python", "keep_warm", "fork")


def initialize(ls: BottleneckServer, params: types.InitializeParams) -> None:
    ls.state.settings = merge(ls.state.settings, params.initialization_options)


def initialized(ls: BottleneckServer, params: types.InitializedParams) -> None:
    for path in reportdir.sweep_stale():
        ls.log(f"removed {path}: the folder of reports of a server that was killed")
    settings = ls.state.settings
    if settings.problems:
        ls.tell("bottleneck settings: " + "; ".join(settings.problems), types.MessageType.Warning)


def did_change_configuration(ls: BottleneckServer, params: types.DidChangeConfigurationParams) -> None:
    before = ls.state.settings
    ls.state.settings = after = merge(ls.state.settings, params.settings)
    # Warm fork servers depend on the interpreter and on being wanted; the other settings
    # (what a job records, how hot lines show) reach each pass as its own options.
    keys = declared()
    changed = [keys[field].key for field in WARM_FIELDS if getattr(after, field) != getattr(before, field)]
    if changed:
        ls.warm.retire(f"the settings changed ({', '.join(changed)})")
    elif after.warm_idle_minutes != before.warm_idle_minutes:
        ls.warm.idle_for(after.warm_idle_minutes * 60)
    if ls.state.settings.problems:
        ls.tell("bottleneck settings: " + "; ".join(ls.state.settings.problems), types.MessageType.Warning)
    for script, doc in list(ls.state.results.items()):
        if script not in ls.state.cleared:
            ls.replace_results(script, doc)
    ls.in_background(ls.refresh_lenses())  # lenses follow the settings (shown or not, thresholds)


async def shutdown(ls: BottleneckServer, params: None) -> None:
    tasks = [r.task for r in ls.state.running.values() if r.task is not None]
    ls.stop_all()
    if tasks:
        await asyncio.wait(tasks, timeout=10)
    await ls.warm.close()
    ls.remove_reports()


def register(server: BottleneckServer) -> None:
    server.feature(types.INITIALIZE)(initialize)
    server.feature(types.INITIALIZED)(initialized)
    server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)(did_change_configuration)
    server.feature(types.SHUTDOWN)(shutdown)
