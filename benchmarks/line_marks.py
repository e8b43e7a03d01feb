"""A prototype for the cpu pass: the user's lines from line marks rather than from the line
marker's per-call ranges (issue: our autograd pass at most 2x the bare body). Measured side
by side in one run, not a test; nothing in the package uses it.

Today the cpu pass's line marker (a TorchFunctionMode, ``runner/linemarker.py``) runs every
torch call made from Python inside a profiler range named after the user's line: it costs
per torch call (the mode's dispatch, the frame walk, the range). The prototype marks lines
instead: a tracer on the user's code objects only records a zero-length profiler range each
time one of the user's frames moves to a line, and each time a call returns to one, so the
ranges lie on the ops' own clock and thread, in their order, and an op is charged to the
line marked last before it on its thread. It pays per line of the user's that runs, not per
torch call; it counts the user's function entries on the way (the "passes disagree" check's
counts, which the cpu pass counts with a second hook today). ``sys.settrace`` on Python 3.10
and 3.11 (every Python call reaches it; it returns no local tracer outside the user's code),
``sys.monitoring`` on 3.12+ (line and return events enabled on the user's code objects
only).

Two ways per workload, each in a fresh interpreter (torch and its compiler stack imported
first, the body run once unprofiled before the timed one), alternating:
- ``ranges``: the cpu pass's marker (``make_line_marker`` with ``LineRanges``) and, as in
  the pass, its entry counter (``runner/entrycount.py``);
- ``marks``: the prototype tracer.
Per way: the profiled body against the bare body (timed in the same interpreter before), and
each line's share of the op time: the two ways should name the same lines with about the
same shares. Measured (docs/performance.md, "Lines from line marks"): they do, and the marks
cost 21-60x the bare body where the user's own Python loops run hot; not built. The walk
here charges each op's own time (less its children's) to its innermost range's line, or to
the line marked last before it on its thread, and ``record_function`` ranges (the
optimizer's step, the user's blocks) to no line: the real walk (``runner/attribution.py``)
less its detail (backward links, memory, torch.compile's ranges). The ranges way also marks
TorchScript calls (``ScriptCallMarker``), as the pass does.

Usage: .venv/bin/python benchmarks/line_marks.py [--runs N] [workload ...]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
from pathlib import Path

from line_source import PRELUDE, alternate

HERE = Path(__file__).resolve().parent
WORKLOADS = ("rnn_classifier", "vae", "lstm_lm")
WAYS = ("ranges", "marks")

# The prototype tracer, as source: benchmarks/autograd_body.py runs it too. Given ``files``
# (a FileClassifier) and torch, it defines ``start()``, ``stop()``, ``entries`` (code ->
# entries) and ``names`` ((code, line) -> mark name).
TRACER = r"""
fast = torch._C._profiler._RecordFunctionFast
entries, known, names = {}, {}, {}


def is_user(code):
    found = known.get(code)
    if found is None:
        found = known[code] = files.resolve(code.co_filename) is not None
    return found


def mark(code, line):
    # a zero-length profiler range: on the ops' own clock and thread, in their order
    name = names.get((code, line))
    if name is None:
        name = names[(code, line)] = f"\u00a7mark{len(names)}"
    with fast(name):
        pass


def returned(frame):
    caller = frame.f_back
    while caller is not None and not is_user(caller.f_code):
        caller = caller.f_back
    if caller is not None:
        mark(caller.f_code, caller.f_lineno)


if sys.version_info >= (3, 12):
    mon = sys.monitoring
    tool = next(t for t in (3, 4, 5) if mon.get_tool(t) is None)
    events = mon.events

    def started(code, offset):
        if not is_user(code):
            return mon.DISABLE
        entries[code] = entries.get(code, 0) + 1
        if mon.get_local_events(tool, code) == 0:
            mon.set_local_events(tool, code, events.LINE | events.PY_RETURN)
        return None

    def on_line(code, line):
        mark(code, line)

    def on_return(code, offset, value):
        returned(sys._getframe(1))

    mon.use_tool_id(tool, "line marks")
    mon.register_callback(tool, events.PY_START, started)
    mon.register_callback(tool, events.LINE, on_line)
    mon.register_callback(tool, events.PY_RETURN, on_return)

    def start():
        mon.set_events(tool, events.PY_START)

    def stop():
        mon.set_events(tool, 0)

else:

    def local(frame, event, arg):
        if event == "line":
            mark(frame.f_code, frame.f_lineno)
        elif event == "return":
            returned(frame)
        return local

    def tracer(frame, event, arg):
        if is_user(frame.f_code):
            entries[frame.f_code] = entries.get(frame.f_code, 0) + 1
            return local
        return None

    def start():
        sys.settrace(tracer)

    def stop():
        sys.settrace(None)
"""

CHILD = (
    PRELUDE
    + r"""
