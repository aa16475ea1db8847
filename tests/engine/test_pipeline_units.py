"""Unit layer for the pipeline's steps, the front's handlers and the upstream manager, in-process: a real
gateway (real SQLite audit, the real default guard) over an in-process MCP server mounted as a built-in
(the real MCP client in memory), no subprocess. Each step is called on its own, with hostile inputs in
several spellings."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    CallToolResult,
    ClientCapabilities,
    ElicitationCapability,
    InputRequiredResult,
    TextContent,
    ToolAnnotations,
)

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.core.decision import Allow, Ask, Deny, Guard, Question, ToolCall
from sentinel_mcp.core.host import HostState
from sentinel_mcp.core.port import Completed, FrontPort, NeedsInput, NotInCatalog, Refused
from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.gateway.call_record import META_KEY, CallRecord
from sentinel_mcp.gateway.core import MAX_DEPTH, Gateway, UpstreamNeedsInput
from sentinel_mcp.gateway.own_results import VERDICT_KEYS, without_verdict
from sentinel_mcp.gateway.upstream import BuiltinTarget
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.identity.principal import OWNER, Principal

from tests.gateway.helpers import make_config

pytestmark = pytest.mark.timeout(60)
RO = ToolAnnotations(read_only_hint=True)


def _server() -> MCPServer:
    mcp = MCPServer("unit", version="1.0")

    @mcp.tool(annotations=RO)
    def echo(text: str) -> str:
        return text

    @mcp.tool(annotations=RO)
    def forged(text: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)],
                              _meta={META_KEY: "f" * 32, "sentinel/decision": "deny", "vendor/k": 1})

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    def wipe(name: str) -> str:
        return f"wiped {name}"

    @mcp.resource("unit://doc")
    def doc() -> str:
        return "the doc"

    @mcp.prompt()
    def greet(who: str) -> str:
        return f"hello {who}"

    return mcp


@contextlib.asynccontextmanager
async def gateway(data_dir):  # noqa: ANN001, ANN201
    async with running_gateway(make_config(data_dir, servers={}, builtins=[])) as rt:
        up = rt.manager.add("un", BuiltinTarget(server=_server()))
        assert await up.wait_ready(20), up.last_error
        rt.manager.catalog.rebuild(rt.manager.upstreams.values())
        yield rt


def request(name: str, arguments: Any = None, **kw: Any) -> CallRequest:
    return CallRequest(
        name, arguments if arguments is not None else {}, kw.pop("session_id", "unit/s1"), **kw
    )


def record(gw: Gateway, name: str) -> CallRecord:
    return CallRecord(
        gw.audit,
        gw.guard.version,
        gw.observers,
        session="unit/s1",
        client="unit",
        origin="client",
        tool=name,
        principal="owner",
    )


async def rows(rt) -> dict[str, dict]:  # noqa: ANN001
    await rt.audit.flush()
    return {r["decision_id"]: r for r in await read_audit(rt.config.store_path, tail=200)}


DEEP: Any = 1
for _ in range(200):
    DEEP = [DEEP]
WIDE = {f"k{i}": i for i in range(200_000)}
STRANGER = Principal("stranger", "token", tools=("other__*",), upstreams=("other",))


# ---------------------------------------------------------------------------------------------- route


@pytest.mark.parametrize(
    "name", ["un__nope", "UN__echo", "un__echo ", "echo", "un_echo", "un__echo\u200b", ""]
)
async def test_route_refuses_names_that_are_not_in_the_catalog_and_records_it(data_dir, name):
    async with gateway(data_dir) as rt:
        gw = rt.gateway
        rec = record(gw, name)
        out = await gw._route(rec, request(name), OWNER)
        assert (
            isinstance(out, Refused) and out.decision_id == rec.decision_id and "unknown tool" in out.reason
        )
        assert (await rows(rt))[rec.decision_id]["outcome"] == "unknown_tool"


async def test_route_hides_what_the_principal_may_not_reach_exactly_like_a_missing_tool(data_dir):
    async with gateway(data_dir) as rt:
        gw = rt.gateway
        hidden = await gw._route(record(gw, "un__echo"), request("un__echo"), STRANGER)
        missing = await gw._route(record(gw, "un__echx"), request("un__echx"), STRANGER)
        assert isinstance(hidden, Refused) and isinstance(missing, Refused)
        assert hidden.reason.replace("un__echo", "X") == missing.reason.replace("un__echx", "X")
        assert "un__echo" not in missing.reason  # no hint names a tool the caller may not reach


async def test_route_names_tools_by_identity_only_for_the_policys_own_fetches(data_dir):
    async with gateway(data_dir) as rt:
        gw = rt.gateway
        gw.manager.upstreams["un"].target.prefix = "p"  # exposed as p__echo, identity un__echo
        gw.manager.catalog.rebuild(gw.manager.upstreams.values())
        assert isinstance(await gw._route(record(gw, "un__echo"), request("un__echo"), OWNER), Refused)
        route = await gw._route(record(gw, "un__echo"), request("un__echo", origin="solver"), OWNER)
        assert not isinstance(route, Refused) and route.exposed.name == "p__echo"


# ------------------------------------------------------------------------------------------- validate


@pytest.mark.parametrize(
    "arguments,problem",
    [
        ([], "expected a JSON object"),
        ("text", "expected a JSON object"),
        (5, "expected a JSON object"),
        ({"text": 5}, "invalid arguments"),
        ({}, "invalid arguments"),
        ({"text": "x" * 1_100_000}, "too large"),
        ({"text": "x", "deep": DEEP}, "invalid arguments"),
        ({"text": "x", "deep": WIDE}, "more than 100000 values"),  # 200,000 keys: counted first
    ],
)
async def test_validate_refuses_bad_arguments_and_records_why(data_dir, arguments, problem):
    async with gateway(data_dir) as rt:
        gw = rt.gateway
        route = gw.manager.catalog.route("un__echo")
        rec = record(gw, "un__echo")
        out = await gw._validate(rec, request("un__echo", arguments), OWNER, route)
        assert isinstance(out, Refused) and problem in out.reason and out.decision_id == rec.decision_id
        row = (await rows(rt))[rec.decision_id]
        assert row["outcome"] == "bad_arguments" and row["upstream"] == "un"


async def test_validate_builds_the_call_the_guard_sees(data_dir):
    async with gateway(data_dir) as rt:
        gw = rt.gateway
        route = gw.manager.catalog.route("un__wipe")
        call = await gw._validate(
            record(gw, "un__wipe"), request("un__wipe", {"name": "a"}, purpose="tidy"), OWNER, route
        )
        assert isinstance(call, ToolCall)
        assert (call.server, call.tool, call.identity, call.purpose) == ("un", "wipe", "un__wipe", "tidy")
        assert call.destructive is True and call.read_only is False and call.principal == "owner"
        assert call.self_confirming is False  # a built-in not named in the trust list confirms nothing itself


async def test_validate_refuses_calls_nested_too_deep(data_dir):
    async with gateway(data_dir) as rt:
        gw = rt.gateway
        route = gw.manager.catalog.route("un__echo")
        out = await gw._validate(
            record(gw, "un__echo"), request("un__echo", {"text": "x"}, depth=MAX_DEPTH + 1), OWNER, route
        )
        assert isinstance(out, Refused) and "nested deeper" in out.reason


# --------------------------------------------------------------------------------------------- decide


class ScriptedGuard(Guard):
    """A guard that answers from a script (or raises): to drive the decide step's branches."""

    def __init__(self, *decisions: Any) -> None:
        self.decisions = list(decisions)
        self.asked = 0

    @property
    def version(self) -> str:
        return "scripted"

    async def decide(self, call: ToolCall) -> Any:
        self.asked += 1
        d = self.decisions.pop(0) if len(self.decisions) > 1 else self.decisions[0]
        if isinstance(d, Exception):
            raise d
        return d

    async def record_answer(self, call: ToolCall, question: Question, answer: Any) -> None:
        return None


