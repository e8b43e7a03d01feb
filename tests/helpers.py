"""Shared helpers: run real jobs with real torch on the planted scripts."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from bottleneck_lsp.analysis.result import validate
from bottleneck_lsp.job.job import Job
from bottleneck_lsp.job.spec import JobSpec
from bottleneck_lsp.schema.model import Document

SCRIPTS = Path(__file__).parent / "scripts"


def marker_line(script: str, marker: str = "# HOT") -> int:
    """The 1-based line of a script that carries a marker comment."""
    for number, text in enumerate((SCRIPTS / script).read_text().splitlines(), start=1):
        if text.rstrip().endswith(marker):
            return number
    raise AssertionError(f"{marker} not found in {script}")


def run_job(script: str, *args: str, **spec: Any) -> dict[str, Any]:
    """A real job's document as JSON (what ``--format json`` writes)."""
    return run_typed(script, *args, **spec).to_json()


def run_typed(script: str, *args: str, **spec: Any) -> Document:
    spec.setdefault("python", sys.executable)
    job = Job(JobSpec(script=str(SCRIPTS / script), args=tuple(args), **spec))
    doc = asyncio.run(job.run())
    again = Document.from_json(typed(doc.to_json()))
    assert again.ranking == doc.ranking  # the ranking reads back as it was made
    return doc


def typed(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON document, after checking that it fits the model exactly (every key known,
    every value of its type) and is written back unchanged: every run in the tests checks
    the schema's one definition against what the engine writes."""
    as_json = json.loads(json.dumps(doc))
    assert validate(as_json) == [], validate(as_json)
    assert Document.from_json(as_json).to_json() == as_json
    return doc


def compiled(path: Path, source: str) -> dict[str, Any]:
    """``source`` written to ``path`` and run there: its functions carry that file name (in
    cProfile's statistics, say)."""
    path.write_text(source)
    space: dict[str, Any] = {}
    exec(compile(source, str(path), "exec"), space)
    return space


def part_of(doc: dict[str, Any], name: str) -> dict[str, Any] | None:
    """A pass's part of a JSON document."""
    return next((p for p in doc["passes"] if p["name"] == name), None)


def interpreters() -> list[str]:
    """This interpreter, and the other CPythons 3.10+ on the machine (pyenv's, or on PATH)."""
    found = {os.path.realpath(sys.executable): sys.executable}
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = sorted(pyenv.glob("3.1[0-9]*/bin/python3"))
    candidates += [Path(p) for v in ("3.10", "3.12", "3.13", "3.14") if (p := shutil.which(f"python{v}"))]
    for path in candidates:
        if "shims" not in path.parts and path.is_file() and os.access(path, os.X_OK):
            found.setdefault(os.path.realpath(path), str(path))
    return list(found.values())


# inductor's options the profiler turns on (runner/provenance.py): part of its cache key
PROVENANCE_ENV = {"INDUCTOR_PROVENANCE": "1", "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": "1"}


def warm_compile_cache(script: str, *args: str) -> None:
    """Run a torch.compile script bare once, with the options the profiler sets, so that a
    profile of it finds its compiled code in inductor's cache as a user's second run does (a
    cold C++ compile on CI's two cores outweighs the few seconds the script trains)."""
    import subprocess

    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script), *args],
        env={**os.environ, **PROVENANCE_ENV},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]


def profile_cli(
    tmp_path: Path, script: str, *args: str, options: tuple[str, ...] = ()
) -> tuple[str, dict[str, Any]]:
    """``bottleneck-lsp profile --format json [options] script args`` in ``tmp_path``, as a
    user runs it: the report's text (rendered from the JSON, paths relative to the scripts)
    and the JSON document."""
    import subprocess

    out = tmp_path / "out.json"
    done = subprocess.run(
        [
            *(sys.executable, "-m", "bottleneck_lsp.cli", "profile", "--format", "json", "-o", str(out)),
            *(*options, str(SCRIPTS / script), *args),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads(out.read_text())
    from bottleneck_lsp.formats import report

    return report.render(Document.from_json(doc), cwd=str(SCRIPTS)), doc


def recorded_op(
    name: str, start: int, end: int, *children: dict[str, Any], seq: int = -1, corr: int = 0, tid: int = 1
) -> dict[str, Any]:
    """A TorchOp node of an event tree as a raw recording holds it (``runner/recording.py``):
    hand-made trees for the walk's tests."""
    return {
        "tag": "TorchOp",
        "name": name,
        "start_time_ns": start,
        "end_time_ns": end,
        "duration_time_ns": end - start,
        "correlation_id": corr,
        "start_tid": tid,
        "extra_fields": {"sequence_number": seq, "correlation_id": corr, "scope": "FUNCTION"},
        "children": list(children),
    }
