"""End to end on the simulated phone through the MCP server with the real mcp.Client (both eras)."""

from __future__ import annotations

import json

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id

pytestmark = pytest.mark.timeout(60)
MODES = ["legacy", "auto"]


@pytest.mark.parametrize("mode", MODES)
async def test_read_open_type_send_asks_and_only_then_sends(tmp_path, mode):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    answers = Answers("yes")
    async with connect(server, mode, answers) as client:
        home = await client.call_tool("screen_read", {})
        assert "snapshot s-" in home.content[0].text and not home.is_error
        listed = await client.call_tool(
            "click", {"element_id": element(home, text="Messages")["id"], "snapshot_id": snapshot_id(home)}
        )
        convo = await client.call_tool(
            "click", {"element_id": element(listed, text="Alice")["id"], "snapshot_id": snapshot_id(listed)}
        )
        assert element(convo, resource_id="conversation_title")["text"] == "Alice"
        field = element(convo, resource_id="compose_message_text")
        typed = await client.call_tool(
            "type_text",
            {"element_id": field["id"], "snapshot_id": snapshot_id(convo), "text": "Running 10 min late"},
        )
        assert element(typed, resource_id="compose_message_text")["text"] == "Running 10 min late"
        assert answers.questions == [] and phone.sent_messages == []  # nothing risky yet, nothing asked
        sent = await client.call_tool(
            "click", {"element_id": element(typed, desc="Send SMS")["id"], "snapshot_id": snapshot_id(typed)}
        )
    assert not sent.is_error, sent.content[0].text
    assert (
        len(answers.questions) == 1
        and "Send SMS" in answers.questions[0]
        and "Risk high" in answers.questions[0]
    )
    assert [(m.to, m.body) for m in phone.sent_messages] == [("+15550100", "Running 10 min late")]
    decision = sent.structured_content["decision"]
    assert decision["decided_by"] == "user:elicitation" and decision["provenance"] == "user"
    assert sent.meta["sentinel/device-decision"]["digest"] == decision["digest"]
    logged = [json.loads(line) for line in (tmp_path / "decisions.jsonl").read_text().splitlines()]
    assert logged[-1]["outcome"] == "allowed" and logged[-1]["confirmation"] == "elicitation"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("answer", ["no", "cancel"])
async def test_declined_or_cancelled_confirmation_sends_nothing(tmp_path, mode, answer):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server, mode, Answers(answer)) as client:
        r = await client.call_tool("sms_send", {"to": "+1 555 0100", "body": "hi"})
    assert r.is_error and "Nothing was sent" in r.content[0].text
    assert phone.sent_messages == []
    assert not any(c[:2] == ["am", "start"] or c[:2] == ["input", "tap"] for c in phone.commands)


@pytest.mark.parametrize("mode", MODES)
async def test_stale_snapshot_is_refused_with_fresh_view(tmp_path, mode):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server, mode) as client:
        home = await client.call_tool("screen_read", {})
        messages_icon = element(home, text="Messages")
        await client.call_tool("open_app", {"package": "com.android.settings"})
        taps_before = [c for c in phone.commands if c[:2] == ["input", "tap"]]
        r = await client.call_tool(
            "click", {"element_id": messages_icon["id"], "snapshot_id": snapshot_id(home)}
        )
        unknown = await client.call_tool(
            "click", {"element_id": "e-00000000", "snapshot_id": snapshot_id(home)}
        )
        no_snap = await client.call_tool(
            "click", {"element_id": messages_icon["id"], "snapshot_id": "s-nope"}
        )
    assert r.is_error and r.structured_content["status"] == "stale"
    assert "no longer on the screen" in r.content[0].text
    assert r.structured_content["screen"]["package"] == "com.android.settings"  # the fresh view
    assert [c for c in phone.commands if c[:2] == ["input", "tap"]] == taps_before
    assert unknown.is_error and "no element" in unknown.content[0].text
    assert no_snap.is_error and "unknown snapshot" in no_snap.content[0].text


