"""One runner subprocess for one pass: its whole life, apart from the job's plan.

Started in its own process group (everything the script starts goes with it), optionally
ahead of its turn (it waits for a byte on a pipe, start-up done); its output drained into
bounded tails and handed on as it comes; waited for within a timeout (SIGTERM, then
SIGKILL after a grace); its group killed at the end, whatever the script left running;
then what it wrote read back as the pass's part of the document.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..runner.lingering import BACKSTOP_S, EXIT_GRACE_S
from ..runner.strays import end_strays
from ..schema.contract import LINGER_STACKS_SUFFIX, STOP_TAKEN_SUFFIX, environment_file, rank_part
from ..schema.model import Environment, ModelError, OutputTail, PassName, PassStatus, RunnerPart, ScriptError
from .unwanted_lines import Unwanted

OUTPUT_TAIL_BYTES = 64 * 1024
KILL_GRACE_S = 15.0  # time for the runner to process and write partial results
# ... once it took the stop: one that has not by then never will (the signal did not reach
# its handler; a Python handler waits for the operator under way, seconds at most)
TAKE_GRACE_S = 5.0
# ... and for a pass stopped at the end of its window (--duration): its results are what was
# asked for (a full event budget's recording took 3 s to write here after the stop)
BOXED_GRACE_S = 60.0
DRAIN_GRACE_S = 10.0  # time for a pass's output to reach its end once its group is gone
_EXIT_POLL_S = 0.2  # how often ``ended`` looks at the exit status while the pipes stay open
log = logging.getLogger(__name__)

OnOutput = Callable[[str, str, bytes], None]  # (stream name, text, the bytes it came from)
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


def kill_runner(pid: int) -> None:
    """SIGKILL a live runner's group, and first what the script started outside it (its
    own sessions: ``strays``), found while the runner is still their parent."""
    end_strays(pid)
    kill_group(pid, signal.SIGKILL)


REAP_TIMEOUT_S = 10.0  # for a process killed with SIGKILL to be seen ended


async def reaped(proc: Process, what: str) -> None:
    """Wait for a process just killed with SIGKILL to be seen ended, within
    ``REAP_TIMEOUT_S``: a forked pass's end is reported by its fork server, which may be
    stuck itself. Past it, the pass is taken as killed, and the log says what was waited for."""
    if await ended(proc, REAP_TIMEOUT_S):
        return
    log.warning(
        "%s (pid %d) was killed but not seen ended within %.0f s; going on without it",
        what,
        proc.pid,
        REAP_TIMEOUT_S,
    )
    gone = getattr(proc, "ended", None)  # a fork server's child: its status is ours to set
    if callable(gone):
        gone(-signal.SIGKILL)


async def ended(proc: Process, timeout: float | None) -> bool:
    """Whether ``proc`` ended within ``timeout`` seconds (None: however long it takes).
    Its exit, not its pipes': asyncio's ``wait()`` (Python 3.11) also waits for every copy of
    the process's stdout and stderr to close, and a process that outlived it (a rank whose
    launcher was killed, a daemon) may hold them for ever."""
    if proc.returncode is not None:
        return True
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    waiter = asyncio.ensure_future(proc.wait())
    try:
        while proc.returncode is None:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            await asyncio.wait({waiter}, timeout=_EXIT_POLL_S if left is None else min(_EXIT_POLL_S, left))
        return True
    finally:
        if not waiter.done():
            waiter.cancel()
        waiter.add_done_callback(_retrieved)


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: asyncio prints nothing about it


class Process(Protocol):
    """What is needed of a runner's process: a subprocess, or a child of a fork server."""

    pid: int

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


class Spawner(Protocol):
    """What forks a runner (``fork_server.ForkServer``): the process, its stdout and stderr."""

    async def spawn(self, options: list[str]) -> tuple[Process, Reader, Reader]: ...


