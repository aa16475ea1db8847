"""An upstream's result of too many blocks (or of another shape no client needs: nested deep, an object of
very many keys, one text past its bound) is refused right after its JSON is parsed, before any model of it
is built: the SDK's result validation of 200,000 empty text blocks (~5 MB, well within the answer's byte
bound) held the event loop for seconds (16 MiB: ~5.9 s), every other client's call waiting, and the block
count was looked at only afterwards. A real stdio upstream through the real gateway and a real
streamable-HTTP upstream, both eras, down the lean path and the SDK client's (``SENTINEL_LEAN_UPSTREAM=off``);
the validation steps are counted in-process: none ran for a refused result. A result at the bound passes as
before."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import methods as sdk_methods

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import lean_upstream, result_shape
from sentinel_mcp.gateway.result_shape import ResultRefused
from sentinel_mcp.gateway.shown_result import MAX_CONTENT_BLOCKS
from tests.gateway.helpers import make_config
from tests.conftest import free_port, stop_process
from tests.gateway.test_lean_stdio import ROOT
from tests.gateway.test_lean_upstream import _serve, _with_upstream

pytestmark = pytest.mark.timeout(180)
UPSTREAM = [sys.executable, "-m", "tests.gateway.many_blocks_upstream"]
BOMB = [sys.executable, "-m", "tests.gateway.block_bomb_upstream"]
LISTS = {"tools/call": "content", "prompts/get": "messages", "resources/read": "contents"}


class Validations:
    """How many blocks (messages, contents) each model validation of an upstream's result was given (the SDK's
    surface check, the first of its steps, and the lean path's direct build of a plain result)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[int] = []
        sdk_validate, plain = sdk_methods.validate_server_result, lean_upstream.plain_call_result

        def validate(method: str, era: str, raw: Any) -> Any:
            self.note(method, raw)
            return sdk_validate(method, era, raw)

        def plain_result(era: str, raw: Any, utf8_texts: bool = False, bound: bool = False) -> Any:
            # with ``bound`` the read checks the shape bounds first, in its own pass, and builds a model only
            # for a result within them: counted when it built one (without: as the SDK's first step)
            out = plain(era, raw, utf8_texts, bound)
            if out is not None or not bound:
                self.note("tools/call", raw)
            return out

        monkeypatch.setattr(sdk_methods, "validate_server_result", validate)
        monkeypatch.setattr(lean_upstream, "plain_call_result", plain_result)

    def note(self, method: str, raw: Any) -> None:
        listed = LISTS.get(method)
        if listed is None or not isinstance(raw, dict) or not isinstance(raw.get(listed), list):
            return
        if "sentinel/decision_id" in (raw.get("_meta") or {}):
            return  # the gateway's answer, as the test's own client validates it
        self.seen.append(len(raw[listed]))


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_many_blocks_are_refused_before_any_model_is_built(
    data_dir: Any, monkeypatch: pytest.MonkeyPatch, lean: str
) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    # the text bound lowered under the upstream's 9 MiB text (as shipped it is the largest byte bound)
    monkeypatch.setattr(result_shape, "MAX_TEXT_CHARS", 8 * 1024 * 1024)
    validations = Validations(monkeypatch)
    servers = {era[0]: {"command": UPSTREAM[0], "args": UPSTREAM[1:], "cwd": str(ROOT), "protocol": era}
               for era in ("legacy", "modern")}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        for name in servers:
            assert await rt.manager.upstreams[name].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as a, Client(rt.front.server, mode="legacy") as b:
            for era in servers:
                events: list[str] = []
                refused: list[Any] = []

                async def bomb(era: str = era) -> None:
                    refused.append(await a.call_tool(f"{era}__many_blocks", {"n": 200 * MAX_CONTENT_BLOCKS}))
                    events.append("refused")

                with anyio.fail_after(120):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(bomb)
                        other_era = "m" if era == "l" else "l"
                        other = await b.call_tool(f"{other_era}__echo", {"text": "still here"})
                        events.append("other answered")
                assert not other.is_error and other.content[0].text == "still here", other
                assert sorted(events) == ["other answered", "refused"], events
                (r,) = refused
                assert r.is_error and len(r.content) == 1, r
                assert "200,000 content blocks" in r.content[0].text, r.content[0].text
                assert r.meta["sentinel/error"] == "result_blocks", r.meta
                assert max(validations.seen) <= MAX_CONTENT_BLOCKS, (era, lean, validations.seen)

                seen = len(validations.seen)
                ok = await a.call_tool(f"{era}__many_blocks", {"n": MAX_CONTENT_BLOCKS})
                assert not ok.is_error and len(ok.content) == MAX_CONTENT_BLOCKS, ok.content[:2]
                assert MAX_CONTENT_BLOCKS in validations.seen[seen:]  # the counter sees what it counts

                for kind in ("deep", "wide", "long_text") if era == "l" else ():  # one era: the same check
                    seen = len(validations.seen)
                    shaped = await a.call_tool(f"{era}__shaped", {"kind": kind})
                    assert shaped.is_error and shaped.meta["sentinel/error"] == "result_shape", (kind, shaped)
                    assert validations.seen[seen:] == [], (kind, validations.seen[seen:])
                small = await a.call_tool(f"{era}__shaped", {"kind": "small"})
                assert not small.is_error and small.content[0].text == "small ok", small
        rows = await rt.audit.read(tail=40)
    refusals = [row for row in rows if "content blocks" in (row["error"] or "")]
    assert len(refusals) == 2 and all(row["outcome"] == "tool_error" for row in refusals), refusals


