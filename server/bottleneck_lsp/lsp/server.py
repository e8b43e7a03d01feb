"""The pygls server: state on ``BottleneckServer``; features and commands below.

The server never runs user code in its own process: a profile command starts a job
(``bottleneck_lsp.job.job``), whose runner subprocesses run the script. Everything here is
async on the event loop and never blocks it.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import json
import logging
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..analysis import result
from ..formats import report
from ..job.job import Job
from ..job.spec import JobError
from ..paths import relocate
from ..schema.contract import PARTIAL_STATUSES
from ..schema.model import Document
from ..settings import merge
from . import annotations as notes
from . import asking, auth, reportdir, tracking, transport
from .arguments import OpenResultArguments, ProfileArguments, strict
from .jobrun import run_job
from .jobspec import job_spec, local_path, script_path
from .protocol import BottleneckProtocol
from .state import Running, State
from .summary import summary_line
from .warm import WarmForks

log = logging.getLogger(__name__)

PROFILE = "bottleneck.profile"
STOP = "bottleneck.stop"
CLEAR = "bottleneck.clear"
REPORT = "bottleneck.report"
PIN = "bottleneck.pinBaseline"
UNPIN = "bottleneck.clearBaseline"
OPEN = "bottleneck.openResult"
COMMANDS = [PROFILE, STOP, CLEAR, REPORT, PIN, UNPIN, OPEN]
PUBLISH_QUIET_S = 0.3  # after an edit, diagnostics are republished once typing pauses
# The settings warm fork servers depend on (their change ends them), by name and field
WARM_SETTINGS = {"python": "python", "keepWarm": "keep_warm", "fork": "fork"}
MAX_LENSES = 500  # per file, the loudest lines: more would bury the code (all are in hovers)


class BottleneckServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "bottleneck-lsp",
            __version__,
            max_workers=4,
            protocol_cls=BottleneckProtocol,
        )
        self.state = State()
        self._pending_publish: dict[str, asyncio.TimerHandle] = {}
        self._background: set[asyncio.Future[Any]] = set()
        self.warm = WarmForks(self.log)
        strict(self.protocol._converter)

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

    # -- annotations ------------------------------------------------------------------------
    def publish(self, uri: str) -> None:
        """publishDiagnostics for one file, written as JSON text in one piece
        (``annotations.diagnostic``): thousands of diagnostics go out in one message."""
        thresholds = self.state.settings.thresholds
        diagnostics = ",".join(
            [
                d
                for a in self.state.annotations.get(uri, [])
                if (d := notes.diagnostic(a, thresholds)) is not None
            ]
        )
        protocol: BottleneckProtocol = self.protocol  # type: ignore[assignment]
        protocol.send_json_text(
            f'{{"jsonrpc":"2.0","method":"{types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS}",'
            f'"params":{{"uri":{json.dumps(uri)},"diagnostics":[{diagnostics}]}}}}'
        )

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
                self.workspace_code_lens_refresh_async(None), "workspace/codeLens/refresh", self.log
            )

    def open_lines(self, uri: str) -> list[str] | None:
        """The text of the document open at ``uri`` (any spelling of it), or None."""
        documents = self.workspace.text_documents
        document = documents.get(uri)
        if document is None:
            document = next((d for key, d in documents.items() if notes.canonical_uri(key) == uri), None)
        return document.source.splitlines() if document is not None else None

    def current_lines(self, uri: str) -> list[str] | None:
        """The file's text as the user sees it now: open in the editor, else on disk."""
        lines = self.open_lines(uri)
        return lines if lines is not None else _disk_lines(uri)

    def place(
        self, items: list[notes.Annotation], uri: str, lines: list[str] | None
    ) -> list[notes.Annotation]:
        """``items`` (of any scripts' results, all in ``uri``) where their profiled lines
        stand in ``lines`` (tracking.place); unchanged when that text is not known."""
        if lines is None:
            return items
        by_script: dict[str, list[notes.Annotation]] = {}
        for a in items:
            by_script.setdefault(a.script, []).append(a)
        out: list[notes.Annotation] = []
        for script, group in by_script.items():
            out.extend(tracking.place(group, self.state.bases.get(script, {}).get(uri), lines))
        return out

    def replace_results(
        self, script: str, doc: Document | None, bases: dict[str, list[str] | None] | None = None
    ) -> list[notes.Annotation]:
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
    ) -> list[notes.Annotation]:
        state = self.state
        added: list[notes.Annotation] = []
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
            by_uri: dict[str, list[notes.Annotation]] = {}
            for a in notes.build(doc, state.settings.thresholds, since, label):
                by_uri.setdefault(a.uri, []).append(a)
            for uri, group in by_uri.items():
                current = self.open_lines(uri)
                if uri not in known:  # a file first seen in this result: as it is now on disk
                    known[uri] = _disk_lines(uri)
                    current = current if current is not None else known[uri]  # read once
                elif current is None:
                    current = _disk_lines(uri)
                placed = self.place(group, uri, current)
                added.extend(placed)
                state.annotations.setdefault(uri, []).extend(placed)
                touched.add(uri)
        for uri in sorted(touched):
            self.publish(uri)
            if not state.annotations.get(uri):
                state.annotations.pop(uri, None)
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