import collections
from bottleneck_lsp.runner.entrycount import EntryCounter
from bottleneck_lsp.runner.lineranges import LineRanges
from bottleneck_lsp.runner.linemarker import ScriptCallMarker, make_line_marker
from bottleneck_lsp.runner.paths import FileClassifier

files = FileClassifier([folder], search_dirs=sys.path)
runpy.run_path(script, run_name="__main__")  # warm
begin = time.perf_counter()
runpy.run_path(script, run_name="__main__")
bare = time.perf_counter() - begin
profiler = torch.autograd.profiler.profile()
if way == "ranges":
    ranges = LineRanges(files)
    marker = make_line_marker(torch, 0, lambda why: None, None, ranges)
    script_calls = ScriptCallMarker(torch, ranges)
    counter = EntryCounter(lambda code: files.resolve(code.co_filename) is not None)
    profiler.__enter__()
    marker.__enter__()
    script_calls.__enter__()
    begin = time.perf_counter()
    counter.enable()
    runpy.run_path(script, run_name="__main__")
    counter.disable()
    body = time.perf_counter() - begin
    script_calls.__exit__(None, None, None)
    marker.__exit__(None, None, None)
    profiler.__exit__(None, None, None)
    lines = {name: f"{os.path.basename(site[0])}:{site[1]}" for name, site in ranges.table.items()}
else:
"""
    + "\n".join("    " + line if line else "" for line in TRACER.splitlines())
    + r"""
    profiler.__enter__()
    begin = time.perf_counter()
    start()
    runpy.run_path(script, run_name="__main__")
    stop()
    body = time.perf_counter() - begin
    profiler.__exit__(None, None, None)
    lines = {name: f"{os.path.basename(code.co_filename)}:{line}" for (code, line), name in names.items()}

tree = profiler.kineto_results.experimental_event_tree()
by_line = collections.Counter()
current = {}  # thread -> the line marked last


USER_SCOPE = torch._C._profiler.RecordScope.USER_SCOPE


def scope(event):
    # a record_function range (the optimizer's step, the DataLoader's, the user's own): its
    # own time is Python's, the ops inside are the line's, as in the real walk
    fields = event.extra_fields
    return getattr(fields, "scope", None) == USER_SCOPE


def visit(event, line=None):
    # An op's own time (less its children's) is its line's: for ranges, the innermost
    # range's (ranges nest: a closure's calls inside the optimizer's step); for marks, the
    # line marked last before it on its thread (marks nest in ops too: a closure's, a
    # custom backward's).
    if event.name in lines:
        if way == "ranges":
            for child in event.children:
                visit(child, lines[event.name])
        else:
            current[event.start_tid] = lines[event.name]
        return
    children = sorted(event.children, key=lambda e: e.start_time_ns)
    if not scope(event):
        charged = line if way == "ranges" else current.get(event.start_tid)
        if charged is not None:
            by_line[charged] += event.duration_time_ns - sum(c.duration_time_ns for c in children)
        line = charged
    for child in children:
        visit(child, line)


roots = sorted(tree, key=lambda e: e.start_time_ns)
for root in roots:
    visit(root)
total = sum(by_line.values()) or 1
top = [[line, 100 * ns / total] for line, ns in by_line.most_common(6)]
print(json.dumps({"body": body, "bare": bare, "top": top}))
"""
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("workloads", nargs="*", default=list(WORKLOADS), help="ours (vae) or a script's path")
    ns = parser.parse_args()
    print(f"Python {platform.python_version()}")
    print(
        "| workload | way | bare body | profiled / bare | top lines (share of op time) "
        "| first line as ranges' |"
    )
    print("| --- | --- | --- | --- | --- | --- |")
    same = 0
    for name in ns.workloads:
        script = Path(name).resolve() if name.endswith(".py") else HERE / "workloads" / f"{name}.py"
        found = alternate(WAYS, script, ns.runs, CHILD)
        firsts = {way: [run["top"][0][0] if run["top"] else None for run in found[way]] for way in WAYS}
        agree = all(mark == firsts["ranges"][-1] for mark in firsts["marks"])
        same += agree
        for way in WAYS:
            runs = found[way]
            ratio = statistics.median(run["body"] / run["bare"] for run in runs)
            bare = statistics.median(run["bare"] for run in runs)
            top = ", ".join(f"{line} {share:.0f}%" for line, share in runs[-1]["top"]) or "(no op)"
            verdict = (
                ("yes" if agree else f"no: {', '.join(map(str, firsts['marks']))}") if way == "marks" else ""
            )
            print(f"| {script.stem} | {way} | {bare:.2f} s | {ratio:.2f}x | {top} | {verdict} |")
    print(f"\nthe marks' first line is the ranges' (last run) in every run: {same} of {len(ns.workloads)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
