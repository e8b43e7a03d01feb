"""Fixtures: the real language server, over stdio with VS Code's capabilities and over TCP
with Neovim's (no code lens refresh)."""

from __future__ import annotations

from typing import Any

import pytest_asyncio

from lsp_helpers import CONFIGS, close_session, open_session


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
