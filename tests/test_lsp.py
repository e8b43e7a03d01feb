"""The real language server, driven by pytest-lsp over stdio (VS Code's capabilities) and
over TCP (Neovim's: no code lens refresh), profiling real scripts with real torch."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from typing import Any

import pytest
from lsprotocol import types
from pygls import uris
from pytest_lsp import LanguageClient

from helpers import SCRIPTS, marker_line, warm_compile_cache
from lsp_helpers import (
    CONFIGS,
    SETTINGS,
    close_session,
    execute,
    hot_diagnostic,
    runner_pids,
    start_session,
    uri_of,
    wait_for_runner,
)


async def test_profile_marks_the_hot_line_with_diagnostic_lens_and_hover(client: LanguageClient) -> None:
    result = await execute(
        client, "bottleneck.profile", {"uri": uri_of("fn_call.py"), "passes": ["sample", "cpu"]}
    )
    assert result["status"] == "ok", result
    diag = hot_diagnostic(client, "fn_call.py")
    # One diagnostic per line, ranked by wall time (the sample pass), with the other columns
    assert diag.source == "bottleneck" and diag.code == "wall-time"
    assert diag.severity == types.DiagnosticSeverity.Warning
    assert diag.message.split(" ", 4)[1:4] == ["of", "wall", "time"]
    assert "% of op CPU time" in diag.message and "aten::tanh" in diag.message
    assert diag.data["row"]["share"] > 0.5 and diag.data["row"]["rankedBy"] == "wall-time"
    assert diag.data["row"]["columns"]["cpu-op-time"]["share"] > 0.5

    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri_of("fn_call.py")))
    )
    hot = marker_line("fn_call.py") - 1
    titles = [lens.command.title for lens in lenses or [] if lens.range.start.line == hot and lens.command]
    assert titles and "% wall · " in titles[0] and "aten::tanh" in titles[0] and "op CPU" in titles[0]

    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of("fn_call.py")),
            position=types.Position(line=hot, character=4),
        )
    )
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert "| column | share | time | share of |" in value and "| wall (ranked by) |" in value
    assert "| op CPU |" in value and "aten::tanh" in value

    # the flame graph's stacks: the hot line's frame, labelled and linked to its file, has the most time
    flame = await execute(client, "bottleneck.flame", uri_of("fn_call.py"))
    assert "frames" in flame, flame
    frames, stacks = flame["frames"], flame["stacks"]
    assert flame["name"] == "fn_call.py" and stacks and flame["total_s"] > 0, flame.get("message")
    per_frame: dict[int, float] = {}
    for stack in stacks:
        for index in set(stack["frames"]):
            per_frame[index] = per_frame.get(index, 0.0) + stack["time_s"]
    lines = [i for i in per_frame if frames[i]["user"] and frames[i]["function"] == "<module>"]
    top = max(lines, key=lambda i: per_frame[i])
    assert frames[top]["label"] == f"fn_call.py:{hot + 1} <module>", frames[top]
    assert frames[top]["uri"] == uri_of("fn_call.py") and per_frame[top] > 0.5 * flame["total_s"]
    assert all(frames[s["frames"][0]]["function"] == "<module>" for s in stacks)  # outermost first

    tokens = list(client.progress_reports)
    assert tokens, "no work-done progress"
    reports = client.progress_reports[tokens[-1]]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and "fn_call.py" in reports[0].title
    assert any(isinstance(r, types.WorkDoneProgressReport) and r.percentage is not None for r in reports)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and "top line fn_call.py" in (
        reports[-1].message or ""
    )
    # one run: the cpu pass in windows of the sample pass's run, said in the summary
    started = [r.message or "" for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert any(m.startswith("pass 1/1: sample") for m in started), started
    assert re.search(
        r"; ran once, op CPU and memory recorded in 1 window, [\d.]+ s of the", reports[-1].message or ""
    )
    refreshes = client.lens_refreshes  # type: ignore[attr-defined]
    if client.caps_name == "neovim":  # type: ignore[attr-defined]
        assert refreshes == 0  # never sent to a client without refresh support
    else:
        assert refreshes >= 1


async def test_the_one_run_shows_its_hot_lines_as_its_windows_close(client: LanguageClient) -> None:
    """One run: as a window of it closes (at most once a second) the hot lines so far are
    published, and the progress says how far the run is; the end's results follow. The
    Hotspots view's rows meanwhile are the lines so far."""
    before = set(client.progress_reports)
    job = asyncio.ensure_future(
        execute(client, "bottleneck.profile", {"uri": uri_of("phases.py"), "passes": ["sample", "cpu"]})
    )

    def so_far() -> bool:
        return any(
            isinstance(r, types.WorkDoneProgressReport) and "window(s) recorded" in (r.message or "")
            for token in set(client.progress_reports) - before
            for r in client.progress_reports[token]
        )

    for _ in range(1200):
        if so_far() or job.done():
            break
        await asyncio.sleep(0.05)
    assert so_far(), "no progress report of the windows recorded within 60 s"
    view = await execute(client, "bottleneck.hotspots", uri_of("phases.py"))
    assert view["running"] and view["rows"] and view["summary"].startswith("phases.py: running"), view
    await job
    reports = client.progress_reports[list(client.progress_reports)[-1]]
    said = [r.message or "" for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    running = [
        m
        for m in said
        if re.match(r"phases\.py: sample pass running, \d+ window\(s\) recorded; top line ", m)
    ]
    assert running, said
    logged = [m.message for m in client.log_messages if "annotations after sample pass running" in m.message]
    assert logged, [m.message for m in client.log_messages]
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and "phases.py: done" in (
        reports[-1].message or ""
    )
    assert "% of wall time" in hot_diagnostic(client, "phases.py", "# TRAIN").message  # the end's


async def test_helper_hotspot_published_on_the_helper_uri(client: LanguageClient) -> None:
    await execute(client, "bottleneck.profile", {"uri": uri_of("uses_helper.py")})
    diag = hot_diagnostic(client, "helper_mod.py")
    assert diag.message.split(" of ", 1)[1].startswith("op CPU time") and diag.code == "cpu-op-time"
    # the Hotspots view's rows: across the script's files, the hot line first, as the editor shows it
    view = await execute(client, "bottleneck.hotspots", uri_of("helper_mod.py"))
    assert view["script"] == uri_of("uses_helper.py") and not view["running"], view
    assert view["status"] == "ok" and view["ranked_by"] == "cpu-op-time"
    assert [p["name"] for p in view["passes"]] == ["cpu"] and view["passes"][0]["status"] == "ok"
    first = view["rows"][0]
    assert (first["uri"], first["line"]) == (uri_of("helper_mod.py"), marker_line("helper_mod.py")), first
    assert first["path"].endswith("helper_mod.py") and first["text"].startswith("return torch.cumsum(")
    assert first["column_label"] == "op CPU" and first["share"] > 0.5 and first["severity"] == "warning"
    assert first["lens"].startswith(f"{first['share'] * 100:.1f}% op CPU") and "aten::" in first["lens"]
    assert "| op CPU (ranked by) |" in first["hover"], first["hover"]
    assert view["summary"].startswith("uses_helper.py: done; top line helper_mod.py:"), view["summary"]
    # the baseline commands from the helper's editor (VS Code sends the active file) act on
    # the script whose hot lines are there
    pinned = await execute(client, "bottleneck.pinBaseline", uri_of("helper_mod.py"))
    assert pinned.get("pinned") == uri_of("uses_helper.py"), pinned
    cleared = await execute(client, "bottleneck.clearBaseline", uri_of("helper_mod.py"))
    assert cleared["cleared"] == [uri_of("uses_helper.py")], cleared
    assert (await execute(client, "bottleneck.stop", None))["stopped"] == []  # null: every job (none)


async def test_backward_hotspot_links_its_forward_line(client: LanguageClient) -> None:
    await execute(client, "bottleneck.profile", {"uri": uri_of("backward.py")})
    diag = hot_diagnostic(client, "backward.py")
    assert diag.related_information
    forward = marker_line("backward.py", "# FORWARD") - 1
    assert diag.related_information[0].location.range.start.line == forward


async def test_syntax_error_and_exception_become_error_diagnostics(client: LanguageClient) -> None:
    result = await execute(client, "bottleneck.profile", {"uri": uri_of("syntax_error.py")})
    assert result["status"] == "syntax_error"
    diag = hot_diagnostic(client, "syntax_error.py", "# SYNTAX")
    assert diag.severity == types.DiagnosticSeverity.Error and diag.code == "script-error"
    assert any(m.type == types.MessageType.Error for m in client.messages)

    result = await execute(client, "bottleneck.profile", {"uri": uri_of("raises.py")})
    assert result["status"] == "error"
    diag = hot_diagnostic(client, "raises.py", "# RAISE")
    assert diag.severity == types.DiagnosticSeverity.Error
    assert "ValueError: planted failure" in diag.message


async def test_stop_kills_the_process_group_and_publishes_partial_results(client: LanguageClient) -> None:
    task = asyncio.ensure_future(execute(client, "bottleneck.profile", {"uri": uri_of("forever.py")}))
    await wait_for_runner("forever.py")
    assert runner_pids("forever.py"), "the runner never started"
    for _ in range(600):  # until the script is in its loop, under the profiler
        if any("looping" in m.message for m in client.log_messages):
            break
        await asyncio.sleep(0.1)
    await asyncio.sleep(1)
    hover_during = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri_of("fn_call.py")),
            position=types.Position(line=0, character=0),
        )
    )
    assert hover_during is None  # the server answers while the job runs
    stopped = await execute(client, "bottleneck.stop", uri_of("forever.py"))
    assert stopped["stopped"] == [uri_of("forever.py")]
    result = await task
    assert result["status"] == "cancelled"
    assert runner_pids("forever.py") == []
    hot_diagnostic(client, "forever.py")  # what the runner measured before it was stopped


