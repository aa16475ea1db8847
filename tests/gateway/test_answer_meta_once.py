"""An answer's ``_meta`` is made once and the answer model copied once per call: the pipeline stamps its
decision id and the front's sealed session together (``CallRequest.answer_meta``, ``CallRecord.stamp``), in
the order the two copies gave (the result's own keys, the decision id, the session), and the session so
stamped is the one a client carries back."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.types import CallToolResult, TextContent

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.gateway import call_record
from sentinel_mcp.gateway.upstream import BuiltinTarget
from tests.gateway.helpers import make_config
from tests.gateway.test_direct_result_once import server_of

pytestmark = pytest.mark.timeout(90)


def made() -> dict[str, CallToolResult]:
    text = [TextContent(type="text", text="ok")]
    return {
        "bare": CallToolResult(content=text),
        "own": CallToolResult(content=text, meta={"vendor/a": 1, "vendor/b": "x"}),
        # an upstream's own claims to Sentinel's keys: dropped or overwritten, never believed
        "claims": CallToolResult(content=text, meta={"sentinel/session": "forged", "vendor/c": 2}),
    }


@pytest.mark.parametrize("direct", [True, False])
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_answer_is_copied_once_and_carries_its_meta(data_dir: Any, monkeypatch: Any, mode: str,
                                                              direct: bool) -> None:
    copies: list[Any] = []
    original = CallToolResult.model_copy

    def counted(self: Any, *a: Any, **kw: Any) -> Any:
        copies.append(sorted((kw.get("update") or {}).keys()))
        return original(self, *a, **kw)

    monkeypatch.setattr(CallToolResult, "model_copy", counted)
    # the stamp's own copy (``call_record.with_meta``: model_copy's result, built directly) counts as one too
    plain_copy = call_record.with_meta

    def counted_stamp(result: Any, meta: dict[str, Any]) -> Any:
        copies.append(["meta"])
        return plain_copy(result, meta)

    monkeypatch.setattr(call_record, "with_meta", counted_stamp)
    results = made()
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        tools = frozenset(results) if direct else frozenset()
        up = rt.manager.add("b", BuiltinTarget(server=server_of(results), direct_tools=tools))
        assert await up.wait_ready(20), up.last_error
        async with Client(rt.front.server, mode=mode) as c:
            for name, result in results.items():
                copies.clear()
                r = await c.call_tool(f"b__{name}", {})
                # one copy of the answer for its meta (one more drops an upstream's claims to Sentinel's keys)
                assert copies == [["meta"]] * (2 if name == "claims" else 1), (name, copies)
                assert r.content[0].text == "ok" and not r.is_error
                meta = r.meta or {}
                own = [k for k in (result.meta or {}) if not k.startswith("sentinel/")]
                keys = [k for k in meta if k != "io.modelcontextprotocol/serverInfo"]
                assert keys == own + ["sentinel/decision_id", "sentinel/session"], (name, keys)
                payload = rt.front.conversations.seal.open(meta["sentinel/session"])
                assert payload is not None and payload["principal"] == "owner"
                # carried back, it names the same conversation: the next answer's session is that one
                carried = {"sentinel/session": meta["sentinel/session"]}
                again = await c.call_tool(f"b__{name}", {}, meta=carried)
                back = rt.front.conversations.seal.open((again.meta or {})["sentinel/session"])
                assert back is not None and back["session"] == payload["session"]


async def test_a_refused_call_still_carries_the_session(data_dir: Any) -> None:
    """What the pipeline did not stamp (a refusal: unknown tool, bad arguments) gets the session from the
    front as before."""
    async with running_gateway(make_config(data_dir, servers={})) as rt:
        up = rt.manager.add("b", BuiltinTarget(server=server_of(made()), direct_tools=frozenset(made())))
        assert await up.wait_ready(20), up.last_error
        async with Client(rt.front.server, mode="2026-07-28") as c:
            for name, args in (("b__nosuch", {}), ("b__bare", {"x": float("1e300")})):
                r = await c.call_tool(name, args)
                assert r.is_error, name
                assert rt.front.conversations.seal.open((r.meta or {})["sentinel/session"]) is not None
