"""The cprofile pass recorded in the cpu pass's run: one run of the script fewer.

The default job runs the script three times (sample, cprofile, cpu). Where its time is in a
few large torch ops, each run costs about one bare run, profiled or not, and the third is
what made a whole profile slower than the old tool's two (docs/pytorch-examples.md:
word_language_model 1.46x, dcgan 1.03-1.19x the old way). There cProfile has almost nothing
to time: its hook runs at Python calls, and the script makes few. So the job lets cProfile
ride along in the cpu pass's run (``RunnerArgs.with_cprofile``) when

- the sample pass ran the script for at least ``MIN_BODY_S`` (below that a run of its own
  costs little, and the sample pass's Python share rests on few samples), and
- found at most ``MAX_PYTHON_SHARE`` of that time running Python (the rest in C: torch's
  ops, I/O, sleeping), the part cProfile's hook slows;

and keeps the table only when the cpu pass

- recorded to the end (an event budget reached drops cProfile there: the profiler's stop
  then ran in the script's time),
- took at most ``MAX_COST`` times the sample pass's run of the script (which runs it at
  1.0-1.2x its own speed), and
- recorded at most ``MAX_EVENT_RATE`` events a second of it. The profiler's own cost, about
  1 us an event (measured below), lands in the ops' own times in cProfile's table, which
  splicing cannot take out: at that rate it is at most about 5% of the run.

Measured 2026-12-05 (pytorch/examples, docs/pytorch-examples.md): time_sequence_prediction,
1.68 million events in 8.2 s (205,000 a second), took 1.12-1.20x the sample pass's run with
cProfile in it, and its table read 7.78 s of own time against 5.95 s in cProfile's own run
(1.8 s more in the ops after 0.46 s of the marker's handler spliced out): dropped.
word_language_model (6,700 events a second) 0.93x, its table 4.50 s against 4.32 s; dcgan
(15,000 a second) 1.00-1.12x: kept. Otherwise the table is dropped and the cprofile pass runs
alone after the cpu pass, as it would have before it: a misjudged script costs the cpu
pass's cProfile hook, never the table's truth. ``--separate-cprofile`` (the editor's
``bottleneck.separateCProfile``) always gives cProfile a run of its own.

The pass made from it says so: ``within`` names the run (``"cpu"``), a note gives the
figures the choice rested on, and "passes disagree" does not compare it with the cpu pass
(one run cannot disagree with itself).
"""

from __future__ import annotations

from ..schema.model import CProfileTable, Document, Pass, PassName, PassStatus

MIN_BODY_S = 1.0
MAX_PYTHON_SHARE = 0.10
MAX_COST = 1.15
MAX_EVENT_RATE = 50_000  # events recorded a second of the cpu pass's run

SEPARATE_HINT = "--separate-cprofile gives cProfile a run of its own"


def python_share(sample: Pass | None) -> float | None:
    """Of the sample pass's run of the script, the share the main thread spent running
    Python (not in a C call); None without a usable sample pass."""
    if sample is None or sample.status != PassStatus.OK or sample.samples is None:
        return None
    wall = sample.samples.wall_s
    if wall <= 0:
        return None
    return min(sum(line.python_s for line in sample.samples.lines) / wall, 1.0)


def may_ride(doc: Document, later: list[PassName]) -> bool:
    """Whether the cprofile pass, due now, may ride in the cpu pass's run (one of ``later``,
    the passes planned after it), from what the sample pass found."""
    if PassName.CPU not in later:
        return False
    sample = doc.pass_named(PassName.SAMPLE)
    share = python_share(sample)
    if share is None or sample is None or (sample.script_wall_s or 0.0) < MIN_BODY_S:
        return False
    return share <= MAX_PYTHON_SHARE


def cost(cpu: Pass, sample: Pass | None) -> float | None:
    """The cpu pass's run of the script against the sample pass's."""
    body = sample.script_wall_s if sample is not None else None
    if not body or cpu.script_wall_s is None:
        return None
    return cpu.script_wall_s / body


def ridden(rider: CProfileTable | None, cpu: Pass, doc: Document) -> tuple[Pass | None, str]:
    """The cprofile pass made from the table the cpu pass recorded (``rider``), or None and
    why the cprofile pass runs alone after all."""
    sample = doc.pass_named(PassName.SAMPLE)
    if cpu.status != PassStatus.OK:
        return None, f"the cpu pass ended with status {cpu.status}"
    if cpu.event_budget is not None:
        return None, "the cpu pass stopped recording early (its event budget): its run was slowed"
    if rider is None:
        return None, "the cpu pass could not record cProfile's table (its Python tracer holds the hook)"
    ratio = cost(cpu, sample)
    if ratio is None:
        return None, "the cpu pass's run was not timed"
    if ratio > MAX_COST:
        return None, (
            f"the cpu pass's run, with cProfile in it, took {ratio:.2f}x the sample pass's "
            f"(more than {MAX_COST}x)"
        )
    rate = cpu.event_count / cpu.script_wall_s if cpu.script_wall_s else 0.0
    if rate > MAX_EVENT_RATE:
        return None, (
            f"the cpu pass recorded {rate:,.0f} events a second (more than {MAX_EVENT_RATE:,}): "
            "the profiler's cost, about 1 us each, would be in cProfile's times"
        )
    share = python_share(sample) or 0.0
    note = (
        f"recorded in the cpu pass's run, one run of the script fewer: the sample pass found "
        f"{share:.1%} of the run in Python, and the cpu pass's instruments, cProfile's own "
        f"included, took {ratio:.2f}x the sample pass's run, recording {rate:,.0f} events a "
        f'second; one run\'s call counts, so "passes disagree" has no second run to compare '
        f"({SEPARATE_HINT})"
    )
    return table_pass(rider, PassName.CPU, PassStatus.OK, 0, note), ""


def table_pass(
    table: CProfileTable, within: PassName, status: PassStatus, exit_code: int | None, note: str
) -> Pass:
    """The cprofile pass made of a table recorded in another pass's run (``within``)."""
    return Pass.given(
        name=PassName.CPROFILE,
        status=status,
        exit_code=exit_code,
        within=within,
        notes=[note],
        script_wall_s=table.script_wall_s,
        event_count=table.event_count,
        totals=table.totals,
        functions=table.functions,
        call_sites=table.call_sites,
        postprocess_s=table.postprocess_s,
    )
