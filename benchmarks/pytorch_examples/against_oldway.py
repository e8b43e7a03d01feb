"""Five pytorch/examples scripts: our whole profile against the removed tool's way, side by side.

Usage:
  python3 benchmarks/pytorch_examples/against_oldway.py EXAMPLES [--work DIR] [--venv DIR]
      [--only a,b] [--repeats 3] [--threads 1]

EXAMPLES and the generated data are those of run.py next to this file (the same five scripts,
arguments and fake data). Each example, in turn, repeats (default 3) rounds of four whole
processes, their order rotated every round:

- bare: the script alone;
- ours: `bottleneck-lsp profile --format json` as a user runs it (the default passes: sample,
  cprofile, cpu);
- ours, old way's passes: the same with `--passes cprofile,cpu`;
- old way: benchmarks/oldway.py (cProfile, then the autograd profiler, then torch's table of
  the top 15 events, in one process).

Per run: the wall time of the whole process and the peak RSS of its whole process tree (the
largest of its processes: `wait4`'s figure, which covers the children it waited for: our fork
server and the passes it forks). Medians of the rounds; the ratios are of medians measured in
the same rounds. A second table gives the autograd pass's costs on these real scripts, ours
(with the old way's passes) against the old way's: the profiled body against the script's
body (the sample pass's), torch's profiler stop, and the post-processing rate of each
(events read back per second).

The venv (default /tmp/exvenv-cpu) is made when missing with this machine's CPU build of
torch 2.13.0 and torchvision 0.28.0 (run.py's `ensure_venv(..., cpu_torch=True)`: torchvision
without its dependencies, which would pull a CUDA torch, and its two modules that register
kernels for the `torchvision::` ops emptied, since its compiled `_C` needs CUDA's libraries;
the examples use datasets, transforms and save_image, none of those ops).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from run import EXAMPLES, ensure_venv, examples_tree, make_data  # noqa: E402

OLDWAY = os.path.join(os.path.dirname(HERE), "oldway.py")
KINDS = ("bare", "ours", "ours_two", "oldway")


def timed(cmd: list[str], cwd: str, env: dict[str, str], log: str) -> dict[str, Any]:
    """Wall seconds, exit status and the process tree's peak RSS (MB) of one command."""
    with open(log, "w") as out:
        begin = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _pid, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - begin
    proc.returncode = os.waitstatus_to_exitcode(status)
    return {"wall_s": wall, "rc": proc.returncode, "peak_rss_mb": usage.ru_maxrss / 1024}


def commands(name: str, py: str, venv: str, ex: str, work: str, out: str) -> dict[str, list[str]]:
    folder, script_name, args_t, _extra = EXAMPLES[name]
    script = os.path.join(ex, folder, script_name)
    args = [a.format(work=work) for a in args_t]
    cli = [os.path.join(venv, "bin", "bottleneck-lsp"), "profile", "--format", "json", "--timeout", "900"]
    return {
        "bare": [py, script, *args],
        "ours": [*cli, "-o", os.path.join(out, "ours.json"), script, *args],
        "ours_two": [
            *cli,
            "--passes",
            "cprofile,cpu",
            "-o",
            os.path.join(out, "ours_two.json"),
            script,
            *args,
        ],
        "oldway": [py, OLDWAY, script, *args],
    }


def oldway_parts(log: str) -> dict[str, Any]:
    with open(log) as f:
        lines = [line for line in f if line.startswith("OLDWAY ")]
    return json.loads(lines[-1][len("OLDWAY ") :]) if lines else {}


def our_parts(path: str) -> dict[str, Any]:
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return {}
    passes = doc.get("passes", [])
    parts = {p["name"]: round(p.get("wall_s") or 0.0, 2) for p in passes}
    # per pass: the profiled script's own seconds, our post-processing, the events read
    inside = {
        p["name"]: {
            "wall_s": p.get("wall_s"),
            "script_wall_s": p.get("script_wall_s"),
            "postprocess_s": p.get("postprocess_s"),
            "events": p.get("event_count") or 0,
        }
        for p in passes
    }
    first = (doc.get("ranking") or {}).get("lines") or []
    top = f"{os.path.basename(first[0]['path'])}:{first[0]['line']}" if first else ""
    return {"passes_wall_s": parts, "passes": inside, "first_line": top, "status": doc.get("status")}


def run_example(
    name: str, py: str, venv: str, ex: str, work: str, out: str, repeats: int, threads: int
) -> dict[str, Any]:
    extra = dict(EXAMPLES[name][3])
    if threads:
        extra["OMP_NUM_THREADS"] = str(threads)
    env = {**os.environ, **extra}
    cwd = os.path.join(work, name)
    os.makedirs(out, exist_ok=True)
    cmds = commands(name, py, venv, ex, work, out)
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in KINDS}
    for r in range(repeats):
        order = KINDS[r % len(KINDS) :] + KINDS[: r % len(KINDS)]
        for kind in order:
            log = os.path.join(out, f"{kind}.{r}.log")
            print(f"  {name} round {r + 1}/{repeats}: {kind}", file=sys.stderr, flush=True)
            got = timed(cmds[kind], cwd, env, log)
            if kind == "oldway":
                got["parts"] = oldway_parts(log)
            elif kind.startswith("ours"):
                got["parts"] = our_parts(os.path.join(out, f"{kind}.json"))
            runs[kind].append(got)
    med = {k: statistics.median(x["wall_s"] for x in v) for k, v in runs.items()}
    rss = {k: max(x["peak_rss_mb"] for x in v) for k, v in runs.items()}
    failed = {k: [x["rc"] for x in v if x["rc"] != 0] for k, v in runs.items()}
    return {"name": name, "env": extra, "runs": runs, "median_s": med, "peak_rss_mb": rss, "failed": failed}


