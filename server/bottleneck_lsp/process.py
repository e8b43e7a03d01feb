"""One runner subprocess for one pass: its whole life, apart from the job's plan.

Started in its own process group (everything the script starts goes with it), optionally
ahead of its turn (it waits for a byte on a pipe, start-up done); its output drained into
bounded tails and handed on as it comes; waited for within a timeout (SIGTERM, then
SIGKILL after a grace); its group killed at the end, whatever the script left running;
then what it wrote read back as the pass's part of the document.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .contract import environment_file

if TYPE_CHECKING:
    from .forks import ForkServer

OUTPUT_TAIL_BYTES = 64 * 1024
KILL_GRACE_S = 15.0  # time for the runner to process and write partial results
DRAIN_GRACE_S = 10.0  # time for a pass's output to reach its end once its group is gone
log = logging.getLogger(__name__)

OnOutput = Callable[[str, str], None]  # (stream name, text)
Reader = asyncio.StreamReader


@dataclass
class Tail:
    """The last ``limit`` bytes of a stream, and how many were dropped before them."""

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


def kill_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


class Process(Protocol):
    """What is needed of a runner's process: a subprocess, or a child of a fork server."""

    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class RunnerProcess:
    """A started runner (see the module's docstring)."""

    def __init__(self, name: str, out: str, proc: Process, go: int | None) -> None:
        self.name = name
        self.out = out
        self.proc = proc
        self.tails = {"stdout": Tail(), "stderr": Tail()}
        self._go = go  # write end of the go pipe, for a runner started ahead of its turn
        self._drains: asyncio.Future[Any] | None = None

    def _drain_all(self, stdout: Reader, stderr: Reader, on_output: OnOutput) -> None:
        self._drains = asyncio.gather(
            self._drain(stdout, "stdout", on_output), self._drain(stderr, "stderr", on_output)
        )

    @classmethod
    async def fork(
        cls, name: str, server: ForkServer, options: list[str], out: str, on_output: OnOutput
    ) -> RunnerProcess:
        """Fork the runner from a fork server (start-up already done there)."""
        proc, stdout, stderr = await server.spawn(options)
        started = cls(name, out, proc, None)
        started._drain_all(stdout, stderr, on_output)
        return started

    @classmethod
    async def start(
        cls,
        name: str,
        argv_for: Callable[[int | None], list[str]],
        out: str,
        cwd: str,
        env: dict[str, str],
        on_output: OnOutput,
        wait: bool = False,
    ) -> RunnerProcess:
        """Start the runner; ``argv_for(fd)`` makes its command line (``fd``: the read end
        of the go pipe when ``wait``, else None)."""
        read_fd: int | None = None
        go: int | None = None
        if wait:
            read_fd, go = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv_for(read_fd),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=env,
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
        started = cls(name, out, proc, go)
        assert proc.stdout is not None and proc.stderr is not None
        started._drain_all(proc.stdout, proc.stderr, on_output)
        return started

    async def _drain(self, stream: asyncio.StreamReader, label: str, on_output: OnOutput) -> None:
        tail = self.tails[label]
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                return
            tail.add(chunk)
            on_output(label, chunk.decode("utf-8", "replace"))

    # -- control ------------------------------------------------------------------------
    def go(self) -> None:
        """Let a runner started ahead of its turn run its pass."""
        if self._go is None:
            return
        try:
            os.write(self._go, b"g")
        except BrokenPipeError:
            pass  # it ended during start-up; finish() reads what it left
        os.close(self._go)
        self._go = None

    def terminate(self) -> None:
        """SIGTERM to the group (the runner writes what it measured), SIGKILL after the grace."""
        proc = self.proc
        if proc.returncode is not None:
            return
        kill_group(proc.pid, signal.SIGTERM)

        def escalate() -> None:
            if proc.returncode is None:
                kill_group(proc.pid, signal.SIGKILL)

        asyncio.get_running_loop().call_later(KILL_GRACE_S, escalate)

    def kill(self) -> None:
        if self.proc.returncode is None:
            kill_group(self.proc.pid, signal.SIGKILL)

    def discard(self) -> None:
        """A runner started ahead of its turn that will not run: it has run nothing of the
        script, so it goes at once (its pipes close); ``reap`` collects it."""
        if self._go is not None:
            os.close(self._go)
            self._go = None
        self.kill()

    async def reap(self) -> None:
        await self.proc.wait()
        await self._settle()

    # -- the end ------------------------------------------------------------------------
    async def finish(self, timeout: float | None, stopped: Callable[[], bool]) -> dict[str, Any]:
        """Wait for the pass to end, within ``timeout``, then read what it wrote.
        ``stopped()``: whether the job was stopped meanwhile (a killed runner is then a
        cancelled pass, not a crashed one)."""
        proc = self.proc
        timed_out = False
        try:
            try:
                await asyncio.wait_for(asyncio.shield(proc.wait()), timeout)
            except asyncio.TimeoutError:
                timed_out = True
                kill_group(proc.pid, signal.SIGTERM)
                try:
                    await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE_S)
                except asyncio.TimeoutError:
                    kill_group(proc.pid, signal.SIGKILL)
                    await proc.wait()
        except asyncio.CancelledError:
            kill_group(proc.pid, signal.SIGKILL)
            await proc.wait()
            raise
        finally:
            # Whatever the script left behind in its group (workers, daemons) goes too.
            kill_group(proc.pid, signal.SIGKILL)
            await self._settle()
        part = self._read_part()
        if timed_out:
            part["status"] = "timeout"
            part["timeout_s"] = timeout
        elif stopped() and part["status"] in ("terminated", "crashed"):
            part["status"] = "cancelled"
        part["output_tail"] = {k: t.text() for k, t in self.tails.items()}
        return part

    async def _settle(self) -> None:
        """Let the output readers reach the end of the pipes: the group is gone, so they do
        at once, unless a process that escaped the group still holds a pipe. Then, after
        ``DRAIN_GRACE_S`` (or when this task is cancelled), they are cancelled. Either way
        their outcome is collected: a cancelled gather left unread makes asyncio print
        "exception was never retrieved" on the user's terminal."""
        drains = self._drains
        if drains is None:
            return
        try:
            await asyncio.wait({drains}, timeout=DRAIN_GRACE_S)
        finally:
            if not drains.done():
                drains.cancel()
            drains.add_done_callback(_collect)

    def _read_part(self) -> dict[str, Any]:
        returncode = self.proc.returncode
        try:
            with open(self.out, encoding="utf-8") as handle:
                part: dict[str, Any] = json.load(handle)
            return part
        except (OSError, ValueError):
            pass
        part = {"name": self.name, "status": "crashed", "exit_code": returncode}
        try:  # the environment, written before the script ran (first pass only)
            with open(environment_file(self.out), encoding="utf-8") as handle:
                part["environment"] = json.load(handle)
        except (OSError, ValueError):
            pass
        if returncode is not None and returncode < 0:
            part["signal"] = signal.Signals(-returncode).name
        stderr = self.tails["stderr"].text()
        last = stderr.strip().splitlines()
        part["error"] = {
            "type": "RunnerFailure",
            "message": last[-1] if last else f"runner exited with status {returncode}",
            "file": None,
            "line": None,
            "column": None,
            "traceback": stderr[-4000:],
        }
        return part


def _collect(drains: asyncio.Future[Any]) -> None:
    if drains.cancelled():
        return
    error = drains.exception()
    if error is not None and not isinstance(error, asyncio.CancelledError):
        log.warning("reading a pass's output failed: %r", error)
