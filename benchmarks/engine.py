"""Engine figures, measured side by side in one run (not a test): this project against the
removed torch.utils.bottleneck's way (benchmarks/oldway.py), on three workloads.

Per workload: the bare script's wall time; this project's wall time per pass and end to
end, as a user runs it (``python -m bottleneck_lsp --passes cprofile,cpu --event-budget 0``:
the command line's start and its report included), forked from one fork server (the
default) and in fresh interpreters (``--no-fork``, the CPU pass's started while cProfile
runs); the old way's wall time (ours, fresh and old alternate; medians of three runs on the
two small workloads, one run on the others, unless --repeats says);
the runner's peak memory; post-processing throughput; the autograd pass's overhead
(profiled script body against the bare body); and the cold/warm effect of running the
body twice in one process. Prints Markdown tables with the ratios.

Usage: .venv/bin/python benchmarks/engine.py [--repeats N] [workload ...]
(``--repeats``: runs per workload, medians reported; default 3 on the two small
workloads, 1 on the others.)
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
from typing import Any

HERE = Path(__file__).resolve().parent
WORKLOADS = {
    "trivial": HERE / "workloads" / "trivial.py",
    "train_small": HERE / "workloads" / "train_small.py",
    "event_heavy": HERE / "workloads" / "event_heavy.py",
    "tiny_ops": HERE / "workloads" / "tiny_ops.py",  # event_heavy at 120,000 events
    # realistic models, in the spirit of pytorch/examples (generated data)
    "vae": HERE / "workloads" / "vae.py",
    "lstm_lm": HERE / "workloads" / "lstm_lm.py",
    "rnn_classifier": HERE / "workloads" / "rnn_classifier.py",
}
BODY = """
import sys, time, json
import torch
import torch._dynamo
path = sys.argv[1]
sys.argv = [path]
code = compile(open(path, "rb").read(), path, "exec")
times = []
for _ in range(2):
    begin = time.perf_counter()
    exec(code, {"__name__": "__main__", "__file__": path})
    times.append(time.perf_counter() - begin)
