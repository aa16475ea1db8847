"""A retry that reaches another replica before the person answered joins the question already waiting: two
real replicas (subprocesses, HTTP on 127.0.0.1) on one real PostgreSQL, clients that cannot elicit in both
eras. Asked on A, retried on B (and again on A and B): one item in every console of that principal; one answer
lets exactly one retry pass; another principal's retry of the same arguments posts its own item."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from sentinel_mcp.core.call_meta import SESSION_KEY
from tests.cluster.test_console_retry_replicas import blocked, replica_config
from tests.console.console_rig import (ALICE, BOB, Browser, http_sentinel, items_of, mcp_client, signed_in,
                                       text)

pytestmark = pytest.mark.timeout(240)


async def items_once_settled(person: Browser, name: str, count: int) -> list[str]:
    """The items waiting with ``name`` once ``count`` of them are listed (another replica's item appears at
    its next poll); then a few more polls to see that no further one arrives (bounded by count)."""
    for _ in range(300):  # bounded
        page = await person.page("/console/inbox")
        if name in page and len(items_of(page)) >= count:
            break
        await asyncio.sleep(0.1)
    seen: set[str] = set()
    for _ in range(12):  # a few poll periods of the cluster inbox (0.5 s): a second item would show by then
        seen |= set(items_of(await person.page("/console/inbox")))
        await asyncio.sleep(0.1)
    return sorted(seen)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_retry_on_another_replica_joins_the_waiting_question(tmp_path: Path, pg_url: str,
                                                                     mode: str) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    with http_sentinel(replica_config(a_dir, pg_url, "replica-a")) as (base_a, _pa), \
            http_sentinel(replica_config(b_dir, pg_url, "replica-b")) as (base_b, _pb):
        async with signed_in(base_a, ALICE) as alice_a, signed_in(base_b, ALICE) as alice_b, \
                signed_in(base_b, BOB) as bob_b, mcp_client(base_a, ALICE, mode) as ca, \
                mcp_client(base_b, ALICE, mode) as cb, mcp_client(base_b, BOB, mode) as bob_c:
            args = {"name": f"j-{uuid.uuid4().hex[:6]}"}
            first = await blocked(ca, args, None)
            assert first.is_error and "/console/inbox" in text(first), text(first)
            session = (first.meta or {})[SESSION_KEY]
            # retried on B before anyone answered, then on A and B again: still the one question
            for c in (cb, ca, cb):
                again = await blocked(c, args, session)
                assert again.is_error and "/console/inbox" in text(again), text(again)
            [item] = await items_once_settled(alice_b, args["name"], 1)
            assert await items_once_settled(alice_a, args["name"], 1) == [item]
            # another principal's call with the same arguments is its own question, not alice's
            bob_first = await blocked(bob_c, args, None)
            assert bob_first.is_error, text(bob_first)
            [bob_item] = await items_once_settled(bob_b, args["name"], 1)
            assert bob_item != item and item not in await bob_b.page("/console/inbox")

            # one answer (given on B for the question asked on A): one retry passes, the next is asked again
            assert (await alice_b.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 303
            passed = await blocked(cb, args, session)
            assert not passed.is_error and args["name"] in text(passed), text(passed)
            once_more = await blocked(ca, args, session)
            assert once_more.is_error and "/console/inbox" in text(once_more), text(once_more)
