"""The removed torch.utils.bottleneck's passes, done its way against torch's public API:
one process; cProfile over the script, then the autograd profiler over it again, then
every FunctionEvent sorted by CPU total and torch's table built from the top 15.

Usage: python benchmarks/oldway.py SCRIPT [ARGS...]   (prints timings as JSON on the last line)
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import resource
import sys
import time


def run(code, path):  # type: ignore[no-untyped-def]
    exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})


def main() -> None:
    path = os.path.abspath(sys.argv[1])
    sys.argv = [path, *sys.argv[2:]]  # the script's own arguments, as the old tool passed them
    sys.path[0] = os.path.dirname(path)
    begin = time.perf_counter()
    import torch
    from torch.autograd.profiler_util import EventList

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
    top = sorted(events, key=lambda e: e.cpu_time_total, reverse=True)[:15]
    table = EventList(top).table(row_limit=15)
    done = time.perf_counter()
    print(len(table), file=sys.stderr)
    print(
        "OLDWAY "
        + json.dumps(
            {
                "import_s": imported - begin,
                "cprofile_s": cprofiled - imported,
                "autograd_run_s": profiled - cprofiled,
                "postprocess_s": done - profiled,
                "events": len(events),
                "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            }
        )
    )


if __name__ == "__main__":
    main()
