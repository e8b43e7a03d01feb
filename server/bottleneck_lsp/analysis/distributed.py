"""A distributed job's ranks, joined: each pass's outcome over the ranks, every line's
columns as the ranks' median with their spread, the collectives' waiting, the straggler.

Pure functions over the model: analysis calls ``merge`` with one ranking per rank.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import replace

from ..runner.device import union_ns
from ..schema.contract import COLLECTIVE_PREFIXES
from ..schema.model import (
    Cell,
    Collective,
    Distributed,
    ExcessLine,
    Launch,
    Pass,
    PassName,
    PassStatus,
    RankedLine,
    Ranking,
    RankRun,
    RankSummary,
    Spread,
    Straggler,
)
from ..schema.torchrun_options import LaunchError, nodes

# Which rank's outcome a pass shows, most telling first: the rank that failed is the cause,
# the others were ended by the launcher because of it.
_OUTCOME = (
    PassStatus.ERROR,
    PassStatus.SYNTAX_ERROR,
    PassStatus.EXIT,
    PassStatus.CRASHED,
    PassStatus.TIMEOUT,
    PassStatus.CANCELLED,
    PassStatus.TERMINATED,
    PassStatus.SKIPPED,
    PassStatus.OK,
)
# A straggler arrives last at this share of the matched collectives, this late on average.
STRAGGLER_SHARE = 0.6
STRAGGLER_LATE_S = 0.001
EXCESS_LINES = 5
EXCESS_SHARE = 0.1  # of the largest excess: smaller ones are not shown
# Lines that join or wait for the group: a rank's time there is waiting for its peers (the
# first to start waits longest in init_process_group), never the work that made it late.
_WAITING_CALL = re.compile(
    r"\b(init_process_group|barrier|monitored_barrier|new_group|new_subgroups|init_device_mesh|"
    r"destroy_process_group)\s*\("
)


def job_pass(parts: list[Pass]) -> Pass:
    """The pass as the job shows it: the lowest rank's part (its tables), with the outcome
    of the rank that tells most (a failure, with its rank), and the other ranks' notes."""
    telling = min(parts, key=_telling)
    base = parts[0]
    notes = list(base.notes)
    for p in parts[1:]:
        notes += [f"rank {p.rank}: {n}" for n in p.notes if n not in base.notes]
    out = replace(base, notes=notes, collectives=[])
    if telling is not base:
        out = replace(
            out,
            status=telling.status,
            exit_code=telling.exit_code,
            signal=telling.signal,
            timeout_s=telling.timeout_s,
            stopped_after_s=telling.stopped_after_s,
        )
        if telling.error is not None:
            out.error = replace(telling.error, rank=telling.rank)
        out.absent = out.absent - {"error", "exit_code", "signal"}
    elif out.error is not None:
        out.error = replace(out.error, rank=base.rank)
    return out


def _telling(part: Pass) -> tuple[int, int]:
    """Most telling first: by outcome, then the earliest failure (a rank whose peer failed
    fails too, later: "Connection closed by peer")."""
    order = _OUTCOME.index(part.status) if part.status in _OUTCOME else 0
    at = part.error.at_ns if part.error is not None and part.error.at_ns is not None else 2**63
    return order, at


def merge(runs: list[RankRun], rankings: list[Ranking]) -> tuple[Ranking, Distributed]:
    """One ranking from each rank's (same order as ``runs``): every line's cells are the
    ranks' medians, each with its spread; and the collectives across the ranks."""
    kind = rankings[0].ranked_by or ""
    by_rank = [{row.key: row for row in r.lines} for r in rankings]
    first: dict[tuple[str, int], RankedLine] = {}
    for rows in by_rank:
        for key, row in rows.items():
            first.setdefault(key, row)
    ranks = [run.rank for run in runs]
    lines = []
    for key, row in first.items():
        names = sorted({c for rows in by_rank if key in rows for c in rows[key].columns})
        columns = {name: _merged_cell(name, [rows.get(key) for rows in by_rank], ranks) for name in names}
        cell = columns.get(kind)
        share, time_s = (cell.share, cell.time_s) if cell is not None else (0.0, 0.0)
        lines.append(replace(row, columns=columns, share=share, time_s=time_s))
    lines.sort(key=lambda r: (-r.share, -sum(c.share for c in r.columns.values()), r.file, r.line))
    ranking = replace(rankings[0], lines=lines)
    return ranking, _collectives(runs, lines, kind, by_rank)


def _merged_cell(name: str, rows: list[RankedLine | None], ranks: list[int]) -> Cell:
    cells = [row.columns.get(name) if row is not None else None for row in rows]
    memory = any(c is not None and c.bytes is not None for c in cells)
    values = [(float(c.bytes or 0) if memory else c.time_s) if c is not None else 0.0 for c in cells]
    shares = [c.share if c is not None else 0.0 for c in cells]
    top = max(range(len(values)), key=lambda i: values[i])
    median = statistics.median(values)
    spread = Spread(values=values, min=min(values), median=median, max=values[top], max_rank=ranks[top])
    if memory:
        return Cell(share=statistics.median(shares), time_s=0.0, bytes=int(median), spread=spread)
    return Cell(share=statistics.median(shares), time_s=median, spread=spread)


def world_size(launch: Launch | None) -> int:
    """How many ranks the whole job had, as its launch options say."""
    if launch is None:
        return 0
    try:
        _node, count = nodes(tuple(launch.options))
    except LaunchError:  # a document made elsewhere, with options this version does not know
        count = 1
    return count * launch.nproc_per_node


def ratio(spread: Spread) -> float:
    """How far the slowest rank is above the median (1.0: no spread)."""
    if spread.median > 0:
        return spread.max / spread.median
    return float("inf") if spread.max > 0 else 1.0


