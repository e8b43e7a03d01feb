"""One profile job, run for the language server: what the job says as it runs (the
script's output, each pass's start and end, the hot lines after each pass) goes to the
client as log lines, progress and interim annotations; its result is then published and
summed up. The profile command (``features.profiling.profile``) starts it."""

from __future__ import annotations

import asyncio
import datetime
import os
import time
from typing import Any, Protocol

from lsprotocol import types
from pygls.progress import Progress

from ..analysis import ranking
from ..job.job import JobEvent
from ..schema.model import Document, PassStatus
from . import asking
from .annotations import Annotation
from .state import Running, State
from .summary import summary_line, top_line
from .warm import WarmForks

LOG_OUTPUT_LIMIT = 256 * 1024  # characters of script output streamed per job


class Host(Protocol):
    """What a job's run needs of the language server (``server.BottleneckServer``)."""

    state: State
    warm: WarmForks

    @property
    def work_done_progress(self) -> Progress: ...

    def log(self, text: str, kind: types.MessageType = types.MessageType.Log) -> None: ...

    def tell(self, text: str, kind: types.MessageType) -> None: ...

    def replace_results(
        self, script: str, doc: Document | None, bases: dict[str, list[str] | None] | None = None
    ) -> list[Annotation]: ...

    async def refresh_lenses(self) -> None: ...


async def run_job(ls: Host, script: str, running: Running) -> dict[str, Any]:
    """Run a profile job to its end: its passes' progress, output and interim hot lines
    to the client as they come, then its result published and summed up in one line."""
    return await _EditorRun(ls, script, running).run()


