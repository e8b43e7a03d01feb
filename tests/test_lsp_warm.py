"""Warm start in the editor (issue 15): the real server keeps one fork server per
interpreter between profiles, ends it when idle, on a settings change and with itself;
``keepWarm: false`` keeps nothing between profiles."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls import uris
from pytest_lsp import ClientServerConfig, LanguageClient

from bottleneck_lsp.lsp.warm import Lease, WarmForks
from bottleneck_lsp.schema.contract import RunnerArgs
from lsp_helpers import (
    SCRIPTS,
    SERVER,
    SETTINGS,
    execute,
    fork_servers,
    gone,
    our_folders,
    start_session,
    uri_of,
)


async def until(check: Any, seconds: float = 30.0) -> bool:
    for _ in range(int(seconds / 0.1)):
        if check():
            return True
        await asyncio.sleep(0.1)
    return bool(check())


def said(client: LanguageClient, text: str) -> list[str]:
    return [m.message for m in client.log_messages if text in m.message]


async def session(settings: dict[str, Any]) -> tuple[LanguageClient, int]:
    client = await ClientServerConfig(server_command=SERVER).start()
    await start_session(client, "visual-studio-code", str(SCRIPTS), {**SETTINGS, **settings})
    return client, client._server.pid  # type: ignore[union-attr]


async def test_one_warm_fork_server_serves_every_profile_until_idle_or_changed() -> None:
    client, pid = await session({"passes": ["sample", "cpu"]})
    try:
        assert fork_servers(pid) == []  # nothing starts before the user asks
        first = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
        assert first["status"] == "ok", first
        warm = fork_servers(pid)
        assert len(warm) == 1  # kept after the profile
        second = await execute(client, "bottleneck.profile", {"uri": uri_of("backward.py")})
        assert second["status"] == "ok" and fork_servers(pid) == warm  # the same one served it
        ready = said(client, "ready in")
        assert len(ready) == 1 and "holding" in ready[0] and " MB" in ready[0], ready

        def change(settings: dict[str, Any]) -> None:
            client.workspace_did_change_configuration(
                types.DidChangeConfigurationParams(settings={"bottleneck": settings})
            )

        change({"minShare": 0.05})  # how hot lines show: nothing the fork server depends on
        third = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
        assert third["status"] == "ok" and fork_servers(pid) == warm and len(said(client, "ready in")) == 1
        assert said(client, "ends:") == []

        change({"warmIdleMinutes": 0.02})  # the idle one now ends 1.2 s from now
        assert await until(lambda: gone(warm[0])), "an idle warm server did not end"
        assert said(client, "ends: idle for 0.02 min")

        change({"warmIdleMinutes": 15})
        fourth = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
        assert fourth["status"] == "ok"
        again = fork_servers(pid)
        assert len(again) == 1 and again != warm
        change({"keepWarm": False})
        assert await until(lambda: gone(again[0])), "a settings change did not end the warm server"
        assert said(client, "ends: the settings changed (keepWarm)")
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_keep_warm_off_keeps_nothing_between_profiles() -> None:
    client, pid = await session({"keepWarm": False})
    try:
        result = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
        assert result["status"] == "ok"
        assert fork_servers(pid) == [] and said(client, "ready in") == []
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_killed_server_takes_its_warm_fork_server_along() -> None:
    before = our_folders()
    client, pid = await session({})
    try:
        result = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
        assert result["status"] == "ok"
        report = await execute(client, "bottleneck.report", uri_of("fn_call.py"))
        reports = Path(uris.to_fs_path(report["uri"]) or "").parent
        warm = fork_servers(pid)
        assert len(warm) == 1
        os.kill(pid, signal.SIGKILL)  # nothing of the server cleans up
        assert await until(lambda: gone(warm[0])), "the warm fork server outlived its server"
        assert await until(lambda: not our_folders() - before), "its private folder was left behind"
    finally:
        await client.stop()
    assert reports.is_dir()  # a killed server cannot remove its folder of reports...
    client, _ = await session({})
    try:  # ...the next server to start does
        assert await until(lambda: not reports.exists()), "the stale folder of reports stayed"
        # the log message follows the removal: on a busy machine it can arrive a moment later
        told = f"removed {reports}: the folder of reports of a server that was killed"
        assert await until(lambda: bool(said(client, told))), "no log message said so"
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_fork_off_runs_each_pass_in_a_fresh_interpreter() -> None:
    client, pid = await session({"fork": False, "passes": ["cprofile", "cpu"]})
    try:
        result = await execute(client, "bottleneck.profile", {"uri": uri_of("fn_call.py")})
        assert result["status"] == "ok"
        assert fork_servers(pid) == [] and said(client, "ready in") == []
        report = await execute(client, "bottleneck.report", uri_of("fn_call.py"))
        assert report["text"].count("start-up, not charged to lines: import torch") == 2
        assert "forked with torch loaded" not in report["text"]
        written = Path(uris.to_fs_path(report["uri"]) or "")
        assert written.read_text(encoding="utf-8") == report["text"]  # the file the editor opens
    finally:
        await client.shutdown_session()
        await client.stop()
    assert not written.parent.exists()  # the server's folder of reports went with it


def test_each_job_keeps_the_fork_server_it_got_whatever_happens_to_the_others(tmp_path: Path) -> None:
    """Leases, with real fork servers: job A's server dies and job B gets a new one; A's end
    does not count against B's, and a settings change while B runs leaves B's server to B.
    A server that cannot fork any more (as after an "unsafe" compiler stack) is not handed to
    job C, and is not closed under job B's running pass either."""
    script = tmp_path / "sleeps.py"
    script.write_text("import time\ntime.sleep(2)\n")

    def options() -> list[str]:
        out = str(tmp_path / "cprofile.json")
        return RunnerArgs(pass_name="cprofile", script=str(script), out=out, cwd=str(tmp_path)).options()

    async def scenario() -> None:
        warm = WarmForks(lambda _text: None)
        try:
            a = await warm.acquire(sys.executable)
            assert a.server is not None
            a.server.kill()  # A's server dies
            assert await until(lambda: a.server is not None and a.server.gone)
            b = await warm.acquire(sys.executable)
            assert b.server is not None and b.server is not a.server
            a.release()
            a.release()  # twice: nothing more
            warm.retire("the settings changed")  # while B runs
            await asyncio.sleep(0.5)
            assert not b.server.gone and b.server.proc.returncode is None
            c = await warm.acquire(sys.executable)
            assert c.server is not None and c.server is not b.server  # retired: not handed out
            proc, _out, _err = await c.server.spawn(options())
            c.server.gone = True  # as after an "unsafe" answer: no new pass is forked from it
            d = await warm.acquire(sys.executable)
            assert d.server is not None and d.server is not c.server
            assert await asyncio.wait_for(proc.wait(), 30) == 0  # C's pass ran to its end
            b.release()
            assert await until(lambda: b.server is not None and b.server.proc.returncode is not None)
            c.release()
            d.release()
        finally:
            await warm.close()

    asyncio.run(scenario())
    assert fork_servers() == []


