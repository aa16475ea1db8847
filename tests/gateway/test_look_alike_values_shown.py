"""A hostile client asks the person to approve a value that reads as another: ``bank__send(to="pаypal.com")``
with a Cyrillic а is shown as "paypal.com", the person says yes to the address they read, and the statement
goes to the one it is. A question shows such a value as it is (it may be honest text) and says that a word of
it mixes the letters of different scripts; a word of one script, or of the mixes honest words make (Latin with
Han and kana), is shown without a note. Both ways a call's values reach a question: the default guard's
confirmation (through the real gateway, the bank upstream in a subprocess, the 2026-era mcp client) and a
policy question quoting the call's arguments (``safe_question``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.core.display_text import safe_question
from sentinel_mcp.policy.default_guard import describe_call

from .guard_probe import bank_config, reached

pytestmark = pytest.mark.timeout(120)
NOTE = "look-alike letters"
LOOK_ALIKE = [
    "p\u0430ypal.com",  # Cyrillic а
    "\u0440aypal.com",  # Cyrillic р
    "payp\u03b1l.com",  # Greek alpha
    "g\u043e\u043egle.com",  # two Cyrillic о
    "alice@ex\u0430mple.com",
    "\u0412\u043e\u043eking",  # Cyrillic В, о, о with Latin king
    "acc\u13aaunt",  # Cherokee
]
HONEST = ["paypal.com", "\u041f\u0440\u0438\u0432\u0435\u0442 John", "\u6771\u4eacTokyo", "na\u00efve",
          "\u0391\u03b8\u03ae\u03bd\u03b1", "cafe\u0301", "\u00fcber-stra\u00dfe", "12 345,00 \u20ac", "",
          "DE89 37\u0417\u0416 0440"]  # a Cyrillic word between Latin and digits: each word of one script


def _call(to: str) -> ToolCall:
    return ToolCall(name="bank__send", server="bank", tool="send", arguments={"account": 12, "to": to})


@pytest.mark.parametrize("to", LOOK_ALIKE)
def test_a_look_alike_value_is_said_to_be_one(to: str) -> None:
    text, note = describe_call(_call(to))
    assert to in text and NOTE in note, (text, note)
    question, changed = safe_question(f"Send the statement to {to}?", {"to": to})
    assert NOTE in question and changed == ["value of to"], question


@pytest.mark.parametrize("to", HONEST)
def test_a_value_of_one_script_has_no_note(to: str) -> None:
    text, note = describe_call(_call(to))
    assert NOTE not in note, (text, note)
    question, _ = safe_question(f"Send the statement to {to}?", {"to": to})
    assert NOTE not in question, question


async def _asked(ctx: Any, params: Any) -> Any:
    raise AssertionError("a 2026-era call is answered in its retry, never pushed")


async def test_the_confirmation_of_a_real_call_says_its_look_alike(tmp_path: Path) -> None:
    config = parse_config(bank_config(tmp_path), base_dir=str(tmp_path))
    async with running_gateway(config) as rt, Client(
        rt.front.server, mode="auto", elicitation_callback=_asked
    ) as c:
        messages = {}
        for to in ("paypal.com", LOOK_ALIKE[0]):
            r = await c.session.call_tool("bank__send", {"account": 12, "to": to}, allow_input_required=True)
            assert type(r).__name__ == "InputRequiredResult", r
            (messages[to],) = [q.params.message for q in r.input_requests.values()]
    assert NOTE in messages[LOOK_ALIKE[0]] and NOTE not in messages["paypal.com"], messages
    assert reached(tmp_path) == []