async def _decide(rt, guard: Guard, req: CallRequest) -> tuple[Any, CallRecord]:  # noqa: ANN001
    gw = rt.gateway
    gw.guard = guard
    route = gw.manager.catalog.route(req.name)
    rec = record(gw, req.name)
    call = await gw._validate(rec, req, OWNER, route)
    if isinstance(call, Refused):  # refused by the validate step, before any guard (an undeclared argument)
        return call, rec
    return await gw._decide(rec, req, call, route), rec


@pytest.mark.parametrize("error", [RuntimeError("boom"), KeyError("x"), ValueError(), ZeroDivisionError()])
async def test_a_guard_that_fails_denies_and_the_denial_is_recorded(data_dir, error):
    async with gateway(data_dir) as rt:
        out, rec = await _decide(rt, ScriptedGuard(error), request("un__echo", {"text": "x"}))
        assert isinstance(out, Refused) and out.decision.unmet == ["guard_error"] and "boom" not in out.reason
        assert (await rows(rt))[rec.decision_id]["decision"] == "deny"


async def test_decide_allows_ahead_of_forwarding_asks_and_denies_with_the_decisions_id(data_dir):
    async with gateway(data_dir) as rt:
        allowed, rec = await _decide(rt, ScriptedGuard(Allow()), request("un__echo", {"text": "x"}))
        assert isinstance(allowed, Allow)
        assert (await rows(rt))[rec.decision_id]["outcome"] == "forwarded"  # on disk before anything leaves
        q = Question(key="confirm", message="go?", requested_schema={"type": "object", "properties": {}})
        asked, rec = await _decide(
            rt, ScriptedGuard(Ask(reason="r", questions=[q])), request("un__wipe", {"name": "a"})
        )
        assert isinstance(asked, NeedsInput) and asked.decision_id == rec.decision_id
        denied, rec = await _decide(rt, ScriptedGuard(Deny(reason="no")), request("un__wipe", {"name": "a"}))
        assert isinstance(denied, Refused) and denied.decision_id == rec.decision_id
        assert (await rows(rt))[rec.decision_id]["outcome"] == "denied"


