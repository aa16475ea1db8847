"""The phone's screen tools show an app holding personal data (Messages: its snippets, a one-time code) only
to a caller with the user's consent for that kind, as sms_list does: through the real gateway, in both
protocol eras, for the owner's own client and between two principals over HTTP. The attacks: every screen
tool (listing, element, action's fresh screen, screenshot, OCR, wait_for as an oracle), a caller naming the
consent itself (its own ``_meta``, odd spellings of ``personal``), another principal's consent and its
snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult, ImageContent

from device_tools.personal_apps import DEFAULT_PERSONAL_APPS, personal_apps
from device_tools.screen_privacy import ScreenPrivacy
from device_tools.element_registry import ElementRegistry
from device_tools.settings import load_settings
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.core.call_meta import CONSENTED_KEY, SESSION_KEY, consented_of
from sentinel_mcp.core.port import Completed
from sentinel_mcp.paths import RULEBASES_DIR
from tests.identity.identity_rig import ALICE, BOB, User, http_client, http_sentinel, text, write_config

pytestmark = pytest.mark.timeout(120)
MESSAGES = "com.google.android.apps.messaging"
SECRETS = ("See you at 7?", "482913", "Alice", "The invoice is attached", "Contact photo")


def config(tmp_path: Path, **device: Any) -> Any:
    return parse_config({"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "builtins": ["device"], "data_dir": str(tmp_path),
        "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}],
        "device": {"backend": "simulated", "risk_classifier": False, **device}}}, base_dir=tmp_path)


class Person:
    """Answers Sentinel's consent questions as told (``allow``, ``remember``) and the phone's own with yes."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.allow = False
        self.remember = False

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        self.asked.append(params.message)
        props = (params.requested_schema or {}).get("properties", {})
        if "allow" in props:
            content = {"allow": self.allow} | ({"remember": self.remember} if "remember" in props else {})
            return ElicitResult(action="accept", content=content)
        return ElicitResult(action="accept", content={k: True for k in props})


def everything(result: Any) -> str:
    """All a caller receives of a result: its texts, images, structured content and _meta."""
    return json.dumps([result.model_dump(mode="json", by_alias=True)], default=str)


def assert_withheld(result: Any, status: str | None = None) -> None:
    shown = everything(result)
    for secret in SECRETS:
        assert secret not in shown, (secret, shown[:600])
    assert not [c for c in result.content if isinstance(c, ImageContent)]
    withheld = result.structured_content["withheld"]
    assert withheld == {"kinds": ["messages"], "apps": [MESSAGES]}, withheld
    assert "snapshot_id" not in shown and '"e-' not in shown  # no digest of the texts, no element ids
    assert "personal=['messages']" in text(result)
    if status is not None:
        assert result.structured_content["status"] == status


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_the_owners_client_sees_messages_on_screen_only_with_its_consent(tmp_path, mode):
    person = Person()
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as c:
            home = await c.call_tool("device__screen_read", {})
            # the launcher's screen (the system's navigation bar drawn in it shows nothing) needs no consent
            assert not home.is_error and "withheld" not in home.structured_content, text(home)
            opened = await c.call_tool("device__open_app", {"package": MESSAGES})
            assert_withheld(opened, "done")  # the action was done; its fresh screen is not shown
            for name, args in [("device__screen_read", {}), ("device__screen_read", {"page": 2}),
                               ("device__screenshot", {}), ("device__screen_ocr", {}),
                               ("device__screen_ocr", {"x1": 0, "y1": 240, "x2": 1080, "y2": 900})]:
                assert_withheld(await c.call_tool(name, args))
            # wait_for is no oracle: a text on the withheld screen is not found, the same answer as a text
            # nowhere (and as soon: what the caller may not see is not searched)
            hit = await c.call_tool("device__wait_for", {"text": "482913", "timeout_s": 0.2})
            miss = await c.call_tool("device__wait_for", {"text": "no-such-text", "timeout_s": 0.2})
            assert_withheld(hit)
            assert hit.structured_content == miss.structured_content
            assert person.asked == []  # nothing was asked: the caller did not ask to see

            # asked, and the person says no: refused, nothing shown
            refused = await c.call_tool("device__screen_read", {"personal": ["messages"]})
            assert refused.is_error and "declined" in text(refused)
            assert not [s for s in SECRETS if s in everything(refused)]
            assert len(person.asked) == 1 and "read your messages" in person.asked[0]

            # yes, for this call only: this read shows them, the next does not
            person.allow = True
            shown = await c.call_tool("device__screen_read", {"personal": ["messages"]})
            assert not shown.is_error and "See you at 7?" in text(shown) and "482913" in text(shown)
            assert_withheld(await c.call_tool("device__screen_read", {}))

            # yes, remembered: every screen tool shows them from now on
            person.remember = True
            assert "See you" in text(await c.call_tool("device__screen_read", {"personal": ["messages"]}))
            asked = len(person.asked)
            assert "See you" in text(await c.call_tool("device__screen_read", {}))
            shot = await c.call_tool("device__screenshot", {})
            assert [x for x in shot.content if isinstance(x, ImageContent)] and not shot.is_error
            found = await c.call_tool("device__wait_for", {"text": "482913", "timeout_s": 0.2})
            assert not found.is_error and found.structured_content["found"], text(found)
            assert len(person.asked) == asked  # a standing consent is not asked again


