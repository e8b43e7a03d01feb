"""Files from someone else stay data: raw recordings (``replay``) and result documents are
read with size and depth limits, fail with one clear line, never touch or show files
outside the chosen root, and never run, import or write anything they name.

Fuzzed with hypothesis: any bytes, any JSON, and well-formed recordings whose content is
arbitrary."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bottleneck_lsp.analysis import ranking
from bottleneck_lsp.analysis.result import ResultError, load, validate
from bottleneck_lsp.formats import report
from bottleneck_lsp.job.replay import RecordingError, replay
from bottleneck_lsp.runner import recording
from bottleneck_lsp.schema.model import Document

CLI = os.path.join(os.path.dirname(sys.executable), "bottleneck-lsp")
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=25,
)
names = st.sampled_from(
    ["a.py", "/rec/a.py", "/rec/../../etc/hostname", "/etc/hostname", "x", "", "/rec/pkg/b.py"]
)
frames = st.fixed_dictionaries(
    {"file_name": names, "line_number": st.integers(-5, 50), "function_name": st.text(max_size=8)}
)
nodes = st.recursive(
    st.fixed_dictionaries(
        {
            "tag": st.sampled_from(["PyCall", "PyCCall", "TorchOp", "Kineto", "Other", 7]),
            "name": st.sampled_from(["aten::mm", "cudaDeviceSynchronize", "a.py(1): f", "", "x"]),
            "start_time_ns": st.integers(-10, 10**6),
            "end_time_ns": st.integers(-10, 10**6),
            "duration_time_ns": st.integers(-10, 10**6) | st.text(max_size=3),
            "correlation_id": st.integers(0, 5),
            "start_tid": st.integers(0, 3),
            "extra_fields": st.fixed_dictionaries(
                {"caller": frames, "callsite": frames, "sequence_number": st.integers(-2, 5) | st.none()}
            )
            | json_values,
        }
    ),
    lambda inner: st.fixed_dictionaries({"tag": st.just("TorchOp"), "name": st.just("aten::add")}).flatmap(
        lambda base: st.lists(inner, max_size=3).map(lambda kids: {**base, "children": kids})
    ),
    max_leaves=12,
)
events = st.lists(
    st.fixed_dictionaries(
        {
            "name": st.text(max_size=10),
            "device_type": st.sampled_from(["CUDA", "CPU", "", "DeviceType.CUDA"]),
            "start_ns": st.integers(-10, 10**6),
            "duration_ns": st.integers(-10, 10**6),
            "linked_correlation_id": st.integers(0, 5),
            "device_index": st.integers(0, 2) | st.text(max_size=2),
        }
    ),
    max_size=6,
)
recordings = st.fixed_dictionaries(
    {
        "format": st.sampled_from([f"{recording.FORMAT}/2", f"{recording.FORMAT}/1"]),
        "pass": st.sampled_from(["cpu", "cuda", "sample", None, "other"]),
        "roots": st.sampled_from([["/rec"], [], "nope", [5], ["/"]]),
        "script": st.sampled_from(["/rec/a.py", "../x.py", "/etc/passwd", 3, ""]),
        "files": st.dictionaries(names, names | st.none(), max_size=5) | json_values,
        "script_wall_ns": st.integers(-5, 10**7) | st.none(),
        "marker_site": st.sampled_from([None, ["/rec/a.py", 3], [1, 2], "x"]),
        "recorded_on": json_values,
        "tree": st.lists(nodes, max_size=4),
        "events": events,
    }
)


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    (root / "a.py").write_text("import torch\nx = 1\ny = 2\n")
    return root


def _paths_in(doc: Document) -> set[str]:
    found = {doc.script}
    for part in doc.passes:
        found |= {line.file for line in part.lines}
    found |= {line.file for line in doc.ranking.lines} if doc.ranking is not None else set()
    return found


@FUZZ
@given(data=st.binary(max_size=300), compress=st.booleans())
def test_any_bytes_are_a_recording_or_one_clear_error(tmp_path: Path, data: bytes, compress: bool) -> None:
    path = tmp_path / "r.raw.json"
    path.write_bytes(gzip.compress(data) if compress else data)
    try:
        recording.read(str(path))
    except RecordingError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)


results = json_values | st.fixed_dictionaries(
    {
        "schema": st.just("bottleneck-lsp.result"),
        "version": st.just(2),
        "tool": st.just({}),
        "script": st.text(max_size=5),
        "args": st.just([]),
        "cwd": st.just("/"),
        "roots": st.just([]),
        "python": st.just("python"),
        "status": st.just("ok"),
        "passes": st.lists(
            st.fixed_dictionaries({"status": st.sampled_from(["ok", "bad"]), "lines": json_values})
            | json_values,
            max_size=3,
        ),
    }
)


@FUZZ
@given(content=results)
def test_any_json_is_a_result_or_one_clear_error(tmp_path: Path, content: Any) -> None:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(content))
    try:
        doc = load(path)
    except ResultError as exc:
        assert "\n" not in str(exc)
    else:
        assert validate(doc) == []


@FUZZ
@given(doc=recordings)
def test_any_recording_replays_inside_its_root_and_writes_nothing(
    tmp_path: Path, doc: dict[str, Any]
) -> None:
    root = _root(tmp_path)
    before = sorted(os.listdir(root))
    path = tmp_path / "r.raw.json"
    path.write_text(json.dumps(doc))
    try:
        result = replay(str(path), str(root))
    except RecordingError as exc:
        assert "\n" not in str(exc)
        return
    assert sorted(os.listdir(root)) == before  # nothing written where the files are
    for found in _paths_in(result):
        assert found == str(root) or found.startswith(str(root) + os.sep), found
    text = report.render(result, cwd=str(root))
    hostname = Path("/etc/hostname").read_text().strip() if Path("/etc/hostname").exists() else ""
    if len(hostname) > 3:  # /etc/hostname's text is never shown, whatever the recording says
        assert hostname not in text or hostname in json.dumps(doc)
    ranking.hotspots(result)


def test_paths_that_climb_out_of_the_root_are_not_followed(tmp_path: Path) -> None:
    """A recording naming files outside the chosen root (absolute, or with ``..``) gets
    their costs left unattributed: never a line, never their text in the report."""
    root = _root(tmp_path)
    secret = tmp_path / "secret.py"
    secret.write_text("TOP SECRET LINE\n")
    evil = root / "evil.py"  # a user file it names: read as text at most, never run
    evil.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")

    def op(file_name: str, start: int) -> dict[str, Any]:
        return {
            "tag": "PyCCall",
            "name": "x",
            "start_time_ns": start,
            "end_time_ns": start + 100,
            "duration_time_ns": 100,
            "start_tid": 1,
            "extra_fields": {"caller": {"file_name": file_name, "line_number": 1, "function_name": "f"}},
            "children": [
                {
                    "tag": "TorchOp",
                    "name": "aten::mm",
                    "start_time_ns": start,
                    "end_time_ns": start + 100,
                    "duration_time_ns": 100,
                    "start_tid": 1,
                    "extra_fields": {"sequence_number": -1},
                }
            ],
        }

    climbing = "/rec/../" + str(secret).lstrip("/")
    doc = {
        "format": f"{recording.FORMAT}/2",
        "pass": "cpu",
        "roots": ["/rec"],
        "script": "/rec/../../evil.py",
        "files": {climbing: climbing, str(secret): str(secret), "/rec/evil.py": "/rec/evil.py"},
        "tree": [op(climbing, 0), op(str(secret), 200), op("/rec/evil.py", 400)],
        "events": [],
    }
    path = tmp_path / "r.raw.json"
    path.write_text(json.dumps(doc))
    result = replay(str(path), str(root))
    cpu = result.passes[0]
    assert [line.file for line in cpu.lines] == [str(evil)]
    assert cpu.unattributed is not None and cpu.unattributed.count == 2
    assert result.script == str(root / "evil.py")
    text = report.render(result, cwd=str(root))
    assert "TOP SECRET" not in text and str(secret) not in text
    assert not (tmp_path / "ran").exists()


def test_limits_give_one_line_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def chain(depth: int) -> str:
        node = '{"tag": "TorchOp", "name": "aten::add", "children": ['
        return node * depth + "]}" * depth

    path = tmp_path / "deep.raw.json"
    monkeypatch.setattr(recording, "MAX_DEPTH", 20)
    path.write_text(f'{{"format": "{recording.FORMAT}/2", "events": [], "tree": [{chain(25)}]}}')
    with pytest.raises(RecordingError, match="nested deeper than 20 levels"):
        recording.read(str(path))
    path.write_text(f'{{"format": "{recording.FORMAT}/2", "events": [], "tree": [{chain(5000)}]}}')
    with pytest.raises(RecordingError, match="is not JSON: maximum recursion depth"):
        recording.read(str(path))
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ResultError, match="is not JSON"):
        load(nested)
    monkeypatch.setattr(recording, "MAX_BYTES", 1000)
    path.write_bytes(gzip.compress(b" " * 5000))  # a (tiny) gzip bomb
    with pytest.raises(RecordingError, match="larger than"):
        recording.read(str(path))


@pytest.mark.parametrize(
    "content",
    [b"", b"\x1f\x8b\x08garbage", b"{}", b'{"format": "bottleneck-raw-recording/9"}', b"[1, 2"],
)
def test_the_cli_says_what_is_wrong_in_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.raw.json.gz"
    path.write_bytes(content)
    proc = subprocess.run([CLI, "replay", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("bottleneck-lsp: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr
