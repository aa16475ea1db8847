"""A password the agent typed into a password field goes nowhere else: not into a plain field of the same app
(where it shows in clear, and a chat app sends it), not into a field of another app, not into a tool's
arguments (a search the contacts provider logs). The trace redacts it everywhere
(test_typed_password_redacted), but the phone received it; now such a step is an unusable decision, never
acted on. Real gateway, simulated phone (its bank's login screen), scripted model behind real HTTP."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.phone_policies import act, element_id, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of
from tests.agent.test_typed_password_redacted import say_yes

from sentinel_mcp.agent.decision import Decision
from sentinel_mcp.agent.decision import UnusableDecision
from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.agent.typed_secrets import TypedSecrets
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "Hunter2-Secret"


def into_username(text):
    def step(sid, lines):
        return act("type", sid, element_id(lines, "res=username"), text, why="the user name")
    return step


def tool(name, arguments):
    def step(sid, lines):
        return json.dumps({"tool": name, "snapshot_id": sid, "arguments": arguments})
    return step


MISPLACED = {
    "plain field": into_username(SECRET),
    "plain field, other case": into_username(SECRET.lower()),
    "plain field, inside a text": into_username(f"alice {SECRET.upper()} x"),
    "tool argument": tool("device__contacts_search", {"query": SECRET}),
    "tool argument, other case": tool("device__contacts_search", {"query": SECRET.lower()}),
    "wait for it": lambda sid, lines: act("wait_for", sid, text=SECRET),
}


@pytest.mark.parametrize("misplaced", list(MISPLACED))
async def test_a_typed_password_is_not_acted_on_anywhere_else(tmp_path, openai_env, misplaced):
    typed: list[str] = []

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
        typed.append(app)
        if len(typed) == 1:
            return act("type", sid, element_id(lines, "password"), SECRET, why="the password")
        if len(typed) == 2:
            return MISPLACED[misplaced](sid, lines)
        return act("done", sid, text="signed in")

    openai_env.script("unknown", policy, policy, policy, policy)
    goal = f"open my bank, sign in as alice with the password {SECRET}"
    async with running_gateway(agent_config(tmp_path)) as rt:
        rt.gateway.consent_gate.book.grant("owner", "contacts", by="cli")  # the search may run: not with it
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": goal})
        phone = phone_of(rt)
        run = r.structured_content
        sent = [" ".join(cmd) for cmd in phone.commands]
        username = phone.field_text("username")
    assert run["status"] == "completed", run["reason"]
    assert [s["outcome"] for s in run["steps"]] == ["done", "done", "unusable", "done"], run["steps"]
    assert "password" in run["steps"][2]["detail"]
    assert SECRET.lower() not in username.lower()
    # the phone received it once: typed into the bank's password field
    assert len([c for c in sent if SECRET.lower() in c.lower()]) == 1, sent


def screen(package: str) -> Screen:
    elements = [  # drawn in the app's own window (test_typed_password_window: another app's)
        {"id": "e-pw", "index": 1, "class": "EditText", "flags": ["editable", "password"], "window": package},
        {"id": "e-user", "index": 2, "class": "EditText", "flags": ["editable"], "window": package},
    ]
    found = Screen.from_result({"snapshot_id": "s-1", "package": package, "elements": elements})
    assert found is not None
    return found


def typing(element: str, text: str) -> Decision:
    return Decision(action="type", snapshot_id="s-1", element_id=element, text=text)


def test_a_typed_password_goes_only_into_a_password_field_of_its_app():
    secrets = TypedSecrets()
    bank, other = screen("com.example.bank"), screen("com.evil.lookalike")
    assert secrets.placed(typing("e-user", SECRET), bank)  # nothing typed yet: nothing known
    assert secrets.add(SECRET, bank.package)
    assert secrets.placed(typing("e-pw", SECRET), bank)  # again, into its app's password field
    assert secrets.placed(typing("e-user", "alice"), bank)
    assert secrets.placed(Decision(action="done", text=f"typed {SECRET}"), bank)  # the answer is redacted
    for decision, where in [
        (typing("e-pw", SECRET), other),  # another app's password field
        (typing("e-pw", f"{SECRET}!"), other),
        (typing("e-user", SECRET.swapcase()), bank),
        (Decision(action="open_app", text=SECRET), bank),
        (Decision(action="tool", tool="x__y", arguments={"a": [{"b": SECRET}]}), bank),
        (Decision(action="tool", tool="x__y", arguments={SECRET: 1}), bank),
        (Decision(action="tool", tool="x__y", arguments={"a": f"..{SECRET.upper()}.."}), bank),
    ]:
        with pytest.raises(UnusableDecision) as refused:
            secrets.placed(decision, where)
        assert SECRET.lower() not in str(refused.value).lower()
