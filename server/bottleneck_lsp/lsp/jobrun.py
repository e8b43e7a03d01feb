"""One profile job, run for the language server: what the job says as it runs (the
script's output, each pass's start and end, the hot lines after each pass) goes to the
client as log lines, progress and interim annotations; its result is then published and
summed up. The server's command handler (``server.profile``) starts it."""

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
from ..schema.contract import PASSES
from ..schema.model import Document
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
    job = running.job
    token = running.token
    planned = list(job.spec.passes or PASSES)

    streamed = 0
    interim: list[asyncio.Future[None]] = []
    top_so_far = ""  # the passes so far's top line: kept in the next passes' progress

    def on_event(event: JobEvent) -> None:
        nonlocal streamed, top_so_far
        if event.kind == "pass_start" and event.forecast:
            ls.log(f"{os.path.basename(script)}: pass {event.pass_name}: {event.forecast}")
        if event.kind == "output" and event.text.strip():
            # Stream the script's output to the client's log, up to a bound: a script
            # printing megabytes must not flood the editor. The report keeps a tail.
            if streamed < LOG_OUTPUT_LIMIT:
                text = event.text[: LOG_OUTPUT_LIMIT - streamed]
                streamed += len(event.text)
                ls.log(f"[{os.path.basename(script)}:{event.pass_name}] {text.rstrip()}")
                if streamed >= LOG_OUTPUT_LIMIT:
                    ls.log(
                        f"[{os.path.basename(script)}] output beyond {LOG_OUTPUT_LIMIT} characters "
                        "is not streamed; the report keeps its last 64 KiB per pass"
                    )
        elif token is not None and event.kind == "pass_start":
            percent = int(100 * event.index / max(event.total, 1))
            ranks = job.spec.local_ranks() if job.spec.distributed else []
            on = f" on ranks {', '.join(map(str, ranks))}" if ranks else ""
            ahead = f" ({event.forecast})" if event.forecast else ""
            top = f"; top line so far {top_so_far}" if top_so_far else ""
            ls.work_done_progress.report(
                token,
                types.WorkDoneProgressReport(
                    message=f"pass {event.index + 1}/{event.total}: {event.pass_name}{on}{ahead}{top}",
                    percentage=percent,
                ),
            )
        elif event.kind == "pass_end":
            ls.log(f"{os.path.basename(script)}: pass {event.pass_name} ended: {event.status}")
            done = event.doc.passes if event.doc is not None else []
            ended_part = next((p for p in reversed(done) if p.name == event.pass_name), None)
            for note in ended_part.notes if ended_part is not None else []:  # e.g. the event budget's
                ls.log(f"{os.path.basename(script)}: pass {event.pass_name}: note: {note}")
            if event.doc is not None and event.index + 1 < event.total and event.doc.status == "ok":
                # Progressive: the hot lines as the passes so far have them (the sample pass
                # runs first, at about the script's own speed); later passes refine them.
                added = ls.replace_results(script, event.doc, running.bases)
                top_so_far = top_line(added)
                ls.log(
                    f"{os.path.basename(script)}: {len(added)} annotations after the {event.pass_name} pass"
                )
                if token is not None:
                    so_far = f"{event.index + 1} of {event.total} passes done"
                    ls.work_done_progress.report(
                        token, types.WorkDoneProgressReport(message=summary_line(event.doc, added, so_far))
                    )
                interim.append(asyncio.ensure_future(ls.refresh_lenses()))

    job.on_event = on_event
    ended = "cancelled"
    try:
        if token is not None:
            created = await asking.answer(
                ls.work_done_progress.create_async(token), "window/workDoneProgress/create", ls.log
            )
            if created is None and token not in ls.work_done_progress.tokens:
                token = None  # the profile goes on, without progress
        if token is not None:
            ls.work_done_progress.begin(
                token,
                types.WorkDoneProgressBegin(
                    title=f"Profiling {os.path.basename(script)}",
                    # how many run is known once the fork server says whether there is a GPU
                    message=f"{len(planned)} passes" if job.spec.passes is not None else "starting",
                    percentage=0,
                    cancellable=True,
                ),
            )
            future = ls.work_done_progress.tokens.get(token)
            if future is not None:
                future.add_done_callback(lambda f: job.stop() if f.cancelled() else None)
        keep_warm = ls.state.settings.keep_warm and job.spec.fork
        lease = None
        if keep_warm:
            ls.warm.idle_s = ls.state.settings.warm_idle_minutes * 60
            lease = await ls.warm.acquire(job.spec.python)
            job.use_forks(lease.server)
        try:
            doc = await job.run()
        finally:
            if lease is not None:
                lease.release()
        if interim:
            await asyncio.gather(*interim)
        runner_done = time.perf_counter()
        runner_done_at = datetime.datetime.now().isoformat(sep=" ", timespec="microseconds")
        if doc.status == "cancelled" and all(p.status == "skipped" for p in doc.passes):
            ended = (
                f"{os.path.basename(script)}: cancelled before any pass ran; the results before it are kept"
            )
            ls.log(ended)
            return {"status": doc.status, "exitCode": doc.exit_code, "summary": ended}
        ls.state.last_script = script
        added = ls.replace_results(script, doc, running.bases)
        ended = summary_line(doc, added)
        ls.log(
            f"published {len(added)} annotations {1000 * (time.perf_counter() - runner_done):.1f} ms "
            f"after the job ended (runner exited, result read at {runner_done_at})"
        )
        await ls.refresh_lenses()
        kind = types.MessageType.Info if doc.status == "ok" else types.MessageType.Error
        skipped = [
            f"{p.name} pass skipped: {p.skip_reason}"
            for p in doc.passes
            if p.status == "skipped" and doc.status == "ok"
        ]
        if skipped:
            ls.tell(f"{ended}; " + "; ".join(skipped), types.MessageType.Warning)
        elif doc.status in ("ok", "cancelled"):  # stopped by the user: no error to tell
            ls.log(ended, types.MessageType.Info)
        else:
            failed = ranking.failed_pass(doc)
            error = failed.error if failed is not None else None
            detail = f": {error.type}: {error.message}" if error is not None else ""
            ls.tell(ended + detail, kind)
        return {"status": doc.status, "exitCode": doc.exit_code, "summary": ended}
    finally:
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=ended))
        if ls.state.running.get(script) is running:
            del ls.state.running[script]
