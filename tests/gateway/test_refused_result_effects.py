"""A call the upstream answered with a result Sentinel refuses to pass on has run all the same: the guard is
told its outcome is unknown, as for a call whose result never came.

Sentinel refuses an upstream's result it will not show (more content blocks than a client shows, structured
content its own output schema refuses, a shape past the bounds). The upstream had done the call by then,
yet the guard learned nothing of it: a write's confirmation stayed unspent (the same call went through again
on it, asking no one) and its effects were never recorded (a rule "once per file", or airline.pl's one
certificate per reservation, let it run again). Now such a call is what an unanswered one is
(``observe_unknown``): its confirmation spent, what it would change read again, what it would establish
recorded as unsure, which denies a second "once" call. Real gateway, real policy engine, raw stdio upstreams.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.core.call_request import CallRequest
from sentinel_mcp.core.port import Refused
from sentinel_mcp.gateway.shown_result import MAX_CONTENT_BLOCKS
from sentinel_mcp.paths import RULEBASES_DIR
from tests.support.forked_upstreams import forked_spec

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
HERE = Path(__file__).parent

# (upstream script, its tool, the arguments of a call whose result is refused)
REFUSED = {
    "blocks": ("block_bomb_upstream.py", "blocks", {"n": 3 * MAX_CONTENT_BLOCKS}),
    "output_schema": ("output_schema_upstream.py", "wrong_type", {"n": 1}),
}


def rules(tool: str) -> str:
    # the tool stands for a write that may run once: what it did is recorded by its effect
    return (
        "fact(done/1).\n"
        f"guard('up__{tool}', [n = N], require(\\+ done(N), 'this was done once in this conversation')).\n"
        f"effect('up__{tool}', [n = N], [establish(done(N))]).\n"
    )


def config(data_dir: Path, script: str, tool: str) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    once = data_dir / "once.pl"
    once.write_text(rules(tool))
    servers = {"up": forked_spec(str(HERE / script))}
    return make_config(data_dir, servers=servers, rulebases=[str(RULEBASES_DIR / "default.pl"), str(once)])


@pytest.mark.parametrize("case", list(REFUSED))
async def test_a_call_whose_result_was_refused_counts_as_having_maybe_run(data_dir: Path, case: str) -> None:
    script, tool, args = REFUSED[case]
    async with running_gateway(config(data_dir, script, tool)) as rt:
        assert await rt.manager.upstreams["up"].wait_ready(20)

        def call() -> CallRequest:
            return CallRequest(name=f"up__{tool}", arguments=dict(args), session_id="s1")

        first = await rt.gateway.run(call())
        result = getattr(first, "result", None)
        assert result is not None and result.is_error, first  # refused by Sentinel, after the upstream ran
        again = await rt.gateway.run(call())
        assert isinstance(again, Refused) and "done once" in again.reason, again
