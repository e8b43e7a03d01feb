"""``bottleneck.profile`` (a job for a script; a second one for a running script restarts
it) and ``bottleneck.stop``."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls import uris

from ...job.job import Job
from ...job.spec import JobError
from ...notebook.cell_paths import is_notebook
from ...notebook.document import notebook_cells as cells_on_disk
from ...schema.contract import PARTIAL_STATUSES
from .. import notebook_cells
from ..annotations import canonical_uri, read_lines
from ..arguments import ProfileArguments
from ..jobrun import run_job
from ..jobspec import job_spec
from ..server import BottleneckServer
from ..state import Running
from .targets import named_script

PROFILE = "bottleneck.profile"
STOP = "bottleneck.stop"


async def profile(ls: BottleneckServer, arguments: ProfileArguments) -> dict[str, Any]:
    """Profile a script. A second request for a script that is running restarts it."""
    try:
        spec = job_spec(ls.state.settings, ls.workspace, arguments)
        job = Job(spec)
    except JobError as exc:
        return ls.refuse(str(exc))
    script = job.spec.script
    _warn_unsaved(ls, script)
    if job.spec.module is not None:
        ls.log(f"{os.path.basename(script)}: runs as python -m {job.spec.module} (from {job.spec.cwd})")
    previous = ls.state.running.get(script)
    last = ls.state.results.get(script)
    if previous is None and last is not None and last.status not in PARTIAL_STATUSES:
        # What the lenses compare with ("-35% since last run"): a whole run (not one that
        # was stopped or timed out); a restart keeps the one from before the run it replaces.
        ls.state.previous[script] = last
    if previous is not None:
        ls.log(f"{os.path.basename(script)}: restarting the running profile")
        previous.job.stop()
        if previous.task is not None:
            await asyncio.wait({previous.task})
    running = Running(job=job, token=str(uuid.uuid4()) if ls.supports_progress else None)
    # What the runner profiles: the file on disk now (annotations are placed from it)
    uri = canonical_uri(uris.from_fs_path(script) or script)
    running.bases[uri] = read_lines(script)
    if is_notebook(script):
        running.bases.update(notebook_cells.disk_bases(script))
    ls.state.running[script] = running
    task = asyncio.ensure_future(run_job(ls, script, running))
    running.task = task
    return await asyncio.shield(task)


def _warn_unsaved(ls: BottleneckServer, script: str) -> None:
    """The runner profiles the file on disk; say so when the editor holds other text."""
    uri = uris.from_fs_path(script)
    if uri and is_notebook(script):
        edited = _notebook_edited(ls, uri, script)
    else:
        document = ls.workspace.text_documents.get(uri) if uri else None
        if document is None:
            return
        try:
            with open(script, encoding="utf-8", errors="replace", newline="") as handle:
                on_disk = handle.read()
        except OSError:
            return
        edited = on_disk.replace("\r\n", "\n") != document.source.replace("\r\n", "\n")
    if edited:
        ls.tell(
            f"{os.path.basename(script)} has unsaved edits: profiling the saved file on disk",
            types.MessageType.Warning,
        )


def _notebook_edited(ls: BottleneckServer, uri: str, path: str) -> bool:
    """The notebook is open in the client with cells other than those on disk."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    on_disk = cells_on_disk(path)
    if notebook is None or on_disk is None:
        return False
    documents = ls.workspace.text_documents
    shown = []
    for cell in notebook.cells:
        document = documents.get(unquote(cell.document))
        shown.append(tuple(document.source.splitlines()) if document is not None else ())
    return shown != list(on_disk)


async def stop(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Stop the job for a script URI, or every job when none is given (or null)."""
    targets = list(ls.state.running)
    try:
        named = named_script(args)
    except JobError as exc:
        return ls.refuse(str(exc))
    if named is not None:
        targets = [t for t in targets if t == named]
    tasks = []
    for script in targets:
        running = ls.state.running.get(script)
        if running is not None:
            running.job.stop()
            if running.task is not None:
                tasks.append(running.task)
    if tasks:
        await asyncio.wait(tasks)
    return {"stopped": [uris.from_fs_path(t) for t in targets]}


def register(server: BottleneckServer) -> None:
    server.command(PROFILE)(profile)
    server.command(STOP)(stop)