@pytest.mark.parametrize("personal", [
    ["MESSAGES"], ["messages "], [" messages"], ["messages\u200b"], ["*"], ["all"], ["message"],
    [["messages"]], [{"kind": "messages"}], "messages", {"messages": True}, ["notifications"],
])
async def test_a_caller_cannot_name_its_own_consent(tmp_path, personal):
    """Odd spellings of ``personal`` ask for nothing it covers; the caller's own ``_meta`` says nothing."""
    person = Person()
    person.allow = person.remember = True  # were the person asked for messages, it would be granted
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            await c.call_tool("device__open_app", {"package": MESSAGES})
            odd = await c.call_tool("device__screen_read", {"personal": personal})
            assert not [s for s in SECRETS if s in everything(odd)], everything(odd)[:400]
            assert not [q for q in person.asked if "read your messages" in q]
            for claim in ("*", ["messages"], ["messages", "contacts"], None):
                claimed = await c.call_tool("device__screen_read", {}, meta={CONSENTED_KEY: claim,
                                                                            "sentinel/principal": "local"})
                assert_withheld(claimed)


async def test_calls_inside_sentinel_see_the_screen_and_a_consent_is_each_principals_own(tmp_path):
    async with running_gateway(config(tmp_path)) as rt:
        await rt.gateway.invoke("device__open_app", {"package": MESSAGES}, session_id="s1", origin="builtin")
        # the policy's own fetches and built-ins' internal calls: their results stay inside Sentinel
        inside = await rt.gateway.invoke("device__screen_read", {}, session_id="s1", origin="builtin")
        assert isinstance(inside, Completed) and "See you" in text(inside.result)
        rt.gateway.consent_gate.book.grant("alice", "messages", by="cli")
        for who, sees in (("alice", True), ("bob", False), ("owner", False)):
            read = await rt.gateway.invoke("device__screen_read", {}, session_id=f"s-{who}", origin="client",
                                           principal=who)
            assert isinstance(read, Completed), read
            assert ("See you" in text(read.result)) is sees, (who, text(read.result))


