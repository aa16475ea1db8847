"""Red team 'device' 6, the rulebase's one-time code rule: ``device.pl`` denies, before anyone is asked, a
typed text or an SMS body that holds a one-time code. It read the code word in ASCII letters only and the
code as one run of ASCII digits: "Your code is ٤٨٢٩١٣", "Your code is ４８２９１３", "ＣＯＤＥ 730551",
"Your code is 730 551" or a bare "730-551" passed the rule and became a question to the person (the firewall
only asks). The rule now reads the text through one fold (any script's decimal digits, fullwidth forms,
styled letters, invisible characters) and takes runs joined by one space or hyphen as one code, the same
reading as the records' redactor. The code here is not the simulated inbox's, so it is the rule that
denies, not the SMS tool's own check of received codes."""

from __future__ import annotations

import pytest
from tests.device.test_through_gateway import Declines, device_config
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
CODE_BODIES = [
    "Your code is 730551",  # the plain spelling, always denied
    "Your code is ٧٣٠٥٥١",  # Arabic-Indic digits
    "Your code is ۷۳۰۵۵۱",  # Persian digits
    "Your code is ७३०५५१",  # Devanagari
    "Your code is ７３０５５１",  # fullwidth digits
    "ＣＯＤＥ: 730551",  # fullwidth word
    "𝐜𝐨𝐝𝐞: 730551",  # mathematical bold word
    "Your code is 730 551",  # spaced
    "Your code is 73-05-51",  # hyphenated
    "Your otp: 73 05 51",
    "verification\u200b code 730\u200b551",  # invisible characters
    "٧٣٠٥٥١",  # a bare code, another script
    "730 551",  # a bare code, spaced
    "73-05-51",
]
OTHER_BODIES = ["See you at 7", "Room 48, 2 beds", "call me on +15550100", "Code review moved to Monday"]


async def test_the_rulebase_denies_a_code_in_any_spelling_and_asks_nobody(tmp_path):
    answers = Declines()
    async with running_gateway(device_config(tmp_path)) as rt:
        assert not rt.problems, rt.problems
        phone = rt.gateway.manager.upstreams["device"].target.server.runtime.backend
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answers) as c:
            for body in CODE_BODIES:
                r = await c.call_tool("device__sms_send", {"to": "+1 555 0100", "body": body})
                assert r.is_error and "one-time code" in r.content[0].text, (body, r.content[0].text)
            assert answers.questions == [], answers.questions  # denied by the rule: nobody asked
            for body in OTHER_BODIES:  # not codes: the SMS question is asked (and declined here)
                r = await c.call_tool("device__sms_send", {"to": "+1 555 0100", "body": body})
                assert r.is_error and "one-time code" not in r.content[0].text, (body, r.content[0].text)
    assert len(answers.questions) == len(OTHER_BODIES), answers.questions
    assert phone.sent_messages == []
