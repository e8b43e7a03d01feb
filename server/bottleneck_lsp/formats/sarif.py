"""A result as SARIF 2.1.0 (``--format sarif``): hot lines as results, for GitHub code
scanning and other SARIF viewers.

One rule per column (``bottleneck/wall-time``, ``bottleneck/cpu-op-time``,
``bottleneck/device-time``, ...), and ``bottleneck/regression`` for the CI gate's findings.
Each result's ``partialFingerprints`` hash the file (relative), the line's text and the
rule, never the line number: the same hot line keeps its fingerprint across runs and edits
that move it, so code scanning tracks it as one alert.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from .. import __version__
from ..analysis import ranking
from ..analysis.compare import Comparison, Regression
from ..analysis.ranking import DENOMINATOR, KIND_LABEL, Thresholds
from ..schema.model import Document, PassStatus, RankedLine
from . import wording
from .diff_report import percent

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
REGRESSION = "bottleneck/regression"
FINGERPRINT = "bottleneckLine/v1"


def rule_id(kind: str) -> str:
    return f"bottleneck/{kind}"


def _rules() -> list[dict[str, Any]]:
    rules = [
        {
            "id": rule_id(kind),
            "name": "".join(part.capitalize() for part in kind.split("-")),
            "shortDescription": {"text": f"A line with a large share of {KIND_LABEL[kind]}"},
            "fullDescription": {"text": f"Share of {DENOMINATOR[kind]}."},
            "defaultConfiguration": {"level": "warning"},
        }
        for kind in ranking.COLUMNS
    ]
    rules.append(
        {
            "id": REGRESSION,
            "name": "Regression",
            "shortDescription": {"text": "A line (or the script) slower than the baseline allows"},
            "fullDescription": {
                "text": "bottleneck-lsp profile --baseline OLD.json --fail-on-regression SHARE."
            },
            "defaultConfiguration": {"level": "error"},
        }
    )
    return rules


def _location(doc: Document, path: str, line: int, column: int, text: str) -> tuple[dict[str, Any], str]:
    """A physical location, relative to the run's folder (``SRCROOT``) when the file lies
    under it (as code scanning wants: paths from the checkout's root), else an absolute URI;
    and the path the fingerprint hashes."""
    base = doc.cwd
    if base and os.path.isabs(path) and os.path.commonpath([base, path]) == base:
        relative = Path(os.path.relpath(path, base)).as_posix()
        artifact: dict[str, Any] = {"uri": relative, "uriBaseId": "SRCROOT"}
    else:
        relative = path
        artifact = {"uri": Path(path).as_uri() if os.path.isabs(path) else path}
    region: dict[str, Any] = {"startLine": max(line, 1), "startColumn": max(column, 1)}
    if text:
        region["snippet"] = {"text": text}
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}, relative


def _fingerprint(relative: str, text: str, rule: str) -> str:
    key = "\0".join((relative, " ".join(text.split()), rule))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _result(doc: Document, row: RankedLine, rule: str, level: str, message: str) -> dict[str, Any]:
    location, relative = _location(doc, row.file, row.line, row.column, row.text)
    return {
        "ruleId": rule,
        "level": level,
        "message": {"text": message},
        "locations": [location],
        "partialFingerprints": {FINGERPRINT: _fingerprint(relative, row.text, rule)},
        "properties": {
            "share": row.share,
            "timeS": row.time_s,
            "columns": {
                k: {
                    "share": c.share,
                    "timeS": c.time_s,
                    **({"bytes": c.bytes} if c.bytes is not None else {}),
                }
                for k, c in row.columns.items()
            },
        },
    }


def render(
    doc: Document,
    thresholds: Thresholds,
    comparison: Comparison | None = None,
    found: list[Regression] | None = None,
    threshold: float | None = None,
) -> dict[str, Any]:
    results = []
    for row in ranking.hotspots(doc, thresholds):
        if row.line < 1:
            continue
        level = "warning" if ranking.severity(row, thresholds) == ranking.WARNING else "note"
        results.append(
            _result(
                doc,
                row,
                rule_id(ranking.marked_for(row)),
                level,
                wording.message(row, plain=True, memory_share=thresholds.min_memory_share),
            )
        )
    for r in found or []:
        assert comparison is not None
        label = KIND_LABEL[comparison.kind]
        allowed = f"; allowed {threshold * 100:.0f}%" if threshold is not None else ""
        if r.change is not None and r.change.new is not None:
            message = (
                f"{label} {percent(r.ratio)} since the baseline "
                f"({r.before_s * 1000:.1f} ms -> {r.after_s * 1000:.1f} ms{allowed})"
            )
            results.append(_result(doc, r.change.new, REGRESSION, "error", message))
        else:
            location, relative = _location(doc, doc.script, 1, 1, "")
            results.append(
                {
                    "ruleId": REGRESSION,
                    "level": "error",
                    "message": {
                        "text": f"{label} on your lines {percent(r.ratio)} since the baseline "
                        f"({r.before_s:.3f} s -> {r.after_s:.3f} s{allowed})"
                    },
                    "locations": [location],
                    "partialFingerprints": {FINGERPRINT: _fingerprint(relative, "<total>", REGRESSION)},
                }
            )
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "bottleneck-lsp",
                "version": __version__,
                "rules": _rules(),
            }
        },
        "invocations": [
            {
                "executionSuccessful": doc.status == PassStatus.OK,
                **({"exitCode": doc.exit_code} if doc.exit_code is not None else {}),
                "commandLine": " ".join(
                    ["python", *(["-m", doc.module] if doc.module else [doc.script]), *doc.args]
                ),
            }
        ],
        "results": results,
    }
    if doc.cwd:
        run["originalUriBaseIds"] = {"SRCROOT": {"uri": Path(doc.cwd).as_uri().rstrip("/") + "/"}}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
