"""The answer to a call of a tool that is not there names only what the caller's principal may use: an
upstream bob may not use that is down ("not connected now: ...") was named to bob, in the answer to any
name he made up, telling him of another principal's server and its state. Bob's answer is the one he got
with that upstream up; alice, who may use it, is still told.

A real Sentinel over HTTP (the crossed upstream, and one whose command does not exist), real MCP clients in
both eras."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .identity_rig import ALICE, BOB, http_sentinel

pytestmark = pytest.mark.timeout(180)
CROSSED = Path(__file__).with_name("crossed_server.py")
MADE_UP = ["nothing", "cx__nothing", "alices_secret__x", "alices_secret__", "ALICES_SECRET__x", "x" * 300]


def _config(tmp: Path, secret_up: bool) -> Path:
    cfg = tmp / "sentinel.json"
    secret = ({"command": sys.executable, "args": [str(CROSSED)]} if secret_up
              else {"command": str(tmp / "no-such-program")})
    cfg.write_text(json.dumps({
        "mcpServers": {"cx": {"command": sys.executable, "args": [str(CROSSED)]}, "alices_secret": secret},
        "sentinel": {"data_dir": str(tmp / "state"), "builtins": [],
                     "principals": [{"name": "alice", "token": ALICE},
                                    {"name": "bob", "token": BOB, "upstreams": ["cx"]}]},
    }))
    return cfg


async def _answers(base: str, token: str, mode: str) -> list[str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
    async with Client(streamable_http_client(f"{base}/mcp", http_client=http), mode=mode) as c:
        got = []
        for name in MADE_UP:
            r = await c.call_tool(name, {})
            assert r.is_error, (name, r)
            got.append("\n".join(getattr(b, "text", "") for b in r.content))
        return got


def _without_ids(texts: list[str]) -> list[str]:
    """Each answer with its decision id (a new one a call) left out."""
    return [" ".join(w for w in t.split() if not w.startswith(("dec_", "(decision"))) for t in texts]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_an_unknown_tools_answer_names_no_upstream_bob_may_not_use(tmp_path: Path, mode: str) -> None:
    up, down = tmp_path / "up", tmp_path / "down"
    up.mkdir()
    down.mkdir()
    with http_sentinel(_config(up, True)) as (base, _):
        with_it_up = await _answers(base, BOB, mode)
    with http_sentinel(_config(down, False)) as (base, _):
        bobs = await _answers(base, BOB, mode)
        alices = await _answers(base, ALICE, mode)
    for name, text in zip(MADE_UP, bobs):  # the name he sent is echoed, nothing more of alice's server
        assert text.lower().count("alices_secret") == name.lower().count("alices_secret"), text
        assert "not connected" not in text, text
    assert _without_ids(bobs) == _without_ids(with_it_up)
    assert all("not connected now: alices_secret" in t for t in alices), alices


@pytest.mark.parametrize(("tools", "upstreams", "said"), [
    (("*",), ("*",), True),
    (("*",), ("cx",), False),  # may not use it at all
    (("*",), ("alices_*",), True),
    (("alices_secret__x",), ("*",), True),
    (("alices_secret__*",), ("*",), True),
    (("alices_*",), ("*",), True),
    (("alices_secret_*",), ("*",), True),
    (("cx__*",), ("*",), False),  # every tool it may reach is another server's
    (("cx__touch", "bk__*"), ("*",), False),
    (("alices_secretive__*",), ("*",), False),  # another namespace that starts the same way
    (("Alices_secret__*",), ("*",), False),  # names are matched as written
    (("*__touch",), ("*",), True),  # a glob that could name one of its tools
    (("?lices_secret__x",), ("*",), True),
])
def test_a_down_upstream_is_named_to_a_principal_that_could_reach_one_of_its_tools(
        tools: tuple[str, ...], upstreams: tuple[str, ...], said: bool) -> None:
    from sentinel_mcp.identity.principal import Principal

    who = Principal("bob", "token", tools=tools, upstreams=upstreams)
    assert who.may_reach_some("alices_secret") is said
