"""Where the cpu pass's time goes, and what lines from the line marker alone would save
(issue: a cheaper autograd pass). Measured side by side in one run, not a test.

Three ways to run each realistic workload, each in a fresh interpreter (torch and its lazily
loaded compiler stack imported first, as the runner does), alternating:
- ``bare``: the script alone;
- ``stack``: today's cpu pass recording: ``torch.autograd.profiler.profile(with_stack=True)``
  (the Python tracer records every Python call) and an identity TorchFunctionMode (the line
  marker, which gives operators a call node);
- ``marker``: no Python tracer (``with_stack=False``); the TorchFunctionMode finds the
  innermost frame in the script's folder itself and wraps each torch call in a
  ``_RecordFunctionFast`` range named after that line, so the event tree names the line
  without any Python call event.

Per workload and way: medians of the profiled body, the profiler's stop, building and
walking the event tree, the tree's node count and the peak RSS; ratios marker / stack.
This measures the recording only (attribution is the same walk over fewer nodes). The
``marker`` way is what the cpu pass does since this measurement (``runner/lineranges.py``,
which also counts function entries with a cProfile counter); the cuda pass keeps ``stack``.

Usage: .venv/bin/python benchmarks/line_source.py [--runs N] [workload ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOADS = ("vae", "lstm_lm", "rnn_classifier", "train_small")
WAYS = ("bare", "stack", "marker")

# The child's start (also benchmarks/autograd_body.py's): torch and its compiler stack
# imported, the script's argv and folder set, an identity TorchFunctionMode.
PRELUDE = r"""
import json, os, resource, runpy, sys, time
import torch
import torch._dynamo  # start-up, as the runner does: not in the profiled body
from torch.overrides import TorchFunctionMode

way, script, *args = sys.argv[1:]
folder = os.path.dirname(os.path.abspath(script))
sys.argv = [script, *args]
sys.path.insert(0, folder)


class Identity(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
"""

CHILD = (
    PRELUDE
    + r"""

mine = {}
names = {}
Fast = torch._C._profiler._RecordFunctionFast


class Lines(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        frame = sys._getframe(1)
        while frame is not None:
            code = frame.f_code
            user = mine.get(code)
            if user is None:
                user = mine[code] = code.co_filename.startswith(folder)
            if user:
                break
            frame = frame.f_back
        if frame is None:
            return func(*args, **(kwargs or {}))
        key = (frame.f_code, frame.f_lasti)
        name = names.get(key)
        if name is None:
            name = names[key] = "\u00a7%d" % len(names)
        with Fast(name):
            return func(*args, **(kwargs or {}))


profiler = None if way == "bare" else torch.autograd.profiler.profile(with_stack=(way == "stack"))
mode = None if way == "bare" else (Identity() if way == "stack" else Lines())
begin = time.perf_counter()
if profiler is not None:
    profiler.__enter__()
    mode.__enter__()
runpy.run_path(script, run_name="__main__")
body = time.perf_counter() - begin
stop = walk = 0.0
nodes = 0
if profiler is not None:
    mode.__exit__(None, None, None)
    t = time.perf_counter()
    profiler.__exit__(None, None, None)
    stop = time.perf_counter() - t
    t = time.perf_counter()
    todo = list(profiler.kineto_results.experimental_event_tree())
    while todo:
        node = todo.pop()
        nodes += 1
        todo.extend(node.children)
    walk = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"body": body, "stop": stop, "walk": walk, "nodes": nodes, "rss": rss}))
"""
)


def one(
    way: str,
    script: Path,
    child: str = CHILD,
    args: list[str] | None = None,
    cwd: str | None = None,
    env: dict[str, str] | None = None,
) -> dict[str, float]:
    """Run ``child`` (Python source) for one way in a fresh interpreter: its last line's JSON.
    ``args``: the script's arguments; ``cwd``: where it runs (its folder by default);
    ``env``: added to the environment."""
    done = subprocess.run(
        [sys.executable, "-c", child, way, str(script), *(args or [])],
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=cwd or script.parent,
        env={**os.environ, "PYTHONWARNINGS": "ignore", **(env or {})},
    )
    if done.returncode != 0:
        raise SystemExit(f"{script.name} ({way}) failed:\n{done.stderr[-2000:]}")
    found: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def alternate(ways: tuple[str, ...], script: Path, rounds: int, child: str = CHILD) -> dict[str, list[Any]]:
    """``rounds`` rounds of every way in turn (``one``): each way's results, in order."""
    found: dict[str, list[Any]] = {way: [] for way in ways}
    for _ in range(rounds):
        for way in ways:
            found[way].append(one(way, script, child))
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ns = parser.parse_args()
    print(
        "| workload | bare body | body: stack / marker | stop: stack / marker | tree walk: stack / marker "
        "| nodes: stack / marker | peak RSS: stack / marker | body+stop+walk marker / stack |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in ns.workloads:
        script = HERE / "workloads" / f"{name}.py"
        runs = alternate(WAYS, script, ns.runs)

        def med(way: str, key: str, runs: dict[str, list[dict[str, float]]] = runs) -> float:
            return statistics.median(r[key] for r in runs[way])

        def pair(key: str, unit: str = " s", digits: int = 2) -> str:
            return f"{med('stack', key):,.{digits}f}{unit} / {med('marker', key):,.{digits}f}{unit}"

        total = {w: med(w, "body") + med(w, "stop") + med(w, "walk") for w in ("stack", "marker")}
        print(
            f"| {name} | {med('bare', 'body'):.2f} s | {pair('body')} | {pair('stop')} | {pair('walk')} "
            f"| {pair('nodes', '', 0)} | {pair('rss', ' MB', 0)} | {total['marker'] / total['stack']:.2f}x |"
        )


if __name__ == "__main__":
    main()
