"""The console inbox across two real replicas (subprocesses, HTTP on 127.0.0.1) on one real PostgreSQL: a call
held on replica A waits in the inbox of its principal on replica B too; the answer given on B lets A's held
call go on; it counts once (a second answer, on either replica, finds no question; racing answers on both
replicas: exactly one counts); another principal neither sees nor answers it; a denial given on B ends A's
call."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from tests.console.console_rig import (ALICE, BOB, Browser, answer_fields, console_config, csrf_of,
                                       http_sentinel, items_of, mcp_client, signed_in, text)

pytestmark = pytest.mark.timeout(240)
KEY = "cluster-inbox-test-seal-key-0123456789abcdef"
RACES = 3  # answer races on both replicas, bounded by count


async def wait_for(person: Browser, name: str) -> tuple[str, str]:
    """The page and the one item waiting, once it is the call with this argument (the previous round's item
    leaves another replica's page at its next poll)."""
    for _ in range(300):  # bounded
        page = await person.page("/console/inbox")
        items = items_of(page)
        if len(items) == 1 and name in page:
            return page, items[0]
        await asyncio.sleep(0.1)
    raise AssertionError(f"{name} never waited alone in the inbox")


def replica_config(tmp: Path, url: str, name: str) -> Path:
    cfg = console_config(tmp, hold_when="always", hold_seconds=60)
    body = json.loads(cfg.read_text())
    body["sentinel"].update(store=url, cluster={"replica": name, "seal_key": KEY})
    cfg.write_text(json.dumps(body))
    return cfg


async def test_a_question_held_on_one_replica_is_answered_on_the_other_once(tmp_path: Path,
                                                                             pg_url: str) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    with http_sentinel(replica_config(a_dir, pg_url, "replica-a")) as (base_a, _pa), \
            http_sentinel(replica_config(b_dir, pg_url, "replica-b")) as (base_b, _pb):
        async with signed_in(base_b, ALICE) as alice_b, signed_in(base_a, ALICE) as alice_a, \
                signed_in(base_b, BOB) as bob_b, mcp_client(base_a, ALICE) as c:
            # held on A; shown on B (and on A)
            args = {"name": f"a-{uuid.uuid4().hex[:6]}"}
            call = asyncio.create_task(c.call_tool("tb__delete_thing", args))
            page = await alice_b.wait_items(1)
            [item] = items_of(page)
            assert args["name"] in page and "tb__delete_thing" in page
            assert item in items_of(await alice_a.wait_items(1))
            # bob, on B: does not see it, cannot answer it by its id
            bob_page = await bob_b.page("/console/inbox")
            assert item not in bob_page and args["name"] not in bob_page
            fields = {"decision": "approve", **answer_fields(page, item)}
            r = await bob_b.post(f"/console/inbox/{item}", fields, csrf=csrf_of(bob_page))
            assert r.status_code == 404
            assert not call.done()
            # alice answers on B: the call held on A goes on, the tool runs
            r = await alice_b.post(f"/console/inbox/{item}", fields)
            assert r.status_code == 303
            result = await asyncio.wait_for(call, 60)
            assert not result.is_error and args["name"] in text(result)
            # counted once: on either replica the question is gone
            for person in (alice_b, alice_a):
                r = await person.post(f"/console/inbox/{item}", fields)
                assert r.status_code == 404

            # racing answers on both replicas: exactly one counts, the call runs once
            for n in range(RACES):
                args = {"name": f"race-{n}-{uuid.uuid4().hex[:6]}"}
                call = asyncio.create_task(c.call_tool("tb__delete_thing", args))
                page_b, item = await wait_for(alice_b, args["name"])
                page_a, on_a = await wait_for(alice_a, args["name"])
                assert on_a == item
                posts = await asyncio.gather(
                    alice_a.post(f"/console/inbox/{item}",
                                 {"decision": "approve", **answer_fields(page_a, item)}),
                    alice_b.post(f"/console/inbox/{item}", {"decision": "deny"}))
                codes = sorted(p.status_code for p in posts)
                assert codes == [303, 404], codes
                result = await asyncio.wait_for(call, 60)
                approved = posts[0].status_code == 303
                assert result.is_error != approved, (approved, text(result))

            # a denial given on B ends the call held on A
            args = {"name": f"deny-{uuid.uuid4().hex[:6]}"}
            call = asyncio.create_task(c.call_tool("tb__delete_thing", args))
            _page, item = await wait_for(alice_b, args["name"])
            assert (await alice_b.post(f"/console/inbox/{item}", {"decision": "deny"})).status_code == 303
            result = await asyncio.wait_for(call, 60)
            assert result.is_error and "declined" in text(result)
            assert items_of(await alice_b.page("/console/inbox")) == []
