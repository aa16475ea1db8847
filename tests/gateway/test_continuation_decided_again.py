"""The continuation of an allowed call (2026 era: its upstream asked for input, the client answers in a later
request) is sent only while the policy would still allow the call: decided again, as a preview (nothing
spent, nothing asked), and refused when it now denies.

The continuation was taken as "already allowed" for as long as its request state lived (``policy.
confirm_ttl``, 300 s by default, up to a week): what the decision rested on could change meanwhile (a write of
the same conversation, another conversation, a fact expired and read again), and the upstream then did the
write on a decision made before. Here the file is locked by a write between the question and its answer; the
answer must not write into it. Real gateway, real policy engine, the toolbox over stdio as a 2026-era
upstream, the real ``mcp`` client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

from .helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(120)
SESSION = "sentinel/session"

RULES = """
fact(locked/1).
guard('tb__write_marker_asking', [path = P], require(\\+ locked(P), 'the file is locked')).
guard('tb__write_marker', [path = _, text = _], true).
effect('tb__write_marker', [path = P], [establish(locked(P))]).
"""


def config(data_dir: Path) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir / "lock.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio(protocol="modern", fork=True)},
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


async def never_asked(ctx: Any, params: Any) -> ElicitResult:
    raise AssertionError(f"pushed a question: {params}")


def text(r: Any) -> str:
    return r.content[0].text if getattr(r, "content", None) else repr(r)


@pytest.mark.parametrize("locked_between", [True, False])
async def test_an_allowed_continuation_is_refused_once_the_policy_denies_the_call(
    data_dir: Path, locked_between: bool
) -> None:
    marker = data_dir / "marker.txt"
    async with running_gateway(config(data_dir)) as rt:
        # a client that declares elicitation (the upstream's question is relayed to it; never asked here)
        async with Client(rt.front.server, mode="auto", elicitation_callback=never_asked) as c:
            args = {"path": str(marker)}
            first = await c.session.call_tool("tb__write_marker_asking", args, allow_input_required=True)
            assert type(first).__name__ == "InputRequiredResult", first
            key = next(iter(first.input_requests))
            session = (first.meta or {}).get(SESSION)
            assert session, first.meta  # the conversation the next requests carry
            if locked_between:  # the same conversation writes the file: locked from now on
                wrote = await c.session.call_tool("tb__write_marker", {**args, "text": "lock"},
                                                  meta={SESSION: session})
                assert not wrote.is_error, text(wrote)
            r = await c.session.call_tool(
                "tb__write_marker_asking", args, allow_input_required=True, meta={SESSION: session},
                input_responses={key: ElicitResult(action="accept", content={"word": "blue"})},
                request_state=first.request_state,
            )
            written = marker.read_text() if marker.exists() else ""
            if locked_between:
                assert r.is_error and "the file is locked" in text(r), text(r)
                assert written == "lock\n"
            else:
                assert not r.is_error and text(r) == "wrote blue", text(r)
                assert written == "blue\n"
