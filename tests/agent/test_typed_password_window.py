"""A password the agent typed goes again only into a password field drawn in the window of the app it was
typed into. Which app a field belongs to was the screen's ``package``: the package most of its nodes claim,
the apps' own word (a view inflated with another app's context, a virtual node, claims any package). A
look-alike window drawn over the bank, its nodes outnumbered by the bank's or claiming the bank's package,
got the bank's password typed into it: the screen still read as the bank's. The device names the window each
element is drawn in (the top node of its tree); a typed password is placed by that. Real gateway, simulated
phone (its bank's login screen, plus a second window), scripted model behind real HTTP."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from mcp import Client
from tests.agent.phone_policies import act, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of
from tests.agent.test_typed_password_redacted import say_yes

from sentinel_mcp.agent.decision import Decision, UnusableDecision
from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.agent.typed_secrets import TypedSecrets
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "Hunter2-Secret"
BANK = "com.example.bank"
EVIL = "com.evil.lookalike"
FIELD = ('<node index="{i}" text="" resource-id="{rid}" class="android.widget.EditText" package="{pkg}" '
         'content-desc="" checkable="false" checked="false" clickable="true" enabled="true" '
         'focusable="true" focused="false" scrollable="false" long-clickable="true" password="true" '
         'selected="false" bounds="{bounds}" />')


def second_window(node_package: str) -> ET.Element:
    """A look-alike's window below the bank's form: its root names it (``EVIL``); its password field claims
    ``node_package``."""
    window = ET.fromstring(
        f'<node index="1" text="" resource-id="" class="android.widget.FrameLayout" package="{EVIL}" '
        'content-desc="" checkable="false" checked="false" clickable="false" enabled="true" '
        'focusable="false" focused="false" scrollable="false" long-clickable="false" password="false" '
        'selected="false" bounds="[0,1500][1080,2400]" />')
    window.append(ET.fromstring(FIELD.format(i=0, rid="com.example.bank:id/pin", pkg=node_package,
                                             bounds="[90,1700][990,1840]")))
    return window


def line_of(lines: list[str], needle: str) -> str:
    return next(ln.split()[0] for ln in lines if needle in ln)


@pytest.mark.parametrize("node_package", [BANK, EVIL])
async def test_a_typed_password_is_not_typed_into_another_apps_window(tmp_path, openai_env, node_package):
    typed: list[str] = []
    overlays: list[dict] = []
    shown: list[str] = []  # the two password fields' lines in the model's listing

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, line_of(lines, "text='Bank'"), why="open the bank")
        typed.append(app)
        if len(typed) == 1:  # Android lists the look-alike's window over the bank's, where it is drawn
            overlays.append({"package": EVIL, "bounds": (0, 1500, 1080, 2400), "touchable": True,
                             "dumped": True})
            return act("type", sid, line_of(lines, "res=password"), SECRET, why="the password")
        if len(typed) == 2:  # the look-alike's field asks for it "again"
            shown.extend(ln for ln in lines if ",password" in ln)
            return act("type", sid, line_of(lines, "res=pin"), SECRET, why="confirm the password")
        return act("done", sid, text="signed in")

    openai_env.script("unknown", policy, policy, policy, policy)
    goal = f"open my bank, sign in with the password {SECRET}"
    async with running_gateway(agent_config(tmp_path)) as rt:
        phone = phone_of(rt)
        overlays = phone.overlays
        phone._trees["bank_login"].append(second_window(node_package))
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": goal})
        sent = [" ".join(cmd) for cmd in phone.commands]
    run = r.structured_content
    assert [s["outcome"] for s in run["steps"]][:3] == ["done", "done", "unusable"], run["steps"]
    assert "password" in run["steps"][2]["detail"]
    # the model is told which field is drawn by another app than the screen's
    assert [("in-app=" + EVIL) in ln for ln in shown] == [False, True], shown
    assert "res=pin" in shown[1]
    # the phone received it once: typed into the bank's own password field
    assert len([c for c in sent if SECRET.lower() in c.lower()]) == 1, sent


def screen(elements: list[dict], package: str = BANK) -> Screen:
    found = Screen.from_result({"snapshot_id": "s-1", "package": package, "elements": elements})
    assert found is not None
    return found


def field(eid: str, **more) -> dict:
    return {"id": eid, "index": int(eid[-1]), "class": "EditText", "flags": ["editable", "password"]} | more


def typing(element: str) -> Decision:
    return Decision(action="type", snapshot_id="s-1", element_id=element, text=SECRET)


def test_a_password_is_placed_by_the_window_its_field_is_drawn_in():
    secrets = TypedSecrets()
    first = screen([field("e-1", window=BANK, package=BANK)])
    assert secrets.add(SECRET, first.window_of("e-1"))
    assert secrets.placed(typing("e-1"), first)
    hostile = [
        # the look-alike's window, the field claiming the bank, the screen's majority the bank's
        screen([field("e-1", window=BANK), field("e-2", window=EVIL, package=BANK)]),
        screen([field("e-1", window=BANK), field("e-2", window=EVIL, package=EVIL)]),
        # no window named: whose field it is is not known
        screen([field("e-1", window=BANK), field("e-2", package=BANK)]),
        screen([field("e-1", window=BANK), field("e-2", window=7, package=BANK)]),
    ]
    for where in hostile:
        with pytest.raises(UnusableDecision):
            secrets.placed(typing("e-2"), where)
        assert secrets.placed(typing("e-1"), where)  # the bank's own field, beside it


def test_a_password_first_typed_into_an_unnamed_window_goes_nowhere_else():
    secrets = TypedSecrets()
    unnamed = screen([field("e-1", package=BANK), field("e-2", window=BANK)])
    assert secrets.add(SECRET, unnamed.window_of("e-1"))
    with pytest.raises(UnusableDecision):  # nobody knows which app it went to: no app is its own
        secrets.placed(typing("e-2"), unnamed)
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-1"), unnamed)
