"""Reading .ipynb files: cells counted as on screen, each problem named in one sentence."""

from __future__ import annotations

import json

import pytest

from bottleneck_lsp.notebook.cell_paths import cell_of, cell_path, place_text, short_place, split_cell_path
from bottleneck_lsp.notebook.document import NotebookError, parse_notebook


def _notebook(cells: list[dict[str, object]], **extra: object) -> str:
    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells, **extra})


def test_cells_are_counted_over_the_whole_list_markdown_included() -> None:
    text = _notebook(
        [
            {"cell_type": "markdown", "source": ["# Title\n", "words"]},
            {"cell_type": "code", "source": "import torch\nx = 1"},
            {"cell_type": "raw", "source": []},
            {"cell_type": "code", "source": ["y = 2\n"]},
        ]
    )
    notebook = parse_notebook(text, "/work/nb.ipynb")
    assert [(c.index, c.kind) for c in notebook.code_cells] == [(2, "code"), (4, "code")]
    assert notebook.cell(2) is not None and notebook.cell(2).lines == ["import torch", "x = 1"]  # type: ignore[union-attr]
    assert notebook.cell(5) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"cells": [', "nb.ipynb is not a notebook: it is not valid JSON"),
        ("[1, 2]", "nb.ipynb is not a notebook: its JSON is not an object"),
        ('{"nbformat": 3, "worksheets": []}', "nb.ipynb is nbformat 3; only nbformat 4 notebooks are read"),
        ('{"nbformat": 4}', "nb.ipynb is not a notebook: it has no list of cells"),
        ('{"cells": []}', "nb.ipynb is not a notebook: it names no nbformat version"),
        (_notebook([{"cell_type": "code"}, {"cell_type": "code", "source": 3}]), "cell 2 has no source text"),
        (_notebook([{"cell_type": "output", "source": ""}]), "cell 1 has cell_type 'output'"),
        (_notebook([], metadata={"kernelspec": {"language": "R"}}), "nb.ipynb is a r notebook"),
    ],
)
def test_each_problem_is_one_sentence(text: str, message: str) -> None:
    with pytest.raises(NotebookError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_notebook(text, "/work/nb.ipynb")


def test_cell_paths_name_the_cell_and_read_back() -> None:
    name = cell_path("/work/a b/nb.ipynb", 12)
    assert name == "/work/a b/nb.ipynb#cell12"
    assert split_cell_path(name) == ("/work/a b/nb.ipynb", 12)
    assert cell_of(name) == 12
    assert split_cell_path("/work/script.py") is None
    assert split_cell_path("/work/nb.ipynb#cell0") is None  # cells count from 1
    assert split_cell_path("/work/nb.ipynb") is None
    assert place_text(name, 3) == "/work/a b/nb.ipynb cell 12, line 3"
    assert short_place(name, 3) == "nb.ipynb cell 12, line 3"
    assert short_place("/work/script.py", 7) == "script.py:7"
    assert place_text("/work/script.py", 7, "script.py") == "script.py:7"
