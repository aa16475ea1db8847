"""The engine's atom table does not grow with what clients send. Through the real gateway, a guarded call
denied over and over with a new text each time (in an argument the guard reads, an extra key's value, a
nested object, a key of its own, with quotes, backslashes and non-ASCII) leaves no atom behind once atom
garbage collection has run: only the facts a call teaches hold atoms, and those are bounded
(read_sources.py). SWI-Prolog never frees an atom that is still registered, so a text made an atom and left
registered would grow the table by one a call for the life of the process."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.policy.test_reread_replaces import config, write_state

pytestmark = pytest.mark.timeout(240)


def _arguments(kind: str, text: str) -> dict[str, Any]:
    if kind == "extra":
        return {"booking_id": "BK-9", "note": text}
    if kind == "nested":
        return {"booking_id": "BK-9", "note": {"a": [text, {"b": text + "é"}]}}
    return {"booking_id": "BK-9", text: 1}  # a key of its own


@pytest.mark.parametrize("kind", ["extra", "nested", "key"])
async def test_texts_a_client_sends_leave_no_atoms(tmp_path: Path, kind: str) -> None:
    write_state(tmp_path / "state.json", {"BK-1": "confirmed"})
    async with running_gateway(config(tmp_path)) as rt:
        engine = rt.gateway.guard.knowledge.engine

        async def atoms() -> int:
            rows = await engine.run(lambda p: list(p.query("garbage_collect_atoms, statistics(atoms, N)")))
            return int(rows[0]["N"])

        async with Client(rt.front.server, mode="legacy") as c:
            async def calls(batch: int, n: int) -> None:
                for i in range(n):
                    text = f"t{batch}-{i}-x'\"\\ü{i * 7919}"
                    r = await c.call_tool("bk__cancel_booking", _arguments(kind, text))
                    assert r.is_error, r.content[0].text  # BK-9 is not the user's: denied

            await calls(0, 60)  # the paths warmed, the reads the guard makes taught
            before = await atoms()
            await calls(1, 300)
            after = await atoms()
    # some dozens of atoms come and go with the engine's own work (the shared engine, in a run of many tests:
    # +36 seen); one a call would be 300
    assert after - before < 100, (before, after)