async def test_changed_element_is_stale(tmp_path):
    server = sim_server(tmp_path)
    async with connect(server, "legacy", Answers("yes")) as client:
        settings = await client.call_tool("open_app", {"package": "com.android.settings"})
        wifi = element(settings, resource_id="switch_widget")
        first = await client.call_tool(
            "click", {"element_id": wifi["id"], "snapshot_id": snapshot_id(settings)}
        )
        again = await client.call_tool(
            "click", {"element_id": wifi["id"], "snapshot_id": snapshot_id(settings)}
        )
    assert not first.is_error, first.content[0].text
    assert again.is_error and "changed since snapshot" in again.content[0].text  # checked flipped


@pytest.mark.parametrize("mode", MODES)
async def test_password_field_needs_confirmation_and_is_never_echoed(tmp_path, mode):
    server = sim_server(tmp_path)
    answers = Answers("yes")  # opening a banking app is navigation: only the password is asked
    async with connect(server, mode, answers) as client:
        login = await client.call_tool("open_app", {"package": "com.example.bank"})
        pw = element(login, resource_id="password")
        r = await client.call_tool(
            "type_text", {"element_id": pw["id"], "snapshot_id": snapshot_id(login), "text": "hunter2"}
        )
    assert not r.is_error, r.content[0].text
    assert len(answers.questions) == 1
    assert answers.questions[0].startswith(
        "Risk critical: Type a password (7 characters) into password in Bank? ("
    )
    assert not any("hunter2" in q for q in answers.questions)
    assert (
        "hunter2" not in json.dumps(r.structured_content)
        and "hunter2" not in (tmp_path / "decisions.jsonl").read_text()
    )
    assert element(r, resource_id="password")["text"] == "•••••••"


async def test_navigation_and_scroll_are_low_risk(tmp_path):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server, "legacy") as client:  # no elicitation: low-risk actions must not need it
        await client.call_tool("open_app", {"package": "com.google.android.apps.messaging"})
        scrolled = await client.call_tool("scroll", {"direction": "down"})
        back = await client.call_tool("press_home", {})
        recents = await client.call_tool("show_recents", {})
        bad = await client.call_tool("open_app", {"package": "not a package; reboot"})
    assert not scrolled.is_error and not back.is_error and not recents.is_error
    assert phone.screen == "home" and phone.recents_shown == 1
    assert ["input", "swipe", "540", "1920", "540", "480", "300"] in phone.commands
    assert bad.is_error and "not an Android package name" in bad.content[0].text


async def test_wait_for_and_malformed_arguments(tmp_path):
    server = sim_server(tmp_path)
    async with connect(server, "legacy") as client:
        found = await client.call_tool("wait_for", {"text": "Settings", "timeout_s": 0})
        missing = await client.call_tool("wait_for", {"text": "Nope", "timeout_s": 0})
        bad_type = await client.call_tool("click", {"element_id": 7})
        bad_page = await client.call_tool("screen_read", {"page": "two"})
        still_ok = await client.call_tool("screen_read", {"page": 99})
    assert not found.is_error and found.structured_content["found"][0]["text"] == "Settings"
    assert missing.is_error and "Nope" in missing.content[0].text
    assert bad_type.is_error and bad_page.is_error
    assert not still_ok.is_error and still_ok.structured_content["page"] == 1


