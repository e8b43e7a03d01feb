"""Notebook cells matched between a result (cell paths, as profiled) and the client's open
notebook (cell URIs of its own): the alignment by text, and the mapping both ways over a
real pygls workspace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from lsprotocol import types
from pygls import uris
from pygls.workspace import Workspace

from bottleneck_lsp.lsp import notebook_cells
from bottleneck_lsp.lsp.annotations import read_lines
from bottleneck_lsp.lsp.notebook_cells import NotebookCells, align, cell_of_key, disk_bases, key
from notebook_sync import open_params
from repository import TESTS

PLANTED = TESTS / "notebooks" / "planted.ipynb"


def test_a_key_names_its_notebook_and_cell_and_nothing_else_is_a_key() -> None:
    path = "/work/my notebooks/a#b/nb.ipynb"
    assert key(path, 4) == "file:///work/my%20notebooks/a%23b/nb.ipynb%23cell4"
    assert cell_of_key(key(path, 4)) == (path, 4)
    assert cell_of_key(uris.from_fs_path(path) or "") is None
    assert cell_of_key("file:///work/train.py") is None
    assert cell_of_key("vscode-notebook-cell://h/work/nb.ipynb#W3sdnNjb2RlLXJlbW90ZQ%3D%3D") is None


def test_cells_align_by_their_text() -> None:
    a, b, c, d = ["a = 1"], ["b = a"], ["for _ in range(9):", "    c = b"], ["print(c)"]
    assert align([a, b, c, d], [a, b, c, d]) == {0: 0, 1: 1, 2: 2, 3: 3}
    # a cell inserted, one deleted
    assert align([a, b, c, d], [a, ["new"], b, c, d]) == {0: 0, 1: 2, 2: 3, 3: 4}
    assert align([a, b, c, d], [a, c, d]) == {0: 0, 2: 1, 3: 2}
    # an edited cell stays where it was; beside a new cell, the one most like it is chosen
    edited = ["steps = 9", *c]
    assert align([a, b, c, d], [a, b, edited, d]) == {0: 0, 1: 1, 2: 2, 3: 3}
    assert align([a, b, c, d], [a, b, ["x = 0"], edited, d]) == {0: 0, 1: 1, 2: 3, 3: 4}
    # a cell whose profiled text is not known keeps its place
    assert align([a, None, c], [a, ["?"], c]) == {0: 0, 1: 1, 2: 2}
    assert align([], [a]) == {} and align([a], []) == {}


def _open(workspace: Workspace, path: Path, prefix: str = "W") -> list[str]:
    params, names = open_params(path, prefix)
    workspace.put_notebook_document(params)
    return names


def test_client_cells_and_keys_map_both_ways_through_the_open_notebook(tmp_path: Path) -> None:
    path = tmp_path / "planted.ipynb"
    shutil.copy(PLANTED, path)
    workspace = Workspace(uris.from_fs_path(str(tmp_path)))
    bases = {str(path): disk_bases(str(path))}
    cells = NotebookCells()
    planted = key(str(path), 4)
    assert cells.target_of(workspace, bases, planted) is None  # not open: nowhere to publish
    assert cells.place_of(workspace, bases, planted) == (uris.from_fs_path(str(path)), 4)

    names = _open(workspace, path)
    assert [cells.key_of(workspace, bases, n) for n in names] == [key(str(path), i) for i in range(1, 6)]
    assert cells.target_of(workspace, bases, planted) == names[3]  # the URI as the client sent it
    assert cells.place_of(workspace, bases, planted) == (uris.from_fs_path(str(path)), 4)
    # a file is its own key and target, as this server spells its URI
    script = tmp_path / "run (1).py"
    assert cells.key_of(workspace, bases, f"file://{tmp_path}/run%20%281%29.py") == uris.from_fs_path(
        str(script)
    )
    assert cells.target_of(workspace, bases, "file:///w/run.py") == "file:///w/run.py"

    # a cell inserted above the planted one in the editor: matched again, the planted cell
    # keeps its key; the new cell has none (its own URI: nothing is kept under it)
    new = "vscode-notebook-cell://127.0.0.1:8080/new#Z"
    workspace.update_notebook_document(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(
                version=1, uri=uris.from_fs_path(str(path)) or ""
            ),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    structure=types.NotebookDocumentCellChangeStructure(
                        array=types.NotebookCellArrayChange(
                            start=1,
                            delete_count=0,
                            cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=new)],
                        ),
                        did_open=[
                            types.TextDocumentItem(uri=new, language_id="python", version=1, text="x = 2")
                        ],
                    )
                )
            ),
        )
    )
    assert cells.target_of(workspace, bases, planted) == names[3]  # matched before: kept until forgotten
    cells.forget(uris.from_fs_path(str(path)))
    assert cells.target_of(workspace, bases, planted) == names[3]
    assert cells.key_of(workspace, bases, names[3]) == planted
    assert cells.key_of(workspace, bases, new) == new
    assert cells.place_of(workspace, bases, planted) == (uris.from_fs_path(str(path)), 5)


def test_without_a_profiled_text_cells_match_by_place(tmp_path: Path) -> None:
    path = tmp_path / "planted.ipynb"
    shutil.copy(PLANTED, path)
    workspace = Workspace(uris.from_fs_path(str(tmp_path)))
    names = _open(workspace, path)
    assert NotebookCells().key_of(workspace, {}, names[3]) == key(str(path), 4)


def test_a_cells_lines_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "planted.ipynb"
    shutil.copy(PLANTED, path)
    bases = disk_bases(str(path))
    assert len(bases) == 5 and bases[key(str(path), 3)] == ["## The loop"]
    assert read_lines(f"{path}#cell4") == bases[key(str(path), 4)]
    assert read_lines(f"{path}#cell4")[2].endswith("# HOT")  # type: ignore[index]
    assert read_lines(f"{path}#cell9") is None and disk_bases(str(tmp_path / "none.ipynb")) == {}
    data = json.loads(path.read_text())
    data["cells"][3]["source"] = ["changed = True"]
    path.write_text(json.dumps(data))  # another version of the file: read again
    assert notebook_cells.disk_bases(str(path))[key(str(path), 4)] == ["changed = True"]


def test_related_locations_in_cells_are_named_as_the_client_names_the_cells() -> None:
    planted, other = key("/w/nb.ipynb", 4), key("/w/nb.ipynb", 2)
    text = (
        f'{{"range":{{}},"relatedInformation":[{{"location":{{"uri":"{planted}","range":{{}}}}}},'
        f'{{"location":{{"uri":"{other}","range":{{}}}}}},{{"location":{{"uri":"file:///w/a.py"}}}}]}}'
    )
    shown = notebook_cells.client_locations(text, {planted: "vscode-notebook-cell:/w/nb.ipynb#W3"}.get)
    assert json.loads(shown)["relatedInformation"] == [
        {"location": {"uri": "vscode-notebook-cell:/w/nb.ipynb#W3", "range": {}}},
        {"location": {"uri": other, "range": {}}},  # no cell open for it: left as it was
        {"location": {"uri": "file:///w/a.py"}},
    ]