server = BottleneckServer()


def _disk_lines(uri: str) -> list[str] | None:
    """A file URI's text on disk, or None."""
    path = uris.to_fs_path(uri)
    return notes.read_lines(path) if path else None


def _fail(ls: BottleneckServer, message: str) -> dict[str, Any]:
    ls.tell(message, types.MessageType.Error)
    return {"status": "refused", "message": message}


@server.command(PROFILE)
async def profile(ls: BottleneckServer, arguments: ProfileArguments) -> dict[str, Any]:
    """Profile a script. A second request for a script that is running restarts it."""
    try:
        spec = job_spec(ls.state.settings, ls.workspace, arguments)
        job = Job(spec)
    except JobError as exc:
        return _fail(ls, str(exc))
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
    running.bases[notes.canonical_uri(uris.from_fs_path(script) or script)] = notes.read_lines(script)
    ls.state.running[script] = running
    task = asyncio.ensure_future(run_job(ls, script, running))
    running.task = task
    return await asyncio.shield(task)


def _warn_unsaved(ls: BottleneckServer, script: str) -> None:
    """The runner profiles the file on disk; say so when the editor holds other text."""
    uri = uris.from_fs_path(script)
    document = ls.workspace.text_documents.get(uri) if uri else None
    if document is None:
        return
    try:
        with open(script, encoding="utf-8", errors="replace", newline="") as handle:
            on_disk = handle.read()
    except OSError:
        return
    if on_disk.replace("\r\n", "\n") != document.source.replace("\r\n", "\n"):
        ls.tell(
            f"{os.path.basename(script)} has unsaved edits: profiling the saved file on disk",
            types.MessageType.Warning,
        )


