"""``isolation: "per_principal"``: each principal's calls reach an upstream session of its own (a process of
its own over stdio, an MCP session and connection of its own over HTTP), so an upstream that keeps state per
session (a browser's logged-in cookies) never lets bob act in alice's. The attack: alice logs in, bob asks
who he is. A session that dies takes no other principal's with it; past ``max_principals`` a new principal
is refused with the reason, and admitted once one has been closed idle. Real upstreams in subprocesses
(``stateful_upstream.py``), the real gateway; ``shared`` (the default) is the control that shows the leak."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import anyio
import pytest
from mcp.types import PromptReference

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError, load_config
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.identity.principal import ANONYMOUS, INTERNAL, Principal
from tests.gateway.helpers import alive, make_config
from tests.gateway.test_push_refusals_audited import _rows

from ..conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(180)
STATEFUL = str(Path(__file__).with_name("stateful_upstream.py"))


def _stdio(**over: Any) -> dict[str, Any]:
    return {"command": sys.executable, "args": [STATEFUL], **over}


@contextlib.contextmanager
def _served(how: str) -> Iterator[str]:
    """``stateful_upstream.py`` over HTTP (``--http``: streamable, ``--sse``): its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, STATEFUL, how, str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/" + ("mcp" if how == "--http" else "sse")
    try:
        wait_http(url, proc=proc)
        yield url
    finally:
        stop_process(proc)


@pytest.fixture
def http_stateful() -> Iterator[str]:
    with _served("--http") as url:
        yield url


async def _call(gw: Any, who: str | Principal, tool: str, **arguments: Any) -> tuple[bool, str]:
    """(failed, text) of ``who``'s call to the catalog tool ``tool``."""
    principal = who if isinstance(who, Principal) else Principal(who, "token")
    out = await gw.run(CallRequest(tool, arguments, f"{principal.name}/s", "test", "client",
                                   principal=principal))
    out = getattr(out, "result", None) or out  # a completed call's outcome carries the result
    content = getattr(out, "content", None)
    text = content[0].text if content else str(getattr(out, "reason", out))
    return bool(getattr(out, "is_error", False) or content is None), text


