"""Result document -> what the editor shows: diagnostics, code lenses, hovers.

An ``Annotation`` is one marked line (0-based) of one file, with the line's text when it
was profiled, so that edits can move it or drop it (see ``tracking.py``).
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass, replace
from typing import Any

from lsprotocol import types
from pygls import uris

from .. import analysis, report
from ..analysis import Hotspot, Thresholds

SOURCE = "bottleneck"
ERROR_CODE = "script-error"
SHORT = {analysis.CPU: "CPU", analysis.DEVICE: "device", analysis.PYTHON: "Python", analysis.WAIT: "wait"}


@dataclass(slots=True)
class Annotation:
    script: str  # the profiled script this came from
    uri: str
    line: int  # 0-based
    text: str  # the line's stripped text when profiled ("" when unknown)
    hotspots: tuple[Hotspot, ...] = ()
    error: dict[str, Any] | None = None
    function: dict[str, Any] | None = None  # a hot function's def line (cProfile)
    column: int = 0  # 0-based

    def moved(self, line: int) -> Annotation:
        return replace(self, line=line)


@functools.lru_cache(maxsize=4096)
def _uri(path: str) -> str:
    return uris.from_fs_path(path) or path


def _line_text(path: str, line: int) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, start=1):
                if number == line:
                    return text.strip()[:200]
    except OSError:
        pass
    return ""


def _by_share(spot: Hotspot) -> float:
    return spot.share


def build(doc: dict[str, Any], thresholds: Thresholds) -> list[Annotation]:
    """Every annotation for one result: hot lines, hot functions, the script's error."""
    script = doc["script"]
    grouped: dict[tuple[str, int], list[Hotspot]] = {}
    for spot in analysis.hotspots(doc, thresholds):
        key = (spot.file, spot.line)
        group = grouped.get(key)
        if group is None:
            grouped[key] = [spot]
        else:
            group.append(spot)
    out = []
    for (path, line), spots in grouped.items():
        if len(spots) == 1:  # the common case, without the generators
            text, column = spots[0].text, spots[0].column
        else:
            spots.sort(key=_by_share, reverse=True)
            text = next((h.text for h in spots if h.text), "")
            column = min(h.column for h in spots)
        out.append(
            Annotation(
                script,
                _uri(path),
                line - 1,
                text or _line_text(path, line),
                tuple(spots),
                column=max(column - 1, 0),
            )
        )
    for func in analysis.hot_functions(doc, thresholds):
        out.append(
            Annotation(
                script,
                _uri(func["file"]),
                func["line"] - 1,
                _line_text(func["file"], func["line"]),
                function=func,
            )
        )
    error = analysis.first_error(doc)
    if error and error.get("file") and error.get("line"):
        out.append(
            Annotation(
                script,
                _uri(error["file"]),
                error["line"] - 1,
                _line_text(error["file"], error["line"]),
                error=error,
                column=max((error.get("column") or 1) - 1, 0),
            )
        )
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.01 else f"{seconds * 1000:.2f} ms"


def _ops(spot: Hotspot, n: int = 3) -> str:
    return ", ".join([f"{o['name']} ×{o['count']}" for o in spot.ops[:n]])


_UNIT = {analysis.PYTHON: "samples", analysis.DEVICE: "kernels"}


def _kernels(spot: Hotspot, n: int = 3) -> str:
    return ", ".join([f"{analysis.kernel_label(k['name'])} ×{k['count']}" for k in spot.kernels[:n]])


def message(spot: Hotspot) -> str:
    if spot.kind == analysis.WAIT:
        return (
            f"the CPU waited {_ms(spot.time_s)} here for the device ({spot.share * 100:.1f}% of the CUDA "
            "pass's wall time): the GPU is behind at this line"
        )
    text = (
        f"{spot.share * 100:.1f}% of {analysis.KIND_LABEL[spot.kind]} "
        f"({_ms(spot.time_s)}, {spot.count} {_UNIT.get(spot.kind, 'calls')})"
    )
    if spot.kernels:
        text += ": " + _kernels(spot)
        launchers = [o["name"] for o in spot.ops if o.get("self_device_us")]
        if launchers:
            text += "; launched by " + ", ".join(launchers[:3])
    elif spot.ops:
        text += ": " + _ops(spot)
    if spot.backward and spot.forward_lines:
        text += "; backward of line " + ", ".join([str(f["line"]) for f in spot.forward_lines[:3]])
    if not spot.exact:
        text += f"; somewhere in {spot.function}, the profiler cannot name the line"
    if spot.opaque:
        text += f"; inside {', '.join(spot.opaque)}: its own lines are not visible to the profiler"
    return text


