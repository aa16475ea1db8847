"""'If the user complains about cancelled flights in a reservation, the agent can offer a certificate as a
gesture ...': one certificate for the cancelled flight, whatever the number of conversations asking, at once
or one after another. Through the real gateway, over the permissive airline server (its writes check
nothing) in a subprocess, real SWI-Prolog and SQLite; a user who says yes to everything. QDGWHB:
isabella_anderson_9682 (silver), business, one passenger, a flight cancelled. (Before, each conversation sent
one. That calls at the same time take turns is shown deterministically by
tests/gateway/test_kept_writes_take_turns.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.retail.retail_rig import AnsweringUser, conversation, text_of

from sentinel_mcp.app.runtime import running_gateway
from tests.airline.airline_config import permissive_airline_config

pytestmark = pytest.mark.timeout(180)

USER = "isabella_anderson_9682"
ANSWERS = [("Which of your reservations", "QDGWHB"), ("What happened to the flights", "cancelled_flight"),
           ("Send this travel certificate?", True)]


def _config(data_dir: Path) -> Any:
    return permissive_airline_config(data_dir, USER)


async def test_one_certificate_however_many_conversations_ask(tmp_path: Path) -> None:
    async with running_gateway(_config(tmp_path)) as rt:
        results: list[Any] = []

        async def ask() -> None:
            async with conversation(rt, AnsweringUser(ANSWERS)) as c:
                cert = {"user_id": USER, "amount": 100}
                results.append(await c.call_tool("airline__send_certificate", cert))

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(ask)
        assert [r.is_error for r in results].count(False) == 1, [text_of(r)[:300] for r in results]
        await ask()  # and later, in another conversation
        assert results[-1].is_error and "already" in text_of(results[-1]), text_of(results[-1])
