"""What an orchestrator answers an offer with, read as hostile: only SUBMITTED and WORKING are worth waiting
for. A task that asks for input (Sentinel never answers an orchestrator's questions) or names a state A2A does
not have was polled until ``orchestrator_timeout`` ran out, the peer's intent waiting all that while and
holding one of the few offers in flight; now either is a decline at once and the intent runs locally, saying
why. Real gateway, real HTTP on 127.0.0.1, the offer a guarded call, a stand-in for the local LLM."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx2
import pytest

from sentinel_mcp.paths import RULEBASES_DIR
from tests.a2a.a2a_rig import user_message
from tests.a2a.served_gateway import gateway_with_a2a
from tests.a2a.test_peer_cannot_route import recording_agent

pytestmark = pytest.mark.timeout(120)
ROVER = "rover-token-0123456789"
STAND_IN = Path(__file__).parent / "stand_in_llm.py"


def answering(state: str) -> Any:
    def reply(message: dict[str, Any]) -> dict[str, Any]:
        said = {"messageId": "m-1", "role": "ROLE_AGENT", "parts": [{"text": "which one do you mean?"}]}
        return {"status": {"state": state, "message": said}}

    return reply


@pytest.mark.parametrize(
    "state, said",
    [
        ("TASK_STATE_INPUT_REQUIRED", "input_required"),
        ("TASK_STATE_AUTH_REQUIRED", "auth_required"),
        ("TASK_STATE_DONE_TRUST_ME", "not a state"),
        ("TASK_STATE_UNSPECIFIED", "unspecified"),
    ],
)
async def test_an_orchestrator_that_asks_or_names_no_state_is_a_decline_at_once(
    tmp_path: Path, state: str, said: str
) -> None:
    async with recording_agent(answering(state)) as (port, got):
        llm = {"command": sys.executable, "args": [str(STAND_IN), str(tmp_path / "llm.log")]}
        raw = {"mcpServers": {"llm": llm}, "sentinel": {
            "data_dir": str(tmp_path), "builtins": ["a2a"],
            "rulebases": [str(RULEBASES_DIR / "default.pl")],
            "policy": {"allow": ["a2a__a2a_offer", "llm__llm_generate"]},
            "principals": [{"name": "rover", "token": ROVER}],
            # long enough that polling would show: each poll is a GetTask the orchestrator records
            "a2a": {"name": "offer-test", "orchestrator_url": f"http://127.0.0.1:{port}/a2a",
                    "orchestrator_timeout": 3}}}
        async with gateway_with_a2a(raw, tmp_path) as gw, httpx2.AsyncClient(timeout=60) as http:
            headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {ROVER}"}
            body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": {"message": user_message({"text": "find me a coffee place"})}}
            task = (await http.post(gw.base + "/a2a", json=body, headers=headers)).json()["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task["status"]
        [execution] = [p["data"] for a in task["artifacts"] for p in a["parts"]
                       if isinstance(p.get("data"), dict) and p["data"].get("type") == "execution"]
        assert execution["mode"] == "degraded" and said in execution["reason"], execution
        assert [g["body"]["method"] for g in got] == ["SendMessage"], [g["body"]["method"] for g in got]
