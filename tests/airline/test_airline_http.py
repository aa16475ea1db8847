"""The airline example serving streamable HTTP (`--http PORT`) as a real subprocess on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import httpx2
import pytest
from mcp import Client

from sentinel_mcp.paths import PROJECT_ROOT
from tests.conftest import free_port

pytestmark = pytest.mark.timeout(60)


def wait_until_listening(process: subprocess.Popen[bytes], port: int, deadline_s: float = 30.0) -> None:
    # A generous deadline only for start-up on a shared machine, not a timing assertion.
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"airline --http exited early: {process.stderr.read().decode()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("airline --http never started listening")


@pytest.fixture
def airline_http() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "examples.airline", "--http", str(port)],
                               cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        wait_until_listening(process, port)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process.stderr.close()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_http_upstream_serves_tools_reads_writes_and_checks(airline_http: str, mode: str) -> None:
    async with Client(airline_http, mode=mode) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert len(tools) == 14
        assert tools["cancel_reservation"].annotations.destructive_hint is True
        assert tools["get_user_details"].annotations.read_only_hint is True

        user = await client.call_tool("get_user_details", {"user_id": "mia_li_3668"})
        assert not user.is_error and user.structured_content["membership"] == "gold"

        refused = await client.call_tool("update_reservation_passengers",
                                         {"reservation_id": "AIXC49", "passengers": []})
        assert refused.is_error and refused.content[0].text == "Error: Number of passengers does not match"

        renamed = [{"first_name": "Amelia", "last_name": "Ahmed-Li", "dob": "1957-03-21"}]
        changed = await client.call_tool("update_reservation_passengers",
                                         {"reservation_id": "AIXC49", "passengers": renamed})
        assert not changed.is_error and changed.structured_content["passengers"] == renamed

    # the change lives in the server process, so a second connection sees it
    async with Client(airline_http, mode=mode) as client:
        seen = await client.call_tool("get_reservation_details", {"reservation_id": "AIXC49"})
        assert seen.structured_content["passengers"] == renamed


async def test_http_refuses_a_foreign_host_header(airline_http: str) -> None:
    # DNS-rebinding protection of the SDK is on for a 127.0.0.1 bind.
    async with httpx2.AsyncClient() as http:
        response = await http.post(
            airline_http,
            headers={"Host": "evil.example", "Accept": "application/json"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    assert response.status_code == 421
