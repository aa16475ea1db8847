"""A transparent upstream (``"prefix": ""``) never serves a name in another configured server's namespace
(``<its name or prefix>__...``, a built-in's too), whether that server is connected or not, for tools and
prompts alike: such a name is withheld and the conflict reported, never settled by which server connected
first or sorts first. Its notices for another upstream's resource are not relayed; URIs that differ only in
scheme or host case are one URI; a completion carries at most 100 values. Real gateway, a hostile stdio
upstream subprocess, the real MCP client in both eras."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import PromptReference, ResourceTemplateReference, ResourceUpdatedNotification

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.catalog import canonical_uri

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
MODES = ["legacy", "auto"]

# a namespace in another letter case is the same namespace (TB__delete_thing beside tb__delete_thing)
SQUATTED = ["tb__delete_thing", "tb__review", "tb__x__y", "fs__read", "files__read", "tb__write_marker",
            "TB__delete_thing", "Fs__read", "FILES__read"]
OWN = ["hello", "tb_ok", "tbx__y", "fsx__read", "squat__note"]


def squatter(log: Path, prefix: str | None = "", **env: str) -> dict:
    spec = {"command": sys.executable, "args": ["-m", "tests.gateway.squatting_upstream"],
            "env": {"LOG": str(log), "PYTHONPATH": str(sys.path[0]), **env}}
    if prefix is not None:
        spec["prefix"] = prefix
    return spec


def requests(log: Path, method: str) -> list[dict]:
    if not log.exists():
        return []
    return [m["params"] for m in map(json.loads, log.read_text().splitlines()) if m["method"] == method]


def servers(log: Path, name: str, tb_up: bool, **env: str) -> dict:
    tb = toolbox_stdio() if tb_up else {"command": sys.executable, "args": ["/nonexistent/tb.py"],
                                        "connect_timeout": 2}
    # "files" (prefix "fs") is configured but disabled-by-failure too: its namespaces are still its own
    files = {"command": sys.executable, "args": ["/nonexistent/files.py"], "prefix": "fs",
             "connect_timeout": 2}
    return {"tb": tb, "files": files, name: squatter(log, **env)}


@pytest.mark.parametrize("name", ["aa", "zz"])  # sorting before or after tb changes nothing
@pytest.mark.parametrize("tb_up", [False, True])  # tb not connected, or connected
async def test_a_transparent_server_never_takes_another_servers_names(data_dir, tmp_path, name, tb_up):
    log = tmp_path / "squatter.log"
    names = ",".join(SQUATTED + OWN)
    cfg = make_config(data_dir, servers(log, name, tb_up, TOOLS=names, PROMPTS=names), builtins=[])
    with anyio.fail_after(90):
        async with running_gateway(cfg, startup_wait=10) as rt:
            for mode in MODES:
                async with Client(rt.front.server, mode=mode) as c:
                    await _sees_no_squatted_name(rt, c, name, tb_up)
    called = [p["name"] for method in ("tools/call", "prompts/get") for p in requests(log, method)]
    assert not set(called) & set(SQUATTED)


async def _sees_no_squatted_name(rt, c: Client, name: str, tb_up: bool) -> None:  # noqa: ANN001
    cat = rt.manager.catalog
    tools = {t.name: cat.tools[t.name].upstream for t in (await c.list_tools()).tools}
    prompts = {p.name: cat.prompts[p.name].upstream for p in (await c.list_prompts()).prompts}
    for exposed in OWN:
        assert tools[exposed] == name and prompts[exposed] == name, exposed
    for exposed in SQUATTED:
        assert tools.get(exposed, "tb") == "tb" and prompts.get(exposed, "tb") == "tb", exposed
        assert not any(v == name and k.startswith(exposed) for k, v in tools.items()), exposed
        result = await c.call_tool(exposed, {"name": "x"})
        assert "squatter" not in str(result.content), exposed
        try:
            got = await c.get_prompt(exposed, {"code": "x"})
            assert "squatter" not in str(got.messages), exposed
        except MCPError as e:
            assert "unknown prompt" in e.error.message
    if tb_up:  # tb's own prompt keeps its plain name
        assert prompts["tb__review"] == "tb"
        assert "Please review: x" in str((await c.get_prompt("tb__review", {"code": "x"})).messages)
    conflicts = [x for x in cat.conflicts if repr(name) in x]
    for exposed in SQUATTED:
        for kind in ("tool", "prompt"):
            assert any(f"a {kind} named {exposed!r}" in x for x in conflicts), (kind, exposed)
    assert any("'files'" in x for x in conflicts)


def test_configured_namespaces(data_dir):
    servers = {"tb": toolbox_stdio(), "files": {"command": "x", "prefix": "fs"},
               "wrap": {"command": "y", "prefix": ""}, "off": {"command": "z", "disabled": True}}
    cfg = make_config(data_dir, servers, builtins=["sentinel"])
    assert cfg.namespaces() == {"tb": "tb", "files": "files", "fs": "files", "wrap": "wrap",
                                "sentinel": "sentinel"}


@pytest.mark.parametrize("mode", MODES)
async def test_an_upstream_cannot_signal_another_upstreams_resource(data_dir, tmp_path, mode):
    log = tmp_path / "squatter.log"
    victim = squatter(tmp_path / "victim.log", prefix=None, URIS="vic://r", TEMPLATES="vic://item/{x}")
    srv = {"vic": victim, "sq": squatter(log, prefix=None, URIS="sq://own")}
    got: list[str] = []

    async def on_message(message):  # noqa: ANN001
        if isinstance(message, ResourceUpdatedNotification):
            got.append(str(message.params.uri))

    async with running_gateway(make_config(data_dir, srv)) as rt:
        async with Client(rt.front.server, mode="legacy", message_handler=on_message) as legacy, \
                Client(rt.front.server, mode=mode) as caller:
            watched = ["vic://r", "vic://item/7", "sq://own"]
            for uri in watched:
                await legacy.subscribe_resource(uri)

            async def spoof_then_own() -> None:
                # notices from one upstream arrive in order: a forged one would come before the genuine one
                for uri in ("vic://r", "vic://item/7", "VIC://r", "sq://own"):
                    await caller.call_tool("sq__spoof", {"uri": uri})

            if mode == "auto":
                async with caller.listen(resource_subscriptions=watched) as sub:
                    await spoof_then_own()
                    with anyio.fail_after(10):
                        async for event in sub:
                            assert getattr(event, "uri", None) == "sq://own", event
                            break
            else:
                await spoof_then_own()
            with anyio.fail_after(10):
                while not got:
                    await anyio.sleep(0.02)
            assert got == ["sq://own"]


@pytest.mark.parametrize("mode", MODES)
async def test_uris_equal_but_for_scheme_or_host_case_are_one_uri(data_dir, tmp_path, mode):
    log = tmp_path / "squatter.log"
    srv = {"tb": toolbox_stdio(), "sq": squatter(
        log, prefix=None, URIS="toolbox://STATIC,Toolbox://static,sq://Own",
        TEMPLATES="TOOLBOX://item/{x},Toolbox://Item.Host/{x},sq://T/{x}")}
    async with running_gateway(make_config(data_dir, srv)) as rt, Client(rt.front.server, mode=mode) as c:
        for uri in ("toolbox://static", "TOOLBOX://STATIC", "Toolbox://static", "toolbox://item/1",
                    "TOOLBOX://item/1", "TooLBox://item/1"):
            try:
                text = (await c.read_resource(uri)).contents[0].text
            except MCPError:
                continue  # contested: served by nobody
            assert not text.startswith("squatter"), uri
        # its own URIs still route to it, in any scheme and host case; the path keeps its case
        assert (await c.read_resource("SQ://own")).contents[0].text == "squatter: SQ://own"
        assert (await c.read_resource("sq://t/1")).contents[0].text == "squatter: sq://t/1"
        assert (await c.read_resource("toolbox://ITEM.HOST/1")).contents[0].text.startswith("squatter")
        conflicts = rt.manager.catalog.conflicts
        assert any("'toolbox://static'" in x and "'sq'" in x for x in conflicts), conflicts
        assert any("TOOLBOX://item/{x}" in x for x in conflicts), conflicts
    assert not [p for p in requests(log, "resources/read") if "item/1" in p["uri"] or "static" in p["uri"]]


def test_canonical_uri():
    assert canonical_uri("HTTPS://Ex.AMPLE.com:80/A/b?Q=1#F") == "https://ex.ample.com:80/A/b?Q=1#F"
    assert canonical_uri("Toolbox://STATIC") == "toolbox://static"
    assert canonical_uri("TOOLBOX://item/{X}") == "toolbox://item/{X}"
    assert canonical_uri("file:///ETC/passwd") == "file:///ETC/passwd"
    for odd in ("no scheme", "://x", "a b://C", "urn:ISBN:1"):
        assert canonical_uri(odd) == odd


async def test_a_completion_carries_at_most_100_values(data_dir, tmp_path):
    log = tmp_path / "squatter.log"
    srv = {"sq": squatter(log, prefix=None, PROMPTS="p", TEMPLATES="sq://t/{x}")}
    async with running_gateway(make_config(data_dir, srv)) as rt:
        for mode in MODES:
            async with Client(rt.front.server, mode=mode) as c:
                for count in (0, 3, 100, 101, 200_000):
                    for ref in (PromptReference(type="ref/prompt", name="sq__p"),
                                ResourceTemplateReference(type="ref/resource", uri="sq://t/{x}")):
                        done = (await c.complete(ref, {"name": "x", "value": str(count)})).completion
                        assert done.values == [f"v{i}" for i in range(min(count, 100))]
                        assert done.has_more is (count > 100)
                        assert done.total == count  # the upstream said -5: never fewer than it gave
                # a value with characters a person cannot see is not offered (shown, it would not be the
                # value the upstream gets; sent, it would carry what the person never saw)
                done = (await c.complete(PromptReference(type="ref/prompt", name="sq__p"),
                                         {"name": "x", "value": "hidden"})).completion
                assert done.values == ["plain", "also plain"] and done.has_more is True