_ERROR = int(types.DiagnosticSeverity.Error)
_WARNING = int(types.DiagnosticSeverity.Warning)
_INFORMATION = int(types.DiagnosticSeverity.Information)
_HINT = int(types.DiagnosticSeverity.Hint)


_quote = json.encoder.encode_basestring_ascii  # C: '"..."', ASCII
_float = float.__repr__  # what json writes for a float
_SOURCE = _quote(SOURCE)


def _range(line: int, start: int, end: int) -> dict[str, Any]:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def _spot_json(spot: Hotspot) -> str:
    """The numbers of one hotspot; ``exact`` and ``backward`` only when they say something
    (not exact, or backward): thousands of diagnostics go out in one message."""
    extra = ('"exact":false,' if not spot.exact else "") + ('"backward":true,' if spot.backward else "")
    return (
        f'{{"kind":{_quote(spot.kind)},"pass":{_quote(spot.pass_name)},{extra}'
        f'"share":{_float(float(spot.share))},"timeS":{_float(round(float(spot.time_s), 6))},'
        f'"count":{int(spot.count)}}}'
    )


def _link_message(link: dict[str, Any]) -> str:
    text = f"forward line whose backward costs {link['backward_cpu_us'] / 1000:.1f} ms of CPU time"
    device_us = link.get("backward_device_us") or 0.0
    if device_us:
        text += f" and {device_us / 1000:.1f} ms on the device"
    return text + " here"


def diagnostic(a: Annotation, thresholds: Thresholds) -> str | None:
    """An LSP Diagnostic as JSON text (compact, ASCII), ready to go into a message.

    Written directly rather than built as lsprotocol objects or dictionaries: a run with
    thousands of hot lines publishes them in one message, and objects, their conversion and
    a generic encoder cost several times this (see ``server.publish``).
    """
    if a.error is not None:
        err = a.error
        width = 1 if err["type"] == "SyntaxError" else max(len(a.text), 1)
        return json.dumps(
            {
                "range": _range(a.line, a.column, a.column + width),
                "message": f"{err['type']}: {err['message']} (in the {err['pass']} pass)",
                "severity": _ERROR,
                "source": SOURCE,
                "code": ERROR_CODE,
                "data": {"script": a.script, "status": err["status"]},
            },
            separators=(",", ":"),
        )
    if not a.hotspots:
        return None
    spots = a.hotspots
    top = spots[0]
    if len(spots) == 1:  # the common case, without generators
        text = message(top)
        spot_data = _spot_json(top)
        linked = bool(top.forward_lines)
    else:
        text = "\n".join([message(s) for s in spots])
        spot_data = ",".join([_spot_json(s) for s in spots])
        linked = any(s.forward_lines for s in spots)
    related = ""
    if linked:
        related = ',"relatedInformation":' + json.dumps(
            [
                {
                    "location": {"uri": _uri(f["file"]), "range": _range(f["line"] - 1, 0, 0)},
                    "message": _link_message(f),
                }
                for spot in spots
                for f in spot.forward_lines
            ],
            separators=(",", ":"),
        )
    share = top.share
    severity = (
        _WARNING
        if share >= thresholds.warning_share
        else _INFORMATION
        if share >= thresholds.min_share
        else _HINT
    )
    line, start = a.line, a.column
    end = start + max(len(a.text), 1)
    return (
        f'{{"range":{{"start":{{"line":{line},"character":{start}}},'
        f'"end":{{"line":{line},"character":{end}}}}},'
        f'"message":{_quote(text)},"severity":{severity},'
        f'"source":{_SOURCE},"code":{_quote(top.kind)},'
        f'"data":{{"hotspots":[{spot_data}]}}{related}}}'
    )