async def test_clear_removes_every_hotspot(client: LanguageClient) -> None:
    await execute(client, "bottleneck.profile", {"uri": uri_of("uses_helper.py")})
    assert client.diagnostics.get(uri_of("helper_mod.py"))
    cleared = await execute(client, "bottleneck.clear")
    assert cleared["cleared"] >= 1
    assert uri_of("helper_mod.py") in client.diagnostics
    assert len(client.diagnostics[uri_of("helper_mod.py")]) == 0
    assert not client.diagnostics.get(uri_of("uses_helper.py"))


async def test_annotations_follow_edits(client: LanguageClient) -> None:
    await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
    uri = uri_of("fn_call.py")
    text = (SCRIPTS / "fn_call.py").read_text()
    hot = marker_line("fn_call.py") - 1
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    # two lines inserted at the top: the hotspot moves down by two
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)), text="# one\n# two\n"
                )
            ],
        )
    )
    await asyncio.sleep(0.5)
    tanh = [d.range.start.line for d in client.diagnostics[uri] if "aten::tanh" in d.message]
    assert tanh == [hot + 2]
    # the hot line itself edited: its hotspot is dropped
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(hot + 2, 4), types.Position(hot + 2, 5)), text="q"
                )
            ],
        )
    )
    await asyncio.sleep(0.5)
    lines = [d.range.start.line for d in client.diagnostics[uri]]
    assert hot + 2 not in lines
    assert lines  # the other lines, untouched, keep theirs


