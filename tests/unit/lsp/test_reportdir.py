"""The server's folder of reports: named after its server, removed by the next server once
that one is gone (a SIGKILLed server cannot remove it; tests/test_lsp_warm.py kills one)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bottleneck_lsp.lsp import reportdir


def test_only_folders_of_servers_that_are_gone_are_removed(tmp_path: Path) -> None:
    ended = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_pid = int(ended.stdout)  # reaped: no process holds this id (unless reused since)
    dead = tmp_path / f"{reportdir.PREFIX}{dead_pid}-abc123"
    (dead / "sub").mkdir(parents=True)
    (dead / "sub" / "script.py.bottleneck.txt").write_text("report")
    alive = tmp_path / f"{reportdir.PREFIX}{os.getppid()}-def456"  # a running process's
    alive.mkdir()
    mine = tmp_path / f"{reportdir.PREFIX}{os.getpid()}-ghi789"
    mine.mkdir()
    unnamed = tmp_path / f"{reportdir.PREFIX}xyz_12"  # an older server's: no owner known
    unnamed.mkdir()
    plain = tmp_path / f"{reportdir.PREFIX}{dead_pid}-file"  # not a folder
    plain.write_text("")
    other = tmp_path / f"elsewhere-{dead_pid}-abc"
    other.mkdir()

    assert reportdir.sweep_stale(str(tmp_path)) == [str(dead)]
    assert not dead.exists()
    assert alive.is_dir() and mine.is_dir() and unnamed.is_dir() and plain.is_file() and other.is_dir()
    assert reportdir.sweep_stale(str(tmp_path)) == []


def test_a_new_folder_is_private_and_carries_the_servers_process_id() -> None:
    path = Path(reportdir.make())
    try:
        assert path.name.startswith(f"{reportdir.PREFIX}{os.getpid()}-")
        assert path.stat().st_mode & 0o777 == 0o700
        assert reportdir.sweep_stale(str(path.parent)).count(str(path)) == 0  # its server runs
    finally:
        path.rmdir()
