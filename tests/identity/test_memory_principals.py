"""The agent's memory (``memory_store``/``memory_search``/``memory_recent`` of the ``sentinel`` built-in)
belongs
to the principal Sentinel established for the caller: two principals with their own tokens over HTTP (both
eras), each with two conversations, and the local owner over stdio, against a real Sentinel. No principal sees
or finds another's memories, whatever it claims in ``_meta``; secrets are redacted before a memory is stored
and in the audit; a principal that may not reach the memory tools cannot call them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from tests.identity.identity_rig import (
    ALICE,
    BOB,
    CAROL,
    env_for,
    http_client,
    http_sentinel,
    stdio_client,
    text,
    write_config,
)

pytestmark = pytest.mark.timeout(240)
CARD = "4111 1111 1111 1111"  # passes the Luhn check: the redactor masks it
ALICE_NOTE = f"Alice prefers aisle seats; her card is {CARD}"
BOB_NOTE = "Bob always travels with his cello in the cabin"


def data(result) -> dict:  # noqa: ANN001
    assert not result.is_error, text(result)
    return result.structured_content or json.loads(text(result))


def texts(result) -> list[str]:  # noqa: ANN001
    return [m["text"] for m in data(result)["memories"]]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_memories_stay_with_their_principal(tmp_path, mode):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        async with (
            http_client(base, ALICE, mode) as alice1,
            http_client(base, ALICE, mode) as alice2,
            http_client(base, BOB, mode) as bob,
            http_client(base, CAROL, mode) as carol,
        ):
            stored = data(
                await alice1.call_tool("sentinel__memory_store", {"text": ALICE_NOTE, "tags": ["seat"]})
            )
            assert CARD not in stored["stored"] and "aisle seats" in stored["stored"] and stored["redacted"]
            assert not (await bob.call_tool("sentinel__memory_store", {"text": BOB_NOTE})).is_error

            # alice's other conversation finds her memory (memory is per principal, not per conversation) ...
            found = texts(await alice2.call_tool("sentinel__memory_search", {"query": "aisle seats"}))
            assert found and "aisle seats" in found[0] and all("cello" not in t for t in found)
            assert [
                t for t in texts(await alice2.call_tool("sentinel__memory_recent", {"n": 10})) if "cello" in t
            ] == []
            # ... bob finds only his own, by any query, and claiming to be alice changes nothing
            for query in ("aisle seats", "Alice prefers aisle seats card", "seat"):
                assert all(
                    "aisle" not in t
                    for t in texts(await bob.call_tool("sentinel__memory_search", {"query": query}))
                )
            assert texts(await bob.call_tool("sentinel__memory_recent", {"n": 10})) == [BOB_NOTE]
            for claim in ({"sentinel/principal": "alice"}, {"sentinel/principal": "owner"}):
                claimed = await bob.client.call_tool("sentinel__memory_recent", {"n": 10}, meta=claim)
                assert texts(claimed) == [BOB_NOTE], claim
                claimed = await bob.client.call_tool(
                    "sentinel__memory_search", {"query": "aisle"}, meta=claim
                )
                assert all("aisle" not in t for t in texts(claimed)), claim
            # carol may reach only bk__list_bookings: no memory tools at all
            for name, args in (
                ("sentinel__memory_store", {"text": "carol was here"}),
                ("sentinel__memory_recent", {"n": 5}),
            ):
                r = await carol.call_tool(name, args)
                assert r.is_error and "unknown tool" in text(r), text(r)
            assert texts(await alice1.call_tool("sentinel__memory_recent", {"n": 10})) == [stored["stored"]]

    # the local owner (stdio, the same state) has no memory of alice's or bob's
    async with stdio_client(cfg, mode) as owner:
        assert texts(await owner.call_tool("sentinel__memory_recent", {"n": 10})) == []
        assert texts(await owner.call_tool("sentinel__memory_search", {"query": "aisle seats cello"})) == []
    # the audit record of alice's memory_store holds no card number either
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "sentinel_mcp",
            "-c",
            str(cfg),
            "audit",
            "--json",
            "--tail",
            "500",
            "--principal",
            "alice",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env_for(cfg),
    )
    rows = [json.loads(line) for line in out.stdout.splitlines()]
    assert any(r["tool"] == "sentinel__memory_store" for r in rows), out.stdout[-2000:]
    assert CARD not in out.stdout and CARD.replace(" ", "") not in out.stdout
