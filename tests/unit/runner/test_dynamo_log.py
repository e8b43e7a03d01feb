"""torch.compile's records read into words: the texts are TorchDynamo's own, as torch 2.13
wrote them in a real run (tests/scripts/compile_breaks.py; tests/fixtures/dynamo/)."""

from __future__ import annotations

from pathlib import Path

from bottleneck_lsp.runner.dynamo_log import base_name, break_reason, guard_words

ITEM_BREAK = (Path(__file__).parents[2] / "fixtures" / "dynamo" / "item_break.txt").read_text()


def test_a_break_reads_as_torch_words_it_hints_once() -> None:
    reason, explanation, hints = break_reason(ITEM_BREAK)
    assert reason == "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert (
        explanation
        == "Dynamo does not support tracing `Tensor.item()` with config.capture_scalar_outputs=False."
    )
    assert len(hints) == 1 and hints[0].startswith("Set `torch._dynamo.config.capture_scalar_outputs = True`")
    older = (
        "Graph break in user code at /w/a.py:3\nGraph Break Reason: call_function BuiltinVariable(print)\n"
    )
    assert break_reason(older) == ("call_function BuiltinVariable(print)", "", [])


def test_guards_in_words() -> None:
    assert guard_words("tensor 'x' size mismatch at index 0. expected 64, actual 128") == (
        "tensor 'x' size mismatch at index 0. expected 64, actual 128"
    )
    specialized = (
        "___stack0 == -1.0643348693847656                          # if y.sum().item() > 0:  # BREAK item  "
        "# mp/tc2/breaks.py:6 in torch_dynamo_resume_in_step_at_6"
    )
    assert guard_words(specialized) == (
        "a value the compiled code was specialized on changed (`if y.sum().item() > 0:  # BREAK item`; "
        "guard `___stack0 == -1.0643348693847656`)"
    )


def test_a_resume_function_belongs_to_the_function_it_resumes() -> None:
    assert base_name("torch_dynamo_resume_in_step_at_22") == "step"
    assert base_name("torch_dynamo_resume_in_my_fn_at_3") == "my_fn"
    assert base_name("forward") == "forward"


def test_a_recompile_is_ours_only_where_every_version_failed_on_the_mode_stack() -> None:
    """The one run's windows put the line marker's mode on torch's mode stack: a version
    compiled under it fails ``___check_torch_function_mode_stack()`` outside it. Where every
    version tried failed so, the recompile is the profiler's; where another guard failed too
    (a new input size), it is the script's, said by that guard."""
    import json
    import sys

    from bottleneck_lsp.runner.dynamo_log import DynamoLog
    from bottleneck_lsp.runner.paths import FileClassifier

    log = DynamoLog(sys.modules[__name__], FileClassifier([str(Path(__file__).parent)]))
    log.record(
        {"dynamo_start": {"stack": [{"name": "step", "line": 3}]}, "frame_id": 0, "frame_compile_id": 0}, None
    )
    mode = "0/0: ___check_torch_function_mode_stack()"
    artifact = {"artifact": {"name": "recompile_reasons", "encoding": "json"}, "frame_id": 0}
    log.record({**artifact, "frame_compile_id": 1}, json.dumps([mode]))
    size = "0/0: tensor 'x' size mismatch at index 0. expected 64, actual 128"
    log.record(
        {**artifact, "frame_compile_id": 2}, json.dumps(["0/1: ___check_torch_function_mode_stack()", size])
    )
    made = log.document()
    assert made is not None and made["profiler_recompiles"] == 1
    (recompile,) = made["recompiles"]
    assert recompile["reason"] == "tensor 'x' size mismatch at index 0. expected 64, actual 128"
    assert recompile["function"] == "step" and recompile["file"] == __file__
    # what the profiler's compile recorded is left out with it
    log.record({"compilation_metrics": {"graph_op_count": 3}, "frame_id": 0, "frame_compile_id": 1}, None)
    log.record({"compilation_metrics": {"graph_op_count": 3}, "frame_id": 0, "frame_compile_id": 2}, None)
    assert log.graphs == {"step": 1}
