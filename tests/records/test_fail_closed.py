"""A gateway whose audit log cannot be written refuses guarded calls, says why, and recovers by itself."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .rig import (
    AUTH,
    executed,
    health,
    instance_audit_file,
    kill_tree,
    public_health,
    start_http,
    write_config,
)

pytestmark = pytest.mark.skipif(shutil.which("chattr") is None, reason="needs chattr for a read-only file")


def wait_health(port: int, status: str, timeout: float = 15.0) -> dict:
    deadline = time.monotonic() + timeout
    body = health(port)
    while body.get("status") != status and time.monotonic() < deadline:
        time.sleep(0.1)
        body = health(port)
    return body


async def test_read_only_then_deleted_audit_log(tmp_path: Path) -> None:
    proc, port = start_http(write_config(tmp_path))
    store = instance_audit_file(tmp_path / "data" / "sentinel.db")  # this gateway's own log
    files = [str(store), str(store) + "-wal"]
    try:
        async with (
            httpx2.AsyncClient(timeout=60, headers=AUTH) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
        ):
            assert (await c.call_tool("rec__do", {"mark": "a1"})).content[0].text == "done:a1"

            if subprocess.run(["chattr", "+i", *files], capture_output=True).returncode != 0:
                pytest.skip("the file system has no immutable attribute")
            try:
                for token in ("a2", "a3"):
                    refused = await c.call_tool("rec__do", {"mark": token})
                    text = refused.content[0].text
                    assert refused.is_error and (
                        "cannot write its records" in text or "could not record" in text
                    )
                body = health(port)
                assert body["status"] == "degraded" and "audit" in body["cause"], body
                assert body["storage"]["audit"]["ok"] is False
                assert public_health(port) == {"status": "degraded"}  # no cause, no file path without a token
            finally:
                subprocess.run(["chattr", "-i", *files], capture_output=True)
            assert wait_health(port, "ok")["status"] == "ok"  # noticed without any call
            assert (await c.call_tool("rec__do", {"mark": "a4"})).content[0].text == "done:a4"

            store.unlink()
            Path(files[1]).unlink(missing_ok=True)
            refused = await c.call_tool("rec__do", {"mark": "a5"})
            assert refused.is_error and "deleted or replaced" in refused.content[0].text
            assert wait_health(port, "ok")["status"] == "ok" and store.exists()  # re-created by itself
            assert (await c.call_tool("rec__do", {"mark": "a6"})).content[0].text == "done:a6"
    finally:
        kill_tree(proc)
    # nothing was run that was not first recorded
    assert executed(tmp_path) == ["a1", "a4", "a6"]


async def test_a_fact_store_that_cannot_be_written_denies_and_recovers(tmp_path: Path) -> None:
    import sys

    from sentinel_mcp.config import parse_config
    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.paths import RULEBASES_DIR
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    from .rig import RECORDER

    config = parse_config(
        {
            "mcpServers": {
                "rec": {
                    "command": sys.executable,
                    "args": [RECORDER],
                    "env": {"RECORDER_LOG": str(tmp_path / "executed.log")},
                }
            },
            "sentinel": {
                "data_dir": str(tmp_path / "data"),
                "builtins": [],
                "rulebases": [str(RULEBASES_DIR / "default.pl")],
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )
    facts = facts_db_path(config)
    async with running_gateway(config) as rt:
        async with Client(rt.front.server) as c:
            assert (await c.call_tool("rec__do", {"mark": "f1"})).content[0].text == "done:f1"
            # shared by the gateways on this data dir: a rollback journal (no -wal, no -shm)
            files = [str(p) for p in (facts, facts.with_name(facts.name + "-journal")) if p.exists()]
            assert not facts.with_name(facts.name + "-shm").exists()
            facts_db = rt.gateway.guard.store.db
            if subprocess.run(["chattr", "+i", *files], capture_output=True).returncode != 0:
                pytest.skip("the file system has no immutable attribute")
            try:
                # a write to the fact store fails (the guard would learn a fact, an answer would be stored)
                assert not await facts_db.probe()  # what a failed fact write does to the store's health
                refused = await c.call_tool("rec__do", {"mark": "f2"})
                assert refused.is_error and "facts" in refused.content[0].text, refused.content[0].text
            finally:
                subprocess.run(["chattr", "-i", *files], capture_output=True)
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline:  # probed back to health by the next calls
                result = await c.call_tool("rec__do", {"mark": "f3"})
                if not result.is_error:
                    break
                await anyio.sleep(0.3)
            assert result.content[0].text == "done:f3"
    assert executed(tmp_path) == ["f1", "f3"]


async def test_a_consents_store_that_fails_denies_personal_reads_only(tmp_path: Path) -> None:
    import sys

    from sentinel_mcp.config import parse_config
    from sentinel_mcp.app.runtime import running_gateway

    from .rig import RECORDER

    config = parse_config(
        {
            "mcpServers": {
                "rec": {
                    "command": sys.executable,
                    "args": [RECORDER],
                    "env": {"RECORDER_LOG": str(tmp_path / "executed.log")},
                }
            },
            "sentinel": {
                "data_dir": str(tmp_path / "data"),
                "builtins": [],
                "personal": {"rec__echo": "messages"},
            },
        },
        source="<test>",
        base_dir=tmp_path,
    )
    consents = config.store_path.parent / "consents.db"
    async with running_gateway(config) as rt:
        async with Client(
            rt.front.server
        ) as c:  # cannot elicit: a consent question comes back as a blocked call
            asked = await c.call_tool("rec__echo", {"text": "hi"})
            assert asked.is_error and "consent" in asked.content[0].text, asked.content[0].text
            consents.unlink()  # the store goes away under the running gateway
            denied = await c.call_tool("rec__echo", {"text": "hi"})
            assert denied.is_error and "could not record" in denied.content[0].text, denied.content[0].text
            assert "consents" in denied.content[0].text
            assert (await c.call_tool("rec__do", {"mark": "c1"})).content[0].text == "done:c1"  # others go on
            again = await c.call_tool("rec__echo", {"text": "hi"})  # re-created by itself: asked again
            assert again.is_error and "consent" in again.content[0].text and consents.exists()
            assert "hi" not in [b.text for b in again.content]
    assert executed(tmp_path) == ["c1"]
