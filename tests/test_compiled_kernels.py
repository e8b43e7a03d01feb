"""torch.compile's kernels on the lines they were made from (issue 47, part 3): a model
compiled by inductor (the C++ backend on this CPU) whose heavy line is inside ``forward``
(tests/scripts/compiled_forward.py). That line is the hotspot, with its kernels named; the
``def forward`` line and the line that calls the model no longer carry the compiled
forward's time; ``.backward()`` keeps its compiled kernels and links them to the forward
lines. In the one run (the default) and with ``--separate-runs``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from helpers import marker_line, part_of, profile_cli, warm_compile_cache

SCRIPT = "compiled_forward.py"
HEAVY, LIGHT, DEF, CALL, BACKWARD = (
    marker_line(SCRIPT, m) for m in ("# HEAVY", "# LIGHT", "# DEF", "# CALL", "# BACKWARD")
)


def profile(tmp_path: Path, *options: str, seconds: str) -> tuple[str, dict[str, Any]]:
    return profile_cli(tmp_path, SCRIPT, seconds, options=options)


def test_the_hot_line_inside_a_compiled_forward_is_the_hotspot(tmp_path: Path) -> None:
    warm_compile_cache(SCRIPT, "0")
    text, doc = profile(tmp_path, seconds="8")
    rows = doc["ranking"]["lines"]
    lines = [r["line"] for r in rows]
    assert HEAVY in lines, rows
    at = lines.index(HEAVY)
    assert set(lines[:at]) <= {BACKWARD}, [(r["line"], r["text"]) for r in rows[: at + 1]]
    heavy = rows[at]
    kernels = [k["name"] for k in heavy["compiled"]]
    assert any(k.startswith("graph_0_cpp_fused_") for k in kernels) and "aten::mm" in kernels, kernels
    assert all(m["line"] == HEAVY for m in heavy["compiled"][0]["made_from"][:1])
    # the def line and the calling line: none of the compiled forward's ops
    by_line = {r["line"]: r for r in rows}
    for line in (DEF, CALL):
        ops = [o["name"] for o in by_line.get(line, {}).get("ops", [])]
        assert not any(o.startswith("graph_") or o in ("aten::mm", "aten::addmm") for o in ops), (line, ops)
    if DEF in by_line:
        assert by_line[DEF]["columns"]["wall-time"]["time_s"] < 0.1 * heavy["columns"]["wall-time"]["time_s"]
    call_wall = by_line[CALL]["columns"]["wall-time"]["time_s"]
    call_compile = by_line[CALL]["columns"].get("compile-time", {}).get("time_s", 0.0)
    assert call_wall - call_compile < 0.1 * heavy["columns"]["wall-time"]["time_s"], by_line[CALL]
    # backward: its compiled kernels, linked to the forward lines they differentiate
    backward = by_line[BACKWARD]
    assert backward["backward"] and backward["compiled"], backward
    # (the heavy line works on a detached input: no backward of its own)
    assert LIGHT in {f["line"] for f in backward["forward_lines"][:2]}, backward["forward_lines"]
    # what the user reads: the report's first compiler-style line that is not the backward's
    said = [
        ln for ln in text.splitlines() if re.match(rf"{SCRIPT}:\d+:\d+: ", ln) and f":{BACKWARD}:" not in ln
    ]
    assert said[0].startswith(f"{SCRIPT}:{HEAVY}:"), said[:3]
    assert re.search(r"; compiled by torch\.compile: [^;]*cpp_fused_\w+", said[0]), said[0]
    assert "fused ops of line" not in said[0] or "its time split by ops" in said[0], said[0]


def test_separate_runs_charge_the_kernels_to_their_lines_too_and_replay_them(tmp_path: Path) -> None:
    """The cpu pass in a run of its own (``--separate-runs``): the same lines; its raw
    recording keeps the graphs' kernels and lines, and replays to the same document."""
    warm_compile_cache(SCRIPT, "0")
    raw = tmp_path / "raw"
    _, doc = profile(
        tmp_path, "--separate-runs", "--passes", "sample,cpu", "--save-raw", str(raw), seconds="1"
    )
    cpu = part_of(doc, "cpu")
    assert cpu is not None and cpu["status"] == "ok", cpu
    by_line = {entry["line"]: entry for entry in cpu["lines"]}
    heavy = by_line[HEAVY]
    assert any(k["name"].startswith("graph_0_cpp_fused_") for k in heavy["compiled"]), heavy
    assert DEF not in by_line or not by_line[DEF]["ops"], by_line[DEF]
    assert by_line[HEAVY]["self_cpu_us"] > max(
        (e["self_cpu_us"] for line, e in by_line.items() if line not in (HEAVY, BACKWARD)), default=0.0
    )
    from bottleneck_lsp.job.replay import replay

    (recorded,) = raw.glob("*.cpu.raw.json.gz")
    again = part_of(replay(str(recorded)).to_json(), "cpu")
    assert again is not None
    replayed = {entry["line"]: entry for entry in again["lines"]}
    assert replayed[HEAVY]["compiled"] == heavy["compiled"]
    assert replayed[HEAVY]["self_cpu_us"] == heavy["self_cpu_us"]


def test_a_lazy_backward_compile_is_compile_time_on_the_backward_line(tmp_path: Path) -> None:
    """A cold run compiles the backward at the first ``.backward()`` (AOTAutograd's lazy
    backward), outside TorchDynamo's compile session: that time is the ``.backward()``
    line's compile column, as the forward's is the calling line's, and the note counts it
    (a first run's ``loss.backward()`` read 8.7 s of plain wall time for one step)."""
    script = "cold_backward_compile.py"
    text, doc = profile_cli(tmp_path, script)
    by_line = {r["line"]: r["columns"] for r in doc["ranking"]["lines"]}
    backward, call = by_line[marker_line(script, "# BACKWARD")], by_line[marker_line(script, "# CALL")]
    assert backward["compile-time"]["time_s"] > 0.5 * backward["wall-time"]["time_s"], backward
    assert call["compile-time"]["time_s"] > 0, call
    sample = part_of(doc, "sample")
    assert sample is not None
    note = next(n for n in sample["notes"] if n.startswith("torch.compile compiled"))
    assert re.search(r", and 1 backward graph for [\d.]+ s at the first \.backward\(\)", note), note
    said = next(
        ln for ln in text.splitlines() if ln.startswith(f"{script}:{marker_line(script, '# BACKWARD')}:")
    )
    assert "while torch.compile compiled" in said, said
