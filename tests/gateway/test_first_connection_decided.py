"""A call that waited for its upstream's first connection (first_connections.py) is decided by the guard as
any call is, and its record says by which rulebase: the one in charge when it was decided, not the one in
charge when it came (a reload during the wait: up to a minute).

A real gateway over a real stdio upstream that answers only once the test opens its gate (gated_toolbox.py);
real SWI-Prolog, the audit log read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

from .helpers import make_config
from .test_first_connection_calls import call_later, gated, text, wait_until

pytestmark = pytest.mark.timeout(120)

DENIED_NOW = "guard(tb__echo, [text = _], require(fail, 'the policy now refuses echo')).\n"


async def test_a_rulebase_reloaded_during_the_wait_decides_the_call_and_its_record(data_dir: Path,
                                                                                  tmp_path: Path) -> None:
    gate, lock = tmp_path / "gate", data_dir / "lock.pl"
    data_dir.mkdir(parents=True, exist_ok=True)
    lock.write_text("% nothing yet\n")
    cfg = make_config(data_dir, {"tb": gated(gate)}, rulebases=[str(RULEBASES_DIR / "default.pl"), str(lock)])
    async with running_gateway(cfg, startup_wait=0.1) as rt, Client(rt.front.server) as c:
        got: dict[str, Any] = {}
        before = rt.gateway.guard.version
        async with anyio.create_task_group() as tg:
            tg.start_soon(call_later(c, "tb__echo", got, text="x"))
            await wait_until(lambda: rt.gateway.calls_in_flight.get("owner", 0) == 1 or got)
            assert got == {}
            lock.write_text(DENIED_NOW)
            assert await rt.gateway.guard.rulebases.reload("test")
            after = rt.gateway.guard.version
            assert after != before
            gate.touch()
        assert got["tb__echo"].is_error and "the policy now refuses echo" in text(got["tb__echo"])
        rows = [r for r in await rt.audit.read(tail=20) if r.get("tool") == "tb__echo"]
    assert [r.get("decision") for r in rows] == ["deny"], rows
    assert rows[0].get("policy_version") == after, (before, after, rows)
