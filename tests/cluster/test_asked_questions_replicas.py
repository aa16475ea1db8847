"""A question the gateway put to a conversation is remembered for the cluster (gateway/asked_questions.py):
asked on replica A, answered by the agent (``sentinel_answer``) while the user's form was open, the user's
later answer arriving at replica B still counts over the agent's. Before, B knew nothing of what A asked, the
retry's decision (made on the agent's answer) asked nothing, and the user's answer was dropped: the agent's
"green" decided the call against the user's "red". Two gateways in one process on one PostgreSQL (each its
own front, engine mirror and memory; one seal key), the real ``mcp`` client in the 2026-07-28 era."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult
from tests.support.carried_session import Carried

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR
from tests.gateway.helpers import make_config, toolbox_stdio

pytestmark = pytest.mark.timeout(180)
RULES = """
askable(colour(P, C), "Which colour for ~w?", choice([red, green]), [from([user, agent])]).
guard('tb__write_marker', [path = P, text = T], colour(P, red)).
"""
KEY = "cluster-test-seal-key-0123456789abcdef"


def config(data_dir: Path, url: str, replica: str) -> Any:
    data_dir.mkdir(parents=True, exist_ok=True)
    rules = data_dir.parent / "colour.pl"
    rules.write_text(RULES)
    return make_config(data_dir, servers={"tb": toolbox_stdio()}, builtins=["sentinel"], store=url,
                       cluster={"replica": replica, "seal_key": KEY},
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(rules)])


async def unused(ctx: Any, params: Any) -> ElicitResult:
    raise AssertionError("nothing is pushed in the 2026-07-28 era")


def text(r: Any) -> str:
    return r.content[0].text


async def test_the_users_late_answer_counts_on_another_replica(tmp_path: Path, pg_url: str) -> None:
    marker = tmp_path / "marker.txt"
    args = {"path": str(marker), "text": "hello"}
    async with contextlib.AsyncExitStack() as stack:
        rt_a = await stack.enter_async_context(running_gateway(config(tmp_path / "a", pg_url, "replica-a")))
        rt_b = await stack.enter_async_context(running_gateway(config(tmp_path / "b", pg_url, "replica-b")))
        a, b = [Carried((await stack.enter_async_context(
            Client(rt.front.server, mode="auto", elicitation_callback=unused))).session)
            for rt in (rt_a, rt_b)]
        r = await a.call_tool("tb__write_marker", args, allow_input_required=True)
        [colour_key] = [k for k in r.input_requests if ".colour." in k]
        # the user's form is open; the agent answers first (on A), the colour the user does not want
        ok = await a.call_tool("sentinel__sentinel_answer",
                               {"predicate": "colour", "inputs": [str(marker)], "answer": "green"})
        assert not ok.is_error, text(ok)
        # the user's answer comes back through the other replica
        b.session = a.session
        answers = {colour_key: ElicitResult(action="accept", content={"answer": "red"})}
        r = await b.call_tool("tb__write_marker", args, allow_input_required=True,
                              request_state=r.request_state, input_responses=answers)
        assert not r.is_error and not getattr(r, "input_requests", None), getattr(r, "content", r)
        facts = json.dumps((await b.call_tool("sentinel__sentinel_facts", {})).structured_content)
        assert "green" not in facts and "red" in facts, facts
    assert marker.read_text() == "hello\n"
