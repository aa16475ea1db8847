"""An upstream's listings are bounded (gateway/upstream_listing.py): pages, items, a repeated cursor, the
refresh's time; change notices never pile up refreshes. The other upstreams are served throughout."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from sentinel_mcp.app.http_app import build_http_app
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import upstream_listing
from sentinel_mcp.identity.http_auth import http_auth_for

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)


def servers(log: Path, **env: str) -> dict:
    env = {"LOG": str(log), "PYTHONPATH": str(sys.path[0]), **env}
    return {"ev": {"command": sys.executable, "args": ["-m", "tests.gateway.listing_upstream"], "env": env,
                   "timeout": 5}, "tb": toolbox_stdio()}


def listed(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


async def wait_until(predicate, timeout: float = 30.0) -> None:  # noqa: ANN001
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.05)


@pytest.mark.parametrize("listing,why", [("endless", "more than 7 pages"), ("repeat", "repeats the cursor")])
async def test_an_endless_listing_at_connect_is_refused_and_reported(data_dir, tmp_path, monkeypatch,
                                                                    listing, why):
    monkeypatch.setattr(upstream_listing, "MAX_PAGES", 7)
    log = tmp_path / "lists.log"
    cfg = make_config(data_dir, servers(log, LISTING=listing))
    async with running_gateway(cfg, startup_wait=3.0) as rt:
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.last_error is not None and why in ev.last_error)
        assert ev.state != "ready" and ev.tools == {}
        assert any(why in p and "it is not served" in p for p in rt.catalog_health.problems)
        assert listed(log) <= 7 * (ev.reconnects + 1)  # each attempt stops at the bound
        assert await rt.manager.upstreams["tb"].wait_ready(60)  # start-up waited 3 s only: for ev's sake
        async with Client(rt.front.server) as c:
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"
            r = await c.call_tool("ev__ping", {})
            assert r.is_error


async def test_too_many_items_are_refused(data_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(upstream_listing, "MAX_ITEMS", 120)
    log = tmp_path / "lists.log"
    cfg = make_config(data_dir, servers(log, LISTING="endless"))
    async with running_gateway(cfg, startup_wait=3.0) as rt:
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.last_error is not None and "more than 120 tools" in ev.last_error)
        assert listed(log) <= 3 * (ev.reconnects + 1)


async def test_change_notices_after_every_listing_are_paced(data_dir, tmp_path, monkeypatch):
    # a change announced after each of the next 6 listings it answers: before, refresh followed refresh at
    # once; now each starts at least MIN_RELIST_SECONDS after the one before (the gateway's own clock: load
    # only lengthens a gap), one refresh per notice (none piled up), and the last change is still seen
    monkeypatch.setattr(upstream_listing, "MIN_RELIST_SECONDS", 0.5)
    log = tmp_path / "lists.log"
    renotices = 6
    cfg = make_config(data_dir, servers(log, ARMED="fine", RENOTICE_COUNT=str(renotices)))
    async with running_gateway(cfg, startup_wait=5.0) as rt:
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.state == "ready")
        starts: list[float] = []
        refresh = ev._refresh_and_announce

        async def noted() -> None:
            starts.append(time.monotonic())
            await refresh()

        ev._refresh_and_announce = noted  # type: ignore[method-assign]
        assert await rt.manager.upstreams["tb"].wait_ready(60)  # a short start-up wait: tb may be later
        async with Client(rt.front.server) as c:
            before = listed(log)
            assert not (await c.call_tool("ev__arm", {})).is_error
            # the arm's notice, then one after each of the next 6 listings: 7 listings, then quiet
            await wait_until(lambda: listed(log) - before == renotices + 1 and ev._relisting is not None
                             and ev._relisting.done(), timeout=60)
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"
            assert len(starts) == renotices + 1 == listed(log) - before, (starts, listed(log) - before)
            gaps = [b - a for a, b in zip(starts, starts[1:])]
            assert all(gap >= 0.5 - 0.02 for gap in gaps), gaps  # (the event loop may wake a timer early)
            assert sorted(ev.tools) == ["arm", "disarm", "ping"]


async def test_cursors_count_toward_the_listing_bytes(data_dir, tmp_path):
    # pages of no items whose cursors are 3 MB each: before, all 100 were read and every cursor kept (300 MB)
    log = tmp_path / "lists.log"
    cfg = make_config(data_dir, servers(log, LISTING="fat_cursor"))
    async with running_gateway(cfg, startup_wait=3.0) as rt:
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.last_error is not None and "more than 32,000,000 bytes" in ev.last_error)
        assert ev.tools == {} and listed(log) <= 11 * (ev.reconnects + 1)


async def test_an_endless_listing_after_a_change_keeps_the_catalog(data_dir, tmp_path, monkeypatch):
    monkeypatch.setattr(upstream_listing, "MAX_PAGES", 7)
    log = tmp_path / "lists.log"
    async with running_gateway(make_config(data_dir, servers(log, ARMED="endless")), startup_wait=5.0) as rt:
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.state == "ready")
        assert await rt.manager.upstreams["tb"].wait_ready(60)  # a short start-up wait: tb may be later
        async with Client(rt.front.server) as c:
            assert not (await c.call_tool("ev__arm", {})).is_error
            await wait_until(lambda: ev.last_error is not None and "more than 7 pages" in ev.last_error)
            assert sorted(ev.tools) == ["arm", "disarm", "ping"]  # the listing before the change
            assert (await c.call_tool("ev__ping", {})).content[0].text == "pong"
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"


async def test_a_refused_listing_after_a_change_is_a_health_problem_until_one_fits(data_dir, tmp_path,
                                                                                   monkeypatch):
    """/healthz (the real app) says degraded and why while the catalog before the change is served; a
    listing within bounds clears it. The bound counts items: the walk stops there, whatever the upstream."""
    monkeypatch.setattr(upstream_listing, "MAX_ITEMS", 120)
    log = tmp_path / "lists.log"
    config = make_config(data_dir, servers(log, ARMED="endless"))
    auth = http_auth_for(config)
    app, holder = build_http_app(
        running_gateway(config), host="127.0.0.1", port=8765, auth=auth.authenticator
    )
    owner = {"Authorization": f"Bearer {auth.owner_token}"}
    async with app.router.lifespan_context(app), httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=app), base_url="http://127.0.0.1:8765", headers=owner
    ) as http:
        rt = holder.runtime
        assert rt is not None
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.state == "ready")
        assert (await http.get("/healthz")).json()["status"] == "ok"
        before = listed(log)
        async with Client(rt.front.server) as c:
            assert not (await c.call_tool("ev__arm", {})).is_error
            await wait_until(lambda: ev.listing_problem is not None)
            await wait_until(lambda: ev._relisting is not None and ev._relisting.done())
            health = (await http.get("/healthz")).json()
            assert health["status"] == "degraded"
            assert any("upstream ev: listing refused (it lists more than 120 tools); the catalog before the "
                       "change is kept" == p for p in health["problems"])
            assert "more than 120 tools" in health["upstreams"]["ev"]["last_error"]
            assert sorted(ev.tools) == ["arm", "disarm", "ping"]
            assert listed(log) - before <= 3 * 2  # pages of 50: the walk stops at the bound (twice at most)
            # the upstream lists within bounds again (and says so): the problem is gone
            assert not (await c.call_tool("ev__disarm", {})).is_error
            await wait_until(lambda: ev.listing_problem is None)
            await wait_until(lambda: ev._relisting is not None and ev._relisting.done())
            health = (await http.get("/healthz")).json()
            assert health["status"] == "ok" and health["problems"] == []
            assert health["upstreams"]["ev"]["last_error"] is None


async def test_change_notices_do_not_pile_up_refreshes(data_dir, tmp_path):
    log = tmp_path / "lists.log"
    cfg = make_config(data_dir, servers(log, ARMED="hang", NOTICES="3000"))
    async with running_gateway(cfg, startup_wait=5.0) as rt:
        ev = rt.manager.upstreams["ev"]
        await wait_until(lambda: ev.state == "ready")
        before = listed(log)
        assert await rt.manager.upstreams["tb"].wait_ready(60)  # a short start-up wait: tb may be later
        async with Client(rt.front.server) as c:
            assert not (await c.call_tool("ev__arm", {})).is_error
            assert (await c.call_tool("tb__echo", {"text": "fine"})).content[0].text == "fine"
            # the one refresh that waits is ended by its deadline (5 s), then at most one more runs
            await wait_until(lambda: ev.last_error is not None and "longer than 5 s" in ev.last_error)
            await wait_until(lambda: ev._relisting is not None and ev._relisting.done(), timeout=20)
            assert (await c.call_tool("ev__ping", {})).content[0].text == "pong"
    assert 1 <= listed(log) - before <= 2


async def test_a_listing_answer_nested_too_deep_to_read_is_refused_at_once_saying_so(data_dir):
    """A tool schema nested ~120 objects deep makes the listing's answer a message the SDK cannot parse (its
    JSON parser's recursion limit): the answer was dropped, and the listing waited out the upstream's whole
    timeout, then blamed a slow server. It is refused at once, naming what could not be read; the upstream
    is reported, and nothing of it is served."""
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.deep_schema_upstream"],
              "env": {"DEPTH": "120"}, "timeout": 30}
    started = time.monotonic()
    async with running_gateway(make_config(data_dir, {"dp": server}), startup_wait=40) as rt:
        [up] = [u for u in rt.catalog_health.upstreams() if u.name == "dp"]
        assert time.monotonic() - started < 25  # not the 30 s timeout
        assert up.state != "ready" and up.tools == 0
        assert "could not be read" in (up.last_error or "") and "recursion limit" in (up.last_error or "")
    # the same server, nested less deep: served
    server["env"] = {"DEPTH": "40"}
    async with running_gateway(make_config(data_dir, {"dp": server})) as rt:
        assert {"dp__deep", "dp__ok"} <= set(rt.manager.catalog.tools)
