"""A notebook in the editor, as VS Code's Jupyter editor syncs it (notebook document sync,
every cell, cell URIs of its own): the real server over stdio profiles the notebook and
shows each mark on its cell, at the line within the cell (diagnostic, lens, hover);
edits in a cell and cells inserted above move the marks with their code; a result made in
another folder opens onto the notebook here."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import pytest_asyncio
from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from lsp_helpers import SERVER, SETTINGS, close_session, execute
from notebook_sync import cell_item, cell_sources, cell_uri, notebook_cell, open_params
from repository import ROOT

PLANTED = ROOT / "tests" / "notebooks" / "planted.ipynb"
HOT_CELL, HOT_LINE = 4, 2  # the planted cell (1-based, markdown counted) and its "# HOT" line (0-based)
CLI = str(Path(sys.executable).parent / "bottleneck-lsp")


def open_notebook(
    client: LanguageClient, path: Path, session: str = "W", shown: Path | None = None
) -> list[str]:
    """notebookDocument/didOpen for the notebook as on disk (or with the cells of ``shown``:
    as the editor holds it with unsaved edits); the cells' URIs, in order."""
    params, names = open_params(path, session, shown)
    client.notebook_document_did_open(params)
    return names


def change_notebook(
    client: LanguageClient, path: Path, version: int, cells: types.NotebookDocumentCellChanges
) -> None:
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                version=version, uri=uris.from_fs_path(str(path)) or ""
            ),
            change=types.NotebookDocumentChangeEvent(cells=cells),
        )
    )


async def until(check: Callable[[], bool], what: str, timeout_s: float = 10.0) -> None:
    for _ in range(int(timeout_s / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def hot_lines(client: LanguageClient, uri: str) -> list[int]:
    """The lines of the cell's warnings (the planted line takes about 90% of the wall time;
    the others below 20%)."""
    return [
        d.range.start.line
        for d in client.diagnostics.get(uri, [])
        if d.severity == types.DiagnosticSeverity.Warning and "% of wall time" in d.message
    ]


async def lens_titles(client: LanguageClient, uri: str) -> dict[int, str]:
    found = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    return {lens.range.start.line: lens.command.title for lens in found or [] if lens.command}


async def hover_text(client: LanguageClient, uri: str, line: int) -> str:
    found = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=line, character=6),
        )
    )
    return found.contents.value if found is not None else ""  # type: ignore[union-attr]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


async def start(root: Path) -> tuple[LanguageClient, types.InitializeResult]:
    """The real server over stdio, with VS Code's capabilities and notebook sync (as VS
    Code's client declares it)."""
    client = await ClientServerConfig(server_command=SERVER).start()

    @client.feature(types.WORKSPACE_CODE_LENS_REFRESH)
    def on_refresh(params: Any) -> None:
        pass

    capabilities = attrs.evolve(
        client_capabilities("visual-studio-code"),
        notebook_document=types.NotebookDocumentClientCapabilities(
            synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=True)
        ),
    )
    root_uri = uris.from_fs_path(str(root)) or ""
    answer = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=root_uri,
            workspace_folders=[types.WorkspaceFolder(uri=root_uri, name="work")],
            initialization_options={"bottleneck": SETTINGS},
        )
    )
    return client, answer


@pytest_asyncio.fixture
async def session(workspace: Path) -> AsyncIterator[tuple[LanguageClient, types.InitializeResult]]:
    client, answer = await start(workspace)
    yield client, answer
    await close_session(client)