async def pass_messages(client: LanguageClient, arguments: dict[str, object]) -> list[str]:
    """Profile, and return the progress reports that announced each pass ("pass 1/2: ...")."""
    await execute(client, "bottleneck.profile", arguments)
    token = list(client.progress_reports)[-1]
    return [
        r.message or ""
        for r in client.progress_reports[token]
        if isinstance(r, types.WorkDoneProgressReport) and (r.message or "").startswith("pass ")
    ]


async def test_a_python_heavy_pass_is_forecast_and_explained(client: LanguageClient) -> None:
    """The cpu pass records no Python call (lines from the line marker alone): a
    Python-heavy script's pass is neither forecast nor explained. With the Python tracer on
    (exactLines off), before the autograd pass the progress says what recording its Python
    calls may cost (from cProfile's count); after it, the pass's note (why it took
    seconds), as the report prints it beside the pass's table, is in the log."""
    uri = uri_of("generator_heavy.py")

    async def pass_starts() -> list[str]:
        return await pass_messages(client, {"uri": uri, "passes": ["cprofile", "cpu"]})

    starts = await pass_starts()
    assert starts[0] == "pass 1/2: cprofile" and starts[1].startswith("pass 2/2: cpu"), starts
    assert "(cProfile counted" not in starts[1], starts
    assert not [m.message for m in client.log_messages if "the Python tracer recorded" in m.message]

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bottleneck": {**SETTINGS, "exactLines": False}})
    )
    starts = await pass_starts()
    assert starts[0] == "pass 1/2: cprofile", starts
    assert starts[1].startswith("pass 2/2: cpu (cProfile counted 600,") and "may add about" in starts[1], (
        starts
    )
    logged = [m.message for m in client.log_messages if "pass cpu: note: " in m.message]
    assert logged and "generator_heavy.py: pass cpu: note: the Python tracer recorded 600," in logged[0], (
        logged
    )