class RunnerProcess:
    """A started runner (see the module's docstring)."""

    def __init__(self, name: PassName, out: str, proc: Process, go: int | None) -> None:
        self.name = name
        self.out = out
        # A distributed pass (a launcher's workers): the ranks whose parts to read, each
        # from ``rank_part(out, rank)``; None: one runner, one part at ``out``.
        self.ranks: list[int] | None = None
        # ... and, on node 0 of several sharing a parts folder, every rank's: the other
        # nodes' parts are waited for, up to ``gather_wait_s`` once this node's have ended.
        self.gather: list[int] | None = None
        self.gather_wait_s = 0.0
        self.proc = proc
        self.tails = {"stdout": Tail(), "stderr": Tail()}
        self._go = go  # write end of the go pipe, for a runner started ahead of its turn
        self._drains: asyncio.Future[Any] | None = None
        self._stopping: asyncio.Future[bool] | None = None  # a stop under way (``terminate``)
        self.unwanted: Unwanted | None = None  # its stderr's filter, ended by the job after ``finish``

    def _drain_all(self, stdout: Reader, stderr: Reader, on_output: OnOutput) -> None:
        self._drains = asyncio.gather(
            self._drain(stdout, "stdout", on_output), self._drain(stderr, "stderr", on_output)
        )

    @classmethod
    async def fork(
        cls, name: PassName, server: Spawner, options: list[str], out: str, on_output: OnOutput
    ) -> RunnerProcess:
        """Fork the runner from a fork server (start-up already done there)."""
        proc, stdout, stderr = await server.spawn(options)
        started = cls(name, out, proc, None)
        started._drain_all(stdout, stderr, on_output)
        return started

    @classmethod
    async def start(
        cls,
        name: PassName,
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
        # A character cut by the chunk's end is decoded with the next chunk (each chunk
        # decoded alone made two U+FFFD of a progress bar's block character now and then).
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                rest = decoder.decode(b"", final=True)
                if rest:
                    on_output(label, rest, b"")
                return
            tail.add(chunk)
            on_output(label, decoder.decode(chunk), chunk)

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
        """SIGTERM to the group (the runner writes what it measured), SIGKILL after the grace
        (``stop``); ``finish`` sees it end."""
        if self.proc.returncode is not None or self._stopping is not None:
            return
        self._stopping = asyncio.ensure_future(self.stop())
        self._stopping.add_done_callback(_retrieved)

    async def stop(self, grace: float = KILL_GRACE_S) -> bool:
        """SIGTERM to the runner (to a launcher's whole group), then wait for the runner: up
        to ``TAKE_GRACE_S`` for it to take the stop (its ``STOP_TAKEN_SUFFIX`` file), then up
        to ``grace`` in all for what it measured; SIGKILL to the group after that. A
        launcher's ranks take no such file: the whole grace. Whether it had to be killed.

        The script's own processes get no SIGTERM before the runner has written its results
        (``finish`` SIGKILLs the group then): a DataLoader's workers ended first made the
        script's main thread raise "DataLoader worker (pid N) is killed by signal:
        Terminated" (torch's SIGCHLD handler) before the runner's stop, and that error
        became the report's first line."""
        proc = self.proc
        if proc.returncode is not None:
            return False
        if self.ranks is None:
            try:
                os.kill(proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                pass
        else:
            kill_group(proc.pid, signal.SIGTERM)
        taken = self.out + STOP_TAKEN_SUFFIX if self.ranks is None else None
        loop = asyncio.get_running_loop()
        begin = loop.time()
        while not await ended(proc, _EXIT_POLL_S):
            waited = loop.time() - begin
            if waited >= grace or (
                taken is not None and waited >= TAKE_GRACE_S and not os.path.exists(taken)
            ):
                kill_runner(proc.pid)
                return True
        return False

    def kill(self) -> None:
        if self.proc.returncode is None:
            kill_runner(self.proc.pid)
        self._kill_ranks()

    def _kill_ranks(self) -> None:
        """A launcher's workers lead groups of their own: each goes, with what it started,
        once the pass is over (a worker stuck where no signal handler runs would stay)."""
        for rank in self.ranks or ():
            try:
                with open(rank_part(self.out, rank) + ".pid", encoding="utf-8") as handle:
                    pid = int(handle.read())
            except (OSError, ValueError):
                continue
            if _runs(pid, self.out):
                kill_group(pid, signal.SIGKILL)

    def discard(self) -> None:
        """A runner started ahead of its turn that will not run: it has run nothing of the
        script, so it goes at once (its pipes close); ``reap`` collects it."""
        if self._go is not None:
            os.close(self._go)
            self._go = None
        self.kill()

    async def reap(self) -> None:
        await reaped(self.proc, f"the {self.name} pass's runner, started ahead of its turn")
        await self._settle()

    # -- the end ------------------------------------------------------------------------
    async def finish(
        self, timeout: float | None, stopped: Callable[[], bool], duration: float | None = None
    ) -> list[RunnerPart]:
        """Wait for the pass to end, within ``timeout``, then read what it wrote: one part,
        or one per rank (``ranks``), as types from here on.
        ``stopped()``: whether the job was stopped meanwhile (a killed runner is then a
        cancelled pass, not a crashed one).
        ``duration`` (``--duration``): the pass is stopped after this long, as a timeout
        stops it, but what it recorded until then is its result ("ok", ``stopped_after_s``),
        and the job goes on."""
        proc = self.proc
        boxing = duration is not None and (timeout is None or duration < timeout)
        timed_out = boxed = False
        try:
            if not await ended(proc, duration if boxing else timeout):
                boxed, timed_out = boxing, not boxing
                # (a launcher's ranks take no stop file, so a deaf one would hold the whole grace)
                if await self.stop(BOXED_GRACE_S if boxed and self.ranks is None else KILL_GRACE_S):
                    # A rank deaf to SIGTERM (deadlocked where no handler runs) outlives its
                    # launcher, which ends it no more: it goes now, with the launcher.
                    self._kill_ranks()
                    await reaped(proc, f"the {self.name} pass's runner")
        except asyncio.CancelledError:
            kill_runner(proc.pid)
            self._kill_ranks()
            await reaped(proc, f"the {self.name} pass's runner")
            raise
        finally:
            # Whatever the script left behind in its group (workers, daemons) goes too.
            kill_group(proc.pid, signal.SIGKILL)
            self._kill_ranks()
            await self._settle()
        ranks = self.gather or self.ranks
        if ranks is not None and ranks != self.ranks:
            await self._await_parts([r for r in ranks if r not in (self.ranks or ())])
        parts = (
            [self._read_part(self.out)]
            if ranks is None
            else [self._read_part(rank_part(self.out, rank), rank) for rank in ranks]
        )
        ended_early = (PassStatus.TERMINATED, PassStatus.CRASHED)
        for part in parts:
            if boxed and part.status == PassStatus.TERMINATED:
                # it ran as long as it was asked to
                part.update(status=PassStatus.OK, stopped_after_s=duration)
            elif boxed and (ranks is None or part.status == PassStatus.CRASHED):
                # it did not take the stop (nothing written): a timeout, as without the box
                part.update(status=PassStatus.TIMEOUT, timeout_s=duration)
            elif timed_out and (ranks is None or part.status in ended_early):
                # (a rank that had ended on its own keeps what it ended with)
                part.update(status=PassStatus.TIMEOUT, timeout_s=timeout)
            elif stopped() and part.status in ended_early:
                part.update(status=PassStatus.CANCELLED)
            tails = self.tails
            part.update(output_tail=OutputTail(stdout=tails["stdout"].text(), stderr=tails["stderr"].text()))
        return parts

    async def _await_parts(self, ranks: list[int]) -> None:
        """Other nodes' ranks write their parts to the shared folder when they end."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.gather_wait_s
        while loop.time() < deadline and not all(os.path.exists(rank_part(self.out, r)) for r in ranks):
            await asyncio.sleep(0.2)

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

    def _read_part(self, out: str, rank: int | None = None) -> RunnerPart:
        """What the runner wrote, as types; a crashed pass when it wrote nothing."""
        returncode = self.proc.returncode
        try:
            with open(out, encoding="utf-8") as handle:
                raw = json.load(handle)
        except (OSError, ValueError):
            return self._crashed(out, returncode, rank)
        try:
            part = RunnerPart.from_json(raw, f"the {self.name} pass's result")
        except ModelError as exc:
            return _unreadable(self.name, raw, exc)
        held = _held_exit(out)
        if held and part.lingering is None:
            part.add_note(held)
        return part

    def _crashed(self, out: str, returncode: int | None, rank: int | None) -> RunnerPart:
        part = RunnerPart.given(name=self.name, status=PassStatus.CRASHED, exit_code=returncode)
        try:  # the environment, written before the script ran (first pass only)
            with open(environment_file(out), encoding="utf-8") as handle:
                part.update(environment=Environment.from_json(json.load(handle), "environment"))
        except (OSError, ValueError):  # (ModelError is one)
            pass
        if returncode is not None and returncode < 0:
            part.update(signal=signal.Signals(-returncode).name)
        stderr = self.tails["stderr"].text()
        if rank is not None:
            # The launcher prefixes each worker's lines with "[rank N]:"; a rank that left
            # no part is said to, whatever the others printed.
            part.update(rank=rank)
            mine = "".join(line for line in stderr.splitlines(True) if line.startswith(f"[rank{rank}]:"))
            if rank not in (self.ranks or ()):  # another node's
                stderr = (
                    f"rank {rank} (another node) left no results in {os.path.dirname(self.out)}: it did not "
                    "end in time, or that folder is not shared with its node"
                )
            else:
                stderr = mine or stderr + f"\n(rank {rank} wrote no results: it was killed or crashed)"
        last = stderr.strip().splitlines()
        error = ScriptError.given(
            type="RunnerFailure",
            message=last[-1] if last else f"runner exited with status {returncode}",
            file=None,
            line=None,
            column=None,
            traceback=stderr[-4000:],
        )
        part.update(error=error)
        return part


def _unreadable(name: PassName, raw: Any, problem: ModelError) -> RunnerPart:
    """A part this version cannot read: a crashed pass that says why (the runner is the
    same version: a bug, not the user's doing)."""
    message = f"the runner wrote a result this version cannot read: {problem}"
    code = raw.get("exit_code") if isinstance(raw, dict) else None
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    failure = ScriptError(type="RunnerFailure", message=message)
    return RunnerPart(name=name, status=PassStatus.CRASHED, exit_code=code, error=failure)


def _held_exit(out: str) -> str:
    """The note for a runner whose exit held the GIL past its bound after the results were
    written (``runner/lingering.py``'s backstop: faulthandler's stacks beside them); ""
    when there are none."""
    try:
        with open(out + LINGER_STACKS_SUFFIX, encoding="utf-8", errors="replace") as handle:
            stacks = handle.read(4000).strip()
    except OSError:
        return ""
    if not stacks:
        return ""
    return (
        "the script ended, but its process did not exit and held the GIL: ended after "
        f"{EXIT_GRACE_S + BACKSTOP_S:g} s. Its threads then (faulthandler):\n{stacks}"
    )


def _runs(pid: int, out: str) -> bool:
    """Whether ``pid`` is still the runner that writes ``out`` (not a reused pid); without
    /proc (macOS) the pid file is trusted."""
    if not os.path.isdir("/proc/self"):
        return True
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            found = handle.read()
    except OSError:  # it has ended
        return False
    return out.encode() in found


def _collect(drains: asyncio.Future[Any]) -> None:
    if drains.cancelled():
        return
    error = drains.exception()
    if error is not None and not isinstance(error, asyncio.CancelledError):
        log.warning("reading a pass's output failed: %r", error)