async def test_a_profiled_notebook_shows_its_marks_on_its_cells_in_the_editor(
    session: tuple[LanguageClient, types.InitializeResult], workspace: Path
) -> None:
    client, answer = session
    sync = answer.capabilities.notebook_document_sync
    assert isinstance(sync, types.NotebookDocumentSyncOptions), sync
    selector = sync.notebook_selector[0]
    assert isinstance(selector, types.NotebookDocumentFilterWithNotebook) and selector.cells is None
    assert selector.notebook == "jupyter-notebook"  # every cell synced: markdown cells keep the count

    notebook = workspace / "planted.ipynb"
    shutil.copy(PLANTED, notebook)
    cells = open_notebook(client, notebook)
    planted = cells[HOT_CELL - 1]
    assert "# HOT" in cell_sources(notebook)[HOT_CELL - 1][1].splitlines()[HOT_LINE]

    result = await execute(
        client, "bottleneck.profile", {"uri": uris.from_fs_path(str(notebook)), "passes": ["sample", "cpu"]}
    )
    assert result["status"] == "ok", result
    assert "top line planted.ipynb cell 4, line 3" in result["summary"], result["summary"]

    # What the user sees: the diagnostic on the planted cell's line, sent to the editor's own
    # cell URI (never to a file URI made up for the cell), its lens and its hover.
    await until(lambda: hot_lines(client, planted) == [HOT_LINE], "the planted cell's diagnostic")
    message = next(d.message for d in client.diagnostics[planted] if d.range.start.line == HOT_LINE)
    assert "% of wall time" in message and "aten::" in message, message
    assert not [uri for uri in client.diagnostics if uri.startswith("file:")], list(client.diagnostics)
    titles = await lens_titles(client, planted)
    assert HOT_LINE in titles and "% wall" in titles[HOT_LINE], titles
    hover = await hover_text(client, planted, HOT_LINE)
    assert "| wall (ranked by) |" in hover and "aten::" in hover, hover
    # each cell its own: the data cell's line 3 (torch.manual_seed) is not the planted line
    assert (await lens_titles(client, cells[1])).get(HOT_LINE) != titles[HOT_LINE]
    assert await hover_text(client, cells[0], 0) == ""  # a markdown cell: nothing

    view = await execute(client, "bottleneck.hotspots", uris.from_fs_path(str(notebook)))
    top = view["rows"][0]
    assert (top["notebook"], top["cell"], top["line"]) == (uris.from_fs_path(str(notebook)), HOT_CELL, 3), top
    assert top["path"] == "planted.ipynb#cell4", top

    # A line typed above the planted line in its cell: the diagnostic moves down with it.
    change_notebook(
        client,
        notebook,
        1,
        types.NotebookDocumentCellChanges(
            text_content=[
                types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=planted, version=2),
                    changes=[
                        types.TextDocumentContentChangePartial(
                            range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                            text="steps = 200\n",
                        )
                    ],
                )
            ]
        ),
    )
    await until(lambda: hot_lines(client, planted) == [HOT_LINE + 1], "the diagnostic to move down a line")
    assert HOT_LINE + 1 in await lens_titles(client, planted)

    # A code cell inserted above the planted cell: the marks stay on the planted cell (now the
    # fifth), not on the cell that now stands fourth.
    new = cell_uri(notebook, 99)
    change_notebook(
        client,
        notebook,
        2,
        types.NotebookDocumentCellChanges(
            structure=types.NotebookDocumentCellChangeStructure(
                array=types.NotebookCellArrayChange(
                    start=2, delete_count=0, cells=[notebook_cell(new, "code")]
                ),
                did_open=[cell_item(new, "code", "print('a new cell')")],
            )
        ),
    )
    await asyncio.sleep(0.7)
    assert hot_lines(client, planted) == [HOT_LINE + 1] and not client.diagnostics.get(new)
    assert HOT_LINE + 1 in await lens_titles(client, planted) and not await lens_titles(client, new)
    view = await execute(client, "bottleneck.hotspots", uris.from_fs_path(str(notebook)))
    assert (view["rows"][0]["cell"], view["rows"][0]["line"]) == (HOT_CELL + 1, 4), view["rows"][0]

    # Closed: its cells' diagnostics go; opened again (unsaved edits gone, new cell URIs), the
    # marks come back on the planted cell, at the line on disk.
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=uris.from_fs_path(str(notebook)) or ""),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in [*cells[:2], new, *cells[2:]]],
        )
    )
    await until(lambda: len(client.diagnostics[planted]) == 0, "the closed cell's diagnostics to be cleared")
    again = open_notebook(client, notebook, session="X")
    await until(
        lambda: hot_lines(client, again[HOT_CELL - 1]) == [HOT_LINE], "the reopened cell's diagnostic"
    )
    assert not [uri for uri in client.diagnostics if uri.startswith("file:")], list(client.diagnostics)


