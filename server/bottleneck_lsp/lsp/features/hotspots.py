"""``bottleneck.hotspots``: the last run's hot lines across its files, for a client's own
view (VS Code's Hotspots view): the one ranking's rows, where the editor shows them now,
each with its lens title and hover, and above them how the run stands (its summary, each
pass's status, the verdict). Read while a job runs too: the rows so far."""

from __future__ import annotations

import os
from typing import Any

from pygls import uris

from ...analysis import ranking
from ...job.spec import JobError
from ...schema.model import Document
from .. import annotations as marks
from ..server import BottleneckServer
from ..summary import summary_line
from .targets import last_result

HOTSPOTS = "bottleneck.hotspots"
MAX_ROWS = 500  # the view lists at most this many lines, loudest first


def _passes(doc: Document) -> list[dict[str, Any]]:
    return [
        {"name": str(p.name), "status": str(p.status), "detail": p.skip_reason or ""}
        for p in doc.passes
        if not p.omit
    ]


def placed(ls: BottleneckServer, script: str, doc: Document) -> list[marks.Annotation]:
    """The script's marked lines, in the ranking's order, where they stand now."""
    order = {id(row): i for i, row in enumerate(doc.ranking.lines if doc.ranking is not None else [])}
    found = [
        a
        for items in ls.state.annotations.values()
        for a in items
        if a.script == script and a.row is not None and id(a.row) in order
    ]
    found.sort(key=lambda a: order[id(a.row)])
    return found


def rows(ls: BottleneckServer, doc: Document, marked: list[marks.Annotation]) -> list[dict[str, Any]]:
    """A view's rows: each marked line with its figures, lens title and hover (a notebook
    cell's: with its notebook and cell, ``BottleneckServer.cell_place``)."""
    thresholds = ls.state.settings.thresholds
    out = []
    for a in marked[:MAX_ROWS]:
        row = a.row
        assert row is not None
        kind = ranking.marked_for(row)
        cell = row.columns.get(kind)
        out.append(
            ls.cell_place(a.uri)
            | {
                "uri": a.uri,
                "path": row.path or row.file,
                "line": a.line + 1,
                "column": a.column + 1,
                "text": row.text or a.text,
                "column_kind": kind,
                "column_label": ranking.SHORT[kind],
                "share": cell.share if cell is not None else 0.0,
                "time_s": cell.time_s if cell is not None else 0.0,
                "bytes": cell.bytes if cell is not None else None,
                "severity": ranking.severity(row, thresholds),
                "lens": marks.lens_title(a),
                "since": marks.since_text(a),
                "hover": marks.hover([a], doc),
            }
        )
    return out


def hotspots(ls: BottleneckServer, *args: Any) -> dict[str, Any]:
    """The ranked lines of a script's last result (the given script URI or the script whose
    hot lines are in that file, else the last one profiled), and how its run stands."""
    try:
        script, doc = last_result(ls, args)
    except JobError as exc:
        return {"script": None, "rows": [], "message": str(exc)}
    marked = placed(ls, script, doc)
    running = script in ls.state.running
    comparing = (
        "baseline" if script in ls.state.baselines else "last run" if script in ls.state.previous else ""
    )
    verdict = doc.verdict
    return {
        "script": uris.from_fs_path(script),
        "name": os.path.basename(script),
        "running": running,
        "status": str(doc.status),
        "summary": summary_line(doc, marked, "running" if running else ""),
        "ranked_by": doc.ranking.ranked_by if doc.ranking is not None else None,
        "verdict": (
            f"{verdict.bound.upper()}-bound (device busy {verdict.device_busy_fraction * 100:.0f}%)"
            if verdict is not None
            else ""
        ),
        "passes": _passes(doc),
        "compared_with": comparing,
        "rows": rows(ls, doc, marked),
        "cleared": script in ls.state.cleared,
    }


def register(server: BottleneckServer) -> None:
    server.command(HOTSPOTS)(hotspots)
