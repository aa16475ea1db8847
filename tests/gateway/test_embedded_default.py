"""What a new user gets from `make run`: the embedded default served over HTTP, how to connect, and a
destructive call that asks before it runs."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitResult

from ..conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(120)


async def test_embedded_default_serves_airline_and_asks_before_a_write(tmp_path):
    port = free_port()
    env = {**os.environ, "SENTINEL_DATA_DIR": str(tmp_path / "state")}
    proc = subprocess.Popen([sys.executable, "-m", "sentinel_mcp", "serve", "--http", f"127.0.0.1:{port}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=True)
    asked: list[str] = []

    async def answer(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        content = {}
        for key, spec in (params.requested_schema or {}).get("properties", {}).items():
            content[key] = (
                True
                if spec.get("type") == "boolean"
                else (spec.get("enum") or [o["const"] for o in spec.get("oneOf", [])] or ["change_of_plan"])[
                    0
                ]
            )
        return ElicitResult(action="accept", content=content)

    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        # the owner's token was generated on this first start; the CLI shows it, as the banner says
        token = subprocess.run(
            [sys.executable, "-m", "sentinel_mcp", "config", "token"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()
        assert len(token) >= 32
        async with httpx2.AsyncClient(timeout=10) as anonymous:
            assert (await anonymous.post(f"http://127.0.0.1:{port}/mcp", json={})).status_code == 401
        http = httpx2.AsyncClient(timeout=60, headers={"Authorization": f"Bearer {token}"})
        async with Client(
            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
            elicitation_callback=answer,
        ) as c:
            names = {t.name for t in (await c.list_tools()).tools}
            assert {
                "airline__cancel_reservation",
                "airline__get_user_details",
                "sentinel__sentinel_facts",
                "device__screen_read",
                "sensors__sensor_read",
                "llm__llm_generate",
            } <= names
            # the traveller's profile is personal: the user consents once ("remember"), then reads just run
            user = await c.call_tool("airline__get_user_details", {"user_id": "mia_li_3668"})
            assert not user.is_error and len(asked) == 1 and "traveller profile" in asked[0]
            again = await c.call_tool("airline__get_user_details", {"user_id": "mia_li_3668"})
            assert not again.is_error and len(asked) == 1
            asked.clear()
            result = await c.call_tool("airline__cancel_reservation", {"reservation_id": "NO6JO3"})
            assert not result.is_error, result.content[0].text
            assert result.structured_content["status"] == "cancelled"
            assert any("NO6JO3" in q for q in asked)
    finally:
        stop_process(proc)
    banner = proc.stderr.read()
    assert "config claude" in banner and f"http://127.0.0.1:{port}/mcp" in banner
    assert token in banner and "config token" in banner  # printed once, on the start that generated it
    audit = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "audit", "--tail", "50"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    cancel_rows = [line for line in audit.splitlines() if "airline__cancel_reservation" in line]
    assert any(" ask " in r for r in cancel_rows) and any(" allow " in r for r in cancel_rows)
