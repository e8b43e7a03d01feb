"""``python -m bottleneck_lsp.runner.launcher TORCHRUN-ARGS``: torch's launcher
(``torch.distributed.run``), made to end with whoever started it.

The launcher starts each worker in a session of its own, so ending the launcher's process
group does not reach them; the launcher itself ends them when it gets SIGTERM. Here it gets
SIGTERM when its parent (the CLI, the server) dies, however that dies (Linux), and each
worker (the runner) gets SIGTERM when the launcher dies; the job's private folder, which
its dead starter cannot remove, goes with the launcher. Standard library only, until
torch's launcher is imported.
"""

from __future__ import annotations

import os
import runpy
import shutil
import signal
import sys

from ..schema.contract import LAUNCHER_MODULE, RUNNER_FOLDER_PREFIX, RUNNER_MODULE


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def job_folder(argv: list[str]) -> str | None:
    """The job's private folder, where the workers write (the runner's ``--out``), when it is
    one (``RUNNER_FOLDER_PREFIX``, made by ``runner_folder``)."""
    try:
        out = argv[argv.index("--out", argv.index(RUNNER_MODULE)) + 1]
    except (ValueError, IndexError):
        return None
    folder = os.path.dirname(os.path.abspath(out))
    return folder if os.path.basename(folder).startswith(RUNNER_FOLDER_PREFIX) else None


def main() -> None:
    parent = os.getppid()
    folder = job_folder(sys.argv)
    _die_with_parent()
    try:
        if os.getppid() != parent:  # it died before the signal was set
            sys.exit(1)
        sys.argv = [LAUNCHER_MODULE, *sys.argv[1:]]
        runpy.run_module(LAUNCHER_MODULE, run_name="__main__", alter_sys=True)
    finally:
        if folder is not None and os.getppid() != parent:
            # Whoever started the job is gone (killed) and cannot remove its folder; the
            # workers are ended by now (torch's launcher ends them before it returns).
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
