"""Fidelity checker: the engine's hotspots against measured ground truth, per script.

For each script of ``corpus/``: profile it with the engine (the sample and cpu passes:
the columns wall time and op CPU time), time its planted lines without any profiler
(``timing.py``), and compare:
- top line right: what the user sees first, the first compiler-style line of the report
  and the top line of the server's summary, is the planted line with the most measured
  time, in every profiled run;
- top-3 recall: planted lines among the engine's top 3 rows (of at most 3 planted);
- share error, per column: |reported share - measured share| in percentage points, per
  planted line (a column with no line at all, such as op CPU time in a pure Python script,
  is not compared).

Usage: ``python tests/fidelity/checker.py [SCRIPT ...]`` prints a Markdown table.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import resource
import statistics
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bottleneck_lsp.analysis import ranking as analysis
from bottleneck_lsp.formats import report
from bottleneck_lsp.job.job import Job
from bottleneck_lsp.job.spec import JobSpec
from bottleneck_lsp.lsp import annotations
from bottleneck_lsp.lsp.summary import summary_line
from bottleneck_lsp.schema.model import Document

CORPUS = Path(__file__).resolve().parent / "corpus"
TIMING = Path(__file__).resolve().parent / "timing.py"
PLANT = re.compile(r"#.*\bPLANT:(\w+)")
PASSES = ("sample", "cpu")
COLUMNS = ("wall", "op CPU")
# The truth each column is compared with: wall time, or the main thread's CPU time (torch
# ops run on it, single-threaded here; a sleeping line has wall time and no CPU time).
TRUTH = {"wall": ("seconds", "total"), "op CPU": ("cpu_seconds", "cpu_total")}
ONLY = re.compile(r"#\s*fidelity:.*\bcolumns=([\w,]+)")  # e.g. columns=wall: compare only these
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
TIE = 0.02  # planted lines measured within 2 points of the top one are tied with it
RUNS = 3  # timing runs and profiled runs per script, interleaved; medians are compared
EXPECT_CALL_SITE = "expect=call-site"  # planted lines the profiler cannot see (TorchScript)
# A timed run and a profiled run during which the machine was busy are done again (at most
# EXTRA_PAIRS times per script): preemption lands on whichever line runs, on either side.
# Involuntary context switches per CPU-second of the two runs' processes: 2-10 here when
# quiet, about 150 with a busy loop on each core. Time stolen by the hypervisor, which the
# guest's switch counts do not show: 5-9% of the machine's time here while a check runs, on
# a machine otherwise idle (at 5%, one pair in two was done again and CI's checks took
# twice as long); so only more than that counts.
BUSY_SWITCHES_PER_CPU_S = 50.0
BUSY_STEAL = 0.20
EXTRA_PAIRS = 3


@dataclass
class Planted:
    label: str
    file: str
    line: int
    measured_share: float = 0.0  # of wall time: decides the expected top line
    measured: dict[str, float] = field(default_factory=dict)  # column -> measured share (median)
    reported: dict[str, float] = field(default_factory=dict)  # column -> median share
    exact: bool = True
    measured_runs: list[float] = field(default_factory=list)  # for the record, when one fails
    reported_runs: dict[str, list[float]] = field(default_factory=dict)

    def error_pp(self, column: str) -> float:
        return abs(self.reported[column] - self.measured[column]) * 100


@dataclass
class Outcome:
    script: str
    planted: list[Planted] = field(default_factory=list)
    reported_top: list[tuple[str, int, float]] = field(default_factory=list)
    shown_first: list[tuple[str, int]] = field(default_factory=list)  # per run: CLI's first line
    summary_top: list[str] = field(default_factory=list)  # per run: the server's summary
    columns: list[str] = field(default_factory=list)  # the columns compared
    notes: list[str] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)  # corpus scripts are deterministic

    @property
    def expected_top(self) -> Planted:
        return max(self.planted, key=lambda p: p.measured_share)

    @property
    def acceptable_tops(self) -> list[Planted]:
        """The planted line with the most measured time, and any within ``TIE`` of it: two
        lines measured at 32% and 33% are both the hot line (which one the profiled runs put
        first is a coin toss, and the user is shown both)."""
        best = self.expected_top.measured_share
        return [p for p in self.planted if p.measured_share >= best - TIE]

    @property
    def top_right(self) -> bool:
        """In every run, the CLI's first compiler-style line and the server's summary name
        the planted line with the most measured time (or one tied with it)."""
        tops = self.acceptable_tops
        wants = {(p.file, p.line) for p in tops}
        names = [f"top line {os.path.basename(p.file)}:{p.line} " for p in tops]
        return (
            bool(self.shown_first)
            and all(first in wants for first in self.shown_first)
            and all(any(name in summary for name in names) for summary in self.summary_top)
        )

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


def _load() -> tuple[int, float, int, int]:
    """Involuntary switches and CPU seconds of the finished children; the machine's stolen
    and total clock ticks."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    steal = total = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        ticks = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
        steal, total = ticks[7], sum(ticks)
    return usage.ru_nivcsw, usage.ru_utime + usage.ru_stime, steal, total


