"""A comparison (``compare.Comparison``) as text or JSON: ``bottleneck-lsp diff`` and the
CI gate's report."""

from __future__ import annotations

import os
from typing import Any

from ..analysis.compare import ADDED, CHANGED, REMOVED, Comparison, LineChange, Regression
from ..analysis.ranking import BYTES, KIND_LABEL, SHORT
from .wording import size

SCHEMA = "bottleneck-lsp.diff"
VERSION = 2  # 1: no "changed" status, no "was"; lines paired by text
UNIT = {kind: "bytes" if kind in BYTES else "s" for kind in KIND_LABEL}


def percent(change: float | None) -> str:
    return "new" if change is None else f"{change * 100:+.0f}%"


def _seconds(value: float) -> str:
    return f"{value:.3f} s" if value >= 1.0 else f"{value * 1000:.1f} ms"  # one unit per column


def _amount(kind: str, value: float) -> str:
    return size(value) if kind in BYTES else _seconds(value)


SHOWN = 15  # lines the text lists; the JSON has them all


def _where(c: LineChange) -> str:
    moved = c.old_line is not None and c.new_line is not None and c.old_line != c.new_line
    return f"{c.file}:{c.line}" + (f" (was {c.old_line})" if moved else "")


def _quoted(text: str) -> str:
    return f"`{text[:60]}`"


def _row(c: LineChange, kind: str) -> str:
    old, new = c.amount(kind, False), c.amount(kind, True)
    if c.status == ADDED:
        return f"  {c.file}:{c.line} added: {_amount(kind, new)}  {_quoted(c.text)}"
    if c.status == REMOVED:
        return f"  {c.file}:{c.line} (old) removed: {_amount(kind, old)}  {_quoted(c.text)}"
    shares = f"{c.share(kind, False) * 100:.1f}% -> {c.share(kind, True) * 100:.1f}% of {SHORT[kind]}"
    head = f"  {_where(c)}{' changed' if c.status == CHANGED else ''}: "
    text = (
        f"was: {_quoted(c.was)}" + (f"  now: {_quoted(c.text)}" if c.text else "")
        if c.was
        else _quoted(c.text)
    )
    return f"{head}{_amount(kind, old)} -> {_amount(kind, new)} ({percent(c.change(kind))}; {shares})  {text}"


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
    paired = (
        "each file's two versions aligned as a text diff aligns them (a line edited in place is changed)"
        if c.aligned
        else "matched by file, text and function (the results keep no line hashes: made before version 4)"
    )
    out.append("")
    out.append(f"Lines by change in {KIND_LABEL[c.kind]}, largest first; {paired}:")
    rows = [r for r in c.lines if r.delta(c.kind) != 0]
    out += [_row(r, c.kind) for r in rows[:SHOWN]] or ["  (no line changed)"]
    if len(rows) > SHOWN:
        out.append(f"  ... and {len(rows) - SHOWN} more (--format json lists them all)")
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
        "aligned": c.aligned,
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
                "old_line": line.old_line,
                "new_line": line.new_line,
                "was": line.was,
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
