"""The one-line summary of a profile: the command's answer, the progress message while it
runs, and what the server's log and the client's status show."""

from __future__ import annotations

import os

from ..analysis import coverage, ranking
from ..formats import wording
from ..notebook.cell_paths import short_place
from ..schema.model import Document, PassName, PassStatus
from . import annotations as notes


def top_line(added: list[notes.Annotation]) -> str:
    """The first row of the one ranking (``train.py:42 50.8% of wall time``), or ""."""
    rows = [a.row for a in added if a.row is not None]
    return wording.top_line(rows[0]) if rows else ""  # annotations.build keeps the ranking's order


def summary_line(doc: Document, added: list[notes.Annotation], so_far: str = "") -> str:
    """One line: how the run ended (``so_far``: how far it is, while it runs), its top
    line (the first row of the one ranking: the same line the CLI prints first), the verdict."""
    name = os.path.basename(doc.script)
    if doc.status == PassStatus.CANCELLED:  # stopped by the user: no exit code to tell
        head = f"{name}: cancelled"
    elif doc.status != PassStatus.OK:
        head = f"{name}: {doc.status.replace('_', ' ')}"
        if doc.exit_code not in (None, 0):
            head += f" (exit code {doc.exit_code})"
    else:
        head = f"{name}: {so_far or 'done'}"
    window = ranking.window_s(doc)
    if window is not None and not so_far:
        head += f" (a {window:g} s window of the run: bottleneck.duration)"
    top = top_line(added)
    head += f"; top line {top}" if top else "; no hot line in your files"
    verdict = doc.verdict
    if verdict is not None:
        head += f"; {verdict.bound.upper()}-bound (device busy {verdict.device_busy_fraction * 100:.0f}%)"
    holders = ranking.out_of_memory_holders(doc)
    if holders:
        row, held = holders[0]
        head += f"; out of memory: {short_place(row.file, row.line)} held {wording.size(held)}"
    if ranking.found_disagreements(doc):
        head += "; passes disagree on call counts (seed the script: see the report)"
    if ranking.runner_never_started(doc):
        head += (
            "; "
            + ranking.never_started_message(doc)
            + " Choose another: bottleneck.interpreter (the server's python setting)"
        )
    failed = ranking.failed_pass(doc)
    if failed is not None and failed.error is not None and failed.error.rank is not None:
        error = failed.error
        where = f" at {short_place(error.file, error.line)}" if error.file else ""
        head += f"; rank {error.rank} failed: {error.type}{where}"
    module = ranking.run_as_module(doc)
    if module is not None:
        how = "the module argument" if module.base == doc.cwd else f"bottleneck.cwd set to {module.base}"
        head += f"; it is in a package: it runs as python -m {module.name} with {how}"
    straggler = doc.distributed.straggler if doc.distributed is not None else None
    if straggler is not None:
        head += f"; straggler: rank {straggler.rank}"
        if straggler.lines:
            late = straggler.lines[0]
            head += f", {short_place(late.file, late.line)} +{wording.ms(late.excess_s)}"
    covered = coverage.covered(doc.pass_named(PassName.CPU))
    if covered and not so_far:
        head += f"; ran once, op CPU and memory {covered}"
    return head
