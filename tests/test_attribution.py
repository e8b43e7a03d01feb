"""The top hotspot is the planted line, with real torch, for each way of calling torch."""

from __future__ import annotations

from pathlib import Path

import pytest

from bottleneck_lsp.analysis.result import validate
from bottleneck_lsp.formats import report
from bottleneck_lsp.runner.attribution import Attributor
from bottleneck_lsp.runner.paths import FileClassifier
from bottleneck_lsp.schema.model import Document
from helpers import SCRIPTS, marker_line, part_of, run_job


def top_cpu_line(doc: dict) -> dict:
    part = part_of(doc, "cpu")
    assert part is not None and part["status"] == "ok", part
    assert part["lines"], "no line was attributed"
    return part["lines"][0]


@pytest.mark.parametrize(
    "script",
    ["fn_call.py", "tensor_method.py", "module_call.py", "operator_at.py"],
)
def test_top_line_is_the_planted_line(script: str) -> None:
    doc = run_job(script, passes=("cpu",))
    assert validate(doc) == []
    top = top_cpu_line(doc)
    assert top["file"] == str(SCRIPTS / script)
    assert top["line"] == marker_line(script)
    assert top["exact"] is True
    assert top["cpu_share"] > 0.5


def test_operator_line_needs_the_line_marker() -> None:
    """Without the marker, `c @ b` can only be placed on its function, and says so."""
    doc = run_job("operator_at.py", passes=("cpu",), exact_lines=False)
    top = top_cpu_line(doc)
    assert top["exact"] is False
    assert top["function"] == "work"
    assert top["line"] == 4  # the def line, flagged inexact rather than misattributed


def test_hot_line_in_a_helper_module() -> None:
    doc = run_job("uses_helper.py", passes=("cpu",))
    top = top_cpu_line(doc)
    assert top["file"] == str(SCRIPTS / "helper_mod.py")
    assert top["line"] == marker_line("helper_mod.py")


def test_backward_work_is_on_the_backward_line_and_linked_to_its_forward_line() -> None:
    doc = run_job("backward.py", passes=("cpu",))
    top = top_cpu_line(doc)
    assert top["line"] == marker_line("backward.py")
    assert top["backward"] is True
    forward = marker_line("backward.py", "# FORWARD")
    assert top["forward_lines"][0]["line"] == forward
    ops = {op["name"] for op in top["ops"]}
    assert any("Backward" in name or name.startswith("aten::") for name in ops)


def test_backward_is_linked_to_the_lines_that_made_its_nodes_not_to_ops_sharing_their_number() -> None:
    """Every op records the autograd sequence number the next node will take, so ops that
    make no node (a product of plain tensors, work under no_grad, ``.item()``) carry the
    number of the node made after them. The backward of that node belongs to the op that
    made it: the last one carrying the number (the first one named the line before it,
    even the previous iteration's last line)."""
    name = "backward_after_item.py"
    doc = run_job(name, passes=("cpu",))
    part = part_of(doc, "cpu")
    assert part is not None and part["status"] == "ok", part
    hot = next(x for x in part["lines"] if x["line"] == marker_line(name))
    assert hot["backward"] is True
    linked = {f["line"] for f in hot["forward_lines"]}
    assert linked == {marker_line(name, "# FORWARD"), marker_line(name, "# LOSS")}, hot["forward_lines"]
    text = report.render(Document.from_json(doc))
    where = f"{name}:{marker_line(name)}:"
    said = next(x for x in text.splitlines() if where in x and ("warning:" in x or "note:" in x))
    assert "; backward of line " in said
    assert said.split("; backward of line ")[1].split(";")[0] in (
        f"{marker_line(name, '# FORWARD')}, {marker_line(name, '# LOSS')}",
        f"{marker_line(name, '# LOSS')}, {marker_line(name, '# FORWARD')}",
    )


def test_a_forward_call_that_makes_several_nodes_gets_all_their_backward_time() -> None:
    """``F.linear`` on a 3-D input that needs grad makes four nodes (a view, ``t``, ``addmm``,
    a view) numbered on from the number the call carried; the ``addmm``'s backward, the
    most expensive, belongs to that call's line."""
    name = "backward_composite.py"
    doc = run_job(name, passes=("cpu",))
    part = part_of(doc, "cpu")
    assert part is not None and part["status"] == "ok", part
    hot = next(x for x in part["lines"] if x["line"] == marker_line(name))
    assert hot["forward_lines"][0]["line"] == marker_line(name, "# FORWARD"), hot["forward_lines"]
    ops = {op["name"] for op in hot["ops"]}
    assert "aten::mm" in ops  # the addmm's backward ran here


