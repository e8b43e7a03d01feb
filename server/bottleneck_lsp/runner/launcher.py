"""``python -m bottleneck_lsp.runner.launcher TORCHRUN-ARGS``: torch's launcher
(``torch.distributed.run``), made to end with whoever started it.

The launcher starts each worker in a session of its own, so ending the launcher's process
group does not reach them; the launcher itself ends them when it gets SIGTERM. Here it gets
SIGTERM when its parent (the CLI, the server) dies, however that dies (Linux), and each
worker (the runner) gets SIGTERM when the launcher dies. Standard library only, until
torch's launcher is imported.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys

from ..contract import LAUNCHER_MODULE


def _die_with_parent() -> None:
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def main() -> None:
    parent = os.getppid()
    _die_with_parent()
    if os.getppid() != parent:  # it died before the signal was set
        sys.exit(1)
    sys.argv = [LAUNCHER_MODULE, *sys.argv[1:]]
    runpy.run_module(LAUNCHER_MODULE, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
