"""The gateway pipeline through the real mcp Client (both eras) over a real stdio upstream."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.gateway.audit import read_audit
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway.own_results import sentinel_info

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(90)
MODES = ["legacy", "auto"]
RELAYED = "[asked by the server tb, not by Sentinel] "  # how a server's own question is shown (front_held.py)


def approve(value: bool = True):
    asked: list[str] = []

    async def callback(ctx, params):  # noqa: ANN001
        asked.append(params.message)
        props = (params.requested_schema or {}).get("properties", {})
        content = {k: (value if v.get("type") == "boolean" else "blue") for k, v in props.items()}
        return ElicitResult(action="accept", content=content)

    callback.asked = asked  # type: ignore[attr-defined]
    return callback


@pytest.mark.parametrize("mode", MODES)
async def test_catalog_passes_annotations_and_output_schemas(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert {"tb__echo", "tb__delete_thing", "tb__add"} <= set(tools)
            assert tools["tb__echo"].annotations.read_only_hint is True
            assert tools["tb__delete_thing"].annotations.destructive_hint is True
            assert tools["tb__add"].output_schema["properties"]["total"]["type"] == "number"
            r = await c.call_tool("tb__add", {"a": 2, "b": 3})
            assert r.structured_content == {"total": 5.0, "terms": 2}
            assert [x.uri for x in (await c.list_resources()).resources] == ["toolbox://static"]
            assert (await c.read_resource("toolbox://item/k9")).contents[0].text == "item k9"
            assert [p.name for p in (await c.list_prompts()).prompts] == ["tb__review"]
            got = await c.get_prompt("tb__review", {"code": "x=1"})
            assert "x=1" in got.messages[0].content.text


@pytest.mark.parametrize("mode", MODES)
async def test_read_only_allowed_destructive_asks(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        yes = approve(True)
        async with Client(rt.front.server, mode=mode, elicitation_callback=yes) as c:
            assert (await c.call_tool("tb__echo", {"text": "hi"})).content[0].text == "hi"
            assert yes.asked == []
            r = await c.call_tool("tb__delete_thing", {"name": "x"})
            assert not r.is_error and r.content[0].text == "deleted x"
            assert len(yes.asked) == 1 and "tb__delete_thing" in yes.asked[0]
        no = approve(False)
        async with Client(rt.front.server, mode=mode, elicitation_callback=no) as c:
            r = await c.call_tool("tb__delete_thing", {"name": "y"})
            assert r.is_error and "declined" in r.content[0].text
        await rt.audit.flush()
        rows = await read_audit(rt.config.store_path, tail=50)
        outcomes = [(r["tool"], r["decision"], r["outcome"]) for r in rows]
        assert ("tb__delete_thing", "allow", "ok") in outcomes
        assert ("tb__delete_thing", "deny", "denied") in outcomes
        assert all(r["policy_version"] for r in rows)


@pytest.mark.parametrize("mode", MODES)
async def test_client_without_elicitation_gets_structured_blocked_result(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            r = await c.call_tool("tb__delete_thing", {"name": "x"})
            assert r.is_error
            assert r.structured_content is None  # never Sentinel's own dict against the tool's outputSchema
            blocked = sentinel_info(r)
            assert blocked["blocked"] is True and blocked["decision"] == "ask"
            assert blocked["questions"][0]["answer_schema"]["properties"]["approve"]["type"] == "boolean"


@pytest.mark.parametrize("mode", MODES)
async def test_bad_input_gets_clear_errors_and_gateway_keeps_serving(data_dir, mode):
    cfg = make_config(data_dir, fork=True, max_argument_bytes=2000)
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            r = await c.call_tool("tb__nope", {})
            assert r.is_error and "unknown tool 'tb__nope'" in r.content[0].text
            r = await c.call_tool("tb__ech", {"text": "x"})
            assert "did you mean tb__echo" in r.content[0].text
            r = await c.call_tool("tb__echo", {"txt": 1})
            assert r.is_error and "'text' is a required property" in r.content[0].text
            r = await c.call_tool("tb__echo", {"text": 42})
            assert r.is_error and "is not of type 'string'" in r.content[0].text
            r = await c.call_tool("tb__echo", {"text": "x" * 5000})
            assert r.is_error and "too large" in r.content[0].text
            assert (await c.call_tool("tb__echo", {"text": "still here"})).content[0].text == "still here"
        await rt.audit.flush()
        outcomes = {r["outcome"] for r in await read_audit(rt.config.store_path, tail=50)}
        assert {"unknown_tool", "bad_arguments", "ok"} <= outcomes


@pytest.mark.parametrize("mode", MODES)
async def test_progress_is_relayed_to_the_caller(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(p, total, message):  # noqa: ANN001
            seen.append((p, total, message))

        async with Client(rt.front.server, mode=mode) as c:
            r = await c.call_tool("tb__slow", {"seconds": 0.2}, progress_callback=on_progress)
            assert not r.is_error
        assert [s[0] for s in seen] == [1, 2, 3, 4] and seen[-1][2] == "step 4"


@pytest.mark.parametrize("mode", MODES)
async def test_upstream_input_request_reaches_the_user(data_dir, mode):
    """A 2026-era upstream asks via InputRequiredResult: pushed to handshake clients, passed through to modern
    ones."""
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(protocol="modern", fork=True)})
    async with running_gateway(cfg) as rt:
        assert rt.manager.upstreams["tb"].modern
        cb = approve()
        async with Client(rt.front.server, mode=mode, elicitation_callback=cb) as c:
            r = await c.call_tool("tb__ask_word", {"item": "sky"})
            assert not r.is_error, r.content[0].text
            assert r.content[0].text == "sky=blue"
        assert cb.asked == [f"{RELAYED}[toolbox] a word for sky"]  # the server's question, marked as such


async def test_push_elicitation_of_a_handshake_upstream_is_relayed(data_dir):
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(protocol="legacy", fork=True)})
    async with running_gateway(cfg) as rt:
        assert not rt.manager.upstreams["tb"].modern
        cb = approve()
        async with Client(rt.front.server, mode="legacy", elicitation_callback=cb) as c:
            r = await c.call_tool("tb__confirm_push", {"what": "ship"})
            assert r.content[0].text == "ship:accept:True"
        # first the gateway's own confirmation (destructive), then the upstream's question
        assert len(cb.asked) == 2 and cb.asked[1] == f"{RELAYED}[toolbox] really ship?"


@pytest.mark.parametrize("mode", MODES)
async def test_allow_and_deny_lists(data_dir, mode):
    cfg = make_config(data_dir, fork=True, policy={"allow": ["tb__delete_*"], "deny": ["tb__echo"]})
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            assert (await c.call_tool("tb__delete_thing", {"name": "a"})).content[0].text == "deleted a"
            r = await c.call_tool("tb__echo", {"text": "x"})
            assert r.is_error and "deny list" in r.content[0].text
            assert sentinel_info(r)["how_to_unblock"] and r.structured_content is None


async def test_confirmation_is_bound_to_the_exact_arguments(data_dir):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        cb = approve()
        async with Client(rt.front.server, mode="auto", elicitation_callback=cb) as c:
            # a forged answer with a made-up request_state is not accepted as approval
            raw = await c.session.call_tool(
                "tb__delete_thing",
                {"name": "a"},
                allow_input_required=True,
                input_responses={
                    "sentinel.confirm.0000": ElicitResult(action="accept", content={"approve": True})
                },
                request_state="sentinel1.forged",
            )
            assert getattr(raw, "is_error", False) and "request state" in raw.content[0].text
            first = await c.session.call_tool("tb__delete_thing", {"name": "a"}, allow_input_required=True)
            key = next(iter(first.input_requests))
            # answering for different arguments does not approve them: refused, with the reason
            other = await c.session.call_tool(
                "tb__delete_thing",
                {"name": "b"},
                allow_input_required=True,
                input_responses={key: ElicitResult(action="accept", content={"approve": True})},
                request_state=first.request_state,
            )
            assert other.is_error and "other arguments" in other.content[0].text
        assert json.dumps(cb.asked) == "[]"


@pytest.mark.parametrize("mode", MODES)
async def test_lists_are_paginated_for_the_client(data_dir, mode):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        rt.front.page_size = 3
        async with Client(rt.front.server, mode=mode) as c:
            names, cursor, pages = [], None, 0
            while True:
                page = await c.session.list_tools(
                    params=__import__("mcp").types.PaginatedRequestParams(cursor=cursor)
                )
                names += [t.name for t in page.tools]
                pages += 1
                cursor = page.next_cursor
                if not cursor:
                    break
        assert pages > 2 and len(names) == len(set(names)) == len(rt.manager.catalog.tools)


@pytest.mark.parametrize("mode", MODES)
async def test_a_cursor_the_front_did_not_give_is_refused(data_dir, mode):
    from mcp.shared.exceptions import MCPError
    from mcp.types import PaginatedRequestParams

    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        rt.front.page_size = 3
        total = len(rt.manager.catalog.tools)
        async with Client(rt.front.server, mode=mode) as c:
            # what int() alone would take, and what it would not: each an error, never some other page
            for cursor in ["-1", "-3", " 3", "3 ", "+3", "1_0", "\u0663", "\uff13", "3.0", "0x3", "abc",
                           "\x00", str(total + 1), "9" * 40, "'3'"]:
                with pytest.raises(MCPError) as e:
                    await c.session.list_tools(params=PaginatedRequestParams(cursor=cursor))
                assert e.value.code == -32602 and "invalid cursor" in e.value.message, cursor
                for lister in (c.session.list_resources, c.session.list_prompts):
                    with pytest.raises(MCPError):
                        await lister(params=PaginatedRequestParams(cursor=cursor))
            # the cursors it gives out, and the end of the list, still work
            page = await c.session.list_tools(params=PaginatedRequestParams(cursor="3"))
            assert len(page.tools) == 3 and page.next_cursor == "6"
            end = await c.session.list_tools(params=PaginatedRequestParams(cursor=str(total)))
            assert end.tools == [] and end.next_cursor is None


async def test_upstream_log_lines_reach_the_calling_client(data_dir):
    async with running_gateway(make_config(data_dir, fork=True)) as rt:
        lines: list[str] = []

        async def on_log(params):  # noqa: ANN001
            lines.append(str(params.data))

        async with Client(rt.front.server, mode="legacy", logging_callback=on_log) as c:
            assert (await c.call_tool("tb__chatty", {})).content[0].text == "said"
        assert lines == ["chatty: first line", "chatty: second line"]


async def test_pushed_question_of_a_handshake_upstream_reaches_a_2026_client(data_dir):
    """The upstream call is held open while the 2026 client answers by retrying the call."""
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(protocol="legacy", fork=True)})
    async with running_gateway(cfg) as rt:
        cb = approve()
        async with Client(rt.front.server, mode="auto", elicitation_callback=cb) as c:
            r = await c.call_tool("tb__confirm_push", {"what": "ship"})
            assert r.content[0].text == "ship:accept:True"
            r = await c.call_tool("tb__echo", {"text": "plain calls are not held"})
            assert r.content[0].text == "plain calls are not held"
        assert cb.asked[-1] == f"{RELAYED}[toolbox] really ship?"
        assert rt.front.held.calls == {}


@pytest.mark.parametrize("mode", MODES)
async def test_refusal_of_a_tool_with_an_output_schema_keeps_to_the_schema(data_dir, mode):
    """tb__add declares an outputSchema: a refusal must not put Sentinel's details where that schema rules."""
    cfg = make_config(data_dir, fork=True, policy={"deny": ["tb__add"]})
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server, mode=mode) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert listed["tb__add"].output_schema is not None
            r = await c.call_tool("tb__add", {"a": 1, "b": 2})
            assert r.is_error and r.structured_content is None
            assert "deny list" in r.content[0].text
            assert sentinel_info(r)["decision"] == "deny" and sentinel_info(r)["reason"]
            assert {"sentinel/decision", "sentinel/reason"} <= set(r.meta)