async def test_bob_never_sees_alices_login_over_stdio_and_http_in_both_eras(data_dir: Path,
                                                                          http_stateful: str) -> None:
    own = {"isolation": "per_principal"}
    servers = {
        "sl": _stdio(protocol="legacy", **own),
        "sm": _stdio(protocol="modern", **own),
        "hl": {"url": http_stateful, "protocol": "legacy", **own},
        "shared": _stdio(protocol="legacy"),  # the default: the control, where the login is everyone's
    }
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        for up in ("sl", "sm", "hl", "shared"):
            assert rt.manager.upstreams[up].state == "ready", (up, rt.manager.upstreams[up].last_error)
            assert (await _call(gw, "alice", f"{up}__login", name="alice"))[1] == "logged in as alice"
        for up in ("sl", "sm", "hl"):
            assert await _call(gw, "bob", f"{up}__whoami") == (False, "nobody"), up
            assert await _call(gw, "alice", f"{up}__whoami") == (False, "alice"), up
            await _call(gw, "bob", f"{up}__login", name="bob")
            assert await _call(gw, "alice", f"{up}__whoami") == (False, "alice"), up
            assert await _call(gw, "bob", f"{up}__whoami") == (False, "bob"), up
        assert await _call(gw, "bob", "shared__whoami") == (False, "alice")  # what per_principal prevents
        pids = set()
        for up in ("sl", "sm"):  # over stdio: a process each
            pids |= {(await _call(gw, who, f"{up}__pid"))[1] for who in ("alice", "bob")}
        assert len(pids) == 4, pids
        # one catalog: each tool listed once, under the server's name; no session is an upstream of its own
        names = [t.name for t in gw.list_catalog_tools(Principal("bob", "token"))]
        assert names.count("sl__whoami") == 1 and names.count("hl__login") == 1
        assert sorted(rt.manager.upstreams) == ["hl", "shared", "sl", "sm"]
        assert sorted(rt.manager.upstreams["sl"].principals.open()) == ["alice", "bob"]
        # "auth": "none": every caller is the one principal anonymous, so a session of its own would be one
        # shared by all of them: refused, with the reason, and none opened for it (the shared server serves)
        for up in ("sl", "hl"):
            failed, said = await _call(gw, ANONYMOUS, f"{up}__whoami")
            assert failed and "unauthenticated" in said and "nobody" not in said, said
        assert sorted(rt.manager.upstreams["sl"].principals.open()) == ["alice", "bob"]
        assert await _call(gw, ANONYMOUS, "shared__whoami") == (False, "alice")
        # Sentinel's own calls (built-ins, the solver, naming no one) would share one session among all the
        # principals they run for; a name out of the principal names' shape names no one configured
        for odd in (INTERNAL, Principal("a2a peer", "token"), Principal("alice\n", "token"),
                    Principal("x" * 65, "token"), Principal("al/ice", "token"), Principal("älice", "token")):
            for up in ("sl", "hl"):
                failed, said = await _call(gw, odd, f"{up}__whoami")
                assert failed and "nobody" not in said, (odd, said)
        assert sorted(rt.manager.upstreams["sl"].principals.open()) == ["alice", "bob"]
    assert not [p for p in pids if alive(int(p))]  # the gateway stopped: every principal's process ended


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
async def test_over_http_a_login_kept_by_cookie_or_session_stays_its_principals(data_dir: Path,
                                                                               http_stateful: str,
                                                                               protocol: str) -> None:
    """On 2026-07-28 there is no MCP session: the upstream keeps the login by the cookie it set (on the
    handshake era by its ``Mcp-Session-Id``). Whichever way a request travels
    (a tool call, a prompt),
    it carries its principal's own and nobody else's, and no TCP connection carries two principals."""
    servers = {"h": {"url": http_stateful, "protocol": protocol, "isolation": "per_principal"},
               "shared": {"url": http_stateful, "protocol": protocol}}  # the control: one jar for all
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        for up in ("h", "shared"):
            assert rt.manager.upstreams[up].state == "ready", (up, rt.manager.upstreams[up].last_error)
            assert await _call(gw, "alice", f"{up}__login", name="alice") == (False, "logged in as alice")
        assert await _call(gw, "bob", "shared__whoami") == (False, "alice")  # what per_principal prevents
        assert await _call(gw, "bob", "h__whoami") == (False, "nobody")
        assert await _call(gw, "alice", "h__whoami") == (False, "alice")
        await _call(gw, "bob", "h__login", name="bob")
        for who in ("alice", "bob", "carol"):
            mine = "nobody" if who == "carol" else who
            assert await _call(gw, who, "h__whoami") == (False, mine), who
            got = await gw.get_prompt("h__greeting", None, Principal(who, "token"))
            assert got.messages[0].content.text == f"hello {mine}", who
        ports = {who: {(await _call(gw, who, "h__peer"))[1] for _ in range(4)} for who in ("alice", "bob")}
        assert all(p.isdigit() for p in ports["alice"] | ports["bob"]), ports
        assert not ports["alice"] & ports["bob"], ports


async def test_an_idle_session_is_closed_and_its_process_ended(data_dir: Path) -> None:
    servers = {"s": _stdio(protocol="legacy", isolation="per_principal", principal_idle_seconds=0.5)}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        sessions = rt.manager.upstreams["s"].principals
        pid = int((await _call(rt.gateway, "alice", "s__pid"))[1])

        async def closed() -> bool:
            return sessions.open() == {} and not alive(pid)

        await _until(closed)
        assert rt.manager.upstreams["s"].state == "ready"  # the catalog's session is not a principal's


async def _until(check: Any, seconds: float = 90.0) -> None:
    with anyio.fail_after(seconds):  # a bound, no timing asserted
        while not await check():
            await anyio.sleep(0.05)


