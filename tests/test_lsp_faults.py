"""Bad input and faults through the language server (issue 6): clear errors, no orphan
processes, no progress left open, and the server keeps answering."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls import uris
from pytest_lsp import LanguageClient

from helpers import SCRIPTS
from lsp_helpers import (
    SERVER,
    SETTINGS,
    execute,
    frame,
    hot_diagnostic,
    our_folders,
    runner_pids,
    uri_of,
    wait_for_runner,
)


def progress_all_ended(client: LanguageClient) -> bool:
    return all(
        reports and isinstance(reports[-1], types.WorkDoneProgressEnd)
        for reports in client.progress_reports.values()
    )


async def test_unreadable_script_and_helper_exception(vscode_client: LanguageClient) -> None:
    client = vscode_client
    path = SCRIPTS / "socket_script.py"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    try:
        result = await execute(client, "bottleneck.profile", {"uri": uris.from_fs_path(str(path))})
    finally:
        sock.close()
        path.unlink()
    assert result["status"] == "refused" and "Script is not a regular file" in result["message"]

    result = await execute(client, "bottleneck.profile", {"uri": uri_of("raises_in_helper.py")})
    assert result["status"] == "error"
    diag = hot_diagnostic(client, "helper_mod.py", "# RAISE")
    assert diag.severity == types.DiagnosticSeverity.Error
    assert "RuntimeError: failure in a helper" in diag.message


async def test_os_exit_and_loud_output_and_workers(vscode_client: LanguageClient) -> None:
    client = vscode_client
    result = await execute(client, "bottleneck.profile", {"uri": uri_of("os_exit.py")})
    assert result["status"] == "exit" and result["exitCode"] == 5
    hot_diagnostic(client, "os_exit.py")

    result = await execute(client, "bottleneck.profile", {"uri": uri_of("loud.py")})
    assert result["status"] == "ok"
    streamed = [m.message for m in client.log_messages if m.message.startswith("[loud.py:")]
    assert sum(len(m) for m in streamed) < 300 * 1024  # 50 MB printed, a bounded part streamed
    assert any("is not streamed" in m.message for m in client.log_messages)
    hot_diagnostic(client, "loud.py")

    result = await execute(client, "bottleneck.profile", {"uri": uri_of("workers.py")})
    assert result["status"] == "ok"
    hot_diagnostic(client, "workers.py")
    assert runner_pids("workers.py") == []
    assert subprocess.run(["pgrep", "-f", "workers.py"], capture_output=True).stdout == b""


async def test_unsaved_edits_are_announced(vscode_client: LanguageClient) -> None:
    client = vscode_client
    uri = uri_of("fn_call.py")
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text="# edited\n")
        )
    )
    assert runner_pids("fn_call.py") == []  # opening a file runs nothing
    await execute(client, "bottleneck.profile", {"uri": uri})
    assert any("unsaved edits: profiling the saved file" in m.message for m in client.messages)


async def test_two_requests_at_once(vscode_client: LanguageClient) -> None:
    client = vscode_client
    forever = {"uri": uri_of("forever.py")}
    first = asyncio.ensure_future(execute(client, "bottleneck.profile", forever))
    await wait_for_runner("forever.py")
    workdirs = [p for p in Path(tempfile.gettempdir()).glob("bottleneck-lsp-*") if p.is_dir()]
    assert workdirs and all(p.stat().st_mode & 0o777 == 0o700 for p in workdirs)
    other = asyncio.ensure_future(execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")}))
    second = asyncio.ensure_future(execute(client, "bottleneck.profile", {**forever, "timeout": 6}))
    assert (await first)["status"] == "cancelled"  # the same script again restarts it
    assert (await other)["status"] == "ok"  # other scripts run side by side
    assert (await second)["status"] == "timeout"
    assert runner_pids("forever.py") == []
    assert progress_all_ended(client)


async def test_stop_during_each_pass(vscode_client: LanguageClient) -> None:
    client = vscode_client
    for name in ("cprofile", "cpu"):
        task = asyncio.ensure_future(
            execute(client, "bottleneck.profile", {"uri": uri_of("forever.py"), "passes": [name]})
        )
        await wait_for_runner("forever.py")
        await asyncio.sleep(1)
        await execute(client, "bottleneck.stop")
        assert (await task)["status"] == "cancelled"
        assert runner_pids("forever.py") == []
    assert progress_all_ended(client)
    assert (await execute(client, "bottleneck.clear"))["cleared"] >= 0


async def test_a_profile_stopped_before_its_first_pass_keeps_the_last_results(
    vscode_client: LanguageClient,
) -> None:
    """keepWarm off: each profile starts its own fork server (about a second here), and a
    stop within it ends the job before any pass. The last results stay; the next whole run
    is compared with the last whole one, not with the stopped one."""
    client = vscode_client
    uri = uri_of("fn_call.py")
    await execute(client, "bottleneck.profile", {"uri": uri})
    before = sorted((d.range.start.line, d.message) for d in client.diagnostics[uri])
    assert before
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"bottleneck": {**SETTINGS, "keepWarm": False}})
    )
    errors = sum(m.type == types.MessageType.Error for m in client.messages)
    task = asyncio.ensure_future(execute(client, "bottleneck.profile", {"uri": uri}))
    await asyncio.sleep(0.2)
    await execute(client, "bottleneck.stop")
    result = await task
    assert result["status"] == "cancelled"
    assert result["summary"] == "fn_call.py: cancelled before any pass ran; the results before it are kept"
    assert sorted((d.range.start.line, d.message) for d in client.diagnostics[uri]) == before
    assert sum(m.type == types.MessageType.Error for m in client.messages) == errors  # a stop is no error
    await execute(client, "bottleneck.profile", {"uri": uri})
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    titles = [lens.command.title for lens in lenses or [] if lens.command is not None]
    assert any("since last run" in t for t in titles) and not any("new since" in t for t in titles)
    assert progress_all_ended(client)


# -- hostile input -----------------------------------------------------------------------
# keys a JSON-RPC message has: pygls once read any nested object holding "jsonrpc" as a
# message of its own, and the request around it was never answered
message_keys = st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=50),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=10) | message_keys, children, max_size=4)
    ),
    max_leaves=10,
)
missing_file_uri = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00/"), min_size=1, max_size=30
).map(lambda name: uris.from_fs_path(f"/nonexistent-bottleneck/{name}.py") or "")
profile_arguments = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"uri": st.one_of(missing_file_uri, st.text(max_size=40), st.just("untitled:x"), json_values)},
        optional={"args": json_values, "passes": json_values, "timeout": json_values, "python": json_values},
    ),
)


async def test_hostile_command_input_gets_errors_and_the_server_survives(
    vscode_client: LanguageClient,
) -> None:
    client = vscode_client
    answers: list[str] = []

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(
        command=st.sampled_from(
            ["bottleneck.profile", "bottleneck.stop", "bottleneck.report", "bottleneck.clear"]
        ),
        arguments=st.lists(profile_arguments, max_size=3),
    )
    def check(command: str, arguments: list[Any]) -> None:
        future = asyncio.run_coroutine_threadsafe(_send(client, command, arguments), loop)
        answers.append(future.result(timeout=30))

    async def _send(c: LanguageClient, command: str, arguments: list[Any]) -> str:
        try:
            result = await execute(c, command, *arguments)
        except Exception as exc:  # noqa: BLE001 - an error response is a fine answer
            return f"error: {type(exc).__name__}"
        return f"ok: {str(result)[:40]}"

    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, check)
    assert len(answers) >= 60
    huge = "x" * 2_000_000
    for arguments in ([{"uri": huge}], [{"uri": uri_of("fn_call.py"), "args": [huge]}], [huge]):
        try:
            result = await execute(client, "bottleneck.profile", *arguments)
            assert result["status"] == "refused"
        except Exception:  # noqa: BLE001 - an error response is also a clear refusal
            pass
    assert runner_pids("bottleneck") == []  # nothing hostile started a runner
    assert (await execute(client, "bottleneck.clear"))["cleared"] >= 0  # still alive
    assert progress_all_ended(client)


async def test_arguments_shaped_like_messages_are_answered(vscode_client: LanguageClient) -> None:
    """An argument object with the keys of a JSON-RPC message is an argument: the request
    that carries it gets its answer, and one whose own shape is wrong gets an error."""
    client = vscode_client
    lookalikes: list[Any] = [
        {"jsonrpc": "2.0", "method": "exit"},
        {"jsonrpc": "2.0", "id": 7, "method": "shutdown"},
        {"jsonrpc": "2.0", "id": 7, "result": None},
        {"jsonrpc": "2.0", "id": 7, "error": "x"},
        {"jsonrpc": "2.0", " +\u00cb}": 1},
    ]
    for value in lookalikes:
        for arguments in ([value], [{"uri": value}], [{"uri": uri_of("fn_call.py"), "args": [value]}]):
            try:
                answer = await asyncio.wait_for(execute(client, "bottleneck.report", *arguments), 20)
            except asyncio.TimeoutError:
                raise AssertionError(f"no answer to bottleneck.report with {arguments}") from None
            except Exception as exc:  # noqa: BLE001 - an error response is an answer
                assert "Invalid Params" in str(exc), (arguments, exc)
            else:
                assert answer["status"] == "refused", (arguments, answer)
    assert (await execute(client, "bottleneck.clear"))["cleared"] >= 0  # still alive, not exited


def _listening(port: int) -> set[str]:
    """IPv4 addresses listening on a port, as /proc/net/tcp writes them."""
    found = set()
    with open("/proc/net/tcp") as table:
        for row in table.readlines()[1:]:
            local, state = row.split()[1], row.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def test_tcp_binds_loopback_by_default_and_warns_otherwise() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([*SERVER, "--tcp", f"0.0.0.0:{port}"], stderr=subprocess.PIPE)
    try:
        line = proc.stderr.readline() if proc.stderr else b""
        assert b"not loopback" in line and b"the token is what keeps them out" in line
    finally:
        proc.terminate()
        proc.wait(10)
    proc = subprocess.Popen([*SERVER, "--tcp", str(port)], stderr=subprocess.PIPE)
    try:
        listening: set[str] = set()
        for _ in range(200):
            listening = _listening(port)
            if listening:
                break
            time.sleep(0.05)
        assert listening == {"0100007F"}  # 127.0.0.1 only
    finally:
        proc.terminate()
        proc.wait(10)


def test_sigterm_over_stdio_mid_profile_exits_and_kills_the_runner() -> None:
    """An editor may signal the server and keep its stdin open: it still exits, runner and all."""
    before = our_folders()
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    root = uris.from_fs_path(str(SCRIPTS))
    options = {"bottleneck": SETTINGS}
    initialize = {
        "processId": os.getpid(),
        "rootUri": root,
        "capabilities": {},
        "initializationOptions": options,
    }
    profile = {"command": "bottleneck.profile", "arguments": [{"uri": uri_of("forever.py")}]}
    proc.stdin.write(frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize}))
    proc.stdin.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    proc.stdin.write(
        frame({"jsonrpc": "2.0", "id": 2, "method": "workspace/executeCommand", "params": profile})
    )
    proc.stdin.flush()
    try:
        for _ in range(300):
            if runner_pids("forever.py"):
                break
            time.sleep(0.1)
        assert runner_pids("forever.py"), "the profile never started"
        proc.terminate()
        assert proc.wait(10) == 0
        for _ in range(50):
            if not runner_pids("forever.py"):
                break
            time.sleep(0.1)
        assert runner_pids("forever.py") == []
        assert our_folders() - before == set()  # the job's folder, and its fork server's
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()


def test_nothing_runs_at_server_start(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "setup.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (tmp_path / "__main__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    proc = subprocess.run(
        SERVER,
        input=b"",
        capture_output=True,
        cwd=tmp_path,
        timeout=30,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    assert proc.stdout == b""  # nothing written to stdout in stdio mode without a client
    assert not marker.exists()


async def test_exit_stdin_wandering_odd_paths_and_cuda_through_the_server(
    vscode_client: LanguageClient, tmp_path: Path
) -> None:
    client = vscode_client
    result = await execute(client, "bottleneck.profile", {"uri": uri_of("exits.py"), "args": ["4"]})
    assert result["status"] == "exit" and result["exitCode"] == 4

    result = await execute(client, "bottleneck.profile", {"uri": uri_of("reads_stdin.py")})
    assert result["status"] == "ok"
    assert any("got '' and 0 more characters" in m.message for m in client.log_messages)

    await execute(client, "bottleneck.profile", {"uri": uri_of("wanders.py")})
    hot_diagnostic(client, "helper_mod.py")

    odd = tmp_path / "dir with space" / "ünï côde.py"
    odd.parent.mkdir()
    odd.write_bytes((SCRIPTS / "fn_call.py").read_bytes().replace(b"\n", b"\r\n"))
    odd_uri = uris.from_fs_path(str(odd)) or ""
    result = await execute(client, "bottleneck.profile", {"uri": odd_uri})
    assert result["status"] == "ok"
    lines = [d.range.start.line for d in client.diagnostics[odd_uri]]
    assert 4 in lines  # `y = torch.tanh(x)  # HOT`, 0-based

    result = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py"), "passes": ["cuda"]})
    import torch

    if not torch.cuda.is_available():
        assert any("cuda pass skipped: torch" in m.message for m in client.messages)