def lens_title(a: Annotation) -> str:
    if a.function is not None:
        f = a.function
        return f"tottime {f['tottime_s']:.2f} s · cumtime {f['cumtime_s']:.2f} s · {f['ncalls']} calls"
    parts = []
    for spot in a.hotspots:
        if spot.kind == analysis.WAIT:
            parts.append(f"waits {_ms(spot.time_s)} on the device")
            continue
        piece = f"{spot.share * 100:.1f}% {SHORT[spot.kind]} · {_ms(spot.time_s)}"
        if spot.kernels:
            top_kernel = spot.kernels[0]
            piece += f" · {analysis.kernel_label(top_kernel['name'])} ×{top_kernel['count']}"
        elif spot.ops:
            top = spot.ops[0]
            piece += f" · {top['name']} ×{top['count']}"
        parts.append(piece)
    return " | ".join(parts)


def code_lens(a: Annotation) -> types.CodeLens | None:
    if a.error is not None:
        return None
    return types.CodeLens(
        range=types.Range(types.Position(a.line, 0), types.Position(a.line, 0)),
        command=types.Command(
            title=lens_title(a), command="bottleneck.report", arguments=[uris.from_fs_path(a.script)]
        ),
    )


def hover(annotations: list[Annotation], doc: dict[str, Any] | None) -> str:
    """Markdown: a table row per pass for this line, and the CPU/GPU verdict."""
    rows = []
    notes = []
    for a in annotations:
        if a.error is not None:
            notes.append(f"**{a.error['type']}**: {a.error['message']}")
        if a.function is not None:
            f = a.function
            notes.append(
                f"`{f['function']}`: {f['ncalls']} calls, tottime {f['tottime_s']:.3f} s, "
                f"cumtime {f['cumtime_s']:.3f} s ({f['share'] * 100:.1f}% of the cProfile pass)"
            )
        for s in a.hotspots:
            if s.kind == analysis.WAIT:
                notes.append(
                    f"The CPU waited **{s.time_s * 1000:.1f} ms** here for the device "
                    f"({s.share * 100:.1f}% of the {s.pass_name} pass's wall time)."
                )
                continue
            device = f"{s.time_s * 1000:.1f} ms" if s.kind == analysis.DEVICE else "-"
            cpu = f"{s.time_s * 1000:.1f} ms" if s.kind != analysis.DEVICE else "-"
            rows.append(
                f"| {s.pass_name} | {SHORT[s.kind]} | {s.share * 100:.1f}% | {cpu} | {device} "
                f"| {s.count} | {_ops(s, 5) or '-'} |"
            )
            if s.kernels:
                notes.append(
                    "Device work launched here: "
                    + ", ".join(
                        f"`{analysis.kernel_label(k['name'])}` ×{k['count']} ({k['device_us'] / 1000:.1f} ms)"
                        for k in s.kernels[:5]
                    )
                    + "."
                )
            if s.backward and s.forward_lines:
                links = ", ".join(
                    f"[line {f['line']}]({_uri(f['file'])}#L{f['line']})" for f in s.forward_lines[:5]
                )
                notes.append(f"Backward work for forward {links}.")
            if not s.exact:
                notes.append(f"Inside `{s.function}`; the profiler cannot name the exact line.")
    out = ["**bottleneck**"]
    if rows:
        out += [
            "",
            "| pass | kind | share | CPU | device | count | top ops |",
            "| --- | --- | --- | --- | --- | --- | --- |",
            *rows,
        ]
    if notes:
        out += ["", *notes]
    verdict = doc.get("verdict") if doc else None
    if verdict:
        sentence = report.verdict_sentence(verdict)
        bound, _, rest = sentence.partition(":")
        out += ["", f"**{bound}**:{rest}"]
        if verdict.get("pass"):
            out.append(f"Measured in the {verdict['pass']} pass.")
    if doc:
        out += ["", f"Profiled {os.path.basename(doc['script'])} at {doc.get('created', '?')}."]
    return "\n".join(out)
