"""Every request an upstream pushes during a call and Sentinel refuses (a kind its ``relays`` setting does not
list, or past ``MAX_PUSHES_WAITING`` waiting at once) is in the audit log: who the call was for, which
upstream, what kind, why; bounded, so a flood of 2,000 is a few rows that add up to 2,000
(``gateway/push_refusals.py``). Whoever the call's caller is: a client that could answer, or the console
inbox standing in for one that cannot. A real stdio upstream (``hostile_stdio_upstream.py``), the real
gateway and client, the real SQLite audit read as it is on disk after the gateway stopped."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.gateway.audit import audit_files
from sentinel_mcp.gateway.midcall_answers import MAX_QUESTIONS_PER_CALL
from sentinel_mcp.gateway.push_refusals import BURST
from tests.gateway.helpers import make_config
from tests.gateway.hostile_stdio_upstream import FLOOD
from tests.gateway.test_lean_stdio import HOSTILE, ROOT

pytestmark = pytest.mark.timeout(240)


def _servers(**over: Any) -> dict[str, Any]:
    return {"h": {"command": HOSTILE[0], "args": HOSTILE[1:], "cwd": str(ROOT), "protocol": "legacy", **over}}


def _rows(store: Path) -> list[dict[str, Any]]:
    """Every audit row as written (not merged per call)."""
    out = []
    for file in audit_files(store):
        with sqlite3.connect(f"file:{file}?mode=ro", uri=True) as conn:
            conn.row_factory = sqlite3.Row
            out += [dict(r) for r in conn.execute("SELECT * FROM audit ORDER BY id")]
    return out


def _refused(rows: list[dict[str, Any]], call: dict[str, Any], cause: str, total: int,
             also: tuple[str, ...] = ()) -> None:
    """The refusals are rows of their own, naming the call's principal, the upstream, the kind and why, at
    most ``BURST`` one by one and one summary a cause; together they count every refusal."""
    causes = (cause, *also)
    pushed = [r for r in rows if r["outcome"] == "push_refused"]
    assert pushed and len(pushed) <= BURST + len(causes), len(pushed)
    args = [json.loads(r["arguments"]) for r in pushed]
    assert sum(a["refused"] for a in args) == total, args[-1]
    for r, a in zip(pushed, args):
        assert (r["principal"], r["upstream"], r["tool"], r["session"]) == (
            call["principal"], "h", "h__push_flood", call["session"]), r
        assert (a["push"], a["call"]) == ("elicitation", call["decision_id"]) and a["cause"] in causes, a
        assert r["decision"] == "deny" and r["reason"], r
    assert len({r["decision_id"] for r in pushed}) == len(pushed)  # rows of their own, none merged
    assert not [r for r in rows if r["outcome"] == "answer_refused"]  # not one row per push either


def _the_call(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The flood call's own row (its decision)."""
    own = [r for r in rows if r["tool"] == "h__push_flood" and r["outcome"] != "push_refused"]
    assert len({r["decision_id"] for r in own}) == 1, own
    return own[0]


async def test_a_flood_the_relays_setting_refuses_is_audited_bounded(data_dir: Path) -> None:
    asked = []

    async def yes(*_: Any) -> ElicitResult:
        asked.append(1)
        return ElicitResult(action="accept", content={"word": "w"})

    config = make_config(data_dir, _servers(relays=[]))
    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=yes) as c:
            r = await c.call_tool("h__push_flood", {})
            assert json.loads(r.content[0].text) == {"error": FLOOD}, r.content
        assert rt.manager.upstreams["h"].pushes_not_permitted == FLOOD
    assert asked == []
    rows = _rows(config.store_path)
    _refused(rows, _the_call(rows), "not_permitted", FLOOD)


class Holding:
    """The person at the console inbox: holds every question until the flood past the bound was refused,
    then says yes."""

    def __init__(self, rt: Any, refused: int) -> None:
        self.rt, self.refused, self.asked = rt, refused, 0

    async def ask(self, asked: Any) -> dict[str, Answer]:
        self.asked += 1
        up = self.rt.manager.upstreams["h"]
        with anyio.fail_after(120):
            while up.pushes_refused < self.refused:  # a bounded wait on the count, no timing asserted
                await anyio.sleep(0.02)
        return {q.key: Answer(action="accept", content={"word": "w"}, provenance="user")
                for q in asked.questions}


@pytest.mark.parametrize("cause", ["not_permitted", "too_many_waiting"])
async def test_refused_pushes_meant_for_the_console_inbox_are_audited_bounded(
    data_dir: Path, cause: str
) -> None:
    """The client declared no elicitation: the upstream's questions go to the console inbox, where refusals
    were counted and logged, not audited."""
    config = make_config(data_dir, _servers(relays=[] if cause == "not_permitted" else ["elicitation"]))
    # past the waiting bound, or past the call's own (``MAX_QUESTIONS_PER_CALL``): only that many reach the
    # person, the rest are refused, under either cause
    total = FLOOD if cause == "not_permitted" else FLOOD - MAX_QUESTIONS_PER_CALL
    also = ("too_many_questions",) if cause == "too_many_waiting" else ()
    async with running_gateway(config) as rt:
        person = rt.gateway.person_inbox = Holding(rt, total if cause == "too_many_waiting" else 0)
        async with Client(rt.front.server, mode="legacy") as c:
            r = await c.call_tool("h__push_flood", {})
            got = json.loads(r.content[0].text)
        up = rt.manager.upstreams["h"]
        assert (up.pushes_not_permitted, up.pushes_refused)[cause == "too_many_waiting"] == total
        assert got.get("error") == total and person.asked == FLOOD - total, (got, person.asked)
    rows = _rows(config.store_path)
    _refused(rows, _the_call(rows), cause, total, also)


async def test_a_window_that_ends_writes_its_count_and_many_principals_stay_bounded(monkeypatch) -> None:
    """The count of a window is written at the upstream's next refusal after it (or at stop); principals
    past ``MAX_KEYS`` are summed under none, so rows stay bounded however many callers there are."""
    import sentinel_mcp.gateway.push_refusals as module
    from sentinel_mcp.core.caller_link import CallOf

    now = [0.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: now[0])
    written: list[Any] = []

    async def write(entry: Any) -> None:
        written.append(entry)

    refusals = module.PushRefusals(write, burst=2, window=10.0)
    calls = [CallOf(f"p{i}", f"s{i}", "h__t", "client", None, f"d{i}") for i in range(500)]
    for call in calls:
        await refusals.record("h", "sampling", "not_permitted", "why", call)
    assert len(written) == 2  # the burst; the rest counted
    now[0] = 10.0  # the window has ended: its counts are written before the next refusal
    await refusals.record("h", "sampling", "not_permitted", "why", calls[0])
    summaries = written[2:-1]
    assert len(summaries) == module.MAX_KEYS + 1  # one per principal kept, one for the rest
    assert sum(e.arguments["refused"] for e in written) == 501
    rest = [e for e in summaries if e.principal is None]
    assert len(rest) == 1 and rest[0].arguments["refused"] == 498 - module.MAX_KEYS
    assert rest[0].arguments["call"] is None and rest[0].session == "upstream"
    await refusals.flush()
    assert len(written) == 2 + module.MAX_KEYS + 2  # nothing more was counted
