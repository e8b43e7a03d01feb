"""Result document -> what the editor shows: diagnostics, code lenses, hovers.

An ``Annotation`` is one marked line (0-based) of one file, with the line's text when it
was profiled, so that edits can move it or drop it (see ``tracking.py``).
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types
from pygls import uris

from ..analysis import compiled, ranking
from ..analysis.compare import ADDED, CHANGED, LineChange, compare
from ..analysis.ranking import Hotspot, Thresholds
from ..formats import wording
from ..formats.diff_report import percent
from ..formats.wording import NOTABLE_MEMORY_SHARE
from ..notebook.cell_paths import short_place, split_cell_path
from ..notebook.document import cell_lines
from ..schema.model import Document, ForwardLink, Function, Pass

SOURCE = "bottleneck"
ERROR_CODE = "script-error"
OUT_OF_MEMORY = "out-of-memory"
DID_NOT_EXIT = "process-did-not-exit"


@dataclass(slots=True)
class Annotation:
    script: str  # the profiled script this came from
    uri: str
    line: int  # 0-based
    text: str  # the line's stripped text when profiled ("" when unknown)
    row: Hotspot | None = None  # the line's row: every column measured
    failed: Pass | None = None  # the pass where the script failed here (its ``error``)
    function: Function | None = None  # a hot function's def line (cProfile)
    column: int = 0  # 0-based
    since: LineChange | None = None  # the line in the run compared with (previous or baseline)
    since_label: str = ""  # "last run", "baseline"
    held: int = 0  # bytes this line held when the script ran out of memory (memo["held"] says so)
    # Text that does not depend on where the line is now (lens title, a diagnostic's body),
    # made once: edits move annotations, and a file may hold thousands of them. Shared
    # by the moved copies.
    memo: dict[Any, str] = field(default_factory=dict, compare=False, repr=False)
    origin: int = -1  # the line (0-based) in the text that was profiled; edits move ``line`` only
    # the share of the memory peak from which the lens words the line's memory (the thresholds')
    memory_share: float = NOTABLE_MEMORY_SHARE
    lingered: str = ""  # a thread that held the process's exit waits or runs here: in words

    def __post_init__(self) -> None:
        if self.origin < 0:
            self.origin = self.line

    def moved(self, line: int) -> Annotation:
        # positional, not dataclasses.replace: an edit above thousands of marks moves them all
        return Annotation(
            self.script,
            self.uri,
            line,
            self.text,
            self.row,
            self.failed,
            self.function,
            self.column,
            self.since,
            self.since_label,
            self.held,
            self.memo,
            self.origin,
            self.memory_share,
            self.lingered,
        )


@functools.lru_cache(maxsize=4096)
def file_uri(path: str) -> str:
    return uris.from_fs_path(path) or path


def canonical_uri(uri: str) -> str:
    """A client's spelling of a file URI as this server writes it (clients differ: lower
    case percent escapes, ``(`` or ``@`` left unescaped), so that lookups find it."""
    if not uri.startswith("file:"):
        return uri
    path = uris.to_fs_path(uri)
    return file_uri(path) if path else uri


def read_lines(path: str) -> list[str] | None:
    """A file's lines as on disk now (None when it cannot be read); of a notebook cell's
    path (``nb.ipynb#cell4``), the cell's."""
    cell = split_cell_path(path)
    if cell is not None:
        return cell_lines(*cell)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().splitlines()
    except OSError:
        return None


def _line_text(path: str, line: int) -> str:
    if split_cell_path(path) is not None:
        lines = read_lines(path) or []
        return lines[line - 1].strip()[:200] if 1 <= line <= len(lines) else ""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.strip()[:200]
    except OSError:
        pass
    return ""


def build(
    doc: Document, thresholds: Thresholds, since: Document | None = None, since_label: str = "last run"
) -> list[Annotation]:
    """Every annotation for one result: hot lines (one per line, the rows that pass the
    thresholds), hot functions, the script's error. With ``since`` (an earlier result of
    the script), each hot line carries its change since then."""
    script = doc.script
    changes: dict[int, LineChange] = {}
    if since is not None:
        changes = {id(c.new): c for c in compare(since, doc).lines if c.new is not None}
    out = [
        Annotation(
            script,
            file_uri(row.file),
            row.line - 1,
            row.text or _line_text(row.file, row.line),
            row,
            column=max(row.column - 1, 0),
            since=changes.get(id(row)),
            since_label=since_label,
            memory_share=thresholds.min_memory_share,
        )
        for row in ranking.hotspots(doc, thresholds)
        if row.line >= 1  # a position the editor can show
    ]
    for func in ranking.hot_functions(doc, thresholds):
        out.append(_at(script, func.file, func.line, function=func))
    failed = ranking.failed_pass(doc)
    error = failed.error if failed is not None else None
    if error is not None and error.file and error.line:
        column = max((error.column or 1) - 1, 0)
        out.append(_at(script, error.file, error.line, failed=failed, column=column))
    for row, held in ranking.out_of_memory_holders(doc):
        a = Annotation(
            script, file_uri(row.file), row.line - 1, row.text, column=max(row.column - 1, 0), held=held
        )
        where = f" at {short_place(error.file, error.line)}" if error is not None and error.file else ""
        a.memo["held"] = wording.held_at_failure(row, held) + where
        out.append(a)
    out += _compiled(doc)
    for part, thread in ranking.lingering_threads(doc):
        if thread.file and thread.line:
            source = read_lines(thread.file) or []
            raw = source[thread.line - 1] if thread.line <= len(source) else ""
            column = len(raw) - len(raw.lstrip())
            words = ranking.lingering_words(part, thread)
            out.append(_at(script, thread.file, thread.line, lingered=words, column=column))
    return out


GRAPH_BREAK = "graph-break"
RECOMPILE = "recompile"
RECOMPILE_LIMIT = "recompile-limit"


def _compiled(doc: Document) -> list[Annotation]:
    """torch.compile's records on their lines: a diagnostic per graph break (a warning) and
    per recompile (on the call that made it; a warning where the limit was hit), a lens on
    each torch.compile call saying what became of what it compiled."""
    found = compiled.dynamo(doc)
    if found is None:
        return []
    out = []
    for b in found.graph_breaks:
        hints = "".join(f"\n- {h}" for h in b.hints)
        out.append(
            _marked(
                doc.script,
                b.file,
                b.line,
                wording.graph_break_text(b),
                GRAPH_BREAK,
                _WARNING,
                f"**torch.compile: graph break**{f' of `{b.function}`' if b.function else ''}, "
                f"{wording.counted(b.count, 'time')}: {b.reason}"
                + (f"\n\n{b.explanation}" if b.explanation else "")
                + (f"\n\nHints:{hints}" if hints else ""),
            )
        )
    for r in found.recompiles:
        code, severity = (RECOMPILE_LIMIT, _WARNING) if r.limit else (RECOMPILE, _INFORMATION)
        text = wording.recompile_text(r)
        out.append(_marked(doc.script, r.file, r.line, text, code, severity, f"**{text}**"))
    for c in found.calls:
        a = _at(doc.script, c.file, c.line, column=_indent(c.file, c.line))
        a.memo["compile_lens"] = wording.compile_call_text(c)
        out.append(a)
    return out


def _marked(script: str, file: str, line: int, text: str, code: str, severity: int, more: str) -> Annotation:
    a = _at(script, file, line, column=_indent(file, line))
    a.memo.update(compiled=text, compiled_code=code, compiled_severity=str(severity), compiled_hover=more)
    return a


def _indent(file: str, line: int) -> int:
    source = read_lines(file) or []
    raw = source[line - 1] if 0 < line <= len(source) else ""
    return len(raw) - len(raw.lstrip())


def _at(script: str, file: str, line: int, **what: Any) -> Annotation:
    """An annotation on a line that has no row (a hot function, an error)."""
    return Annotation(script, file_uri(file), line - 1, _line_text(file, line), **what)


_ERROR = int(types.DiagnosticSeverity.Error)
_WARNING = int(types.DiagnosticSeverity.Warning)
_INFORMATION = int(types.DiagnosticSeverity.Information)
_HINT = int(types.DiagnosticSeverity.Hint)
_SEVERITY = {ranking.WARNING: _WARNING, ranking.INFORMATION: _INFORMATION, ranking.HINT: _HINT}


_quote = json.encoder.encode_basestring_ascii  # C: '"..."', ASCII
_float = float.__repr__  # what json writes for a float
_SOURCE = _quote(SOURCE)


def _width(text: str) -> int:
    """The text's length as LSP counts positions (UTF-16 code units: an emoji is two)."""
    return max(len(text.encode("utf-16-le")) // 2, 1)


def _range(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def _row_json(row: Hotspot) -> str:
    """The numbers of one row: the ranking column, then every column's share and time;
    ``exact`` and ``backward`` only when they say something (thousands of diagnostics go
    out in one message)."""
    extra = ('"exact":false,' if not row.exact else "") + ('"backward":true,' if row.backward else "")
    cells = ",".join(
        f'{_quote(kind)}:{{"share":{_float(float(c.share))},"timeS":{_float(round(float(c.time_s), 6))}'
        + (f',"bytes":{int(c.bytes)}' if c.bytes is not None else "")
        + "}"
        for kind, c in row.columns.items()
    )
    return (
        f'{{"rankedBy":{_quote(row.kind)},{extra}"share":{_float(float(row.share))},'
        f'"timeS":{_float(round(float(row.time_s), 6))},"columns":{{{cells}}}}}'
    )


def _link_message(link: ForwardLink) -> str:
    text = f"forward line whose backward costs {link.backward_cpu_us / 1000:.1f} ms of CPU time"
    device_us = link.backward_device_us
    if device_us:
        text += f" and {device_us / 1000:.1f} ms on the device"
    return text + " here"


def diagnostic(a: Annotation, thresholds: Thresholds) -> str | None:
    """An LSP Diagnostic as JSON text (compact, ASCII), ready to go into a message.

    Written directly rather than built as lsprotocol objects or dictionaries: a run with
    thousands of hot lines publishes them in one message, and objects, their conversion and
    a generic encoder cost several times this (see ``server.BottleneckServer.publish``).
    """
    if a.failed is not None and a.failed.error is not None:
        err = a.failed.error
        width = 1 if err.type == "SyntaxError" else _width(a.text)
        return json.dumps(
            {
                "range": _range(a.line, a.column, a.column + width),
                "message": f"{err.type}: {err.message} (in the {a.failed.name} pass)",
                "severity": _ERROR,
                "source": SOURCE,
                "code": ERROR_CODE,
                "data": {"script": a.script, "status": a.failed.status},
            },
            separators=(",", ":"),
        )
    if a.held:
        return json.dumps(
            {
                "range": _range(a.line, a.column, a.column + _width(a.text)),
                "message": a.memo["held"],
                "severity": _ERROR,
                "source": SOURCE,
                "code": OUT_OF_MEMORY,
                "data": {"script": a.script, "heldBytes": a.held},
            },
            separators=(",", ":"),
        )
    if "compiled" in a.memo:
        return json.dumps(
            {
                "range": _range(a.line, a.column, a.column + _width(a.text)),
                "message": a.memo["compiled"],
                "severity": int(a.memo["compiled_severity"]),
                "source": SOURCE,
                "code": a.memo["compiled_code"],
                "data": {"script": a.script},
            },
            separators=(",", ":"),
        )
    if a.lingered:
        return json.dumps(
            {
                "range": _range(a.line, a.column, a.column + _width(a.text)),
                "message": a.lingered,
                "severity": _WARNING,
                "source": SOURCE,
                "code": DID_NOT_EXIT,
                "data": {"script": a.script},
            },
            separators=(",", ":"),
        )
    row = a.row
    if row is None:
        return None
    key = (thresholds.warning_share, thresholds.min_share, thresholds.min_memory_share)
    body = a.memo.get(key)
    if body is None:
        body = a.memo[key] = _diagnostic_body(row, thresholds)
    line, start = a.line, a.column
    end = start + _width(a.text)
    return (
        f'{{"range":{{"start":{{"line":{line},"character":{start}}},'
        f'"end":{{"line":{line},"character":{end}}}}},{body}'
    )


def _diagnostic_body(row: Hotspot, thresholds: Thresholds) -> str:
    """A row's diagnostic without its range: the same wherever edits move the line."""
    related = ""
    if row.forward_lines:
        related = ',"relatedInformation":' + json.dumps(
            [
                {
                    "location": {"uri": file_uri(f.file), "range": _range(f.line - 1, 0, 0)},
                    "message": _link_message(f),
                }
                for f in row.forward_lines
            ],
            separators=(",", ":"),
        )
    severity = _SEVERITY[ranking.severity(row, thresholds)]
    message = wording.message(row, memory_share=thresholds.min_memory_share)
    return (
        f'"message":{_quote(message)},"severity":{severity},'
        f'"source":{_SOURCE},"code":{_quote(ranking.marked_for(row))},'
        f'"data":{{"row":{_row_json(row)}}}{related}}}'
    )


def lens_title(a: Annotation) -> str:
    title = a.memo.get("lens")
    if title is None:
        title = a.memo["lens"] = _lens_title(a)
    return title


def _lens_title(a: Annotation) -> str:
    if a.function is not None:
        f = a.function
        return (
            f"tottime {f.tottime_s:.2f} s · cumtime {f.cumtime_s:.2f} s · {wording.counted(f.ncalls, 'call')}"
        )
    if a.row is None:
        return ""
    change = since_text(a)
    return wording.lens(a.row, a.memory_share) + (f" · {change}" if change else "")


def since_text(a: Annotation) -> str:
    """ "-35% since last run", "new since baseline", or "" when there is nothing to compare."""
    if a.since is None or a.row is None:
        return ""
    if a.since.status == ADDED:
        return f"new since {a.since_label}"
    edited = " (edited)" if a.since.status == CHANGED else ""
    return f"{percent(a.since.change(a.row.kind))} since {a.since_label}{edited}"


def code_lens(a: Annotation) -> types.CodeLens | None:
    if a.failed is not None or a.held or a.lingered or "compiled" in a.memo:
        return None
    if "compile_lens" in a.memo:
        return types.CodeLens(
            range=types.Range(types.Position(a.line, 0), types.Position(a.line, 0)),
            command=types.Command(
                title=a.memo["compile_lens"], command="bottleneck.report", arguments=[file_uri(a.script)]
            ),
        )
    return types.CodeLens(
        range=types.Range(types.Position(a.line, 0), types.Position(a.line, 0)),
        command=types.Command(
            title=lens_title(a), command="bottleneck.report", arguments=[file_uri(a.script)]
        ),
    )


def _forward_link(line: ForwardLink) -> str:
    """A link to a forward line; a notebook cell's in words (a cell has no file URI)."""
    cell = split_cell_path(line.file)
    if cell is not None:
        return f"cell {cell[1]}, line {line.line}"
    return f"[line {line.line}]({file_uri(line.file)}#L{line.line})"


def doc_ranks(doc: Document | None) -> str:
    n = doc.distributed.world_size if doc is not None and doc.distributed is not None else 0
    return f"{n} ranks" if n else "ranks"


def _denominator(doc: Document | None, kind: str) -> str:
    """What the column's share is of, in this document (windows of the one run said)."""
    said = doc.ranking.denominators if doc is not None and doc.ranking is not None else {}
    return said.get(kind) or ranking.DENOMINATOR[kind]


def hover(annotations: list[Annotation], doc: Document | None) -> str:
    """Markdown: a table row per pass for this line, and the CPU/GPU verdict."""
    rows = []
    notes = []
    for a in annotations:
        if a.failed is not None and a.failed.error is not None:
            notes.append(f"**{a.failed.error.type}**: {a.failed.error.message}")
        if a.held:
            notes.append(f"**Out of memory**: this line {a.memo['held']}.")
        if a.lingered:
            notes.append(f"**Process did not exit**: {a.lingered}.")
        if "compiled_hover" in a.memo:
            notes.append(a.memo["compiled_hover"])
        if "compile_lens" in a.memo:
            notes.append(f"**{a.memo['compile_lens']}**")
        if a.function is not None:
            f = a.function
            notes.append(
                f"`{f.function}`: {wording.counted(f.ncalls, 'call')}, tottime {f.tottime_s:.3f} s, "
                f"cumtime {f.cumtime_s:.3f} s ({f.share * 100:.1f}% of the cProfile pass)"
            )
        row = a.row
        if row is None:
            continue
        if a.since is not None and a.since.status != ADDED:
            before, after = a.since.amount(row.kind, False), a.since.amount(row.kind, True)
            notes.append(
                f"Since {a.since_label}: {ranking.SHORT[row.kind]} {before * 1000:.1f} ms → "
                f"{after * 1000:.1f} ms ({percent(a.since.change(row.kind))})."
                + (f" The line was edited since: it read `{a.since.was[:80]}`." if a.since.was else "")
            )
        for kind in ranking.COLUMNS:
            cell = row.columns.get(kind)
            if cell is None:
                continue
            mark = " (ranked by)" if kind == row.kind else ""
            figure = (
                f"{wording.size(cell.bytes or 0)} live"
                if kind == ranking.MEMORY
                else f"+{wording.size(cell.bytes or 0)}"
                if kind == ranking.RSS
                else f"{cell.time_s * 1000:.1f} ms"
            )
            rows.append(
                f"| {ranking.SHORT[kind]}{mark} | {cell.share * 100:.1f}% | {figure} "
                f"| {_denominator(doc, kind)} |"
            )
        spread = wording.spread_text(row, row.kind)
        if spread:
            stands_out = wording.rank_spread(row)
            notes.append(
                f"Across the {doc_ranks(doc)} ({ranking.SHORT[row.kind]}, the figures above are the "
                f"ranks' medians): {spread}" + (f"; **{stands_out}**." if stands_out else ".")
            )
        if row.memory is not None and row.memory.allocations:
            notes.append(f"Memory: {wording.memory_text(row)}.")
        if row.ops:
            notes.append(
                f"Ops from this line ({wording.counted(row.count, 'call')}): "
                + ", ".join(f"`{o.name}` ×{o.count} ({o.self_cpu_us / 1000:.1f} ms)" for o in row.ops[:5])
                + "."
            )
        if row.compiled:
            said = wording.compiled_text(row)
            notes.append(f"{said[0].upper()}{said[1:]}.")
        if row.kernels:
            notes.append(
                "Device work launched here: "
                + ", ".join(
                    f"`{ranking.kernel_label(k.name)}` ×{k.count} ({k.device_us / 1000:.1f} ms)"
                    for k in row.kernels[:5]
                )
                + "."
            )
        if row.calls:
            notes.append(
                "Calls from this line (cProfile): "
                + ", ".join(f"`{c.name}` ×{c.count} ({c.cumtime_s * 1000:.1f} ms)" for c in row.calls[:5])
                + "."
            )
        if row.backward and row.forward_lines:
            links = ", ".join(_forward_link(f) for f in row.forward_lines[:5])
            notes.append(f"Backward work for forward {links}.")
        if not row.exact:
            notes.append(f"Inside `{row.function}`; the profiler cannot name the exact line.")
    out = ["**bottleneck**"]
    if rows:
        out += ["", "| column | share | time | share of |", "| --- | --- | --- | --- |", *rows]
    if notes:
        out += ["", *notes]
    ranks = doc.distributed if doc is not None else None
    straggler = ranks.straggler if ranks is not None else None
    if ranks is not None and straggler is not None:
        out += ["", f"**Straggler**: {wording.straggler_sentence(straggler, ranks)}."]
        here = {(a.row.file, a.row.line) for a in annotations if a.row is not None}
        for e in straggler.lines:
            if (e.file, e.line) in here:
                out.append(f"On this line {wording.excess_sentence(straggler, e.rank_s, e.others_median_s)}.")
    verdict = doc.verdict if doc is not None else None
    if verdict is not None:
        sentence = wording.verdict_sentence(verdict)
        bound, _, rest = sentence.partition(":")
        out += ["", f"**{bound}**:{rest}"]
        if verdict.pass_:
            out.append(f"Measured in the {verdict.pass_} pass.")
    if doc is not None:
        out += ["", f"Profiled {os.path.basename(doc.script)} at {doc.created or '?'}."]
    return "\n".join(out)