# -- collectives -------------------------------------------------------------------------------
def _issued(part: Pass | None) -> list[Collective]:
    """The collectives a rank issued, in order: the dispatcher's ``c10d::`` ops (the rank's
    own call), else whatever collective ops were recorded."""
    if part is None:
        return []
    issued = [c for c in part.collectives if c.name.startswith("c10d::")]
    return issued or part.collectives


def _work_s(part: Pass | None) -> float:
    """The time a rank's collectives took: the backends' work (``gloo:``, ``nccl:``), which
    includes waiting for the other ranks, else the issued ops' own."""
    if part is None:
        return 0.0
    work = [c for c in part.collectives if c.name.startswith(("gloo:", "nccl:"))]
    # overlaps once: DDP keeps several buckets' all-reduces in flight, waited for together
    spans = [(c.start_ns, c.start_ns + int(c.duration_us * 1000)) for c in (work or _issued(part))]
    return union_ns(spans) / 1e9


def _collectives(
    runs: list[RankRun], lines: list[RankedLine], kind: str, by_rank: list[dict[tuple[str, int], RankedLine]]
) -> Distributed:
    parts = [
        next((p for p in run.passes if p.name in (PassName.CPU, PassName.CUDA) and p.collectives), None)
        for run in runs
    ]
    issued = [_issued(p) for p in parts]
    n = len(runs)
    waits: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    last = [0] * n
    late = [0.0] * n
    matched = 0
    names = sorted({c.name for seq in issued for c in seq})
    for name in names:
        seqs = [[c.start_ns for c in seq if c.name == name] for seq in issued]
        # the i-th call of this op on every rank (as many as the rank with the fewest made)
        for starts in zip(*seqs, strict=False):
            matched += 1
            latest = max(range(n), key=lambda r: starts[r])
            last[latest] += 1
            others = [s for r, s in enumerate(starts) if r != latest]
            late[latest] += (starts[latest] - statistics.median(others)) / 1e9 if others else 0.0
            for r in range(n):
                waits[r].append((starts[r], starts[latest]))
    summaries = []
    for i, run in enumerate(runs):
        work = _work_s(parts[i])
        wait = union_ns(waits[i]) / 1e9
        ranked = next((p for p in run.passes if p.name == PassName.SAMPLE), None) or parts[i]
        summaries.append(
            RankSummary(
                rank=run.rank,
                status=_status(run),
                wall_s=ranked.script_wall_s if ranked is not None else None,
                collectives=len(issued[i]),
                collective_s=round(work, 6),
                wait_s=round(wait, 6),
                transfer_s=round(max(work - wait, 0.0), 6),
                last=last[i],
                bytes=_sent(issued[i]),
            )
        )
    notes = []
    if n > 1 and not any(issued):
        notes.append(
            "no collective op was recorded (the cpu pass did not run, or the ranks never communicated)"
        )
    elif n > 1 and any(len(seq) != len(issued[0]) for seq in issued):
        notes.append(
            "the ranks issued different numbers of collectives: only the first ones of each op were matched"
        )
    out = Distributed(world_size=n, ranks=summaries, column=kind, matched=matched, notes=notes)
    if n > 1 and matched:
        s = max(range(n), key=lambda r: last[r])
        mean_late = late[s] / last[s] if last[s] else 0.0
        if last[s] / matched >= STRAGGLER_SHARE and mean_late >= STRAGGLER_LATE_S:
            out.straggler = Straggler(
                rank=runs[s].rank,
                last=last[s],
                matched=matched,
                late_s=round(mean_late, 6),
                lines=_excess(lines, kind, s, by_rank[s]),
            )
    return out


def _excess(
    lines: list[RankedLine], kind: str, index: int, own: dict[tuple[str, int], RankedLine]
) -> list[ExcessLine]:
    """The straggler's lines (rank at ``index``, its own rows ``own``) most over the other
    ranks' median, waiting lines left out."""
    found = []
    for row in lines:
        cell = row.columns.get(kind)
        if cell is None or cell.spread is None or cell.bytes is not None or _waiting(own.get(row.key, row)):
            continue
        mine = cell.spread.values[index]
        others = [v for i, v in enumerate(cell.spread.values) if i != index]
        base = statistics.median(others) if others else 0.0
        if mine - base > STRAGGLER_LATE_S:
            found.append(
                ExcessLine(
                    file=row.file,
                    line=row.line,
                    text=row.text,
                    function=row.function,
                    rank_s=round(mine, 6),
                    others_median_s=round(base, 6),
                    excess_s=round(mine - base, 6),
                )
            )
    found.sort(key=lambda e: -e.excess_s)
    # the lines that explain the lateness, not the noise beside them
    return [e for e in found[:EXCESS_LINES] if e.excess_s >= EXCESS_SHARE * found[0].excess_s]


def _sent(issued: list[Collective]) -> int | None:
    """The bytes a rank's collectives sent; None when their sizes were not recorded."""
    sizes = [c.bytes for c in issued if c.bytes is not None]
    return sum(sizes) if sizes else None


def _waiting(row: RankedLine) -> bool:
    """A line whose time is waiting for the other ranks: it joins or synchronises the group,
    or most of its ops' time on the rank is collectives (an explicit ``dist.all_reduce(t)``)."""
    if _WAITING_CALL.search(row.text):
        return True
    total = sum(op.self_cpu_us for op in row.ops)
    collective = sum(op.self_cpu_us for op in row.ops if op.name.startswith(COLLECTIVE_PREFIXES))
    return total > 0 and collective >= 0.5 * total


def _status(run: RankRun) -> PassStatus:
    telling = [p.status for p in run.passes if p.status != PassStatus.SKIPPED]
    return min(telling, key=_OUTCOME.index) if telling else PassStatus.SKIPPED
