"""An answer is for the tool that was asked about, not for whatever the same name routes to later.

Two transparent servers (empty prefix): ``b`` (the toolbox) owns the plain names at first; ``a`` (sorted
first) adds, mid-conversation, a destructive tool under a name ``b``'s tool had, and takes that plain name
from then on (catalog.py: the alphabetically first server keeps the plain name). A question asked about
``b``'s tool, answered after the shift, must not let the call reach ``a``'s tool: neither the continuation of
a call already allowed (2026 era: the upstream's own question), nor the user's confirmation of ``b``'s
destructive tool (2026 era: Sentinel's ``ask`` round; handshake era: the pushed question). Both upstream eras;
real gateway, real stdio upstreams, the real ``mcp`` client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.console.asking import InboxAsking
from sentinel_mcp.core.call_meta import SESSION_KEY as SESSION_META
from sentinel_mcp.console.inbox import Inbox
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import NeedsInput, Refused
from sentinel_mcp.gateway.audit import read_audit
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
SHIFTING = str(Path(__file__).with_name("shifting_upstream.py"))
YES = ElicitResult(action="accept", content={"approve": True})


def servers(protocol: str) -> dict[str, Any]:
    return {
        "b": toolbox_stdio(prefix="", protocol=protocol),
        "a": {**forked_spec(SHIFTING), "prefix": "", "protocol": protocol},
    }


def is_input_required(r: Any) -> bool:
    return type(r).__name__ == "InputRequiredResult"


def text(r: Any) -> str:
    return r.content[0].text if getattr(r, "content", None) else repr(r)


async def always_yes(ctx: Any, params: Any) -> ElicitResult:
    return YES


async def shift(rt: Any, c: Client, name: str, marker: Path) -> None:
    """``a`` adds its destructive ``name``; returns once the plain name routes to ``a``."""
    r = await c.call_tool("grow", {"name": name, "path": str(marker)})
    assert not r.is_error, text(r)
    with anyio.fail_after(20):
        while True:
            route = rt.manager.catalog.route(name)
            if route is not None and route.upstream == "a":
                return
            await anyio.sleep(0.05)


async def not_run(rt: Any, r: Any, marker: Path, name: str) -> None:
    """Nothing reached ``a``'s tool: no side effect, and no row of a call of it that left Sentinel."""
    assert not marker.exists(), f"a's tool ran: {text(r)}"
    assert "upstream a" not in text(r) and "shifting wrote" not in text(r), text(r)
    await rt.audit.flush()
    reached = [row for row in await read_audit(rt.config.store_path, tail=500)
               if row.get("upstream") == "a" and row["tool"] == name and row["decision"] == "allow"]
    assert not reached, reached


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
async def test_an_allowed_continuation_reaches_only_the_tool_that_was_allowed(
    data_dir: Path, protocol: str
) -> None:
    marker = data_dir / "marker.txt"
    async with running_gateway(make_config(data_dir, servers(protocol))) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            args = {"item": "x"}
            first = await c.session.call_tool("ask_word", args, allow_input_required=True)
            assert is_input_required(first), first
            key = next(iter(first.input_requests))
            assert "[toolbox] a word for x" in first.input_requests[key].params.message
            await shift(rt, c, "ask_word", marker)
            r = await c.session.call_tool(
                "ask_word",
                args,
                allow_input_required=True,
                input_responses={key: ElicitResult(action="accept", content={"word": "blue"})},
                request_state=first.request_state,
            )
            await not_run(rt, r, marker, "ask_word")
            # refused (a 2026-era upstream's continuation), or answered by b's own held call (handshake era)
            assert "names another tool" in text(r) or text(r) == "x=blue", text(r)
            # a fresh call of the name decides a's tool on its own (destructive: confirmed first)
            fresh = await c.session.call_tool("ask_word", args, allow_input_required=True)
            assert is_input_required(fresh) and not marker.exists()


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
async def test_a_confirmation_asked_for_one_tool_confirms_no_other_2026_client(
    data_dir: Path, protocol: str
) -> None:
    marker = data_dir / "marker.txt"
    written = data_dir / "written.txt"
    async with running_gateway(make_config(data_dir, servers(protocol))) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=always_yes) as c:
            args = {"path": str(written), "text": "hello"}
            first = await c.session.call_tool("write_marker", args, allow_input_required=True)
            assert is_input_required(first), first
            keys = list(first.input_requests)
            await shift(rt, c, "write_marker", marker)
            r = await c.session.call_tool(
                "write_marker",
                args,
                allow_input_required=True,
                input_responses={k: YES for k in keys},
                request_state=first.request_state,
            )
            await not_run(rt, r, marker, "write_marker")
            assert "names another tool" in text(r) and not written.exists(), text(r)


