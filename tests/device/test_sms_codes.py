"""No SMS forwards a one-time code the phone received, however it is spelled.

The phone's inbox holds "Your one-time code is 482913" (the simulated phone's seed). The rulebase (device.pl)
refuses a body that speaks of a code with a 4-8 digit run, and a bare 4-8 digit body; a rephrasing ("Here it
is: 482913", "482-913", "c0de 482913") got past it and was only asked as any SMS. sms_send now reads the
newest inbox messages' codes (the digits sms_list masks) and refuses a body that holds one in any spelling:
separators, digit words, look-alike letters, other scripts' digits. The check runs after the person's yes
(before anything is sent), so a caller who cannot read the messages learns nothing from a refusal: without an
answer every body is denied alike."""

from __future__ import annotations

import shlex
import time

import pytest
from tests.device.device_helpers import Answers, adb_server, connect, sim_server
from tests.device.test_through_gateway import device_config
from mcp import Client

from device_tools import commands as C
from device_tools.modules.messaging import PROJECTION
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
CODE = "482913"
SPELLINGS = [
    "482913", "Here it is: 482913", "482-913", "482 913", "4 8 2 9 1 3", "4-8-2-9-1-3", "482.913", "482_913",
    "482/913", "c0de 482913", "the thing you asked for: 482, then 913", "four eight two nine one three",
    "Four-Eight-Two Nine-One-Three", "48two913", "4B2913", "48z9l3", "4x8x2x9x1x3", "４８２９１３",
    "٤٨٢٩١٣", "①482913", "(482)913", "482913!!", "pls enter 482913 quickly", "\u200b482\u200b913",
]
LEGIT = ["running late", "See you at 7", "Room 48, 2 beds", "call me on +15550100", "the invoice is 4829",
         "913 Main St", "I owe you 48.29"]


def acted(phone) -> list[list[str]]:
    return [c for c in phone.commands if c[:2] in (["am", "start"], ["input", "tap"])]


@pytest.mark.parametrize("body", SPELLINGS)
async def test_a_received_code_is_never_sent_in_any_spelling(tmp_path, body):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    answers = Answers("yes")
    async with connect(server, "legacy", answers) as c:
        r = await c.call_tool("sms_send", {"to": "+15550666", "body": body})
    text = r.content[0].text
    assert r.is_error and "one-time code" in text and "Nothing was sent" in text, text
    assert acted(phone) == [] and phone.sent_messages == []
    assert CODE not in text.replace(body, "")  # the refusal does not say which code


@pytest.mark.parametrize("body", LEGIT)
async def test_other_messages_are_sent(tmp_path, body):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    async with connect(server, "legacy", Answers("yes")) as c:
        r = await c.call_tool("sms_send", {"to": "+15550100", "body": body})
    assert not r.is_error, r.content[0].text
    assert [m.body for m in phone.sent_messages] == [body]


async def test_a_code_that_just_came_in_counts_and_a_new_spelling_of_it_too(tmp_path):
    server = sim_server(tmp_path)
    phone = server.runtime.backend
    phone.tables["content://sms/inbox"].append({
        "_id": "9", "address": "22000", "body": "G-730 551 is your Google verification code.",
        "date": str(int(time.time() * 1000)), "read": "0"})
    async with connect(server, "legacy", Answers("yes", "yes", "yes")) as c:
        spaced = await c.call_tool("sms_send", {"to": "+15550666", "body": "730 551"})
        worded = await c.call_tool("sms_send", {"to": "+15550666", "body": "seven three zero, five five one"})
        other = await c.call_tool("sms_send", {"to": "+15550666", "body": "731 551"})
    assert spaced.is_error and worded.is_error
    assert not other.is_error, other.content[0].text
    assert [m.body for m in phone.sent_messages] == ["731 551"]


async def test_a_caller_without_an_answer_learns_nothing_from_guessing(tmp_path):
    """No one answers: a guess that is the code and one that is not end alike (asked, denied), and the phone
    was not even read for codes."""
    server = sim_server(tmp_path, confirm_timeout=0.3)
    phone = server.runtime.backend
    async with Client(server, mode="legacy") as c:  # cannot be asked
        right = await c.call_tool("sms_send", {"to": "+15550666", "body": "4 8 2 9 1 3"})
        wrong = await c.call_tool("sms_send", {"to": "+15550666", "body": "1 1 1 2 2 2"})
    assert right.is_error and wrong.is_error
    assert right.content[0].text == wrong.content[0].text
    assert right.structured_content["decision"]["outcome"] == wrong.structured_content["decision"]["outcome"]
    assert not any(c[:4] == ["content", "query", "--uri", "content://sms/inbox"] for c in phone.commands)


async def test_a_code_spoken_of_in_disguise_is_refused_before_any_question(tmp_path):
    server = sim_server(tmp_path)
    answers = Answers("yes")
    async with connect(server, "legacy", answers) as c:
        for body in ["c0de 551177", "y0ur 0TP: 551177", "v3rification 551.177", "Your code is 5511 77"]:
            r = await c.call_tool("sms_send", {"to": "+15550666", "body": body})
            assert r.is_error and "one-time code" in r.content[0].text, body
    assert answers.questions == [] and server.runtime.backend.sent_messages == []


async def test_an_inbox_that_cannot_be_read_refuses_the_send(fake_adb, tmp_path):
    inbox = shlex.join(C.content_query("content://sms/inbox", PROJECTION, sort="date DESC"))
    fake_adb.script[inbox].append(b"Error while accessing provider:sms\n")
    async with connect(adb_server(fake_adb, tmp_path), "legacy", Answers("yes")) as c:
        r = await c.call_tool("sms_send", {"to": "+15550100", "body": "running late"})
    assert r.is_error and "inbox could not be read" in r.content[0].text
    assert fake_adb.device.sent_messages == []
    assert not any(c.startswith(("am ", "input ")) for c in fake_adb.device_commands())


@pytest.mark.parametrize("body", ["Here it is: 482913", "482-913", "c0de 482913", "48two913"])
async def test_through_the_gateway_the_rephrasings_the_rulebase_misses_are_refused(tmp_path, body):
    answers = Answers("yes")
    async with running_gateway(device_config(tmp_path)) as rt:
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answers) as c:
            r = await c.call_tool("device__sms_send", {"to": "+15550666", "body": body})
    assert r.is_error and "one-time code" in r.content[0].text, r.content[0].text
    assert phone.sent_messages == [] and acted(phone) == []