async def test_one_principals_session_dying_leaves_the_others(data_dir: Path) -> None:
    servers = {"s": _stdio(protocol="legacy", isolation="per_principal")}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        for who in ("alice", "bob"):
            await _call(gw, who, "s__login", name=who)
        # resources and prompts read in the principal's own session too
        alice_p, carol_p = Principal("alice", "token"), Principal("carol", "token")
        assert (await gw.read_resource("state://whoami", alice_p, None)).contents[0].text == "alice"
        assert (await gw.read_resource("state://whoami", carol_p, None)).contents[0].text == "nobody"
        assert (await gw.get_prompt("s__greeting", None, alice_p)).messages[0].content.text == "hello alice"
        assert (await gw.get_prompt("s__greeting", None, carol_p)).messages[0].content.text == "hello nobody"
        for who, name in ((alice_p, "alice"), (carol_p, "nobody")):  # and completions
            ref = PromptReference(name="s__greeting")
            done = await gw.complete(ref, {"name": "to", "value": ""}, None, who)
            assert done.completion.values == [name]
        bob_pid = (await _call(gw, "bob", "s__pid"))[1]
        failed, _ = await _call(gw, "alice", "s__die")
        assert failed
        # bob's session is untouched: same process, still logged in
        assert await _call(gw, "bob", "s__whoami") == (False, "bob")
        assert (await _call(gw, "bob", "s__pid"))[1] == bob_pid

        async def alice_back() -> bool:  # her session reconnects: a new process, logged in as nobody
            return await _call(gw, "alice", "s__whoami") == (False, "nobody")

        await _until(alice_back)
        sessions = rt.manager.upstreams["s"].principals
        assert sessions.open()["bob"].reconnects == 0
        health = next(h for h in rt.catalog_health.upstreams() if h.name == "s")
        assert health.reconnects >= 1 and health.state == "ready"  # alice's session's reconnect counts
        await gw.set_log_level("debug")  # what clients asked reaches every principal's session
        assert {up.log_level for up in sessions.open().values()} == {"debug"}


async def test_past_the_bound_a_new_principal_is_refused_clearly_and_admitted_once_one_idles(
    data_dir: Path,
) -> None:
    servers = {"s": _stdio(protocol="legacy", isolation="per_principal", max_principals=2, max_in_flight=1)}
    config = make_config(data_dir, servers)
    async with running_gateway(config) as rt:
        gw = rt.gateway
        sessions = rt.manager.upstreams["s"].principals
        for who in ("alice", "bob"):
            await _call(gw, who, "s__login", name=who)
        # max_in_flight is the server's, not each session's: bob's call waits for alice's to end
        go = data_dir / "go"
        held = asyncio.ensure_future(_call(gw, "alice", "s__hold", path=str(go)))

        def health() -> Any:
            return next(h for h in rt.catalog_health.upstreams() if h.name == "s")

        async def alice_in() -> bool:
            return health().calls_in_flight == 1

        async def bob_waits() -> bool:
            return health().calls_waiting == 1

        await _until(alice_in)
        waiting = asyncio.ensure_future(_call(gw, "bob", "s__whoami"))
        await _until(bob_waits)
        go.touch()
        assert await held == (False, "held") and await waiting == (False, "bob")
        for _ in range(3):  # refused each time, at once, with the reason; nothing spawned for it
            failed, text = await _call(gw, "carol", "s__whoami")
            assert failed and "max_principals" in text and "2 principals" in text, text
        assert sorted(sessions.open()) == ["alice", "bob"] and sessions.refused == 3
        # shown as the server's counter, like its other per-upstream ones
        assert health().principals_refused == 3
        assert 'sentinel_upstream_principals_refused_total{upstream="s"} 3' in (
            rt.metrics.render(rt.catalog_health).splitlines()
        )
        assert await _call(gw, "alice", "s__whoami") == (False, "alice")  # the gateway serves on
        # a session holding a resource subscription is in use: not closed as idle (its updates would stop)
        alice_own = sessions.open()["alice"]
        alice_own.subscribed.add("state://whoami")
        await sessions.close_idle(time.monotonic() + 601)
        assert sorted(sessions.open()) == ["alice"]
        alice_own.subscribed.clear()
        # both go idle past the bound (the clock moved, not slept): closed, their processes ended
        closing = list(sessions.open().values())
        await sessions.close_idle(time.monotonic() + 601)
        assert sessions.open() == {} and all(up._stop.is_set() for up in closing)
        assert await _call(gw, "carol", "s__whoami") == (False, "nobody")
        # bob's next call opens a new session: what the closed one held is gone with it
        assert await _call(gw, "bob", "s__whoami") == (False, "nobody")
        assert sorted(sessions.open()) == ["bob", "carol"]
        # first calls arriving together: one session per principal, and the bound counts principals
        await sessions.close_idle(time.monotonic() + 601)
        who = ["dave", "erin", "frank"] * 3
        got = await asyncio.gather(*(_call(gw, w, "s__pid") for w in who))
        by = {w: {g for x, g in zip(who, got) if x == w} for w in set(who)}
        admitted = sorted(w for w, g in by.items() if all(not failed for failed, _ in g))
        assert sorted(sessions.open()) == admitted and len(admitted) == 2, by
        assert all(len(by[w]) == 1 for w in admitted), by  # one process each, however many calls came
        (left,) = set(by) - set(admitted)
        assert all(failed and "max_principals" in t for failed, t in by[left]), by
    # on disk: the refusals name carol and the upstream; the calls on the sessions name the upstream too
    rows = [r for r in _rows(config.store_path) if r["tool"] == "s__whoami"]
    refused = [r for r in rows if r["principal"] == "carol" and r["outcome"] == "upstream_error"]
    assert len({r["decision_id"] for r in refused}) == 3 and all(r["upstream"] == "s" for r in refused)
    assert {r["upstream"] for r in rows} == {"s"}
    assert {"alice", "bob", "carol"} <= {r["principal"] for r in rows}