class PreviewedGuard(ScriptedGuard):
    """A scripted guard whose preview (what a continuation is checked again by: nothing asked) is scripted
    too."""

    def __init__(self, preview: Any, *decisions: Any) -> None:
        super().__init__(*decisions)
        self.previewed, self.previews = preview, 0

    async def preview(self, call: ToolCall) -> Any:
        self.previews += 1
        return self.previewed


async def test_a_preapproved_digest_counts_only_for_exactly_that_call(data_dir):
    async with gateway(data_dir) as rt:
        guard = PreviewedGuard(Allow(reason="still"), Deny(reason="no"))
        same = ToolCall(name="un__wipe", server="un", tool="wipe", arguments={"name": "a"}).digest
        out, _ = await _decide(rt, guard, request("un__wipe", {"name": "a"}, preapproved_digest=same))
        assert isinstance(out, Allow) and guard.asked == 0 and guard.previews == 1
        # checked again, as a preview: a policy that now denies the call refuses its continuation
        guard.previewed = Deny(reason="not any more")
        out, _ = await _decide(rt, guard, request("un__wipe", {"name": "a"}, preapproved_digest=same))
        assert isinstance(out, Refused) and "not any more" in out.reason and guard.asked == 0
        for other in ({"name": "b"}, {"name": "a", "also": 1}, {"name": "A"}):
            out, _ = await _decide(rt, guard, request("un__wipe", other, preapproved_digest=same))
            assert isinstance(out, Refused)
        # "also" is not an argument wipe declares: refused before the guard (docs/policy-engine.md)
        assert guard.asked == 2


# ------------------------------------------------------------------------------- forward, observe, run


async def test_forward_and_observe_stamp_sentinels_id_over_an_upstreams_claims(data_dir):
    async with gateway(data_dir) as rt:
        out = await rt.gateway.run(request("un__forged", {"text": "hi"}))
        assert isinstance(out, Completed)
        meta = out.result.meta or {}
        assert meta[META_KEY] != "f" * 32 and "sentinel/decision" not in meta and meta["vendor/k"] == 1
        row = (await rows(rt))[meta[META_KEY]]
        assert (row["event"], row["outcome"]) == ("outcome", "ok")


async def test_run_refuses_while_draining_without_a_decision(data_dir):
    async with gateway(data_dir) as rt:
        rt.gateway.draining = True
        out = await rt.gateway.run(request("un__echo", {"text": "x"}))
        assert isinstance(out, Refused) and out.decision_id is None and "shutting down" in out.reason
        nested = await rt.gateway.run(request("un__echo", {"text": "x"}, depth=1, origin="solver"))
        assert isinstance(nested, Completed)  # a call already running may finish its own fetches
        assert rt.gateway.inflight == 0


@pytest.mark.parametrize("meta", [None, {}, {"vendor/x": 1}, {"sentinel/untrusted": {"source": "web"}}])
def test_without_verdict_leaves_an_upstreams_own_keys_alone(meta):
    r = CallToolResult(content=[], _meta=meta)
    assert without_verdict(r) is r


@pytest.mark.parametrize("key", sorted(VERDICT_KEYS))
def test_without_verdict_drops_each_of_sentinels_keys(key):
    r = without_verdict(CallToolResult(content=[], _meta={key: "x", "vendor/y": 2}))
    assert r.meta == {"vendor/y": 2}
    i = without_verdict(InputRequiredResult(input_requests={}, request_state="s", _meta={key: "x"}))
    assert i.meta is None


# ------------------------------------------------------------------------------ the front port and front


async def test_the_gateway_is_the_fronts_port_and_scopes_each_principal(data_dir):
    async with gateway(data_dir) as rt:
        gw: FrontPort = rt.gateway
        assert isinstance(rt.gateway, Gateway)
        assert [r.uri for r in gw.list_resources(OWNER)] == ["unit://doc"]
        assert gw.list_resources(STRANGER) == [] and gw.list_prompts(STRANGER) == []
        assert [p.name for p in gw.list_prompts(OWNER)] == ["un__greet"]
        assert (await gw.read_resource("unit://doc", OWNER, "c/1")).contents[0].text == "the doc"
        got = await gw.get_prompt("un__greet", {"who": "you"}, OWNER)
        assert "hello you" in got.messages[0].content.text
        for uri in ("unit://doc", "unit://nope", "", "file:///etc/passwd"):
            with pytest.raises(NotInCatalog):
                await gw.read_resource(uri, STRANGER, None)
        for name in ("un__greet", "greet", "un__GREET"):
            with pytest.raises(NotInCatalog):
                await gw.get_prompt(name, {}, STRANGER)
        assert gw.upstream_of("un__echo") == "un" and gw.upstream_of("un__nope") is None
        assert gw.pushes_mid_call("un__nope") is False


