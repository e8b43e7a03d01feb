"""The removed torch.utils.bottleneck's passes, done its way against torch's public API:
one process; cProfile over the script, then the autograd profiler over it again, then
every FunctionEvent sorted by CPU total and torch's table built from the top 15; and, as the
old tool did when ``torch.cuda.is_available()``, a third run under the autograd profiler in
CUDA mode with its own table (``--no-cuda-mode`` leaves it out, as this stand-in did before
2026-12-04; first to be run on a GPU by ``benchmarks/device/side_by_side.sh``).

Usage: python benchmarks/oldway.py [--no-cuda-mode] SCRIPT [ARGS...]
(prints timings as JSON on its last line)
"""

from __future__ import annotations

import cProfile
import inspect
import io
import json
import os
import pstats
import resource
import sys
import time


def run(code, path):  # type: ignore[no-untyped-def]
    exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})


def top_table(events):  # type: ignore[no-untyped-def]
    from torch.autograd.profiler_util import EventList

    top = sorted(events, key=lambda e: e.cpu_time_total, reverse=True)[:15]
    return EventList(top).table(row_limit=15)


def cuda_mode(torch):  # type: ignore[no-untyped-def]
    """The old tool's ``profile(use_cuda=True)``, in the spelling this torch accepts."""
    params = inspect.signature(torch.autograd.profiler.profile).parameters
    return {"use_device": "cuda"} if "use_device" in params else {"use_cuda": True}


def main() -> None:
    args = sys.argv[1:]
    with_cuda_mode = args[:1] != ["--no-cuda-mode"]
    if not with_cuda_mode:
        args = args[1:]
    path = os.path.abspath(args[0])
    sys.argv = [path, *args[1:]]  # the script's own arguments, as the old tool passed them
    sys.path[0] = os.path.dirname(path)
    begin = time.perf_counter()
    import torch

    with open(path, "rb") as handle:
        code = compile(handle.read(), path, "exec")
    imported = time.perf_counter()
    prof = cProfile.Profile()
    prof.enable()
    run(code, path)
    prof.disable()
    stream = io.StringIO()
    pstats.Stats(prof, stream=stream).sort_stats("tottime").print_stats(15)
    cprofiled = time.perf_counter()
    with torch.autograd.profiler.profile() as autograd:
        run(code, path)
    profiled = time.perf_counter()
    events = autograd.function_events
    table = top_table(events)
    done = time.perf_counter()
    print(len(table), file=sys.stderr)
    cuda_run_s = cuda_postprocess_s = 0.0
    if with_cuda_mode and torch.cuda.is_available():
        with torch.autograd.profiler.profile(**cuda_mode(torch)) as on_device:
            run(code, path)
        ran = time.perf_counter()
        print(len(top_table(on_device.function_events)), file=sys.stderr)
        cuda_run_s, cuda_postprocess_s = ran - done, time.perf_counter() - ran
    print(
        "OLDWAY "
        + json.dumps(
            {
                "import_s": imported - begin,
                "cprofile_s": cprofiled - imported,
                "autograd_run_s": profiled - cprofiled,
                "postprocess_s": done - profiled,
                "cuda_run_s": cuda_run_s,
                "cuda_postprocess_s": cuda_postprocess_s,
                "events": len(events),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
