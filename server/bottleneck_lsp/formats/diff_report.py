"""A comparison (``compare.Comparison``) as text or JSON: ``bottleneck-lsp diff`` and the
CI gate's report."""

from __future__ import annotations

import os
from typing import Any

from ..analysis.compare import Comparison, LineChange, Regression
from ..analysis.ranking import BYTES, KIND_LABEL, SHORT
from .wording import size

SCHEMA = "bottleneck-lsp.diff"
VERSION = 1
UNIT = {kind: "bytes" if kind in BYTES else "s" for kind in KIND_LABEL}


def percent(change: float | None) -> str:
    return "new" if change is None else f"{change * 100:+.0f}%"


def _seconds(value: float) -> str:
    return f"{value:.3f} s" if value >= 1.0 else f"{value * 1000:.1f} ms"  # one unit per column


def _amount(kind: str, value: float) -> str:
    return size(value) if kind in BYTES else _seconds(value)


def _where(c: LineChange) -> str:
    moved = c.old is not None and c.new is not None and c.old.line != c.new.line
    return f"{c.file}:{c.line}" + (f" (was {c.old.line})" if moved and c.old is not None else "")


def _row(c: LineChange, kind: str) -> str:
    old, new = c.amount(kind, False), c.amount(kind, True)
    shares = f"{c.share(kind, False) * 100:.1f}% -> {c.share(kind, True) * 100:.1f}% of {SHORT[kind]}"
    return (
        f"  {_where(c)}: {_amount(kind, old)} -> {_amount(kind, new)} ({percent(c.change(kind))}; {shares})"
        f"  `{c.text[:60]}`"
    )


def render(c: Comparison) -> str:
    out = [f"bottleneck-lsp diff: {c.old.script} -> {c.new.script}"]
    if not c.kinds:
        out.append("The two runs measured no column in common: nothing to compare.")
        return "\n".join(out) + "\n"
    for kind in c.kinds:
        before, after = c.totals[kind]
        change = "no change" if before == after == 0 else percent(c.total_change(kind))
        out.append(
            f"{KIND_LABEL[kind]} on your lines: {_amount(kind, before)} -> {_amount(kind, after)} ({change})"
        )
    out.append(f"Lines ordered by {KIND_LABEL[c.kind]}; matched by file, text and function.")
    for title, rows in (("Improved", c.improved()), ("Regressed", c.regressed())):
        out.append("")
        out.append(f"{title}:")
        out += [_row(r, c.kind) for r in rows] or ["  (none)"]
    for title, rows in (("Only in the new run", c.added()), ("Only in the old run", c.removed())):
        if rows:
            out.append("")
            out.append(f"{title}:")
            for r in rows[:10]:
                side = r.status == "added"
                out.append(f"  {r.file}:{r.line}: {_amount(c.kind, r.amount(c.kind, side))}  `{r.text[:60]}`")
            if len(rows) > 10:
                out.append(f"  ... and {len(rows) - 10} more")
    return "\n".join(out) + "\n"


def to_json(c: Comparison) -> dict[str, Any]:
    def cells(line: LineChange) -> dict[str, Any]:
        return {
            kind: {
                "old": line.amount(kind, False),
                "new": line.amount(kind, True),
                "delta": round(line.delta(kind), 9),
                "unit": UNIT[kind],
                "change": line.change(kind),
                "old_share": line.share(kind, False),
                "new_share": line.share(kind, True),
            }
            for kind in c.kinds
        }

    return {
        "schema": SCHEMA,
        "version": VERSION,
        "old": {"script": c.old.script, "created": c.old.created},
        "new": {"script": c.new.script, "created": c.new.created},
        "ordered_by": c.kind,
        "totals": {
            kind: {"old": before, "new": after, "unit": UNIT[kind], "change": c.total_change(kind)}
            for kind, (before, after) in c.totals.items()
        },
        "lines": [
            {
                "file": line.file,
                "text": line.text,
                "function": line.function,
                "status": line.status,
                "old_line": line.old.line if line.old is not None else None,
                "new_line": line.new.line if line.new is not None else None,
                "columns": cells(line),
            }
            for line in c.lines
        ],
    }


def regression_lines(c: Comparison, found: list[Regression], threshold: float) -> list[str]:
    """Compiler-style errors, one per regression: terminals and CI logs make links of them."""
    label = KIND_LABEL[c.kind]
    out = []
    for r in found:
        if r.change is None:
            out.append(
                f"{c.new.script}:1:1: error: {label} on your lines {percent(r.ratio)} since the baseline "
                f"({_seconds(r.before_s)} -> {_seconds(r.after_s)}; allowed {threshold * 100:.0f}%)"
            )
            continue
        row = r.change.new
        assert row is not None
        path = row.file if os.path.isabs(row.file) else r.change.file
        out.append(
            f"{path}:{row.line}:{row.column}: error: {label} {percent(r.ratio)} since the baseline "
            f"({_seconds(r.before_s)} -> {_seconds(r.after_s)}; allowed {threshold * 100:.0f}%)"
        )
    return out
