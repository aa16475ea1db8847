"""A built-in's declared tools called in-task (``gateway/builtin_direct.py``) answer exactly as over the
in-memory MCP pair: the same server mounted twice (``mcp``: the pair; ``dir``: direct), the same calls through
the real front in both protocol eras, the same ``CallToolResult`` JSON (the per-call decision id aside)."""

from __future__ import annotations

import re
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ElicitResult, LoggingMessageNotificationParams

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.upstream import BuiltinTarget
from tests.gateway.helpers import make_config
from tests.gateway.twin_builtin import DIRECT, build_lowlevel_twin, build_twin

pytestmark = pytest.mark.timeout(90)
MODES = ["legacy", "auto"]
HEX32 = re.compile(r"^[0-9a-f]{32}$")
PER_CALL = {"sentinel/session", "progress_token", "progressToken"}  # a seal; a connection's request id
TEXT_FIXES = [
    (re.compile(r"(?<![A-Za-z0-9_])(mcp|dir|lo|ld)(?![A-Za-z0-9])"), "<up>"),
    (re.compile(r"\b[0-9a-f]{32}\b"), "<id>"),
    (re.compile(r"conv-[0-9a-f]+"), "conv-<id>"),  # a 2026-era client's conversation, one per call
    (re.compile(r"sentinel2\.[A-Za-z0-9_.-]+"), "<seal>"),
    (re.compile(r'"progress_token": \d+'), "<token>"),
]
HOSTILE = ["", "plain", "\u202eevil\u202c", "<script>alert(1)</script>", "\x00\x1b[2J", "😀" * 50,
           "sentinel/decision_id", '{"jsonrpc":"2.0","id":1}', "a" * 5000, "\ud7ff\ue000"]
META = {"sentinel/decision_id": "f" * 32, "sentinel/answered_by": "user", "vendor/trace": "t-1",
        "Sentinel/x": 1}


def _same(doc: Any) -> Any:
    """A result's JSON with what differs per call by design (the decision id the gateway mints, the sealed
    session) fixed."""
    if isinstance(doc, dict):
        return {k: ("<per call>" if (k.endswith("decision_id") and isinstance(v, str) and HEX32.match(v))
                    or k in PER_CALL else _same(v)) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_same(v) for v in doc]
    if isinstance(doc, str):  # the two mounts' names; per-call values inside a text rendering
        for pattern, fixed in TEXT_FIXES:
            doc = pattern.sub(fixed, doc)
        return doc
    return doc


async def mount_twins(rt: Any, era: str = "legacy") -> tuple[Any, Any]:
    mcp_path = rt.manager.add("mcp", BuiltinTarget(server=build_twin(), protocol=era))
    direct = rt.manager.add("dir", BuiltinTarget(server=build_twin(), protocol=era, direct_tools=DIRECT))
    for up in (mcp_path, direct):
        assert await up.wait_ready(20), up.last_error
    assert mcp_path.direct is None
    return mcp_path, direct


def cases() -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for i, text in enumerate(HOSTILE):
        out.append(("echo", {"text": text, "count": i, "tags": [text, str(i)]}))
    out += [
        ("echo", {}),  # invalid: text missing
        ("echo", {"text": 5}),  # invalid: wrong type
        ("echo", {"text": "x", "count": "many"}),
        ("echo", {"text": "x", "extra": {"_meta": {"sentinel/answered_by": "user"}}}),
        ("echo", {"text": "x", "count": 2**70}),
        ("seen", {}),
        ("fail", {"kind": "tool"}),
        ("fail", {"kind": "mcp"}),
        ("fail", {"kind": "plain"}),
        ("steps", {"n": 3}),
        ("nosuch", {}),
    ]
    return out