async def test_tool_modules_on_the_simulated_phone(tmp_path):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server, "auto", Answers("yes", "yes", "yes")) as client:
        inbox = await client.call_tool("sms_list", {"query": "code"})
        guessing = await client.call_tool("sms_list", {"query": "4829"})  # a masked code cannot be probed
        revealed = await client.call_tool("sms_list", {"query": "code", "reveal_codes": True})
        contacts = await client.call_tool("contacts_search", {"query": "ali"})
        created = await client.call_tool("contact_create", {"name": "Carol", "phone": "+1 555 0123"})
        found = await client.call_tool("contacts_search", {"query": "0123"})
        alarm = await client.call_tool(
            "alarm_set", {"hour": 7, "minute": 5, "label": "Gym", "days": ["mon", "thu"]}
        )
        timer = await client.call_tool("timer_set", {"seconds": 300})
        bad_alarm = await client.call_tool("alarm_set", {"hour": 25, "minute": 0})
        note = await client.call_tool(
            "notes_add", {"title": "Groceries", "body": "milk, 100% juice", "tags": ["home"]}
        )
        search = await client.call_tool("notes_search", {"query": "100%"})
        deleted = await client.call_tool("notes_delete", {"note_id": note.structured_content["id"]})
        gone = await client.call_tool("notes_delete", {"note_id": note.structured_content["id"]})
        prop = await client.call_tool("terminal_run", {"command": "getprop", "args": ["ro.product.model"]})
        cat = await client.call_tool("terminal_run", {"command": "cat", "args": ["/proc/version"]})
        sent = await client.call_tool("sms_send", {"to": "Alice", "body": "Tschüss 👋"})
        sent_box = await client.call_tool("sms_list", {"box": "sent"})
    assert [m["body"] for m in inbox.structured_content["messages"]] == ["Your one-time code is ••••••"]
    assert inbox.structured_content["codes_masked"] == 1 and "482913" not in inbox.content[0].text
    assert inbox.meta["sentinel/untrusted"] == "SMS messages"
    assert guessing.structured_content["messages"] == []
    assert [m["body"] for m in revealed.structured_content["messages"]] == ["Your one-time code is 482913"]
    assert contacts.structured_content["contacts"] == [{"id": "1", "name": "Alice", "phone": "+15550100"}]
    assert not created.is_error and found.structured_content["contacts"][0]["name"] == "Carol"
    assert phone.alarms[1:] == [
        {"HOUR": "7", "MINUTES": "5", "SKIP_UI": "true", "MESSAGE": "Gym", "DAYS": "2,5"}
    ]
    assert phone.timers == [{"LENGTH": "300", "SKIP_UI": "true"}]
    assert not alarm.is_error and not timer.is_error and bad_alarm.is_error
    assert [n["title"] for n in search.structured_content["notes"]] == ["Groceries"]
    assert not deleted.is_error and gone.is_error
    assert prop.structured_content["message"].strip() == "Sentinel Simulated Phone"
    assert (
        not cat.is_error and cat.structured_content["decision"]["confirmation"] == "elicitation"
    )  # cat: medium
    # Unicode goes through the SENDTO intent extra, not through `input text`.
    assert not sent.is_error and phone.sent_messages[-1].body == "Tschüss 👋"
    assert sent_box.structured_content["messages"][0]["body"] == "Tschüss 👋"


async def test_an_elicitation_answer_that_never_comes_denies(tmp_path):
    import anyio
    from mcp import Client

    server = sim_server(tmp_path, confirm_timeout=0.5)
    phone = server.runtime.backend

    async def never(context, params):
        await anyio.sleep_forever()

    async with Client(server, mode="legacy", elicitation_callback=never) as client:
        r = await client.call_tool("sms_send", {"to": "+15550100", "body": "hello?"})
    assert r.is_error and "no answer within 0.5s" in r.content[0].text
    assert phone.sent_messages == [] and not any(c[:2] == ["am", "start"] for c in phone.commands)


async def test_rows_are_judged_by_the_labels_inside_them(tmp_path):
    server = sim_server(tmp_path)
    answers = Answers("no")
    async with connect(server, "legacy", answers) as client:
        settings = await client.call_tool("open_app", {"package": "com.android.settings"})
        row = element(settings, hint="Reset options")
        r = await client.call_tool("click", {"element_id": row["id"], "snapshot_id": snapshot_id(settings)})
        messages = await client.call_tool("open_app", {"package": "com.google.android.apps.messaging"})
        bank_row = element(messages, hint="Bank Alerts")
        opened = await client.call_tool(
            "click", {"element_id": bank_row["id"], "snapshot_id": snapshot_id(messages)}
        )
    assert r.is_error and "reset" in answers.questions[0].lower()  # the row's own labels are read
    assert "contains='Reset options" in settings.content[0].text
    assert not opened.is_error and len(answers.questions) == 1  # a preview showing a code is not a code entry


