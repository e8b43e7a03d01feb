"""Notebooks as scripts (issue 48): ``profile nb.ipynb`` runs the code cells once, in order,
as one program, and charges every measure to (cell, line): the report names
``nb.ipynb cell 4, line 3``, the JSON's ranking lines carry ``cell`` and ``line``."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).parent / "notebooks"


def profile(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bottleneck_lsp.cli", "profile", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def planted(name: str) -> tuple[int, int]:
    """(cell, line) of the ``# HOT`` line, cells counted over the whole list, 1-based."""
    cells = json.loads((NOTEBOOKS / name).read_text())["cells"]
    for index, cell in enumerate(cells, start=1):
        for number, text in enumerate("".join(cell["source"]).splitlines(), start=1):
            if text.rstrip().endswith("# HOT"):
                return index, number
    raise AssertionError(f"no # HOT line in {name}")


def first_diagnostic(out: str) -> str:
    return next(line for line in out.splitlines() if re.search(r": (warning|note|error): ", line))


def test_a_notebook_runs_once_with_its_lines_named_by_cell(tmp_path: Path) -> None:
    notebook = tmp_path / "planted.ipynb"
    shutil.copy(NOTEBOOKS / "planted.ipynb", notebook)
    result = profile("--format", "json", "-o", str(tmp_path / "out.json"), str(notebook))
    assert result.returncode == 0, result.stderr[-3000:]
    doc = json.loads((tmp_path / "out.json").read_text())
    cell, line = planted("planted.ipynb")
    assert (cell, line) == (4, 3)  # the markdown cells count
    first = doc["ranking"]["lines"][0]
    assert (first["cell"], first["line"]) == (cell, line), first
    assert first["file"] == f"{notebook}#cell{cell}"
    assert first["text"].startswith("y = torch.linalg.inv(")
    assert first["columns"]["cpu-op-time"]["share"] > 0.5  # its ops, on it
    assert doc["runs"] == 1
    assert doc["cwd"] == str(tmp_path)  # run in its folder, as Jupyter runs it
    # the cell's own lines are hashed (diff follows edits within a cell)
    assert f"{notebook}#cell{cell}" in [s["file"] for s in doc["sources"]]
    # the text report: the first hotspot and the table's first row name the cell and line
    text = profile(str(notebook), cwd=tmp_path)
    assert text.returncode == 0, text.stderr[-3000:]
    assert "total " in text.stdout  # the last cell ran, after the others
    assert first_diagnostic(text.stdout).startswith(f"planted.ipynb cell {cell}, line {line}: warning: ")
    table = text.stdout.split("Hotspots by source line")[1].splitlines()
    row = next(r for r in table if "%" in r and "line" not in r.split()[-1])
    assert f"planted.ipynb cell {cell}, line {line}  y = torch.linalg.inv(" in row
    opening = " ".join(text.stdout.split("Environment Summary")[0].split())
    assert "Your notebook's code cells, in order as one program, ran once" in opening
    assert "markdown cells included" in opening


def test_ipython_syntax_runs_as_in_a_kernel(tmp_path: Path) -> None:
    pytest.importorskip("IPython")
    notebook = tmp_path / "magics.ipynb"
    shutil.copy(NOTEBOOKS / "magics.ipynb", notebook)
    result = profile("--format", "json", "-o", str(tmp_path / "out.json"), str(notebook))
    assert result.returncode == 0, result.stderr[-3000:]
    printed = result.stdout + result.stderr  # (the script's output: on stderr beside -o's JSON)
    assert "shell-escape-ran" in printed  # !echo ran, through IPython's shell
    assert "total " in printed and " True" in printed  # files = !ls gave a list
    doc = json.loads((tmp_path / "out.json").read_text())
    cell, line = planted("magics.ipynb")
    first = doc["ranking"]["lines"][0]
    # %%time's cell ran its body line by line: the loop's line is measured, not the magic's
    assert (first["cell"], first["line"]) == (cell, line), first
    sample = next(p for p in doc["passes"] if p["name"] == "sample")
    assert any("%%time was left out" in note for note in sample.get("notes", []))


def test_bad_notebooks_get_one_clear_error_and_nothing_runs(tmp_path: Path) -> None:
    broken = tmp_path / "broken.ipynb"
    broken.write_text('{"cells": [')
    result = profile(str(broken))
    assert result.returncode == 2
    assert "broken.ipynb is not a notebook: it is not valid JSON" in result.stderr
    assert "Environment Summary" not in result.stdout  # nothing ran
    old = tmp_path / "old.ipynb"
    old.write_text(json.dumps({"nbformat": 3, "worksheets": []}))
    result = profile(str(old))
    assert result.returncode == 2
    assert "old.ipynb is nbformat 3; only nbformat 4 notebooks are read" in result.stderr
    old.write_text(json.dumps({"some": "json"}))
    result = profile(str(old))
    assert "old.ipynb is not a notebook: it has no list of cells" in result.stderr
    empty = tmp_path / "empty.ipynb"
    empty.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}))
    result = profile(str(empty))
    assert result.returncode == 2
    assert "empty.ipynb has no code cells: nothing to profile" in result.stderr


def test_a_failing_cell_stops_the_run_with_its_cell_and_line(tmp_path: Path) -> None:
    notebook = tmp_path / "fails.ipynb"
    shutil.copy(NOTEBOOKS / "fails.ipynb", notebook)
    result = profile("--format", "json", "-o", str(tmp_path / "out.json"), str(notebook))
    assert result.returncode == 1, result.stderr[-3000:]
    assert "never" not in result.stdout + result.stderr  # the cells after the failure did not run
    doc = json.loads((tmp_path / "out.json").read_text())
    sample = next(p for p in doc["passes"] if p["name"] == "sample")
    error = sample["error"]
    assert (error["file"], error["line"], error["type"]) == (f"{notebook}#cell3", 2, "ValueError")
    # the results so far: the first cell's hot line is still ranked
    cell, line = planted("fails.ipynb")
    assert (doc["ranking"]["lines"][0]["cell"], doc["ranking"]["lines"][0]["line"]) == (cell, line)
    text = profile(str(notebook), cwd=tmp_path)
    assert "fails.ipynb cell 3, line 2: error: ValueError: the data is not there" in text.stdout


def test_the_example_notebook_links_backward_to_the_cell_of_its_forward_lines(tmp_path: Path) -> None:
    example = Path(__file__).parent.parent / "examples" / "train.ipynb"
    notebook = tmp_path / "train.ipynb"
    shutil.copy(example, notebook)
    result = profile(str(notebook), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    backward = next(x for x in result.stdout.splitlines() if x.startswith("train.ipynb cell 7, line 4: "))
    # loss.backward() in cell 7 differentiates the model's forward, defined in cell 3
    assert "backward of cell 3, line 11" in backward, backward
    planted = next(x for x in result.stdout.splitlines() if x.startswith("train.ipynb cell 3, line 11: "))
    assert "of op CPU time" in planted and "aten::mm" in planted
