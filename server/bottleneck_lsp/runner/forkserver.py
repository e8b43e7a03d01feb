"""A fork server: ``import torch`` paid once, then one forked child per pass.

``python -m bottleneck_lsp.runner.forkserver --socket FD`` imports torch, says so on the
socket (``{"ready": ...}``), then serves requests until the socket closes. A request is one
JSON line:

- ``{"argv": [runner options]}``, sent with three file descriptors (the child's stdin,
  stdout and stderr). The server forks: the child leads a process group of its own, takes
  the three descriptors as 0, 1 and 2 and runs the pass as ``python -m
  bottleneck_lsp.runner`` would (``__main__.main``). The server answers ``{"pid": N}`` at
  once and ``{"exited": N, "status": S}`` when the child ends (S as ``subprocess`` gives
  it: negative for a signal);
- ``{"compiler_stack": true}``: load torch's compiler stack (``compilerstack.py``) now, for
  the passes forked after it (the job asks when it expects the script to need it), and with
  ``"inductor": true`` inductor's code generator too (the script calls ``torch.compile``);
  answered ``{"compiler_stack": {"import_torch_lazy_s": S, "inductor": B}}`` (with
  ``"unsafe"`` when loading it started a thread: the job then stops forking from this server);
- ``{"bye": true}``, the host's last words before it closes the socket: it lives on and
  removes its jobs' folders (without them, the server waits to see whether its host died,
  and then removes them: ``HOST_DEATH_WAIT_S``);
- anything else (not JSON, a fork request without its descriptors, over ``MAX_REQUEST``
  bytes): answered ``{"error": why}``, and the server serves on.

The server never runs anything of the user's script, never touches a CUDA device (a child
that does must not inherit an initialised one) and starts no thread. Standard library and
torch only, like the rest of the runner.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import sys
import threading
import time
from typing import Any

from ..schema.contract import RUNNER_FOLDER_PREFIX
from . import compilerstack, environment

MAX_REQUEST = 1 << 20
# The host's last words before it closes the socket (``ForkServer.close``): it lives on and
# removes its jobs' folders itself. A socket that ends without them may be a host dying: its
# descriptors close a moment before it is gone, so the server waits to see (at most this).
BYE = b'{"bye": true}'
HOST_DEATH_WAIT_S = 2.0


def _reply(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall(json.dumps(message).encode("utf-8") + b"\n")


def _status(raw: int) -> int:
    if os.WIFSIGNALED(raw):
        return -os.WTERMSIG(raw)
    return os.WEXITSTATUS(raw) if os.WIFEXITED(raw) else 1


def _hold(script: str) -> None:
    """Keep the script open for the pass's life: a forked pass's command line is the fork
    server's, so this is how ``lsof script.py`` or ``ls -l /proc/PID/fd`` finds it."""
    try:
        os.open(script, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        pass


def _reseed() -> None:
    """What a fresh interpreter would have: numpy's global random state from the OS (Python's
    ``random`` reseeds itself in a forked child; torch's default seed is fixed either way)."""
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        try:
            numpy.random.seed()
        except Exception:  # noqa: BLE001 - an odd numpy: keep its state
            pass


def _own_pages() -> None:
    """Copy every page this child shares with the server now, before the script runs (Linux
    5.14+: ``MADV_POPULATE_WRITE``). A shared page is otherwise copied at the script's first
    write to it (a reference count is a write): a few milliseconds of page faults, charged to
    whichever lines touch torch's objects first. The sample pass measures wall time per
    line, so it starts as a fresh interpreter would (about 0.15 s here); the other passes
    time Python calls and ops, which these faults barely move."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        madvise = ctypes.CDLL(None, use_errno=True).madvise
        with open("/proc/self/maps", encoding="ascii") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 5 and fields[5].startswith("[v"):
                    continue  # [vvar], [vdso], [vsyscall]
                if fields[1][:2] != "rw" or fields[1][3] != "p":
                    continue
                start, end = (int(x, 16) for x in fields[0].split("-"))
                madvise(ctypes.c_void_p(start), ctypes.c_size_t(end - start), 23)  # MADV_POPULATE_WRITE
    except (OSError, ValueError, AttributeError):
        pass  # an older kernel: pages are copied as they are written


def _child(argv: list[str], fds: list[int], closing: list[Any], server: int) -> None:
    """In the forked child: become the pass's process, run it, never return."""
    code = 70
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the pass installs its own
        for thing in closing:  # the server's ends: the socket, the selector, the wakeup pipe
            if isinstance(thing, int):
                os.close(thing)
            else:
                thing.close()
        os.setpgid(0, 0)  # its own group: stops and timeouts kill it and what it starts
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        _restore_environment()
        _reseed()
        if argv[argv.index("--pass") + 1] == "sample":
            _own_pages()
        _hold(argv[argv.index("--script") + 1])
        from .__main__ import _quick_exit, main

        _quick_exit(main(argv, parent=server, host=HOST))
    except BaseException:  # noqa: BLE001 - whatever happens, this process ends here
        import traceback

        try:
            traceback.print_exc()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - stderr may be gone
            pass
    finally:
        os._exit(code)


def _warm_runner() -> None:
    """Import once, here, what every pass would otherwise import again in its child (measured
    here): the passes' own modules (30 ms), and numpy's random module when numpy is loaded,
    which each child reseeds (``_reseed``: 7 ms when it has to import it first). Nothing of
    the script's."""

    if "numpy" in sys.modules:
        try:
            import numpy.random  # noqa: F401
        except Exception:  # noqa: BLE001 - an odd numpy: the child imports it, or not
            pass


def _freeze() -> None:
    """What is loaded now stays out of the garbage collector's passes: a collection in a
    child would otherwise write to every object's header and copy the pages they share.
    And the finalizers registered so far do not run when a child exits: they are torch's
    (each ``torch.library.Library`` takes its registrations back from the dispatcher: 134 of
    them, 30 ms in every child measured here), and this server ends without running them
    too. The script's own, registered in the child, still run."""
    import gc
    import weakref

    gc.collect()
    gc.freeze()
    for finalizer in list(getattr(weakref.finalize, "_registry", {})):
        finalizer.atexit = False


def _load_compiler_stack(inductor: bool) -> dict[str, Any]:
    assert environment.PRELOADED is not None  # set by main() before it serves
    torch, import_s, lazy_s, error = environment.PRELOADED
    loaded = False
    if torch is not None and not compilerstack.loaded():
        lazy_s = compilerstack.load()
        loaded = True
    if torch is not None and inductor and not compilerstack.has_inductor():
        lazy_s += compilerstack.load_inductor()  # one start-up figure: torch's lazy imports
        loaded = True
    if loaded:
        environment.PRELOADED = (torch, import_s, lazy_s, error)
        _freeze()
    answer: dict[str, Any] = {
        "import_torch_lazy_s": lazy_s,
        "inductor": compilerstack.has_inductor(),
    }
    if threading.active_count() > 1:
        answer["unsafe"] = f"{threading.active_count()} threads run after loading torch's compiler stack"
    if torch is not None and getattr(torch.cuda, "is_initialized", lambda: False)():
        # (not seen: its availability checks go through NVML here, as at import)
        answer["unsafe"] = (
            "loading torch's compiler stack initialised CUDA: a forked child cannot use the device"
        )
    return answer


def _answer(
    sock: socket.socket, line: bytes, fds: list[int], children: dict[int, str], closing: list[Any]
) -> None:
    """One request (see the module's docstring); one that is not understood is answered
    ``{"error": why}`` and the server serves on."""
    try:
        request = json.loads(line)
        argv = [str(a) for a in request["argv"]] if "compiler_stack" not in request else []
        if argv and (len(fds) != 3 or "--out" not in argv[:-1] or "--pass" not in argv[:-1]):
            raise ValueError(f"a fork request needs --pass, --out and 3 descriptors (got {len(fds)})")
    except (ValueError, KeyError, TypeError) as exc:
        for fd in fds:
            os.close(fd)
        _reply(sock, {"error": f"a request not understood: {exc}"})
        return
    if not argv:
        for fd in fds:
            os.close(fd)
        _reply(sock, {"compiler_stack": _load_compiler_stack(bool(request.get("inductor")))})
        return
    sys.stdout.flush()
    sys.stderr.flush()
    server = os.getpid()
    pid = os.fork()
    if pid == 0:
        _child(argv, fds, closing, server)
    try:
        os.setpgid(pid, pid)  # also here: no window in which a kill misses it
    except OSError:
        pass  # it already did (or already ended)
    for fd in fds:
        os.close(fd)
    children[pid] = os.path.dirname(os.path.abspath(argv[argv.index("--out") + 1]))
    _reply(sock, {"pid": pid})


def serve(sock: socket.socket) -> None:
    """Answer requests until the socket closes or SIGTERM comes (the host ended or died);
    then every child's group ends, and, when the host is gone, the folders of the jobs
    whose passes it forked, running or ended: nobody will read them (a living host's job
    removes its own; a host killed after a pass ended and before its job removed the
    folder left it in /tmp)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # wakes select through the wakeup fd
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    children: dict[int, str] = {}  # pid -> the folder its results go to
    ended: dict[str, None] = {}  # the folders of ended children that still exist (in order)
    received = b""  # a request's bytes so far: a stream socket may split a long one
    received_fds: list[int] = []  # its descriptors, which come with its first part
    said_bye = False
    try:
        while not _LEAVING:  # SIGTERM sets it, and wakes the select (the wakeup fd)
            for key, _ in selector.select():
                if key.fileobj is sock:
                    data, fds, _, _ = socket.recv_fds(sock, 65536, 3)
                    if not data:
                        return
                    received += data
                    received_fds += fds
                    while b"\n" in received:
                        line, received = received.split(b"\n", 1)
                        taken, received_fds = received_fds, []
                        if line.strip() == BYE:
                            said_bye = True
                            continue
                        _answer(sock, line, taken, children, [selector, sock, wake_read, wake_write])
                    if len(received) > MAX_REQUEST:
                        for fd in received_fds:
                            os.close(fd)
                        received, received_fds = b"", []
                        _reply(sock, {"error": f"a request of over {MAX_REQUEST} bytes"})
                else:
                    try:
                        os.read(wake_read, 512)
                    except BlockingIOError:
                        pass
                    while children:
                        pid, raw = os.waitpid(-1, os.WNOHANG)
                        if pid == 0:
                            break
                        folder = children.pop(pid, None)
                        if folder is not None:
                            for gone_folder in [f for f in ended if not os.path.isdir(f)]:
                                del ended[gone_folder]  # its job removed it
                            ended[folder] = None
                        _reply(sock, {"exited": pid, "status": _status(raw)})
    finally:
        import shutil

        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up runs to its end
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        if _host_gone(wait=not said_bye):  # else the jobs remove them
            for folder in {*children.values(), *ended}:
                shutil.rmtree(folder, ignore_errors=True)


def _host_gone(wait: bool) -> bool:
    """Whether the CLI or server that started us is gone; ``wait``: give a host that may be
    dying ``HOST_DEATH_WAIT_S`` to be seen gone (we are handed to another parent then)."""
    from .strays import alive

    deadline = time.monotonic() + (HOST_DEATH_WAIT_S if wait else 0.0)
    while True:
        if HOST is None or os.getppid() != HOST or not alive(HOST):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


# While torch is imported here, any CUDA availability check it makes goes through NVML,
# which does not initialise the CUDA driver: a driver initialised in this process could not
# be used by any child forked from it. The children get the variable back as it was.
NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"
_NVML_BEFORE = os.environ.get(NVML_CHECK)


def _restore_environment() -> None:
    if _NVML_BEFORE is None:
        os.environ.pop(NVML_CHECK, None)
    else:
        os.environ[NVML_CHECK] = _NVML_BEFORE


# The CLI or language server that started this fork server: it reads the passes' results
HOST: int | None = None
# SIGTERM came: ``serve`` ends at its next turn. The handler raises nothing: a host that
# dies closes the socket (or resets it) and sends SIGTERM (its death signal) a moment
# apart, and a SystemExit raised by the handler in ``serve``'s clean-up cut it short (the
# folders of the host's jobs stayed in /tmp).
_LEAVING = False


def _on_term(*_: object) -> None:
    global _LEAVING
    _LEAVING = True


def main(argv: list[str]) -> int:
    global HOST
    from .__main__ import _die_with_parent

    HOST = _die_with_parent()
    sock = socket.socket(fileno=int(argv[argv.index("--socket") + 1]))
    os.environ[NVML_CHECK] = "1"
    # torch's compiler stack only when a job asks (``{"compiler_stack": true}``): a script
    # that never builds an optimizer or calls torch.func does without its second or more.
    torch, import_s, lazy_s, error = environment.import_torch(compiler_stack=False)
    environment.PRELOADED = (torch, import_s, lazy_s, error)
    _warm_runner()
    _freeze()
    ready: dict[str, Any] = {"import_torch_s": import_s, "import_torch_lazy_s": lazy_s, "torch_error": error}
    if threading.active_count() > 1:
        ready["unsafe"] = f"{threading.active_count()} threads run after import torch: forking is unsafe"
    if torch is not None:
        try:  # through NVML (above): the job counts its passes with it, before the first one
            ready["cuda_available"] = bool(torch.cuda.is_available())
        except Exception:  # noqa: BLE001 - unknown: the first pass tells
            pass
    if torch is not None and getattr(torch.cuda, "is_initialized", lambda: False)():
        ready["unsafe"] = "importing torch initialised CUDA: a forked child cannot use the device"
    _reply(sock, {"ready": ready})
    if "unsafe" in ready:
        return 0
    # SIGTERM (also when the process that started it dies): end the children, then the
    # private folder this server runs in goes with it.
    signal.signal(signal.SIGTERM, _on_term)
    try:
        serve(sock)
    finally:
        import shutil

        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the clean-up runs to its end
        workdir = os.getcwd()
        if os.path.basename(workdir).startswith(RUNNER_FOLDER_PREFIX):
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    # No interpreter teardown (0.6-0.8 s with torch loaded, paid by every job that waits
    # for this process to end): it ran nothing of anyone's, and its children are gone.
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:  # none expected: SIGTERM only ends serve (_on_term)
        code = exc.code if isinstance(exc.code, int) else 0
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
