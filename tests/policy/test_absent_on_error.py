"""``absent_on_error``: a bound read's own error answer is "looked up, nothing there" for the bindings that
say so, and a failed look-up for every other binding of the tool. Its text and structured content are never
read (a hostile upstream's error establishes no fact). Real SWI-Prolog, a real in-process MCP server whose
look-ups always err (with a value in the error)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from tests.policy.policy_rig import ClientPort, make_guard

from sentinel_mcp.core.decision import Allow, Deny
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(120)

READ = ToolAnnotations(read_only_hint=True, destructive_hint=False)
RULES = """
binding(found(K, V), tool('kv__lookup', [key = K]), extract([V = '/value']), [ttl(60), absent_on_error]).
binding(kept(K, V), tool('kv__lookup', [key = K]), extract([V = '/value']), [ttl(60)]).
binding(owner(K, V), tool('kv__owner', [key = K]), extract([V = '/value']), [ttl(60), absent_on_error]).

guard('kv__next_source', [key = K], require(\\+ found(K, _), 'found')).
guard('kv__negated_plain', [key = K], require(\\+ kept(K, _), 'kept')).
guard('kv__read_as_value', [key = K], require(found(K, admin), 'not admin')).
guard('kv__owner_is', [key = K], require(owner(K, me), 'not mine')).
"""


def upstream() -> MCPServer:
    server = MCPServer("kv", version="1.0.0")

    @server.tool(annotations=READ, description="Look a key up; errs: not found (saying a value).")
    async def lookup(key: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text='{"value": "admin"}')],
                              structured_content={"value": "admin"}, is_error=True)

    @server.tool(annotations=READ, description="Who owns a key.")
    async def owner(key: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text='{"value": "me"}')],
                              structured_content={"value": "me"}, is_error=True)

    for name in ("next_source", "negated_plain", "read_as_value", "owner_is"):
        async def act(key: str) -> str:
            return "done"
        server.tool(name=name, description="A write.")(act)
    return server


async def test_an_error_is_nothing_there_only_for_the_bindings_that_say_so(tmp_path: Path) -> None:
    rb = tmp_path / "kv.pl"
    rb.write_text(RULES, encoding="utf-8")
    async with Client(upstream(), mode="auto") as client:
        port = ClientPort(client, prefix="kv")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[rb], seeds={})
        try:
            async def decide(tool: str) -> object:
                return await guard.decide(port.call_of(f"kv__{tool}", {"key": "k1"}, session_id="s1"))

            # absent_on_error: the error says "no such key", so the next source may be tried
            assert isinstance(await decide("next_source"), Allow)
            # the same answer for a binding without the option: unknown, and a negation of it is denied
            d = await decide("negated_plain")
            assert isinstance(d, Deny) and "kv__lookup returned an error" in d.reason, d
            # the error's value is never read, structured or as text
            for tool in ("read_as_value", "owner_is"):
                d = await decide(tool)
                assert isinstance(d, Deny) and "not " in d.reason, (tool, d)
        finally:
            await guard.close()


async def test_a_misspelt_option_is_an_error_at_load(tmp_path: Path) -> None:
    """A misspelling (``absent_on_errors``, ``absent_on_error(true)``) is refused at load, naming the options:
    taken as absent, it would make a failed look-up read as "nothing there" where none was meant, or not."""
    rb = tmp_path / "bad.pl"
    for option in ("absent_on_errors", "absent_on_error(true)"):
        first = "[ttl(60), absent_on_error]).\nbinding(kept"
        rb.write_text(RULES.replace(first, f"[ttl(60), {option}]).\nbinding(kept"), encoding="utf-8")
        errors = [p.message for p in await check_files(shared_engine(), [rb]) if p.severity == "error"]
        assert any("absent_on_error" in m and option in m for m in errors), (option, errors)
    rb.write_text(RULES, encoding="utf-8")
    assert [p for p in await check_files(shared_engine(), [rb]) if p.severity == "error"] == []
