"""What the cpu pass's profiled body costs, part by part (issue: our autograd pass at most 2x
the bare body). Measured side by side in one run, not a test.

Each realistic workload runs in a fresh interpreter per way (torch and its lazily loaded
compiler stack imported first, as the runner does; the body run once unprofiled first, so
that every way times a warm body), alternating, medians of the runs:
- ``bare``: the body alone;
- ``profiler``: inside ``torch.autograd.profiler.profile()`` (no Python tracer): what the
  old way's autograd pass records;
- ``+mode``: and an identity TorchFunctionMode, which every torch call made from Python
  then passes through (the least any line marker costs);
- ``+ranges``: the cpu pass's line marker instead (``passes.make_line_marker`` with
  ``LineRanges``: the innermost frame of the script's folder, a ``_RecordFunctionFast``
  range named after its line around each call);
- ``cpu pass``: and the cProfile counter that counts the user's function entries (for the
  "passes disagree" check): the cpu pass's instruments, all of them.

Per way: the body (the profiler's stop not included) against the bare body, and the cost
per torch call (the marker's count) over the previous way.

Usage: .venv/bin/python benchmarks/autograd_body.py [--runs N] [workload ...]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
from pathlib import Path

from line_source import PRELUDE, one

HERE = Path(__file__).resolve().parent
WORKLOADS = ("vae", "lstm_lm", "rnn_classifier")
WAYS = ("bare", "profiler", "+mode", "+ranges", "cpu pass")

CHILD = (
    PRELUDE
    + r"""
import cProfile, contextlib
from bottleneck_lsp.runner.lineranges import LineRanges
from bottleneck_lsp.runner.passes import make_line_marker
from bottleneck_lsp.runner.paths import FileClassifier

runpy.run_path(script, run_name="__main__")  # warm: every way times its second body
stack = contextlib.ExitStack()
marker = None
if way != "bare":
    stack.enter_context(torch.autograd.profiler.profile())
if way == "+mode":
    stack.enter_context(Identity())
if way in ("+ranges", "cpu pass"):
    ranges = LineRanges(FileClassifier([folder], search_dirs=sys.path))
    marker = make_line_marker(torch, 0, lambda why: None, None, ranges)
    stack.enter_context(marker)
counter = cProfile.Profile(subcalls=False, builtins=False) if way == "cpu pass" else None
begin = time.perf_counter()
if counter is not None:
    counter.enable()
runpy.run_path(script, run_name="__main__")
if counter is not None:
    counter.disable()
body = time.perf_counter() - begin
calls = marker.calls if marker is not None else 0
stack.close()
print(json.dumps({"body": body, "calls": calls}))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ns = parser.parse_args()
    heads = " | ".join(f"{way} / bare" for way in WAYS[1:])
    steps = " | ".join(f"{way}: us per call" for way in WAYS[1:])
    print(f"| workload | bare body | torch calls | {heads} | {steps} |")
    print("| --- | --- | --- |" + " --- |" * (2 * (len(WAYS) - 1)))
    for name in ns.workloads:
        script = HERE / "workloads" / f"{name}.py"
        runs: dict[str, list[float]] = {way: [] for way in WAYS}
        calls = 0.0
        for _ in range(ns.runs):
            for way in WAYS:
                found = one(way, script, CHILD)
                runs[way].append(found["body"])
                calls = max(calls, found["calls"])
        body = {way: statistics.median(times) for way, times in runs.items()}
        ratios = " | ".join(f"{body[way] / body['bare']:.2f}x" for way in WAYS[1:])
        per_call = " | ".join(
            f"{(body[way] - body[before]) / calls * 1e6:+.1f}" if calls else "-"
            for before, way in itertools.pairwise(WAYS)
        )
        print(f"| {name} | {body['bare']:.2f} s | {calls:,.0f} | {ratios} | {per_call} |")


if __name__ == "__main__":
    main()
