"""Two versions of a file aligned as a text diff aligns them (analysis/line_pairing.py)."""

from __future__ import annotations

from bottleneck_lsp.analysis.line_pairing import Pair, align
from bottleneck_lsp.job.sources import line_hash

OLD = [
    "import torch",
    "x = torch.randn(400, 400)",
    "for _ in range(10):",
    "    a = x @ x",
    "    b = torch.linalg.inv(x + 400 * torch.eye(400))",
    "print(b.sum())",
]


def hashes(lines: list[str]) -> list[str]:
    return [line_hash(text) for text in lines]


def test_a_line_edited_in_place_is_paired_with_its_old_self_as_changed() -> None:
    new = [*OLD]
    new[4] = "    b = (x + 400 * torch.eye(400)) / 400.0"
    pairs = align(hashes(OLD), hashes(new), {}, {})
    assert pairs[5] == Pair(5, changed=True)
    assert pairs[4] == Pair(4, changed=False) and pairs[6] == Pair(6, changed=False)


def test_lines_inserted_above_move_the_others_and_an_uneven_edit_pairs_by_likeness() -> None:
    new = [*OLD[:4], "    c = x.sum()", "    d = c + 1", "    b = (x + 400 * torch.eye(400)) / 400.0", OLD[5]]
    # the ranked lines' texts, as the runs recorded them: the edited line and one inserted line
    old_text = {5: OLD[4].strip()}
    new_text = {5: "c = x.sum()", 7: new[6].strip()}
    pairs = align(hashes(OLD), hashes(new), old_text, new_text)
    assert pairs[5] == Pair(7, changed=True)  # not paired with the inserted line above it
    assert pairs[6] == Pair(8, changed=False)  # moved down by two
    assert 5 not in {p.new_line for p in pairs.values()}  # the inserted line is new


def test_a_deleted_line_has_no_counterpart_and_unlike_texts_stay_apart() -> None:
    new = [OLD[0], *OLD[2:]]  # the randn line deleted
    pairs = align(hashes(OLD), hashes(new), {}, {})
    assert 2 not in pairs and pairs[3] == Pair(2, changed=False)
    # two lines replaced by one unrelated line: nothing alike enough to pair
    other = [*OLD[:3], "    y = torch.zeros(3)", OLD[5]]
    pairs = align(
        hashes(OLD), hashes(other), {4: OLD[3].strip(), 5: OLD[4].strip()}, {4: "y = torch.zeros(3)"}
    )
    assert 4 not in pairs and 5 not in pairs and pairs[6] == Pair(5, changed=False)


def test_indentation_alone_is_no_change() -> None:
    new = [*OLD]
    new[3] = "        a = x @ x"
    assert align(hashes(OLD), hashes(new), {}, {})[4] == Pair(4, changed=False)
