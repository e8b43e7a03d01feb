"""A result made in another folder (as on a remote GPU node), opened through the real
server on a checkout here: lines that moved are shown where their text now stands, a line
whose text changed is skipped and reported, paths outside the recorded root are never
followed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import LanguageClient

from lsp_helpers import CONFIGS, SETTINGS, close_session, execute, start_session

CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")

TRAIN = """import torch

from lib.work import step

x = torch.randn(500, 500)
w = torch.randn(500, 500)
for _ in range(30):
    a = x @ w @ w  # PLANTED
    step(x, w)
"""

WORK = """import torch


def step(x, w):
    return torch.tanh(x @ w)  # CHANGED
"""


def line_of(path: Path, marker: str) -> int:
    return next(i for i, text in enumerate(path.read_text().splitlines(), 1) if marker in text)


@pytest.fixture(scope="module")
def made_elsewhere(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A project profiled by the CLI in one folder, and a checkout of it in another (the
    workspace holds it one level down), edited since: two lines added at the top of the
    script, the helper's hot line rewritten."""
    base = tmp_path_factory.mktemp("open-result")
    remote = base / "node" / "proj"
    (remote / "lib").mkdir(parents=True)
    (remote / "train.py").write_text(TRAIN)
    (remote / "lib" / "__init__.py").write_text("")
    (remote / "lib" / "work.py").write_text(WORK)
    out = base / "result.json"
    command = [CLI, "profile", "--passes", "sample,cpu", "--format", "json", "-o", str(out)]
    done = subprocess.run(
        [*command, str(remote / "train.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    workspace = base / "laptop"
    checkout = workspace / "checkout"
    shutil.copytree(remote, checkout)
    (checkout / "train.py").write_text("# edited here: two lines added\n\n" + TRAIN)
    (checkout / "lib" / "work.py").write_text(WORK.replace("torch.tanh(", "torch.sigmoid("))
    return {"result": out, "remote": remote, "workspace": workspace, "checkout": checkout}


@pytest_asyncio.fixture
async def client_on(made_elsewhere: dict[str, Path]) -> Any:
    config, caps = CONFIGS["stdio-vscode"]
    session = await config.start()
    await start_session(session, caps, str(made_elsewhere["workspace"]), SETTINGS)
    yield session
    await close_session(session)


async def lenses(client: LanguageClient, path: Path) -> dict[int, str]:
    uri = uris.from_fs_path(str(path)) or ""
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return {lens.range.start.line + 1: lens.command.title for lens in found or [] if lens.command}


async def test_a_result_made_in_another_folder_is_shown_on_the_files_here(
    client_on: LanguageClient, made_elsewhere: dict[str, Path]
) -> None:
    client, checkout, remote = client_on, made_elsewhere["checkout"], made_elsewhere["remote"]
    recorded = json.loads(made_elsewhere["result"].read_text())
    assert recorded["root"] == str(remote)
    assert {r["path"] for r in recorded["ranking"]["lines"]} >= {"train.py", "lib/work.py"}

    answer = await execute(client, "bottleneck.openResult", {"path": str(made_elsewhere["result"])})
    assert answer["root"] == str(checkout), answer  # found one level down in the workspace
    assert answer["script"] == uris.from_fs_path(str(checkout / "train.py"))
    planted = line_of(checkout / "train.py", "# PLANTED")
    was = line_of(remote / "train.py", "# PLANTED")
    assert planted == was + 2 and answer["moved"] >= 1, answer
    changed = line_of(remote / "lib" / "work.py", "# CHANGED")
    skipped = [(s["path"], s["line"], s["reason"]) for s in answer["skipped"]]
    assert ("lib/work.py", changed, "its text is no longer in the file") in skipped, skipped

    # what the user sees: the lens on the line as it stands here, none on the rewritten one
    titles = await lenses(client, checkout / "train.py")
    assert planted in titles and "% wall" in titles[planted], titles
    assert changed not in await lenses(client, checkout / "lib" / "work.py")
    assert any(
        "skipped: lib/work.py:" in m.message and "no longer in the file" in m.message for m in client.messages
    ), [m.message for m in client.messages]
    assert "top line train.py:" in answer["summary"] and "opened from result.json" in answer["summary"]
    # the report of the opened result is there too
    report = await execute(client, "bottleneck.report")
    assert "train.py" in report["text"]


async def test_paths_outside_the_recorded_root_and_bad_files_are_refused(
    client_on: LanguageClient, made_elsewhere: dict[str, Path], tmp_path: Path
) -> None:
    client, checkout = client_on, made_elsewhere["checkout"]
    data = json.loads(made_elsewhere["result"].read_text())
    rows = data["ranking"]["lines"]
    rows[0] = {**rows[0], "file": "/etc/hostname", "path": ""}
    rows[1] = {**rows[1], "path": "../../../etc/hostname"}
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(data))
    answer = await execute(client, "bottleneck.openResult", {"path": str(tampered), "root": str(checkout)})
    outside = [s for s in answer["skipped"] if s["reason"] == "outside the recorded root"]
    assert len(outside) == 2, answer["skipped"]

    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something else"}')
    refused = await execute(client, "bottleneck.openResult", {"path": str(bad)})
    assert refused["status"] == "refused" and "not a valid result" in refused["message"]
    missing = await execute(client, "bottleneck.openResult", {"path": str(tmp_path / "nope.json")})
    assert missing["status"] == "refused" and "nope.json" in missing["message"]
