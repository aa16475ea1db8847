"""A password the run typed is not handed back to the model by the screen: an app that shows what was typed
into its password field ("You typed: Hunter2-Secret", or spelled apart) put it into every later prompt's
screen listing, and so into what a remote model's provider keeps. The goal the caller wrote still holds it
(the model may need to type it again); the context (screens, steps, results) no longer does. Real gateway,
simulated phone, scripted model behind real HTTP."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from mcp import Client
from tests.agent.phone_policies import act, element_id, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of
from tests.agent.test_typed_password_redacted import say_yes

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "Hunter2-Secret"
ECHOES = {"as typed": f"You typed: {SECRET}", "spaced": "You typed: " + " ".join(SECRET)}


def echo(text: str) -> ET.Element:
    return ET.fromstring(
        f'<node index="9" text="{text}" resource-id="com.example.bank:id/echo" '
        'class="android.widget.TextView" package="com.example.bank" content-desc="" checkable="false" '
        'checked="false" clickable="false" '
        'enabled="true" focusable="false" focused="false" scrollable="false" long-clickable="false" '
        'password="false" selected="false" bounds="[90,1400][990,1480]" />')


@pytest.mark.parametrize("shown", list(ECHOES))
async def test_a_typed_password_the_screen_shows_back_is_not_in_the_next_prompt(tmp_path, openai_env, shown):
    typed: list[str] = []
    forms: list[ET.Element] = []

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
        typed.append(app)
        if len(typed) == 1:  # the app will show what is typed into its password field
            forms[0].append(echo(ECHOES[shown]))
            return act("type", sid, element_id(lines, "password"), SECRET, why="the password")
        return act("done", sid, text="signed in")

    openai_env.script("unknown", policy, policy, policy)
    async with running_gateway(agent_config(tmp_path)) as rt:
        forms.append(phone_of(rt)._trees["bank_login"][0][0])
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": f"open my bank, sign in with {SECRET}"})
    assert r.structured_content["status"] == "completed", r.structured_content["reason"]
    last = next(m["content"] for m in openai_env.calls()[-1]["body"]["messages"] if m["role"] == "user")
    context, prompt = last.split("Goal: ", 1)
    assert "You typed: " in context and "redacted password" in context  # the echo, without the password
    assert SECRET not in context and ECHOES[shown] not in context, context
    assert SECRET in prompt  # the caller's goal, as written
