"""What inductor's options the profiler turns on cost the compiled code itself (issue 47: keep
the compiled code's speed within a few percent of an unprofiled compile). Measured side by
side in one run, not a test.

The profiler sets ``trace.provenance_tracking_level = 1`` (inductor keeps each kernel's FX
nodes) and ``cpp.enable_kernel_profile = True`` (a profiler range around each C++ kernel
call, a no-op check while no profiler records) before the script runs
(``runner/provenance.py``). Each workload is a model compiled by inductor (the C++ backend
on a CPU) and trained, in a fresh interpreter per way, alternating, medians:
- ``plain``: compiled as the user's bare run compiles it;
- ``profiled``: with the profiler's two options (their environment variables), no profiler
  running: what the compiled code costs the one run outside its recording windows.
Each run compiles first (inductor's cache warm from a first, unmeasured run per way: a
profiled compile does not reuse a plain one's cached code, its options are in the key),
then times training steps. Printed: per workload, the median step of each way and their
ratio (the target: within a few percent), and the first call's time (compile from the
warm cache).

Usage: .venv/bin/python benchmarks/compiled_kernels.py [--runs N] [--steps N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

OPTIONS = {"INDUCTOR_PROVENANCE": "1", "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "1"}
WORKLOADS = {
    # many small kernels: the per-call range check weighs most here
    "small-mlp": (32, 64, 16),
    # a few large ones: what a real model's step looks like
    "wide-mlp": (1024, 512, 6),
}
BODY = """
import json, sys, time
import torch
import torch.nn as nn
batch, width, depth = {shape}
torch.manual_seed(0)
layers = []
for _ in range(depth):
    layers += [nn.Linear(width, width), nn.GELU(), nn.LayerNorm(width)]
model = nn.Sequential(*layers, nn.Linear(width, 1))
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
x = torch.randn(batch, width)

def step():
    loss = compiled(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()

begin = time.perf_counter()
step()
first = time.perf_counter() - begin
for _ in range(5):
    step()
times = []
for _ in range({steps}):
    begin = time.perf_counter()
    step()
    times.append(time.perf_counter() - begin)
times.sort()
print(json.dumps({{"first_s": first, "step_s": times[len(times) // 2]}}))
"""


def run(shape: tuple[int, int, int], steps: int, profiled: bool) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if k not in OPTIONS}
    if profiled:
        env.update(OPTIONS)
    code = BODY.format(shape=shape, steps=steps)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"the workload failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="alternating rounds per workload (default 5)")
    parser.add_argument("--steps", type=int, default=50, help="timed training steps per run (default 50)")
    ns = parser.parse_args()
    print(f"torch.compile (inductor, C++ backend): {ns.runs} alternating rounds, {ns.steps} timed steps each")
    print(
        f"{'workload':<10} {'plain step':>11} {'profiled step':>14} {'ratio':>7} "
        f"{'first call plain/profiled':>27}"
    )
    for name, shape in WORKLOADS.items():
        for profiled in (False, True):  # inductor's cache warm for both ways (unmeasured)
            run(shape, 10, profiled)
        plain: list[dict[str, float]] = []
        profiled_runs: list[dict[str, float]] = []
        for _ in range(ns.runs):
            plain.append(run(shape, ns.steps, False))
            profiled_runs.append(run(shape, ns.steps, True))
        bare = statistics.median(r["step_s"] for r in plain)
        ours = statistics.median(r["step_s"] for r in profiled_runs)
        first = (
            statistics.median(r["first_s"] for r in plain),
            statistics.median(r["first_s"] for r in profiled_runs),
        )
        print(
            f"{name:<10} {bare * 1e3:>9.2f} ms {ours * 1e3:>12.2f} ms {ours / bare:>6.3f}x "
            f"{first[0]:>12.2f} s / {first[1]:.2f} s"
        )


if __name__ == "__main__":
    main()
