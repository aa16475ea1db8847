"""The official a2a-sdk client against Sentinel's server. a2a-sdk cannot be installed in the project venv
(its import name is ``a2a``, like this package), so the client runs in another venv: set
``A2A_SDK_PYTHON`` to its interpreter (``python -m venv /tmp/a2a-venv && /tmp/a2a-venv/bin/pip install a2a-sdk httpx``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from a2a_rig import open_port, serve

from a2a.settings import A2ASettings

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
