"""A phone agent run on the local model (the ``llm`` built-in on a real GGUF) stops, and its queued model call
computes nothing, once the token that started the run is rotated.

The run's credential checks were tested only with the scripted OpenAI-compatible server: the local
backend's model call (``swarm/backends/llm_tool.py``: ``llm__llm_generate`` through the gateway, under the
run's check) was not, and that call waited in the model's queue with no check at all and then ran (red team
"rt-llm"). Here the call waits behind another party's turn of the model, the owner's token file is replaced,
and the turn is released: the model never runs for the agent, the call says ``credentials_lapsed``, the run
ends so, and nothing reaches the phone beyond the screen it read first.

Real parts: the gateway with the device (simulated phone), agent and llm built-ins, the tiny random GGUF
loaded by llama.cpp, the real fair turns of the model (another party's turn held in them: deterministic), the
owner's token followed from its file and really replaced, and the real SQLite audit log.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")

from tests.agent.audit_rows import audit_rows
from tests.support.tiny_gguf import CHATML_TEMPLATE, write_tiny_gguf

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.credential_stamp import CredentialCheck
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.followed_token import followed_owner_token
from tests.support.eventually import until

pytestmark = pytest.mark.timeout(180)


async def test_a_local_model_run_stops_when_its_token_is_rotated_while_its_model_call_waits(
    tmp_path: Path,
) -> None:
    model = write_tiny_gguf(tmp_path / "tiny-chatml.gguf", chat_template=CHATML_TEMPLATE)
    keys = tmp_path / "keys"
    source, token = followed_owner_token(keys)
    tokens = TokenResolver()
    owner = Principal("owner", "token")
    tokens.follow(owner, source)
    check = CredentialCheck(Authenticator([tokens]), Credentials(bearer=token), owner)
    data = tmp_path / "data"
    config = parse_config({"mcpServers": {}, "sentinel": {
        "data_dir": str(data), "builtins": ["device", "agent", "llm"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False},
        "llm": {"model": str(model), "n_ctx": 4096, "n_threads": 1, "seed": 3},
        "agent": {"backend": "local"}}}, source="<test>", base_dir=data)
    async with running_gateway(config) as rt:
        cortex = rt.services.cortex
        assert cortex is not None
        await cortex.ready()
        engine = cortex.engine
        await engine.load()
        held = await engine._wait_turn("bob")  # another party's turn holds the model
        outcome: list[Any] = []

        async def run() -> None:
            outcome.append(await rt.gateway.invoke(
                "agent__agent_run", {"goal": "go to the home screen"}, session_id="s-1", client="t",
                origin="client", recheck=check))

        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await until(lambda: sum(engine.turns.waiting().values()) == 1)  # the run's model call waits
            waiting = dict(engine.turns.waiting())
            owner_token.replace(keys)
            engine.turns.done(held)
    # in the turns of the principal who started the run: its fair share, not Sentinel's own party
    assert waiting == {"owner": 1}, waiting
    ran = [r.party for r in engine.history]
    assert ran == [], f"the model ran for a rotated token's call: {ran}"
    result = getattr(outcome[0], "result", None)
    assert result is not None, outcome
    status = (result.structured_content or {}).get("status")
    assert status == "credentials_lapsed", result
    device = audit_rows(data, "tool", "tool LIKE 'device__%' ORDER BY id")
    assert device == [("device__screen_read",)], device
    lapsed = dict(audit_rows(data, "tool, principal", "outcome = 'credentials_lapsed' ORDER BY id"))
    # the model call's row (the llm built-in stopped it; the agent makes its model calls as the run's
    # principal, as a build's are its caller's) and the run's (it ended for it): one each
    assert lapsed == {"llm__llm_generate": "owner", "agent__agent_run": "owner"}, lapsed
