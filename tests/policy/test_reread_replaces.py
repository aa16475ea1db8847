"""A newer answer of a read replaces what its older answer said (policy/read_sources.py): facts were kept by
their text, so a booking read as confirmed and then, read again, as cancelled stayed confirmed for the guard
until the first answer's TTL, and the cancel it should refuse ran. Whether the session was mirrored in the
engine when the newer answer came or only in the store, and whether the guard or the client read; the facts
another read taught stay; and a read whose answer differs every time no longer piles its facts up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.policy.read_sources import ReadSources
from tests.support.forked_upstreams import forked_spec

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent
SERVER = HERE / "reread_server.py"
RULES = HERE / "rulebases" / "reread.pl"


def write_state(path: Path, statuses: dict[str, str], owned: list[str] | None = None) -> None:
    path.write_text(json.dumps({"users": {"u_1": owned if owned is not None else sorted(statuses)},
                                "bookings": {b: {"status": s} for b, s in statuses.items()}}))


def config(tmp: Path) -> Any:
    env = {"STATE": str(tmp / "state.json"), "MARKER": str(tmp / "marker")}
    sentinel = {"rulebases": [str(RULES)], "builtins": [], "data_dir": str(tmp / "data"),
                "seeds": {"current_user": "u_1"}}
    return parse_config({"mcpServers": {"bk": {**forked_spec(str(SERVER)), "env": env}},
                         "sentinel": sentinel}, base_dir=str(tmp))


def cancelled(tmp: Path) -> list[str]:
    marker = tmp / "marker"
    return marker.read_text().split() if marker.exists() else []


# how the older answer came (a guard's own fetch, with the session mirrored; or the client's read, into the
# store only) and how the newer one does
@pytest.mark.parametrize("first", ["guard", "client"])
@pytest.mark.parametrize("newer", ["pending", "cancelled", "gone", "null"])
async def test_a_newer_answer_replaces_the_older(tmp_path: Path, first: str, newer: str) -> None:
    state = tmp_path / "state.json"
    write_state(state, {"BK-1": "confirmed", "BK-2": "confirmed"})
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            if first == "guard":  # proved on the first answer, and run
                assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-2"})).is_error
                assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"})).is_error
                assert cancelled(tmp_path) == ["BK-2", "BK-1"]
                (tmp_path / "marker").unlink()
            else:
                await c.call_tool("bk__get_booking", {"booking_id": "BK-1"})
            # the upstream now says otherwise about BK-1; the client reads it again
            statuses = {"BK-2": "confirmed"}
            if newer != "gone":
                statuses["BK-1"] = "x" if newer == "null" else newer
            write_state(state, statuses, owned=["BK-1", "BK-2"])
            if newer == "null":
                state.write_text(state.read_text().replace('"x"', "null"))
            r = await c.call_tool("bk__get_booking", {"booking_id": "BK-1"})
            assert not r.is_error
            refused = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"})
            assert refused.is_error and "only confirmed" in refused.content[0].text, refused.content[0].text
            # BK-2's facts came from another read (another argument digest): they stand
            assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-2"})).is_error
    assert cancelled(tmp_path) == ["BK-2"]


# the newer answer says nothing the bindings can read: an error, a text that is no JSON
@pytest.mark.parametrize("first", ["guard", "client"])
@pytest.mark.parametrize("newer", [{"error": "booking service unavailable"}, {"text": "try again later"},
                                   # JSON text past the reader's depth (Python's, ~1,000 levels)
                                   {"deep": 1_200}, {"deep": 100_000}],
                         ids=["error", "text", "deep-1200", "deep-100k"])
async def test_an_answer_that_says_nothing_takes_back_what_the_read_said(
    tmp_path: Path, first: str, newer: dict[str, str]
) -> None:
    """The booking was read as confirmed; read again, the upstream answers an error (or a text, or JSON nested
    deeper than the guard reads: it raised RecursionError, and the older answer's facts were kept): what the
    older answer said is no longer known, so the guard asks again (and fails closed on the same answer)
    instead of holding on to "confirmed" until its TTL."""
    state = tmp_path / "state.json"
    write_state(state, {"BK-1": "confirmed", "BK-2": "confirmed"})
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            if first == "guard":  # proved on the first answers (the guard's own reads), and run
                for booking in ("BK-1", "BK-2"):
                    assert not (await c.call_tool("bk__cancel_booking", {"booking_id": booking})).is_error
                (tmp_path / "marker").unlink()
            else:
                await c.call_tool("bk__get_booking", {"booking_id": "BK-1"})
                await c.call_tool("bk__get_booking", {"booking_id": "BK-2"})
            session = next(iter(await rt.gateway.guard.store.sessions()))
            state.write_text(json.dumps({"users": {"u_1": ["BK-1", "BK-2"]},
                                         "bookings": {"BK-1": newer, "BK-2": {"status": "confirmed"}}}))
            r = await c.call_tool("bk__get_booking", {"booking_id": "BK-1"})
            assert r.is_error == ("error" in newer)
            store = rt.gateway.guard.store
            await store._learning.settled()
            kept = {f.fact for f in await store.valid(session) if f.predicate == "booking_status"}
            assert kept == {"booking_status('BK-2',confirmed)"}, kept  # BK-1's status is no longer known
            refused = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"})
            assert refused.is_error, refused.content[0].text
            # BK-2's facts came from another read: they stand, and its cancel is proved
            assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-2"})).is_error
    assert cancelled(tmp_path) == ["BK-2"]


async def test_a_changing_answer_does_not_pile_facts_up(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            for i in range(12):
                write_state(state, {}, owned=[f"B{i}-{j}" for j in range(50)])
                assert not (await c.call_tool("bk__list_bookings", {"user_id": "u_1"})).is_error
        store = rt.gateway.guard.store
        await store._learning.settled()
        kept = [f.fact for f in await store.valid(next(iter(await store.sessions())))
                if f.predicate == "user_booking"]
        assert len(kept) == 50 and all(t.startswith("user_booking(u_1,'B11-") for t in kept), kept[:3]


def test_what_is_remembered_of_reads_is_bounded_in_all() -> None:
    # a conversation per call, each read teaching 20,000 facts: tracked per session, this grew without bound
    reads = ReadSources(max_facts=1_000)
    dropped = 0
    for n in range(200):
        facts = [f"user_booking(u_1,'B{n}-{j}')" for j in range(300)]
        _, forgotten = reads.replace(f"s{n}", ("bk__list_bookings", "d"), facts)
        dropped += sum(len(texts) for _, _, texts in forgotten)
    tracked = sum(len(s.owners) for s in reads._sessions.values())
    assert reads._count <= 1_000 and tracked == reads._count
    assert dropped == 200 * 300 - tracked  # every fact no longer tracked was handed back to be deleted
    # the most recent session is still replaced exactly
    assert len(reads.replace("s199", ("bk__list_bookings", "d"), [])[0]) == 300


def test_the_reads_of_the_most_recently_read_sessions_are_remembered() -> None:
    # a conversation per call, each read teaching a few facts: within the facts' bound, every conversation
    # was tracked (200,000 facts: the guard's path grew +42 % of the gateway's memory from 1k to 5k calls)
    reads = ReadSources(max_sessions=50)
    dropped: list[str] = []
    for n in range(300):
        facts = [f"r({n},{j})" for j in range(20)]
        _, forgotten = reads.replace(f"s{n}", ("get_reservation", f"d{n}"), facts)
        dropped += [session for session, _, _ in forgotten]
    assert list(reads._sessions) == [f"s{n}" for n in range(250, 300)]
    assert reads._count == 50 * 20
    assert dropped == [f"s{n}" for n in range(250)]  # each forgotten session's facts handed back to delete
    # a session read again is the most recent: it stays, the oldest other goes
    reads.replace("s250", ("get_reservation", "d250"), [f"r(250,{j})" for j in range(20)])
    _, forgotten = reads.replace("s300", ("get_reservation", "d300"), ["r(300,0)"])
    assert [session for session, _, _ in forgotten] == ["s251"]


def test_a_session_keeps_the_facts_of_its_most_recent_reads() -> None:
    """A bound read called with a new argument each time (20,000 facts an answer) filled the store within
    the TTL: a session keeps its most recently read facts' reads, the oldest reads forgotten whole."""
    reads = ReadSources(max_session_facts=1_000)
    for n in range(10):
        _, forgotten = reads.replace("s", ("bk__list_bookings", f"d{n}"), [f"b({n},{j})" for j in range(300)])
        assert all(src == ("bk__list_bookings", f"d{n - 3}") and len(texts) == 300
                   for _, src, texts in forgotten), (n, forgotten)
        assert len(forgotten) == (1 if n >= 3 else 0)
    assert len(reads._sessions["s"].owners) == 900  # d7, d8, d9
    # a read again is the most recent: d7 survives the next read, d8 (now the oldest) goes
    reads.replace("s", ("bk__list_bookings", "d7"), [f"b(7,{j})" for j in range(300)])
    _, forgotten = reads.replace("s", ("bk__list_bookings", "d10"), [f"b(10,{j})" for j in range(300)])
    assert [src for _, src, _ in forgotten] == [("bk__list_bookings", "d8")]
    # a fact another read taught since belongs to that read: forgetting the first does not take it
    reads.replace("t", ("get", "a"), ["f(1)", "f(2)"])
    reads.replace("t", ("get", "b"), ["f(2)"])
    reads.max_session_facts = 1
    _, forgotten = reads.replace("t", ("get", "c"), [])
    assert forgotten == [("t", ("get", "a"), ["f(1)"])], forgotten


async def test_many_reads_of_one_session_stay_within_its_bound_and_the_guard_reads_again(tmp_path: Path):
    state = tmp_path / "state.json"
    users = {f"u_{i}": [f"B{i}-{j}" for j in range(50)] for i in range(10)}
    state.write_text(json.dumps({"users": users, "bookings": {b: {"status": "confirmed"}
                                                               for bs in users.values() for b in bs}}))
    async with running_gateway(config(tmp_path)) as rt:
        rt.gateway.guard.knowledge.reads.max_session_facts = 120  # a small bound, to see it
        async with Client(rt.front.server, mode="legacy") as c:
            for i in range(10):
                assert not (await c.call_tool("bk__list_bookings", {"user_id": f"u_{i}"})).is_error
            store = rt.gateway.guard.store
            await store._learning.settled()
            session = next(iter(await store.sessions()))
            kept = [f.fact for f in await store.valid(session) if f.predicate == "user_booking"]
            users_kept = {t.split("'")[1].split("-")[0] for t in kept}
            assert len(kept) == 100 and users_kept == {"B8", "B9"}, kept[:3]
            # u_1's read was forgotten: the guard asks the upstream again, and the cancel is proved
            assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "B1-7"})).is_error
            refused = await c.call_tool("bk__cancel_booking", {"booking_id": "B3-7"})  # u_3's, not u_1's
            assert refused.is_error and "current user" in refused.content[0].text, refused.content[0].text
    assert cancelled(tmp_path) == ["B1-7"]


