"""Fidelity checker: the engine's hotspots against measured ground truth, per script.

For each script of ``corpus/``: profile it with the engine (the CPU pass, or the
cProfile pass's line sampler for ``# fidelity: pass=cprofile``), time its planted lines
without any profiler (``timing.py``), and compare:
- top line right: the engine's top line is the planted line with the most measured time;
- top-3 recall: planted lines among the engine's top 3 lines (of at most 3 planted);
- share error: |reported share - measured share| in percentage points, per planted line.

Usage: ``python tests/fidelity/checker.py [SCRIPT ...]`` prints a Markdown table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bottleneck_lsp.jobs import Job, JobSpec

CORPUS = Path(__file__).resolve().parent / "corpus"
TIMING = Path(__file__).resolve().parent / "timing.py"
PLANT = re.compile(r"#.*\bPLANT:(\w+)")
PASS = re.compile(r"#\s*fidelity:.*\bpass=(\w+)")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
RUNS = 3  # timing runs and profiled runs per script, interleaved; medians are compared
EXPECT_CALL_SITE = "expect=call-site"  # planted lines the profiler cannot see (TorchScript)


@dataclass
class Planted:
    label: str
    file: str
    line: int
    measured_share: float = 0.0
    reported_share: float = 0.0
    exact: bool = True
    measured_runs: list[float] = field(default_factory=list)  # for the record, when one fails
    reported_runs: list[float] = field(default_factory=list)

    @property
    def error_pp(self) -> float:
        return abs(self.reported_share - self.measured_share) * 100


@dataclass
class Outcome:
    script: str
    pass_name: str
    planted: list[Planted] = field(default_factory=list)
    reported_top: list[tuple[str, int, float]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def expected_top(self) -> Planted:
        return max(self.planted, key=lambda p: p.measured_share)

    @property
    def top_right(self) -> bool:
        if not self.reported_top:
            return False
        file, line, _ = self.reported_top[0]
        return (file, line) == (self.expected_top.file, self.expected_top.line)

    @property
    def recall(self) -> float:
        wanted = sorted(self.planted, key=lambda p: p.measured_share, reverse=True)[:3]
        top = {(f, ln) for f, ln, _ in self.reported_top[:3]}
        return sum((p.file, p.line) in top for p in wanted) / len(wanted)


def planted_lines(script: Path) -> list[Planted]:
    found = []
    for path in sorted(script.parent.rglob("*.py")):
        if path.parent == script.parent and path != script:
            continue  # other corpus scripts
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            match = PLANT.search(text)
            if match:
                found.append(Planted(match.group(1), str(path), number))
    # helper folders are shared: keep only labels this script measures or plants itself
    own = set(re.findall(r"#.*\b(?:PLANT|MEASURE):(\w+)", script.read_text(encoding="utf-8")))
    return [p for p in found if p.label in own]


def measure_lines(script: Path) -> dict[str, int]:
    found = {}
    for number, text in enumerate(script.read_text(encoding="utf-8").splitlines(), start=1):
        match = re.search(r"#.*\bMEASURE:(\w+)", text)
        if match:
            found[match.group(1)] = number
    return found


@contextlib.contextmanager
def single_threaded() -> Iterator[None]:
    """Both runs, the timed one and the profiled one, use one intra-op thread.

    The two runs happen one after the other, not side by side: with two threads on a two-core
    machine, whatever else runs on the other core then slows one run's parallel operators and
    not the other's (a straggling thread holds every parallel region), and the shares drift
    apart for reasons that have nothing to do with attribution. One thread each keeps both
    runs on the same footing.
    """
    saved = {name: os.environ.get(name) for name in THREAD_VARIABLES}
    os.environ.update(dict.fromkeys(THREAD_VARIABLES, "1"))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def measure_once(script: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(TIMING), str(script)], capture_output=True, text=True, timeout=300, check=True
    ).stdout
    line = next(x for x in out.splitlines() if x.startswith("FIDELITY "))
    return dict(json.loads(line[len("FIDELITY ") :]))


def profile(script: Path, pass_name: str) -> dict[str, Any]:
    spec = JobSpec(script=str(script), python=sys.executable, cwd=str(script.parent), passes=(pass_name,))
    return asyncio.run(Job(spec).run())


def reported_lines(doc: dict[str, Any], pass_name: str) -> list[tuple[str, int, float, bool]]:
    part = doc["passes"][0]
    if pass_name == "cprofile":
        return [(x["file"], x["line"], x["share"], True) for x in part["samples"]["lines"]]
    return [(x["file"], x["line"], x["cpu_share"], x["exact"]) for x in part["lines"]]


def check(script: Path) -> Outcome:
    header = script.read_text(encoding="utf-8").splitlines()[0]
    match = PASS.search(header)
    pass_name = match.group(1) if match else "cpu"
    outcome = Outcome(script.name, pass_name, planted_lines(script))
    if EXPECT_CALL_SITE in header:
        # The planted line runs where the profiler sees no line: the engine must put its
        # cost on the line that called it, marked as opaque. Score against that line.
        calls = measure_lines(script)
        for p in outcome.planted:
            p.line = calls.get(p.label, p.line)
            p.file = str(script)
    truths: list[dict[str, float]] = []
    runs: list[dict[tuple[str, int], tuple[float, bool]]] = []
    docs: list[dict[str, Any]] = []
    with single_threaded():
        for _ in range(RUNS):
            # Interleaved, so that a slow spell of the machine falls on both sides alike.
            truth = measure_once(script)
            truths.append({label: s / truth["total"] for label, s in truth["seconds"].items()})
            doc = profile(script, pass_name)
            docs.append(doc)
            if doc["status"] != "ok":
                outcome.notes.append(f"engine status {doc['status']}")
            runs.append({(f, ln): (share, exact) for f, ln, share, exact in reported_lines(doc, pass_name)})

    def across_runs(key: tuple[str, int]) -> tuple[list[float], bool]:
        """A line's reported share in each run (0 where absent), and whether it was exact in all."""
        seen = [r.get(key, (0.0, True)) for r in runs]
        return [share for share, _ in seen], all(exact for _, exact in seen)

    for p in outcome.planted:
        p.measured_runs = [t.get(p.label, 0.0) for t in truths]
        p.reported_runs, p.exact = across_runs((p.file, p.line))
        p.measured_share = statistics.median(p.measured_runs)
        p.reported_share = statistics.median(p.reported_runs)
    lines = []
    for f, ln in {key for r in runs for key in r}:
        shares, exact = across_runs((f, ln))
        lines.append((f, ln, statistics.median(shares), exact))
    lines.sort(key=lambda x: (-x[2], x[0], x[1]))
    outcome.reported_top = [(f, ln, share) for f, ln, share, _ in lines[:3]]
    if EXPECT_CALL_SITE in header:
        tops = [d["passes"][0]["lines"][0] if d["passes"][0].get("lines") else {} for d in docs]
        if not all(top.get("opaque") for top in tops):
            outcome.reported_top = []  # on the call line but not marked: a silent misattribution
            outcome.notes.append("top line not marked as opaque")
        else:
            outcome.notes.append(f"reported on the call line, marked: {', '.join(tops[0]['opaque'])}")
    for f, ln, _share, exact in lines[:3]:
        if not exact:
            outcome.notes.append(f"{os.path.basename(f)}:{ln} reported as not attributable to an exact line")
    return outcome


def table(outcomes: list[Outcome]) -> str:
    rows = [
        "| script | pass | top line right | top-3 recall "
        "| planted line: measured / reported share (error) | notes |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        planted = "; ".join(
            f"{os.path.basename(p.file)}:{p.line} {p.measured_share * 100:.0f}% / "
            f"{p.reported_share * 100:.0f}% ({p.error_pp:.1f} pp)"
            for p in o.planted
        )
        top = (
            "yes"
            if o.top_right
            else f"no (got {os.path.basename(o.reported_top[0][0])}:{o.reported_top[0][1]})"
        )
        rows.append(
            f"| {o.script} | {o.pass_name} | {top} | {o.recall:.2f} | {planted} | {'; '.join(o.notes)} |"
        )
    return "\n".join(rows)


def scripts() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*.py"))


def main(argv: list[str]) -> int:
    chosen = [CORPUS / name for name in argv] if argv else scripts()
    outcomes = [check(path) for path in chosen]
    print(table(outcomes))
    bad = [o for o in outcomes if not o.top_right]
    print(f"\n{len(outcomes) - len(bad)}/{len(outcomes)} scripts with the right top line")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