async def test_no_session_is_closed_under_its_call_and_churning_principals_leave_no_process(
    data_dir: Path,
) -> None:
    """The idle sweep meets a session whose call is in flight (however old its last use): it stays, and
    the call ends on it. Then principals come and go past ``max_principals``, all at once, while the sweep
    runs: never more sessions than the bound, and every closed session's process ended."""
    servers = {"s": _stdio(protocol="legacy", isolation="per_principal", max_principals=2)}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        sessions = rt.manager.upstreams["s"].principals
        await _call(gw, "alice", "s__login", name="alice")
        go = data_dir / "go"
        held = asyncio.ensure_future(_call(gw, "alice", "s__hold", path=str(go)))

        async def alice_in() -> bool:
            return sessions.counts()["calls_in_flight"] == 1

        await _until(alice_in)
        await sessions.close_idle(time.monotonic() + 601)
        assert list(sessions.open()) == ["alice"]
        go.touch()
        assert await held == (False, "held")
        assert await _call(gw, "alice", "s__whoami") == (False, "alice")  # the same session, still hers
        pids: set[int] = set()
        for round_ in range(3):
            who = [f"p{round_}-{i}" for i in range(4)] * 2
            sweep = asyncio.ensure_future(sessions.close_idle(time.monotonic() + 601))
            got = await asyncio.gather(*(_call(gw, w, "s__pid") for w in who))
            await sweep
            assert len(sessions.open()) <= 2, sessions.open()
            pids |= {int(text) for failed, text in got if not failed}
            refused = [text for failed, text in got if failed]
            assert refused and all("max_principals" in text for text in refused), got
            await sessions.close_idle(time.monotonic() + 601)
        assert sessions.open() == {} and len(pids) >= 3, pids

        async def all_ended() -> bool:
            return not [p for p in pids if alive(p)]

        await _until(all_ended)


