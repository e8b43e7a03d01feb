"""The host's handle on a runner fork server (``runner/forkserver.py``).

One server per interpreter: it imports torch once, and every pass forked from it starts
with torch loaded. The CLI starts one per job; the language server may keep one warm
between jobs (``lsp/warm.py``). Where forking is not available or not safe, ``start``
raises ``ForkServerError`` and the job starts a fresh process per pass, as before.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from typing import Any

from .fork_launch import can_fork, environ, launch, runner_folder, take
from .runner_process import Reader, kill_group

__all__ = ["ForkServer", "ForkServerError", "can_fork", "environ", "runner_folder"]
READY_TIMEOUT_S = 300.0  # import torch on a cold disk, a network file system
GONE_TIMEOUT_S = 5.0
# A fork takes milliseconds; a server that has not answered by then is stuck (frozen, or
# its one thread blocked): the pass starts its own interpreter, and no later one asks it
SPAWN_TIMEOUT_S = 60.0
log = logging.getLogger(__name__)


class ForkServerError(Exception):
    """No fork server: why, in a sentence (the job then starts a process per pass)."""


class ForkedProcess:
    """A pass forked by the server: what ``runner_process.RunnerProcess`` needs of a process."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._done: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def wait(self) -> int:
        return await asyncio.shield(self._done)

    def ended(self, status: int) -> None:
        if self.returncode is None:
            self.returncode = status
            self._done.set_result(status)


class _Adopted:
    """The fork server's process (started with ``subprocess``, maybe before the event loop
    was): what ``asyncio.subprocess.Process`` offers of it here."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self.popen = popen
        self.pid = popen.pid

    @property
    def returncode(self) -> int | None:
        return self.popen.poll()

    async def wait(self) -> int:
        while self.popen.poll() is None:
            await asyncio.sleep(0.01)
        return self.popen.returncode


def _kill_forked(request: asyncio.Future[dict[str, Any]] | None) -> None:
    """The child a fork request's answer named, when nobody will run it now."""
    if request is None or not request.done() or request.cancelled() or request.exception() is not None:
        return
    child = request.result().get("child")
    if isinstance(child, ForkedProcess):
        kill_group(child.pid, signal.SIGKILL)