async def test_a_script_whose_time_is_in_c_is_profiled_in_two_runs(client: LanguageClient) -> None:
    """separateRuns: one run per pass. The sample pass found the script's time in C: the
    progress counts two passes, the sample pass's hot line is published before the cpu
    pass runs (and stays in its progress), the hot line is the same at the end, and the
    cprofile pass's note (in the log) says it rode in the cpu pass's run; separateCProfile
    gives it a run of its own again."""
    uri = uri_of("ops_bound.py")
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bottleneck": {**SETTINGS, "separateRuns": True}})
    )

    async def profiled() -> list[str]:
        return await pass_messages(client, {"uri": uri, "passes": ["sample", "cprofile", "cpu"]})

    starts = await profiled()
    assert [m.split(";")[0] for m in starts] == ["pass 1/3: sample", "pass 2/2: cpu"], starts
    # Progressive: the sample pass's hot line before the cpu pass ran, kept in its progress
    hot = marker_line("ops_bound.py")
    assert f"top line so far ops_bound.py:{hot} " in starts[1], starts
    assert hot_diagnostic(client, "ops_bound.py").range.start.line == marker_line("ops_bound.py") - 1
    result = await execute(client, "bottleneck.report")
    assert "note: recorded in the cpu pass's run, one run of the script fewer" in result["text"]

    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(
            settings={"bottleneck": {**SETTINGS, "separateRuns": True, "separateCProfile": True}}
        )
    )
    starts = await profiled()
    assert [m.split(";")[0] for m in starts] == ["pass 1/3: sample", "pass 2/3: cprofile", "pass 3/3: cpu"], (
        starts
    )
    result = await execute(client, "bottleneck.report")
    assert "recorded in the cpu pass's run" not in result["text"]


async def test_report_command(client: LanguageClient) -> None:
    missing = await execute(client, "bottleneck.report")
    assert missing["status"] == "refused"
    await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
    result = await execute(client, "bottleneck.report")
    assert "Hotspots by source line" in result["text"]
    path = uris.to_fs_path(result["uri"])
    assert path and os.stat(path).st_mode & 0o077 == 0
    # the client opened it (window/showDocument): no message names the file besides
    assert [d.uri for d in client.shown_documents] == [result["uri"]]
    assert not [m for m in client.messages if "the full report is in" in m.message]


