"""Documents loaded and checked (analysis/result.py), on a recorded result."""

from __future__ import annotations

import json
from pathlib import Path

from bottleneck_lsp.analysis.result import load, validate
from repository import recorded_json


def test_recorded_result_is_valid_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    assert validate(recorded_json()) == []
    bad = recorded_json()
    bad["version"] = 99
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    try:
        load(path)
    except ValueError as exc:
        assert "this tool reads 2" in str(exc)
    else:
        raise AssertionError("a version 99 document was accepted")
