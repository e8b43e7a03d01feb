"""Annotations stay on the code that was profiled, whatever the editor's text is when they
are made or made again: unsaved edits when the profile starts, a settings change or a
pinned baseline after edits, several changes at once, a file closed without saving and
reopened, a client that spells file URIs its own way. The real server over stdio (VS
Code's capabilities); what is checked is what the editor shows: the lines of the
diagnostics, lenses and hovers."""

from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris
from pytest_lsp import LanguageClient

from helpers import SCRIPTS, marker_line
from lsp_helpers import SETTINGS, execute, uri_of

SCRIPT = "fn_call.py"  # line 5: y = torch.tanh(x)  # HOT
SETTLED_S = 0.7  # the server republishes 0.3 s after the last edit


def open_doc(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )


def insert(client: LanguageClient, uri: str, version: int, *lines: int) -> None:
    """One didChange: a blank line inserted before each of ``lines``, in the order given
    (each change's position is of the text the changes before it left)."""
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, 0), types.Position(line, 0)), text="\n"
                )
                for line in lines
            ],
        )
    )


def tanh_lines(client: LanguageClient, uri: str) -> list[int]:
    return [d.range.start.line for d in client.diagnostics.get(uri, []) if "aten::tanh" in d.message]


async def lens_lines(client: LanguageClient, uri: str) -> list[int]:
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return [lens.range.start.line for lens in found or []]


async def hover_text(client: LanguageClient, uri: str, line: int) -> str:
    found = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line, 4)
        )
    )
    contents: Any = found.contents if found is not None else None
    return str(contents.value) if contents is not None else ""


def configure(client: LanguageClient, **changes: Any) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bottleneck": {**SETTINGS, **changes}})
    )


async def test_after_edits_a_settings_change_and_a_pin_leave_the_hotspot_on_its_code(
    vscode_client: LanguageClient,
) -> None:
    client = vscode_client
    uri, hot = uri_of(SCRIPT), marker_line(SCRIPT) - 1
    await execute(client, "bottleneck.profile", {"uri": uri})
    open_doc(client, uri, (SCRIPTS / SCRIPT).read_text())
    insert(client, uri, 2, 0, 0)  # two lines above: the hot line is now hot + 2
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, uri) == [hot + 2]
    before = client.lens_refreshes  # type: ignore[attr-defined]
    configure(client, minShare=0.04)
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, uri) == [hot + 2]
    marked = {d.range.start.line for d in client.diagnostics[uri]}
    lensed = await lens_lines(client, uri)
    assert hot + 2 in lensed and set(lensed) <= marked  # lenses where the diagnostics are
    assert "aten::tanh" in await hover_text(client, uri, hot + 2)
    assert "aten::tanh" not in await hover_text(client, uri, hot)
    # the lenses are asked for again, as the diagnostics changed
    assert client.lens_refreshes > before  # type: ignore[attr-defined]
    await execute(client, "bottleneck.pinBaseline", uri)
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, uri) == [hot + 2]


async def test_a_profile_started_with_unsaved_edits_marks_where_the_code_stands_in_the_editor(
    vscode_client: LanguageClient,
) -> None:
    client = vscode_client
    uri, hot = uri_of(SCRIPT), marker_line(SCRIPT) - 1
    open_doc(client, uri, "# unsaved\n# lines\n" + (SCRIPTS / SCRIPT).read_text())
    await execute(client, "bottleneck.profile", {"uri": uri})
    assert any("unsaved edits: profiling the saved file on disk" in m.message for m in client.messages)
    assert tanh_lines(client, uri) == [hot + 2]
    assert "aten::tanh" in await hover_text(client, uri, hot + 2)


async def test_several_changes_at_once_and_a_file_closed_unsaved_keep_the_hotspot_on_its_code(
    vscode_client: LanguageClient,
) -> None:
    client = vscode_client
    uri, hot = uri_of(SCRIPT), marker_line(SCRIPT) - 1
    text = (SCRIPTS / SCRIPT).read_text()
    await execute(client, "bottleneck.profile", {"uri": uri})
    open_doc(client, uri, text)
    insert(client, uri, 2, hot, 0)  # two cursors, the lower one's change first (as VS Code sends them)
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, uri) == [hot + 2]
    # Closed without saving: the file is the one on disk again, and so is reopening it
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, uri) == [hot]
    open_doc(client, uri, text)
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, uri) == [hot]
    assert "aten::tanh" in await hover_text(client, uri, hot)


async def test_a_clients_own_spelling_of_a_file_uri_finds_hovers_lenses_and_edits(
    vscode_client: LanguageClient, tmp_path: Path
) -> None:
    """Neovim writes file URIs with lower case escapes and leaves ``(`` and ``)`` as they
    are; the server writes them as pygls does. Both name the same file."""
    client = vscode_client
    path = tmp_path / "run (1) é.py"
    shutil.copy(SCRIPTS / SCRIPT, path)
    ours = uris.from_fs_path(str(path)) or ""
    theirs = "file://" + re.sub(
        r"[^A-Za-z0-9._~/()-]", lambda m: "".join(f"%{b:02x}" for b in m.group().encode()), str(path)
    )
    assert theirs != ours
    hot = marker_line(SCRIPT) - 1
    await execute(client, "bottleneck.profile", {"uri": theirs})
    assert tanh_lines(client, ours) == [hot]
    open_doc(client, theirs, path.read_text())
    assert "aten::tanh" in await hover_text(client, theirs, hot)
    assert hot in await lens_lines(client, theirs)
    insert(client, theirs, 2, 0)
    await asyncio.sleep(SETTLED_S)
    assert tanh_lines(client, ours) == [hot + 1]


async def test_cleared_hotspots_stay_cleared_when_the_settings_change(vscode_client: LanguageClient) -> None:
    client = vscode_client
    uri = uri_of(SCRIPT)
    await execute(client, "bottleneck.profile", {"uri": uri})
    assert tanh_lines(client, uri)
    await execute(client, "bottleneck.clear")
    configure(client, codeLens=False)
    await asyncio.sleep(SETTLED_S)
    assert not client.diagnostics.get(uri)  # the empty list clear published, not the hotspots again
