"""An endpoint that answers a byte at a time is held to the backend's ``timeout`` (seconds per attempt).

Found by red team 'swarm' 4: the timeout bounded each read, not the attempt, so an endpoint that sent its
answer a byte a second (slower than any model, within each read's timeout) held one attempt for as long as it
liked: a build's model call ran until the build's wall clock (up to 90 minutes, the one build slot held), and
the phone agent's, which shares the backend, as long as the agent waited. Now an attempt ends at the timeout
whatever arrives meanwhile (a timeout: retried, then a model error)."""

from __future__ import annotations

import asyncio

import pytest
from tests.swarm.support.scripted_model import ScriptedModelServer
from tests.swarm.support.swarm_fixtures import FAST_OPENAI

from sentinel_mcp.swarm.backends.base import ModelError, ModelRequest
from sentinel_mcp.swarm.backends.openai_http import OpenAIBackend, OpenAISettings

pytestmark = pytest.mark.timeout(60)


async def test_a_dripping_answer_ends_at_the_attempts_timeout(model_server: ScriptedModelServer) -> None:
    model_server.script("planner", *[{"drip": 0.1}] * 3)
    backend = OpenAIBackend(OpenAISettings(**(FAST_OPENAI | {"timeout": 0.5})), model_server.url, "test-key")
    errors: list[str] = []
    try:
        with pytest.raises(ModelError, match="timeout"):
            # each attempt's answer would take minutes to arrive, a byte every 0.1 s
            await asyncio.wait_for(
                backend.complete(
                    ModelRequest(role="planner", system="You are the Planner.", prompt="plan"), errors.append
                ),
                30,
            )
    finally:
        await backend.aclose()
    assert len(errors) == 3 and all("timeout" in e for e in errors), errors
    assert all(r.get("dripped") for r in model_server.calls("planner"))


async def test_a_slow_but_timely_answer_still_arrives(model_server: ScriptedModelServer) -> None:
    model_server.script("planner", {"drip": 0.0005, "content": '{"ok": true}'})
    backend = OpenAIBackend(OpenAISettings(**(FAST_OPENAI | {"timeout": 30})), model_server.url, "test-key")
    try:
        reply = await backend.complete(
            ModelRequest(role="planner", system="You are the Planner.", prompt="plan"), lambda _m: None
        )
    finally:
        await backend.aclose()
    assert reply.text == '{"ok": true}'
