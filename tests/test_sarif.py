"""`--format sarif`: valid SARIF 2.1.0 (checked against the OASIS schema kept in
tests/schemas), hot lines as results whose fingerprints stay the same across runs of the
same code and when the line moves; the CI gate's regressions as error results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from test_compare import profile, write

SCHEMA = json.loads((Path(__file__).parent / "schemas" / "sarif-schema-2.1.0.json").read_text())


def valid(log: dict[str, Any]) -> dict[str, Any]:
    jsonschema.Draft4Validator(SCHEMA).validate(log)
    return log


def planted(log: dict[str, Any], rule: str = "bottleneck/wall-time") -> dict[str, Any]:
    found = [
        r
        for r in log["runs"][0]["results"]
        if r["ruleId"] == rule
        and "# PLANTED" in r["locations"][0]["physicalLocation"]["region"].get("snippet", {}).get("text", "")
    ]
    assert len(found) == 1, json.dumps(log["runs"][0]["results"], indent=1)[:3000]
    return found[0]


def sarif_of(script: Path, *extra: str) -> dict[str, Any]:
    """``profile --format json ... EXTRA`` (a later ``--format`` wins): the SARIF log, validated."""
    out = script.with_suffix(".sarif")
    done = profile(script, out, "--cwd", str(script.parent), *extra)
    assert done.returncode in (0, 3), done.stderr[-2000:]
    return valid(json.loads(out.read_text()))


def test_sarif_validates_and_its_fingerprints_hold_across_runs_and_moves(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    write(script, rows=600, moved=False)
    first = sarif_of(script, "--format", "sarif")
    second = sarif_of(script, "--format", "sarif")
    write(script, rows=600, moved=True)  # the same code, the planted line one line down
    moved = sarif_of(script, "--format", "sarif")

    driver = first["runs"][0]["tool"]["driver"]
    assert driver["name"] == "bottleneck-lsp"
    assert {"bottleneck/wall-time", "bottleneck/cpu-op-time", "bottleneck/regression"} <= {
        rule["id"] for rule in driver["rules"]
    }
    a, b, c = planted(first), planted(second), planted(moved)
    assert a["level"] == "warning" and "% of wall time" in a["message"]["text"]
    location = a["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "train.py", "uriBaseId": "SRCROOT"}
    line = location["region"]["startLine"]
    assert c["locations"][0]["physicalLocation"]["region"]["startLine"] == line + 1
    assert a["partialFingerprints"] == b["partialFingerprints"] == c["partialFingerprints"]
    assert first["runs"][0]["originalUriBaseIds"]["SRCROOT"]["uri"] == tmp_path.as_uri() + "/"


def test_the_gates_regressions_are_error_results(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    write(script, rows=200, moved=False)
    baseline = tmp_path / "old.json"
    assert profile(script, baseline).returncode == 0
    write(script, rows=600, moved=False)  # 3x dearer
    log = sarif_of(script, "--format", "sarif", "--baseline", str(baseline), "--fail-on-regression", "50%")
    error = planted(log, "bottleneck/regression")
    assert error["level"] == "error" and "since the baseline" in error["message"]["text"]