async def test_failures_before_running_are_clear_and_run_nothing(client: LanguageClient) -> None:
    cases = [
        ({"uri": uri_of("no_such.py")}, "Script not found"),
        ({"uri": uris.from_fs_path(str(SCRIPTS))}, "Script is a folder"),
        ({"uri": "untitled:Untitled-1"}, "not a file URI"),
        ({"uri": uri_of("fn_call.py"), "python": "/no/python"}, "Python interpreter not found"),
        (
            {"uri": uri_of("fn_call.py"), "torchrunArgs": ["--run-path", "x.py"]},
            "Torchrun option --run-path is not supported here",
        ),
        ({"uri": uri_of("fn_call.py"), "module": True}, "fn_call.py is not in a package"),
    ]
    for arguments, expected in cases:
        result = await execute(client, "bottleneck.profile", arguments)
        assert result["status"] == "refused" and expected in result["message"]
        assert any(expected in m.message for m in client.messages)
    with pytest.raises(Exception, match="not defined"):
        await execute(client, "bottleneck.nope")
    # Malformed JSON is refused by name before anything runs (cattrs alone made the string
    # "--epochs 1" ten one-letter arguments, and "2" a number)
    fn_call = uri_of("fn_call.py")
    malformed = [
        (42, "expected one argument object, got a number"),
        ({"uri": fn_call, "args": "--epochs 1"}, "'args' must be a list of strings or null, got a string"),
        (
            {"uri": fn_call, "args": ["--epochs", 1]},
            "'args' must be a list of strings or null, got a list holding a number",
        ),
        ({"uri": fn_call, "timeout": "30"}, "'timeout' must be a number or null, got a string"),
        ({"uri": fn_call, "nprocPerNode": "2"}, "'nprocPerNode' must be a whole number or null"),
        ({"uri": fn_call, "module": "yes"}, "'module' must be true, false or null"),
        ({"uri": fn_call, "arg": ["x"]}, "unknown field 'arg'"),
        ({"args": []}, "'uri' is required"),
    ]
    for arguments, expected in malformed:
        with pytest.raises(Exception, match=re.escape(f"Invalid Params: bottleneck.profile: {expected}")):
            await execute(client, "bottleneck.profile", arguments)
    with pytest.raises(Exception, match=re.escape("bottleneck.openResult: 'path' must be a string")):
        await execute(client, "bottleneck.openResult", {"path": ["a.json"]})
    assert not runner_pids("fn_call.py")
    # still alive
    assert (await execute(client, "bottleneck.clear"))["cleared"] >= 0


async def test_a_file_with_relative_imports_runs_as_a_module(client: LanguageClient) -> None:
    """As a file, Python stops at a relative import; the server runs such a file in a
    package as ``python -m`` would, from the workspace folder."""
    entry = uri_of("modpkg/sub/entry.py")
    result = await execute(client, "bottleneck.profile", {"uri": entry})
    assert result["status"] == "ok", result
    diag = hot_diagnostic(client, "modpkg/helpers.py")
    assert "aten::mm" in diag.message
    assert any("entry.py: runs as python -m modpkg.sub.entry" in m.message for m in client.log_messages)
    result = await execute(client, "bottleneck.profile", {"uri": entry, "module": False})  # as a file
    assert result["status"] == "error"
    errors = [d for d in client.diagnostics.get(entry, []) if d.severity == types.DiagnosticSeverity.Error]
    assert errors and "attempted relative import with no known parent package" in errors[0].message
    assert "it is in a package: it runs as python -m modpkg.sub.entry with the module argument" in str(result)


