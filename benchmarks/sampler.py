"""The sample pass's overhead against the bare run, side by side in one run (not a test).

Per workload, alternating bare and sampled runs, each in a fresh process that imports torch
first (as the runner does) and then times the script's body once: bare, and with the
sample pass's line sampler looking at the main thread every millisecond. Prints a Markdown
table: medians, the ratio, and what the sampler saw (looks, share of wall time sampled).

Usage: .venv/bin/python benchmarks/sampler.py [runs [signal_interval_s]]
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bottleneck_lsp.runner.paths import FileClassifier
from bottleneck_lsp.runner.sampler import ThreadSampler

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORKLOADS = {
    "train_small (nn training loop)": HERE / "workloads" / "train_small.py",
    "event_heavy (300k tiny ops)": HERE / "workloads" / "event_heavy.py",
    "python_loop (pure Python)": ROOT / "tests" / "fidelity" / "corpus" / "python_loop.py",
    "examples/train.py (demo)": ROOT / "examples" / "train.py",
}
HARNESS = """
import json, os, sys, time
import torch
import torch._dynamo
path, sampled, signal_interval = sys.argv[1], sys.argv[2] != "0", float(sys.argv[2])
sys.argv = [path]
sys.path.insert(0, os.path.dirname(path))
code = compile(open(path, "rb").read(), path, "exec")
sampler = None
if sampled:
    from bottleneck_lsp.runner.paths import FileClassifier
    from bottleneck_lsp.runner.sampler import ThreadSampler
    sampler = ThreadSampler(FileClassifier([os.path.dirname(path)]), signal_interval=signal_interval)
    sampler.start()
begin = time.perf_counter()
exec(code, {"__name__": "__main__", "__file__": path})
elapsed = time.perf_counter() - begin
out = {"body_s": elapsed}
if sampler is not None:
    sampler.stop()
    doc = sampler.document()
    out.update(ticks=doc["ticks"], sampled_s=doc["wall_s"], sampler_cpu_s=doc["sampler_cpu_s"])
print("RESULT " + json.dumps(out))
"""


def once(script: Path, signal_interval: float) -> dict[str, float]:
    """One run: bare when ``signal_interval`` is 0, else sampled with that timer interval."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "server")}
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, str(script), str(signal_interval)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=str(script.parent),
        check=True,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return dict(json.loads(line[len("RESULT ") :]))


def main(argv: list[str]) -> int:
    runs = int(argv[0]) if argv else 5
    signal_interval = float(argv[1]) if len(argv) > 1 else ThreadSampler(FileClassifier([])).signal_interval
    print(
        f"Sampler overhead: {runs} bare and {runs} sampled runs per workload, alternating; medians. "
        f"Thread looks every 1 ms, timer signal every {signal_interval * 1000:g} ms.\n"
    )
    print("| workload | bare body | sampled body | sampled / bare | looks | wall sampled | sampler CPU |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, script in WORKLOADS.items():
        bare, sampled = [], []
        for _ in range(runs):
            bare.append(once(script, 0.0))
            sampled.append(once(script, signal_interval))
        b = statistics.median(r["body_s"] for r in bare)
        s = statistics.median(r["body_s"] for r in sampled)
        ticks = statistics.median(r["ticks"] for r in sampled)
        covered = statistics.median(r["sampled_s"] / r["body_s"] for r in sampled)
        own = statistics.median(r["sampler_cpu_s"] for r in sampled)
        print(
            f"| {name} | {b:.3f} s | {s:.3f} s | **{s / b:.2f}x** | {ticks:.0f} | {covered * 100:.0f}% "
            f"| {own:.3f} s |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
