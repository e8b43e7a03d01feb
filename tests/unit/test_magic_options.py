"""%%bottleneck's options, as on the command line: read off the front of the line, the
rest is the code a ``%bottleneck`` line profiles; a bad one is said in one line."""

from __future__ import annotations

import pytest

pytest.importorskip("IPython")

from bottleneck_lsp.magic import UsageError, parse


def test_options_then_code() -> None:
    thresholds, code = parse("--top 3 --min-share 2% y = f(x, '--top 9')")
    assert (thresholds.top, thresholds.min_share) == (3, 0.02)
    assert code == "y = f(x, '--top 9')"
    thresholds, code = parse("--min-share=0.1")
    assert (thresholds.top, thresholds.min_share, code) == (10, 0.1, "")
    assert parse("")[1] == ""


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("--top 0 x", "%bottleneck: --top 0: not a valid value"),
        ("--top many x", "%bottleneck: --top many: not a valid value"),
        ("--min-share 120% x", "%bottleneck: --min-share 120%: not a valid value"),
        ("--bogus 1 x", "%bottleneck: unknown option --bogus"),
    ],
)
def test_bad_options_are_said(line: str, said: str) -> None:
    with pytest.raises(UsageError, match=said):
        parse(line)