def busy(before: tuple[int, float, int, int], after: tuple[int, float, int, int]) -> str:
    """Why the machine was too busy, between two ``_load()`` readings, for a fair
    comparison; "" when it was not."""
    switches, cpu = after[0] - before[0], after[1] - before[1]
    steal, total = after[2] - before[2], after[3] - before[3]
    if cpu > 0 and switches / cpu > BUSY_SWITCHES_PER_CPU_S:
        return f"{switches / cpu:.0f} involuntary switches per CPU-second"
    if total > 0 and steal / total > BUSY_STEAL:
        return f"{steal / total:.0%} of the time stolen by the hypervisor"
    return ""


def profile(script: Path) -> Document:
    spec = JobSpec(script=str(script), python=sys.executable, cwd=str(script.parent), passes=PASSES)
    return asyncio.run(Job(spec).run())


def reported_lines(doc: Document, column: str) -> list[tuple[str, int, float, bool]]:
    if column == "wall":
        sample = doc.pass_named("sample")
        samples = sample.samples if sample is not None else None
        return [(x.file, x.line, x.wall_share, True) for x in (samples.lines if samples else [])]
    cpu = doc.pass_named("cpu")
    return [(x.file, x.line, x.cpu_share, x.exact) for x in (cpu.lines if cpu else [])]


def shown_first(doc: Document) -> tuple[str, int]:
    """The file and line of the report's first compiler-style line, as the user reads it."""
    rows = analysis.hotspots(doc)
    lines = report.compiler_lines(rows, cwd="/", thresholds=analysis.Thresholds())
    if not lines:
        return ("", 0)
    where = re.match(r"(.+):(\d+):\d+: ", lines[0])
    assert where is not None, lines[0]
    return ("/" + where.group(1).lstrip("/"), int(where.group(2)))


