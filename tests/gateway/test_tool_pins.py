"""A configured upstream's tools are pinned as first seen: a later change (a "rug pull") is held until the
owner accepts it. Driven through a real gateway, a real upstream that changes its tools, and the real CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client import IncomingMessage
from mcp.types import ElicitResult, Tool, ToolAnnotations, ToolListChangedNotification

from sentinel_mcp.app.http_extras import gateway_counts_text
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.cli import main as cli
from sentinel_mcp.gateway.tool_pins import FILE_NAME, ToolPins, definition_of, digest_of
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
RUG = str(Path(__file__).with_name("rug_server.py"))


def rug_config(data_dir: Path, state: Path, **sentinel):
    server = {**forked_spec(RUG), "env": {"RUG_STATE": str(state)}}  # support/forked_upstreams.py
    return make_config(data_dir, {"rg": server}, **sentinel)


async def names(c: Client) -> set[str]:
    return {t.name for t in (await c.list_tools()).tools}


async def until(check, seconds: float = 15.0) -> None:
    with anyio.fail_after(seconds):
        while not await check():
            await anyio.sleep(0.05)


def approve():
    async def callback(ctx, params):  # noqa: ANN001
        return ElicitResult(action="accept", content={"approve": True})
    return callback


# the field each change shows up in (what `pins show` and the held reason name)
CHANGES = {
    "description": "description",
    "schema": "inputSchema",
    "read_only": "annotations",
    "title": "title",
    "meta": "_meta",
    "invisible": "description",
}


async def test_every_kind_of_change_is_held_and_a_change_back_is_served_again(data_dir, tmp_path):
    async with running_gateway(rug_config(data_dir, tmp_path / "rug-state")) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=approve()) as c:
            assert "rg__transfer" in await names(c)
            for kind, field in CHANGES.items():
                await c.call_tool("rg__rug", {"kind": kind})

                async def held() -> bool:
                    return "rg__transfer" not in await names(c)

                await until(held)
                r = await c.call_tool("rg__transfer", {"to": "x", "amount": 5})
                text = r.content[0].text
                assert r.is_error and "is held" in text and field in text, (kind, text)
                assert "sentinel-mcp pins accept rg__transfer" in text
                assert any("rg__transfer is held" in p for p in rt.catalog_health.problems)
                assert "\nsentinel_tools_held 1\n" in gateway_counts_text(rt)  # /metrics shows it
                # back to the pinned definition: served again, nothing left held
                await c.call_tool("rg__rug", {"kind": "plain"})

                async def served() -> bool:
                    return "rg__transfer" in await names(c)

                await until(served)
                assert not any("held" in p for p in rt.catalog_health.problems)
                assert "\nsentinel_tools_held 0\n" in gateway_counts_text(rt)
            r = await c.call_tool("rg__transfer", {"to": "x", "amount": 5})
            assert not r.is_error and r.content[0].text == "sent 5 to x"
    pins = ToolPins(data_dir / FILE_NAME)
    assert {e["tool"] for e in pins.entries()} == {"rg__balance", "rg__rug", "rg__transfer"}
    assert pins.held_identities == []


async def test_a_tool_turned_read_only_gets_no_free_pass_until_the_owner_accepts(data_dir, tmp_path, capsys):
    told = anyio.Event()

    async def on_message(m: IncomingMessage) -> None:
        if isinstance(m, ToolListChangedNotification):
            told.set()

    async with running_gateway(rug_config(data_dir, tmp_path / "rug-state")) as rt:
        async with Client(rt.front.server, mode="legacy", message_handler=on_message) as c:
            pinned = {t.name: t for t in (await c.list_tools()).tools}["rg__transfer"]
            assert pinned.annotations.read_only_hint is False
            await c.call_tool("rg__rug", {"kind": "read_only"})
            await until(lambda: _without(c, "rg__transfer"))
            # held: the claim of read-only lets nothing through (no client here could even confirm)
            r = await c.call_tool("rg__transfer", {"to": "attacker", "amount": 1000})
            assert r.is_error and "is held" in r.content[0].text

            capsys.readouterr()
            assert cli(["pins", "list", "--held"]) == 0
            assert "rg__transfer  HELD" in capsys.readouterr().out
            assert cli(["pins", "show", "rg__transfer"]) == 0
            shown = capsys.readouterr().out
            assert "--- annotations (pinned)" in shown and '"readOnlyHint": true' in shown
            # the owner accepts only what was shown: another digest accepts nothing
            assert cli(["pins", "accept", "rg__transfer", "--digest", "0" * 64]) == 1
            assert json.loads(capsys.readouterr().out) == {"accepted": {}}
            assert "rg__transfer" not in await names(c)
            told = anyio.Event()
            assert cli(["pins", "accept", "rg__transfer"]) == 2  # not at a terminal: only a digest shown
            held_digest = shown.split("HELD: ", 1)[1].split("digest ", 1)[1].split()[0]
            assert cli(["pins", "accept", "rg__transfer", "--digest", held_digest]) == 0
            accepted = json.loads(capsys.readouterr().out)["accepted"]
            assert list(accepted) == ["rg__transfer"]
            with anyio.fail_after(15):  # the running gateway sees the file change and tells its clients
                await told.wait()
            now = {t.name: t for t in (await c.list_tools()).tools}["rg__transfer"]
            assert now.annotations.read_only_hint is True
            r = await c.call_tool("rg__transfer", {"to": "x", "amount": 5})
            assert not r.is_error and r.content[0].text == "sent 5 to x"
            assert not rt.catalog_health.problems


async def _without(c: Client, name: str) -> bool:
    return name not in await names(c)


async def test_pins_outlive_a_restart_of_the_gateway_and_its_upstream(data_dir, tmp_path):
    state = tmp_path / "rug-state"
    async with running_gateway(rug_config(data_dir, state)) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            assert "rg__transfer" in await names(c)
    state.write_text("description")  # the upstream comes back changed: never shown, not for a moment
    async with running_gateway(rug_config(data_dir, state)) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            assert await names(c) >= {"rg__balance", "rg__rug"}
            assert "rg__transfer" not in await names(c)
            assert any("rg__transfer is held" in p and "description" in p for p in rt.catalog_health.problems)
    # with pinning off the owner takes upstreams at their word
    async with running_gateway(rug_config(data_dir, state, policy={"pin_tools": False})) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert "<IMPORTANT>" in listed["rg__transfer"].description


@pytest.mark.parametrize("garbage", [
    "{not json",
    '{"format": 1, "pins": []}',
    '{"format": 2, "pins": {}, "held": {}}',
    '{"format": 1, "pins": {"rg__transfer": {"digest": "short", "pinned_at": 1}}, "held": {}}',
    '{"format": 1, "pins": {"rg__transfer": {"digest": "' + "a" * 64 + '", "pinned_at": "now"}}, "held": {}}',
    "\udcff".encode("utf-8", "surrogateescape").decode("latin-1"),
])
async def test_a_pins_file_that_cannot_be_read_holds_every_upstream_tool_and_is_left_as_it_is(
    data_dir, tmp_path, garbage, capsys
):
    data_dir.mkdir(parents=True)
    pins_file = data_dir / FILE_NAME
    pins_file.write_bytes(garbage.encode("latin-1") if garbage.startswith("\xff") else garbage.encode())
    before = pins_file.read_bytes()
    async with running_gateway(rug_config(data_dir, tmp_path / "rug-state")) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            assert not {n for n in await names(c) if n.startswith("rg__")}
            r = await c.call_tool("rg__balance", {})
            assert r.is_error and str(pins_file) in r.content[0].text
            assert any(str(pins_file) in p for p in rt.catalog_health.problems)
    assert pins_file.read_bytes() == before
    with pytest.raises(SystemExit) as e:
        cli(["pins", "list"])
    assert str(pins_file) in str(e.value)


def test_a_definition_is_compared_whatever_the_order_of_its_keys():
    props = {"x": {"type": "string"}, "y": {"type": "integer"}}
    a = Tool(name="t", description="d", input_schema={"type": "object", "properties": props},
             annotations=ToolAnnotations(read_only_hint=True))
    b = Tool(name="other", annotations=ToolAnnotations(read_only_hint=True), description="d",
             input_schema={"properties": {"y": props["y"], "x": props["x"]}, "type": "object"})
    assert digest_of(definition_of(a)) == digest_of(definition_of(b))  # the name is the identity's
    c = b.model_copy(update={"description": "d "})
    assert digest_of(definition_of(a)) != digest_of(definition_of(c))


def test_two_writers_merge_and_an_accept_pins_exactly_the_held_definition(tmp_path):
    path = tmp_path / FILE_NAME
    gateway, owner = ToolPins(path), ToolPins(path)
    first = Tool(name="t", description="one", input_schema={"type": "object"})
    assert gateway.check({"s__t": first, "s__u": first}) == {}
    changed = first.model_copy(update={"description": "two"})
    held = gateway.check({"s__t": changed, "s__u": first})
    assert list(held) == ["s__t"] and held["s__t"].fields == ("description",)
    owner.reload()
    assert owner.held_identities == ["s__t"]
    again = first.model_copy(update={"description": "three"})  # changed again after the owner looked
    gateway.check({"s__t": again, "s__u": first})
    assert owner.accept(["s__t"], digest=digest_of(definition_of(changed))) == {}
    now = digest_of(definition_of(again))
    assert owner.accept(["s__t"], now) == {"s__t": now}
    assert gateway.check({"s__t": again, "s__u": first}) == {}  # the gateway reads the owner's accept
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_a_definition_too_deep_to_write_is_held_not_a_crash(tmp_path):
    schema: dict = {"type": "string"}
    for _ in range(600):
        schema = {"type": "object", "properties": {"a": schema}}
    pins = ToolPins(tmp_path / FILE_NAME)
    held = pins.check({"s__deep": Tool(name="deep", input_schema=schema),
                       "s__ok": Tool(name="ok", input_schema={"type": "object"})})
    assert list(held) == ["s__deep"] and "cannot be pinned" in held["s__deep"]
    assert [e["tool"] for e in pins.entries()] == ["s__ok"]


async def test_a_server_listing_new_names_forever_fills_only_its_own_share_of_the_pins(data_dir, monkeypatch):
    """An upstream that lists new tool names on every listing and announces a change after each pinned them
    all: the pins filled (100,000, some 20 listings of 5,000) and every new tool of every other server was
    held.
    Each server now has its own share; past it only its own new tools are held (the bounds scaled down)."""
    import sentinel_mcp.gateway.tool_pins as tool_pins
    import sentinel_mcp.gateway.upstream_listing as listing
    from sentinel_mcp.config import StdioServer

    from .helpers import toolbox_stdio

    monkeypatch.setattr(tool_pins, "MAX_PINS", 200)
    monkeypatch.setattr(tool_pins, "MAX_PINS_PER_SERVER", 100)
    monkeypatch.setattr(tool_pins, "MAX_KEPT_PER_SERVER", 20_000)  # 40 definitions of ~500 characters
    monkeypatch.setattr(listing, "MIN_RELIST_SECONDS", 0.02)
    root = str(Path(__file__).parents[2])
    flood = {"command": sys.executable, "args": ["-m", "tests.gateway.pin_flood_upstream"], "cwd": root,
             "env": {"PER": "40", "CHARS": "400"}}
    with anyio.fail_after(60):
        async with running_gateway(make_config(data_dir, servers={"fl": flood})) as rt:
            catalog = rt.manager.catalog
            assert await rt.manager.upstreams["fl"].wait_ready(30)
            while not any("pinned already" in why for why in catalog.held.values()):
                await anyio.sleep(0.02)
            async with Client(rt.front.server) as c:  # its announcements end
                await c.call_tool("fl__stop", {})
            tb = rt.manager.add("tb", StdioServer(**toolbox_stdio()))
            assert await tb.wait_ready(30)
            await rt.manager._catalog_changed(tb)
            mine = [n for n, r in catalog.tools.items() if r.upstream == "tb"]
            assert "tb__echo" in mine and not [n for n in catalog.held if n.startswith("tb__")]
            assert all(n.startswith("fl__") for n, why in catalog.held.items() if "pinned already" in why)
            pins = json.loads((data_dir / FILE_NAME).read_text())["pins"]
    flooded = [p for i, p in pins.items() if i.startswith("fl__")]
    assert len(flooded) == 100
    kept = [p for p in flooded if p["definition"] is not None]
    assert 0 < len(kept) < 100  # past its share of kept definitions, digests only


def test_a_servers_changed_definitions_are_kept_within_its_share(tmp_path, monkeypatch):
    """Definitions held as changed count toward their server's share of what is kept: a server changing its
    every tool on every listing keeps digests only past it (the share scaled down)."""
    import sentinel_mcp.gateway.tool_pins as tool_pins

    monkeypatch.setattr(tool_pins, "MAX_KEPT_PER_SERVER", 6_000)
    pins = ToolPins(tmp_path / FILE_NAME)

    def listing(text: str) -> tuple[dict[str, Tool], dict[str, str]]:
        tools = {f"fl__t{i}": Tool(name=f"t{i}", description=text * 1000, input_schema={"type": "object"})
                 for i in range(10)}
        return tools, dict.fromkeys(tools, "fl")

    assert pins.check(*listing("a")) == {}  # pinned: ten of ~1,050 characters, five kept
    held = pins.check(*listing("b"))
    assert len(held) == 10
    data = json.loads((tmp_path / FILE_NAME).read_text())
    assert sum(p["definition"] is not None for p in data["pins"].values()) == 5
    assert sum(c["definition"] is not None for c in data["held"].values()) == 0  # the share is spent


async def test_a_held_tool_is_named_only_to_a_principal_that_may_reach_it(data_dir, tmp_path):
    """The held reason names the tool, its server and what changed: to a principal that may not reach that
    server it is a tool that does not exist (the answer to a name nobody has)."""
    from sentinel_mcp.identity.principal import Principal

    async with running_gateway(rug_config(data_dir, tmp_path / "rug-state")) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=approve()) as c:
            await c.call_tool("rg__rug", {"kind": "description"})

            async def held() -> bool:
                return "rg__transfer" not in await names(c)

            await until(held)
        alice = Principal("alice", "token")
        for bob in (Principal("bob", "token", upstreams=("other",)),
                    Principal("bob", "token", tools=("other__*", "rg__balance"))):
            told = rt.gateway._unknown_tool_message("rg__transfer", bob)
            assert "held" not in told and "description" not in told, told
            nobodys = rt.gateway._unknown_tool_message("rg__transfex", bob)
            assert told == nobodys.replace("transfex", "transfer")
        assert "is held" in rt.gateway._unknown_tool_message("rg__transfer", alice)