def table(results: list[dict[str, Any]]) -> str:
    head = (
        "| example | bare | ours (sample, cprofile, cpu) | ours: cprofile, cpu | old way | ours / old "
        "| cprofile, cpu / old | peak RSS ours | peak RSS old way | our first line |\n"
        + "| --- " * 10
        + "|\n"
    )
    rows = []
    for res in results:
        m, rss = res["median_s"], res["peak_rss_mb"]
        first = res["runs"]["ours"][-1].get("parts", {}).get("first_line", "")
        bad = {k: v for k, v in res["failed"].items() if v}
        rows.append(
            f"| {res['name']} | {m['bare']:.1f} s | {m['ours']:.1f} s | {m['ours_two']:.1f} s "
            f"| {m['oldway']:.1f} s "
            f"| **{m['ours'] / m['oldway']:.2f}x** | {m['ours_two'] / m['oldway']:.2f}x "
            f"| {rss['ours'] / 1024:.2f} GB | {rss['oldway'] / 1024:.2f} GB | `{first}`"
            + (f" (failed: {bad})" if bad else "")
            + " |"
        )
    return head + "\n".join(rows) + "\n"


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def costs(results: list[dict[str, Any]]) -> str:
    """The autograd pass on real scripts, ours against the old way's, like for like: our cpu
    pass in the run with the old way's passes (``--passes cprofile,cpu``: no memory events,
    and no event budget reached on these five) against the old way's autograd run.

    The script's body is the sample pass's ``script_wall_s`` in the default run (the script
    after start-up, sampled: within 1.1x of bare, docs/performance.md), so the ratios to it
    read slightly low. Our pass's parts: the profiled body, our post-processing (the event
    tree read back), and the rest of the pass's wall time (torch's profiler stop, which turns
    every recorded event into results, the document written, the child's exit). The old
    way's autograd run is its profiled body and torch's stop together; its post-processing
    is torch's FunctionEvents and table."""
    head = (
        "| example | body (sample pass) | ours: profiled body | / body | ours: profiler stop and rest "
        "| ours: post-processing (events/s) | ours: body + stop + post | old way: body + stop "
        "| old way: post-processing (events/s) | old way: all three | events: ours / old way |\n"
        + "| --- " * 11
        + "|\n"
    )

    def f(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.2f} s"

    def rate(n: float | None, s: float | None) -> str:
        return "n/a" if n is None or not s else f"{n / s:,.0f}"

    def good(kind: str, res: dict[str, Any]) -> list[dict[str, Any]]:
        return [r.get("parts", {}) for r in res["runs"][kind] if r["rc"] == 0]

    rows = []
    for res in results:
        samples = [p.get("passes", {}).get("sample") or {} for p in good("ours", res)]
        body = _median([s["script_wall_s"] for s in samples if s.get("script_wall_s")])
        # our cpu pass, per run that has all its parts: profiled body, post-processing, the
        # rest (the pass's whole time less those two)
        cpus = [
            c
            for c in (p.get("passes", {}).get("cpu") or {} for p in good("ours_two", res))
            if c.get("script_wall_s") and c.get("postprocess_s") is not None and c.get("wall_s")
        ]
        profiled = _median([c["script_wall_s"] for c in cpus])
        post = _median([c["postprocess_s"] for c in cpus])
        rest = _median([c["wall_s"] - c["script_wall_s"] - c["postprocess_s"] for c in cpus])
        ours_all = _median([c["wall_s"] for c in cpus])
        events = _median([c["events"] for c in cpus])
        old = good("oldway", res)
        old_run = _median([o["autograd_run_s"] for o in old if "autograd_run_s" in o])
        old_post = _median([o["postprocess_s"] for o in old if "postprocess_s" in o])
        old_events = _median([o["events"] for o in old if "events" in o])
        old_all = None if old_run is None or old_post is None else old_run + old_post
        over = "n/a" if profiled is None or not body else f"**{profiled / body:.2f}x**"
        rows.append(
            f"| {res['name']} | {f(body)} | {f(profiled)} | {over} | {f(rest)} "
            f"| {f(post)} ({rate(events, post)}) | {f(ours_all)} | {f(old_run)} "
            f"| {f(old_post)} ({rate(old_events, old_post)}) | {f(old_all)} "
            f"| {events or 0:,.0f} / {old_events or 0:,.0f} |"
        )
    return head + "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("examples", help="pytorch/examples work tree, or its bare git directory")
    ap.add_argument("--work", default="/tmp/pyexamples-oldway")
    ap.add_argument("--venv", default="/tmp/exvenv-cpu")
    ap.add_argument("--only", default="", help="comma-separated example names")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS (default 1, as run.py; 0: unset)")
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    os.makedirs(work, exist_ok=True)
    venv = os.path.abspath(a.venv)
    py = ensure_venv(venv, cpu_torch=True)
    ex = examples_tree(a.examples, work)
    make_data(py, ex, work)
    names = [n for n in EXAMPLES if not a.only or n in a.only.split(",")]
    outdir = os.path.join(work, "results", time.strftime("oldway-%Y%m%d-%H%M%S"))
    results = []
    for name in names:
        results.append(
            run_example(name, py, venv, ex, work, os.path.join(outdir, name), a.repeats, a.threads)
        )
        print(table(results[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    with open(os.path.join(outdir, "summary.json"), "w") as f:
        json.dump(results, f, indent=1)
    print(table(results))
    print(costs(results))
    print(f"details: {outdir}/<example>/ (every run's log, our JSON documents), summary.json")


if __name__ == "__main__":
    main()
