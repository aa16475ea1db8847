"""A request an upstream sends that Sentinel never declared it answers is refused by Sentinel and audited with
its cause and its call, as every other refused push is (``gateway/undeclared_requests.py``).

Before, the SDK answered them itself and nothing was written: a shared upstream's ``roots/list`` (the
capability not declared to it, ``relay_permits``) got "List roots not supported", a method no MCP version
has got "Method not found"; a hostile upstream probing its client left no trace. The real gateway, a real
upstream over stdio and streamable HTTP on 127.0.0.1 (``relay_server.py``), the real client, the real
SQLite audit read as it is on disk after the gateway stopped."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import RemoteServer
from sentinel_mcp.gateway.upstream import Upstream, UpstreamCallError, UpstreamHooks
from tests.gateway.helpers import make_config, served_http
from tests.gateway.relay_server import OTHER_METHOD
from tests.gateway.test_lean_upstream import _nothing, hostile  # noqa: F401 - its fixture
from tests.gateway.test_push_refusals_audited import _rows

pytestmark = pytest.mark.timeout(180)
RELAY = str(Path(__file__).parent / "relay_server.py")
BOB = "bob-token-0123456789abcdef00"


def _said(result: Any) -> str:
    return "\n".join(getattr(c, "text", "") for c in result.content)


async def _asked(data_dir: Path, server: dict[str, Any], tool: str) -> tuple[Any, list[dict[str, Any]], Any]:
    """``tool`` called once by a client that could answer anything, on a connection another principal
    (bob) may use: its result, the audit rows and the upstream's count of such refusals."""
    config = make_config(data_dir, {"rl": server}, principals=[{"name": "bob", "token": BOB}])

    async def roots(_ctx: Any) -> Any:
        from mcp.types import ListRootsResult, Root

        return ListRootsResult(roots=[Root(uri="file:///home/owner", name="home")])  # type: ignore[arg-type]

    async with running_gateway(config) as rt:
        up = rt.manager.upstreams["rl"]
        assert up.shared  # bob may reach it: no roots declared
        async with Client(rt.front.server, mode="legacy", list_roots_callback=roots) as c:
            result = await c.call_tool(f"rl__{tool}", {})
        counted = getattr(up, "pushes_undeclared", None)
    return result, _rows(config.store_path), counted


def _refused_row(rows: list[dict[str, Any]], tool: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The one refusal row and the call's own row (its principal, session and decision named)."""
    pushed = [r for r in rows if r["outcome"] == "push_refused"]
    assert len(pushed) == 1, rows
    call = [r for r in rows if r["tool"] == f"rl__{tool}" and r["outcome"] != "push_refused"]
    assert call, rows
    row = pushed[0]
    assert (row["tool"], row["session"], row["principal"], row["upstream"], row["decision"]) == (
        f"rl__{tool}", call[0]["session"], call[0]["principal"], "rl", "deny"), row
    args = json.loads(row["arguments"])
    assert args["call"] == call[0]["decision_id"] and args["refused"] == 1, args
    return row, args


def _upstream(transport: str, url: str | None) -> dict[str, Any]:
    return {"url": url} if transport == "http" else {"command": sys.executable, "args": [RELAY]}


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_shared_upstreams_roots_request_is_refused_and_audited(data_dir: Path, transport: str
                                                                   ) -> None:
    """The capability was not declared, the upstream asks anyway: refused in Sentinel's words, a row with
    the call, the kind and the cause; the caller's roots never reach it."""
    if transport == "http":
        with served_http(RELAY) as url:
            result, rows, counted = await _asked(data_dir, _upstream(transport, url), "roots")
    else:
        result, rows, counted = await _asked(data_dir, _upstream(transport, None), "roots")
    said = _said(result)
    assert "/home/owner" not in said and "not told Sentinel answers it" in said, said
    row, args = _refused_row(rows, "roots")
    assert (args["push"], args["cause"]) == ("roots", "not_declared"), args
    assert "roots/list" in row["reason"] and counted == 1, row


async def test_a_request_of_no_known_method_is_refused_and_audited(data_dir: Path) -> None:
    """A method no MCP version has (a probe, its name holding a hidden mark): refused and audited, its
    name in the reason bounded and escaped."""
    result, rows, counted = await _asked(data_dir, _upstream("stdio", None), "ask_other")
    said = _said(result)
    assert "answers no request of that method" in said and "answered" not in said, said
    row, args = _refused_row(rows, "ask_other")
    assert (args["push"], args["cause"]) == ("other", "unknown_method"), args
    assert "acme/whoami\\u202e" in row["reason"] and "\u202e" not in row["reason"], row
    assert OTHER_METHOD not in row["reason"] and counted == 1


@pytest.mark.parametrize("lean", [True, False])
async def test_a_2026_upstreams_request_of_its_own_is_refused_and_audited(
        hostile: str, lean: bool) -> None:  # noqa: F811
    """On 2026-07-28 a server asks its client only by input request: one that sends a request of its own on a
    call's stream (an elicitation here) was ignored down the lean path (the upstream left waiting for an
    answer) and answered "Method not found" by the SDK's, neither audited. Now both refuse it, saying why,
    and it is audited (cause ``not_in_era``)."""
    refused: list[tuple[str, str, str]] = []

    async def record(_up: Any, kind: str, cause: str, why: str, _call: Any) -> None:
        refused.append((kind, cause, why))

    os.environ["SENTINEL_LEAN_UPSTREAM"] = "on" if lean else "off"  # read when the connection is made
    try:
        up = Upstream("h", RemoteServer(url=hostile, protocol="modern", timeout=60),  # type: ignore[arg-type]
                      UpstreamHooks(catalog_changed=_nothing, push_refused=record), health_interval=3600)
        async with anyio.create_task_group() as tg:
            tg.start_soon(up.run)
            try:
                assert await up.wait_ready(30), up.last_error
                assert (up.lean is not None) == lean
                with anyio.fail_after(60), contextlib.suppress(UpstreamCallError):
                    await up.call_tool("push_elicit", {})  # its answer: no result of the era (its own error)
            finally:
                await up.stop()
    finally:
        os.environ.pop("SENTINEL_LEAN_UPSTREAM", None)
    assert [(kind, cause) for kind, cause, _ in refused] == [("elicitation", "not_in_era")], refused
    assert "asks its client by input request" in refused[0][2], refused
