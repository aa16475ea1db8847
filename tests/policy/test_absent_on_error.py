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


NOT_FOUND_RULES = """
binding(found(K, V), tool('kv__lookup', [key = K]), extract([V = '/value']),
        [ttl(60), absent_on_error(['Error: no such key', "Error: key unknown"])]).
guard('kv__next_source', [key = K], require(\\+ found(K, _), 'found')).
"""


def texts_upstream(text: str) -> MCPServer:
    server = MCPServer("kv", version="1.0.0")

    @server.tool(annotations=READ, description="Look a key up; errs with the text given.")
    async def lookup(key: str) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)

    async def act(key: str) -> str:
        return "done"
    server.tool(name="next_source", description="A write.")(act)
    return server


@pytest.mark.parametrize("text,absent", [
    ("Error: no such key", True), ("Error: key unknown", True), ("  Error: no such key\n", True),
    ("Error: no such key!", False), ("error: no such key", False), ("Error: database is locked", False),
    ("", False), ("Error: no such key" + " " * 5000 + "x", False),
])
async def test_an_error_is_nothing_there_only_in_the_texts_listed(
    tmp_path: Path, text: str, absent: bool
) -> None:
    """absent_on_error([Text, ...]): only the upstream's own "not found", word for word (surrounding blanks
    aside), is "nothing there"; an error of any other text (the store busy, failing) is a failed look-up, and
    a decision on it is denied, saying so."""
    rb = tmp_path / "kv.pl"
    rb.write_text(NOT_FOUND_RULES, encoding="utf-8")
    async with Client(texts_upstream(text), mode="auto") as client:
        port = ClientPort(client, prefix="kv")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[rb], seeds={})
        try:
            d = await guard.decide(port.call_of("kv__next_source", {"key": "k1"}, session_id="s1"))
            if absent:
                assert isinstance(d, Allow), d
            else:
                assert isinstance(d, Deny) and "kv__lookup returned an error" in d.reason, d
        finally:
            await guard.close()


@pytest.mark.parametrize("option", ["absent_on_error([])", "absent_on_error([''])", "absent_on_error(x)",
                                    "absent_on_error([a, 1])", "absent_on_error(_)"])
async def test_a_list_of_not_found_texts_is_checked_at_load(tmp_path: Path, option: str) -> None:
    rb = tmp_path / "bad.pl"
    rb.write_text(NOT_FOUND_RULES.replace("absent_on_error(['Error: no such key', \"Error: key unknown\"])",
                                          option), encoding="utf-8")
    errors = [p.message for p in await check_files(shared_engine(), [rb]) if p.severity == "error"]
    assert any("binding option" in m for m in errors), (option, errors)
