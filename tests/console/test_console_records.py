"""The console and the records: a 2026-era call waiting for its retry is answered in the inbox and its retry
passes (provenance ``user``); the Activity page shows each call's latency split (guard / fetch / ask /
forward, from the audit row) and its hash-chain status, and a tampered log shows "broken at row N"."""

from __future__ import annotations

import html
import re
import sqlite3
from pathlib import Path
from typing import Any

import httpx2
import pytest
from tests.console.console_rig import (
    ALICE,
    BOB,
    OWNER_TOKEN,
    answer_fields,
    console_config,
    grant_consent,
    http_sentinel,
    items_of,
    signed_in,
    text,
)
from tests.identity.identity_rig import User
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import InputRequiredResult

pytestmark = pytest.mark.timeout(180)
SESSION_META = "sentinel/session"
SPLIT = re.compile(r'<td class="split">(.*?)</td>\s*<td class="chain (ok|bad)">([^<]*)</td>', re.S)


class ModernCaller:
    """A 2026-era client that can elicit but leaves the questions to the console: it sees the raw
    ``InputRequiredResult`` and calls again later, carrying its conversation as 2026-era clients do."""

    def __init__(self, client: Client) -> None:
        self.client, self.session = client, None

    async def call(self, name: str, arguments: dict[str, Any], **kw: Any) -> Any:
        meta = {SESSION_META: self.session} if self.session else None
        result = await self.client.session.call_tool(
            name, arguments, meta=meta, allow_input_required=True, **kw
        )
        self.session = (result.meta or {}).get(SESSION_META) or self.session
        return result


def split_of(cell: str) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r'title="(\w+)">\w+ ([0-9.]+)<', cell)}


async def test_a_2026_era_call_waits_in_the_inbox_and_its_retry_passes_after_the_answer(tmp_path):
    cfg = console_config(tmp_path)
    user = User()  # the client's own user: never asked, the person answers in the console
    with http_sentinel(cfg) as (base, _):
        grant_consent(cfg, "alice", "bookings")  # her proof rests on her bookings' reads: hers to see
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {ALICE}"}, timeout=60)
        async with (
            Client(
                streamable_http_client(f"{base}/mcp", http_client=http),
                mode="auto",
                elicitation_callback=user,
            ) as c,
            signed_in(base, ALICE) as alice,
            signed_in(base, BOB) as bob,
        ):
            caller = ModernCaller(c)
            args = {"booking_id": "BK-789"}
            result = None
            for round_ in range(3):  # the reason, then the confirmation that lists it: one item per round
                result = await caller.call("bk__cancel_booking", args)
                if not isinstance(result, InputRequiredResult):
                    break
                page = await alice.wait_items(1)
                [item] = items_of(page)
                assert "2026-era call between rounds" in page and "BK-789" in page
                assert item not in await bob.page("/console/inbox")  # another principal's: not there
                r = await bob.post(
                    f"/console/inbox/{item}",
                    {"decision": "approve", **answer_fields(page, item)},
                    csrf=None if round_ else "page",
                )
                assert r.status_code in (403, 404)
                # a retry before the answer is still asked (the item stays)
                if round_ == 0:
                    again = await caller.call("bk__cancel_booking", args)
                    assert isinstance(again, InputRequiredResult)
                    [item] = items_of(await alice.wait_items(1))
                    page = await alice.page("/console/inbox")
                r = await alice.post(
                    f"/console/inbox/{item}", {"decision": "approve", **answer_fields(page, item)}
                )
                assert r.status_code == 303
                # another call (other arguments) does not pass on this answer
                other = await caller.call("bk__cancel_booking", {"booking_id": "BK-456"})
                assert isinstance(other, InputRequiredResult) or other.is_error
                for extra in items_of(await alice.page("/console/inbox")):  # its own item: deny it
                    await alice.post(f"/console/inbox/{extra}", {"decision": "deny"})
            assert not isinstance(result, InputRequiredResult) and not result.is_error, result
            assert "cancelled" in text(result) and user.asked == []  # the tool ran; the client never asked
            # the answer counted once: the same call does not pass on it again (asked again, or now refused)
            again = await caller.call("bk__cancel_booking", args)
            assert isinstance(again, InputRequiredResult) or again.is_error

            # Activity: the allowed call's row, its latency split and chain status; its proof names the user
            page = await alice.page("/console/activity?tool=cancel&decision=allow")
            rows = SPLIT.findall(page)
            assert rows, page[page.index("<main") :][:3000]
            cell, ok, status = rows[0]
            split = split_of(cell)
            assert set(split) == {"guard", "fetch", "ask", "forward"}, cell
            assert split["ask"] > 0 and split["forward"] > 0 and split["guard"] > 0, split
            assert ok == "ok" and status == "verified"
            key = re.search(r'href="/console/activity/([^"]+)"', page[page.index("<tbody") :]).group(1)
            proof = await alice.page(f"/console/activity/{html.unescape(key)}")
            assert "provenance: user" in proof and "cancel_reason" in proof
            assert 'id="chain-status" class="chain ok">verified<' in proof and 'id="latency-split"' in proof
            # a policy fetch's time is its own: bob's listing fetches nothing, his reads show no fetch time
            assert (await bob.get(f"/console/activity/{key}")).status_code == 404


async def test_a_tampered_audit_log_shows_broken_rows_and_filters_by_chain_status(tmp_path):
    cfg = console_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {BOB}"}, timeout=60)
        async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy") as c:
            for n in range(4):
                await c.call_tool("bk__list_bookings", {"user_id": f"u{n}"})
    files = [p for p in (tmp_path / "state").rglob("*.db") if _has_audit(p)]
    assert files
    conn = sqlite3.connect(files[0])
    [(victim,)] = conn.execute("SELECT max(id) - 1 FROM audit").fetchall()  # the last call's decision row
    conn.execute("UPDATE audit SET decision = 'deny' WHERE id = ?", (victim,))
    conn.commit()
    conn.close()
    with http_sentinel(cfg) as (base, _):
        async with signed_in(base, BOB) as bob, signed_in(base, OWNER_TOKEN) as owner:
            page = await bob.page("/console/activity")
            statuses = [s for _cell, _ok, s in SPLIT.findall(page)]
            # the calls before the altered row still verify from the chain's start; from it on, nothing does;
            # where it broke (a row number: a sequence of every principal's rows) is the owner's to read
            assert statuses[0] == "broken" and statuses[-3:] == ["verified"] * 3, statuses
            owners = [s for _cell, _ok, s in SPLIT.findall(await owner.page("/console/activity"))]
            assert owners[0] == f"broken at row {victim}" and owners[-3:] == ["verified"] * 3, owners
            broken = [s for _c, _o, s in SPLIT.findall(await bob.page("/console/activity?chain=broken"))]
            assert broken and all(s.startswith("broken") for s in broken)
            fine = [s for _c, _o, s in SPLIT.findall(await bob.page("/console/activity?chain=verified"))]
            assert fine and set(fine) == {"verified"}
            # a made-up filter value is refused, never read as no filter (every row shown as if filtered)
            assert (await bob.get("/console/activity?chain=%3Cscript%3E")).status_code == 400


def _has_audit(path: Path) -> bool:
    try:
        conn = sqlite3.connect(path)
        try:
            return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'audit_head'").fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return False
