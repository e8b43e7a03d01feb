"""The memory recording's cost, measured side by side in one run (not a test): the cpu
pass with and without memory (``--passes cpu`` against ``--passes cpu,memory``),
alternating, on the realistic workloads. Per workload: medians of the profiled script's
wall time, the post-processing time, the job's wall time, the runner's peak RSS, and the
ratios memory / no memory. Prints a Markdown table.

Usage: .venv/bin/python benchmarks/memory.py [--runs N] [workload ...]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

from bottleneck_lsp.job.job import Job
from bottleneck_lsp.job.spec import JobSpec

HERE = Path(__file__).resolve().parent
WORKLOADS = ("train_small", "vae", "lstm_lm", "event_heavy")


def one(script: Path, memory: bool) -> dict[str, float]:
    passes = ("cpu", "memory") if memory else ("cpu",)
    spec = JobSpec(script=str(script), passes=passes, event_budget=0, python=sys.executable)
    begin = time.perf_counter()
    doc = asyncio.run(Job(spec).run())
    total = time.perf_counter() - begin
    part = doc.pass_named("cpu")
    assert part is not None and part.status == "ok", part
    assert (part.memory is not None) == memory
    return {
        "script": part.script_wall_s or 0.0,
        "post": part.postprocess_s or 0.0,
        "job": total,
        "rss": part.peak_rss_mb or 0.0,
        "events": float(part.event_count),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ns = parser.parse_args()
    columns = ["profiled script, s (off → on)", "post-processing, s", "job, s", "peak RSS, MB"]
    print("| workload | " + " | ".join(columns) + " | ratio script | ratio job |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in ns.workloads:
        script = HERE / "workloads" / f"{name}.py"
        runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
        one(script, False)  # warm the page cache and the fork server's imports
        for _ in range(ns.runs):
            for memory in (False, True):
                runs[memory].append(one(script, memory))

        def med(memory: bool, key: str, runs: dict[bool, list[dict[str, float]]] = runs) -> float:
            return statistics.median(r[key] for r in runs[memory])

        cells = [
            f"{med(False, k):.2f} → {med(True, k):.2f}"
            if k != "rss"
            else f"{med(False, k):.0f} → {med(True, k):.0f}"
            for k in ("script", "post", "job", "rss")
        ]
        ratio_script = med(True, "script") / med(False, "script")
        ratio_job = med(True, "job") / med(False, "job")
        print(f"| {name} | {' | '.join(cells)} | {ratio_script:.2f} | {ratio_job:.2f} |", flush=True)


if __name__ == "__main__":
    main()
