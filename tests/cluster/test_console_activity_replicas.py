"""The console's Activity page on replicas sharing one real PostgreSQL (subprocesses, HTTP on 127.0.0.1): a
replica lists its principal's calls made on every replica (the cluster's one audit table, not its own empty
log), each row naming its replica; the proof view and the decision link open another replica's row; another
principal's rows are never listed nor opened, by key or by decision id, on either replica."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import psycopg
import pytest

from sentinel_mcp.gateway.call_record import META_KEY
from tests.console.console_rig import ALICE, BOB, console_config, http_sentinel, mcp_client, signed_in, text

pytestmark = pytest.mark.timeout(240)
KEY = "cluster-activity-test-seal-key-0123456789abcdef"
ROW_LINK = re.compile(r'href="/console/activity/([^"/]+)"')


def replica_config(tmp: Path, url: str, name: str) -> Path:
    cfg = console_config(tmp, hold_when="never")
    body = json.loads(cfg.read_text())
    body["sentinel"].update(store=url, cluster={"replica": name, "seal_key": KEY})
    cfg.write_text(json.dumps(body))
    return cfg


def row_of(url: str, decision_id: str) -> tuple[str, int, str]:
    """(replica, id, principal) of a call's rows in the shared table, as the replicas wrote them."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT chain, id, principal FROM audit WHERE decision_id = %s ORDER BY id",
                            (decision_id,)).fetchall()
    assert rows, decision_id
    chain, rid, principal = rows[-1]  # the call's final row is the one listed
    return chain, rid, principal


async def test_activity_lists_every_replicas_rows_of_the_signed_in_principal(tmp_path: Path,
                                                                            pg_url: str) -> None:
    a_dir, b_dir = tmp_path / "a", tmp_path / "b"
    a_dir.mkdir()
    b_dir.mkdir()
    with http_sentinel(replica_config(a_dir, pg_url, "replica-a")) as (base_a, _pa), \
            http_sentinel(replica_config(b_dir, pg_url, "replica-b")) as (base_b, _pb):
        calls: dict[str, str] = {}  # decision id -> who made it where
        async with mcp_client(base_a, ALICE) as alice_on_a, mcp_client(base_b, ALICE) as alice_on_b, \
                mcp_client(base_b, BOB) as bob_on_b:
            for who, client in (("alice@a", alice_on_a), ("alice@b", alice_on_b), ("bob@b", bob_on_b)):
                word = f"{who}-{uuid.uuid4().hex[:6]}"
                result = await client.call_tool("tb__echo", {"text": word})
                assert not result.is_error and word in text(result), text(result)
                calls[(result.meta or {})[META_KEY]] = who
        rows = {d: row_of(pg_url, d) for d in calls}
        ids = {who: d for d, who in calls.items()}
        # a principal's rows are keyed by their decision ids (row ids would count others' rows); the
        # owner's by chain.id
        keys = dict(ids)
        assert rows[ids["alice@a"]][::2] == ("replica-a", "alice")
        assert rows[ids["alice@b"]][::2] == ("replica-b", "alice")
        assert rows[ids["bob@b"]][::2] == ("replica-b", "bob")

        for base in (base_a, base_b):
            async with signed_in(base, ALICE) as alice, signed_in(base, BOB) as bob:
                page = await alice.page("/console/activity")
                listed = set(ROW_LINK.findall(page))
                assert {keys["alice@a"], keys["alice@b"]} <= listed, (base, listed)
                assert keys["bob@b"] not in listed
                body = re.sub(r"<[^>]+>", " ", page[page.index("<tbody"):])
                assert "bob" not in body and "replica-a" in body and "replica-b" in body
                assert "<th>replica</th>" in page
                # the proof of a call made on the other replica, with its replica named
                for who, replica in (("alice@a", "replica-a"), ("alice@b", "replica-b")):
                    proof = await alice.page(f"/console/activity/{keys[who]}")
                    assert f'<dd id="replica"><code>{replica}</code></dd>' in proof
                    assert 'id="chain-status" class="chain ok">verified<' in proof, proof[:3000]
                    # the decision link goes to that row
                    r = await alice.get(f"/console/agent/audit/{ids[who]}")
                    assert r.status_code == 303 and r.headers["location"] == f"/console/activity/{keys[who]}"
                # the other principal: alice's rows are neither listed nor opened, by key or by decision id
                bob_page = await bob.page("/console/activity")
                bob_listed = set(ROW_LINK.findall(bob_page))
                assert keys["bob@b"] in bob_listed
                assert not {keys["alice@a"], keys["alice@b"]} & bob_listed
                for who in ("alice@a", "alice@b"):
                    assert (await bob.get(f"/console/activity/{keys[who]}")).status_code == 404
                    assert (await bob.get(f"/console/agent/audit/{ids[who]}")).status_code == 404
                # and alice cannot open bob's
                assert (await alice.get(f"/console/activity/{keys['bob@b']}")).status_code == 404
                assert (await alice.get(f"/console/agent/audit/{ids['bob@b']}")).status_code == 404
                # filters still apply across replicas
                none = await alice.page("/console/activity?tool=no-such-tool")
                assert not ROW_LINK.findall(none)