def _connections_to(port: int) -> int:
    """TCP connections of this process established to 127.0.0.1:``port`` (``/proc``: no library asked)."""
    mine = set()
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            link = os.readlink(f"/proc/self/fd/{fd}")
            if link.startswith("socket:["):
                mine.add(link[8:-1])
    rows = Path("/proc/self/net/tcp").read_text().splitlines()[1:]
    return sum(1 for row in map(str.split, rows)
               if int(row[2].split(":")[1], 16) == port and row[3] == "01" and row[9] in mine)


async def _until_closed(port: int, base: int) -> None:
    """The count falls back to the catalog's own (a loaded machine may run the pool's close a few turns after
    the session's end is signalled): bounded by count, so a connection left open fails the test."""
    for _ in range(400):
        if _connections_to(port) <= base:
            return
        await anyio.sleep(0.05)
    assert _connections_to(port) <= base


@pytest.mark.parametrize("how,protocol", [("--http", "modern"), ("--sse", "legacy")])
async def test_a_closed_principal_session_leaves_no_connection_open(data_dir: Path, how: str,
                                                                    protocol: str) -> None:
    """Principals come and go on an HTTP upstream (streamable, and the old SSE transport,
    whose clients the SDK builds through Sentinel's factory): each closed session's connections (the SDK's
    client's and the lean calls') are closed with it, not left for the garbage collector to find some
    day; and so are a session's when it reconnects."""
    with _served(how) as url:
        await _no_connection_left(data_dir, url, protocol)