print("BODY " + json.dumps(times))
"""


def bytecode(python: str = sys.executable) -> None:
    """Our package's ``.pyc`` files, as pip writes them when it installs a wheel. An
    editable install has none, and where ``PYTHONDONTWRITEBYTECODE`` is set (this machine)
    Python never writes them: every process would compile our modules from source (40 ms
    of the command line's 1.0 s on the trivial script, measured), while torch's modules,
    installed from a wheel, come compiled. Up-to-date files are left as they are; a folder
    that cannot be written leaves the modules compiled at import, as before."""
    subprocess.run([python, "-m", "compileall", "-q", str(HERE.parent / "server")], check=False)


def wall(cmd: list[str]) -> tuple[float, str]:
    begin = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return time.perf_counter() - begin, done.stdout


def tagged(out: str, tag: str) -> Any:
    line = next(x for x in out.splitlines() if x.startswith(tag + " "))
    return json.loads(line[len(tag) + 1 :])


def cli(script: Path, *extra: str) -> tuple[float, dict[str, Any]]:
    """Our command line as a user runs it (its start, the fork server, the passes, the
    report written): wall time and the result document."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "result.json")
        command = [sys.executable, "-m", "bottleneck_lsp", "--passes", "cprofile,cpu", "--event-budget", "0"]
        seconds, _ = wall([*command, "--format", "json", "-o", out, *extra, str(script)])
        with open(out, encoding="utf-8") as handle:
            return seconds, json.load(handle)


def measure(name: str, script: Path, repeats: int) -> dict[str, Any]:
    bare = statistics.median(wall([sys.executable, str(script)])[0] for _ in range(repeats))
    body_cold, body_warm = tagged(wall([sys.executable, "-c", BODY, str(script)])[1], "BODY")
    ours: list[tuple[float, dict[str, Any]]] = []
    fresh: list[float] = []
    old: list[tuple[float, str]] = []
    for _ in range(repeats):  # alternating: a slower minute hits each side alike
        ours.append(cli(script))
        fresh.append(cli(script, "--no-fork")[0])
        old.append(wall([sys.executable, str(HERE / "oldway.py"), str(script)]))
    ours.sort(key=lambda run: run[0])
    old.sort(key=lambda run: run[0])
    ours_wall, doc = ours[len(ours) // 2]
    old_wall, old_out = old[len(old) // 2]
    cprofile, cpu = doc["passes"]
    return {
        "name": name,
        "bare": bare,
        "body_cold": body_cold,
        "body_warm": body_warm,
        "ours": ours_wall,
        "fresh": statistics.median(fresh),
        "cprofile": cprofile,
        "cpu": cpu,
        "old": old_wall,
        "old_parts": tagged(old_out, "OLDWAY"),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=0, help="runs per workload (default: 3 or 1)")
    parser.add_argument("workloads", nargs="*", help=f"among {', '.join(WORKLOADS)} (default: all)")
    ns = parser.parse_args()
    bytecode()
    unknown = [n for n in ns.workloads if n not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s): {', '.join(unknown)}")
    rows = [
        measure(n, WORKLOADS[n], ns.repeats or (3 if n in ("trivial", "train_small") else 1))
        for n in ns.workloads or list(WORKLOADS)
    ]
    print(
        "| workload | bare | ours: cprofile pass | ours: cpu pass | ours end to end (forked) "
        "| old way | ours / old | fresh interpreters (--no-fork) | fresh / old |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(
            f"| {r['name']} | {r['bare']:.2f} s | {r['cprofile']['wall_s']:.2f} s "
            f"| {r['cpu']['wall_s']:.2f} s | {r['ours']:.2f} s | {r['old']:.2f} s "
            f"| **{r['ours'] / r['old']:.2f}x** | {r['fresh']:.2f} s "
            f"| {r['fresh'] / r['old']:.2f}x |"
        )
    print()
    print(
        "| workload | events | post-processing: ours | events/s ours "
        "| events/s old way (FunctionEvents + table) | ratio | peak RSS ours (cpu pass) | peak RSS old way |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        cpu, old = r["cpu"], r["old_parts"]
        ours_rate = cpu["event_count"] / cpu["postprocess_s"] if cpu["postprocess_s"] else 0.0
        old_rate = old["events"] / old["postprocess_s"] if old["postprocess_s"] else 0.0
        ratio = ours_rate / old_rate if old_rate else 0.0
        print(
            f"| {r['name']} | {cpu['event_count']} | {cpu['postprocess_s']:.2f} s | {ours_rate:,.0f} "
            f"| {old_rate:,.0f} | {ratio:.1f}x | {cpu['peak_rss_mb']:.0f} MB | {old['peak_rss_mb']:.0f} MB |"
        )
    print()
    print(
        "| workload | start-up (import torch + lazy, once) | body cold | body warm | cold / warm "
        "| cpu pass body (profiled) | autograd overhead (profiled / bare warm body) "
        "| cpu pass: post-processing | cpu pass: the rest (profiler stop, writing) | peak RSS cpu pass |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        start = r["cpu"]["startup"]
        startup = start["import_torch_s"] + start["import_torch_lazy_s"]
        profiled = r["cpu"]["script_wall_s"]
        print(
            f"| {r['name']} | {startup:.2f} s | {r['body_cold']:.3f} s | {r['body_warm']:.3f} s "
            f"| {r['body_cold'] / r['body_warm']:.1f}x | {profiled:.3f} s "
            f"| {profiled / r['body_warm']:.1f}x | {r['cpu']['postprocess_s']:.2f} s "
            f"| {r['cpu']['wall_s'] - profiled - r['cpu']['postprocess_s']:.2f} s "
            f"| {r['cpu']['peak_rss_mb']:.0f} MB |"
        )


if __name__ == "__main__":
    main()
