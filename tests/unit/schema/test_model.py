"""The result model is the schema's one definition: documents fit it exactly and are
written back unchanged, it refuses what does not fit with the path of the problem, and
docs/result-schema.md names every field it defines."""

from __future__ import annotations

import json
import re

import pytest

from bottleneck_lsp.job.replay import replay
from bottleneck_lsp.schema import model
from bottleneck_lsp.schema.model import Document, ModelError
from repository import FIXTURES, ROOT


def test_recorded_and_replayed_documents_round_trip() -> None:
    docs = [json.loads((FIXTURES / "train-cpu.json").read_text())]
    for name in ("gpu", "cpu"):
        recording = FIXTURES / f"cuda_{name}_bound.raw.json.gz"
        docs.append(json.loads(json.dumps(replay(str(recording), str(FIXTURES)).to_json())))
    for doc in docs:
        typed = Document.from_json(doc)
        assert typed.to_json() == doc
        assert typed.passes and typed.ranking is not None and typed.ranking.lines
        first = typed.ranking.lines[0]
        assert first.line == doc["ranking"]["lines"][0]["line"] and first.columns
    gpu = Document.from_json(docs[1])
    assert gpu.verdict is not None and gpu.verdict.bound == "gpu" and gpu.verdict.pass_ == "cuda"


@pytest.mark.parametrize(
    ("change", "where"),
    [
        (lambda d: d["passes"][0].update(status=3), "Document.passes[0].status is not a str"),
        (lambda d: d["passes"][0].update(surprise=1), "Document.passes[0] has an unknown key 'surprise'"),
        (lambda d: d.pop("script"), "Document.script is missing"),
        (lambda d: d["ranking"]["lines"][0].update(line="7"), "Document.ranking.lines[0].line is not a int"),
        (lambda d: d.update(passes={}), "Document.passes is not a list"),
        (lambda d: d["passes"][1]["functions"][0].update(ncalls=True), "functions[0].ncalls is not a int"),
    ],
)
def test_what_does_not_fit_is_refused_with_its_path(change, where) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads((FIXTURES / "train-cpu.json").read_text())
    change(doc)
    with pytest.raises(ModelError, match=re.escape(where)):
        Document.from_json(doc)


def test_the_schema_document_names_every_field() -> None:
    text = (ROOT / "docs" / "result-schema.md").read_text()
    named = set(re.findall(r"[A-Za-z_][\w-]*", " ".join(re.findall(r"`([^`]*)`", text))))
    missing = {
        f"{cls}.{key}" for cls, keys in model.field_names().items() for key in keys if key not in named
    }
    assert missing == set(), sorted(missing)
