"""The %%bottleneck magic (issue 48): a cell profiled once, in the kernel, its lines ranked
in a table under it. Driven in a real IPython shell (``InteractiveShell``), in a process of
its own: what the user sees is the display's text and HTML."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("IPython")

SESSION = textwrap.dedent(
    """
    import json, sys
    from IPython.core.displaypub import CapturingDisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.display_pub = CapturingDisplayPublisher()
    results = []
    for cell in json.loads(sys.argv[1]):
        before = len(shell.display_pub.outputs)
        outcome = shell.run_cell(cell)
        shown = [o["data"] for o in shell.display_pub.outputs[before:]]
        error = outcome.error_in_exec
        results.append({"shown": shown, "error": repr(error) if error is not None else None})
    results.append({"state": {k: repr(shell.user_ns.get(k)) for k in ("total", "ready", "w", "counter")}})
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


def session(*cells: str) -> list[dict[str, object]]:
    done = subprocess.run(
        [sys.executable, "-c", SESSION, json.dumps(list(cells))],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULTS "))
    return json.loads(line[len("RESULTS ") :])  # type: ignore[no-any-return]


def table_rows(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.split()[:2] == ["line", "wall"])
    return [x for x in lines[start + 1 :] if x and x.lstrip()[0].isdigit()]


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
    assert out[4]["shown"] == [] and out[5]["shown"] == []  # bad options: nothing ran
    state = out[-1]["state"]
    assert state["ready"] == "True"  # type: ignore[index]
    assert state["w"] != "2"  # type: ignore[index]