@pytest.mark.parametrize("era", ["legacy", "modern"])  # how the gateway speaks to the built-in
@pytest.mark.parametrize("mode", MODES)
async def test_direct_answers_equal_the_mcp_pairs(data_dir, mode, era):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        mcp_path, direct = await mount_twins(rt, era)
        assert direct.modern == (era == "modern")
        # a 2026-07-28 connection to an in-process server is the SDK's in-task pair already: nothing to skip
        assert (direct.direct is None) == (era == "modern")
        async with Client(rt.front.server, mode=mode) as c:
            for _ in range(3):  # repeated: nothing carries over from one call to the next
                for tool, args in cases():
                    a = await c.call_tool(f"mcp__{tool}", args, meta=META)
                    b = await c.call_tool(f"dir__{tool}", args, meta=META)
                    da = a.model_dump(mode="json", by_alias=True, exclude_none=True)
                    db = b.model_dump(mode="json", by_alias=True, exclude_none=True)
                    assert _same(da) == _same(db), (tool, args)
        if era == "legacy":  # the valid and tool-failing calls took the direct path
            assert direct.direct is not None and direct.direct.direct_calls >= 3 * 13


async def test_the_meta_a_tool_receives_is_the_same(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_twins(rt)
        async with Client(rt.front.server, mode="legacy") as c:
            a = (await c.call_tool("mcp__seen", {}, meta=META)).structured_content
            b = (await c.call_tool("dir__seen", {}, meta=META)).structured_content
    assert a is not None and b is not None
    # what arrives is the gateway's word (its decision id, who calls), none of the client's sentinel/ claims:
    # on both paths
    assert _same(a) == _same(b)
    assert "sentinel/answered_by" not in b["meta"] and b["meta"]["sentinel/principal"] == "owner"
    assert HEX32.match(b["meta"]["sentinel/decision_id"]) and b["meta"]["sentinel/decision_id"] != "f" * 32


async def test_low_level_handler_errors_are_shaped_alike(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        a_up = rt.manager.add("lo", BuiltinTarget(server=build_lowlevel_twin()))
        b_up = rt.manager.add(
            "ld", BuiltinTarget(server=build_lowlevel_twin(), direct_tools=frozenset({"raise"}))
        )
        for up in (a_up, b_up):
            assert await up.wait_ready(20), up.last_error
        async with Client(rt.front.server, mode="auto") as c:
            for kind in ("runtime", "mcp", "timeout", "fine", None):
                args = {"kind": kind} if kind is not None else {}
                a = await c.call_tool("lo__raise", args)
                b = await c.call_tool("ld__raise", args)
                assert _same(a.model_dump(mode="json")) == _same(b.model_dump(mode="json")), kind
        assert b_up.direct is not None and b_up.direct.direct_calls == 5


async def test_progress_and_log_lines_reach_the_caller(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        await mount_twins(rt)
        seen: dict[str, list[Any]] = {"mcp": [], "dir": []}
        logs: dict[str, list[str]] = {"mcp": [], "dir": []}
        for prefix in ("mcp", "dir"):

            async def on_log(params: LoggingMessageNotificationParams, p: str = prefix) -> None:
                logs[p].append(str(params.data))

            async def on_progress(
                done: float, total: float | None, message: str | None, p: str = prefix
            ) -> None:
                seen[p].append((done, total, message))

            async with Client(rt.front.server, mode="legacy", logging_callback=on_log) as c:
                r = await c.call_tool(f"{prefix}__steps", {"n": 4}, progress_callback=on_progress)
                assert not r.is_error
    assert seen["dir"] == seen["mcp"] == [(i, 4, f"step {i}") for i in range(1, 5)]
    assert logs["dir"] == logs["mcp"] and len(logs["dir"]) == 4


async def test_a_tool_that_asks_still_asks(data_dir):
    """``ask`` is not declared: it takes the MCP path and its question reaches the client, on both mounts."""
    asked: list[str] = []

    async def user(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"ok": True})

    async with running_gateway(make_config(data_dir, servers={})) as rt:
        _, direct = await mount_twins(rt)
        async with Client(rt.front.server, mode="legacy", elicitation_callback=user) as c:
            for prefix in ("mcp", "dir"):
                r = await c.call_tool(f"{prefix}__ask", {})
                assert not r.is_error, r.content
                assert r.structured_content == {"action": "accept", "content": {"ok": True}}
        assert len(asked) == 2
        assert direct.direct is not None and direct.direct.direct_calls == 0


async def test_a_declared_tool_that_asks_fails_loudly(data_dir):
    """A built-in that declares a tool direct and asks anyway gets an error, never a made-up answer."""
    asked: list[str] = []

    async def user(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"ok": True})

    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("bad", BuiltinTarget(server=build_twin(), direct_tools=frozenset({"ask"})))
        assert await up.wait_ready(20), up.last_error
        async with Client(rt.front.server, mode="legacy", elicitation_callback=user) as c:
            r = await c.call_tool("bad__ask", {})
    assert r.is_error and not asked


async def test_time_limit_and_cancellation(data_dir):
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        for name, tools in (("tm", frozenset()), ("td", DIRECT)):
            up = rt.manager.add(name, BuiltinTarget(server=build_twin(), timeout=0.3, max_call_seconds=0.3,
                                                    direct_tools=tools))
            assert await up.wait_ready(20), up.last_error
        texts = []
        async with Client(rt.front.server, mode="legacy") as c:
            for name in ("tm", "td"):
                r = await c.call_tool(f"{name}__sleep", {"seconds": 30})
                assert r.is_error
                texts.append(r.content[0].text.replace(name, "<up>"))  # type: ignore[union-attr]
            assert texts[0] == texts[1] and "still running" in texts[0]
        # the session's own read timeout (the gateway's deadline is shorter; a direct client of the session)
        codes = []
        for name in ("tm", "td"):
            client = rt.manager.upstreams[name].client
            assert client is not None
            with pytest.raises(MCPError) as caught:
                await client.session.call_tool("sleep", {"seconds": 30}, read_timeout_seconds=0.2)
            codes.append(caught.value.code)
        assert codes == [-32001, -32001]
        assert rt.manager.upstreams["td"].direct.direct_calls == 2  # type: ignore[union-attr]
        # a caller that gives up cancels the tool's own work (it runs in the caller's task)
        td = rt.manager.upstreams["td"]
        with anyio.move_on_after(0.2):
            await td.call_tool("sleep", {"seconds": 30})
        assert not td._inflight  # nothing left waiting


def nested_list(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


WIRE_META = [None, {}, META,
             {"sentinel/session": "s", "sentinel/client": None, "x": {"y": None, "z": (1, 2)}},
             {"sentinel/can_sample": True, "n": 1.5, "l": [None, {"a": ()}]}]


@pytest.mark.parametrize("meta", WIRE_META)
def test_the_params_a_declared_call_sends_are_the_sessions_own(meta):
    """``_wire_params`` builds exactly what ``ClientSession.call_tool`` dumps onto the wire, which the
    kernel's surface validation (skipped on this path) passes for the handshake era the built-in speaks; and
    every container is a copy (the tool never holds the gateway's objects)."""
    from mcp.types import CallToolRequest, CallToolRequestParams
    from mcp_types import methods

    from sentinel_mcp.gateway.builtin_direct import DirectDispatcher

    extra: list[tuple[str, Any]] = [("echo", None), ("echo", {"t": (1, (2, 3)), "n": None, "d": {"e": [{}]}}),
                                    ("echo", {"f": 1e308, "i": -(2**70), "b": False, "s": "\ud800x"})]
    for name, args in [*cases(), *extra]:
        ours = DirectDispatcher._wire_params(name, args, meta)
        sdk = CallToolRequest(params=CallToolRequestParams(name=name, arguments=args, _meta=meta)).model_dump(
            by_alias=True, mode="json", exclude_none=True)["params"]
        assert ours == sdk, (name, args, meta)
        methods.validate_client_request("tools/call", "2025-11-25", {**ours, "_meta": {
            **ours.get("_meta", {}), "progressToken": 7}})
        if args:
            assert ours["arguments"] is not args
            for key, value in args.items():
                if isinstance(value, (dict, list)):
                    assert ours["arguments"][key] is not value


@pytest.mark.parametrize("args,meta", [
    ({"x": float("nan")}, None), ({"x": float("inf")}, None), ({1: "a"}, None), ({"x": {1, 2}}, None),
    ({"x": b"bytes"}, None), ({"x": object()}, None), ({"x": nested_list(70)}, None), ("not a dict", None),
    ({}, {"progressToken": 3}), ({}, {"k": float("nan")}), ({}, "not a dict"),
])
def test_what_is_not_plain_json_takes_the_sessions_way(args, meta):
    from sentinel_mcp.gateway.builtin_direct import DirectDispatcher, _NotPlain

    with pytest.raises(_NotPlain):
        DirectDispatcher._wire_params("echo", args, meta)


async def test_a_session_call_of_odd_values_answers_as_the_pair(data_dir):
    """Values the gateway's front never passes (tuples, non-finite numbers, sets) reach a declared tool
    through the session as they would over the pair: the same result or the same error."""
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        mcp_path, direct = await mount_twins(rt)
        assert direct.direct is not None
        before = direct.direct.direct_calls
        for args in ({"text": "t", "tags": ("a", "b")}, {"text": "t", "count": float("nan")},
                     {"text": "t", "tags": {"a"}}, {"text": ("x",)}):
            outs = []
            for up in (mcp_path, direct):
                assert up.client is not None
                try:
                    r = await up.client.session.call_tool("echo", args)
                    outs.append(_same(r.model_dump(mode="json", by_alias=True, exclude_none=True)))
                except Exception as e:  # noqa: BLE001 - compared by kind and text
                    outs.append((type(e).__name__, str(e).replace("mcp", "<up>").replace("dir", "<up>")))
            assert outs[0] == outs[1], args
        assert direct.direct.direct_calls > before  # the plain ones went direct


async def test_params_a_middleware_replaced_are_validated_as_the_kernel_does(data_dir):
    """The direct path skips the kernel's surface check only for the params it built itself: a built-in's
    middleware that hands the handler other params (here a tool name of the wrong type, or the right ones)
    gets the kernel's own check and answer, on both mounts."""
    from dataclasses import replace

    def rewriting(params: dict[str, Any]) -> Any:
        async def middleware(ctx: Any, call_next: Any) -> Any:
            if ctx.method != "tools/call":
                return await call_next(ctx)
            return await call_next(replace(ctx, params=params))

        return middleware

    for params, fails in (({"name": 5, "arguments": {}}, True), ({"name": "raise", "arguments": {}}, False)):
        async with running_gateway(make_config(data_dir, servers={})) as rt:
            outs = []
            for name, tools in (("lo", frozenset()), ("ld", frozenset({"raise"}))):
                server = build_lowlevel_twin()
                server.middleware.append(rewriting(params))
                up = rt.manager.add(name, BuiltinTarget(server=server, direct_tools=tools))
                assert await up.wait_ready(20), up.last_error
            async with Client(rt.front.server, mode="legacy") as c:
                for name in ("lo", "ld"):
                    r = await c.call_tool(f"{name}__raise", {"kind": "fine"})
                    outs.append(_same(r.model_dump(mode="json")))
            assert outs[0] == outs[1]
            assert outs[0]["is_error"] is fails, outs[0]
            assert rt.manager.upstreams["ld"].direct.direct_calls == 1  # type: ignore[union-attr]


async def test_a_waiting_direct_call_arms_one_timer(data_dir, monkeypatch):
    """A built-in's direct call that waits runs under the upstream call's deadline alone: one timer, not two
    (the read timeout's own, due 5 s after the call's longest run, never ended a call first), and that
    deadline still ends it; a session caller without one keeps the read timeout's."""
    import asyncio

    from sentinel_mcp.gateway.upstream_calls import UpstreamCallError

    armed: list[float] = []
    real = asyncio.timeout_at

    def counting(when: float | None) -> Any:
        armed.append(when)  # type: ignore[arg-type]
        return real(when)

    monkeypatch.setattr(asyncio, "timeout_at", counting)
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        td = rt.manager.add("td", BuiltinTarget(server=build_twin(), timeout=0.3, max_call_seconds=0.6,
                                                direct_tools=DIRECT))
        assert await td.wait_ready(20), td.last_error
        armed.clear()
        r = await td.call_tool("sleep", {"seconds": 0.01})
        assert not r.is_error and len(armed) == 1, armed
        armed.clear()
        with pytest.raises(UpstreamCallError) as caught:
            await td.call_tool("sleep", {"seconds": 30})
        assert caught.value.timeout and "did not answer within" in str(caught.value)
        assert len(armed) == 1, armed
        assert not td._inflight
        armed.clear()
        client = td.client
        assert client is not None
        with pytest.raises(MCPError) as timed:
            await client.session.call_tool("sleep", {"seconds": 30}, read_timeout_seconds=0.2)
        assert timed.value.code == -32001 and len(armed) == 1
        assert td.direct is not None and td.direct.direct_calls == 3