@pytest.mark.parametrize("odd", [float("nan"), float("inf"), -float("inf"), 10**400],
                         ids=["nan", "inf", "-inf", "big"])
async def test_an_answer_the_engine_cannot_read_takes_back_what_the_read_said(tmp_path: Path, odd: Any):
    """An upstream's JSON may carry NaN or Infinity (Python's json and the SDK's models take them) or an
    integer SWI-Prolog's JSON reader refuses: reading such an answer raised, so observing the read failed
    (logged) and what the older answer said stood, the booking "confirmed" until its TTL. Such an answer is a
    read answered with nothing to read: its facts go, as for an error."""
    from mcp.types import CallToolResult, TextContent

    from tests.policy.policy_rig import rig

    async with rig(tmp_path / "facts.db") as r:
        await r.port.invoke("bk__get_booking", {"booking_id": "BK-789"}, session_id="s1")
        statuses = await r.guard.store.valid("s1", predicate="booking_status")
        assert [f.fact for f in statuses] == ["booking_status('BK-789',confirmed)"]
        await r.guard.knowledge.ensure("s1", r.guard.rulebases.current)  # mirrored in the engine too
        newer = {"id": "BK-789", "status": "cancelled", "cabin": "economy", "extra": odd}
        read = r.port.call_of("bk__get_booking", {"booking_id": "BK-789"}, session_id="s1")
        await r.guard.observe(read, CallToolResult(content=[TextContent(type="text", text="{}")],
                                                   structured_content=newer))
        assert await r.guard.store.valid("s1", predicate="booking_status") == []
        out = await r.guard.engine.dump_session(r.guard.knowledge.module("s1"))
        assert "booking_status" not in out, out