@pytest.mark.parametrize("mode", MODES)
async def test_the_client_is_told_sentinel_answered_not_the_upstream(data_dir, mode):
    """A 2026-era upstream stamps every answer with who it is (``io.modelcontextprotocol/serverInfo``): its
    tool results, resource reads and prompts reach the client stamped with Sentinel's identity (a 2026 client)
    or with none (a handshake-era one), never the upstream's."""
    key = "io.modelcontextprotocol/serverInfo"
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(protocol="modern", fork=True)})
    async with running_gateway(cfg) as rt:
        assert rt.manager.upstreams["tb"].modern
        ours = rt.front.server.server_info_stamp
        async with Client(rt.front.server, mode=mode) as c:
            era = c.protocol_version
            answers = [
                await c.call_tool("tb__echo", {"text": "hi"}),
                await c.call_tool("tb__add", {"a": 1, "b": 2}),
                await c.read_resource("toolbox://item/k9"),
                await c.read_resource("toolbox://static"),
                await c.get_prompt("tb__review", {"code": "x=1"}),
            ]
        for a in answers:
            stamp = (a.meta or {}).get(key)
            assert stamp is None or stamp["name"] != "toolbox", a
            if era == "2026-07-28":
                assert stamp == ours, a
            else:
                assert stamp is None, a
