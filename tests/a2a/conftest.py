"""Fixtures of the A2A tests; the rig itself is in ``a2a_rig.py``."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx2
import pytest

from tests.a2a.a2a_rig import Served, open_port, serve

from sentinel_mcp.a2a.settings import A2ASettings


@pytest.fixture
async def rig() -> AsyncIterator[Served]:
    async with open_port() as port, serve(port, A2ASettings(name="sentinel-test")) as served:
        yield served


@pytest.fixture
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(timeout=30, headers={"A2A-Version": "1.0"}) as c:
        yield c


