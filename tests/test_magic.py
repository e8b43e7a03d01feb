"""The %%bottleneck magic (issue 48): a cell profiled once, in the kernel, its lines ranked
in a table under it. Driven in a real IPython shell (``InteractiveShell``), in a process of
its own: what the user sees is the display's text and HTML."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("IPython")

SESSION = textwrap.dedent(
    """
    import json, sys
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False  # (nothing written to the user's IPython folder)
    shell = InteractiveShell.instance(config=config)
    shell.display_pub = CapturingDisplayPublisher()
    results = []
    for cell in json.loads(sys.argv[1]):
        before = len(shell.display_pub.outputs)
        outcome = shell.run_cell(cell, store_history=True)  # numbered In[1], In[2]... as in a kernel
        shown = [o["data"] for o in shell.display_pub.outputs[before:]]
        error = outcome.error_in_exec
        said = {"error": repr(error) if error is not None else None}
        if error is not None:  # what IPython prints (its colors off)
            shell.InteractiveTB.set_colors("nocolor")
            said["traceback"] = "\\n".join(
                shell.InteractiveTB.structured_traceback(type(error), error, error.__traceback__)
            )
        results.append({"shown": shown, **said})
    kept = ("total", "ready", "w", "counter", "restored")
    results.append({"state": {k: repr(shell.user_ns.get(k)) for k in kept}})
    print("RESULTS " + json.dumps(results))
    """
)

PLANTED = """%%bottleneck --top 5
total, counter = 0.0, counter + 1
for _ in range(150):
    y = torch.linalg.inv(x + 300 * torch.eye(300))  # HOT
    total += float(y.sum())
z = x @ x
"""


def session(*cells: str, caches: Path | None = None) -> list[dict[str, object]]:
    """The cells run in a fresh IPython shell; ``caches``: inductor's compile caches there
    (else the machine's)."""
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(caches)} if caches is not None else None
    done = subprocess.run(
        [sys.executable, "-c", SESSION, json.dumps(list(cells))],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULTS "))
    return json.loads(line[len("RESULTS ") :])  # type: ignore[no-any-return]


def table_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.split()[:2] == ["line", "wall"])
    return [x for x in lines[start + 1 :] if x and (x.lstrip()[0].isdigit() or x.lstrip().startswith("In["))]


def test_the_cell_runs_once_in_the_kernel_and_its_hot_line_comes_first() -> None:
    setup = "import torch\nx = torch.randn(300, 300)\ncounter = 0"
    out = session("%load_ext bottleneck_lsp", setup, PLANTED, "total")
    profiled = out[2]
    assert profiled["error"] is None
    (bundle,) = profiled["shown"]  # type: ignore[misc]
    text, page = bundle["text/plain"], bundle["text/html"]
    assert text.startswith("bottleneck: this cell's lines by wall time, run once in this kernel; it took ")
    first = table_rows(text)[0].split()
    assert first[0] == "4"  # the planted line, numbered as the cell shows it (%%bottleneck: 1)
    assert "y = torch.linalg.inv(x + 300 * torch.eye(300))" in table_rows(text)[0]
    assert "aten::linalg_lu_solve x150" in table_rows(text)[0]  # its ops, counted once each
    assert float(first[1].rstrip("%")) > 50 and float(first[4].rstrip("%")) > 50  # wall, op CPU
    assert "op CPU and memory: recorded in" in text
    # Jupyter shows the HTML: the same first row
    assert page.startswith('<div class="bottleneck">') and "<table>" in page
    body = page.split("<tbody>")[1]
    assert body.startswith('<tr><td style="text-align:right">4</td>')
    assert "y = torch.linalg.inv(x + 300 * torch.eye(300))" in body.split("</tr>")[0]
    # the cell ran once, in the kernel's namespace: its state is live afterwards
    assert float(out[-1]["state"]["total"]) > 0  # type: ignore[index]
    assert out[-1]["state"]["counter"] == "1"  # type: ignore[index]


