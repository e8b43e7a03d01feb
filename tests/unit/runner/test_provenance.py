"""torch.compile's kernels on the lines they were made from: inductor's records of a real run
(tests/scripts/compiled_forward.py, torch 2.13, the C++ backend; tests/fixtures/inductor/:
the generated wrappers, and each graph's kernel stack traces with the script's path as
``{script}``), read into graphs, charged by the sampler and the op walk."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from bottleneck_lsp.runner.attribution import Attributor
from bottleneck_lsp.runner.device import Activity
from bottleneck_lsp.runner.lineranges import Site
from bottleneck_lsp.runner.paths import FileClassifier
from bottleneck_lsp.runner.provenance import (
    CompiledGraph,
    CompiledGraphs,
    Kernel,
    Place,
    event_key,
    kernel_key,
    moved,
    places_of,
    read_wrapper,
)
from bottleneck_lsp.runner.recording import REPLAY_KINDS, _nodes
from helpers import recorded_op

FIXTURES = Path(__file__).parents[2] / "fixtures" / "inductor"
SCRIPTS = Path(__file__).parents[2] / "scripts"
SCRIPT = str(SCRIPTS / "compiled_forward.py")


def marker(text: str) -> int:
    lines = Path(SCRIPT).read_text().splitlines()
    return next(i for i, line in enumerate(lines, start=1) if text in line)


HEAVY, LIGHT, OUT = marker("# HEAVY"), marker("# LIGHT"), marker("# OUT")


def compiled(tmp_path: Path) -> CompiledGraphs:
    """Both graphs, fed as the trace gives them: output code, provenance, the cache key."""
    graphs = CompiledGraphs(FileClassifier([str(SCRIPTS)]))
    for name in ("forward", "backward"):
        wrapper = tmp_path / f"c{name}.py"
        wrapper.write_text((FIXTURES / f"{name}_wrapper.py.txt").read_text())
        saved = json.loads((FIXTURES / f"{name}_provenance.json").read_text())
        traces = json.dumps(saved["traces"]).replace("{script}", SCRIPT)
        graphs.record({"inductor_output_code": {"filename": str(wrapper), "file_path": str(wrapper)}}, None)
        graphs.record({"artifact": {"name": "inductor_provenance_tracking_node_mappings"}}, "{}")
        graphs.record({"artifact": {"name": "inductor_provenance_tracking_kernel_stack_traces"}}, traces)
        graphs.record({"artifact": {"name": "fx_graph_cache_hit"}}, json.dumps({"key": saved["key"]}))
    return graphs


def test_names_of_kernels_and_their_events() -> None:
    assert kernel_key("extern_kernels.addmm") == "aten::addmm"
    assert kernel_key("aten.convolution.default") == "aten::convolution"
    assert kernel_key("torch.ops.aten._scaled_mm.default") == "aten::_scaled_mm"
    assert kernel_key("cpp_fused_relu_0") == "cpp_fused_relu_0"
    assert event_key("graph_0_cpp_fused_relu_0") == "cpp_fused_relu_0"
    assert event_key("aten::addmm") == "aten::addmm"


def test_a_wrapper_maps_its_kernel_calls_to_their_handles() -> None:
    calls, backward = read_wrapper(str(FIXTURES / "forward_wrapper.py.txt"))
    lines = (FIXTURES / "forward_wrapper.py.txt").read_text().splitlines()
    assert not backward and len(calls) == 19
    for line, handle in calls.items():
        above = lines[line - 2]
        assert above.strip().endswith(f":{handle}") and "[Provenance debug handles]" in above
        assert "(" in lines[line - 1]  # the kernel's call itself
    assert read_wrapper(str(FIXTURES / "backward_wrapper.py.txt"))[1]  # its inputs hold tangents
    assert read_wrapper("/nonexistent/wrapper.py") == ({}, False)


def test_graphs_from_the_trace_name_the_lines_of_their_kernels(tmp_path: Path) -> None:
    graphs = compiled(tmp_path)
    assert len(graphs.by_key) == 2
    forward = graphs.of_range(
        f"## Call CompiledFxGraph {json.loads((FIXTURES / 'forward_provenance.json').read_text())['key']} ##"
    )
    assert forward is not None and not forward.backward
    lines = {p.line for k in forward.kernels for p in k.places}
    assert lines == {LIGHT, HEAVY, OUT}, lines
    fused = [k for k in forward.kernels if len(k.places) > 1]
    assert fused and all({p.line for p in k.places} == {LIGHT, HEAVY} for k in fused)
    assert all(p.file == SCRIPT for k in forward.kernels for p in k.places)
    # the sampler's look at a call line of the wrapper is that kernel's
    assert {k.name for k in forward.at_line.values()} == {k.name for k in forward.kernels}
    assert graphs.of_range("## Call CompiledFxGraph unknown ##") is None
    assert graphs.of_range("aten::mm") is None


def test_a_fused_kernel_takes_turns_by_its_ops() -> None:
    kernel = Kernel("cpp_fused_x_1", 4, [Place("a.py", 3, "f", 3), Place("a.py", 1, "f", 1)])
    picked = Counter(kernel.pick().line for _ in range(400))
    assert picked == {3: 300, 1: 100}


def graph_call(graphs: CompiledGraphs, name: str) -> tuple[CompiledGraph, dict[str, Any]]:
    """A graph's call as the profiler records it: its range (from 500 ns) around one event per
    kernel, 100 ns each, in the wrapper's order (a C++ kernel's own event, an extern kernel's
    aten op)."""
    key = json.loads((FIXTURES / f"{name}_provenance.json").read_text())["key"]
    graph = graphs.by_key[key]
    events = []
    at = 1000
    for kernel in graph.kernels:
        event = kernel_key(kernel.name)
        events.append(recorded_op(event if event.startswith("aten::") else f"graph_0_{event}", at, at + 100))
        at += 200
    return graph, recorded_op(f"## Call CompiledFxGraph {key} ##", 500, at, *events)


def test_the_op_walk_charges_each_kernel_to_its_lines(tmp_path: Path) -> None:
    """A forward graph's call as the profiler records it: each kernel event under the
    graph's range, in the wrapper's order, goes to its line; the fused one is split by ops."""
    graphs = compiled(tmp_path)
    forward, call = graph_call(graphs, "forward")
    walk = Attributor(FileClassifier([str(SCRIPTS)]), kinds=REPLAY_KINDS, compiled=graphs)
    walk.consume(_nodes([call]))
    by_line = {s.line: s for s in walk.lines.values() if s.self_ns}
    assert set(by_line) == {LIGHT, HEAVY, OUT}, by_line
    assert sum(s.self_ns for s in by_line.values()) == 100 * len(forward.kernels)
    for kernel in forward.kernels:
        if len(kernel.places) > 1:  # split by ops: the first line keeps the rounding's rest
            event = f"graph_0_{kernel.name}"
            first, *rest = kernel.places
            parts = {p.line: 100 * p.ops // kernel.ops for p in rest}
            parts[first.line] = 100 - sum(parts.values())
            for line, part in parts.items():
                assert by_line[line].ops[event][0] == part
                assert by_line[line].compiled[event] == tuple((SCRIPT, p.line, p.ops) for p in kernel.places)
    assert not walk.unattributed.self_ns


def test_backward_kernels_stay_on_the_backward_line_linked_to_their_forward_lines(tmp_path: Path) -> None:
    """The backward graph's call inside ``.backward()``'s range (the line marker's, as the one
    run records it): its kernels are that line's ops, linked to the forward lines they were
    made from, and taken off the link to the line that called the compiled function."""
    graphs = compiled(tmp_path)
    backward, call = graph_call(graphs, "backward")
    assert backward.backward
    at = call["end_time_ns"]
    engine = recorded_op(
        "autograd::engine::evaluate_function: CompiledFunctionBackward", 0, at + 500, call, seq=7
    )
    backward_line = marker("# BACKWARD")
    walk = Attributor(
        FileClassifier([str(SCRIPTS)]),
        kinds=REPLAY_KINDS,
        ranges={"§1": Site(SCRIPT, backward_line, "<module>", True)},
        compiled=graphs,
    )
    walk.consume(_nodes([recorded_op("§1", 0, at + 1000, engine)]))
    (stats,) = [s for s in walk.lines.values() if s.self_ns]
    assert stats.line == backward_line and stats.backward
    assert {event_key(name) for name in stats.compiled} == {kernel_key(k.name) for k in backward.kernels}
    linked = sum(ns for ns, _ in stats.compiled_links.values())
    assert {line for _, line in stats.compiled_links} <= {LIGHT, HEAVY, OUT}
    assert linked <= 100 * len(backward.kernels) and linked >= 100 * len(backward.kernels) - len(
        backward.kernels
    )
    # the engine's op keeps only what the kernels did not take (its own time)
    assert sum(stats.forward_links.values()) == at + 500 - 100 * len(backward.kernels)


def test_device_work_of_compiled_kernels_follows_their_lines(tmp_path: Path) -> None:
    """On a GPU a kernel's device work is charged through the op that launched it (the
    correlation id): a forward kernel fused from several lines splits it as its CPU time,
    and a backward graph's kernel links it to the forward lines it was made from, not to the
    line that called the compiled function. (The replayed shape of a GPU run: the Triton path
    itself has not run on a GPU yet.)"""
    graphs = compiled(tmp_path)
    forward, call = graph_call(graphs, "forward")
    backward, back_call = graph_call(graphs, "backward")
    activities = []
    for number, event in enumerate([*call["children"], *back_call["children"]], start=1):
        event["correlation_id"] = number
        activities.append(Activity(f"kernel_{number}", True, 0, 1000, number, 0))
    back_call["start_time_ns"], back_call["end_time_ns"] = 10_000, 20_000
    for event in back_call["children"]:
        event["start_time_ns"] += 10_000
        event["end_time_ns"] += 10_000
    engine = recorded_op(
        "autograd::engine::evaluate_function: CompiledFunctionBackward", 9_000, 21_000, back_call, seq=7
    )
    walk = Attributor(
        FileClassifier([str(SCRIPTS)]),
        kinds=REPLAY_KINDS,
        device=True,
        ranges={"§1": Site(SCRIPT, marker("# BACKWARD"), "<module>", True)},
        compiled=graphs,
    )
    walk.consume(_nodes([call, recorded_op("§1", 8_000, 22_000, engine)]))
    walk.add_device_events(activities)
    lines = {s.line: s for s in walk.lines.values()}
    fused = next(k for k in forward.kernels if len(k.places) > 1)
    event = f"graph_0_{fused.name}"
    split = {line: lines[line].ops[event][1] for line in (p.line for p in fused.places)}
    assert split == {p.line: 1000 * p.ops // fused.ops for p in fused.places}, split
    back = lines[marker("# BACKWARD")]
    assert back.device_ns == 1000 * len(backward.kernels) and not back.forward_device_links
    assert {place for place, (_, ns) in back.compiled_links.items() if ns} <= {
        (SCRIPT, line) for line in (LIGHT, HEAVY, OUT, marker("# DEF"))
    }
    assert sum(ns for _, ns in back.compiled_links.values()) >= 1000 * len(backward.kernels) - 10


def test_graphs_kept_in_a_raw_recording_read_back_and_nothing_else(tmp_path: Path) -> None:
    graphs = compiled(tmp_path)
    again = CompiledGraphs.from_json(json.loads(json.dumps(graphs.to_json())))
    assert again is not None and set(again.by_key) == set(graphs.by_key)
    for key, graph in graphs.by_key.items():
        assert again.by_key[key].backward == graph.backward
        assert again.by_key[key].kernels == graph.kernels
    # a recording from anywhere: what has not the shape is left out, nothing raises
    odd: list[Any] = [
        None,
        {"key": 3},
        {
            "key": "k",
            "kernels": [
                {"name": "x", "handle": "1"},
                {"name": "y", "handle": 2, "places": [["a.py", -1, "f", 1]]},
            ],
        },
        {
            "key": "k2",
            "kernels": [
                {"name": "z", "handle": 1, "places": [["a.py", 2, "f", 1], "junk", ["a.py", True, "f", 1]]}
            ],
        },
    ]
    kept = CompiledGraphs.from_json(odd)
    assert kept is not None and list(kept.by_key) == ["k2"]
    assert kept.by_key["k2"].kernels[0].places == [Place("a.py", 2, "f", 1)]
    assert CompiledGraphs.from_json({"not": "a list"}) is None
    assert CompiledGraphs.from_json([]) is None


def test_traces_of_a_graph_cached_from_another_copy_find_the_users_file() -> None:
    """inductor's cache key has no file names: a graph compiled from the same code in another
    checkout comes back with that checkout's paths in its traces (CI's clone found this
    machine's cache). The user's file of that name whose line reads the same stands in."""
    saved = json.loads((FIXTURES / "forward_provenance.json").read_text())["traces"]
    elsewhere = json.loads(
        json.dumps(saved).replace("{script}", "/elsewhere/tests/scripts/compiled_forward.py")
    )
    files = FileClassifier([str(SCRIPTS)])
    assert files.resolve(SCRIPT) == SCRIPT  # (the run has seen the script)
    assert (
        moved("/elsewhere/compiled_forward.py", HEAVY, "  x = 1", {"compiled_forward.py": [SCRIPT]}) is None
    )
    places = [p for traces in elsewhere.values() for p in places_of(traces, files)]
    assert places and {p.file for p in places} == {SCRIPT}
    assert {p.line for p in places} == {LIGHT, HEAVY, OUT}
    # the same name, other code at that line: not the user's
    edited = json.loads(json.dumps(elsewhere).replace("# HEAVY", "# EDITED"))
    lines = {p.line for traces in edited.values() for p in places_of(traces, files)}
    assert HEAVY not in lines and LIGHT in lines
