"""An upstream's question during a call, answered "accept": the answer lets the call act, so before it is
relayed the call is decided again (``Guard.recheck``: a preview, nothing asked or spent) and its caller
checked again; an accept the policy would now refuse reaches the upstream as a refusal, and the call ends
refused (``gateway/midcall_answers.py``).

The answer came on the decision made at the call's start, however long the person took: a write of the same
conversation meanwhile (here: the file locked) did not stop the upstream writing into it. Every way a
question reaches a client: a handshake-era upstream pushing to a handshake-era client, or to a 2026-era
client (the call held open between its rounds), and a 2026-era upstream's input request pushed to a
handshake-era client (the 2026-to-2026 continuation: ``test_continuation_decided_again.py``). Real gateway,
real policy engine, the toolbox over stdio in each era, the real ``mcp`` client.

And a decision that would now *ask* (a confirmation the call did not need when it was allowed) does not go
ahead on the old allow: the call is refused with why (the person is asked when the tool is called again);
a confirmation the call was allowed on, spent as it left, does not count as new.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from mcp import Client
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway.caller_recheck import OUTCOME as LAPSED
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.paths import RULEBASES_DIR

from ..conftest import free_port, stop_process
from .helpers import TOOLBOX, make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
SESSION = "sentinel/session"

LOCKED_DENIES = """
fact(locked/1).
guard('tb__write_marker_asking', [path = P], require(\\+ locked(P), 'the file is locked')).
guard('lk__write_marker', [path = _, text = _], true).
effect('lk__write_marker', [path = P], [establish(locked(P))]).
"""

LOCKED_ASKS = """
fact(locked/1).
guard('tb__write_marker_asking', [path = P],
      (locked(P) -> confirmed('Write into the locked file ~w?', [P]) ; true)).