def test_a_line_magic_a_failing_cell_and_bad_options() -> None:
    setup = "import torch\nx = torch.randn(300, 300)"
    failing = (
        "%%bottleneck\nready = True\n"
        + "w = torch.linalg.inv(x + 300 * torch.eye(300))\nraise ValueError('no data')"
    )
    out = session(
        "%load_ext bottleneck_lsp",
        setup,
        "%bottleneck --top 2 w = torch.linalg.inv(x + 300 * torch.eye(300))",
        failing,
        "%bottleneck --top zero w = 1",
        "%%bottleneck --bogus 3\nw = 2",
        "%%bottleneck\nraise KeyError('at once')",
    )
    line = out[2]["shown"][0]["text/plain"]  # type: ignore[index]
    assert table_rows(line)[0].split()[0] == "1"
    assert "w = torch.linalg.inv(" in table_rows(line)[0]
    failed = out[3]
    # the results so far are shown, then the cell's own error is raised as without the magic
    assert failed["error"] == "ValueError('no data')"
    shown = failed["shown"][0]["text/plain"]  # type: ignore[index]
    assert "w = torch.linalg.inv(" in shown
    assert "; it raised ValueError at line 4 (the lines measured until then)" in shown.splitlines()[0]
    # the traceback as without the magic: from the cell's line, none of the profiler's frames
    traceback = failed["traceback"]
    assert "----> 4 raise ValueError('no data')" in traceback, traceback
    assert "in_process.py" not in traceback and "bottleneck_lsp" not in traceback, traceback
    assert out[4]["shown"] == [] and out[5]["shown"] == []  # bad options: nothing ran
    # a cell that measured nothing: the table's head, then says so
    empty = out[6]["shown"][0]["text/plain"].splitlines()  # type: ignore[index]
    assert empty[1].split()[:2] == ["line", "wall"] and empty[2] == "(no line passed the thresholds)", empty
    state = out[-1]["state"]
    assert state["ready"] == "True"  # type: ignore[index]
    assert state["w"] != "2"  # type: ignore[index]


EARLIER = """import torch
def work(x):
    return torch.linalg.inv(x + 300 * torch.eye(300))  # HOT
x = torch.randn(300, 300)"""

COMPILED = """%%bottleneck --top 5
def step(x):
    return torch.tanh(x @ x).sum()
fast, big = torch.compile(step), torch.randn(600, 600)
for _ in range(100):
    total = float(fast(big))
"""


def test_an_earlier_cells_function_and_a_compiled_one_are_on_their_own_lines(tmp_path: Path) -> None:
    """A function defined in an earlier cell is charged to its own line, named as the
    kernel names that cell (``In[2]:3``); a cell that compiles says how long torch.compile
    took and where (the column "of it once"), its kernels on the lines they were made from,
    run after run of the cell, and the kernel's inductor settings are as before the cell."""
    caller = "%%bottleneck --top 5\nfor _ in range(150):\n    y = work(x)"
    settings = (
        "import os, torch._inductor.config as c\n"
        "restored = (os.environ.get('INDUCTOR_PROVENANCE'), c.trace.provenance_tracking_level, "
        "c.cpp.enable_kernel_profile)"
    )
    # (inductor's caches empty: a graph cached from a cell named otherwise names that cell)
    out = session("%load_ext bottleneck_lsp", EARLIER, caller, COMPILED, COMPILED, settings, caches=tmp_path)
    assert all(out[n]["error"] is None for n in (2, 3, 4)), out
    text = out[2]["shown"][0]["text/plain"]  # type: ignore[index]
    first = table_rows(text)[0]
    assert first.split()[0] == "In[2]:3", text  # the earlier cell's line, not this cell's call
    assert "return torch.linalg.inv(x + 300 * torch.eye(300))" in first
    assert "aten::linalg_lu_solve x150" in first
    called = [row for row in table_rows(text) if row.split()[0] == "3"]
    assert not called or float(called[0].split()[1].rstrip("%")) < 20, text  # the call's own time only
    html = out[2]["shown"][0]["text/html"]  # type: ignore[index]
    assert html.split("<tbody>")[1].startswith('<tr><td style="text-align:right">In[2]:3</td>')

    compiled = out[3]["shown"][0]["text/plain"]  # type: ignore[index]
    note = next((n for n in compiled.splitlines() if n.startswith("torch.compile compiled ")), "")
    assert re.match(r"torch\.compile compiled [12] times? for [0-9.]+ s in all", note), compiled
    assert "sampled while it compiled: In[4]:6 " in note, note
    rows = {row.split()[0]: row for row in table_rows(compiled)}
    assert re.search(r"\d ms compiling", rows["6"]), compiled  # the column "of it once"
    assert "loading torch's compiler" in rows["4"], compiled  # torch.compile(step): the import
    for run in out[3:5]:  # the same cell again (In[5]): torch finds its graph in its caches
        shown = run["shown"][0]["text/plain"]  # type: ignore[index]
        body = next(row for row in table_rows(shown) if row.split()[0] == "3")
        assert "return torch.tanh(x @ x).sum()" in body and "cpp_fused" in body, shown
    assert out[-1]["state"]["restored"] == "(None, 0, False)"  # type: ignore[index]
