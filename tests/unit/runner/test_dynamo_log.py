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
