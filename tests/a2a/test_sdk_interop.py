"""The official a2a-sdk client against Sentinel's server. a2a-sdk (import name ``a2a``; Sentinel's own A2A code
is ``sentinel_mcp.a2a``) and its dependencies stay out of the project venv: the client runs in another venv, set
``A2A_SDK_PYTHON`` to its interpreter::

    python -m venv /tmp/a2a-venv && /tmp/a2a-venv/bin/pip install 'a2a-sdk[http-server]' httpx uvicorn
    A2A_SDK_PYTHON=/tmp/a2a-venv/bin/python .venv/bin/python -m pytest -q tests/a2a/test_sdk_interop.py
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from a2a_rig import open_port, serve

from sentinel_mcp.a2a.settings import A2ASettings

SDK_PYTHON = os.environ.get("A2A_SDK_PYTHON")
SCRIPT = Path(__file__).parent / "interop" / "sdk_client.py"


@pytest.mark.timeout(90)
@pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python that has a2a-sdk installed")
async def test_a2a_sdk_client_drives_sentinel():
    async with open_port() as port, serve(port, A2ASettings()) as srv:
        proc = await asyncio.create_subprocess_exec(SDK_PYTHON, str(SCRIPT), srv.base_url, cwd="/",
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await proc.communicate()
        assert proc.returncode == 0, (out + err).decode()[-3000:]
        assert b"a2a-sdk interop: ok" in out


@pytest.mark.timeout(90)
@pytest.mark.skipif(not SDK_PYTHON, reason="set A2A_SDK_PYTHON to a Python that has a2a-sdk and uvicorn installed")
async def test_sentinel_verifies_and_calls_an_a2a_sdk_agent():
    import socket

    import httpx2

    from sentinel_mcp.a2a.discovery import txt_record, verify_peer
    from sentinel_mcp.a2a.peer_client import build_message, send_message

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(SDK_PYTHON, str(SCRIPT.with_name("sdk_server.py")), str(free),
                                                cwd="/", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        async with httpx2.AsyncClient(timeout=5) as http:
            for _ in range(200):
                try:
                    if (await http.get(f"http://127.0.0.1:{free}/.well-known/agent-card.json")).status_code == 200:
                        break
                except httpx2.HTTPError:
                    await asyncio.sleep(0.1)
            peer = await verify_peer("sdk", ["127.0.0.1"], free, txt_record(A2ASettings()), http)
        assert peer.card.name == "sdk-reference-agent"
        reply = await send_message(peer.rpc_url, build_message(data={"type": "sensor_request", "sensor": "x"}))
        task = reply["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task["artifacts"][0]["parts"][0]["text"] == "sdk agent got 1 part(s)"
    finally:
        proc.terminate()
        await proc.wait()
