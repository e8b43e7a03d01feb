"""Running a profiling job: the plan of passes, one runner subprocess each, in the user's
interpreter; the result document assembled as they end.

Shared by the command line and the language server. ``Job.run`` reads as plan (which
passes, which are skipped and why), run (``process.RunnerProcess``: one process's life),
collect (the document, concluded after each pass for progressive presentation).
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from . import __version__, analysis
from .contract import (
    DEVICE_PASSES,
    MEMORY,
    PASSES,
    RAW_PASSES,
    SCHEMA_NAME,
    SCHEMA_VERSION,
    STOPPING_STATUSES,
    TORCHLESS_PASSES,
    RunnerArgs,
    no_cuda_reason,
    unknown_passes,
)
from .forks import ForkServer, ForkServerError, environ, runner_folder
from .model import Document, Environment, ModelError, Pass, ScriptError, Tool
from .process import RunnerProcess, kill_group


class JobError(Exception):
    """The job cannot start: a clear message for the user, nothing was run."""


@dataclass(frozen=True)
class JobSpec:
    script: str
    args: tuple[str, ...] = ()
    python: str = sys.executable
    cwd: str | None = None
    roots: tuple[str, ...] = ()
    passes: tuple[str, ...] | None = None  # None: sample, cprofile, cpu, and cuda when available
    timeout: float | None = None  # per pass, seconds
    exact_lines: bool = True
    event_budget: int = 250_000  # torch calls recorded per autograd pass; 0: no bound
    fork: bool = True  # fork every pass from one fork server: start-up paid once (forks.py)
    prestart: bool = True  # without a fork server: start the pass after cprofile while cprofile runs
    save_raw: str | None = None  # a folder: each profiler pass writes its raw recording there (RAW_PASSES)
    # the autograd passes record allocations (memory per line); with ``passes`` given, it is
    # whether they name "memory"
    memory: bool = True


@dataclass
class JobEvent:
    kind: str  # "pass_start" | "pass_end" | "output"
    pass_name: str = ""
    index: int = 0
    total: int = 0
    status: str = ""
    stream: str = ""
    text: str = ""
    # pass_end: the result so far (the passes that ended, their ranking), for progressive
    # presentation; the final document comes from run().
    doc: Document | None = None


def _resolve_python(python: str) -> str:
    found = shutil.which(python) if os.sep not in python else python
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        raise JobError(f"Python interpreter not found or not executable: {python}")
    return found


def validate(spec: JobSpec) -> JobSpec:
    """Check the request before anything runs; raise JobError with a clear message."""
    script = os.path.abspath(spec.script)
    if not os.path.exists(script):
        raise JobError(f"Script not found: {spec.script}")
    if os.path.isdir(script):
        raise JobError(f"Script is a folder, not a file: {spec.script}")
    try:
        # Opening tells what os.access cannot: root reads anything, a socket nothing.
        with open(script, "rb") as handle:
            handle.read(1)
    except OSError as exc:
        raise JobError(f"Script is not readable: {spec.script} ({exc.strerror or exc})") from None
    cwd = os.path.abspath(spec.cwd) if spec.cwd else os.getcwd()
    if not os.path.isdir(cwd):
        raise JobError(f"Working directory not found: {spec.cwd}")
    passes = spec.passes
    memory = spec.memory
    if passes is not None:
        problem = unknown_passes(passes)
        if problem:
            raise JobError(problem[0].upper() + problem[1:])
        memory = MEMORY in passes
        passes = tuple(p for p in PASSES if p in passes)
    if spec.timeout is not None and spec.timeout <= 0:
        raise JobError(f"Timeout must be positive, got {spec.timeout}")
    save_raw = None
    if spec.save_raw:
        save_raw = os.path.abspath(os.path.join(cwd, spec.save_raw))
        try:
            os.makedirs(save_raw, exist_ok=True)
        except OSError as exc:
            raise JobError(
                f"Cannot create the folder for raw recordings: {spec.save_raw} ({exc.strerror or exc})"
            ) from None
        if not os.access(save_raw, os.W_OK | os.X_OK):
            raise JobError(f"The folder for raw recordings is not writable: {spec.save_raw}")
    return replace(  # every other field as given
        spec,
        script=script,
        args=tuple(spec.args),
        python=_resolve_python(spec.python),
        cwd=cwd,
        roots=tuple(os.path.abspath(r) for r in spec.roots),
        passes=passes,
        event_budget=max(spec.event_budget, 0),
        save_raw=save_raw,
        memory=memory,
    )


class Job:
    """One profiling job. ``await run()`` returns the result document."""

    def __init__(
        self,
        spec: JobSpec,
        on_event: Callable[[JobEvent], None] | None = None,
        forks: ForkServer | None = None,
    ) -> None:
        """``forks``: a fork server kept warm by the caller, for ``spec.python``; without
        one (and with ``spec.fork``) the job starts its own and ends it when it ends."""
        self.spec = validate(spec)
        self.on_event = on_event or (lambda event: None)
        self._forks = forks
        self._owns_forks = False
        self._fork_note = ""
        self._running: RunnerProcess | None = None
        self._waiting: RunnerProcess | None = None  # started ahead of its turn, not yet running
        self._discarded: list[RunnerProcess] = []
        self._stopped = False

    def use_forks(self, forks: ForkServer | None) -> None:
        """Fork the passes from this server (kept warm by the caller), before ``run``."""
        if forks is not None:
            self._forks = forks

    # -- control ---------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the job: the running pass is terminated (its results kept where the
        runner can write them), later passes do not start."""
        self._stopped = True
        self._discard_waiting()
        if self._running is not None:
            self._running.terminate()

    def kill(self) -> None:
        """Kill the running pass's whole process group at once (synchronous, no grace)."""
        self._stopped = True
        self._discard_waiting()
        if self._running is not None:
            self._running.kill()
        if self._owns_forks and self._forks is not None:
            kill_group(self._forks.proc.pid, signal.SIGKILL)

    # -- running ---------------------------------------------------------------------
    async def run(self) -> Document:
        spec = self.spec
        assert spec.cwd is not None
        doc = Document(
            schema=SCHEMA_NAME,
            version=SCHEMA_VERSION,
            tool=Tool(name="bottleneck-lsp", version=__version__),
            created=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            script=spec.script,
            args=list(spec.args),
            cwd=spec.cwd,
            roots=[os.path.dirname(spec.script), *spec.roots],
            python=spec.python,
            passes=[],
            status="ok",
        )
        planned = list(spec.passes or PASSES)
        workdir = runner_folder()
        try:
            await self._start_forks()
            stop_reason = ""
            for index, name in enumerate(planned):
                part = self._skip_reason(name, doc, stop_reason)
                if part is not None:
                    self._discard_waiting()  # a runner started for this pass: not wanted
                else:
                    self.on_event(JobEvent("pass_start", name, index, len(planned)))
                    following = planned[index + 1] if index + 1 < len(planned) else None
                    raw = await self._run_pass(name, workdir, index == 0, following)
                    part, environment = _typed(name, raw)
                    doc.environment = environment or doc.environment
                    if self._fork_note:
                        part.notes.append(self._fork_note)
                        self._fork_note = ""
                if not part.omit:
                    doc.passes.append(part)
                stop_reason = stop_reason or _stop_reason(part)
                if part.status != "skipped":
                    event = JobEvent("pass_end", name, index, len(planned), part.status)
                    event.doc = analysis.conclude(replace(doc, passes=list(doc.passes)))
                    self.on_event(event)
        finally:
            self._discard_waiting()
            for gone in self._discarded:
                await gone.reap()
            self._discarded.clear()
            if self._owns_forks and self._forks is not None:
                await self._forks.close()
            shutil.rmtree(workdir, ignore_errors=True)
        return analysis.conclude(doc)

    async def _run_pass(self, name: str, workdir: str, first: bool, following: str | None) -> dict[str, Any]:
        """One pass: its runner (the one started ahead of its turn, if any), and maybe the
        next pass's, started now to wait; then its part of the document."""
        waiting, self._waiting = self._waiting, None
        if waiting is not None and waiting.name == name:
            runner = waiting
            runner.go()
        else:
            if waiting is not None:
                self._waiting = waiting
                self._discard_waiting()
            runner = await self._start(name, workdir, first)
        self._running = runner  # stop() and kill() reach it from here on
        try:
            if name == "cprofile" and following is not None and self._may_prestart(following):
                # The next pass's interpreter starts now and waits, start-up done (torch
                # imported), until this pass ends: its 2-3 s of start-up run beside the
                # cProfile pass instead of after it. Only behind cProfile, whose Python-time
                # figures are the least sensitive to a busy core; the autograd passes always
                # run alone.
                try:
                    self._waiting = await self._start(following, workdir, False, wait=True)
                except OSError:
                    pass  # the next pass starts in its turn instead
                except BaseException:
                    runner.kill()
                    raise
            return await runner.finish(self.spec.timeout, lambda: self._stopped)
        finally:
            self._running = None

    async def _start_forks(self) -> None:
        if self._forks is not None or not self.spec.fork:
            return
        try:
            self._forks = await ForkServer.start(self.spec.python)
            self._owns_forks = True
        except ForkServerError as exc:
            self._fork_note = f"each pass started its own interpreter (no fork server: {exc})"

    def _forking(self) -> ForkServer | None:
        return self._forks if self._forks is not None and not self._forks.gone else None

    def _may_prestart(self, name: str) -> bool:
        return (
            self.spec.prestart and self._forking() is None and not self._stopped and name not in DEVICE_PASSES
        )

    def _discard_waiting(self) -> None:
        waiting, self._waiting = self._waiting, None
        if waiting is not None:
            waiting.discard()
            self._discarded.append(waiting)  # reaped, its output read to the end, in run()

    def _skip_reason(self, name: str, doc: Document, stop_reason: str) -> Pass | None:
        def skipped(reason: str, omit: bool = False) -> Pass:
            return Pass(name=name, status="skipped", skip_reason=reason, omit=omit)

        if self._stopped:
            return skipped("the job was stopped")
        if stop_reason:
            return skipped(stop_reason)
        env = doc.environment
        if name not in TORCHLESS_PASSES and env is not None and env.torch is None:
            return skipped(f"torch is not importable in {self.spec.python}: {env.torch_error}")
        if name in DEVICE_PASSES and env is not None and env.torch is not None:
            torch = env.torch
            if not torch.cuda_available:
                reason = no_cuda_reason(torch.version, torch.cuda_compiled, torch.hip_compiled)
                # Asked for explicitly: say why it did not run. Automatic: leave it out.
                return skipped(reason, omit=self.spec.passes is None)
        return None

    def _runner_args(
        self, name: str, workdir: str, out: str, first: bool, wait_fd: int | None = None
    ) -> RunnerArgs:
        spec = self.spec
        assert spec.cwd is not None
        forks = self._forking()
        return RunnerArgs(
            pass_name=name,
            script=spec.script,
            out=out,
            cwd=spec.cwd,
            roots=list(spec.roots),
            strip_path=forks.workdir if forks is not None else workdir,
            environment=first,
            exact_lines=spec.exact_lines,
            event_budget=spec.event_budget,
            memory=spec.memory and name in ("cpu", "cuda"),
            save_raw=self.raw_path(name),
            wait_fd=wait_fd,
            args=list(spec.args),
        )

    def raw_path(self, name: str) -> str | None:
        """Where the pass writes its raw recording (``--save-raw``), or None."""
        if self.spec.save_raw is None or name not in RAW_PASSES:
            return None
        stem = os.path.splitext(os.path.basename(self.spec.script))[0]
        return os.path.join(self.spec.save_raw, f"{stem}.{name}.raw.json.gz")

    async def _start(self, name: str, workdir: str, first: bool, wait: bool = False) -> RunnerProcess:
        spec = self.spec
        assert spec.cwd is not None
        out = os.path.join(workdir, f"{name}.json")

        def output(stream: str, text: str) -> None:
            self.on_event(JobEvent("output", name, stream=stream, text=text))

        forks = self._forking()
        if forks is not None:
            try:
                options = self._runner_args(name, workdir, out, first).options()
                return await RunnerProcess.fork(name, forks, options, out, output)
            except (ForkServerError, OSError) as exc:  # this pass starts afresh (and later ones, if it died)
                self._fork_note = f"this pass started its own interpreter (the fork server failed: {exc})"
        return await RunnerProcess.start(
            name,
            lambda wait_fd: self._runner_args(name, workdir, out, first, wait_fd).argv(spec.python),
            out,
            spec.cwd,
            environ(workdir),
            output,
            wait=wait,
        )


def _typed(name: str, raw: dict[str, Any]) -> tuple[Pass, Environment | None]:
    """A runner's part as types, and the environment the first pass carries. A part this
    version cannot read is a crashed pass that says why (the runner is the same version:
    a bug, not the user's doing)."""
    environment = raw.pop("environment", None)
    try:
        env = Environment.from_json(environment, "environment") if environment is not None else None
        return Pass.from_json(raw, f"the {name} pass's result"), env
    except ModelError as exc:
        message = f"the runner wrote a result this version cannot read: {exc}"
        failure = ScriptError(type="RunnerFailure", message=message)
        code = raw.get("exit_code")
        code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return Pass(name=name, status="crashed", exit_code=code, error=failure), None


def _stop_reason(part: Pass) -> str:
    if part.status in STOPPING_STATUSES:
        return f"the {part.name} pass ended with status {part.status}"
    if part.status == "exit":
        return f"the script exited with status {part.exit_code} in the {part.name} pass"
    return ""
