"""``sentinel-mcp kept clear`` on a server store: the operator's CLI (the config's seal key signs what it
reads) clears a kept fact, and a replica that had a conversation loaded with it decides without it on its
next decision (the clear moves the kept facts' counter), as does a new conversation. A kept fact written in
SQL without the seal key is absent to the CLI as to every replica."""

from __future__ import annotations

import json
from pathlib import Path

from mcp import Client
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_kept_clear import cleared_everywhere, listed, redeemed
from tests.policy.test_kept_facts import RULES, upstream

from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway.replica import row_key

KEY = "cluster-test-seal-key-0123456789abcdef"


async def test_the_operator_clears_a_kept_fact_on_every_replica(tmp_path: Path, pg_url: str) -> None:
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    raw = {"mcpServers": {}, "sentinel": {"data_dir": str(tmp_path), "rulebases": [str(rb)], "store": pg_url,
                                          "cluster": {"replica": "cli", "seal_key": KEY}}}
    config = tmp_path / "sentinel.json"
    config.write_text(json.dumps(raw))
    key = row_key(parse_config(raw, base_dir=str(tmp_path)), "facts")
    assert key is not None
    async with Client(upstream(), mode="auto") as client:
        port = ClientPort(client, prefix="kv")
        await port.refresh()
        one = await make_guard(port, pg_url, files=[rb], seeds={})  # type: ignore[arg-type]
        other = await make_guard(None, pg_url, files=[rb], seeds={})  # type: ignore[arg-type]
        one.store.key = other.store.key = key  # the replicas' key, as the CLI's
        try:
            await cleared_everywhere(config, port, one, other)
            # written in SQL without the key: no replica decides on it, and the operator is not shown it
            await one.store.db.write(
                "INSERT INTO facts (session, predicate, args, fact, provenance, established_at, mac) "
                "VALUES ('$kept', 'redeemed', ?, 'redeemed(c9)', 'observed', 0, 'forged')", ('["c9"]',))
            assert not await redeemed(port, other, "c9", "new")
            assert listed(config) == ["redeemed(c2)"]
        finally:
            await other.close()
            await one.close()
