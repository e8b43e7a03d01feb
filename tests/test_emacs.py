"""The Emacs blocks of docs/editors.md (Eglot, lsp-mode), as they are written there, in a real Emacs
(batch mode; Debian's Emacs 28, Eglot 1.9 and lsp-mode 8.0, from `make editors`).

The blocks are the user's init file; ``tests/emacs/drive.el`` opens a script, runs
``M-x eglot`` (or ``M-x lsp``) and ``M-x bottleneck-profile``, and reads back what the
screen shows: Flymake's diagnostics, lsp-mode's lenses, the hover at the hot line and the
echo area. Then it profiles a long script and kills Emacs while that runs: nothing of ours
may be left.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from editors import LONG, assert_all_gone, doc_blocks, tcp_server, with_running_server
from helpers import SCRIPTS, marker_line
from lsp_helpers import our_processes, runner_pids

ROOT = Path(__file__).resolve().parent.parent
HOT = marker_line(str(SCRIPTS / "fn_call.py"))


def editors_doc_blocks(heading: str = "Emacs (eglot)") -> list[str]:
    """The elisp blocks of docs/editors.md's section ``heading``."""
    return doc_blocks(heading, "elisp")


def emacs(tmp_path: Path, init: str, **env: str) -> dict[str, Any]:
    """Run tests/emacs/drive.el in a batch Emacs whose init file is ``init``, in the
    workspace tmp_path/ws (hot.py, long.py); what it saw."""
    found = shutil.which("emacs")
    if found is None:
        if shutil.which("apt-get"):
            pytest.fail("no emacs: `make editors` installs Debian's emacs-nox and elpa-eglot")
        pytest.skip("Emacs and Eglot come from Debian packages (`make editors`)")
    work = tmp_path / "ws"
    work.mkdir()
    shutil.copy(SCRIPTS / "fn_call.py", work / "hot.py")
    (work / "long.py").write_text(LONG)
    (tmp_path / "init.el").write_text(init)
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        # `bottleneck-lsp` (the blocks' program) and the python3 it profiles with, from this venv
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "CONFIG": str(tmp_path / "init.el"),
        "SCRIPT": "hot.py",
        "HOVER_LINE": str(HOT),
        "OUT": str(out),
        "TIMEOUT_S": "120",
        "CLIENT": "eglot",
        **env,
    }
    (tmp_path / "home").mkdir(exist_ok=True)
    done = subprocess.run(
        [found, "--batch", "-l", str(ROOT / "tests/emacs/drive.el")],
        cwd=work,
        env=env,
        capture_output=True,
        timeout=400,
    )
    assert out.exists(), done.stdout.decode()[-2000:] + done.stderr.decode()[-3000:]
    seen: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in seen, (seen, done.stderr.decode()[-3000:])
    return seen


def check_hot_line(seen: dict[str, Any], prefix: str = r"bottleneck \[wall-time\]: ") -> None:
    """The hot line's Flymake warning worded as the CLI words it (after the client's
    ``prefix``), its hover's table, and the summary in the echo area."""
    hot = [d for d in seen["diagnostics"] if d["line"] == HOT]
    assert len(hot) == 1 and "warning" in hot[0]["type"], seen["diagnostics"]
    assert re.match(
        prefix + r"\d+\.\d% of wall time \(.+\); "
        r"\d+\.\d% of op CPU time \(.+, 300 calls\): aten::tanh ×300",
        hot[0]["text"],
    ), hot[0]
    top = max(seen["diagnostics"], key=lambda d: float(re.search(r"([\d.]+)% of wall", d["text"]).group(1)))  # type: ignore[union-attr]
    assert top["line"] == HOT, seen["diagnostics"]
    assert "| wall (ranked by) |" in seen["hover"] and "| op CPU |" in seen["hover"], seen["hover"]
    assert "Ops from this line (300 calls): `aten::tanh` ×300" in seen["hover"], seen["hover"]
    summaries = [m for m in seen["messages"] if m.startswith("bottleneck: ")]
    assert len(summaries) == 1 and summaries[0].startswith(
        f"bottleneck: hot.py: done; top line hot.py:{HOT} "
    ), seen["messages"]


def test_eglot_block_profiles_and_killing_emacs_leaves_no_process(tmp_path: Path) -> None:
    blocks = editors_doc_blocks()
    assert len(blocks) == 2, "docs/editors.md's Eglot section: a stdio block and a running server's"
    seen = emacs(tmp_path, blocks[0], LONG="long.py", STARTED=str(tmp_path / "ws" / "started"))
    check_hot_line(seen)
    assert seen["lenses"] == []  # Eglot draws none
    # Emacs killed while long.py ran: the server, the fork server and the pass end too
    assert_all_gone(seen["pids"])
    assert runner_pids(str(tmp_path / "ws")) == [], our_processes()


def test_eglot_block_for_a_running_server_over_tcp(tmp_path: Path) -> None:
    """The Eglot section's second block (a server started by hand, its token in a file, read when Eglot
    connects) in place of the first block's registration; the server ends with Emacs."""
    token = tmp_path / "home" / ".config" / "bottleneck" / "token"
    token.parent.mkdir(parents=True, mode=0o700)
    with tcp_server(token) as port:
        init = with_running_server(*editors_doc_blocks(), r"\(with-eval-after-load 'eglot\n.*?\)\)\)\n", port)
        seen = emacs(tmp_path, init)
        check_hot_line(seen)


def test_lsp_mode_block_profiles_beside_another_server_and_draws_lenses(tmp_path: Path) -> None:
    """lsp-mode runs the server as an add-on and draws the lenses at the lines' end, asking
    for them again at each workspace/codeLens/refresh."""
    blocks = editors_doc_blocks("Emacs (lsp-mode)")
    assert len(blocks) == 1, "docs/editors.md's lsp-mode section: one block"
    seen = emacs(
        tmp_path, blocks[0], CLIENT="lsp-mode", LONG="long.py", STARTED=str(tmp_path / "ws" / "started")
    )
    check_hot_line(seen, prefix="")
    # lsp-mode started pylsp (a dev extra, on PATH) for the buffer as well
    assert any("[pylsp:" in m and "[bottleneck:" in m for m in seen["messages"]), seen["messages"]
    drawn = [lens["text"] for lens in seen["lenses"] if lens["line"] == HOT]
    assert len(drawn) == 1 and re.fullmatch(
        r"\s*\d+\.\d% wall · .+ · aten::tanh ×300 · op CPU \d+%\s*", drawn[0]
    ), seen["lenses"]
    # the lens's command (bottleneck.report): lsp-mode 8 cannot open a document for the
    # server, which says where the full report is instead; the file holds it
    clicked = re.fullmatch(
        r"LSP :: hot\.py: the full report is in (/.+\.bottleneck\.txt)", seen.get("clicked", "")
    )
    assert clicked, seen.get("clicked")
    assert "Hotspots by source line" in seen["report"], seen.get("report")
    assert_all_gone(seen["pids"])