guard('lk__write_marker', [path = _, text = _], true).
effect('lk__write_marker', [path = P], [establish(locked(P))]).
"""

# (the upstream's era, the client's mode): how the question reaches the client
WAYS = {
    "push_to_handshake_client": ("legacy", "legacy"),
    "push_held_for_2026_client": ("legacy", "auto"),
    "input_request_pushed_to_handshake_client": ("modern", "legacy"),
}
# ... and the 2026-era client's continuation of a 2026-era upstream's input request (denied: the other file)
ASKING_WAYS = {**WAYS, "continuation": ("modern", "auto")}


def config(data_dir: Path, upstream: str, rules: str, url: str | None = None) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    file = data_dir / "lock.pl"
    file.write_text(rules)
    # the lock is written through a second upstream while the first's call waits for its answer (a
    # handshake-era upstream's calls may take turns)
    tb = toolbox_stdio(protocol=upstream, fork=True) if url is None else {"url": url, "protocol": upstream}
    return make_config(data_dir, servers={"tb": tb, "lk": toolbox_stdio(fork=True)},
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(file)])


def text(r: Any) -> str:
    return " ".join(getattr(b, "text", "") for b in r.content) if getattr(r, "content", None) else repr(r)


Change = Callable[[str], Awaitable[None]]


async def asked_and_answered(
    rt: Any, mode: str, marker: Path, lock_between: bool, change: Change | None = None
) -> tuple[Any, list[str]]:
    """The asking write called, its question answered "accept" (after the lock was written through the
    gateway in the same conversation when ``lock_between``, or ``change(conversation)`` made): the call's
    result, and what the client was asked."""
    asked: list[str] = []
    args = {"path": str(marker)}

    async def lock(session: str) -> None:
        wrote = await rt.gateway.execute("lk__write_marker", {**args, "text": "lock"}, session_id=session)
        assert "wrote" in text(wrote.result), wrote

    if change is not None:
        lock, lock_between = change, True

    async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        if lock_between:
            await lock(await only_session(rt))
        return ElicitResult(action="accept", content={"word": "blue"})

    async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
        if mode == "legacy":
            return await c.call_tool("tb__write_marker_asking", args), asked
        first = await c.session.call_tool("tb__write_marker_asking", args, allow_input_required=True)
        assert type(first).__name__ == "InputRequiredResult", first
        key = next(iter(first.input_requests))
        asked.append(first.input_requests[key].params.message)
        session = (first.meta or {}).get(SESSION)
        if lock_between:
            await lock(await only_session(rt))
        r = await c.session.call_tool(
            "tb__write_marker_asking", args, allow_input_required=True, meta={SESSION: session},
            input_responses={key: ElicitResult(action="accept", content={"word": "blue"})},
            request_state=first.request_state,
        )
        return r, asked


async def only_session(rt: Any) -> str:
    """The conversation of the one client call made so far (its decision row's)."""
    sessions = {r["session"] for r in await rt.audit.read(tail=10) if r["tool"] == "tb__write_marker_asking"}
    assert len(sessions) == 1, sessions
    return str(next(iter(sessions)))


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("lock_between", [True, False])
async def test_an_accept_mid_call_is_refused_once_the_policy_denies_the_call(
    data_dir: Path, way: str, lock_between: bool
) -> None:
    upstream, mode = WAYS[way]
    marker = data_dir / "marker.txt"
    async with running_gateway(config(data_dir, upstream, LOCKED_DENIES)) as rt:
        r, asked = await asked_and_answered(rt, mode, marker, lock_between)
    written = marker.read_text() if marker.exists() else ""
    assert len(asked) == 1 and "a word to write into" in asked[0], asked
    if lock_between:
        assert r.is_error and "the file is locked" in text(r), text(r)
        assert written == "lock\n"  # the upstream never got the accept: nothing of "blue" was written
    else:
        assert not r.is_error and "wrote blue" in text(r), text(r)
        assert written == "blue\n"


@pytest.mark.parametrize("way", sorted(ASKING_WAYS))
async def test_an_accept_mid_call_is_refused_when_the_call_would_now_ask_first(
    data_dir: Path, way: str
) -> None:
    upstream, mode = ASKING_WAYS[way]
    marker = data_dir / "marker.txt"
    async with running_gateway(config(data_dir, upstream, LOCKED_ASKS)) as rt:
        r, _asked = await asked_and_answered(rt, mode, marker, lock_between=True)
    assert r.is_error, text(r)
    assert "Write into the locked file" in text(r) and "call the tool again" in text(r), text(r)
    assert marker.read_text() == "lock\n"


CONFIRMED_FIRST = """
guard('tb__write_marker_asking', [path = P], confirmed('Write into ~w?', [P])).
"""


def answer_to(params: Any) -> ElicitResult:
    """Accept, each field of the form filled: a yes to a confirmation, "blue" for a word."""
    fields = (getattr(params, "requested_schema", None) or {}).get("properties", {})
    content = {k: True if f.get("type") == "boolean" else "blue" for k, f in fields.items()}
    return ElicitResult(action="accept", content=content)


@pytest.mark.parametrize("way", sorted(ASKING_WAYS))
async def test_the_confirmation_a_call_was_allowed_on_is_not_asked_for_again(
    data_dir: Path, way: str
) -> None:
    """The yes the call was allowed on is spent as it leaves: decided again it is asked for again, which
    is no new question (the call goes on with the upstream's answer)."""
    upstream, mode = ASKING_WAYS[way]
    marker = data_dir / "marker.txt"
    args = {"path": str(marker)}
    asked: list[str] = []

    async def on_elicit(ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return answer_to(params)

    async with running_gateway(config(data_dir, upstream, CONFIRMED_FIRST)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=on_elicit) as c:
            if mode == "legacy":
                r = await c.call_tool("tb__write_marker_asking", args)
            else:
                r = await c.session.call_tool("tb__write_marker_asking", args, allow_input_required=True)
                for _round in range(4):  # Sentinel's question, then the upstream's
                    if type(r).__name__ != "InputRequiredResult":
                        break
                    session = (r.meta or {}).get(SESSION)
                    responses = {}
                    for key, request in r.input_requests.items():
                        asked.append(request.params.message)
                        responses[key] = answer_to(request.params)
                    r = await c.session.call_tool(
                        "tb__write_marker_asking", args, allow_input_required=True, meta={SESSION: session},
                        input_responses=responses, request_state=r.request_state,
                    )
    assert len(asked) == 2 and "Write into" in asked[0] and "a word to write" in asked[1], asked
    assert not r.is_error and "wrote blue" in text(r), text(r)
    assert marker.read_text() == "blue\n"


class RotatedWhileAsked(CallerLink):
    """A caller whose credentials stop holding (the owner's token rotated after a leak) while the upstream's
    question is open; it answers "accept" all the same (as the old token's holder would). Its check raises
    ``AuthFailed`` from then, as the HTTP host's does (``identity.resolver.RECHECK_KEY``)."""

    who = "the test's caller"
    can_push = True  # a 2026-era upstream's input request is put to it as a handshake-era client's

    def __init__(self, rotate: bool) -> None:
        self.rotate, self.lapsed, self.checks = rotate, False, 0

    def check(self) -> Any:
        self.checks += 1
        if self.lapsed:
            raise AuthFailed("invalid token or API key")
        return "owner"

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        self.lapsed = self.rotate
        return ElicitResult(action="accept", content={"word": "blue"})


@pytest.mark.parametrize("upstream", ["legacy", "modern"])
@pytest.mark.parametrize("rotate", [True, False])
async def test_an_accept_mid_call_is_refused_once_the_callers_credentials_lapsed(
    data_dir: Path, upstream: str, rotate: bool
) -> None:
    marker = data_dir / "marker.txt"
    cfg = make_config(data_dir, servers={"tb": toolbox_stdio(protocol=upstream, fork=True)},
                      policy={"allow": ["tb__*"]}, builtins=[])
    async with running_gateway(cfg) as rt:
        caller = RotatedWhileAsked(rotate)
        out = await rt.gateway.execute("tb__write_marker_asking", {"path": str(marker)}, session_id="s1",
                                       link=caller, recheck=caller.check)
        rows = await rt.audit.read(tail=5)
    said = text(getattr(out, "result", out))
    if rotate:
        assert "no longer hold" in said and "not passed on" in said, said
        assert not marker.exists()
        assert rows[-1]["outcome"] == LAPSED, rows[-1]
    else:
        assert "wrote blue" in said, said
        assert marker.read_text() == "blue\n"


DENIED_NOW = """
guard('tb__write_marker_asking', [path = _], require(fail, 'the policy now refuses every write')).
"""


@pytest.mark.parametrize("way", sorted(WAYS))
async def test_an_accept_mid_call_is_refused_once_the_policy_changed_to_deny(
    data_dir: Path, way: str
) -> None:
    """The rulebase replaced while the question is open (and reloaded): the call is decided on it."""
    upstream, mode = WAYS[way]
    marker = data_dir / "marker.txt"
    async with running_gateway(config(data_dir, upstream, LOCKED_DENIES)) as rt:

        async def change(_session: str) -> None:
            (data_dir / "lock.pl").write_text(DENIED_NOW)
            assert await rt.gateway.guard.rulebases.reload("test")

        r, _asked = await asked_and_answered(rt, mode, marker, lock_between=False, change=change)
    # a held round's answer is bound to the policy version it was asked under (``input_rounds``): refused
    # as such before it is relayed
    why = "the policy changed since" if way == "push_held_for_2026_client" else "the policy now refuses every"
    assert r.is_error and why in text(r), text(r)
    assert not marker.exists()


@pytest.mark.parametrize("upstream", ["legacy", "modern"])
async def test_an_accept_mid_call_over_http_is_refused_once_the_policy_denies_the_call(
    data_dir: Path, upstream: str
) -> None:
    """The same, the asking upstream over streamable HTTP (its pushes read on the call's own stream)."""
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
            r, _asked = await asked_and_answered(rt, "legacy", marker, lock_between=True)
    finally:
        stop_process(up)
    assert r.is_error and "the file is locked" in text(r), text(r)
    assert marker.read_text() == "lock\n"
