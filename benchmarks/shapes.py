"""What recording input shapes costs the cpu pass's recording (``--collective-sizes``).

Each workload in a fresh interpreter (torch and its compiler stack imported first, as the
runner does), under ``torch.autograd.profiler.profile(with_stack=True)`` with and without
``record_shapes``, alternating; medians of the profiled body, the profiler's stop and the
peak RSS. Measured side by side in one run, not a test.

Usage: .venv/bin/python benchmarks/shapes.py [--runs N] [script ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ("examples/ddp_train.py", "benchmarks/workloads/vae.py", "benchmarks/workloads/lstm_lm.py")

CHILD = r"""
import json, resource, runpy, sys, time
import torch
import torch._dynamo  # start-up, as the runner does: not in the profiled body

shapes, script = sys.argv[1] == "1", sys.argv[2]
sys.argv = [script]
profiler = torch.autograd.profiler.profile(with_stack=True, record_shapes=shapes)
begin = time.perf_counter()
profiler.__enter__()
runpy.run_path(script, run_name="__main__")
body = time.perf_counter()
profiler.__exit__(None, None, None)
stop = time.perf_counter()
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"body_s": body - begin, "stop_s": stop - body, "rss_mb": rss_mb}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("scripts", nargs="*", default=list(DEFAULT))
    ns = parser.parse_args()
    print("| script | body: no shapes / shapes | stop: no / yes | peak RSS: no / yes | RSS ratio |")
    print("| --- | --- | --- | --- | --- |")
    for script in ns.scripts:
        runs: dict[str, list[dict[str, float]]] = {"0": [], "1": []}
        for _ in range(ns.runs):
            for flag in ("0", "1"):
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, flag, script],
                    capture_output=True,
                    text=True,
                    cwd=ROOT,
                    check=True,
                )
                runs[flag].append(json.loads(done.stdout.strip().splitlines()[-1]))
        med = {f: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for f, rs in runs.items()}
        off, on = med["0"], med["1"]
        body = f"{off['body_s']:.2f} s / {on['body_s']:.2f} s"
        stop = f"{off['stop_s']:.2f} s / {on['stop_s']:.2f} s"
        rss = f"{off['rss_mb']:.0f} MB / {on['rss_mb']:.0f} MB"
        print(f"| {script} | {body} | {stop} | {rss} | {on['rss_mb'] / off['rss_mb']:.2f}x |")


if __name__ == "__main__":
    main()
