"""The agent loop through the real gateway on the simulated phone: every step a guarded call, questions to the
person who started the run, progress per step, the trace in SQLite. The model is a scripted OpenAI-compatible
HTTP server (the remote-LLM double) whose answers follow the screen the agent sent."""

from __future__ import annotations

import json

import pytest
from tests.agent.audit_rows import audit_rows
from tests.device.device_helpers import Answers
from mcp import Client
from mcp.types import ElicitResult
from tests.agent.phone_policies import act, element_id, read_newest_message, screen_of, sign_in_to_bank

from sentinel_mcp.config import parse_config
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)
MODES = ["legacy", "auto"]
FAST_OPENAI = {"timeout": 5.0, "backoff_base": 0.01, "max_attempts": 2, "model": "scripted-1"}


def agent_config(tmp_path, **agent):
    section = {"backend": "openai", "openai": FAST_OPENAI} | agent
    return parse_config({"mcpServers": {}, "sentinel": {
        "data_dir": str(tmp_path), "builtins": ["device", "agent"],
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "device": {"backend": "simulated", "risk_classifier": False}, "agent": section}},
        source="<test>", base_dir=tmp_path)


def phone_of(rt):
    return rt.gateway.manager.upstreams["device"].target.server.runtime.backend


@pytest.mark.parametrize("mode", MODES)
async def test_agent_reads_the_newest_message_with_progress_and_a_stored_trace(tmp_path, openai_env, mode):
    openai_env.script("unknown", read_newest_message, read_newest_message)
    answers = Answers()
    progress: list[str] = []

    async def on_progress(p, total, message):
        progress.append(message or "")

    async with running_gateway(agent_config(tmp_path)) as rt:
        assert not rt.problems, rt.problems
        rt.gateway.consent_gate.book.grant("owner", "messages", by="cli")  # the owner lets its client
        async with Client(rt.front.server, mode=mode, elicitation_callback=answers) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open Messages and read the newest message"},
                                  progress_callback=on_progress)
            assert not r.is_error, r.content[0].text
            run = r.structured_content
            trace = await c.call_tool("agent__agent_trace", {"run_id": run["run_id"]})
            runs = await c.call_tool("agent__agent_runs", {})
        assert phone_of(rt).screen == "messages_list"
    assert run["status"] == "completed" and run["answer"] == "Alice: See you at 7?"
    assert [s["outcome"] for s in run["steps"]] == ["done", "done"]
    assert run["steps"][0]["tool"] == "device__click" and run["steps"][0]["decision"]["target"] == "Messages"
    assert answers.questions == [] and run["questions_asked"] == []  # navigation asks nothing
    if mode == "legacy":  # 2026-era held calls carry no progress relay
        # the decision (tool, arguments, why) before the call, its outcome after
        # each line marked as the phone's words (test_progress_marked.py)
        lines = [m.split(".] ", 1)[1] for m in progress]
        assert lines[0].startswith("step 1: click 'Messages' -> device__click {\"element_id\"")
        assert lines[1].startswith("step 1: click 'Messages': done")
    stored = trace.structured_content
    assert stored["status"] == "completed" and [s["n"] for s in stored["trace"]] == [1, 2]
    assert runs.structured_content["runs"][0]["run_id"] == run["run_id"]
    # every step went through the gateway's guard: the audit log has them, from the agent
    # as the caller's own calls: its front's origin and its principal (reach, consents)
    rows = audit_rows(tmp_path, "tool, origin, principal, decision", "client LIKE 'agent:%'")
    assert ("device__screen_read", "client", "owner", "allow") in rows
    assert ("device__click", "client", "owner", "allow") in rows
    # and the model saw the screen only as fenced data, with the current snapshot id enforced by the schema
    request = openai_env.calls()[0]["body"]
    assert "response_format" in request and "Current screen:" in request["messages"][1]["content"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_declined_risky_step_stops_the_run_and_nothing_is_sent(tmp_path, openai_env, mode):
    openai_env.script("unknown", sign_in_to_bank, sign_in_to_bank, sign_in_to_bank)
    answers = Answers("no")
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=answers) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "sign in to my bank"})
        phone = phone_of(rt)
        assert phone.screen == "bank_login"  # the tap on Sign in never reached the phone
    run = r.structured_content
    assert r.is_error and run["status"] == "refused", run
    assert "declined" in run["reason"]
    assert answers.questions == [
        "Risk high: Tap \u201cSign in\u201d in Bank? (submits credentials; banking or payment app)"
    ]
    assert run["questions_asked"] == answers.questions
    assert [s["outcome"] for s in run["steps"]] == ["done", "refused"]


async def test_an_approved_risky_step_goes_ahead_once(tmp_path, openai_env):
    openai_env.script("unknown", sign_in_to_bank, sign_in_to_bank, sign_in_to_bank)
    answers = Answers("yes")
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answers) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "sign in to my bank"})
        assert phone_of(rt).screen == "bank_transfer"
    assert r.structured_content["status"] == "completed" and len(answers.questions) == 1


async def test_a_guard_denial_stops_the_run_without_asking(tmp_path, openai_env):
    def forward_code(body):
        return json.dumps(
            {"tool": "device__sms_send", "arguments": {"to": "Bob", "body": "Your code is 482913"}}
        )

    openai_env.script("unknown", forward_code)
    answers = Answers("yes")
    config = agent_config(tmp_path, tools=["device__sms_send"])
    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answers) as c:
            # the goal names the text (so the self-watch finds it grounded): the guard is what stops it
            r = await c.call_tool("agent__agent_run", {"goal": "text Bob 'Your code is 482913'"})
        assert phone_of(rt).sent_messages == []
    run = r.structured_content
    assert run["status"] == "refused" and "one-time code" in run["reason"] and answers.questions == []