async def test_two_principals_over_http_each_with_its_own_consent(tmp_path):
    cfg = write_config(tmp_path, builtins=["sentinel", "device"],
                       rulebases=[str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
                       device={"backend": "simulated", "risk_classifier": False})
    with http_sentinel(cfg) as (base, _proc):
        alice_user = User(approve=True, remember=True)
        async with http_client(base, ALICE, "auto", alice_user) as alice:
            await alice.call_tool("device__open_app", {"package": MESSAGES})
            seen = await alice.call_tool("device__screen_read", {"personal": ["messages"]})
            assert "See you at 7?" in text(seen), text(seen)
            snapshot = seen.structured_content["snapshot_id"]
            elements = seen.structured_content["elements"]
            snippet = next(e["id"] for e in elements if e["text"] == "See you at 7?")
            assert any("read your messages" in q for q in alice_user.asked)
        bob_user = User(approve=False)
        async with http_client(base, BOB, "legacy", bob_user) as bob:
            # alice's consent is hers: bob is refused the screen, her snapshot's element, its OCR
            assert_withheld(await bob.call_tool("device__screen_read", {}))
            theirs = {"snapshot_id": snapshot, "element_id": snippet}
            assert_withheld(await bob.call_tool("device__element_info", theirs))
            assert_withheld(await bob.call_tool("device__screen_ocr", theirs))
            asked = await bob.call_tool("device__screen_read", {"personal": ["messages"]})
            assert asked.is_error and "declined" in text(asked) and "See you" not in everything(asked)
            assert any("read your messages" in q for q in bob_user.asked)  # bob's own person said no


async def test_no_action_on_what_the_caller_may_not_read(tmp_path):
    """Ids seen under a consent for one call act on nothing once it is spent: the device's question and
    result would name the element and the words around it (and acting blind helps no one)."""
    person = Person()
    person.allow = True
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            await c.call_tool("device__open_app", {"package": MESSAGES})
            once = await c.call_tool("device__screen_read", {"personal": ["messages"]})
            sid = once.structured_content["snapshot_id"]
            row = next(e for e in once.structured_content["elements"] if "Bank Alerts" in (e["hint"] or ""))
            asked = len(person.asked)
            for name, args in [
                ("device__click", {"element_id": row["id"], "snapshot_id": sid}),
                ("device__click", {"element_id": str(row["index"]), "snapshot_id": sid}),
                ("device__long_click", {"element_id": row["id"], "snapshot_id": sid}),
                ("device__scroll", {"direction": "down", "element_id": "x", "snapshot_id": sid}),
                ("device__swipe", {"x1": 540, "y1": 760, "x2": 100, "y2": 760}),
            ]:
                refused = await c.call_tool(name, args)
                shown = everything(refused)
                assert refused.is_error and not [s for s in SECRETS if s in shown], (name, shown[:500])
                if name != "device__scroll":  # (no element "x": refused before any screen is read)
                    assert refused.structured_content["withheld"]["kinds"] == ["messages"], shown[:500]
            assert len(person.asked) == asked  # no question named the element to this caller
            assert rt.manager.upstreams["device"].target.server.runtime.backend.screen == "messages_list"
            person.remember = True
            await c.call_tool("device__screen_read", {"personal": ["messages"]})
            opened = await c.call_tool("device__click", {"element_id": row["id"], "snapshot_id": sid})
            assert opened.structured_content["status"] == "done", text(opened)


async def test_the_config_names_more_personal_apps_and_takes_one_out(tmp_path):
    person = Person()
    person.allow = True
    apps = {"com.example.bank": "banking", MESSAGES: ""}
    async with running_gateway(config(tmp_path, personal_apps=apps)) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=person) as c:
            bank = await c.call_tool("device__open_app", {"package": "com.example.bank"})
            assert bank.structured_content["withheld"] == {"kinds": ["banking"], "apps": ["com.example.bank"]}
            shown = await c.call_tool("device__screen_read", {"personal": ["banking"]})
            assert "Sign in" in text(shown) and any("read your banking" in q for q in person.asked)
            await c.call_tool("device__open_app", {"package": MESSAGES})
            assert "See you at 7?" in text(await c.call_tool("device__screen_read", {}))


def test_which_apps_are_personal_and_what_counts_as_shown(tmp_path):
    apps = personal_apps({"com.example.bank": "banking", MESSAGES: ""})
    assert apps["com.example.bank"] == "banking" and MESSAGES not in apps
    assert apps["org.thoughtcrime.securesms"] == DEFAULT_PERSONAL_APPS["org.thoughtcrime.securesms"]
    privacy = ScreenPrivacy(personal_apps(None), ElementRegistry())
    allowed = frozenset({"contacts"})
    # an element shows its app only by what it says: the navigation bar's bare node shows no one's data
    bar = {"package": "com.android.systemui", "text": "", "desc": "", "hint": ""}
    shade = {"package": "com.android.systemui", "text": "Bank: your code is 482913", "desc": "", "hint": ""}
    assert privacy.hidden_in(privacy.packages_of({"elements": [bar]}), allowed) == {}
    assert privacy.hidden_in(privacy.packages_of({"x": [{"y": [shade]}]}), allowed) == {
        "notifications": ["com.android.systemui"]}
    assert privacy.hidden_in(privacy.packages_of({"package": MESSAGES}), allowed) == {"messages": [MESSAGES]}
    assert privacy.hidden_in([MESSAGES], None) == {}
    assert privacy.visible(MESSAGES, "", frozenset({"messages"}))


@pytest.mark.parametrize("apps, says", [
    ({"not a package": "messages"}, "not an Android package name"),
    ({"com.example.chat": "Messages!"}, "must be lowercase"),
    ({"com.example.chat": 3}, "string"),
    ("com.example.chat", "dictionary"),
])
def test_a_bad_personal_apps_setting_names_the_key(apps, says):
    with pytest.raises(ConfigError, match=r"sentinel\.device\.personal_apps") as err:
        load_settings({"personal_apps": apps})
    assert says in str(err.value)


@pytest.mark.parametrize("value, kinds", [
    ("*", None), (["messages"], ["messages"]), ([], []), ("messages", []), ([1], []), (None, []),
    ({"messages": True}, []), (["messages", 2], []),
])
def test_the_consents_a_built_in_reads_fail_closed(value, kinds):
    class Ctx:
        meta = {SESSION_KEY: "s", CONSENTED_KEY: value}

    assert consented_of(Ctx()) == kinds
