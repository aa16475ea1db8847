"""A guard that makes something of an argument its upstream's schema declares secret (``writeOnly``,
``format: password``, ``_meta["sentinel/sensitive"]``; its name says nothing) denies the tool, from the
listing on and after a re-listing that declares it, the rule's file and line in the audit and the log
(``policy/schema_secret_flows.py``, ``app/listed_secret_flows.py``). Before, the loader followed only
arguments *named* secret: the person was asked "Starts with Hu?" of the password "Hunter2-...". Real gateway,
real upstream in a subprocess, real SWI-Prolog."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway

from .helpers import make_config

pytestmark = pytest.mark.timeout(180)
SERVER = str(Path(__file__).with_name("schema_secret_server.py"))
SECRET = "Hunter2-canary-7731"
SCHEMA_SECRET = "its server's schema declares secret"  # the refusal's words
TOOLS = ["write_only", "password_format", "sensitive_meta"]
RULES = "".join(f"guard('ss__{t}', [user = U, word = W], ( sub_atom(W, 0, 2, _, H), "
                f"confirmed('Starts with ~w?', [H]) )).\n" for t in TOOLS + ["relist"])


def _config(data_dir: Path, builtins: tuple[str, ...] = ()) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "leaks.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"ss": {"command": sys.executable, "args": [SERVER]}},
                       builtins=list(builtins), rulebases=[str(rules)], policy={"pin_tools": False})


async def _asked(asked: list[str], ctx: Any, params: Any) -> ElicitResult:
    asked.append(params.message)
    fields = params.requested_schema.get("properties", {})
    return ElicitResult(action="accept", content={n: True for n in fields})


async def test_a_guard_leaking_a_schema_secret_denies_its_tool_from_listing_and_relisting(
        data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    asked: list[str] = []
    caplog.set_level(logging.WARNING, logger="sentinel_mcp.policy.schema_secret_flows")
    async with running_gateway(_config(data_dir)) as rt:
        listed = "\n".join(r.getMessage() for r in caplog.records)
        for n, tool in enumerate(TOOLS):  # named in the log at listing, before any call
            assert f"leaks.pl:{n + 1}:" in listed and f"ss__{tool}" in listed, listed
        assert "leaks.pl:4:" not in listed, listed  # relist's word is no secret yet

        async with Client(rt.front.server, elicitation_callback=lambda c, p: _asked(asked, c, p)) as c:
            for tool in TOOLS:
                r = await c.call_tool(f"ss__{tool}", {"user": "ann", "word": SECRET})
                assert r.is_error, (tool, r.content)
            # not secret by its schema yet: the question is asked (the rule is the rulebase's choice)
            await c.call_tool("ss__relist", {"user": "ann", "word": "plain-word"})
            assert any("Starts with pl?" in q for q in asked), asked
            await c.call_tool("ss__declare", {})
            for _ in range(200):  # the re-listing reaches the catalog (bounded by count, not time)
                route = rt.manager.catalog.tools.get("ss__relist")
                if route is not None and "word" in route.secret_arguments:
                    break
                await anyio.sleep(0.05)
            r = await c.call_tool("ss__relist", {"user": "ann", "word": SECRET})
            assert r.is_error, r.content
        await rt.audit.flush()
        rows = await rt.audit.read(tail=30)
    assert not any("Hu" in q for q in asked), asked  # no piece of the secret was ever asked
    denied = [str(row) for row in rows if row.get("decision") == "deny" and SCHEMA_SECRET in str(row)]
    for n, tool in enumerate(TOOLS + ["relist"]):
        assert any(f"leaks.pl:{n + 1}:" in d and f"ss__{tool}" in d for d in denied), (tool, denied)
    assert SECRET not in str(rows) and "Hu?" not in str(rows), rows


async def test_why_not_says_the_tool_is_denied_as_its_call_is(data_dir: Path) -> None:
    # a look (sentinel_why_not) is judged as the call: without the schema's secrets it ran the leaking guard
    async with running_gateway(_config(data_dir, ("sentinel",))) as rt, Client(rt.front.server) as c:
        for tool in TOOLS:
            why = await c.call_tool("sentinel__sentinel_why_not",
                                    {"tool": f"ss__{tool}", "arguments": {"user": "ann", "word": SECRET}})
            said = json.loads(why.content[0].text)
            assert said["decision"] == "deny" and SCHEMA_SECRET in said["reason"], (tool, said)
            assert "Hu?" not in why.content[0].text, said


# rules that make nothing of ``word``, then a reload to rules that leak it, each its own way (the third
# through the whole argument list, read by its key: no secret by its name, so loaded without a word)
CLEAN = "".join(f"guard('ss__{t}', [user = U, word = W], ( W \\== '', confirmed('Sign ~w in?', [U]) )).\n"
                for t in TOOLS)
RELOADED = (
    "guard('ss__write_only', [user = U, word = W], ( sub_atom(W, 0, 2, _, H), confirmed('~w?', [H]) )).\n"
    "guard('ss__password_format', [user = U, word = W], ( aggregate_all(count, (member(C, [a, m, t]), "
    "C @< W), N), confirmed('~w ~w?', [U, N]) )).\n"
    "guard('ss__sensitive_meta', [args(A)], ( memberchk(word = W, A), upcase_atom(W, H), "
    "confirmed('~w?', [H]) )).\n"
)


async def test_a_reload_whose_rules_leak_a_listed_secret_is_walked_before_it_is_in_force(
        data_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="sentinel_mcp.policy.schema_secret_flows")
    config = _config(data_dir)
    rules = data_dir / "leaks.pl"
    rules.write_text(CLEAN)
    async with running_gateway(config) as rt:
        assert "leaks.pl:" not in "\n".join(r.getMessage() for r in caplog.records)
        rules.write_text(RELOADED)
        await rt.gateway.guard.rulebases.reload("test")  # type: ignore[attr-defined]
        # named in the log by the reload itself, before any call of the tools
        said = "\n".join(r.getMessage() for r in caplog.records)
        for n, tool in enumerate(TOOLS):
            assert f"leaks.pl:{n + 1}:" in said and f"ss__{tool}" in said, (tool, said)
        async with Client(rt.front.server) as c:
            for tool in TOOLS:
                r = await c.call_tool(f"ss__{tool}", {"user": "ann", "word": SECRET})
                assert r.is_error, (tool, r.content)
        await rt.audit.flush()
        rows = await rt.audit.read(tail=20)
    denied = [str(row) for row in rows if row.get("decision") == "deny" and SCHEMA_SECRET in str(row)]
    for n, tool in enumerate(TOOLS):
        assert any(f"leaks.pl:{n + 1}:" in d and f"ss__{tool}" in d for d in denied), (tool, denied)
    assert SECRET not in str(rows) and "HU" not in str(rows), rows