async def _no_connection_left(data_dir: Path, url: str, protocol: str) -> None:
    port = int(url.rsplit(":", 1)[1].split("/")[0])
    servers = {"h": {"url": url, "protocol": protocol, "isolation": "per_principal"}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        sessions = rt.manager.upstreams["h"].principals
        base = max(_connections_to(port), 1)  # the catalog's own session (its one kept-alive connection)
        for round_ in range(3):
            for who in ("alice", "bob", "carol"):
                assert await _call(gw, who, "h__whoami") == (False, "nobody")
                got = await gw.get_prompt("h__greeting", None, Principal(who, "token"))  # the SDK's client
                assert got.messages[0].content.text == "hello nobody"
            assert _connections_to(port) > base  # the probe sees them
            closing = [own.ended for own in sessions._own.values()]
            await sessions.close_idle(time.monotonic() + 601)
            for ended in closing:
                await ended.wait()
            await _until_closed(port, base)
        up = rt.manager.upstreams["h"]
        for round_ in range(3):  # the catalog's session reconnects: its connections go with its old client
            before = up.reconnects
            up._dead.set()

            async def back() -> bool:
                return up.reconnects > before and up.state == "ready"

            await _until(back)
            await _until_closed(port, base)


@pytest.mark.parametrize("key,value", [
    ("isolation", '"per-principal"'), ("isolation", '"PER_PRINCIPAL"'), ("isolation", "true"),
    ("isolation", '["per_principal"]'), ("max_principals", "0"), ("max_principals", "1025"),
    ("max_principals", "true"), ("max_principals", '"4"'), ("max_principals", "4.0"),
    ("principal_idle_seconds", "0"), ("principal_idle_seconds", "-1"), ("principal_idle_seconds", "1e12"),
    ("principal_idle_seconds", "NaN"),
])
def test_an_isolation_setting_out_of_its_shape_is_refused_with_its_line(tmp_path: Path, key: str,
                                                                      value: str) -> None:
    bad = tmp_path / "sentinel.json"
    bad.write_text('{"mcpServers": {"a": {"command": "x",\n  "' + key + '": ' + value + "}}}")
    # named with its key, or (a number no JSON should hold) refused as it is read, with its line
    refused = rf"sentinel.json(:\n  mcpServers.a.{key}: .*\(line 2\)|, line 2: )"
    with pytest.raises(ConfigError, match=refused):
        load_config(bad)
    bad.write_text('{"mcpServers": {"a": {"command": "x", "isolation": "per_principal",'
                   ' "max_principals": 1024, "principal_idle_seconds": 86400}}}')
    server = load_config(bad).mcp_servers["a"]
    assert (server.isolation, server.max_principals, server.principal_idle_seconds) == (
        "per_principal", 1024, 86400)


async def test_a_session_still_stopping_counts_against_the_bound(data_dir: Path) -> None:
    """A closed session's process ends some time after it is closed: a new principal admitted in between
    would have its process started beside it, one more than ``max_principals``. Each spawn here looks at
    the processes still alive: never more than the bound, and the newcomer is admitted once the old one
    has ended (not refused)."""
    servers = {"s": _stdio(protocol="legacy", isolation="per_principal", max_principals=1)}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        sessions = rt.manager.upstreams["s"].principals
        pids: list[int] = []
        seen: list[int] = []  # at each spawn, how many earlier principal processes were still alive
        spawn = sessions._spawn

        def counted(principal: str) -> Any:
            seen.append(sum(1 for p in pids if alive(p)))
            return spawn(principal)

        sessions._spawn = counted
        for who in ("alice", "bob"):
            failed, text = await _call(gw, who, "s__pid")
            assert not failed, text
            pids.append(int(text))
            await sessions.close_idle(time.monotonic() + 601)  # closed: its process is still ending
        assert seen == [0, 0], seen


async def test_a_session_the_upstream_forgot_reopens_only_its_principals(data_dir: Path,
                                                                        http_stateful: str) -> None:
    """The upstream forgets alice's Mcp-Session-Id (404, as after a restart) while bob's lives on: alice's
    call is refused with the reason and not sent again (on the old session or a new one), her session
    alone reconnects (logged in as nobody), bob's stays his own, and while it happens neither gets the
    other's answer."""
    servers = {"h": {"url": http_stateful, "protocol": "legacy", "isolation": "per_principal"}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        gw = rt.gateway
        sessions = rt.manager.upstreams["h"].principals
        for who in ("alice", "bob"):
            await _call(gw, who, "h__login", name=who)
        bob_up = sessions.open()["bob"]
        assert await _call(gw, "alice", "h__forget") == (False, "forgotten")
        failed, text = await _call(gw, "alice", "h__bump", key="alice")
        assert failed and "reconnecting" in text, text

        async def alice_back() -> bool:
            return await _call(gw, "alice", "h__whoami") == (False, "nobody")

        bob_meanwhile = asyncio.ensure_future(
            asyncio.gather(*(_call(gw, "bob", "h__whoami") for _ in range(5)))
        )
        await _until(alice_back)
        assert await bob_meanwhile == [(False, "bob")] * 5
        assert await _call(gw, "alice", "h__bump", key="alice") == (False, "1")  # the refused one never ran
        assert sessions.open()["bob"] is bob_up and bob_up.reconnects == 0
        assert sessions.open()["alice"].reconnects >= 1
        assert await _call(gw, "alice", "h__whoami") == (False, "nobody")
        assert await _call(gw, "bob", "h__whoami") == (False, "bob")


async def test_max_result_bytes_holds_on_the_sse_transport(data_dir: Path) -> None:
    """A server's ``max_result_bytes`` below the transports' own event bound (1 MiB) holds on the old SSE
    transport too, where every answer is an event on one stream (streamable HTTP: test_result_byte_limit.py);
    for a principal's session as for the shared one. The next call is answered, once the connection (whose
    one stream the event was cut from) has reconnected."""
    with _served("--sse") as url:
        servers = {"h": {"url": url, "protocol": "legacy", "max_result_bytes": 65536},
                   "p": {"url": url, "protocol": "legacy", "max_result_bytes": 65536,
                         "isolation": "per_principal"}}
        async with running_gateway(make_config(data_dir, servers)) as rt:
            for up in ("h", "p"):
                failed, text = await _call(rt.gateway, "alice", f"{up}__blob", size=300_000)
                assert failed and "larger than" in text and len(text) < 1000, (up, text[:300])

                async def answered() -> bool:
                    return await _call(rt.gateway, "alice", f"{up}__blob", size=10) == (False, "x" * 10)

                await _until(answered)
