"""Whose tool annotations are believed (gateway/annotation_trust.py): a server the owner does not trust loses
its tools' behaviour hints before the catalog, the guard or a client sees them, so calling a destructive tool
"read-only" no longer gets it run without a question under the fail-safe default."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest
from mcp import Client
from mcp.types import ElicitResult, Tool, ToolAnnotations

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError, RemoteServer, StdioServer
from sentinel_mcp.gateway.annotation_trust import trusts_annotations, without_hints

from ..conftest import free_port, stop_process
from .helpers import TOOLBOX, make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)


def asking(answer: bool = True):
    asked: list[str] = []

    async def callback(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        props = (params.requested_schema or {}).get("properties", {})
        return ElicitResult(action="accept", content={k: answer for k in props})

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


def test_which_servers_are_believed():
    stdio = {"command": "x"}
    assert trusts_annotations(StdioServer(**stdio))
    assert not trusts_annotations(StdioServer(**stdio, trust_annotations=False))
    for url in (
        "http://127.0.0.1:9/mcp",
        "http://localhost:9/mcp",
        "http://[::1]:9/mcp",
        "https://127.0.0.2/m",
    ):
        assert trusts_annotations(RemoteServer(url=url)), url
        assert not trusts_annotations(RemoteServer(url=url, trust_annotations=False)), url
    for url in (
        "https://mcp.example.com/mcp",
        "https://10.0.0.5/mcp",
        "https://localhost.example.com/mcp",
        "https://127.0.0.1.nip.io/mcp",
        "https://[fd00::2]/mcp",
    ):
        assert not trusts_annotations(RemoteServer(url=url)), url
        assert trusts_annotations(RemoteServer(url=url, trust_annotations=True)), url
    assert trusts_annotations(object())  # a built-in: Sentinel's own code


def test_hints_are_dropped_and_the_title_kept():
    hinted = Tool(
        name="wipe",
        input_schema={"type": "object"},
        annotations=ToolAnnotations(
            title="Wipe",
            read_only_hint=True,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=False,
        ),
    )
    bare = without_hints(hinted).annotations
    assert bare is not None and bare.title == "Wipe"
    assert (bare.read_only_hint, bare.destructive_hint, bare.idempotent_hint, bare.open_world_hint) == (
        None,
    ) * 4
    plain = Tool(name="t", input_schema={"type": "object"})
    assert without_hints(plain) is plain


@pytest.mark.parametrize("value", ["false", 0, 1, "no", [], {}])
def test_the_setting_takes_a_boolean_only(data_dir, value):
    with pytest.raises(ConfigError, match="trust_annotations"):
        make_config(data_dir, {"tb": toolbox_stdio(trust_annotations=value)})


async def test_an_untrusted_servers_read_only_tool_is_confirmed_and_shown_without_hints(data_dir):
    config = make_config(data_dir, {"tb": toolbox_stdio(trust_annotations=False)})
    async with running_gateway(config) as rt:
        yes = asking(True)
        async with Client(rt.front.server, mode="auto", elicitation_callback=yes) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            for tool in tools.values():
                ann = tool.annotations
                assert ann is None or (ann.read_only_hint, ann.destructive_hint) == (None, None), tool.name
            # the toolbox calls echo read-only: believed, it ran unasked; not believed, it is confirmed
            assert (await c.call_tool("tb__echo", {"text": "hi"})).content[0].text == "hi"
            assert len(yes.asked) == 1 and "tb__echo" in yes.asked[0]
        async with Client(rt.front.server, mode="auto") as c:  # a client that cannot be asked: refused
            r = await c.call_tool("tb__echo", {"text": "hi"})
            assert r.is_error and r.meta["sentinel/decision"] == "ask" and r.meta["sentinel/blocked"] is True
    # trusted (the default for a process Sentinel starts), the same tool runs unasked
    async with running_gateway(make_config(data_dir / "trusted", {"tb": toolbox_stdio()})) as rt:
        async with Client(rt.front.server, mode="auto") as c:
            assert (await c.call_tool("tb__echo", {"text": "hi"})).content[0].text == "hi"


def _address_beyond_loopback() -> str | None:
    """An IPv4 address of this machine that is not loopback (the route a packet to a public address takes)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.200", 9))  # TEST-NET-1: nothing is sent by a UDP connect
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


async def test_a_server_beyond_loopback_is_not_believed_by_default(data_dir):
    address = _address_beyond_loopback()
    if address is None:
        pytest.skip("this machine has no address beyond loopback")
    port = free_port()
    up = subprocess.Popen(
        [sys.executable, TOOLBOX, "--http", str(port), address],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        url = f"http://{address}:{port}/mcp"
        _wait_port(address, port, up)
        config = make_config(data_dir, {"far": {"url": url, "tls": "off"}})
        async with running_gateway(config) as rt:
            async with Client(rt.front.server, mode="auto") as c:
                echo = {t.name: t for t in (await c.list_tools()).tools}["far__echo"]
                assert echo.annotations is None or echo.annotations.read_only_hint is None
                r = await c.call_tool("far__echo", {"text": "hi"})
                # not run: the fail-safe default confirms a tool without hints; this client cannot be asked
                assert r.is_error and r.meta["sentinel/decision"] == "ask"
        trusted = make_config(data_dir / "t", {"far": {"url": url, "tls": "off", "trust_annotations": True}})
        async with running_gateway(trusted) as rt:
            async with Client(rt.front.server, mode="auto") as c:
                assert (await c.call_tool("far__echo", {"text": "hi"})).content[0].text == "hi"
    finally:
        stop_process(up)


def _wait_port(host: str, port: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the toolbox ended"
        with socket.socket() as s:
            if s.connect_ex((host, port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"{host}:{port} never listened")
