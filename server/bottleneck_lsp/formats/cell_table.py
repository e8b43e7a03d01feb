"""A profiled cell's lines as a table under the cell (the ``%%bottleneck`` magic): text for
a terminal, HTML for Jupyter. One row per hot line, as the report ranks them: the cell's
own lines by number, the kernel's other cells' as ``In[3]:5``, other files' as ``file:line``."""

from __future__ import annotations

import html
import os
from collections.abc import Mapping

from ..analysis import coverage, ranking
from ..analysis.ranking import COMPILING, CPU, IMPORTING, MEMORY, WALL, Hotspot, Thresholds
from ..schema.contract import COVERAGE_NOTE, COVERAGE_NOTE_DEVICE, WINDOWS_NOTE
from ..schema.model import Document, PassStatus
from . import wording

HEADERS = ("line", "wall", "time", "op CPU", "memory", "top ops", "code")
ONE_TIME = "of it once"  # after "time", where a line paid torch.compile's or its import's one-time work
_NONE: Mapping[str, str] = {}


def _share(row: Hotspot, kind: str) -> str:
    cell = row.columns.get(kind)
    return f"{cell.share * 100:.1f}%" if cell is not None else "-"


def _memory(row: Hotspot) -> str:
    cell = row.columns.get(MEMORY)
    return wording.size(cell.bytes or 0) if cell is not None and cell.bytes else "-"


def _where(row: Hotspot, cell_file: str, cells: Mapping[str, str]) -> str:
    if row.file == cell_file:
        return str(row.line)
    return f"{cells.get(row.file) or os.path.basename(row.file)}:{row.line}"


def _one_time(row: Hotspot) -> str:
    """Of the line's wall time, what torch.compile's compiling and torch's import of its
    compiler stack took (one-time work: a next run of the cell pays less of it)."""
    said = [
        f"{wording.ms(row.columns[kind].time_s)} {what}"
        for kind, what in ((COMPILING, "compiling"), (IMPORTING, "loading torch's compiler"))
        if kind in row.columns
    ]
    return ", ".join(said) or "-"


def rows(
    doc: Document, cell_file: str, thresholds: Thresholds, cells: Mapping[str, str] = _NONE
) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The table's headers and rows, hottest first (the ranking's order and thresholds);
    ``cells``: the kernel's other cells' names and labels (``In[3]``), for their lines. The
    one-time column only where a row has some."""
    hot = ranking.hotspots(doc, thresholds)
    once = any(COMPILING in row.columns or IMPORTING in row.columns for row in hot)
    out: list[tuple[str, ...]] = []
    for row in hot:
        time = wording.ms(row.time_s) if row.kind in row.columns else "-"
        out.append(
            (
                _where(row, cell_file, cells),
                _share(row, WALL),
                time,
                *((_one_time(row),) if once else ()),
                _share(row, CPU),
                _memory(row),
                wording.ops_text(row, plain=True) or "-",
                row.text,
            )
        )
    headers = (*HEADERS[:3], ONE_TIME, *HEADERS[3:]) if once else HEADERS
    return headers, out


def _caption(doc: Document) -> str:
    ranked = doc.ranking.ranked_by if doc.ranking is not None else None
    by = ranking.KIND_LABEL.get(ranked or "", "nothing measured")
    parts = [f"bottleneck: this cell's lines by {by}, run once in this kernel"]
    sample = doc.pass_named("sample")
    if sample is not None and sample.script_wall_s:
        parts.append(f"it took {wording.ms(sample.script_wall_s)}")
    error = sample.error if sample is not None else None
    if error is not None:
        at = f" at line {error.line}" if error.line else ""
        parts.append(f"it raised {error.type}{at} (the lines measured until then)")
    elif sample is not None and sample.status == PassStatus.TERMINATED:
        parts.append("it was interrupted (the lines measured until then)")
    return "; ".join(parts)


def notes(doc: Document) -> list[str]:
    """What the op CPU and memory columns cover (the windows), then what the passes noted
    (the windows' own cost, said by the coverage, left out)."""
    cpu = doc.pass_named("cpu")
    covered = coverage.covered(cpu)
    out = [f"op CPU and memory: {covered}; their shares are of the recorded time"] if covered else []
    for part in doc.passes:
        out += [
            n for n in part.notes if not n.startswith((WINDOWS_NOTE, COVERAGE_NOTE, COVERAGE_NOTE_DEVICE))
        ]
    return out


def text(doc: Document, cell_file: str, thresholds: Thresholds, cells: Mapping[str, str] = _NONE) -> str:
    headers, body = rows(doc, cell_file, thresholds, cells)
    table = [headers, *body]
    widths = [max(len(r[i]) for r in table) for i in range(len(headers) - 1)]
    lines = [_caption(doc)]
    for r in table:
        padded = [r[0].rjust(widths[0]), *(c.rjust(w) for c, w in zip(r[1:-2], widths[1:-1], strict=True))]
        lines.append("  ".join([*padded, r[-2].ljust(widths[-1]), r[-1][:70]]).rstrip())
    if not body:
        lines.append("(no line passed the thresholds)")
    return "\n".join([*lines, *notes(doc)]) + "\n"


def html_table(
    doc: Document, cell_file: str, thresholds: Thresholds, cells: Mapping[str, str] = _NONE
) -> str:
    headers, hot = rows(doc, cell_file, thresholds, cells)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(f'<td style="text-align:right">{html.escape(c)}</td>' for c in r[:-2])
        + f'<td style="text-align:left">{html.escape(r[-2])}</td>'
        + f'<td style="text-align:left"><code>{html.escape(r[-1])}</code></td>'
        + "</tr>"
        for r in hot
    )
    if not body:
        body = f'<tr><td colspan="{len(headers)}">(no line passed the thresholds)</td></tr>'
    foot = "".join(f"<li>{html.escape(n)}</li>" for n in notes(doc))
    return (
        f'<div class="bottleneck"><p>{html.escape(_caption(doc))}</p>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        + (f'<ul style="font-size:smaller">{foot}</ul>' if foot else "")
        + "</div>"
    )