async def test_seeds_forgotten_with_nothing_else_held_are_seeded_again(tmp_path: Path) -> None:
    """A conversation a call (2026-era, no session carried back) left one seed row each for good; the purge
    forgets the seeds of a conversation holding nothing else (seed_only_sessions.py). Such a conversation
    used again is seeded again: its guard still knows the current user, mirrored or reloaded."""
    from sentinel_mcp.policy.seed_only_sessions import forget_seed_only

    state = tmp_path / "state.json"
    write_state(state, {"BK-1": "confirmed", "BK-2": "confirmed", "BK-3": "confirmed"})
    async with running_gateway(config(tmp_path)) as rt:
        store = rt.gateway.guard.store
        async with Client(rt.front.server, mode="2026-07-28") as c:
            for _ in range(20):  # a conversation a call
                assert (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-9"})).is_error
        await store._learning.settled()
        assert len(await store.sessions()) == 20
        await store.purge_expired(now=4e9)  # their reads' facts expired
        assert await store.count() == 20  # one seed each, for good
        await rt.gateway.guard.knowledge.purge()
        assert await store.count() == 0 and await store.sessions() == []
        async with Client(rt.front.server, mode="legacy") as c:
            assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-1"})).is_error
            await store._learning.settled()
            await store.purge_expired(now=4e9)
            assert await forget_seed_only(store) == 1  # the live conversation, its seed alone left
            # mirrored still: its seed is in the mirror
            assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-2"})).is_error
            await store._learning.settled()
            await store.purge_expired(now=4e9)
            # nothing in the store now: the seed was forgotten, the mirror holding it is not seeded twice
            assert await store.count() == 0
            await rt.gateway.guard.knowledge.forget_sessions()  # loaded again from the store: seeded again
            assert not (await c.call_tool("bk__cancel_booking", {"booking_id": "BK-3"})).is_error
            refused = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-9"})
            assert refused.is_error and "not a booking of the current user" in refused.content[0].text
    assert cancelled(tmp_path) == ["BK-1", "BK-2", "BK-3"]