class _EditorRun:
    """One job's run as the editor sees it: ``on_event`` takes what the job says as it runs,
    ``run`` starts the progress, runs the job on a warm fork server and tells the result."""

    def __init__(self, ls: Host, script: str, running: Running) -> None:
        self.ls, self.script, self.running = ls, script, running
        self.job = running.job
        self.name = os.path.basename(script)
        self.token = running.token  # None: no progress (the client has none, or refused it)
        self.streamed = 0  # characters of the script's output sent to the log
        self.interim: list[asyncio.Future[None]] = []  # lens refreshes after a pass
        self.top_so_far = ""  # the passes so far's top line: kept in the next passes' progress
        self.ended = "cancelled"  # the progress's last message

    async def run(self) -> dict[str, Any]:
        self.job.on_event = self.on_event
        try:
            await self._begin_progress()
            doc = await self._run_job()
            if self.interim:
                await asyncio.gather(*self.interim)
            return await self._tell(doc)
        finally:
            if self.token is not None:
                self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=self.ended))
            if self.ls.state.running.get(self.script) is self.running:
                del self.ls.state.running[self.script]

    # -- what the job says as it runs --------------------------------------------------------
    def on_event(self, event: JobEvent) -> None:
        if event.kind == "pass_start" and event.forecast:
            self.ls.log(f"{self.name}: pass {event.pass_name}: {event.forecast}")
        if event.kind == "output" and event.text.strip():
            self._output(event)
        elif self.token is not None and event.kind == "pass_start":
            self._pass_started(event, self.token)
        elif event.kind == "pass_end":
            self._pass_ended(event)
        elif event.kind == "progress" and event.doc is not None:
            self._show_so_far(event.doc, f"{event.pass_name} pass running, {event.text}")

    def _output(self, event: JobEvent) -> None:
        """Stream the script's output to the client's log, up to a bound: a script printing
        megabytes must not flood the editor. The report keeps a tail."""
        if self.streamed >= LOG_OUTPUT_LIMIT:
            return
        text = event.text[: LOG_OUTPUT_LIMIT - self.streamed]
        self.streamed += len(event.text)
        self.ls.log(f"[{self.name}:{event.pass_name}] {text.rstrip()}")
        if self.streamed >= LOG_OUTPUT_LIMIT:
            self.ls.log(
                f"[{self.name}] output beyond {LOG_OUTPUT_LIMIT} characters "
                "is not streamed; the report keeps its last 64 KiB per pass"
            )

    def _pass_started(self, event: JobEvent, token: str) -> None:
        percent = int(100 * event.index / max(event.total, 1))
        ranks = self.job.spec.local_ranks() if self.job.spec.distributed else []
        on = f" on ranks {', '.join(map(str, ranks))}" if ranks else ""
        ahead = f" ({event.forecast})" if event.forecast else ""
        top = f"; top line so far {self.top_so_far}" if self.top_so_far else ""
        self.ls.work_done_progress.report(
            token,
            types.WorkDoneProgressReport(
                message=f"pass {event.index + 1}/{event.total}: {event.pass_name}{on}{ahead}{top}",
                percentage=percent,
            ),
        )

    def _pass_ended(self, event: JobEvent) -> None:
        self.ls.log(f"{self.name}: pass {event.pass_name} ended: {event.status}")
        done = event.doc.passes if event.doc is not None else []
        ended_part = next((p for p in reversed(done) if p.name == event.pass_name), None)
        for note in ended_part.notes if ended_part is not None else []:  # e.g. the event budget's
            self.ls.log(f"{self.name}: pass {event.pass_name}: note: {note}")
        if event.doc is None or event.index + 1 >= event.total or event.doc.status != PassStatus.OK:
            return
        # Progressive: the hot lines as the passes so far have them (the sample pass runs
        # first, at about the script's own speed); later passes refine them.
        self._show_so_far(
            event.doc, f"{event.index + 1} of {event.total} passes done", f"the {event.pass_name} pass"
        )

    def _show_so_far(self, doc: Document, so_far: str, after: str = "") -> None:
        """The hot lines as the run has them so far: after a pass, or as the one run's
        windows close (``after`` "": the progress says where the run is)."""
        added = self.ls.replace_results(self.script, doc, self.running.bases)
        self.top_so_far = top_line(added)
        self.ls.log(f"{self.name}: {len(added)} annotations after {after or so_far}")
        if self.token is not None:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=summary_line(doc, added, so_far))
            )
        self.interim.append(asyncio.ensure_future(self.ls.refresh_lenses()))

    # -- the run's phases -------------------------------------------------------------------
    async def _begin_progress(self) -> None:
        """The client's progress bar, cancellable (cancel stops the job); without it when the
        client does not answer in time: the profile goes on."""
        if self.token is None:
            return
        progress = self.ls.work_done_progress
        created = await asking.answer(
            progress.create_async(self.token), "window/workDoneProgress/create", self.ls.log
        )
        if created is None and self.token not in progress.tokens:
            self.token = None
            return
        progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=f"Profiling {self.name}",
                # how many run (one run, or one per pass, a GPU's) is known once the job starts
                message="starting",
                percentage=0,
                cancellable=True,
            ),
        )
        future = progress.tokens.get(self.token)
        if future is not None:
            future.add_done_callback(lambda f: self.job.stop() if f.cancelled() else None)

    async def _run_job(self) -> Document:
        """The job, its passes forked from the interpreter's warm fork server when wanted."""
        settings = self.ls.state.settings
        if not (settings.keep_warm and self.job.spec.fork):
            return await self.job.run()
        self.ls.warm.idle_s = settings.warm_idle_minutes * 60
        lease = await self.ls.warm.acquire(self.job.spec.python)
        self.job.use_forks(lease.server)
        try:
            return await self.job.run()
        finally:
            lease.release()

    async def _tell(self, doc: Document) -> dict[str, Any]:
        """The result published, and said: a summary line, a warning for skipped passes, the
        error of a failed one."""
        ls, runner_done = self.ls, time.perf_counter()
        runner_done_at = datetime.datetime.now().isoformat(sep=" ", timespec="microseconds")
        if doc.status == PassStatus.CANCELLED and all(p.status == PassStatus.SKIPPED for p in doc.passes):
            self.ended = f"{self.name}: cancelled before any pass ran; the results before it are kept"
            ls.log(self.ended)
            return {"status": doc.status, "exitCode": doc.exit_code, "summary": self.ended}
        ls.state.last_script = self.script
        added = ls.replace_results(self.script, doc, self.running.bases)
        ended = self.ended = summary_line(doc, added)
        ls.log(
            f"published {len(added)} annotations {1000 * (time.perf_counter() - runner_done):.1f} ms "
            f"after the job ended (runner exited, result read at {runner_done_at})"
        )
        await ls.refresh_lenses()
        skipped = [
            f"{p.name} pass skipped: {p.skip_reason}"
            for p in doc.passes
            if p.status == PassStatus.SKIPPED and doc.status == PassStatus.OK
        ]
        if skipped:
            ls.tell(f"{ended}; " + "; ".join(skipped), types.MessageType.Warning)
        elif doc.status in (PassStatus.OK, PassStatus.CANCELLED):  # stopped by the user: no error to tell
            ls.log(ended, types.MessageType.Info)
        else:
            failed = ranking.failed_pass(doc)
            error = failed.error if failed is not None else None
            detail = f": {error.type}: {error.message}" if error is not None else ""
            ls.tell(ended + detail, types.MessageType.Error)
        return {"status": doc.status, "exitCode": doc.exit_code, "summary": ended}
