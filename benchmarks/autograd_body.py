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
- ``+ranges``: the cpu pass's line marker instead (``linemarker.make_line_marker`` with
  ``LineRanges``: the innermost frame of the script's folder, a ``_RecordFunctionFast``
  range named after its line around each call);
- ``+cProfile counter``: and a cProfile profiler without timing table counting the user's
  function entries (for the "passes disagree" check), the cpu pass's counter before
  session 26 and still its counter on Python 3.10 and 3.11;
- ``cpu pass``: ``+ranges`` and the pass's own counter (``runner/entrycount.py``:
  ``sys.monitoring`` on 3.12 and later, where it skips code that is not the user's; the
  same cProfile counter before): the cpu pass's instruments, all of them;
- ``+line tracer`` (``--ways`` adds it; it adds to ``profiler``): instead of the mode and
  the counter, the prototype of ``line_marks.py`` (which also checks that it names the same
  lines): a tracer on the user's code that marks each line the user's frames move to with a
  zero-length profiler range, and counts their function entries. It pays per line of the
  user's that runs, not per torch call.

Per way: the body (the profiler's stop not included) against the bare body, and the cost
per torch call (the marker's count) over the way it adds to. Run it with each interpreter
to compare (``/path/to/python3.12 benchmarks/autograd_body.py``: torch and this package
installed there).

Usage: .venv/bin/python benchmarks/autograd_body.py [--runs N] [workload ...]

A workload is one of ours (``vae``) or a script's path, run with ``--args`` (its arguments,
one string, split as a shell does), ``--cwd`` and ``--env NAME=VALUE`` (repeatable): a real
script, e.g. pytorch/examples' ``mnist_rnn/main.py --epochs 1`` in its work folder.
"""

from __future__ import annotations

import argparse
import platform
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from line_marks import TRACER
from line_source import PRELUDE, one

HERE = Path(__file__).resolve().parent
WORKLOADS = ("vae", "lstm_lm", "rnn_classifier")
WAYS = ("bare", "profiler", "+mode", "+ranges", "+cProfile counter", "cpu pass")
# --ways may add the counters alone, without profiler or marker: their own cost, less noisy
ALONE = ("cProfile counter alone", "counter alone")
LINE_TRACER = "+line tracer"
ADDS_TO = {"profiler": "bare", "+mode": "profiler", "+ranges": "+mode", "+cProfile counter": "+ranges"}
ADDS_TO.update({"cpu pass": "+ranges", ALONE[0]: "bare", ALONE[1]: "bare", LINE_TRACER: "profiler"})

CHILD = (
    PRELUDE
    + r"""
import cProfile, contextlib
from bottleneck_lsp.runner.entrycount import EntryCounter
from bottleneck_lsp.runner.lineranges import LineRanges
from bottleneck_lsp.runner.linemarker import make_line_marker
from bottleneck_lsp.runner.paths import FileClassifier

runpy.run_path(script, run_name="__main__")  # warm: every way times its second body
stack = contextlib.ExitStack()
marker = None
if way not in ("bare", "cProfile counter alone", "counter alone"):
    stack.enter_context(torch.autograd.profiler.profile())
if way == "+mode":
    stack.enter_context(Identity())
counter = None
files = FileClassifier([folder], search_dirs=sys.path)
if way in ("+ranges", "+cProfile counter", "cpu pass"):
    ranges = LineRanges(files)
    marker = make_line_marker(torch, 0, lambda why: None, None, ranges)
    stack.enter_context(marker)
if way in ("+cProfile counter", "cProfile counter alone"):
    counter = cProfile.Profile(subcalls=False, builtins=False)
elif way in ("cpu pass", "counter alone"):
    counter = EntryCounter(lambda code: files.resolve(code.co_filename) is not None)
tracing = way == "+line tracer"
if tracing:
"""
    + "\n".join("    " + line if line else "" for line in TRACER.splitlines())
    + r"""
begin = time.perf_counter()
if counter is not None:
    counter.enable()
if tracing:
    start()
runpy.run_path(script, run_name="__main__")
if tracing:
    stop()
if counter is not None:
    counter.disable()
body = time.perf_counter() - begin
calls = marker.calls if marker is not None else 0
stack.close()
print(json.dumps({"body": body, "calls": calls}))
"""
)


def torch_version() -> str:
    done = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True
    )
    return done.stdout.strip() or "?"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--ways",
        default=",".join(WAYS),
        help=f"comma-separated, bare first; also: {', '.join((*ALONE, LINE_TRACER))}",
    )
    parser.add_argument("--args", default="", help="the script's arguments (a script's path given)")
    parser.add_argument("--cwd", default=None, help="where the script runs (default: its folder)")
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the script")
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS))
    ns = parser.parse_args()
    env = dict(item.split("=", 1) for item in ns.env)
    ways = ["bare", *(w for w in ns.ways.split(",") if w and w != "bare")]
    unknown = [w for w in ways if w not in (*WAYS, *ALONE, LINE_TRACER)]
    if unknown:
        parser.error(f"--ways: unknown {', '.join(unknown)}")
    missing = [f"{w} needs {ADDS_TO[w]}" for w in ways[1:] if ADDS_TO[w] not in ways]
    if missing:
        parser.error(f"--ways: {'; '.join(missing)}")
    print(f"Python {platform.python_version()}, torch {torch_version()}")
    heads = " | ".join(f"{way} / bare" for way in ways[1:])
    steps = " | ".join(f"{way}: us per call" for way in ways[1:])
    print(f"| workload | bare body | torch calls | {heads} | {steps} |")
    print("| --- | --- | --- |" + " --- |" * (2 * (len(ways) - 1)))
    for name in ns.workloads:
        given = name.endswith(".py")
        script = Path(name).resolve() if given else HERE / "workloads" / f"{name}.py"
        args = shlex.split(ns.args) if given else []
        runs: dict[str, list[float]] = {way: [] for way in ways}
        calls = 0.0
        for _ in range(ns.runs):
            for way in ways:
                found = one(way, script, CHILD, args, ns.cwd if given else None, env)
                runs[way].append(found["body"])
                calls = max(calls, found["calls"])
        body = {way: statistics.median(times) for way, times in runs.items()}
        ratios = " | ".join(f"{body[way] / body['bare']:.2f}x" for way in ways[1:])
        per_call = " | ".join(
            f"{(body[way] - body[ADDS_TO[way]]) / calls * 1e6:+.1f}" if calls else "-" for way in ways[1:]
        )
        label = f"{script.parent.name}/{script.name}" if given else name
        print(f"| {label} | {body['bare']:.2f} s | {calls:,.0f} | {ratios} | {per_call} |")


if __name__ == "__main__":
    main()
