"""completion/complete routes by the catalog as prompts/get and resources/read do: one for a prompt or a
resource template of an upstream still making its first connection waits for it too (first_connections.py),
counted among its principal's requests, and is answered by that upstream. Only upstreams the principal may
read are waited for: one whose server it may not read is refused at once, as a name nobody has, with no wait
that would tell of that server or its state.

A real gateway in-process, the stateful upstream (it suggests whom its session is logged in as) behind a
gate that lets it start only when the test says (gated_toolbox.py): no clock."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import PromptReference, ResourceTemplateReference

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.port import NotInCatalog
from sentinel_mcp.identity.principal import Principal

from .helpers import make_config
from .test_first_connection_calls import gated, wait_until

pytestmark = pytest.mark.timeout(120)
PROMPT = PromptReference(type="ref/prompt", name="st__greeting")
TEMPLATE = ResourceTemplateReference(type="ref/resource", uri="state://{what}")
ARGUMENT = {"name": "what", "value": ""}


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_completion_during_the_first_connection_waits_for_it(data_dir, tmp_path, mode):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"st": gated(gate, env={"GATED_SERVER": "stateful_upstream.py"})})
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server, mode=mode) as c:
        got: dict[str, Any] = {}

        async def complete(key: str, ref: Any) -> None:
            try:
                got[key] = (await c.complete(ref, ARGUMENT)).completion.values
            except MCPError as e:
                got[key] = e

        async with anyio.create_task_group() as tg:
            tg.start_soon(complete, "prompt", PROMPT)
            tg.start_soon(complete, "template", TEMPLATE)
            tg.start_soon(complete, "nobody's", PromptReference(type="ref/prompt", name="st__nothing"))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 3 or got)
            assert got == {} and rt.manager.upstreams["st"].state == "connecting"
            gate.touch()
        assert got["prompt"] == ["nobody"] and got["template"] == ["nobody"], got
        assert isinstance(got["nobody's"], MCPError), got  # not there after the wait: not found
        assert rt.gateway.calls_in_flight.get("owner", 0) == 0


async def test_a_principal_that_may_not_read_the_upstream_does_not_wait(data_dir, tmp_path):
    gate = tmp_path / "gate"
    cfg = make_config(data_dir, {"st": gated(gate, env={"GATED_SERVER": "stateful_upstream.py"})})
    async with running_gateway(cfg, startup_wait=0.1) as rt:
        outsider = Principal("outsider", "token", upstreams=("other",))
        try:
            for ref in (PROMPT, TEMPLATE):
                with anyio.fail_after(30), pytest.raises(NotInCatalog):  # (the wait's cap is 60 s)
                    await rt.gateway.complete(ref, ARGUMENT, None, outsider)
            assert rt.manager.upstreams["st"].state == "connecting"  # answered while it still connected
        finally:
            gate.touch()
        reader = Principal("reader", "token", upstreams=("st",))
        with anyio.fail_after(60):
            done = await rt.gateway.complete(PROMPT, ARGUMENT, None, reader)
        assert done.completion.values == ["nobody"]
