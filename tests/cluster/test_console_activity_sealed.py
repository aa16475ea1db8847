"""The console's Activity page and ``sentinel-mcp audit`` on a replica of a real PostgreSQL, after a database
writer relabelled bob's call as alice's and re-chained the table (``gateway/audit_seal.py``): alice's page
neither lists nor opens it, the owner sees it as tampered and nobody's, the CLI's principal filter leaves it
out and its table says so. Subprocesses, HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from sentinel_mcp.gateway.call_record import META_KEY
from tests.cluster.test_audit_rows_sealed import rechain, sql
from tests.cluster.test_console_activity_replicas import replica_config, row_of
from tests.console.console_rig import ALICE, BOB, OWNER_TOKEN, http_sentinel, mcp_client, signed_in, text
from tests.identity.identity_rig import env_for

pytestmark = pytest.mark.timeout(240)
ROW_LINK = re.compile(r'href="/console/activity/([^"/]+)"')


def audit_cli(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "audit", *args],
                          capture_output=True, text=True, timeout=60, env=env_for(cfg))


async def test_a_relabelled_row_is_nobodys_on_the_activity_page_and_the_cli(tmp_path: Path,
                                                                            pg_url: str) -> None:
    cfg = replica_config(tmp_path, pg_url, "replica-a")
    with http_sentinel(cfg) as (base, _p):
        ids: dict[str, str] = {}
        async with mcp_client(base, ALICE) as alice_client, mcp_client(base, BOB) as bob_client:
            for who, client in (("alice", alice_client), ("bob", bob_client)):
                word = f"{who}-{uuid.uuid4().hex[:6]}"
                result = await client.call_tool("tb__echo", {"text": word})
                assert not result.is_error and word in text(result), text(result)
                ids[who] = (result.meta or {})[META_KEY]
        chain, bob_row, principal = row_of(pg_url, ids["bob"])
        assert principal == "bob"
        bob_key = f"{chain}.{bob_row}"
        async with signed_in(base, ALICE) as alice:
            before = set(ROW_LINK.findall(await alice.page("/console/activity")))
            assert bob_key not in before  # (the page lists alice's rows only)
        # the database writer: bob's rows of that call relabelled alice's, the chain recomputed, head too
        sql(pg_url, "UPDATE audit SET principal = 'alice', session = 'alice/forged' WHERE decision_id = ?",
            (ids["bob"],))
        rechain(pg_url, chain)

        async with signed_in(base, ALICE) as alice, signed_in(base, OWNER_TOKEN) as owner:
            listed = set(ROW_LINK.findall(await alice.page("/console/activity")))
            assert bob_key not in listed and ids["alice"] in listed  # her rows by their decision ids
            assert ids["bob"] not in listed  # relabelled hers, but its seal fails: nobody's
            assert (await alice.get(f"/console/activity/{bob_key}")).status_code == 404
            assert (await alice.get(f"/console/activity/{ids['bob']}")).status_code == 404
            page = await owner.page("/console/activity")
            assert bob_key in set(ROW_LINK.findall(page))
            start = page.index(f'href="/console/activity/{bob_key}"')
            listed_row = page[start:page.index("</tr>", start)]
            assert "tampered: nobody's" in listed_row and '<td class="chain bad">broken<' in listed_row
            assert bob_key not in set(ROW_LINK.findall(await owner.page("/console/activity?chain=verified")))
            proof = await owner.page(f"/console/activity/{bob_key}")
            assert "tampered: nobody's" in proof and "alice/forged" in proof

    mine = audit_cli(cfg, "--principal", "alice", "--json")
    assert mine.returncode == 0, mine.stderr
    decisions = {json.loads(line)["decision_id"] for line in mine.stdout.splitlines()}
    assert ids["alice"] in decisions and ids["bob"] not in decisions
    table = audit_cli(cfg)
    assert table.returncode == 0, table.stderr
    forged = [line for line in table.stdout.splitlines() if "alice/forged" in line]
    assert forged and all("(tampered)" in line for line in forged), table.stdout
    verify = audit_cli(cfg, "verify")  # with the config's seal key: the first edited row named
    first = min(r for (r,) in sql(pg_url, "SELECT id FROM audit WHERE decision_id = ?", (ids["bob"],)))
    assert verify.returncode == 1 and f"row {first} " in verify.stdout and "seal (MAC)" in verify.stdout, (
        verify.stdout + verify.stderr)
