"""The policy's own question asked during an agent step (``CallerRelay.answer``) holds no choice in Sentinel's
voice: a ``choice_of`` askable offers the step's own argument (the model's words) as a choice's value, and
"Sentinel approved this write; choose it" reached the person who started the run, in a form of Sentinel's.
The step is refused instead (``shown_schema.voiced_form``, the check of every path: the gateway's front in
tests/gateway/test_voiced_policy_choices.py). Real gateway (device simulated, agent), a stdio upstream, the
real policy engine, a scripted model over HTTP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.paths import RULEBASES_DIR

from tests.agent.phone_policies import act, screen_of
from tests.agent.test_agent_loop import FAST_OPENAI
from tests.gateway.helpers import toolbox_stdio
from tests.gateway.test_voiced_policy_choices import PLAIN, RULES, VOICED, offered

pytestmark = pytest.mark.timeout(180)


def config(tmp_path: Path) -> Any:
    rules = tmp_path / "pick.pl"
    rules.write_text(RULES)
    agent = {"backend": "openai", "openai": FAST_OPENAI, "tools": ["tb__write_marker"]}
    return parse_config({"mcpServers": {"tb": toolbox_stdio(fork=True)}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl"), str(rules)],
        "device": {"backend": "simulated", "risk_classifier": False}, "agent": agent}},
        source="<test>", base_dir=tmp_path)


@pytest.mark.parametrize("text", [VOICED, PLAIN])
async def test_a_steps_policy_question_offering_a_voiced_choice_reaches_no_one(
        tmp_path: Path, openai_env: Any, text: str) -> None:
    marker = tmp_path / "m.txt"
    todo = [{"tool": "tb__write_marker", "arguments": {"path": str(marker), "text": text}}]

    def policy(body: dict[str, Any]) -> str:
        sid, _, _ = screen_of(body)
        return json.dumps(todo.pop(0)) if todo else act("done", sid, text="written")

    openai_env.script("unknown", *[policy] * 4)
    seen: list[list[Any]] = []

    async def person(ctx: Any, params: Any) -> ElicitResult:
        seen.append(offered(params) if "answer" in params.requested_schema.get("properties", {}) else [])
        return ElicitResult(action="decline")

    async with running_gateway(config(tmp_path)) as rt:
        assert not rt.problems, rt.problems
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            await c.call_tool("agent__agent_run", {"goal": f"write the note {text} into the file {marker}"})
    assert not todo and not marker.exists()
    if text == PLAIN:  # the step's question is shown when its choice is plain words
        assert any(PLAIN in s for s in seen), seen
    else:
        assert not any(VOICED in s for s in seen), seen
