"""Every relative link of README.md and docs/*.md leads somewhere: to a file that exists and,
for a ``#anchor``, to a heading of that page, as GitHub makes anchors from headings (lower
case, spaces to '-', punctuation other than '-' and '_' dropped, a repeated one suffixed -1,
-2, ...). Fast: no torch, no process."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^ {0,3}(```|~~~)")
HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)
# [text](target) and ![alt](target), the text on one or more lines; an optional "title"
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto:, vscode:, ...


def prose(text: str) -> str:
    """``text`` without fenced code blocks (their lines left empty, so line numbers hold)."""
    lines = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            lines.append("")
        else:
            lines.append("" if fenced else line)
    return "\n".join(lines)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor the page's headings make."""
    seen: dict[str, int] = {}
    found = set()
    for line in prose(page.read_text()).splitlines():
        heading = HEADING.match(line)
        if heading is None:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(page: Path) -> list[tuple[int, str]]:
    """(line, target) of every link in the page's prose: inline links and images, and
    reference definitions; links in code blocks and code spans are not links."""
    text = prose(page.read_text())
    # a code span's text blanked, its length and line breaks kept
    text = CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = []
    for pattern in (INLINE_LINK, REFERENCE):
        for match in pattern.finditer(text):
            found.append((text.count("\n", 0, match.start()) + 1, match.group(1)))
    return found


def broken(page: Path, root: Path = ROOT) -> list[str]:
    """The page's relative links that lead nowhere, each with its line (the page's path
    relative to ``root``) and why."""
    problems = []
    for line, target in links(page):
        if EXTERNAL.match(target):
            continue
        path, _, anchor = target.partition("#")
        where = page if not path else (page.parent / unquote(path)).resolve()
        if not where.exists():
            problems.append(f"{page.relative_to(root)}:{line}: {target}: no such file")
        elif anchor and where.suffix == ".md" and unquote(anchor) not in anchors(where):
            problems.append(f"{page.relative_to(root)}:{line}: {target}: no heading makes #{anchor}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_relative_link_leads_to_a_file_and_a_heading(page: Path) -> None:
    assert broken(page) == []


def test_the_anchor_rule_and_the_link_finder(tmp_path: Path) -> None:
    """GitHub's rule on this project's kinds of heading, and links found as a reader sees
    them: not in code, titles and multi-line texts allowed, a missing file or heading named."""
    assert slug("Neovim (0.11+)") == "neovim-011"
    assert slug("Before and after: `diff` and the CI gate") == "before-and-after-diff-and-the-ci-gate"
    assert slug("The repository's folders") == "the-repositorys-folders"
    assert slug("Targets (issue 15)") == "targets-issue-15"
    assert slug("snake_case and-dash") == "snake_case-and-dash"
    page = tmp_path / "page.md"
    page.write_text(
        "# Title\n\n## Usage\n\n## Usage\n\n"
        "[ok](#usage) [ok](#usage-1) [ok](other.md#there) [ok](https://example.org/x#y)\n"
        '[a title](other.md "Other") [two\nlines](other.md)\n'
        "`[in a span](missing.md)`\n\n```md\n[in a block](missing.md)\n# Not a heading\n```\n\n"
        "[bad](#not-a-heading) [bad](missing.md) [bad](other.md#nowhere)\n"
    )
    (tmp_path / "other.md").write_text("# There\n")
    assert [target for _, target in links(page)] == [
        "#usage", "#usage-1", "other.md#there", "https://example.org/x#y", "other.md", "other.md",
        "#not-a-heading", "missing.md", "other.md#nowhere",
    ]  # fmt: skip
    assert anchors(page) == {"title", "usage", "usage-1"}
    found = [problem.split(": ", 1)[1] for problem in broken(page, tmp_path)]
    assert found == [
        "#not-a-heading: no heading makes #not-a-heading",
        "missing.md: no such file",
        "other.md#nowhere: no heading makes #nowhere",
    ]