@server.command(STOP)
async def stop(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Stop the job for a script URI, or every job when none is given (or null)."""
    targets = list(ls.state.running)
    if args and args[0] is not None:
        try:
            path = script_path(args[0])
        except JobError as exc:
            return _fail(ls, str(exc))
        targets = [t for t in targets if t == path]
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


@server.command(CLEAR)
def clear(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    return {"cleared": ls.clear()}


def _script_of(ls: BottleneckServer, path: str) -> str:
    """The profiled script a file stands for: itself when it has a result, else the script
    whose hot lines are in it (a helper module; the last one profiled first), else itself."""
    if path in ls.state.results:
        return path
    uri = uris.from_fs_path(path)
    holders = [s for s, files in ls.state.bases.items() if uri in files and s in ls.state.results]
    if ls.state.last_script in holders:
        return ls.state.last_script
    return holders[0] if holders else path


def _last_result(ls: BottleneckServer, args: tuple[Any, ...]) -> tuple[str, Document]:
    """The script a command names (its URI argument, or the file of the user's own code it
    annotated; else the last one profiled) and its last result; JobError says what is missing."""
    script = _script_of(ls, script_path(args[0])) if args and args[0] is not None else ls.state.last_script
    doc = ls.state.results.get(script) if script else None
    if script is None or doc is None:
        raise JobError("No profile yet: run bottleneck.profile on a script first.")
    return script, doc


@server.command(PIN)
async def pin_baseline(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Pin a script's last result (the given script URI, or the last one profiled) as the
    baseline its later runs are compared with, until it is cleared."""
    try:
        script, doc = _last_result(ls, args)
    except JobError as exc:
        return _fail(ls, str(exc))
    ls.state.baselines[script] = doc
    ls.replace_results(script, doc)
    await ls.refresh_lenses()
    ls.log(f"{os.path.basename(script)}: baseline pinned (the run of {doc.created or 'now'})")
    return {"pinned": uris.from_fs_path(script), "created": doc.created}


@server.command(UNPIN)
async def clear_baseline(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """Clear the pinned baseline (of the given script URI or of the script whose hot lines
    are in that file, or of every script): lenses compare with the previous run again."""
    targets = list(ls.state.baselines)
    if args and args[0] is not None:
        try:
            targets = [_script_of(ls, script_path(args[0]))]
        except JobError as exc:
            return _fail(ls, str(exc))
    cleared = [t for t in targets if ls.state.baselines.pop(t, None) is not None]
    for script in cleared:
        doc = ls.state.results.get(script)
        if doc is not None:
            ls.replace_results(script, doc)
    if cleared:
        await ls.refresh_lenses()
    return {"cleared": [uris.from_fs_path(t) for t in cleared]}


def _open_and_place(path: str, folder: str) -> relocate.Relocated:
    doc = result.load_document(path)
    return relocate.relocate(doc, relocate.find_root(doc, folder))


@server.command(OPEN)
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
        return _fail(ls, str(exc))
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


@server.command(REPORT)
async def show_report(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """The last run's full text report (of the given script, or the last one profiled),
    written to a private file the client is asked to show."""
    try:
        _script, doc = _last_result(ls, args)
    except JobError as exc:
        return _fail(ls, str(exc))
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


# -- document features ---------------------------------------------------------------------
@server.feature(types.INITIALIZE)
def initialize(ls: BottleneckServer, params: types.InitializeParams) -> None:
    ls.state.settings = merge(ls.state.settings, params.initialization_options)


@server.feature(types.INITIALIZED)
def initialized(ls: BottleneckServer, params: types.InitializedParams) -> None:
    for path in reportdir.sweep_stale():
        ls.log(f"removed {path}: the folder of reports of a server that was killed")
    settings = ls.state.settings
    if settings.problems:
        ls.tell("bottleneck settings: " + "; ".join(settings.problems), types.MessageType.Warning)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: BottleneckServer, params: types.DidChangeConfigurationParams) -> None:
    before = ls.state.settings
    ls.state.settings = after = merge(ls.state.settings, params.settings)
    # Warm fork servers depend on the interpreter and on being wanted; the other settings
    # (what a job records, how hot lines show) reach each pass as its own options.
    changed = [
        name for name, field in WARM_SETTINGS.items() if getattr(after, field) != getattr(before, field)
    ]
    if changed:
        ls.warm.retire(f"the settings changed ({', '.join(changed)})")
    elif after.warm_idle_minutes != before.warm_idle_minutes:
        ls.warm.idle_for(after.warm_idle_minutes * 60)
    if ls.state.settings.problems:
        ls.tell("bottleneck settings: " + "; ".join(ls.state.settings.problems), types.MessageType.Warning)
    for script, doc in list(ls.state.results.items()):
        if script not in ls.state.cleared:
            ls.replace_results(script, doc)
    ls.in_background(ls.refresh_lenses())  # lenses follow codeLens, top, minShare...


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: BottleneckServer, params: types.DidOpenTextDocumentParams) -> None:
    """Place annotations in the opened text; publish only when some exist."""
    _place_again(ls, params.text_document.uri, params.text_document.text.splitlines())


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: BottleneckServer, params: types.DidCloseTextDocumentParams) -> None:
    """Closed: the file is what is on disk again (unsaved edits discarded, or saved)."""
    uri = notes.canonical_uri(params.text_document.uri)
    path = uris.to_fs_path(uri)
    _place_again(ls, uri, notes.read_lines(path) if path else None)


