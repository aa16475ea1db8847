"""The model's reply is as hostile as the screens it was written from: an answer nested deeper than Python's
parser recurses, a ``usage`` that is not an object, a content that is not text. Each is an unusable answer
(the run goes on, or stops and says why, on disk), never an exception that ends the call without a result and
leaves the run "running" in the trace store."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.test_agent_loop import agent_config
from tests.device.device_helpers import Answers

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)

DEEP = "[" * 50_000 + "]" * 50_000
USAGE = {"prompt_tokens": 10, "completion_tokens": 1}
FAIL = '{"action": "fail", "snapshot_id": null, "text": "gave up", "reasoning": "r"}'

HOSTILE = [
    DEEP,  # an answer nested deeper than json.loads recurses
    '{"action": "done", "text": ' + DEEP + ', "reasoning": "r"}',
    {"content": "{}", "usage": [1, 2]},  # usage not an object
    {"content": "{}", "usage": {"prompt_tokens": "9" * 5000}},  # a count too long to be an int
    {"content": 7, "usage": USAGE},  # content not text
    {"content": {"action": "done"}, "usage": USAGE},
    {"content": ["done"], "usage": USAGE},
]


async def test_each_hostile_reply_is_an_unusable_answer_and_the_run_ends_on_disk(tmp_path, openai_env):
    # max_failures above the hostile answers' count: each is seen, then the model gives up
    openai_env.script("unknown", *HOSTILE, FAIL)
    config = agent_config(tmp_path, max_failures=10, health={"backoff_seconds": 0.001})
    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"})
            run = r.structured_content
            assert run is not None, r.content[0].text  # an answer, not a crash of the call
            listed = await c.call_tool("agent__agent_runs", {})
    assert run["status"] == "failed" and "gave up" in run["reason"], run
    outcomes = [s.get("outcome") for s in run["steps"]]
    assert outcomes[: len(HOSTILE)] == ["unusable"] * len(HOSTILE), outcomes
    stored = listed.structured_content["runs"]
    assert [x["status"] for x in stored if x["run_id"] == run["run_id"]] == ["failed"]  # not left "running"


async def test_an_error_no_check_foresaw_ends_the_run_on_disk(tmp_path, openai_env, monkeypatch):
    """Whatever a step raises that no check turned into an outcome (a bug, a hostile input past every parser):
    the call gets a result and the run is finished on disk as failed, never left "running"."""
    import sentinel_mcp.agent.loop as loop

    def broken(*_a, **_k):
        raise RuntimeError("a parser bug")

    monkeypatch.setattr(loop, "parse_decision", broken)
    openai_env.script("unknown", FAIL)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers()) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read the newest message"})
            listed = await c.call_tool("agent__agent_runs", {})
    run = r.structured_content
    assert r.is_error and run is not None and run["status"] == "failed", r.content[0].text
    assert "RuntimeError" in run["reason"]
    assert "a parser bug" not in run["reason"]  # its text stays in the log
    assert [x["status"] for x in listed.structured_content["runs"]] == ["failed"]


def envelope(*contents: str, key_twice: str = "choices") -> str:
    """A chat-completions body whose ``key_twice`` is given once per content: a reader that keeps the first
    (a proxy, a log viewer) and one that keeps the last (Python's json) see different answers."""
    parts = [f'"{key_twice}": ' + json.dumps([{"index": 0, "message": {"role": "assistant", "content": c},
                                               "finish_reason": "stop"}]) for c in contents]
    return "{" + ", ".join([*parts, '"usage": ' + json.dumps(USAGE)]) + "}"


async def test_an_endpoint_body_with_its_answer_twice_is_not_acted_on(tmp_path, openai_env):
    """The endpoint's body is read as strictly as the model's text: a key twice (two ``choices``: ``fail``
    first, ``open_app`` last) is a malformed response, never the last of two answers acted on."""
    opened = json.dumps({"action": "open_app", "snapshot_id": None, "text": "com.android.settings",
                         "reasoning": "r"})
    openai_env.script("unknown", {"raw": envelope(FAIL, opened)}, {"raw": envelope(FAIL, opened)}, FAIL)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers("yes")) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open settings"})
        screen = rt.gateway.manager.upstreams["device"].target.server.runtime.backend.screen
    run = r.structured_content
    assert "settings" not in screen, screen
    assert all(s.get("tool") is None for s in run["steps"]), run["steps"]
    assert "malformed" in json.dumps(run["steps"]), run["steps"]