async def test_a_duration_profiles_a_window_of_an_endless_script(client: LanguageClient) -> None:
    """The duration argument: every pass stopped after the window, the job ends well, the
    hot line is annotated, and the summary says the figures cover a window."""
    result = await execute(
        client,
        "bottleneck.profile",
        {"uri": uri_of("forever.py"), "duration": 3, "passes": ["sample", "cpu"]},
    )
    assert result["status"] == "ok" and result["exitCode"] == 0, result
    assert result["summary"].startswith(
        "forever.py: done (a 3 s window of the run: bottleneck.duration); top line forever.py:"
        f"{marker_line('forever.py')} "
    ), result["summary"]
    diag = hot_diagnostic(client, "forever.py")
    assert "of wall time" in diag.message and "aten::mm" in diag.message
    assert runner_pids("forever.py") == []
    reports = client.progress_reports[list(client.progress_reports)[-1]]
    started = [r.message or "" for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert "pass 1/2: sample (stopped after 3 s: a window of the run)" in started, started


async def test_timeout_and_missing_torch_are_explained(client: LanguageClient) -> None:
    result = await execute(client, "bottleneck.profile", {"uri": uri_of("forever.py"), "timeout": 5})
    assert result["status"] == "timeout" and result["exitCode"] == 124
    assert any("timeout" in m.message for m in client.messages if m.type == types.MessageType.Error)
    assert runner_pids("forever.py") == []

    base = os.path.join(sys.base_prefix, "bin", "python3")
    result = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py"), "python": base})
    assert any("torch is not importable" in m.message for m in client.messages)

    result = await execute(
        client, "bottleneck.profile", {"uri": uri_of("fn_call.py"), "python": "/bin/false"}
    )
    assert "/bin/false never ran the profiler's runner" in result["summary"]
    assert "Choose another: bottleneck.interpreter (the server's python setting)" in result["summary"]


async def test_shutdown_during_a_job_leaves_no_runner(client: LanguageClient) -> None:
    task = asyncio.ensure_future(execute(client, "bottleneck.profile", {"uri": uri_of("forever.py")}))
    await wait_for_runner("forever.py")
    assert runner_pids("forever.py")
    await client.shutdown_async(None)
    result = await task
    assert result["status"] == "cancelled"
    assert runner_pids("forever.py") == []
    tokens = list(client.progress_reports)
    assert isinstance(client.progress_reports[tokens[-1]][-1], types.WorkDoneProgressEnd)
    client.exit(None)
    client.shutdown_done = True  # type: ignore[attr-defined]


async def test_a_thread_that_held_the_exit_is_a_diagnostic_on_its_line(client: LanguageClient) -> None:
    """A script whose thread waits for ever (a plain run never ends): the profile ends, the
    hot line is first, and the waiting thread is a warning on the line it waits at."""
    result = await execute(
        client, "bottleneck.profile", {"uri": uri_of("waits_forever.py"), "passes": ["sample"]}
    )
    assert result["status"] == "ok" and result["exitCode"] == 0, result
    assert result["summary"].startswith(
        f"waits_forever.py: done; top line waits_forever.py:{marker_line('waits_forever.py')} "
    ), result["summary"]
    line = marker_line("waits_forever.py", "WAITS") - 1
    found = [
        d for d in client.diagnostics.get(uri_of("waits_forever.py"), []) if d.code == "process-did-not-exit"
    ]
    assert [d.range.start.line for d in found] == [line], found
    assert found[0].severity == types.DiagnosticSeverity.Warning
    assert found[0].message.startswith('thread "watcher" waits here (threading.py:'), found[0].message
    assert "but its process did not exit; ended after 5 s" in found[0].message
    assert runner_pids("waits_forever.py") == []


async def test_a_client_that_never_answers_the_servers_requests_still_gets_its_profile() -> None:
    """A client that advertises progress and lens refreshes but never answers either request
    (issue 44: every wait bounded): the profile runs, its diagnostics are published and the
    command answers, each unanswered request given up after 10 s (the server's log says so)."""
    config, caps = CONFIGS["stdio-vscode"]
    client = await config.start()
    await start_session(client, caps, str(SCRIPTS), SETTINGS)
    asked: list[str] = []
    release = asyncio.Event()  # set at the end: the client's handlers must end before it stops

    def never(method: str) -> Any:
        async def handler(params: Any) -> None:
            asked.append(method)
            await release.wait()  # no answer while the profile runs

        return handler

    features = client.protocol.fm.features
    for method in (types.WINDOW_WORK_DONE_PROGRESS_CREATE, types.WORKSPACE_CODE_LENS_REFRESH):
        features[method] = never(method)
    try:
        result = await asyncio.wait_for(
            execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py"), "passes": ["sample"]}), 120
        )
        assert result["status"] == "ok", result
        assert types.WINDOW_WORK_DONE_PROGRESS_CREATE in asked and types.WORKSPACE_CODE_LENS_REFRESH in asked
        assert hot_diagnostic(client, "fn_call.py").source == "bottleneck"
        said = " ".join(m.message for m in client.log_messages)
        assert "the client did not answer window/workDoneProgress/create within 10 s" in said, said[-2000:]
    finally:
        release.set()
        await asyncio.sleep(0.1)
        await close_session(client)


async def test_a_compiled_forwards_hot_line_is_marked_with_its_kernels(client: LanguageClient) -> None:
    """torch.compile (issue 47, part 3): the heavy line inside a compiled model's forward is
    the first hotspot after the .backward() line, in the Hotspots view and the summary, with
    a compiled marker and its kernels in its diagnostic, lens and hover; the def line has
    none of the compiled forward's time."""
    name = "compiled_forward.py"
    warm_compile_cache(name, "0")
    uri = uri_of(name)
    result = await execute(
        client, "bottleneck.profile", {"uri": uri, "args": ["8"], "passes": ["sample", "cpu"]}
    )
    assert result["status"] == "ok", result
    heavy, backward = marker_line(name, "# HEAVY"), marker_line(name, "# BACKWARD")
    view = await execute(client, "bottleneck.hotspots", uri)
    lines = [row["line"] for row in view["rows"]]
    assert heavy in lines and set(lines[: lines.index(heavy)]) <= {backward}, view["rows"][:3]
    assert re.match(rf"{name}: done; top line {name}:({heavy}|{backward})\b", view["summary"]), view[
        "summary"
    ]
    row = view["rows"][lines.index(heavy)]
    assert re.match(r"\d+\.\d% wall · [\d.]+ (ms|s) · compiled: (cpp_fused_\w+|aten::mm)", row["lens"]), row[
        "lens"
    ]
    assert "Compiled by torch.compile: " in row["hover"] and "cpp_fused_" in row["hover"], row["hover"]
    diag = hot_diagnostic(client, name, "# HEAVY")
    assert "; compiled by torch.compile: " in diag.message, diag.message
    marked = {d.range.start.line + 1 for d in client.diagnostics.get(uri, []) if d.source == "bottleneck"}
    assert marker_line(name, "# DEF") not in marked, marked


async def test_graph_breaks_and_recompiles_are_diagnostics_on_their_lines(client: LanguageClient) -> None:
    """torch.compile (issue 47): each graph break a warning on its line with torch's reason,
    the recompile a diagnostic on the calling line, the torch.compile line a lens saying what
    became of what it compiled, the hints in the hover."""
    uri = uri_of("compile_breaks.py")
    result = await execute(client, "bottleneck.profile", {"uri": uri, "passes": ["sample"]})
    assert result["status"] == "ok", result
    found = client.diagnostics.get(uri, [])
    item = marker_line("compile_breaks.py", "# BREAK item") - 1
    breaks = [d for d in found if d.code == "graph-break"]
    assert sorted(d.range.start.line for d in breaks) == [
        item,
        marker_line("compile_breaks.py", "# BREAK print") - 1,
    ]
    on_item = next(d for d in breaks if d.range.start.line == item)
    assert on_item.severity == types.DiagnosticSeverity.Warning
    assert on_item.message.startswith("torch.compile: graph break of step here")
    assert "Unsupported Tensor.item() call with capture_scalar_outputs=False" in on_item.message
    call = marker_line("compile_breaks.py", "# CALL") - 1
    recompiled = [d for d in found if d.code == "recompile"]
    assert recompiled and all(d.range.start.line == call for d in recompiled), recompiled
    assert any("expected 64, actual 128" in d.message for d in recompiled)
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    compiled_at = marker_line("compile_breaks.py", "# COMPILE") - 1
    titles = [
        lens.command.title for lens in lenses or [] if lens.range.start.line == compiled_at and lens.command
    ]
    assert any(
        re.match(r"torch\.compile of step: \d+ graphs, \d+ graph breaks, \d+ recompiles?$", t) for t in titles
    ), titles
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=types.Position(line=item, character=6),
        )
    )
    assert hover is not None
    value = hover.contents.value  # type: ignore[union-attr]
    assert "**torch.compile: graph break** of `step`" in value and "capture_scalar_outputs = True" in value