async def test_clear_text_and_long_click(tmp_path):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server, "auto") as client:
        listed = await client.call_tool("open_app", {"package": "com.google.android.apps.messaging"})
        row = element(listed, resource_id="swipeableContainer", hint="Alice")
        pressed = await client.call_tool(
            "long_click", {"element_id": row["id"], "snapshot_id": snapshot_id(listed)}
        )
        convo = await client.call_tool(
            "click", {"element_id": row["id"], "snapshot_id": snapshot_id(pressed)}
        )
        field = element(convo, resource_id="compose_message_text")
        typed = await client.call_tool(
            "type_text", {"element_id": field["id"], "snapshot_id": snapshot_id(convo), "text": "typo"}
        )
        cleared = await client.call_tool(
            "clear_text", {"element_id": field["id"], "snapshot_id": snapshot_id(typed)}
        )
        not_a_field = await client.call_tool(
            "clear_text",
            {"element_id": element(cleared, desc="Call")["id"], "snapshot_id": snapshot_id(cleared)},
        )
    assert not pressed.is_error and ["input", "swipe", "540", "360", "540", "360", "800"] in phone.commands
    assert not cleared.is_error and element(cleared, resource_id="compose_message_text")["text"] == ""
    assert ["input", "keyevent", "KEYCODE_MOVE_END"] in phone.commands
    assert ["input", "keyevent", *["KEYCODE_DEL"] * 4] in phone.commands
    assert not_a_field.is_error and "not a text field" in not_a_field.content[0].text


async def test_opening_an_app_that_is_not_installed_is_an_error_not_done(tmp_path):
    async with connect(sim_server(tmp_path)) as client:
        r = await client.call_tool("open_app", {"package": "com.example.nothere"})
        ok = await client.call_tool("open_app", {"package": "com.android.settings"})
    assert r.is_error and "no app 'com.example.nothere'" in r.content[0].text
    assert not ok.is_error and ok.structured_content["screen"]["package"] == "com.android.settings"


async def _transfer_screen(client):
    home = await client.call_tool("screen_read", {})
    bank = await client.call_tool("click", {"element_id": element(home, text="Bank")["id"],
                                            "snapshot_id": snapshot_id(home)})
    return await client.call_tool("click", {"element_id": element(bank, resource_id="sign_in")["id"],
                                            "snapshot_id": snapshot_id(bank)})


@pytest.mark.parametrize("how", ["stationary", "tiny", "drag from the button", "drag onto the button",
                                 "scroll on the button"])
async def test_a_swipe_on_a_risky_button_is_judged_as_pressing_it(tmp_path, how):
    """``swipe`` takes raw coordinates: a stationary or tiny one is a tap or a long press (refused: use
    click/long_click), and one that lands on or lifts from an element that acts is judged as acting on it
    (the user is asked; "no" sends nothing). ``scroll`` on an element that does not scroll is refused."""
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    answers = Answers("yes", "no")  # yes: signing in; no: the swipe over "Transfer now"
    async with connect(server, "legacy", answers) as client:
        screen = await _transfer_screen(client)
        button = element(screen, resource_id="confirm_transfer")
        x1, y1, x2, y2 = button["bounds"]
        cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
        sent = len(phone.commands)
        asked = len(answers.questions)
        if how == "scroll on the button":
            r = await client.call_tool("scroll", {"direction": "left", "element_id": button["id"],
                                                  "snapshot_id": snapshot_id(screen)})
            assert r.is_error and "does not scroll" in r.content[0].text
        else:
            start, end = {
                "stationary": ((cx, cy), (cx, cy)),
                "tiny": ((cx, cy), (cx + 20, cy + 10)),
                "drag from the button": ((cx, cy), (cx, max(0, cy - 400))),
                "drag onto the button": ((cx, max(0, cy - 400)), (cx, cy)),
            }[how]
            r = await client.call_tool("swipe", {"x1": start[0], "y1": start[1], "x2": end[0], "y2": end[1],
                                                 "duration_ms": 50})
            if how in ("stationary", "tiny"):
                assert r.is_error and "tap or a long press" in r.content[0].text
            else:
                assert len(answers.questions) == asked + 1, answers.questions  # asked about this swipe
                assert r.structured_content["decision"]["assessment"]["requires_confirmation"]
                assert "not done" in r.content[0].text
        assert not [c for c in phone.commands[sent:] if c[:2] == ["input", "swipe"]], phone.commands[sent:]
