"""Running a profiling job: one runner subprocess per pass, in the user's interpreter.

Shared by the command line and the language server. It owns everything about child
processes: the private temporary folder, the environment the runner sees, draining
output, timeouts, cancellation and killing whole process groups.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__, analysis
from .result import SCHEMA_NAME, SCHEMA_VERSION
from .runner.environment import environment_file

ALL_PASSES = ("sample", "cprofile", "cpu", "cuda")
# Passes that need a CUDA device: left out when none is present (unless asked for).
DEVICE_PASSES = ("cuda",)
# Passes whose profiler events can be saved as a raw recording (--save-raw); the sample
# pass has events only on a GPU (device activity).
RAW_PASSES = ("sample", "cpu", "cuda")
OUTPUT_TAIL_BYTES = 64 * 1024
KILL_GRACE_S = 15.0  # time for the runner to process and write partial results
DRAIN_GRACE_S = 10.0  # time for a pass's output to reach its end once its group is gone
log = logging.getLogger(__name__)
_PACKAGE_DIR = Path(__file__).resolve().parent


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
    prestart: bool = True  # start the pass after cprofile while cprofile runs (see _run)
    save_raw: str | None = None  # a folder: each profiler pass writes its raw recording there (RAW_PASSES)


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
    doc: dict[str, Any] | None = None


@dataclass
class _Tail:
    limit: int = OUTPUT_TAIL_BYTES
    data: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > self.limit:
            cut = len(self.data) - self.limit
            del self.data[:cut]
            self.dropped += cut

    def text(self) -> str:
        head = f"[... {self.dropped} bytes not kept ...]\n" if self.dropped else ""
        return head + self.data.decode("utf-8", "replace")


@dataclass
class _Started:
    """A runner process for one pass, its output being drained."""

    name: str
    out: str
    proc: asyncio.subprocess.Process
    tails: dict[str, _Tail]
    drains: asyncio.Future[Any]
    go: int | None = None  # write end of the go pipe, for a runner started ahead of its turn


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
    if passes is not None:
        unknown = [p for p in passes if p not in ALL_PASSES]
        if unknown or not passes:
            raise JobError(
                f"Unknown pass {', '.join(unknown) or '(none given)'}; choose from " + ", ".join(ALL_PASSES)
            )
        passes = tuple(p for p in ALL_PASSES if p in passes)
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
    return JobSpec(
        script=script,
        args=tuple(spec.args),
        python=_resolve_python(spec.python),
        cwd=cwd,
        roots=tuple(os.path.abspath(r) for r in spec.roots),
        passes=passes,
        timeout=spec.timeout,
        exact_lines=spec.exact_lines,
        event_budget=max(spec.event_budget, 0),
        prestart=spec.prestart,
        save_raw=save_raw,
    )


def _kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Job:
    """One profiling job. ``await run()`` returns the result document."""

    def __init__(self, spec: JobSpec, on_event: Callable[[JobEvent], None] | None = None) -> None:
        self.spec = validate(spec)
        self.on_event = on_event or (lambda event: None)
        self._proc: asyncio.subprocess.Process | None = None
        self._waiting: _Started | None = None  # started ahead of its turn, not yet running
        self._discarded: list[_Started] = []
        self._stopped = False
        self.current_pass: str | None = None

    # -- control ---------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the job: the running pass is terminated (its results kept where the
        runner can write them), later passes do not start."""
        self._stopped = True
        self._discard_waiting()
        proc = self._proc
        if proc is not None and proc.returncode is None:
            _kill_group(proc.pid, signal.SIGTERM)

            def escalate() -> None:
                if proc.returncode is None:
                    _kill_group(proc.pid, signal.SIGKILL)

            asyncio.get_running_loop().call_later(KILL_GRACE_S, escalate)

    def kill(self) -> None:
        """Kill the running pass's whole process group at once (synchronous, no grace)."""
        self._stopped = True
        self._discard_waiting()
        proc = self._proc
        if proc is not None and proc.returncode is None:
            _kill_group(proc.pid, signal.SIGKILL)

    @property
    def stopped(self) -> bool:
        return self._stopped

    # -- running ---------------------------------------------------------------------
    async def run(self) -> dict[str, Any]:
        spec = self.spec
        assert spec.cwd is not None
        doc: dict[str, Any] = {
            "schema": SCHEMA_NAME,
            "version": SCHEMA_VERSION,
            "tool": {"name": "bottleneck-lsp", "version": __version__},
            "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            "script": spec.script,
            "args": list(spec.args),
            "cwd": spec.cwd,
            "roots": [os.path.dirname(spec.script), *spec.roots],
            "python": spec.python,
            "environment": None,
            "passes": [],
            "verdict": None,
        }
        planned = list(spec.passes or ALL_PASSES)
        workdir = tempfile.mkdtemp(prefix="bottleneck-lsp-")
        try:
            os.symlink(_PACKAGE_DIR, os.path.join(workdir, _PACKAGE_DIR.name))
            stop_reason = ""
            for index, name in enumerate(planned):
                part = self._skip_reason(name, doc, stop_reason)
                waiting = self._waiting
                if waiting is not None and (waiting.name != name or part is not None):
                    self._discard_waiting()
                    waiting = None
                if part is None:
                    self.on_event(JobEvent("pass_start", name, index, len(planned)))
                    if waiting is not None:
                        self._waiting = None
                        started = waiting
                        _go(started)
                    else:
                        started = await self._start(name, workdir, first=index == 0)
                    if (
                        name == "cprofile"
                        and index + 1 < len(planned)
                        and self._may_prestart(planned[index + 1])
                    ):
                        # The next pass's interpreter starts now and waits, start-up done
                        # (torch imported), until this pass ends: its 2-3 s of start-up run
                        # beside the cProfile pass instead of after it. Only behind cProfile,
                        # whose Python-time figures are the least sensitive to a busy core;
                        # the autograd passes always run alone.
                        self._proc = started.proc  # stop() and kill() reach it meanwhile
                        try:
                            self._waiting = await self._start(planned[index + 1], workdir, False, wait=True)
                        except OSError:
                            pass  # the next pass starts in its turn instead
                        except BaseException:
                            _kill_group(started.proc.pid, signal.SIGKILL)
                            raise
                    part = await self._finish(started)
                    if "environment" in part:
                        doc["environment"] = part.pop("environment")
                doc["passes"].append(part)
                stop_reason = stop_reason or _stop_reason(part)
                if part["status"] != "skipped":
                    event = JobEvent("pass_end", name, index, len(planned), part["status"])
                    event.doc = _conclude(dict(doc))
                    self.on_event(event)
        finally:
            self._discard_waiting()
            for gone in self._discarded:
                await gone.proc.wait()
                await _settle(gone.drains, DRAIN_GRACE_S)
            self._discarded.clear()
            shutil.rmtree(workdir, ignore_errors=True)
        return _conclude(doc)

    def _may_prestart(self, name: str) -> bool:
        return self.spec.prestart and not self._stopped and name not in DEVICE_PASSES

    def _discard_waiting(self) -> None:
        """A runner started ahead of its turn that will not run: it has run nothing of the
        script, so it goes at once (SIGKILL to its group; its pipes close)."""
        waiting, self._waiting = self._waiting, None
        if waiting is None:
            return
        if waiting.go is not None:
            os.close(waiting.go)
            waiting.go = None
        if waiting.proc.returncode is None:
            _kill_group(waiting.proc.pid, signal.SIGKILL)
        self._discarded.append(waiting)  # reaped, its output read to the end, in run()

    def _skip_reason(self, name: str, doc: dict[str, Any], stop_reason: str) -> dict[str, Any] | None:
        def skipped(reason: str, **extra: Any) -> dict[str, Any]:
            return {"name": name, "status": "skipped", "skip_reason": reason, **extra}

        if self._stopped:
            return skipped("the job was stopped")
        if stop_reason:
            return skipped(stop_reason)
        env = doc["environment"]
        if name not in ("sample", "cprofile") and env is not None and env.get("torch") is None:
            return skipped(f"torch is not importable in {self.spec.python}: {env.get('torch_error')}")
        if name in DEVICE_PASSES and env is not None and env.get("torch") is not None:
            torch_info = env["torch"]
            if not torch_info.get("cuda_available"):
                reason = (
                    f"torch {torch_info['version']} was built without CUDA"
                    if not torch_info.get("cuda_compiled")
                    else f"torch {torch_info['version']} found no CUDA device"
                )
                # Asked for explicitly: say why it did not run. Automatic: leave it out.
                return skipped(reason, omit=self.spec.passes is None)
        return None

    def _command(
        self, name: str, workdir: str, out: str, first: bool, wait_fd: int | None = None
    ) -> list[str]:
        spec = self.spec
        assert spec.cwd is not None
        cmd = [
            spec.python,
            "-m",
            "bottleneck_lsp.runner",
            "--pass",
            name,
            "--script",
            spec.script,
            "--out",
            out,
            "--cwd",
            spec.cwd,
            "--strip-path",
            workdir,
        ]
        for root in spec.roots:
            cmd += ["--root", root]
        if first:
            cmd.append("--environment")
        if not spec.exact_lines:
            cmd.append("--no-exact-lines")
        if spec.event_budget:
            cmd += ["--event-budget", str(spec.event_budget)]
        if wait_fd is not None:
            cmd += ["--wait-fd", str(wait_fd)]
        raw = self.raw_path(name)
        if raw is not None:
            cmd += ["--save-raw", raw]
        return [*cmd, "--", *spec.args]

    def raw_path(self, name: str) -> str | None:
        """Where the pass writes its raw recording (``--save-raw``), or None."""
        if self.spec.save_raw is None or name not in RAW_PASSES:
            return None
        stem = os.path.splitext(os.path.basename(self.spec.script))[0]
        return os.path.join(self.spec.save_raw, f"{stem}.{name}.raw.json.gz")

    def _environ(self, workdir: str) -> dict[str, str]:
        env = dict(os.environ)
        original = env.get("PYTHONPATH")
        env["PYTHONPATH"] = workdir + (os.pathsep + original if original else "")
        env.pop("BOTTLENECK_LSP_ORIGINAL_PYTHONPATH", None)
        if original is not None:
            env["BOTTLENECK_LSP_ORIGINAL_PYTHONPATH"] = original
        return env

    async def _drain(self, stream: asyncio.StreamReader, name: str, label: str, tail: _Tail) -> None:
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            tail.add(chunk)
            self.on_event(JobEvent("output", name, stream=label, text=chunk.decode("utf-8", "replace")))

    async def _start(self, name: str, workdir: str, first: bool, wait: bool = False) -> _Started:
        spec = self.spec
        out = os.path.join(workdir, f"{name}.json")
        read_fd: int | None = None
        go: int | None = None
        if wait:
            read_fd, go = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self._command(name, workdir, out, first, read_fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=spec.cwd,
                env=self._environ(workdir),
                start_new_session=True,
                pass_fds=(read_fd,) if read_fd is not None else (),
            )
        except BaseException:
            if go is not None:
                os.close(go)
            raise
        finally:
            if read_fd is not None:
                os.close(read_fd)
        tails = {"stdout": _Tail(), "stderr": _Tail()}
        assert proc.stdout is not None and proc.stderr is not None
        drains = asyncio.gather(
            self._drain(proc.stdout, name, "stdout", tails["stdout"]),
            self._drain(proc.stderr, name, "stderr", tails["stderr"]),
        )
        return _Started(name, out, proc, tails, drains, go)

    async def _finish(self, started: _Started) -> dict[str, Any]:
        """Wait for the pass to end, within the timeout, then read what it wrote."""
        spec = self.spec
        proc = started.proc
        self._proc = proc
        self.current_pass = started.name
        timed_out = False
        try:
            try:
                await asyncio.wait_for(asyncio.shield(proc.wait()), spec.timeout)
            except asyncio.TimeoutError:
                timed_out = True
                _kill_group(proc.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE_S)
                except asyncio.TimeoutError:
                    _kill_group(proc.pid, signal.SIGKILL)
                    await proc.wait()
        except asyncio.CancelledError:
            _kill_group(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise
        finally:
            # Whatever the script left behind in its group (workers, daemons) goes too.
            _kill_group(proc.pid, signal.SIGKILL)
            await _settle(started.drains, DRAIN_GRACE_S)
            self._proc = None
            self.current_pass = None
        return self._read_part(started.name, started.out, proc.returncode, timed_out, started.tails)

    def _read_part(
        self, name: str, out: str, returncode: int | None, timed_out: bool, tails: dict[str, _Tail]
    ) -> dict[str, Any]:
        part: dict[str, Any]
        try:
            with open(out, encoding="utf-8") as handle:
                part = json.load(handle)
        except (OSError, ValueError):
            part = {"name": name, "status": "crashed", "exit_code": returncode}
            try:  # the environment, written before the script ran (first pass only)
                with open(environment_file(out), encoding="utf-8") as handle:
                    part["environment"] = json.load(handle)
            except (OSError, ValueError):
                pass
            if returncode is not None and returncode < 0:
                part["signal"] = signal.Signals(-returncode).name
            stderr = tails["stderr"].text().strip().splitlines()
            part["error"] = {
                "type": "RunnerFailure",
                "message": stderr[-1] if stderr else f"runner exited with status {returncode}",
                "file": None,
                "line": None,
                "column": None,
                "traceback": tails["stderr"].text()[-4000:],
            }
        if timed_out:
            part["status"] = "timeout"
            part["timeout_s"] = self.spec.timeout
        elif self._stopped and part["status"] in ("terminated", "crashed"):
            part["status"] = "cancelled"
        part["output_tail"] = {k: t.text() for k, t in tails.items()}
        return part


def _conclude(doc: dict[str, Any]) -> dict[str, Any]:
    """The document's verdicts over the passes it holds: status, exit code, CPU/GPU
    verdict, the one ranking."""
    doc["passes"] = [p for p in doc["passes"] if not p.get("omit")]
    doc["status"], doc["exit_code"] = analysis.overall_status(doc)
    doc["verdict"] = analysis.verdict(doc)
    doc["ranking"] = analysis.ranking(doc)
    return doc


async def _settle(drains: asyncio.Future[Any], timeout: float) -> None:
    """Let a pass's output readers reach the end of its pipes: its process group is gone,
    so they do at once, unless a process that escaped the group still holds a pipe. Then,
    after ``timeout`` (or when this task is cancelled), they are cancelled. Either way their
    outcome is collected (``_collect``): a cancelled gather left unread makes asyncio print
    "exception was never retrieved" on the user's terminal."""
    try:
        await asyncio.wait({drains}, timeout=timeout)
    finally:
        if not drains.done():
            drains.cancel()
        drains.add_done_callback(_collect)


def _collect(drains: asyncio.Future[Any]) -> None:
    if drains.cancelled():
        return
    error = drains.exception()
    if error is not None and not isinstance(error, asyncio.CancelledError):
        log.warning("reading a pass's output failed: %r", error)


def _go(started: _Started) -> None:
    """Let a runner started ahead of its turn run its pass."""
    if started.go is None:
        return
    try:
        os.write(started.go, b"g")
    except BrokenPipeError:
        pass  # it ended during start-up; _finish reads what it left
    os.close(started.go)
    started.go = None


def _stop_reason(part: dict[str, Any]) -> str:
    status = part["status"]
    if status in ("syntax_error", "timeout", "cancelled", "crashed", "terminated"):
        return f"the {part['name']} pass ended with status {status}"
    if status == "exit":
        return f"the script exited with status {part.get('exit_code')} in the {part['name']} pass"
    return ""