def check(script: Path) -> Outcome:
    header = script.read_text(encoding="utf-8").splitlines()[0]
    outcome = Outcome(script.name, planted_lines(script))
    if EXPECT_CALL_SITE in header:
        # The planted line runs where the profiler sees no line: the engine must put its
        # cost on the line that called it, marked as opaque. Score against that line.
        calls = measure_lines(script)
        for p in outcome.planted:
            p.line = calls.get(p.label, p.line)
            p.file = str(script)
    truths: list[dict[str, dict[str, float]]] = []
    runs: dict[str, list[dict[tuple[str, int], tuple[float, bool]]]] = {c: [] for c in COLUMNS}
    docs: list[Document] = []
    extra = EXTRA_PAIRS
    with single_threaded():
        while len(docs) < RUNS:
            # Interleaved, so that a slow spell of the machine falls on both sides alike.
            before = _load()
            truth = measure_once(script)
            doc = profile(script)
            why = busy(before, _load())
            if why and extra:
                extra -= 1
                outcome.notes.append(f"a pair of runs done again (machine busy: {why})")
                continue
            truths.append(
                {
                    column: {label: s / truth[total] for label, s in truth[key].items()}
                    for column, (key, total) in TRUTH.items()
                }
            )
            docs.append(doc)
            if doc.status != "ok":
                outcome.notes.append(f"engine status {doc.status}")
            outcome.disagreements += [f"{d.function}: {d.counts}" for d in analysis.disagreements(doc)]
            for column in COLUMNS:
                found = reported_lines(doc, column)
                runs[column].append({(f, ln): (share, exact) for f, ln, share, exact in found})
            outcome.shown_first.append(shown_first(doc))
            outcome.summary_top.append(summary_line(doc, annotations.build(doc, analysis.Thresholds())))
    only = ONLY.search(header)
    wanted = only.group(1).split(",") if only else ["wall", "op"]  # names: wall, op (op CPU)
    outcome.columns = [c for c in COLUMNS if any(runs[c]) and c.split()[0] in wanted]

    def across_runs(column: str, key: tuple[str, int]) -> tuple[list[float], bool]:
        """A line's reported share in each run (0 where absent), and whether it was exact in all."""
        seen = [r.get(key, (0.0, True)) for r in runs[column]]
        return [share for share, _ in seen], all(exact for _, exact in seen)

    for p in outcome.planted:
        p.measured_runs = [t["wall"].get(p.label, 0.0) for t in truths]
        p.measured_share = statistics.median(p.measured_runs)
        for column in outcome.columns:
            p.measured[column] = statistics.median(t[column].get(p.label, 0.0) for t in truths)
            p.reported_runs[column], exact = across_runs(column, (p.file, p.line))
            p.exact = p.exact and exact
            p.reported[column] = statistics.median(p.reported_runs[column])
    ranking = "wall" if any(runs["wall"]) else "op CPU"
    lines = []
    for f, ln in {key for r in runs[ranking] for key in r}:
        shares, exact = across_runs(ranking, (f, ln))
        lines.append((f, ln, statistics.median(shares), exact))
    lines.sort(key=lambda x: (-x[2], x[0], x[1]))
    outcome.reported_top = [(f, ln, share) for f, ln, share, _ in lines[:3]]
    if EXPECT_CALL_SITE in header:
        cpu_parts = [d.pass_named("cpu") for d in docs]
        tops = [part.lines[0] if part is not None and part.lines else None for part in cpu_parts]
        if not all(top is not None and top.opaque for top in tops):
            outcome.reported_top = []  # on the call line but not marked: a silent misattribution
            outcome.notes.append("top line not marked as opaque")
        elif tops[0] is not None:
            outcome.notes.append(f"reported on the call line, marked: {', '.join(tops[0].opaque)}")
    for f, ln, _share, exact in lines[:3]:
        if not exact:
            outcome.notes.append(f"{os.path.basename(f)}:{ln} reported as not attributable to an exact line")
    return outcome


def table(outcomes: list[Outcome]) -> str:
    rows = [
        "| script | first line shown (CLI and server, every run) | top-3 recall "
        "| planted line: measured / reported share of wall time, of op CPU time (largest error) "
        "| notes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for o in outcomes:
        planted = "; ".join(
            f"{os.path.basename(p.file)}:{p.line} "
            + ", ".join(
                f"{p.measured[c] * 100:.0f}% / {p.reported[c] * 100:.0f}%" if c in p.reported else "-"
                for c in COLUMNS
            )
            + f" ({max((p.error_pp(c) for c in p.reported), default=0.0):.1f} pp)"
            for p in o.planted
        )
        if o.top_right:
            top = "yes"
        else:
            got = {f"{os.path.basename(f)}:{ln}" for f, ln in o.shown_first}
            top = f"no (got {', '.join(sorted(got))})"
        rows.append(f"| {o.script} | {top} | {o.recall:.2f} | {planted} | {'; '.join(o.notes)} |")
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