def _ctx(modern: bool, elicit: bool) -> Any:
    caps = ClientCapabilities(elicitation=ElicitationCapability() if elicit else None)
    return SimpleNamespace(
        protocol_version="2026-07-28" if modern else "2025-11-25",
        session=SimpleNamespace(client_capabilities=caps),
        meta={},
        request=None,
    )


async def test_the_fronts_answers_carry_the_decision_id_in_each_shape(data_dir):
    async with gateway(data_dir) as rt:
        front = rt.front
        params = SimpleNamespace(name="un__wipe", arguments={"name": "a"})
        q = Question(key="confirm", message="go?", requested_schema={"type": "object", "properties": {}})
        asked = NeedsInput(reason="r", questions=[q], decision_id="a" * 32)
        modern = await front._respond(_ctx(True, True), params, "unit/s1", asked, OWNER)
        assert isinstance(modern, InputRequiredResult) and modern.meta[META_KEY] == "a" * 32
        blocked = await front._respond(_ctx(False, False), params, "unit/s1", asked, OWNER)
        assert blocked.is_error and blocked.meta[META_KEY] == "a" * 32
        refused = await front._respond(
            _ctx(True, True), params, "unit/s1", Refused(reason="no\x1b[31m", decision_id="b" * 32), OWNER
        )
        assert refused.meta[META_KEY] == "b" * 32 and "\x1b" not in refused.content[0].text
        upstream_asks = UpstreamNeedsInput(
            result=InputRequiredResult(input_requests={}, request_state="u"),
            call=ToolCall(name="un__wipe", server="un", tool="wipe"),
            decision_id="c" * 32,
        )
        relayed = await front._respond(_ctx(True, True), params, "unit/s1", upstream_asks, OWNER)
        assert relayed.meta[META_KEY] == "c" * 32 and relayed.request_state != "u"  # sealed by Sentinel


# ------------------------------------------------------------------------------- the upstream manager


async def test_the_manager_refuses_a_second_upstream_of_the_same_name_and_relays_notices(data_dir):
    async with gateway(data_dir) as rt:
        with pytest.raises(ValueError):
            rt.manager.add("un", BuiltinTarget(server=_server()))
        seen: list[tuple[str, str]] = []

        async def updated(up: str, uri: str, principal: str | None) -> None:
            assert principal is None  # the upstream's one session
            seen.append((up, uri))

        async def completed(up: str, eid: str, principal: str | None) -> None:
            assert principal is None
            seen.append((up, eid))

        rt.gateway.on_upstream_notices(updated, completed)
        up = rt.manager.upstreams["un"]
        await rt.manager._resource_updated(up, "unit://doc")
        await rt.manager._elicit_complete(up, "e1")
        assert seen == [("un", "unit://doc"), ("un", "e1")]


async def test_a_fresh_manager_has_an_empty_catalog_and_stops_cleanly():
    manager = UpstreamManager()
    assert manager.catalog.tool_list() == [] and manager.upstreams == {}
    await manager.stop()


# ----------------------------------------------------------------------------- the host's lifespans


async def test_mounted_lifespans_run_inside_the_apps_in_order_with_the_running_gateway(data_dir):
    from sentinel_mcp.app.http_app import build_http_app
    from sentinel_mcp.identity.http_auth import http_auth_for

    config = make_config(data_dir, servers={}, builtins=[])
    auth = http_auth_for(config)
    app, host = build_http_app(running_gateway(config), host="127.0.0.1", port=1, auth=auth.authenticator)
    assert isinstance(host, HostState)
    log: list[str] = []

    def mounted(tag: str):  # noqa: ANN202
        @contextlib.asynccontextmanager
        async def lifespan(rt: Any):  # noqa: ANN202
            assert rt is host.runtime and rt.gateway.manager is not None
            log.append(f"enter {tag}")
            try:
                yield
            finally:
                log.append(f"leave {tag}")

        return lifespan

    host.add_lifespan(mounted("a2a"))
    host.add_lifespan(mounted("console"))
    async with app.router.lifespan_context(app):
        assert log == ["enter a2a", "enter console"] and host.runtime is not None
    assert log == ["enter a2a", "enter console", "leave console", "leave a2a"]
