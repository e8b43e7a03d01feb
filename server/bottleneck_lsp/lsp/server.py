"""The server's state and what every feature shares: capabilities, messages, annotations
published and placed. The requests and commands are in ``features/``; ``serve.py`` builds
the server and runs it.

The server never runs user code in its own process: a profile command starts a job
(``bottleneck_lsp.job.job``), whose runner subprocesses run the script. Everything here is
async on the event loop and never blocks it.
"""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import shutil
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..schema.contract import PARTIAL_STATUSES
from ..schema.model import Document
from . import asking, notebook_cells, tracking
from .annotations import Annotation, build, canonical_uri, diagnostic, read_lines
from .arguments import strict_converter
from .notebook_cells import NotebookCells
from .protocol import BottleneckProtocol
from .state import State
from .warm import WarmForks

log = logging.getLogger(__name__)

PUBLISH_QUIET_S = 0.3  # after an edit, diagnostics are republished once typing pauses
# Notebooks synced as VS Code's Jupyter editor opens them: every cell (markdown too, so
# that a cell's place among them is its number in the .ipynb)
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[types.NotebookDocumentFilterWithNotebook(notebook="jupyter-notebook")]
)


class BottleneckServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "bottleneck-lsp",
            __version__,
            max_workers=4,
            protocol_cls=BottleneckProtocol,
            converter_factory=strict_converter,
            notebook_document_sync=NOTEBOOK_SYNC,
        )
        self.state = State()
        self.cells = NotebookCells()
        self._pending_publish: dict[str, asyncio.TimerHandle] = {}
        self._background: set[asyncio.Future[Any]] = set()
        self.warm = WarmForks(self.log)

    def in_background(self, work: Any) -> None:
        """Run a coroutine on the loop, held until it ends (a bare task may be collected)."""
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- capabilities ---------------------------------------------------------------------
    def _caps(self) -> types.ClientCapabilities:
        return self.client_capabilities

    @property
    def supports_progress(self) -> bool:
        window = self._caps().window
        return bool(window and window.work_done_progress)

    @property
    def supports_lens_refresh(self) -> bool:
        ws = self._caps().workspace
        return bool(ws and ws.code_lens and ws.code_lens.refresh_support)

    @property
    def supports_show_document(self) -> bool:
        window = self._caps().window
        return bool(window and window.show_document and window.show_document.support)

    # -- messages ---------------------------------------------------------------------------
    def log(self, text: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=text))

    def tell(self, text: str, kind: types.MessageType) -> None:
        self.window_show_message(types.ShowMessageParams(type=kind, message=text))
        self.log(text, kind)

    def refuse(self, message: str) -> dict[str, Any]:
        """A command's answer when it cannot do what it is asked: said to the user too."""
        self.tell(message, types.MessageType.Error)
        return {"status": "refused", "message": message}

    # -- annotations ------------------------------------------------------------------------
    def key_of(self, uri: str) -> str:
        """The key that the annotations of the client's document at ``uri`` are kept under
        (``state.annotations``): a file's URI as this server spells it; a notebook cell's
        (a client cell URI) its cell path's (``notebook_cells``)."""
        return self.cells.key_of(self.workspace, self.state.bases, uri)

    def publish(self, uri: str) -> None:
        """publishDiagnostics for one file or notebook cell (``uri``: its key), written as
        JSON text in one piece (``diagnostic``): thousands of diagnostics go out in one
        message. A cell's go to the client's cell URI; none while its notebook is closed."""
        target = self.cells.target_of(self.workspace, self.state.bases, uri)
        if target is None:
            return
        thresholds = self.state.settings.thresholds
        diagnostics = ",".join(
            [d for a in self.state.annotations.get(uri, []) if (d := diagnostic(a, thresholds)) is not None]
        )
        if target != uri:
            if "%23cell" in diagnostics:  # related lines in the notebook's cells
                diagnostics = notebook_cells.client_locations(
                    diagnostics, lambda key: self.cells.target_of(self.workspace, self.state.bases, key)
                )
            if diagnostics:
                self.cells.published[target] = uri
            else:
                self.cells.published.pop(target, None)
        self._send_diagnostics(target, diagnostics)

    def unpublish(self, cell_uri: str) -> None:
        """Diagnostics published to a client cell URI cleared (its cell closed, or its
        marks now shown on another cell)."""
        if self.cells.published.pop(cell_uri, None) is not None:
            self._send_diagnostics(cell_uri, "")

    def _send_diagnostics(self, uri: str, diagnostics: str) -> None:
        protocol: BottleneckProtocol = self.protocol  # type: ignore[assignment]
        protocol.send_json_text(
            f'{{"jsonrpc":"2.0","method":"{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}",'
            f'"params":{{"uri":{json.dumps(uri)},"diagnostics":[{diagnostics}]}}}}'
        )

    def place_notebook(self, notebook_uri: str) -> None:
        """An open notebook's marks placed on its cells as they are now (its cells matched
        with the keys again) and published; a cell that showed marks it no longer holds is
        cleared."""
        self.cells.forget(notebook_uri)
        path = uris.to_fs_path(notebook_uri)
        for key, items in list(self.state.annotations.items()):
            cell = notebook_cells.cell_of_key(key)
            if not items or cell is None or cell[0] != path:
                continue
            lines = self.open_lines(key)
            if lines is not None:
                self.state.annotations[key] = self.place(items, key, lines)
            self.publish(key)
        self._unpublish_moved()

    def _unpublish_moved(self) -> None:
        """Cells that show diagnostics of a key now shown on another cell (or on none)
        cleared."""
        for cell_uri, key in list(self.cells.published.items()):
            if self.cells.target_of(self.workspace, self.state.bases, key) != cell_uri:
                self.unpublish(cell_uri)

    def publish_soon(self, uri: str) -> None:
        """Publish after ``PUBLISH_QUIET_S`` without another edit to the file: typing moves
        annotations at once (lenses and hovers read them), but a file with thousands of
        marks is not republished at every keystroke."""
        pending = self._pending_publish.pop(uri, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        self._pending_publish[uri] = loop.call_later(PUBLISH_QUIET_S, self._publish_pending, uri)

    def _publish_pending(self, uri: str) -> None:
        self._pending_publish.pop(uri, None)
        self.publish(uri)

    async def refresh_lenses(self) -> None:
        if self.supports_lens_refresh:
            await asking.answer(
                self.workspace_code_lens_refresh_async(None), types.WORKSPACE_CODE_LENS_REFRESH, self.log
            )

    def cell_place(self, uri: str) -> dict[str, Any]:
        """For a notebook cell's key, where a client finds the cell: ``notebook`` (its file
        URI) and ``cell`` (1-based, its place in the editor when the notebook is open there);
        {} for any other URI."""
        place = self.cells.place_of(self.workspace, self.state.bases, uri)
        return {"notebook": place[0], "cell": place[1]} if place is not None else {}

    def open_lines(self, uri: str) -> list[str] | None:
        """The text of the document open at ``uri`` (any spelling of it; a cell key: its
        cell in the open notebook), or None."""
        documents = self.workspace.text_documents
        if notebook_cells.cell_of_key(uri) is not None:
            target = self.cells.target_of(self.workspace, self.state.bases, uri)
            cell = documents.get(unquote(target)) if target is not None else None
            return cell.source.splitlines() if cell is not None else None
        document = documents.get(uri)
        if document is None:
            document = next((d for key, d in documents.items() if canonical_uri(key) == uri), None)
        return document.source.splitlines() if document is not None else None

    def current_lines(self, uri: str) -> list[str] | None:
        """The file's text as the user sees it now: open in the editor, else on disk."""
        lines = self.open_lines(uri)
        return lines if lines is not None else _disk_lines(uri)

    def place(self, items: list[Annotation], uri: str, lines: list[str] | None) -> list[Annotation]:
        """``items`` (of any scripts' results, all in ``uri``) where their profiled lines
        stand in ``lines`` (tracking.place); unchanged when that text is not known."""
        if lines is None:
            return items
        by_script: dict[str, list[Annotation]] = {}
        for a in items:
            by_script.setdefault(a.script, []).append(a)
        out: list[Annotation] = []
        for script, group in by_script.items():
            out.extend(tracking.place(group, self.state.bases.get(script, {}).get(uri), lines))
        return out

    def replace_results(
        self, script: str, doc: Document | None, bases: dict[str, list[str] | None] | None = None
    ) -> list[Annotation]:
        """Drop the script's old annotations, add the new ones, publish what changed;
        returns the new ones.

        The cyclic garbage collector is paused meanwhile: building thousands of diagnostics
        allocates enough to trigger full collections, each of which walks every object the
        server holds (the result documents among them) and finds nothing to free."""
        enabled = gc.isenabled()
        gc.disable()
        try:
            return self._replace_results(script, doc, bases)
        finally:
            if enabled:
                gc.enable()

    def _replace_results(
        self, script: str, doc: Document | None, bases: dict[str, list[str] | None] | None
    ) -> list[Annotation]:
        state = self.state
        added: list[Annotation] = []
        touched = set()
        for uri, items in list(state.annotations.items()):
            kept = [a for a in items if a.script != script]
            if len(kept) != len(items):
                touched.add(uri)
                state.annotations[uri] = kept
        if doc is not None:
            state.results[script] = doc
            state.cleared.discard(script)
            if bases is not None:
                state.bases[script] = dict(bases)
            known = state.bases.setdefault(script, {})
            since, label = state.baselines.get(script), "baseline"
            if since is None:
                since, label = state.previous.get(script), "last run"
            if doc.status in PARTIAL_STATUSES:
                since = None  # part of a run: its figures are not comparable with a whole one
            by_uri: dict[str, list[Annotation]] = {}
            for a in build(doc, state.settings.thresholds, since, label):
                by_uri.setdefault(a.uri, []).append(a)
            first_seen = {uri for uri in by_uri if uri not in known}
            for uri in first_seen:  # a file first seen in this result: as it is now on disk
                cell = notebook_cells.cell_of_key(uri)
                if cell is None:
                    known[uri] = _disk_lines(uri)
                elif uri not in known:  # a notebook's: every cell, to match them with the editor's
                    known.update(
                        {k: v for k, v in notebook_cells.disk_bases(cell[0]).items() if k not in known}
                    )
            self.cells.forget()  # notebooks' cells matched with what this result profiled
            for uri, group in by_uri.items():
                current = self.open_lines(uri)
                if current is None:
                    current = known.get(uri) if uri in first_seen else _disk_lines(uri)  # read once
                placed = self.place(group, uri, current)
                added.extend(placed)
                state.annotations.setdefault(uri, []).extend(placed)
                touched.add(uri)
        for uri in sorted(touched):
            self.publish(uri)
            if not state.annotations.get(uri):
                state.annotations.pop(uri, None)
        self._unpublish_moved()
        return added

    def clear(self) -> int:
        self.state.cleared.update(self.state.results)  # a settings change does not bring them back
        uris_with = [u for u, items in self.state.annotations.items() if items]
        self.state.annotations.clear()
        for uri in uris_with:
            self.publish(uri)  # nothing left: an empty list
        return len(uris_with)

    # -- jobs -------------------------------------------------------------------------------
    def stop_all(self) -> None:
        for running in list(self.state.running.values()):
            running.job.stop()

    def kill_all(self) -> None:
        """Last resort: every runner process group and warm fork server killed."""
        for running in list(self.state.running.values()):
            running.job.kill()
        self.warm.kill()

    def remove_reports(self) -> None:
        """The full reports written for the client (``bottleneck.report``) go with the server."""
        if self.state.report_dir is not None:
            shutil.rmtree(self.state.report_dir, ignore_errors=True)
            self.state.report_dir = None


def _disk_lines(uri: str) -> list[str] | None:
    """A file URI's text on disk, or None."""
    path = uris.to_fs_path(uri)
    return read_lines(path) if path else None