@pytest.mark.parametrize("protocol", ["modern", "legacy"])
async def test_a_pushed_confirmation_for_one_tool_confirms_no_other_handshake_client(
    data_dir: Path, protocol: str
) -> None:
    marker = data_dir / "marker.txt"
    written = data_dir / "written.txt"
    async with running_gateway(make_config(data_dir, servers(protocol))) as rt:
        holder: dict[str, Client] = {}
        asked: list[str] = []

        async def yes_after_shift(ctx: Any, params: Any) -> ElicitResult:
            # the user reads the question about b's write_marker; meanwhile the name moves to a's tool
            asked.append(params.message)
            await shift(rt, holder["c"], "write_marker", marker)
            return YES

        async with Client(rt.front.server, mode="legacy", elicitation_callback=yes_after_shift) as c:
            holder["c"] = c
            r = await c.call_tool("write_marker", {"path": str(written), "text": "hello"})
            assert asked, "no question was pushed"
            await not_run(rt, r, marker, "write_marker")
            assert "names another tool" in text(r) and not written.exists(), text(r)


async def test_answers_given_in_process_count_for_the_tool_asked_about(data_dir: Path) -> None:
    """The port's ``invoke`` (the agent loop's, the CLI's): answers name the tool they were asked for."""
    marker = data_dir / "marker.txt"
    written = data_dir / "written.txt"
    async with running_gateway(make_config(data_dir, servers("modern"))) as rt:
        args = {"path": str(written), "text": "hello"}
        asked = await rt.gateway.invoke("write_marker", args, session_id="s1")
        assert isinstance(asked, NeedsInput) and asked.identity == "b__write_marker", asked
        answers = {q.key: Answer(action="accept", content={"approve": True}) for q in asked.questions}
        async with Client(rt.front.server, mode="auto") as c:
            await shift(rt, c, "write_marker", marker)
        r = await rt.gateway.invoke(
            "write_marker", args, session_id="s1", answers=answers, identity=asked.identity
        )
        assert isinstance(r, Refused) and "names another tool" in r.reason, r
        assert not marker.exists() and not written.exists()


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_consoles_yes_for_one_tool_passes_no_other(data_dir: Path, mode: str) -> None:
    """A client that cannot be asked: the person's yes in the console waits for the retry, and counts for the
    tool the question was about only."""
    marker = data_dir / "marker.txt"
    written = data_dir / "written.txt"
    async with running_gateway(make_config(data_dir, servers("modern"))) as rt:
        inbox = Inbox(hold_seconds=0)  # nobody watching: the client is blocked, the answer waits for a retry
        rt.front.inbox = InboxAsking(inbox, rt.gateway)
        async with Client(rt.front.server, mode=mode) as c:  # declares no elicitation
            args = {"path": str(written), "text": "hello"}
            first = await c.call_tool("write_marker", args)
            assert first.is_error and "waiting for the user" in text(first), text(first)
            [item] = inbox.open_items("owner")
            assert await inbox.give(
                item, {q.key: Answer(action="accept", content={"approve": True}) for q in item.questions}
            )
            await shift(rt, c, "write_marker", marker)
            # the same conversation (a 2026-era client carries it back; a handshake connection is one)
            r = await c.session.call_tool("write_marker", args, meta={SESSION_META: first.meta[SESSION_META]})
            await not_run(rt, r, marker, "write_marker")
            assert r.is_error and not written.exists(), text(r)
