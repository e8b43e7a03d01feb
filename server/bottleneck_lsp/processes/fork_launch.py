"""Starting a runner fork server's process, and starting it early.

The command line's own imports (asyncio, the document model, the analysis: about 0.15 s
here) and the fork server's ``import torch`` (1-3 s) need not run one after the other:
``entry.py`` calls ``early`` with the command line before importing anything heavy, and the
job's ``ForkServer.start`` adopts that process (``take``) when it asks for the same
interpreter. A server nobody adopts is killed when the command line exits (it would also end
with it: see ``runner/__main__._die_with_parent``).

Standard library only, and light: it runs before the rest of the package is imported.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ..schema.contract import FORKSERVER_MODULE, ORIGINAL_PYTHONPATH, RUNNER_FOLDER_PREFIX

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # bottleneck_lsp (this file is in processes/)


def can_fork() -> str | None:
    """Why passes cannot be forked on this platform, or None."""
    if not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
        return "this platform has no fork with descriptor passing"
    if not (sys.platform.startswith("linux") or sys.platform == "darwin"):
        return f"forking is not supported on {sys.platform}"
    return None


def find_python(python: str) -> str | None:
    """The interpreter's path as a job runs it (a bare name is looked up on PATH), or None
    when it is not an executable file."""
    found = shutil.which(python) if os.sep not in python else python
    if not found or not os.path.isfile(found) or not os.access(found, os.X_OK):
        return None
    return found


def environ(workdir: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a runner whose package is found in ``workdir``: that folder
    leads PYTHONPATH, the user's own PYTHONPATH is kept aside for the script."""
    env = dict(os.environ if base is None else base)
    original = env.get("PYTHONPATH")
    env["PYTHONPATH"] = workdir + (os.pathsep + original if original else "")
    env.pop(ORIGINAL_PYTHONPATH, None)
    if original is not None:
        env[ORIGINAL_PYTHONPATH] = original
    return env


def runner_folder() -> str:
    """A private folder holding a link to this package: it leads the runner's path."""
    workdir = tempfile.mkdtemp(prefix=RUNNER_FOLDER_PREFIX)
    os.symlink(_PACKAGE_DIR, os.path.join(workdir, _PACKAGE_DIR.name))
    return workdir


@dataclass
class Launched:
    """A fork server's process, started; ``sock`` is our end of its socket."""

    python: str
    popen: subprocess.Popen[bytes]
    sock: socket.socket
    workdir: str
    started: float  # time.perf_counter()

    def discard(self) -> None:
        """Kill it (its whole group) and remove its folder."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except OSError:
            pass
        self.popen.wait()
        self.sock.close()
        if self.popen.stderr is not None:
            self.popen.stderr.close()
        shutil.rmtree(self.workdir, ignore_errors=True)


def launch(python: str, base_env: dict[str, str] | None = None) -> Launched:
    """Start a fork server for ``python`` (raises OSError when it cannot be started)."""
    started = time.perf_counter()
    workdir = runner_folder()
    ours, theirs = socket.socketpair()
    try:
        popen = subprocess.Popen(
            [python, "-m", FORKSERVER_MODULE, "--socket", str(theirs.fileno())],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=workdir,  # not the user's folder: nothing there is imported with torch
            env=environ(workdir, base_env),
            start_new_session=True,
            pass_fds=(theirs.fileno(),),
        )
    except OSError:
        ours.close()
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    finally:
        theirs.close()
    return Launched(python, popen, ours, workdir, started)


_early: Launched | None = None


def early(args: list[str]) -> None:
    """``args``: a ``profile`` command line (after the command's name). Start the fork
    server the job will most likely ask for, now. A guess from the words alone (the script's
    own arguments are not told apart): a wrong one costs a process that is killed unused."""
    global _early
    if _early is not None or can_fork() is not None:
        return
    if any(a in ("--no-fork", "-h", "--help") or a.startswith("--nproc") for a in args):
        return
    python = sys.executable
    for i, arg in enumerate(args):  # as JobSpec's validation will find it
        if arg == "--python" and i + 1 < len(args):
            python = args[i + 1]
            break
        if arg.startswith("--python="):
            python = arg.split("=", 1)[1]
            break
    found = find_python(python)
    if found is None:
        return  # the job will say so
    try:
        _early = launch(found)
    except OSError:
        return
    atexit.register(_discard_early)


def take(python: str) -> Launched | None:
    """The early server, when it was started for ``python`` (then it is the caller's)."""
    global _early
    found, _early = _early, None
    if found is None:
        return None
    if found.python != python or found.popen.poll() is not None:
        found.discard()
        return None
    return found


def _discard_early() -> None:
    global _early
    found, _early = _early, None
    if found is not None:
        found.discard()