@pytest.fixture(scope="module")
def blocks_http() -> Any:
    port = free_port()
    proc = _serve([sys.executable, "-m", "tests.gateway.many_blocks_http_upstream", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


@pytest.mark.parametrize("protocol", ["legacy", "modern"])
@pytest.mark.parametrize("lean", [True, False])
def test_an_http_answer_of_many_blocks_is_refused_before_any_model_is_built(
    blocks_http: str, monkeypatch: pytest.MonkeyPatch, protocol: str, lean: bool
) -> None:
    validations = Validations(monkeypatch)

    async def body(up: Any) -> list[str]:
        said = []
        for args in ({"n": 200 * MAX_CONTENT_BLOCKS}, {"kind": "deep"}, {"kind": "wide"}):
            with pytest.raises(ResultRefused) as refused:
                await up.call_tool("many_blocks" if "n" in args else "shaped", args)
            said.append(refused.value.kind)
        assert validations.seen == [], validations.seen
        ok = await up.call_tool("many_blocks", {"n": MAX_CONTENT_BLOCKS})  # the same connection, at the bound
        assert len(ok.content) == MAX_CONTENT_BLOCKS and validations.seen == [MAX_CONTENT_BLOCKS]
        return said

    said = anyio.run(lambda: _with_upstream(blocks_http, body, protocol=protocol, lean=lean))
    assert said == ["result_blocks", "result_shape", "result_shape"], said


async def test_a_prompt_or_a_read_of_too_many_items_is_refused_before_any_model_is_built(
    data_dir: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prompts/get`` and ``resources/read`` always take the SDK client's path."""
    validations = Validations(monkeypatch)
    servers = {"bo": {"command": BOMB[0], "args": BOMB[1:], "cwd": str(ROOT)}}
    async with running_gateway(make_config(data_dir, servers)) as rt:
        assert await rt.manager.upstreams["bo"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            with pytest.raises(MCPError, match="50,000 messages"):
                await c.get_prompt("bo__blocks", {"n": str(50 * MAX_CONTENT_BLOCKS)})
            with pytest.raises(MCPError, match="50,000 resource contents"):
                await c.read_resource(f"bomb://many/{50 * MAX_CONTENT_BLOCKS}")
            assert validations.seen == [], validations.seen
            read = await c.read_resource(f"bomb://many/{MAX_CONTENT_BLOCKS}")
    assert len(read.contents) == MAX_CONTENT_BLOCKS and MAX_CONTENT_BLOCKS in validations.seen