async def test_a_notebook_result_made_in_another_folder_opens_onto_the_notebook_here(tmp_path: Path) -> None:
    """``bottleneck-lsp profile --format json`` on another machine (another folder here);
    the checkout here has a line added at the top of the planted cell: the mark is shown on
    the planted line of the notebook here, in its cell, where it now stands."""
    remote = tmp_path / "node" / "proj"
    remote.mkdir(parents=True)
    shutil.copy(PLANTED, remote / "planted.ipynb")
    out = tmp_path / "result.json"
    done = subprocess.run(
        [
            CLI,
            "profile",
            "--passes",
            "sample",
            "--format",
            "json",
            "-o",
            str(out),
            str(remote / "planted.ipynb"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    here = tmp_path / "laptop" / "proj"
    shutil.copytree(remote, here)
    data = json.loads((here / "planted.ipynb").read_text())
    data["cells"][HOT_CELL - 1]["source"].insert(0, "# tried on the laptop\n")
    (here / "planted.ipynb").write_text(json.dumps(data))

    client, _ = await start(tmp_path / "laptop")
    try:
        cells = open_notebook(client, here / "planted.ipynb")
        answer = await execute(client, "bottleneck.openResult", {"path": str(out)})
        assert answer["root"] == str(here) and answer["script"] == uris.from_fs_path(
            str(here / "planted.ipynb")
        )
        assert answer["moved"] >= 1 and not [s for s in answer["skipped"] if "cell4" in s["path"]], answer
        planted = cells[HOT_CELL - 1]
        await until(lambda: hot_lines(client, planted) == [HOT_LINE + 1], "the planted cell's diagnostic")
        assert HOT_LINE + 1 in await lens_titles(client, planted)
    finally:
        await close_session(client)


async def test_an_unsaved_notebook_shows_nothing_then_the_saved_ones_marks_on_its_text(
    session: tuple[LanguageClient, types.InitializeResult], workspace: Path
) -> None:
    """Open with unsaved edits (a line typed at the top of the planted cell) and no result:
    nothing shown. Profiled: the user is told the saved notebook runs, and its marks are
    placed on the editor's text (the planted line one lower)."""
    client, _ = session
    notebook = workspace / "planted.ipynb"
    shutil.copy(PLANTED, notebook)
    edited = workspace / "edited" / "planted.ipynb"
    edited.parent.mkdir()
    data = json.loads(PLANTED.read_text())
    data["cells"][HOT_CELL - 1]["source"].insert(0, "# typed, not saved\n")
    edited.write_text(json.dumps(data))
    names = open_notebook(client, notebook, shown=edited)
    for name in names:
        assert await lens_titles(client, name) == {} and await hover_text(client, name, 0) == ""
    await asyncio.sleep(0.3)
    assert client.diagnostics == {}

    result = await execute(
        client, "bottleneck.profile", {"uri": uris.from_fs_path(str(notebook)), "passes": ["sample"]}
    )
    assert result["status"] == "ok", result
    said = [m.message for m in client.messages]
    assert "planted.ipynb has unsaved edits: profiling the saved file on disk" in said, said
    planted = names[HOT_CELL - 1]
    await until(lambda: hot_lines(client, planted) == [HOT_LINE + 1], "the mark on the unsaved text's line")


BACKWARD = [
    ("code", "import torch\n\nx = torch.randn(400, 400, requires_grad=True)\nw = torch.randn(400, 400)"),
    ("markdown", "The loop: forward, then backward."),
    (
        "code",
        "for _ in range(40):\n"
        "    loss = torch.tanh(x @ w @ w).sum()  # FORWARD\n"
        "    loss.backward()  # BACKWARD",
    ),
]


async def test_a_backward_lines_forward_lines_point_at_the_editors_cells(
    session: tuple[LanguageClient, types.InitializeResult], workspace: Path
) -> None:
    """The backward line's diagnostic links its forward line (relatedInformation) by the
    client's cell URI, and its hover names the cell and line (a cell has no file URI)."""
    client, _ = session
    notebook = workspace / "backward.ipynb"
    cells = [
        {"cell_type": kind, "metadata": {}, "source": text.splitlines(True)}
        | ({"outputs": [], "execution_count": None} if kind == "code" else {})
        for kind, text in BACKWARD
    ]
    notebook.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    names = open_notebook(client, notebook)
    result = await execute(
        client, "bottleneck.profile", {"uri": uris.from_fs_path(str(notebook)), "passes": ["sample", "cpu"]}
    )
    assert result["status"] == "ok", result
    loop = names[2]
    await until(
        lambda: any(d.range.start.line == 2 for d in client.diagnostics.get(loop, [])), "the backward line"
    )
    backward = next(d for d in client.diagnostics[loop] if d.range.start.line == 2)
    related = [(r.location.uri, r.location.range.start.line) for r in backward.related_information or []]
    assert related == [(loop, 1)], related
    assert "Backward work for forward cell 3, line 2." in await hover_text(client, loop, 2)
