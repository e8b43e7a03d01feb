"""Two results of one script compared line by line: what got faster, what got slower.

Lines are matched by their file (relative to the run's root), their text and their
function, not by number: an edit that moves a line up or down still matches it. Lines of
the same text in the same function match in order. A line measured in one run only is
added or removed. Every column measured in both runs is compared, in seconds and in
share; the summary and the order follow one column (the new run's ranking column).
Pure functions over two documents, as ``analysis`` is.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from ..schema.model import Document, RankedLine
from .ranking import BYTES, COLUMNS, WALL, amount

ADDED, REMOVED, MATCHED = "added", "removed", "matched"


@dataclass
class LineChange:
    """One line of the script, in either run or both."""

    file: str  # relative to the run's root where it lies under one, else as recorded
    text: str
    function: str
    old: RankedLine | None = None
    new: RankedLine | None = None

    @property
    def status(self) -> str:
        return ADDED if self.old is None else REMOVED if self.new is None else MATCHED

    @property
    def line(self) -> int:
        """The line's number in the new run (in the old one when it was removed)."""
        row = self.new or self.old
        assert row is not None
        return row.line

    def amount(self, kind: str, new: bool) -> float:
        """The column's seconds in one run (bytes for the memory column); 0 where absent."""
        row = self.new if new else self.old
        cell = row.columns.get(kind) if row is not None else None
        return amount(cell, kind) if cell is not None else 0.0

    def share(self, kind: str, new: bool) -> float:
        row = self.new if new else self.old
        cell = row.columns.get(kind) if row is not None else None
        return cell.share if cell is not None else 0.0

    def delta(self, kind: str) -> float:
        return self.amount(kind, True) - self.amount(kind, False)

    def change(self, kind: str) -> float | None:
        """The relative change (-0.35: 35% less), None when the old run had no time here."""
        before = self.amount(kind, False)
        return self.delta(kind) / before if before > 0 else None


@dataclass
class Comparison:
    old: Document
    new: Document
    kind: str  # the column that orders the lines and the summary
    kinds: list[str]  # every column measured in both runs
    totals: dict[str, tuple[float, float]] = field(default_factory=dict)  # on the script's lines
    lines: list[LineChange] = field(default_factory=list)

    def total_change(self, kind: str | None = None) -> float | None:
        before, after = self.totals.get(kind or self.kind, (0.0, 0.0))
        return (after - before) / before if before > 0 else None

    def improved(self, limit: int = 5) -> list[LineChange]:
        matched = [c for c in self.lines if c.status == MATCHED and c.delta(self.kind) < 0]
        return sorted(matched, key=lambda c: c.delta(self.kind))[:limit]

    def regressed(self, limit: int = 5) -> list[LineChange]:
        matched = [c for c in self.lines if c.status == MATCHED and c.delta(self.kind) > 0]
        return sorted(matched, key=lambda c: -c.delta(self.kind))[:limit]

    def added(self) -> list[LineChange]:
        return [c for c in self.lines if c.status == ADDED]

    def removed(self) -> list[LineChange]:
        return [c for c in self.lines if c.status == REMOVED]


def relative(doc: Document, path: str) -> str:
    """``path`` relative to the first of the run's roots (or its folder) that holds it."""
    for root in [*doc.roots, os.path.dirname(doc.script), doc.cwd]:
        if root and os.path.isabs(path) and os.path.commonpath([root, path]) == root:
            return os.path.relpath(path, root)
    return path


def _measured(doc: Document) -> list[str]:
    rows = doc.ranking.lines if doc.ranking is not None else []
    return [k for k in COLUMNS if any(k in r.columns for r in rows)]


def _order_kind(old: Document, new: Document, kinds: list[str]) -> str:
    ranked = new.ranking.ranked_by if new.ranking is not None else None
    if ranked in kinds:
        return ranked
    return kinds[0] if kinds else WALL


def compare(old: Document, new: Document) -> Comparison:
    """Line by line, ``new`` against ``old``."""
    kinds = [k for k in _measured(new) if k in _measured(old)]
    result = Comparison(old=old, new=new, kind=_order_kind(old, new, kinds), kinds=kinds)
    groups: dict[tuple[str, str, str], list[list[RankedLine]]] = defaultdict(lambda: [[], []])
    for side, doc in enumerate((old, new)):
        for row in doc.ranking.lines if doc.ranking is not None else []:
            key = (relative(doc, row.file), row.text.strip(), row.function)
            groups[key][side].append(row)
    for (file, text, function), (before, after) in groups.items():
        before.sort(key=lambda r: r.line)
        after.sort(key=lambda r: r.line)
        for i in range(max(len(before), len(after))):
            result.lines.append(
                LineChange(
                    file=file,
                    text=text,
                    function=function,
                    old=before[i] if i < len(before) else None,
                    new=after[i] if i < len(after) else None,
                )
            )
    for kind in kinds:
        result.totals[kind] = (
            sum(c.amount(kind, False) for c in result.lines),
            sum(c.amount(kind, True) for c in result.lines),
        )
    result.lines.sort(
        key=lambda c: (-max(c.amount(result.kind, True), c.amount(result.kind, False)), c.file, c.line)
    )
    return result


@dataclass(frozen=True)
class Regression:
    """A line (or, with ``change`` None, the whole script) slower than the baseline allows."""

    change: LineChange | None
    before_s: float
    after_s: float

    @property
    def ratio(self) -> float:
        return (self.after_s - self.before_s) / self.before_s if self.before_s > 0 else float("inf")


def regressions(
    c: Comparison, threshold: float, min_share: float, min_growth_s: float = 0.0
) -> list[Regression]:
    """What the CI gate fails on: the total of the ordering column on the script's lines,
    and every matched line that holds at least ``min_share`` of it in either run, grown by
    more than ``threshold`` (0.10: 10%) and, in a column of time, by more than
    ``min_growth_s`` seconds. A line below ``min_share`` in both runs is noise, and so is a
    few milliseconds' growth: a line sampled for 3 ms reads 6 ms in the next run of the
    same code as often as not (a few of the sample pass's 1 ms intervals either way)."""
    floor = 0.0 if c.kind in BYTES else min_growth_s

    def grew(old: float, new: float) -> bool:
        return old > 0 and new > old * (1 + threshold) and new - old > floor

    out = []
    before, after = c.totals.get(c.kind, (0.0, 0.0))
    if grew(before, after):
        out.append(Regression(None, before, after))
    for line in c.lines:
        if line.status != MATCHED:
            continue
        if max(line.share(c.kind, False), line.share(c.kind, True)) < min_share:
            continue
        old, new = line.amount(c.kind, False), line.amount(c.kind, True)
        if grew(old, new):
            out.append(Regression(line, old, new))
    return out
