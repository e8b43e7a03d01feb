"""Fixtures: the real language server, over stdio with VS Code's capabilities and over TCP
with Neovim's (no code lens refresh). And a guard over the whole run: no private folder of
ours (a job's, a fork server's, the server's reports, torch's launcher's logs) is left behind
by any test."""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import pytest
import pytest_asyncio

from bottleneck_lsp.lsp import reportdir
from lsp_helpers import CONFIGS, close_session, open_session, our_folders

# Folders with no link to tell the checkout, counted when made since the run started: the
# server's reports, and torch's launcher's logs (a distributed job keeps them in its own).
_MADE_SINCE = (reportdir.PREFIX, "torchelastic_")
_before: set[str] = set()
_started = 0.0
_made_by: dict[str, str] = {}  # folder -> the test during which it appeared


def _folders() -> set[str]:
    """Ours: job and fork server folders of this checkout, and ``_MADE_SINCE``."""
    tmp = tempfile.gettempdir()
    made = set()
    for name in os.listdir(tmp):
        path = os.path.join(tmp, name)
        try:
            if name.startswith(_MADE_SINCE) and os.stat(path).st_mtime >= _started:
                made.add(path)
        except OSError:
            pass
    return our_folders() | made


def pytest_sessionstart(session: pytest.Session) -> None:
    global _started
    _started = time.time()
    _before.update(_folders())


def pytest_runtest_logfinish(nodeid: str, location: Any) -> None:
    for folder in _folders() - _before:
        _made_by.setdefault(folder, nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    deadline = time.monotonic() + 15  # a job ended by the last test may still be removing its own
    left = _folders() - _before
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = _folders() - _before
    if not left:
        return
    lines = []
    for folder in sorted(left):
        try:
            inside = sorted(os.listdir(folder))
        except OSError:
            inside = []
        lines.append(f"  {folder} {inside} (appeared during {_made_by.get(folder, 'the run')})")
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        reporter.write_sep("=", "private folders left behind (each test must leave none)", red=True)
        reporter.write_line("\n".join(lines))
    session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest_asyncio.fixture(params=list(CONFIGS))
async def client(request: Any) -> Any:
    session = await open_session(request.param)
    yield session
    await close_session(session)


@pytest_asyncio.fixture
async def vscode_client() -> Any:
    session = await open_session("stdio-vscode")
    yield session
    await close_session(session)