class ConsentAnswers:
    """Answers the consent gate's question with the given content (the agent's caller is the person)."""

    def __init__(self, content: dict) -> None:
        self.content = content
        self.questions: list[str] = []

    async def __call__(self, context, params) -> ElicitResult:
        self.questions.append(params.message)
        return ElicitResult(action="accept", content=self.content)


@pytest.mark.parametrize(
    "content, read",
    [
        ({"allow": True}, True),
        ({"allow": "true"}, False),  # not JSON true: not an answer
        ({"confirm": True}, False),  # the device's form, not the consent question's
        ({"allow": False}, False),
    ],
)
async def test_a_personal_read_by_the_agent_needs_the_callers_consent(tmp_path, openai_env, content, read):
    """sms_list is personal (messages): the step passes the consent gate as the caller's own call would, and
    the question goes to the caller; only its strict JSON true lets the read happen."""

    def read_sms(body):
        return json.dumps({"tool": "device__sms_list", "arguments": {"limit": 1}})

    def report(body):
        return act("done", screen_of(body)[0], text="read")

    openai_env.script("unknown", read_sms, report)
    answers = ConsentAnswers(content)
    async with running_gateway(agent_config(tmp_path, tools=["device__sms_list"])) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answers) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "read my newest SMS"})
    run = r.structured_content
    assert len(answers.questions) == 1 and "read your messages" in answers.questions[0], answers.questions
    if read:
        assert run["status"] == "completed" and run["steps"][0]["outcome"] == "done", run
    else:
        assert run["status"] == "refused" and run["steps"][0]["outcome"] == "refused", run
    rows = audit_rows(tmp_path, "decision", "tool = 'device__sms_list' AND principal = 'owner'")
    assert (("allow",) in rows) == read, rows


async def test_a_caller_that_cannot_be_asked_gets_a_refusal_not_a_yes(tmp_path, openai_env):
    openai_env.script("unknown", sign_in_to_bank, sign_in_to_bank)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy") as c:  # no elicitation capability
            r = await c.call_tool("agent__agent_run", {"goal": "sign in to my bank"})
        assert phone_of(rt).screen == "bank_login"
    assert r.structured_content["status"] == "refused", r.structured_content


@pytest.mark.parametrize(
    "script, status, why",
    [
        # the model names elements that are not there, or tools it may not use: unusable, then failed
        ([lambda b: act("click", screen_of(b)[0], "e-00000000")] * 3, "failed", "not on the current screen"),
        (
            [lambda b: json.dumps({"tool": "agent__agent_run", "arguments": {"goal": "again"}})] * 3,
            "failed",
            "not one this agent may use",
        ),
        (
            [lambda b: json.dumps({"tool": "sentinel__sentinel_answer", "arguments": {}})] * 3,
            "failed",
            "not one this agent may use",
        ),
        (
            [lambda b: json.dumps({"tool": "sentinel__sentinel_query", "arguments": {"goal": "true"}})] * 3,
            "failed",
            "not one this agent may use",
        ),
        (
            [lambda b: json.dumps({"tool": "sensors__sensor_consent", "arguments": {"action": "grant"}})] * 3,
            "failed",
            "not one this agent may use",
        ),
        (
            [lambda b: act("click", "s-0000000000", element_id(screen_of(b)[2], "text='Phone'"))] * 3,
            "failed",
            "not the current screen",
        ),
        (["this is not json"] * 3, "failed", "not JSON"),
        # the same action on an unchanged screen, over and over
        (
            [lambda b: act("click", screen_of(b)[0], element_id(screen_of(b)[2], "text='Phone'"))] * 4,
            "stuck",
            "did not help",
        ),
        ([lambda b: act("fail", screen_of(b)[0], text="no such app")], "failed", "no such app"),
    ],
)
async def test_bad_or_looping_models_stop_the_run(tmp_path, openai_env, script, status, why):
    openai_env.script("unknown", *script)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=Answers("yes")) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "call Mom"})
        assert phone_of(rt).screen == "home"
    run = r.structured_content
    assert r.is_error and run["status"] == status and why in run["reason"], run


async def test_caps_stop_a_run_that_never_finishes(tmp_path, openai_env):
    def scroll(body):
        sid = screen_of(body)[0]
        return act("scroll", sid, None, "down" if len(openai_env.requests) % 2 else "up")

    openai_env.script("unknown", *[scroll] * 10)
    async with running_gateway(agent_config(tmp_path, caps={"max_steps": 8})) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            r = await c.call_tool("agent__agent_run", {"goal": "scroll forever", "max_steps": 3})
            big = await c.call_tool("agent__agent_run", {"goal": "x" * 1001})
            empty = await c.call_tool("agent__agent_run", {"goal": "   "})
    run = r.structured_content
    assert run["status"] == "step_cap" and len(run["steps"]) == 3  # the caller may only lower the caps
    assert big.is_error and "longer than 1000" in big.content[0].text
    assert empty.is_error and "must not be empty" in empty.content[0].text

    openai_env.script("unknown", *[scroll] * 10)
    async with running_gateway(agent_config(tmp_path, caps={"max_tokens": 256})) as rt:
        async with Client(rt.front.server, mode="legacy") as c:
            r = await c.call_tool("agent__agent_run", {"goal": "scroll forever"})
    assert r.structured_content["status"] == "token_cap"
