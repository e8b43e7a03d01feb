"""Where things are in this checkout, for tests in any folder under tests/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bottleneck_lsp.schema.model import Document

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
FIXTURES = TESTS / "fixtures"
SCHEMAS = TESTS / "schemas"
PACKAGE = ROOT / "server" / "bottleneck_lsp"
# A real job's document (examples/train.py, the cpu and sample passes), recorded once
RECORDED = FIXTURES / "train-cpu.json"
# ... and one of its default one run (the cpu pass and cProfile in windows of the sample pass's run)
ONE_RUN = FIXTURES / "train-one-run.json"


def recorded_json() -> dict[str, Any]:
    result: dict[str, Any] = json.loads(RECORDED.read_text())
    return result


def recorded() -> Document:
    return Document.from_json(recorded_json())


def one_run() -> Document:
    return Document.from_json(json.loads(ONE_RUN.read_text()))
