"""An upstream's sampling or roots request during a call, answered: the answer lets the call act (the model's
words, the client's folders), so it is decided again before the upstream gets it, as an accept to a question
is (``gateway/midcall_answers.py``): the caller checked again, the call decided again as a preview.

Before, only an elicitation's accept was: a write locking the file while the client's model answered (or the
rulebase replaced to deny) did not stop the upstream writing the sampled word into it, nor writing the root it
was given. Every way such a request reaches a client, stdio and HTTP upstreams; real gateway, real policy
engine, the toolbox in each era, the real ``mcp`` client.

Also bounded as questions are: an upstream asking roots 1,000 times in one call had every one put to the
client; past ``MAX_QUESTIONS_PER_CALL`` of a kind the upstream is refused without asking, and audited.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ErrorData,
    ListRootsResult,
    Root,
    TextContent,
)

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway.caller_recheck import OUTCOME as LAPSED
from sentinel_mcp.identity.resolver import AuthFailed

from ..conftest import free_port, stop_process
from .helpers import TOOLBOX, make_config, toolbox_stdio
from .test_midcall_answers_decided_again import WAYS, config, text

pytestmark = pytest.mark.timeout(120)
SESSION = "sentinel/session"
TOOLS = {"sampling": "tb__write_marker_sampled", "roots": "tb__write_marker_rooted"}

LOCKED_DENIES = """
fact(locked/1).
guard('tb__write_marker_sampled', [path = P], require(\\+ locked(P), 'the file is locked')).
guard('tb__write_marker_rooted', [path = P], require(\\+ locked(P), 'the file is locked')).
guard('lk__write_marker', [path = _, text = _], true).
effect('lk__write_marker', [path = P], [establish(locked(P))]).
"""

SAMPLED = CreateMessageResult(role="assistant", content=TextContent(type="text", text="blue"), model="m")
ROOTS = ListRootsResult(roots=[Root(uri="file:///home/user/project")])
WRITTEN = {"sampling": "blue", "roots": "file:///home/user/project"}


async def answered(rt: Any, kind: str, mode: str, marker: Path, lock_between: bool) -> Any:
    """The tool asking ``kind`` called, its request answered (after the lock was written through the gateway
    in the same conversation when ``lock_between``): the call's result."""
    tool, args = TOOLS[kind], {"path": str(marker)}

    async def lock() -> None:
        if lock_between:
            session = await only_session_of(rt, tool)
            wrote = await rt.gateway.execute("lk__write_marker", {**args, "text": "lock"}, session_id=session)
            assert "wrote" in text(wrote.result), wrote

    async def on_sample(ctx: Any, params: Any) -> CreateMessageResult:
        await lock()
        return SAMPLED

    async def on_roots(ctx: Any) -> ListRootsResult:
        await lock()
        return ROOTS

    async with Client(rt.front.server, mode=mode, sampling_callback=on_sample,
                      list_roots_callback=on_roots) as c:
        if mode == "legacy":
            return await c.call_tool(tool, args)
        first = await c.session.call_tool(tool, args, allow_input_required=True)
        assert type(first).__name__ == "InputRequiredResult", first
        key = next(iter(first.input_requests))
        await lock()
        return await c.session.call_tool(
            tool, args, allow_input_required=True, meta={SESSION: (first.meta or {}).get(SESSION)},
            input_responses={key: SAMPLED if kind == "sampling" else ROOTS},
            request_state=first.request_state,
        )


async def only_session_of(rt: Any, tool: str) -> str:
    sessions = {r["session"] for r in await rt.audit.read(tail=10) if r["tool"] == tool}
    assert len(sessions) == 1, sessions
    return str(next(iter(sessions)))


@pytest.mark.parametrize("kind", sorted(TOOLS))
@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("lock_between", [True, False])
async def test_a_sampling_or_roots_answer_mid_call_is_refused_once_the_policy_denies_the_call(
    data_dir: Path, kind: str, way: str, lock_between: bool
) -> None:
    upstream, mode = WAYS[way]
    marker = data_dir / "marker.txt"
    async with running_gateway(config(data_dir, upstream, LOCKED_DENIES)) as rt:
        r = await answered(rt, kind, mode, marker, lock_between)
        rows = [row for row in await rt.audit.read(tail=10) if row["tool"] == TOOLS[kind]]
    written = marker.read_text() if marker.exists() else ""
    if lock_between:
        assert r.is_error and "the file is locked" in text(r), text(r)
        assert written == "lock\n"  # the upstream never got the answer: nothing of it was written
        assert rows[-1]["outcome"] == "denied", rows[-1]
    else:
        assert not r.is_error and f"wrote {WRITTEN[kind]}" in text(r), text(r)
        assert written == f"{WRITTEN[kind]}\n"


@pytest.mark.parametrize("kind", sorted(TOOLS))
@pytest.mark.parametrize("upstream", ["legacy", "modern"])
async def test_a_sampling_or_roots_answer_over_http_is_refused_once_the_policy_denies_the_call(
    data_dir: Path, kind: str, upstream: str
) -> None:
    """The same, the asking upstream over streamable HTTP."""
    port = free_port()
    up = subprocess.Popen([sys.executable, TOOLBOX, "--http", str(port)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        for _ in range(600):  # listening (bounded by count)
            assert up.poll() is None, "the toolbox ended"
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            await asyncio.sleep(0.05)
        marker = data_dir / "marker.txt"
        cfg = config(data_dir, upstream, LOCKED_DENIES, url=f"http://127.0.0.1:{port}/mcp")
        async with running_gateway(cfg) as rt:
            r = await answered(rt, kind, "legacy", marker, lock_between=True)
    finally:
        stop_process(up)
    assert r.is_error and "the file is locked" in text(r), text(r)
    assert marker.read_text() == "lock\n"


class RotatedWhileSampled(CallerLink):
    """A caller whose token is rotated while the upstream's sampling or roots request is open; it answers
    all the same. Its check raises ``AuthFailed`` from then, as the HTTP host's does."""

    who = "the test's caller"
    can_push = True  # a 2026-era upstream's input request is put to it as a handshake-era client's
    relays_sampling = True

    def __init__(self) -> None:
        self.lapsed = False

    def check(self) -> Any:
        if self.lapsed:
            raise AuthFailed("invalid token or API key")
        return "owner"

    async def sample(self, params: CreateMessageRequestParams) -> CreateMessageResult | ErrorData:
        self.lapsed = True
        return SAMPLED

    async def list_roots(self) -> ListRootsResult | ErrorData:
        self.lapsed = True
        return ROOTS


@pytest.mark.parametrize("kind", sorted(TOOLS))
@pytest.mark.parametrize("upstream", ["legacy", "modern"])
async def test_a_sampling_or_roots_answer_is_refused_once_the_callers_credentials_lapsed(
    data_dir: Path, kind: str, upstream: str
) -> None:
    marker = data_dir / "marker.txt"
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(protocol=upstream, fork=True)},
                      policy={"allow": ["tb__*"]}, builtins=[])
    async with running_gateway(cfg) as rt:
        caller = RotatedWhileSampled()
        out = await rt.gateway.execute(TOOLS[kind], {"path": str(marker)}, session_id="s1", link=caller,
                                       recheck=caller.check)
        rows = await rt.audit.read(tail=5)
    said = text(getattr(out, "result", out))
    assert "no longer hold" in said and "not passed on" in said, said
    assert not marker.exists()
    assert rows[-1]["outcome"] == LAPSED, rows[-1]
