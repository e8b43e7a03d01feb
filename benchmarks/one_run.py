"""One run against the bare run, measured side by side in one run (not a test): on each
workload, alternating rounds of
- bare: ``python SCRIPT`` (its start-up, torch's import, included);
- one run: ``python -m bottleneck_lsp SCRIPT`` with the default passes, as a user runs it (its
  start, the fork server importing torch, the one run, the report), the default since issue 46;
- separate: the same with ``--separate-runs`` (one run per pass, as before).
Prints per workload the medians, the ratios to the bare run, and the peak RSS of each side (the
largest process of its tree: ``RUSAGE_CHILDREN`` of a fresh wrapper), and the windows the one
run recorded.

Usage: .venv/bin/python benchmarks/one_run.py [--rounds N] [workload ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from engine import WORKLOADS  # noqa: E402

# The wrapper: runs the command, prints its wall time and the peak RSS of its process tree
_WRAP = (
    "import resource, subprocess, sys, time\n"
    "begin = time.perf_counter()\n"
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
    "took = time.perf_counter() - begin\n"
    "if done.returncode: sys.stderr.write(done.stderr.decode()[-2000:]); sys.exit(done.returncode)\n"
    "print(took, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def timed(command: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of ``command``'s process tree."""
    out = subprocess.run([sys.executable, "-c", _WRAP, *command], capture_output=True, text=True, check=True)
    seconds, kb = out.stdout.split()
    return float(seconds), int(kb) / 1024


def profile(script: Path, *extra: str) -> tuple[float, float, dict]:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        command = [sys.executable, "-m", "bottleneck_lsp", "--format", "json", "-o", out, *extra, str(script)]
        seconds, rss = timed(command)
        with open(out, encoding="utf-8") as handle:
            return seconds, rss, json.load(handle)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("workloads", nargs="*", default=[n for n in WORKLOADS if n != "trivial"])
    ns = parser.parse_args()
    print(f"{ns.rounds} alternating rounds each; medians; peak RSS: the largest process of each side")
    print(
        f"{'workload':16} {'bare s':>7} {'one run':>8} {'ratio':>6} {'separate':>9} {'ratio':>6}"
        f" {'bare MB':>8} {'one MB':>7} {'sep MB':>7}  windows (recorded of the run)"
    )
    ratios = []
    for name in ns.workloads:
        script = WORKLOADS[name]
        sides: dict[str, list[tuple[float, float]]] = {"bare": [], "one": [], "separate": []}
        windows = ""
        for _ in range(ns.rounds):
            sides["bare"].append(timed([sys.executable, str(script)]))
            seconds, rss, doc = profile(script)
            sides["one"].append((seconds, rss))
            cpu = next(p for p in doc["passes"] if p["name"] == "cpu")
            w = cpu.get("windows") or {}
            windows = f"{w.get('count')} windows, {w.get('recorded_s', 0):.2f} s of {w.get('run_s', 0):.2f} s"
            seconds, rss, _ = profile(script, "--separate-runs")
            sides["separate"].append((seconds, rss))
        med = {k: statistics.median(s for s, _ in v) for k, v in sides.items()}
        peak = {k: statistics.median(r for _, r in v) for k, v in sides.items()}
        ratios.append(med["one"] / med["bare"])
        print(
            f"{name:16} {med['bare']:7.2f} {med['one']:8.2f} {med['one'] / med['bare']:5.2f}x"
            f" {med['separate']:9.2f} {med['separate'] / med['bare']:5.2f}x"
            f" {peak['bare']:8.0f} {peak['one']:7.0f} {peak['separate']:7.0f}  {windows}"
        )
        sys.stdout.flush()
    print(f"one run / bare: median {statistics.median(ratios):.2f}x, worst {max(ratios):.2f}x")


if __name__ == "__main__":
    began = time.perf_counter()
    main()
    print(f"({time.perf_counter() - began:.0f} s)")