class ForkServer:
    """A started fork server (see the module's docstring)."""

    def __init__(self, proc: _Adopted, sock: socket.socket, workdir: str) -> None:
        self.proc = proc
        self.sock = sock
        self.workdir = workdir  # on the passes' sys.path, taken off it before the script runs
        self.python = ""
        self.startup: dict[str, Any] = {}
        self.ready_s = 0.0
        self._lock = asyncio.Lock()  # one request in flight: its reply names its pid
        self._pending: asyncio.Future[dict[str, Any]] | None = None
        self._children: dict[int, ForkedProcess] = {}
        self._buffer = b""
        self._reader: asyncio.Task[None] | None = None
        self._stderr_task: asyncio.Future[None] | None = None
        self._stderr = bytearray()
        self.gone = False
        self.on_lost: Callable[[], None] | None = None  # told once, when its socket ends (it died, or closed)
        self._asked = (False, False)  # (the stack, inductor) once asked for: a failed import is not retried

    @classmethod
    async def start(cls, python: str, base_env: dict[str, str] | None = None) -> ForkServer:
        """Start one for ``python`` and wait until torch is imported (``READY_TIMEOUT_S``)."""
        reason = can_fork()
        if reason is not None:
            raise ForkServerError(reason)
        launched = take(python) if base_env is None else None  # started early (processes/fork_launch.py)
        if launched is None:
            try:
                launched = launch(python, base_env)
            except OSError as exc:
                raise ForkServerError(f"cannot start {python}: {exc.strerror or exc}") from None
        begin = launched.started
        launched.sock.setblocking(False)
        server = cls(_Adopted(launched.popen), launched.sock, launched.workdir)
        server.python = python
        assert launched.popen.stderr is not None
        stderr = os.dup(launched.popen.stderr.fileno())
        launched.popen.stderr.close()
        # Waiting for the reply before reading: an early server may have sent it already.
        server._pending = asyncio.get_running_loop().create_future()
        server._reader = asyncio.ensure_future(server._read())
        try:
            server._stderr_task = asyncio.ensure_future(server._keep_stderr(await _reader(stderr)))
            reply = await asyncio.wait_for(asyncio.shield(server._pending), READY_TIMEOUT_S)
        except (asyncio.TimeoutError, ForkServerError) as exc:
            await server.close()
            tail = server._stderr.decode("utf-8", "replace").strip().splitlines()
            why = str(exc) or f"not ready after {READY_TIMEOUT_S:.0f} s"
            raise ForkServerError(why + (f" ({tail[-1]})" if tail else "")) from None
        except BaseException:
            await server.close()
            raise
        ready = reply.get("ready", {})
        if "unsafe" in ready:
            await server.close()
            raise ForkServerError(str(ready["unsafe"]))
        server.startup = ready
        server.ready_s = time.perf_counter() - begin
        return server

    async def _keep_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self._stderr += chunk
            del self._stderr[:-8192]

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                data = await loop.sock_recv(self.sock, 65536)
                if not data:
                    break
                self._buffer += data
                while b"\n" in self._buffer:
                    line, self._buffer = self._buffer.split(b"\n", 1)
                    self._on_reply(json.loads(line))
        except (OSError, ValueError) as exc:
            log.warning("fork server: %r", exc)
        finally:
            await self._lost()

    def _on_reply(self, reply: dict[str, Any]) -> None:
        if "exited" in reply:
            child = self._children.pop(int(reply["exited"]), None)
            if child is not None:
                child.ended(int(reply["status"]))
        elif self._pending is None or self._pending.done():
            if "pid" in reply:  # forked for a request that was given up (its job stopped)
                kill_group(int(reply["pid"]), signal.SIGKILL)
        else:
            if "pid" in reply:
                # Known from this moment: its exit may come in the same read, before the
                # request's coroutine resumes (it was lost then, and its job waited for ever)
                child = ForkedProcess(int(reply["pid"]))
                self._children[child.pid] = child
                reply = {**reply, "child": child}
            self._pending.set_result(reply)

    async def _lost(self) -> None:
        """The server is gone (closed, or died): what it had forked goes too."""
        self.gone = True
        told, self.on_lost = self.on_lost, None
        if told is not None:
            try:
                told()
            except Exception:  # its children must go whatever the hook does
                log.exception("fork server: on_lost")
        if self._pending is not None and not self._pending.done():
            self._pending.set_exception(ForkServerError("the fork server ended"))
            # retrieved here too: a spawn cancelled while it waited (a restarted job) no
            # longer awaits it, and asyncio would print "exception was never retrieved"
            self._pending.exception()
        children, self._children = self._children, {}
        for pid in children:
            kill_group(pid, signal.SIGKILL)
        try:
            for pid, child in children.items():
                deadline = time.monotonic() + GONE_TIMEOUT_S
                while _group_alive(pid) and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                child.ended(-signal.SIGKILL)
        finally:  # cancelled meanwhile (``close``): their jobs must not wait for ever
            for child in children.values():
                child.ended(-signal.SIGKILL)

    async def spawn(self, options: list[str]) -> tuple[ForkedProcess, Reader, Reader]:
        """Fork a runner with these options (``RunnerArgs.options``); its stdout and stderr."""
        async with self._lock:
            if self.gone:
                raise ForkServerError("the fork server ended")
            out_r, out_w = os.pipe()
            err_r, err_w = os.pipe()
            null = os.open(os.devnull, os.O_RDONLY)
            self._pending = asyncio.get_running_loop().create_future()
            try:
                message = json.dumps({"argv": options}).encode("utf-8") + b"\n"
                try:
                    sent = socket.send_fds(self.sock, [message], [null, out_w, err_w])
                    if sent < len(message):  # a long command line: the rest after it
                        await asyncio.get_running_loop().sock_sendall(self.sock, message[sent:])
                except OSError:
                    self.gone = True  # its socket is broken: no later pass is sent to it
                    raise
                try:  # (given up, the future is cancelled: a late child is killed, _on_reply)
                    reply = await asyncio.wait_for(self._pending, SPAWN_TIMEOUT_S)
                except asyncio.TimeoutError:
                    self.gone = True
                    raise ForkServerError(
                        f"the fork server did not answer a fork request in {SPAWN_TIMEOUT_S:.0f} s"
                    ) from None
                if "error" in reply:
                    raise ForkServerError(str(reply["error"]))
            except BaseException:
                os.close(out_r)
                os.close(err_r)
                _kill_forked(self._pending)  # forked, then given up (its job stopped)
                raise
            finally:
                for fd in (null, out_w, err_w):
                    os.close(fd)
            child: ForkedProcess = reply["child"]
        return child, await _reader(out_r), await _reader(err_r)

    @property
    def has_compiler_stack(self) -> bool:
        return bool(self.startup.get("import_torch_lazy_s"))

    @property
    def has_inductor(self) -> bool:
        return bool(self.startup.get("inductor"))

    async def load_compiler_stack(self, inductor: bool = False) -> float:
        """Have the server load torch's compiler stack now, for the passes forked after it
        (see ``runner/compilerstack.py``), and inductor's code generator with it when the
        script calls ``torch.compile``; the seconds it took there (0.0: already loaded)."""
        asked_stack, asked_inductor = self._asked
        if (self.has_compiler_stack or asked_stack) and (self.has_inductor or asked_inductor or not inductor):
            return 0.0
        self._asked = (True, asked_inductor or inductor)
        async with self._lock:
            if self.gone:
                raise ForkServerError("the fork server ended")
            self._pending = asyncio.get_running_loop().create_future()
            try:
                request = {"compiler_stack": True, "inductor": inductor}
                self.sock.sendall(json.dumps(request).encode("utf-8") + b"\n")
            except OSError:
                self.gone = True
                raise
            try:  # importing it takes seconds; as long as torch's own import at most
                reply = (await asyncio.wait_for(self._pending, READY_TIMEOUT_S)).get("compiler_stack", {})
            except asyncio.TimeoutError:
                self.gone = True
                why = "the fork server did not finish loading torch's compiler stack"
                why += f" in {READY_TIMEOUT_S:.0f} s"
                raise ForkServerError(why) from None
        if "unsafe" in reply:
            self.gone = True  # nothing more is forked from it
            raise ForkServerError(str(reply["unsafe"]))
        seconds = float(reply.get("import_torch_lazy_s", 0.0))
        self.startup["import_torch_lazy_s"] = seconds
        self.startup["inductor"] = bool(reply.get("inductor"))
        return seconds

    def rss_mb(self) -> float | None:
        """The server's resident memory (Linux), what keeping it costs."""
        try:
            with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as handle:
                for line in handle:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except (OSError, ValueError, IndexError):
            pass
        return None

    def ended_how(self) -> str | None:
        """How its process ended ("killed by signal 9", "exit status 1"); None until reaped."""
        status = self.proc.returncode
        if status is None:
            return None
        return f"killed by signal {-status}" if status < 0 else f"exit status {status}"

    def kill(self) -> None:
        """Last resort, synchronous (at exit, on SIGTERM): the server's whole group at once,
        and its folder, which a killed server cannot remove itself."""
        if self.proc.returncode is None:  # not reaped: its pid is still its own
            kill_group(self.proc.pid, signal.SIGKILL)
        shutil.rmtree(self.workdir, ignore_errors=True)

    async def close(self) -> None:
        """End the server and everything it forked; its folder goes."""
        if self._reader is not None:
            self._reader.cancel()  # then what it forked goes (``_lost``)
            await asyncio.gather(self._reader, return_exceptions=True)
        try:  # we live on and remove our jobs' folders: it need not wait to see us gone
            self.sock.send(b'{"bye": true}\n')
        except OSError:
            pass
        self.sock.close()  # the server reads the end of its socket and exits
        try:
            await asyncio.wait_for(self.proc.wait(), GONE_TIMEOUT_S)
        except asyncio.TimeoutError:
            kill_group(self.proc.pid, signal.SIGKILL)
            await self.proc.wait()
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)


async def _reader(fd: int) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 20)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd, "rb", 0))
    return reader


def _group_alive(pid: int) -> bool:
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
