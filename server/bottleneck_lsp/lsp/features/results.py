"""``bottleneck.clear`` (every annotation gone), ``bottleneck.report`` (the last run's full
text report, shown by the client) and ``bottleneck.openResult`` (a result made elsewhere,
placed on the files here)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from lsprotocol import types
from pygls import uris

from ...analysis import result
from ...formats import report
from ...job.spec import JobError
from ...paths import relocate
from .. import asking, reportdir
from ..arguments import OpenResultArguments
from ..jobspec import local_path
from ..server import BottleneckServer
from ..summary import summary_line
from .targets import last_result

CLEAR = "bottleneck.clear"
REPORT = "bottleneck.report"
OPEN = "bottleneck.openResult"


def clear(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Every annotation gone, until the next profile (arguments are ignored)."""
    return {"cleared": ls.clear()}


async def show_report(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """The last run's full text report (of the given script, or the last one profiled),
    written to a private file the client is asked to show."""
    try:
        _script, doc = last_result(ls, args)
    except JobError as exc:
        return ls.refuse(str(exc))
    # Off the event loop: a result with thousands of lines takes a second or more to render,
    # and lenses and hovers must not wait (the document is replaced, never changed, meanwhile).
    text = await asyncio.to_thread(report.render, doc, ls.state.settings.thresholds)
    if ls.state.report_dir is None:
        ls.state.report_dir = reportdir.make()
    path = os.path.join(ls.state.report_dir, os.path.basename(doc.script) + ".bottleneck.txt")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    uri = uris.from_fs_path(path)
    shown = False
    if ls.supports_show_document and uri:
        answer = await asking.answer(
            ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True)),
            f"window/showDocument for {path}",
            ls.log,
        )
        shown = bool(answer and answer.success)
    if not shown:  # a client that cannot open it (lsp-mode 8, a lens clicked): say where it is
        ls.tell(f"{os.path.basename(doc.script)}: the full report is in {path}", types.MessageType.Info)
    return {"uri": uri, "text": text}


def _open_and_place(path: str, folder: str) -> relocate.Relocated:
    doc = result.load_document(path)
    return relocate.relocate(doc, relocate.find_root(doc, folder))


async def open_result(ls: BottleneckServer, arguments: OpenResultArguments) -> dict[str, Any]:
    """Show a result made elsewhere (``bottleneck-lsp profile --json``, another machine) on
    the files here: each ranked line where its text still stands; the others are listed."""
    try:
        path = local_path(arguments.path)
        folder = local_path(arguments.root) if arguments.root else None
        if folder is None:
            folders = [uris.to_fs_path(f.uri) for f in ls.workspace.folders.values()]
            folder = next((f for f in folders if f), None) or ls.workspace.root_path
        if not folder or not os.path.isdir(folder):
            raise JobError(f"No folder to show {os.path.basename(path)} on: open a folder or give 'root'.")
        # Off the loop: a large result takes a second or more to read and check.
        placed = await asyncio.to_thread(_open_and_place, path, folder)
    except (JobError, result.ResultError) as exc:
        return ls.refuse(str(exc))
    doc = placed.doc
    script = doc.script
    if script in ls.state.results:
        ls.state.previous[script] = ls.state.results[script]
    ls.state.last_script = script
    added = ls.replace_results(script, doc)
    await ls.refresh_lenses()
    summary = f"{summary_line(doc, added)}; opened from {os.path.basename(path)}"
    if placed.skipped:
        listed = ", ".join(str(s) for s in placed.skipped[:5])
        more = f" and {len(placed.skipped) - 5} more" if len(placed.skipped) > 5 else ""
        ls.tell(
            f"{os.path.basename(path)}: {placed.shown} lines shown on {placed.root}, "
            f"{len(placed.skipped)} skipped: {listed}{more}",
            types.MessageType.Warning,
        )
    ls.log(summary)
    return {
        "script": uris.from_fs_path(script),
        "root": placed.root,
        "shown": placed.shown,
        "moved": placed.moved,
        "skipped": [
            {"path": s.path, "line": s.line, "text": s.text, "reason": s.reason} for s in placed.skipped
        ],
        "summary": summary,
    }


def register(server: BottleneckServer) -> None:
    server.command(CLEAR)(clear)
    server.command(REPORT)(show_report)
    server.command(OPEN)(open_result)