def test_backward_is_linked_within_its_thread_while_another_thread_runs_ops() -> None:
    """The cpu pass records every thread's ops, and torch numbers autograd nodes per thread:
    a thread's forward-only ops carry the numbers the main thread's nodes take. The
    ``.backward()`` line is the backward of its own thread's forward line, not the other
    thread's; and the other thread's ops, running meanwhile, stay on their own line."""
    name = "backward_side_thread.py"
    doc = run_job(name, passes=("cpu",))
    part = part_of(doc, "cpu")
    assert part is not None and part["status"] == "ok", part
    hot = next(x for x in part["lines"] if x["line"] == marker_line(name))
    assert [f["line"] for f in hot["forward_lines"]] == [marker_line(name, "# FORWARD")], hot["forward_lines"]
    side = next(x for x in part["lines"] if x["line"] == marker_line(name, "# SIDE"))
    assert {op["name"] for op in side["ops"]} >= {"aten::mm", "aten::sum"}
    assert not {op["name"] for op in hot["ops"]} & {"aten::sum"}  # none of the thread's ops
    text = report.render(Document.from_json(doc))
    said = next(x for x in text.splitlines() if f"{name}:{marker_line(name)}:" in x and "backward of" in x)
    assert said.endswith(f"; backward of line {marker_line(name, '# FORWARD')}"), said


def test_cprofile_pass_finds_the_user_function_and_call_line() -> None:
    doc = run_job("uses_helper.py", passes=("cprofile",))
    part = part_of(doc, "cprofile")
    assert part is not None and part["status"] == "ok"
    funcs = {(f["file"], f["function"]): f for f in part["functions"] if f["user"]}
    expensive = funcs[(str(SCRIPTS / "helper_mod.py"), "expensive")]
    assert expensive["ncalls"] == 10 and expensive["line"] == 4
    sites = [s for s in part["call_sites"] if s["callee"] == "expensive"]
    assert sites and sites[0]["line"] == 6 and sites[0]["exact"]


def test_startup_is_kept_apart_from_the_script() -> None:
    doc = run_job("fn_call.py", passes=("cpu",))
    part = doc["passes"][0]
    assert part["startup"]["import_torch_s"] > 0  # the fork server's, paid once
    assert part["warm"] is True
    # import torch happens before profiling: no line of the script holds it
    assert all(line["line"] != 1 for line in part["lines"])


def _line_table(attributor: Attributor) -> dict[tuple[str, int, bool], tuple[int, int, dict[str, list[int]]]]:
    return {key: (s.self_ns, s.count, s.ops) for key, s in attributor.lines.items()}


def test_the_walks_shortcut_through_the_line_marker_changes_no_figure() -> None:
    """The walk skips reading the frames of the marker's own C calls (``Attributor(marker=)``):
    on one recorded profile, with and without the shortcut, every line's and op's figures
    are the same."""
    import torch

    from bottleneck_lsp.runner.linemarker import make_line_marker

    marker = make_line_marker(torch, 0, lambda: None)
    model = torch.nn.Linear(32, 32)
    x = torch.randn(16, 32)
    with torch.autograd.profiler.profile(with_stack=True) as prof:
        with marker:
            for _ in range(5):
                h = torch.tanh(model(x))
                loss = (h @ h.T).sum() * 2
                loss.backward()
    roots = prof.kineto_results.experimental_event_tree()
    files = FileClassifier([str(Path(__file__).parent)])
    code = type(marker).__torch_function__.__code__
    fast = Attributor(files, (code.co_filename, code.co_firstlineno))
    fast.consume(roots)
    plain = Attributor(files)
    plain.consume(roots)
    assert any(is_marker for _, is_marker in fast._callees.values()), "the marker was not recognised"
    assert len(fast.lines) >= 3
    assert _line_table(fast) == _line_table(plain)
    assert {n: (o.count, o.self_ns) for n, o in fast.ops.items()} == {
        n: (o.count, o.self_ns) for n, o in plain.ops.items()
    }
    assert (fast.event_count, fast.total_self_ns) == (plain.event_count, plain.total_self_ns)
    windows = [[(a, b, s.file, s.line) for a, b, s in w._backward_windows] for w in (fast, plain)]
    assert windows[0] and windows[0] == windows[1]
