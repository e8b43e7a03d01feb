"""Each setting is declared once (``bottleneck_lsp.settings``): the language server reads
it from there, a profile request's arguments come from there, and the command line's
options and the VS Code extension's package.json are checked against it here."""

from __future__ import annotations

import argparse
import json
from typing import Any

import pytest

from bottleneck_lsp.cli_args import profile_parser
from bottleneck_lsp.job.spec import JobError, JobSpec, validate
from bottleneck_lsp.lsp.arguments import ProfileArguments, check
from bottleneck_lsp.settings import Settings, declared, kinds, merge, overlay, request_keys
from repository import ROOT

MANIFEST = json.loads((ROOT / "vscode-extension" / "package.json").read_text())
PROPERTIES: dict[str, dict[str, Any]] = MANIFEST["contributes"]["configuration"]["properties"]
# The extension's own settings, which the server never reads; and the server's `python`,
# which the extension sends from its interpreter choice (bottleneck.interpreter, the Python
# extension's, or the one the server runs on).
EXTENSION_ONLY = {"bottleneck.interpreter", "bottleneck.serverSource", "bottleneck.trace.server"}
NOT_IN_MANIFEST = {"python"}
# package.json states "unset" as the JSON value the editor's settings UI can show
UNSET_IN_MANIFEST = {"cwd": "", "passes": [], "duration": 0}
# The command line's defaults that differ from the server's, and why
CLI_DEFAULTS = {"timeout": None}  # a command in a terminal has no timeout; an editor's job must end


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def test_package_json_declares_each_setting_as_the_server_does() -> None:
    defaults = Settings()
    seen = set()
    for name, about in declared().items():
        if name in NOT_IN_MANIFEST:
            continue
        key = f"bottleneck.{about.key}"
        seen.add(key)
        assert key in PROPERTIES, f"package.json lacks {key}"
        entry = PROPERTIES[key]
        schema = {
            k: entry[k] for k in ("type", "items", "minimum", "maximum", "exclusiveMinimum") if k in entry
        }
        if "items" in schema:
            schema["items"] = {k: v for k, v in schema["items"].items() if k in ("type", "enum")}
        assert schema == about.kind.schema(), key
        default = getattr(defaults, name)
        expected = UNSET_IN_MANIFEST[name] if default is None else _json(default)
        assert entry["default"] == expected, key
        assert entry["scope"] == ("resource" if about.request else "window"), key
        assert entry.get("description") or entry.get("markdownDescription"), key
    assert set(PROPERTIES) - seen == EXTENSION_ONLY


def _parsed(*options: str) -> argparse.Namespace:
    return profile_parser("bottleneck-lsp profile").parse_args([*options, "script.py"])


def test_command_line_options_keep_the_declared_defaults_and_bounds() -> None:
    defaults, parsed = Settings(), _parsed()
    flags = {a.option_strings[0]: a for a in profile_parser("x")._actions if a.option_strings}
    for name, about in declared().items():
        if about.flag is None:
            continue
        action = flags[about.flag]
        if about.flag.startswith("--no-"):  # a switch that turns a setting off
            assert getattr(defaults, name) is True and action.default is False, about.flag
            assert getattr(_parsed(about.flag), action.dest) is True
            continue
        expected = CLI_DEFAULTS.get(name, _json(getattr(defaults, name)))
        assert _json(getattr(parsed, action.dest)) == expected, about.flag


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--min-share", "1.5"),
        ("--min-share", "-0.1"),
        ("--min-memory-share", "2"),
        ("--top", "-1"),
        ("--event-budget", "-1"),
        ("--timeout", "0"),
        ("--duration", "-1"),
        ("--passes", "cpu,gpu"),
    ],
)
def test_command_line_refuses_what_the_declaration_refuses(flag: str, value: str) -> None:
    name = next(n for n, a in declared().items() if a.flag == flag)
    with pytest.raises(ValueError):
        declared()[name].kind.convert(json.loads(value) if flag != "--passes" else value.split(","))
    with pytest.raises(SystemExit):
        _parsed(flag, value)


def test_nproc_bounds_are_the_jobs_own() -> None:
    about = declared()["nproc_per_node"]
    assert isinstance(about.kind, kinds.Count) and about.kind.highest is not None
    for outside in (about.kind.lowest - 1, about.kind.highest + 1):
        with pytest.raises(ValueError):
            about.kind.convert(outside)
        with pytest.raises(JobError, match="nproc"):
            validate(JobSpec(script=__file__, nproc_per_node=outside))


