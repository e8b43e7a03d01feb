"""Forked children run as they would without the profiler: a pool worker has the default
SIGTERM, the real os._exit and no profile hook; a bare os.fork() child that runs on to
the end of the script exits with its own status."""

import multiprocessing
import os
import signal
import sys
import types

import torch


def worker_state(_: int) -> str:
    default_term = signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    real_exit = isinstance(os._exit, types.BuiltinFunctionType)
    hook = sys.getprofile() is not None
    monitoring = getattr(sys, "monitoring", None)  # Python 3.12+: cProfile is a tool there
    if monitoring is not None:
        hook = hook or any(monitoring.get_events(tool) for tool in range(6) if monitoring.get_tool(tool))
    return f"sigterm default={default_term} real _exit={real_exit} profile hook={hook}"


def main() -> None:
    with multiprocessing.get_context("fork").Pool(1) as pool:
        print("pool worker:", pool.map(worker_state, [0])[0])
    child = os.fork()
    if child == 0:
        sys.exit(3)  # the child leaves through the rest of the script, as plain Python's would
    _, status = os.waitpid(child, 0)
    print("forked child exit code:", os.waitstatus_to_exitcode(status))
    x = torch.randn(300, 300)
    for _ in range(30):
        x = torch.tanh(x @ x)  # HOT


if __name__ == "__main__":
    main()