def _place_again(ls: BottleneckServer, uri: str, lines: list[str] | None) -> None:
    uri = notes.canonical_uri(uri)
    items = ls.state.annotations.get(uri)
    if not items or lines is None:
        return  # never publish an empty list here: it would wipe other sources' results
    ls.state.annotations[uri] = ls.place(items, uri, lines)
    ls.publish(uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: BottleneckServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = notes.canonical_uri(params.text_document.uri)
    items = ls.state.annotations.get(uri)
    if not items:
        return
    document = ls.workspace.get_text_document(params.text_document.uri)
    lines = document.source.splitlines()
    if len(params.content_changes) == 1:
        items = tracking.apply_change(items, params.content_changes[0], lines)
    else:
        # Several changes at once (multi-cursor edits, a rename): each one's range is of the
        # text between the changes, which is gone; place from the profiled text instead.
        items = ls.place(items, uri, lines)
    ls.state.annotations[uri] = items
    ls.publish_soon(uri)


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: BottleneckServer, params: types.CodeLensParams) -> list[types.CodeLens] | None:
    if not ls.state.settings.code_lens:
        return None
    items = ls.state.annotations.get(notes.canonical_uri(params.text_document.uri), [])
    lenses = []
    for a in items:  # loudest first (annotations.build keeps the ranking's order)
        lens = notes.code_lens(a)
        if lens is not None:
            lenses.append(lens)
            if len(lenses) == MAX_LENSES:
                break
    return lenses


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: BottleneckServer, params: types.HoverParams) -> types.Hover | None:
    line = params.position.line
    uri = notes.canonical_uri(params.text_document.uri)
    items = [a for a in ls.state.annotations.get(uri, []) if a.line == line]
    if not items:
        return None
    doc = ls.state.results.get(items[0].script)
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=notes.hover(items, doc)),
        range=types.Range(types.Position(line, 0), types.Position(line + 1, 0)),
    )


@server.feature(types.SHUTDOWN)
async def shutdown(ls: BottleneckServer, params: None) -> None:
    tasks = [r.task for r in ls.state.running.values() if r.task is not None]
    ls.stop_all()
    if tasks:
        await asyncio.wait(tasks, timeout=10)
    await ls.warm.close()
    _remove_reports(ls)


def _remove_reports(ls: BottleneckServer) -> None:
    """The full reports written for the client (``show_report``) go with the server."""
    if ls.state.report_dir is not None:
        shutil.rmtree(ls.state.report_dir, ignore_errors=True)
        ls.state.report_dir = None


def _kill_leftovers() -> None:
    """Last resort at interpreter exit: no runner process group outlives the server, and
    no private folder of the server's stays behind."""
    for running in list(server.state.running.values()):
        running.job.kill()
    server.warm.kill()
    _remove_reports(server)


def _terminate(*_: object) -> None:
    """SIGTERM before the TCP/socket loop takes it, and over stdio: runners killed, then out.

    Not ``sys.exit``: over stdio pygls's shutdown joins the thread blocked reading stdin, which
    an editor that signals the server may keep open, so the server would never exit."""
    _kill_leftovers()
    os._exit(0)


def serve(
    tcp: str | None,
    log_level: str = "WARNING",
    socket_path: str | None = None,
    token_file: str | None = None,
    no_auth: bool = False,
) -> int:
    """Serve over stdio (the default), a TCP port or a Unix socket (see ``transport``)."""
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, log_level.upper(), logging.WARNING))
    logging.getLogger("pygls").setLevel(logging.WARNING)
    atexit.register(_kill_leftovers)
    signal.signal(signal.SIGTERM, _terminate)
    if tcp is None and socket_path is None:
        server.start_io()
        return 0
    written: list[Path] = []
    try:
        serving = transport.serve_socket(server.protocol, tcp, socket_path, token_file, no_auth, written)
        return asyncio.run(serving)
    except (auth.TokenError, OSError, ValueError) as exc:
        print(f"bottleneck-lsp: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        for path in written:
            transport.remove_quietly(path)
        server.shutdown()  # type: ignore[no-untyped-call]
