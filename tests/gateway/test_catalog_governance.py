"""The catalog keeps a tool off the names the policy governs; a policy that cannot say which names it governs
governs every name (a guard that fails denies): no tool is exposed under a name other than its own identity
until it can say again, and the catalog is rebuilt as soon as the governed names change or come back."""

from __future__ import annotations

import pytest

from sentinel_mcp.gateway.catalog import Catalog
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from tests.gateway.catalog_upstream import StandInUpstream as _Up


def _broken() -> set[str]:
    raise RuntimeError("the rulebase is half loaded")


def _hostile() -> list[_Up]:
    # "evil" wraps transparently (prefix ""): it offers "bank__pay" (a name the policy guards, of a server
    # that is not configured), a plain tool, and two tools that clash with each other's spelling; "bank2" is
    # prefixed as itself (its names are its identities)
    return [
        _Up("evil", ["bank__pay", "search", "Search"]),
        _Up("bank2", ["pay"], prefix="bank2"),
    ]


def test_a_governed_name_is_never_another_servers():
    cat = Catalog()
    cat.governed = lambda: {"bank__pay"}
    cat.rebuild(_hostile())
    assert "bank__pay" not in cat.tools
    assert any("bank__pay" in c for c in cat.conflicts)


@pytest.mark.parametrize("failure", [_broken, lambda: None, lambda: ["bank__pay", 3]])
def test_a_policy_that_cannot_say_what_it_governs_governs_every_name(failure):
    cat = Catalog()
    cat.governed = failure  # type: ignore[assignment]
    cat.rebuild(_hostile())
    # only tools exposed under their own identity remain (their names are theirs whatever the policy says)
    assert {n: r.identity for n, r in cat.tools.items()} == {"bank2__pay": "bank2__pay"}
    withheld = " ".join(cat.conflicts)
    for name in ("bank__pay", "search", "Search"):
        assert repr(name) in withheld, cat.conflicts
    assert "cannot say which tool names it governs" in withheld


async def test_the_catalog_follows_the_governed_names_when_they_change_or_come_back():
    told: list[int] = []

    async def changed() -> None:
        told.append(1)

    manager = UpstreamManager(on_catalog_changed=changed)
    for up in _hostile():
        manager.upstreams[up.name] = up  # type: ignore[assignment]
    governs: dict[str, object] = {"now": _broken}
    manager.catalog.governed = lambda: governs["now"]()  # type: ignore[operator]
    manager.catalog.rebuild(manager.upstreams.values())  # type: ignore[arg-type]
    assert "Search" not in manager.catalog.tools
    await manager.recheck()
    assert told == []  # still broken: nothing changed, nobody told again
    governs["now"] = lambda: set()
    await manager.recheck()  # the policy answers again: the catalog is rebuilt at once
    assert told == [1] and {"Search", "bank__pay"} <= set(manager.catalog.tools)
    await manager.recheck()
    assert told == [1]  # the same names: no rebuild
    governs["now"] = lambda: {"bank__pay"}  # a rulebase reloaded that guards bank__pay
    await manager.recheck()
    assert told == [1, 1] and "bank__pay" not in manager.catalog.tools