def test_every_setting_is_read_by_its_key_and_refuses_a_value_of_another_type() -> None:
    for name, about in declared().items():
        default = getattr(Settings(), name)
        assert merge(Settings(), {about.key: _json(default)}) == Settings(), about.key
        wrong = {"bottleneck": {about.key: {"an": "object"}}}
        problems = merge(Settings(), wrong).problems
        assert problems and problems[0].startswith(f"setting {about.key!r}: expected"), problems
    assert merge(Settings(), {"sharez": 1}).problems == ("unknown setting 'sharez'",)
    assert merge(Settings(), {"interpreter": "/usr/bin/python3"}).python == "/usr/bin/python3"


def test_a_request_gives_the_settings_declared_for_it_and_no_others() -> None:
    keys = request_keys()
    assert set(keys) == {"python", "args", "cwd", "passes", "timeout", "duration"} | {
        "nprocPerNode",
        "torchrunArgs",
        "collectiveSizes",
    }
    raw = {"uri": "file:///s.py", "timeout": 5, "args": ["-x"], "passes": [], "cwd": "", "duration": 0}
    own = check(ProfileArguments, raw)
    assert own == {"uri": "file:///s.py", "settings": {k: v for k, v in raw.items() if k != "uri"}}
    base = Settings(passes=("cpu",), cwd="/there", duration=30.0)
    laid = overlay(base, own["settings"])
    # an empty passes or cwd leaves the setting; 0 seconds is the whole run
    assert (laid.timeout, laid.args, laid.passes, laid.cwd, laid.duration) == (
        5.0,
        ("-x",),
        ("cpu",),
        "/there",
        None,
    )
    with pytest.raises(ValueError, match="'minShare'"):
        check(ProfileArguments, {"uri": "file:///s.py", "minShare": 0.5})  # a window-wide setting
    for key, (_name, about) in keys.items():
        with pytest.raises(ValueError, match=f"'{key}' must be {about.kind.words.removesuffix(' or false')}"):
            check(ProfileArguments, {"uri": "file:///s.py", key: {"an": "object"}})


def test_the_settings_table_of_the_editors_page_names_each_setting() -> None:
    text = (ROOT / "docs" / "editors.md").read_text()
    table = text[text.index("### Settings") :].split("\n\n")[2]
    named = {
        k
        for row in table.splitlines()[2:]
        for k in row.split("|")[1].replace("`", "").replace("/", " ").split()
    }
    keys = {about.key for about in declared().values()}
    assert keys <= named, keys - named
    assert named - keys == {"(or", "interpreter)"}


def test_settings_merge_reports_bad_values_and_keeps_good_ones() -> None:
    s = merge(Settings(), {"bottleneck": {"top": 3, "minShare": 2, "nope": 1, "passes": ["cpu"]}})
    assert s.top == 3 and s.passes == ("cpu",)
    assert s.min_share == Settings().min_share
    assert any("minShare" in p for p in s.problems) and any("nope" in p for p in s.problems)
    assert merge(Settings(), "junk").problems


def test_the_distributed_settings_are_checked_as_the_command_line_checks_them() -> None:
    s = merge(Settings(), {"torchrunArgs": ["--nnodes=2", "--node_rank", "1"], "collectiveSizes": True})
    assert s.torchrun_args == ("--nnodes", "2", "--node-rank", "1") and s.collective_sizes and not s.problems
    bad = merge(s, {"torchrunArgs": ["--run-path", "x.py"], "collectiveSizes": "yes"})
    assert bad.torchrun_args == s.torchrun_args and bad.collective_sizes  # the good values stay
    assert any("'torchrunArgs': torchrun option --run-path is not supported here" in p for p in bad.problems)
    assert any("'collectiveSizes': expected true or false" in p for p in bad.problems), bad.problems


def test_the_duration_setting_takes_seconds_and_0_or_null_for_the_whole_run() -> None:
    s = merge(Settings(), {"duration": 30})
    assert s.duration == 30.0 and not s.problems
    assert merge(s, {"duration": 0}).duration is None and merge(s, {"duration": None}).duration is None
    bad = merge(s, {"duration": -1})
    assert bad.duration == 30.0  # the good value stays
    assert any(
        "'duration': expected seconds (a positive number), or 0 for the whole run" in p for p in bad.problems
    )


def test_a_settings_json_name_is_written_in_the_declaration_only() -> None:
    """Code elsewhere reads a setting by its field, or its JSON name from the declaration;
    a second spelling of ``nprocPerNode`` is one that a rename would miss. (Docstrings may
    name them.) The extension's src/ has its own check: package.json is its one place."""
    import ast

    from repository import PACKAGE

    names = {a.key for n, a in declared().items() if a.key != n}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path == PACKAGE / "settings" / "declared.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                found += [f"{path.relative_to(PACKAGE)}: {k}" for k in names if k in node.value]
    assert not found, found
