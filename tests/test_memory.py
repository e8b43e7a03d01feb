"""Memory per line, from real runs of planted scripts whose truth follows from tensor sizes
(tests/memory/): a large temporary each step, activations held until backward, a leak,
a temporary made in a helper module. Each planted line must be the top memory line, its
bytes live at the peak within 10% of the known size: in the CLI's report and document,
and in what the editor shows (lens, diagnostic) through the real server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import LanguageClient

from lsp_helpers import CONFIGS, close_session, execute, start_session

CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")
FOLDER = Path(__file__).parent / "memory"
# script -> (the file holding the planted line, bytes live at the peak it must show)
CASES = {
    "temporary.py": ("temporary.py", 8_000_000),
    "activation.py": ("activation.py", 8 * 2048 * 256 * 4),
    "leak.py": ("leak.py", 20 * 250_000 * 4),
    "helper_main.py": ("memory_helper.py", 3_000_000 * 4),
}


def planted(name: str) -> int:
    text = (FOLDER / name).read_text().splitlines()
    return next(i for i, line in enumerate(text, 1) if "# PLANTED" in line)


def within(value: float, known: int) -> bool:
    return abs(value - known) <= 0.1 * known


def profile(script: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CLI, "profile", "--passes", "cpu,memory", *extra, str(FOLDER / script)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=FOLDER,
    )


@pytest.mark.parametrize("script", list(CASES))
def test_the_planted_line_holds_the_most_memory_at_the_peak(script: str, tmp_path: Path) -> None:
    file, known = CASES[script]
    line = planted(file)
    done = profile(script, "--format", "json", "-o", str(tmp_path / "out.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    doc = json.loads((tmp_path / "out.json").read_text())
    rows = [r for r in doc["ranking"]["lines"] if "memory" in r["columns"]]
    top = max(rows, key=lambda r: r["columns"]["memory"]["share"])
    assert (Path(top["file"]).name, top["line"]) == (file, line), [
        (Path(r["file"]).name, r["line"], r["columns"]["memory"]) for r in rows
    ]
    held = top["columns"]["memory"]["bytes"]
    assert within(held, known), (held, known)
    summary = next(p for p in doc["passes"] if p["name"] == "cpu")["memory"]
    assert summary["device"] == "cpu" and summary["peak_bytes"] >= held

    # the text report: the memory section's first row is the planted line
    text = profile(script).stdout
    section = text[text.index("Memory by source line") :].splitlines()
    first = section[section.index(next(s for s in section if s.strip().startswith("at peak"))) + 1]
    assert f"{file}:{line}" in first, section[:12]


def test_memory_is_off_when_the_passes_do_not_name_it(tmp_path: Path) -> None:
    done = subprocess.run(
        [CLI, "profile", "--passes", "cpu", "--format", "json", "-o", str(tmp_path / "out.json"),
         str(FOLDER / "leak.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    doc = json.loads((tmp_path / "out.json").read_text())
    assert "memory" not in next(p for p in doc["passes"] if p["name"] == "cpu")
    assert all("memory" not in r["columns"] for r in doc["ranking"]["lines"])


@pytest_asyncio.fixture
async def memory_client() -> Any:
    config, caps = CONFIGS["stdio-vscode"]
    session = await config.start()
    settings = {"passes": ["cpu", "memory"], "python": sys.executable, "timeout": 120}
    await start_session(session, caps, str(FOLDER), settings)
    yield session
    await close_session(session)


async def test_the_editor_marks_each_planted_line_with_its_memory(memory_client: LanguageClient) -> None:
    client = memory_client
    for script, (file, known) in CASES.items():
        answer = await execute(client, "bottleneck.profile", {"uri": uris.from_fs_path(str(FOLDER / script))})
        assert answer["status"] == "ok", answer
        uri = uris.from_fs_path(str(FOLDER / file)) or ""
        line = planted(file)
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        titles = [
            lens.command.title for lens in lenses or [] if lens.range.start.line == line - 1 and lens.command
        ]
        assert titles and " live at peak" in titles[0], (script, titles)
        diagnostics = [d for d in client.diagnostics.get(uri, []) if d.range.start.line == line - 1]
        assert diagnostics, (script, client.diagnostics.get(uri))
        cell = diagnostics[0].data["row"]["columns"]["memory"]
        assert within(cell["bytes"], known), (script, cell, known)
        assert "at the memory peak" in diagnostics[0].message


def test_with_memory_a_torch_call_counts_twice_toward_the_event_budget(tmp_path: Path) -> None:
    script = Path(__file__).parent / "scripts" / "forever_bounded.py"
    done = subprocess.run(
        [CLI, "profile", "--passes", "cpu,memory", "--event-budget", "200", "--format", "json",
         "-o", str(tmp_path / "out.json"), str(script)],
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    part = next(p for p in json.loads((tmp_path / "out.json").read_text())["passes"] if p["name"] == "cpu")
    assert part["event_budget"]["torch_calls"] == 100
    assert any("counts twice" in note for note in part["notes"]), part["notes"]
    assert part["memory"]["allocations"] > 0


def test_out_of_memory_names_the_lines_holding_the_memory(tmp_path: Path) -> None:
    line, failing = planted("out_of_memory.py"), planted_marker("out_of_memory.py", "# FAILS")
    done = profile("out_of_memory.py")
    assert done.returncode == 1, done.stderr[-2000:]
    errors = [s for s in done.stdout.splitlines() if ": error: " in s]
    # first the line holding the memory, then the failing allocation itself
    assert errors[0].startswith(f"out_of_memory.py:{line}:5: error: holds 12.0 MB when"), errors
    assert any(f":{failing}:" in e and "can't allocate memory" in e for e in errors), errors


async def test_the_editor_marks_the_holders_when_memory_runs_out(memory_client: LanguageClient) -> None:
    client = memory_client
    uri = uris.from_fs_path(str(FOLDER / "out_of_memory.py")) or ""
    answer = await execute(client, "bottleneck.profile", {"uri": uri})
    assert answer["status"] == "error", answer
    assert f"out of memory: out_of_memory.py:{planted('out_of_memory.py')} held 12.0 MB" in answer["summary"]
    by_line = {
        d.range.start.line + 1: d
        for d in client.diagnostics.get(uri, [])
        if d.severity == types.DiagnosticSeverity.Error
    }
    held = by_line[planted("out_of_memory.py")]
    assert held.code == "out-of-memory" and held.message.startswith("holds 12.0 MB when the script ran out")
    assert by_line[planted_marker("out_of_memory.py", "# FAILS")].code == "script-error"


def planted_marker(name: str, marker: str) -> int:
    text = (FOLDER / name).read_text().splitlines()
    return next(i for i, line in enumerate(text, 1) if marker in line)


def test_a_raw_recording_keeps_the_memory_events_for_replay(tmp_path: Path) -> None:
    done = profile(
        "leak.py", "--save-raw", str(tmp_path), "--format", "json", "-o", str(tmp_path / "live.json")
    )
    assert done.returncode == 0, done.stderr[-2000:]
    recording = tmp_path / "leak.cpu.raw.json.gz"
    replayed = subprocess.run(
        [CLI, "replay", str(recording), "--root", str(FOLDER), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert replayed.returncode == 0, replayed.stderr
    live = next(p for p in json.loads((tmp_path / "live.json").read_text())["passes"] if p["name"] == "cpu")
    again = json.loads(replayed.stdout)["passes"][0]
    assert again["memory"]["peak_bytes"] == live["memory"]["peak_bytes"]
    line = planted("leak.py")
    held = next(r for r in again["lines"] if r["line"] == line)["memory"]["live_at_peak_bytes"]
    assert within(held, CASES["leak.py"][1]), held


def test_a_line_shown_for_its_memory_under_a_lower_threshold_says_what_it_holds() -> None:
    """``--min-memory-share`` is the share of the memory peak from which a line is annotated
    for its memory; its compiler-style line then says what it holds (the wording kept a
    fixed 10%: a line holding 8.8% was shown, its memory unsaid). Lines holding less than the
    floor (1 MB) are not annotated for memory at all (a 68.6 KB line read as a warning): a
    model wide enough that its modest lines hold megabytes."""
    example = Path(__file__).parent.parent / "examples" / "train.py"
    done = subprocess.run(
        [
            CLI,
            "profile",
            "--passes",
            "cpu,memory",
            "--min-memory-share",
            "0.02",
            str(example),
            "--steps",
            "5",
            "--width",
            "2048",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=example.parent,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    size = r"[\d.]+ [KMG]?B"
    table = re.compile(rf"^\s*{size}\s+([\d.]+)%\s+{size}\s+\d+\s+{size}\s+(\S+:\d+)\s")
    shares = {m.group(2): float(m.group(1)) for m in map(table.match, done.stdout.splitlines()) if m}
    modest = [where for where, share in shares.items() if 2.0 <= share < 10.0]
    assert modest, shares  # the case at stake: a line holding 2-10% of the peak
    for where in modest:
        shown = [line for line in done.stdout.splitlines() if re.match(rf"{re.escape(where)}:\d+: ", line)]
        assert shown and "at the memory peak" in shown[0], (where, shown)
