"""torch's allocator warning about our windows kept out of the script's stderr; every other
byte passes, at once unless it may still become that line."""

from __future__ import annotations

from bottleneck_lsp.processes.unwanted_lines import Unwanted

WARNING = (
    b"[W1206 15:05:53.934906320 CPUAllocator.cpp:245] Memory block of unknown size was allocated "
    b"before the profiling started, profiler results will not include the deallocation event\n"
)


def _collect() -> tuple[Unwanted, list[bytes], list[str]]:
    data: list[bytes] = []
    text: list[str] = []

    def forward(t: str, d: bytes) -> None:
        text.append(t)
        data.append(d)

    return Unwanted(forward), data, text


def test_the_warning_goes_and_the_rest_stays_in_order() -> None:
    unwanted, data, text = _collect()
    unwanted.feed(b"step 0\n" + WARNING + b"step 1\n")
    unwanted.end()
    assert b"".join(data) == b"step 0\nstep 1\n" and "".join(text) == "step 0\nstep 1\n"
    assert unwanted.dropped == 1


def test_a_warning_cut_across_chunks_is_still_dropped() -> None:
    unwanted, data, _ = _collect()
    for cut in (b"[", WARNING[1:30], WARNING[30:], b"after\n"):
        unwanted.feed(cut)
    unwanted.end()
    assert b"".join(data) == b"after\n"


def test_a_partial_line_of_the_script_passes_at_once() -> None:
    unwanted, data, _ = _collect()
    unwanted.feed(b"progress 10%\r")
    assert data == [b"progress 10%\r"]  # not held for a newline
    unwanted.feed(b"[Warn] the script's own, not torch's\n")
    unwanted.feed(b"[W")  # may still be torch's line: held until it is known
    assert b"".join(data) == b"progress 10%\r[Warn] the script's own, not torch's\n"
    unwanted.end()  # the stream ended: what waited passes
    assert b"".join(data).endswith(b"[W")


def test_other_torch_warnings_pass() -> None:
    unwanted, data, _ = _collect()
    other = b"[W1206 15:05:53.934906320 Module.cpp:10] something else\n"
    unwanted.feed(other)
    unwanted.end()
    assert b"".join(data) == other and unwanted.dropped == 0


def test_utf8_cut_by_a_chunk_is_decoded_whole() -> None:
    unwanted, _, text = _collect()
    word = "déjà\n".encode()
    unwanted.feed(word[:2])
    unwanted.feed(word[2:])
    unwanted.end()
    assert "".join(text) == "déjà\n"
