"""Two results of one script compared line by line: what got faster, what got slower.

Lines are paired by aligning each file's two versions as a text diff does
(``line_pairing``, from the line hashes the documents keep, ``Document.sources``): a line
that moved matches its old self, and so does a line edited in place (``changed``); a line
only in the new version is added, one only in the old removed. A line measured in one run
only, still in both versions, is matched with nothing measured on the other side. Where a
document has no hashes of a file (version 3 documents, a file that could not be read),
its lines are matched by their text and function instead, lines of the same text in order.
Every column measured in both runs is compared, in seconds and in share; the order and the
summary follow one column (the new run's ranking column), the largest change first.
Pure functions over two documents, as ``analysis`` is.
"""

from __future__ import annotations

import os
from collections import defaultdict
from dataclasses import dataclass, field

from ..schema.model import Document, RankedLine
from .line_pairing import align
from .ranking import BYTES, COLUMNS, WALL, amount

ADDED, REMOVED, MATCHED, CHANGED = "added", "removed", "matched", "changed"
PAIRED = (MATCHED, CHANGED)


@dataclass
class LineChange:
    """One line of the script, in either run or both."""

    file: str  # relative to the run's root where it lies under one, else as recorded
    text: str  # the new run's text ("" for a changed line the new run did not measure)
    function: str
    old: RankedLine | None = None
    new: RankedLine | None = None
    status: str = MATCHED
    old_line: int | None = None  # its number in each version (None: not in that version)
    new_line: int | None = None
    was: str = ""  # a changed line: its old text

    @property
    def line(self) -> int:
        """The line's number in the new version (in the old one when it was removed)."""
        number = self.new_line if self.new_line is not None else self.old_line
        assert number is not None
        return number

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
    lines: list[LineChange] = field(default_factory=list)  # the largest change first
    aligned: bool = False  # at least one file paired by its two versions' lines (else by text)

    def total_change(self, kind: str | None = None) -> float | None:
        before, after = self.totals.get(kind or self.kind, (0.0, 0.0))
        return (after - before) / before if before > 0 else None

    def improved(self, limit: int = 5) -> list[LineChange]:
        paired = [c for c in self.lines if c.status in PAIRED and c.delta(self.kind) < 0]
        return sorted(paired, key=lambda c: c.delta(self.kind))[:limit]

    def regressed(self, limit: int = 5) -> list[LineChange]:
        paired = [c for c in self.lines if c.status in PAIRED and c.delta(self.kind) > 0]
        return sorted(paired, key=lambda c: -c.delta(self.kind))[:limit]

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


def _rows(doc: Document) -> dict[str, list[RankedLine]]:
    """The ranking's rows by file (relative to the run's root)."""
    out: dict[str, list[RankedLine]] = defaultdict(list)
    for row in doc.ranking.lines if doc.ranking is not None else []:
        out[relative(doc, row.file)].append(row)
    return out


def _hashes(doc: Document) -> dict[str, list[str]]:
    return {relative(doc, source.file): source.hashes for source in doc.sources}


def _by_text(file: str, before: list[RankedLine], after: list[RankedLine]) -> list[LineChange]:
    """A file without line hashes on one side: its lines matched by text and function."""
    groups: dict[tuple[str, str], list[list[RankedLine]]] = defaultdict(lambda: [[], []])
    for side, rows in enumerate((before, after)):
        for row in sorted(rows, key=lambda r: r.line):
            groups[(row.text.strip(), row.function)][side].append(row)
    out = []
    for (text, function), (olds, news) in groups.items():
        for i in range(max(len(olds), len(news))):
            old = olds[i] if i < len(olds) else None
            new = news[i] if i < len(news) else None
            status = ADDED if old is None else REMOVED if new is None else MATCHED
            out.append(
                LineChange(
                    file,
                    text,
                    function,
                    old,
                    new,
                    status,
                    old.line if old else None,
                    new.line if new else None,
                )
            )
    return out


def _aligned(
    file: str, before: list[RankedLine], after: list[RankedLine], old: list[str], new: list[str]
) -> list[LineChange]:
    """A file with both versions' line hashes: its lines paired as a text diff pairs them."""
    old_rows = {r.line: r for r in before}
    new_rows = {r.line: r for r in after}
    pairs = align(
        old, new, {n: r.text for n, r in old_rows.items()}, {n: r.text for n, r in new_rows.items()}
    )
    back = {pair.new_line: (i, pair.changed) for i, pair in pairs.items()}
    out = []
    for row in before:
        pair = pairs.get(row.line)
        if pair is None:
            out.append(LineChange(file, row.text, row.function, row, None, REMOVED, row.line, None))
            continue
        twin = new_rows.get(pair.new_line)
        text = twin.text if twin is not None else "" if pair.changed else row.text
        status = CHANGED if pair.changed else MATCHED
        was = row.text if pair.changed else ""
        out.append(LineChange(file, text, row.function, row, twin, status, row.line, pair.new_line, was))
    for row in after:
        found = back.get(row.line)
        if found is None:
            out.append(LineChange(file, row.text, row.function, None, row, ADDED, None, row.line))
        elif found[0] not in old_rows:  # in both versions, measured in the new run only
            status = CHANGED if found[1] else MATCHED
            out.append(LineChange(file, row.text, row.function, None, row, status, found[0], row.line))
    return out


def compare(old: Document, new: Document) -> Comparison:
    """Line by line, ``new`` against ``old``."""
    kinds = [k for k in _measured(new) if k in _measured(old)]
    result = Comparison(old=old, new=new, kind=_order_kind(old, new, kinds), kinds=kinds)
    old_rows, new_rows = _rows(old), _rows(new)
    old_hashes, new_hashes = _hashes(old), _hashes(new)
    for file in sorted({*old_rows, *new_rows}):
        before, after = old_rows.get(file, []), new_rows.get(file, [])
        if file in old_hashes and file in new_hashes:
            result.lines += _aligned(file, before, after, old_hashes[file], new_hashes[file])
            result.aligned = True
        else:
            result.lines += _by_text(file, before, after)
    for kind in kinds:
        result.totals[kind] = (
            sum(c.amount(kind, False) for c in result.lines),
            sum(c.amount(kind, True) for c in result.lines),
        )
    result.lines.sort(
        key=lambda c: (
            -abs(c.delta(result.kind)),
            -max(c.amount(result.kind, True), c.amount(result.kind, False)),
            c.file,
            c.line,
        )
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
        if line.status not in PAIRED:
            continue
        if max(line.share(c.kind, False), line.share(c.kind, True)) < min_share:
            continue
        old, new = line.amount(c.kind, False), line.amount(c.kind, True)
        if grew(old, new):
            out.append(Regression(line, old, new))
    return out
