"""No shadowing: rules bind to a tool's identity (its server and own name); a server cannot take another's
tool names, statically (prefixes) or by naming its tools so (withheld, reported naming both servers)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.identity.identity_rig import BOOKINGS, BOOKINGS_PL, text
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
IMPOSTOR = str(Path(__file__).with_name("impostor_server.py"))


@pytest.mark.parametrize("servers, builtins, named", [
    ({"bk": {"command": "a"}, "evil": {"command": "b", "prefix": "bk"}}, [], ("evil", "bk")),
    ({"bk": {"command": "a"}, "evil": {"command": "b", "prefix": "bk__x"}}, [], ("evil", "bk")),
    ({"one": {"command": "a", "prefix": "p"}, "two": {"command": "b", "prefix": "p"}}, [], ("two", "one")),
    ({"evil": {"command": "b", "prefix": "device"}}, ["device"], ("evil", "device")),
    ({"sentinel": {"command": "b"}}, ["sentinel"], ("sentinel",)),
])
def test_prefixes_that_shadow_another_server_are_config_errors(servers, builtins, named):
    with pytest.raises(ConfigError) as e:
        parse_config({"mcpServers": servers, "sentinel": {"builtins": builtins}}, source="cfg.json")
    assert all(repr(n) in str(e.value) for n in named), str(e.value)
    # a disabled server shadows nothing
    for spec in servers.values():
        spec["disabled"] = True
    if not builtins:
        parse_config({"mcpServers": servers}, source="cfg.json")


def config(tmp_path: Path, bk_prefix: str | None = None, **sentinel):
    bk = {"command": sys.executable, "args": [str(BOOKINGS)]}
    if bk_prefix is not None:
        bk["prefix"] = bk_prefix
    return parse_config({
        "mcpServers": {"bk": bk, "impostor": {"command": sys.executable, "args": [IMPOSTOR], "prefix": ""}},
        "sentinel": {"rulebases": [str(RULEBASES_DIR / "default.pl"), str(BOOKINGS_PL)], "builtins": [],
                     "data_dir": str(tmp_path), "seeds": {"current_user": "u_123", "today": "2025-01-15"},
                     **sentinel}}, base_dir=tmp_path)


async def test_a_transparent_server_cannot_take_guarded_or_bound_names(tmp_path):
    asked: list[str] = []

    async def answer(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        return ElicitResult(action="decline")

    async with running_gateway(config(tmp_path, policy={"allow": ["bk__*"]})) as rt:
        cat = rt.manager.catalog
        assert (
            cat.tools["bk__cancel_booking"].upstream == "bk" and cat.tools["bk__get_booking"].upstream == "bk"
        )
        assert cat.tools["hello"].upstream == "impostor"
        withheld = {c.split("'")[3] for c in cat.conflicts}
        # a name under bk's namespace that is no bk tool and no governed name is not the impostor's either
        assert withheld == {"bk__cancel_booking", "bk__get_booking", "bk__export_all"}, cat.conflicts
        assert all("'impostor'" in c and "'bk'" in c for c in cat.conflicts)
        assert "bk__export_all" not in cat.tools
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answer) as c:
            r = await c.call_tool("bk__export_all", {})
            assert r.is_error and "unknown tool" in text(r) and not asked
            # the real cancel keeps its rules: the policy's questions, not the impostor's "read-only" pass
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert r.is_error and "impostor" not in text(r)
            assert any("Why do you want to cancel" in q for q in asked)


async def test_rules_bind_to_the_identity_whatever_the_prefix(tmp_path):
    async with running_gateway(config(tmp_path, bk_prefix="bookings")) as rt:
        cat = rt.manager.catalog
        assert (
            "bookings__cancel_booking" in cat.tools
            and cat.identities["bk__cancel_booking"] == "bookings__cancel_booking"
        )
        # the impostor may keep bk__* names nobody owns now? no: the policy governs them
        assert "bk__cancel_booking" not in cat.tools and "bk__get_booking" not in cat.tools
        async with Client(
            rt.front.server, mode="auto"
        ) as c:  # cannot elicit: the blocked result lists questions
            r = await c.call_tool("bookings__cancel_booking", {"booking_id": "BK-789"})
            assert r.is_error and "Why do you want to cancel BK-789?" in text(r)
            # the policy's fetches went to the real server under its identity (the booking's status, by bk)
            r = await c.call_tool("bookings__cancel_booking", {"booking_id": "BK-111"})
            assert r.is_error and "not a booking of the current user" in text(r)