def test_an_idle_fork_server_that_dies_is_collected_at_once() -> None:
    """Killed while idle (the OOM killer): it is reaped and its folder removed then, not
    left a zombie until the next profile or the idle timer; the log says so, and the next
    profile gets a new one."""
    told: list[str] = []

    async def scenario() -> tuple[int, str]:
        warm = WarmForks(told.append)
        try:
            lease = await warm.acquire(sys.executable)
            server = lease.server
            assert server is not None
            lease.release()  # idle now, its timer 15 minutes away
            os.kill(server.proc.pid, signal.SIGKILL)
            assert await until(lambda: not os.path.exists(server.workdir), 10)
            assert server.proc.returncode == -signal.SIGKILL  # reaped
            again = await warm.acquire(sys.executable)
            assert again.server is not None and again.server is not server
            again.release()
            return server.proc.pid, server.workdir
        finally:
            await warm.close()

    pid, _workdir = asyncio.run(scenario())
    assert not os.path.exists(f"/proc/{pid}")
    assert [t for t in told if "ended (killed by signal 9): the next profile starts a new one" in t], told
    assert fork_servers() == []


def test_closing_while_a_fork_server_starts_ends_it_without_waiting_for_torch(tmp_path: Path) -> None:
    """The language server shuts down while a warm fork server still imports torch: the
    start is given up at once (its process ended), and the job that waited for it gets none
    and starts its passes as it can."""

    async def scenario() -> tuple[Lease, list[int]]:
        warm = WarmForks(lambda _text: None)
        acquiring = asyncio.ensure_future(warm.acquire(sys.executable))
        assert await until(lambda: bool(fork_servers(os.getpid())), 30)  # importing torch now
        starting = fork_servers(os.getpid())
        await warm.close()
        return await acquiring, starting

    lease, starting = asyncio.run(scenario())
    assert lease.server is None
    assert all(gone(pid) for pid in starting)
