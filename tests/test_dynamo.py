"""torch.compile on its lines (issue 47, parts 1-2): graph breaks as warnings on the line
where TorchDynamo broke, with torch's reason; recompiles on the line of the call that made
them, with the guard that failed; the recompile limit as a warning; each torch.compile
call's graphs, breaks and recompiles. Read from the real compile's own records (inductor's
C++ backend on this CPU), in the command line's report and the JSON document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import marker_line, profile_cli


def profile(script: str, tmp_path: Path) -> tuple[str, dict[str, Any]]:
    return profile_cli(tmp_path, script)


def test_graph_breaks_and_a_recompile_on_their_lines(tmp_path: Path) -> None:
    text, doc = profile("compile_breaks.py", tmp_path)
    sample = next(p for p in doc["passes"] if p["name"] == "sample")  # type: ignore[union-attr]
    dynamo = sample["dynamo"]
    item, printed = (
        marker_line("compile_breaks.py", "# BREAK item"),
        marker_line("compile_breaks.py", "# BREAK print"),
    )
    call, compiled_at = (
        marker_line("compile_breaks.py", "# CALL"),
        marker_line("compile_breaks.py", "# COMPILE"),
    )
    breaks = {b["line"]: b for b in dynamo["graph_breaks"]}
    assert set(breaks) == {item, printed}, breaks
    assert breaks[item]["reason"].startswith("Unsupported Tensor.item() call")
    assert "print" in breaks[printed]["explanation"]
    assert all(b["function"] == "step" and b["count"] >= 1 for b in breaks.values())
    # the new input size (64 -> 128) compiled step again, from the calling line
    sizes = [r for r in dynamo["recompiles"] if "size mismatch" in r["reason"]]
    assert sizes and all(r["line"] == call and r["function"] == "step" for r in sizes), dynamo["recompiles"]
    assert any("expected 64, actual 128" in r["reason"] for r in sizes)
    (compile_call,) = dynamo["calls"]
    assert (compile_call["line"], compile_call["target"]) == (compiled_at, "step")
    assert (
        compile_call["graph_breaks"] >= 2 and compile_call["recompiles"] >= 1 and compile_call["graphs"] >= 2
    )
    # what the user reads: a warning on each break's line with torch's reason, a note on the call
    assert (
        f"compile_breaks.py:{item}:1: warning: torch.compile: graph break of step here" in text
        and "Unsupported Tensor.item() call with capture_scalar_outputs=False" in text
    )
    assert f"compile_breaks.py:{printed}:1: warning: torch.compile: graph break of step here" in text
    assert f"compile_breaks.py:{call}:1: note: torch.compile: step compiled again" in text
    assert f"compile_breaks.py:{compiled_at}  torch.compile of step: " in text


def test_the_recompile_limit_is_a_warning_on_the_call(tmp_path: Path) -> None:
    text, doc = profile("compile_limit.py", tmp_path)
    sample = next(p for p in doc["passes"] if p["name"] == "sample")  # type: ignore[union-attr]
    call = marker_line("compile_limit.py", "# CALL")
    limits = [r for r in sample["dynamo"]["recompiles"] if r["limit"]]
    assert len(limits) == 1 and limits[0]["line"] == call, sample["dynamo"]
    assert (
        f"compile_limit.py:{call}:1: warning: torch.compile: scaled hit the recompile limit here; torch runs "
        "it without compiling from then on" in text
    )
    assert "hit the recompile limit" in text.split("torch.compile of scaled: ")[1].splitlines()[0]


def test_a_compile_the_windows_made_torch_do_again_is_not_the_lines_time(tmp_path: Path) -> None:
    """The function compiled in the first window (the line marker's mode on torch's mode
    stack) is compiled again at its first call outside one, and that version's backward at
    its first .backward(): the profiler's doing. Their time is set aside (the sampler charges
    no line meanwhile): the loop's line shows no compile time, the first call's line its
    compile, and the compile note counts the script's compiles and says what it left out."""
    text, doc = profile("compiled_across_windows.py", tmp_path)
    sample = next(p for p in doc["passes"] if p["name"] == "sample")  # type: ignore[union-attr]
    assert sample["dynamo"].get("profiler_recompiles", 0) >= 1, sample["dynamo"]
    first, loop = (
        marker_line("compiled_across_windows.py", "# FIRST"),
        marker_line("compiled_across_windows.py", "# LOOP"),
    )
    compiling = {ln["line"]: ln.get("compiling_s", 0.0) for ln in sample["samples"]["lines"]}
    assert compiling.get(first, 0.0) > 0.05, compiling
    assert compiling.get(loop, 0.0) < 0.05, compiling
    (note,) = [n for n in sample["notes"] if n.startswith("torch.compile compiled")]
    assert note.startswith("torch.compile compiled 1 time for "), note
    assert "and 1 backward graph for " in note, note
    assert "(left out: 2 more compiles, " in note and "recording windows made torch do" in note, note
    # what the user reads: the first call's line says it compiled, the loop's line does not
    said = {ln.split(":")[1]: ln for ln in text.splitlines() if ln.startswith("compiled_across_windows.py:")}
    assert "while torch.compile compiled" in said[str(first)], said
    assert "torch.compile compiled" not in said[str(loop)], said
