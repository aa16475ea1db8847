"""The catalog is built once at start-up (issue 21, cold start): upstreams arriving during the manager's
start-up wait are listed by the one build that ends it, not each by a rebuild of its own (each re-showed every
tool listed so far and re-read the pins, for no reader: nothing is served before the gateway is assembled).
After the start, every change rebuilds and is announced as before. Real gateway, real stdio upstreams."""

from __future__ import annotations

import anyio
import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import catalog as catalog_module

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[frozenset[str]]:
    """Each catalog build's upstreams that had tools then (the real rebuild runs: counted, not replaced)."""
    seen: list[frozenset[str]] = []
    real = catalog_module.Catalog.rebuild

    def counted(self, upstreams):  # noqa: ANN001, ANN202
        ups = list(upstreams)
        seen.append(frozenset(u.name for u in ups if u.tools))
        return real(self, ups)

    monkeypatch.setattr(catalog_module.Catalog, "rebuild", counted)
    return seen


@pytest.mark.parametrize("pin_tools", [True, False])
async def test_one_build_lists_every_upstream_ready_at_start(data_dir, builds, pin_tools):
    # (each's first connect waited for up to 60 s: a loaded machine's slow start is no second build)
    servers = {n: toolbox_stdio(connect_timeout=60) for n in ("tb", "tb2", "tb3")}
    cfg = make_config(data_dir, servers=servers, policy={"pin_tools": pin_tools})
    with anyio.fail_after(90):
        async with running_gateway(cfg, startup_wait=60) as rt:
            assert all(rt.manager.upstreams[n].state == "ready" for n in servers)
            # main: one build per upstream arriving, then the start-up wait's own
            assert len(builds) == 1 and rt.manager.catalog.version == 1, builds
            assert {"tb", "tb2", "tb3"} <= builds[0]
            names = set(rt.manager.catalog.tools)
            assert {"tb__echo", "tb2__echo", "tb3__echo"} <= names
            assert not rt.manager.starting


async def test_after_the_start_each_change_rebuilds_and_is_announced(data_dir, builds):
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(connect_timeout=60)})
    with anyio.fail_after(90):
        async with running_gateway(cfg, startup_wait=60) as rt:
            told: list[int] = []
            hook = rt.manager.on_catalog_changed
            assert hook is not None

            async def counting() -> None:
                told.append(1)
                await hook()

            rt.manager.on_catalog_changed = counting
            before = rt.manager.catalog.version
            await rt.manager._catalog_changed(rt.manager.upstreams["tb"])  # as a list_changed does
            await rt.manager._catalog_changed(None)  # as a pins change does
            assert rt.manager.catalog.version == before + 2 and told == [1, 1]
            assert "tb__echo" in rt.manager.catalog.tools


async def test_an_upstream_ready_after_the_start_up_wait_still_joins(tmp_path, data_dir, builds):
    """The wait ends (its bound passed) with one upstream not ready: the build then lists the others, and
    the late one is listed by a rebuild of its own when it connects (the start-up skip is over)."""
    gate = tmp_path / "go"
    box = toolbox_stdio()
    late = {"command": "sh", "args": ["-c", f'while [ ! -e "{gate}" ]; do sleep 0.1; done; '
                                      f'exec "{box["command"]}" "{box["args"][0]}"'], "connect_timeout": 60}
    cfg = make_config(data_dir, servers={"late": late})
    with anyio.fail_after(90):
        async with running_gateway(cfg, startup_wait=0.5) as rt:
            assert rt.manager.upstreams["late"].state != "ready"
            assert "late__echo" not in rt.manager.catalog.tools
            gate.touch()
            while "late__echo" not in rt.manager.catalog.tools:
                await anyio.sleep(0.05)
            assert "late" in builds[-1]
