"""An answer given in the console for a call that was *not* held (the client was told "call again") is used by
the retry on any replica, exactly once: two real replicas (subprocesses, HTTP on 127.0.0.1) on one real
PostgreSQL. Answered on A, the retry lands on B and passes (provenance ``user``); a second retry, on A or on
B, is asked again; a retry with other arguments, or by another principal, does not use it; both replicas'
consoles list the answer as waiting for the retry until it is used."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest

from sentinel_mcp.core.call_meta import SESSION_KEY
from tests.console.console_rig import (ALICE, BOB, Browser, console_config, http_sentinel, items_of,
                                       mcp_client, signed_in, text)

pytestmark = pytest.mark.timeout(240)
KEY = "cluster-retry-test-seal-key-0123456789abcdef"


def replica_config(tmp: Path, url: str, name: str) -> Path:
    cfg = console_config(tmp, hold_when="never")  # nothing is held: the client is told to call again
    body = json.loads(cfg.read_text())
    body["sentinel"].update(store=url, cluster={"replica": name, "seal_key": KEY})
    cfg.write_text(json.dumps(body))
    return cfg


def answered_list(page: str) -> str:
    start = page.find('<ul class="answered">')
    return "" if start < 0 else page[start:page.index("</ul>", start)]


async def until(person: Browser, shown: bool, what: str) -> str:
    """The inbox page once ``what`` is (or is no longer) in its answered list (another replica's at its next
    poll)."""
    page = ""
    for _ in range(300):  # bounded
        page = await person.page("/console/inbox")
        if (what in answered_list(page)) == shown:
            return page
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what} {'never' if shown else 'still'} listed as answered: {answered_list(page)}")


async def blocked(c: Any, args: dict[str, str], session: str | None) -> Any:
    return await c.call_tool("tb__delete_thing", args, meta={SESSION_KEY: session} if session else None)


async def test_an_answer_for_a_call_again_is_used_once_by_a_retry_on_any_replica(tmp_path: Path,
                                                                               pg_url: str) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    with http_sentinel(replica_config(a_dir, pg_url, "replica-a")) as (base_a, _pa), \
            http_sentinel(replica_config(b_dir, pg_url, "replica-b")) as (base_b, _pb):
        async with signed_in(base_a, ALICE) as alice_a, signed_in(base_b, ALICE) as alice_b, \
                signed_in(base_b, BOB) as bob_b, mcp_client(base_a, ALICE, "auto") as ca, \
                mcp_client(base_b, ALICE, "auto") as cb, mcp_client(base_b, BOB, "auto") as bob_c:
            args = {"name": f"r-{uuid.uuid4().hex[:6]}"}
            first = await blocked(ca, args, None)
            assert first.is_error and "/console/inbox" in text(first), first
            session = (first.meta or {})[SESSION_KEY]
            page = await alice_a.wait_items(1)
            [item] = items_of(page)
            assert args["name"] in page
            assert (await alice_a.post(f"/console/inbox/{item}", {"decision": "approve"})).status_code == 303
            # both replicas' consoles list it as waiting for the retry; another principal's does not
            await until(alice_a, True, "tb__delete_thing")
            await until(alice_b, True, "tb__delete_thing")
            assert "tb__delete_thing" not in answered_list(await bob_b.page("/console/inbox"))

            # other arguments (on B), and another principal in the same conversation or its own: not passed
            other = await blocked(cb, {"name": "someone-else"}, session)
            assert other.is_error, text(other)
            for meta_session in (session, None):
                try:
                    theirs = await blocked(bob_c, args, meta_session)
                    assert theirs.is_error, text(theirs)
                except Exception as e:  # noqa: BLE001 - refused outright is as good
                    assert "session" in str(e).lower(), e
            await until(alice_b, True, "tb__delete_thing")  # still there for alice's own retry

            # the retry lands on B: it passes, once
            again = await blocked(cb, args, session)
            assert not again.is_error and args["name"] in text(again), text(again)
            for c in (ca, cb):  # a second retry, on either replica, is asked again
                once = await blocked(c, args, session)
                assert once.is_error and "/console/inbox" in text(once), text(once)
            # gone from both lists (A's own item learns at its next poll that B used it)
            await until(alice_a, False, args["name"])
            for person in (alice_a, alice_b):
                assert "tb__delete_thing" not in answered_list(await until(person, False, "tb__delete_thing"))

            # the call that ran on B carries the person's answer (provenance user), in B's chain of the audit
            with psycopg.connect(pg_url) as conn:
                rows = conn.execute(
                    "SELECT chain, proof, event, reason FROM audit WHERE tool = 'tb__delete_thing' "
                    "AND decision = 'allow' AND arguments LIKE %s",
                    (f"%{args['name']}%",),
                ).fetchall()
            # exactly one allowed decision, made on B, on the user's confirmation
            decided = [(chain, reason) for chain, _proof, event, reason in rows if event == "decision"]
            assert decided == [("replica-b", "confirmed by the user")], rows
