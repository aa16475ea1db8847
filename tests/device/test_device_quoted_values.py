"""A device question quotes what the screen, the agent and the phone's contacts wrote the way every
question does (``core/quoted_values.py``, readable_terms.pl's convention): each value one ``“…”`` whose own
closing marks (``”``, ``"`` and their look-alikes, the backslash) are escaped, a line break ``\\n``; a value
made of ``[A-Za-z0-9_.#@+-]`` alone reads bare. Before, a label was put in ``'…'`` with its ``'`` replaced by
``’``, which reads as the closing mark ("Tap 'OK’ in Settings? (safe) ‘x' in Bank"), and the SMS's
recipient, a contact's name and phone, an event's start and a package read bare ("Send an SMS to Mom.
Risk low: ..."). Each of the 35 forging spellings in every slot a device question shows."""

from __future__ import annotations

import re

import pytest

from device_tools.actions import ProposedAction, Target
from device_tools.confirmation_text import question_for
from device_tools.firewall import Assessment
from sentinel_mcp.core.display_text import is_hidden
from tests.support.forged_values import ATTACKS, CUT, NOTE, QUOTED, outside, unescaped

SINGLE_QUOTES = "'\u2018\u2019\u201a\u201b\u2032\u2035\uff07"


def assessed() -> Assessment:
    a = Assessment()
    a.flag("high", "submits credentials")
    return a


def actions(v: str) -> list[tuple[ProposedAction, str]]:
    """Each action a device question describes, with ``v`` in one slot, and the question's shape (V: one
    quoted value or a bare one)."""
    bank = "com.example.bank"
    return [
        (ProposedAction(kind="click", tool="device__click", target=Target(id="e", text=v, package=bank)),
         "Tap V in Bank"),
        (ProposedAction(kind="type", tool="device__type", text=v,
                        target=Target(id="e", text="", desc="note", editable=True, package=bank)),
         "Type V into V in Bank"),
        (ProposedAction(kind="click", tool="device__click",
                        target=Target(id="e", text="OK", context=v, package=bank)),
         "Tap V under V in Bank"),
        (ProposedAction(kind="sms_send", tool="device__sms_send", text="hi", details={"to": v}),
         "Send an SMS to V: V"),
        (ProposedAction(kind="sms_send", tool="device__sms_send", text="hi",
                        details={"to": "+15550100", "name": v}), "Send an SMS to V (V): V"),
        (ProposedAction(kind="contact_create", tool="device__contact_create", text="Ann",
                        details={"phone": v}), "Add the contact V (V)"),
        (ProposedAction(kind="calendar_create", tool="device__calendar_create", text=v,
                        details={"start": v}), "Add V to the calendar (V)"),
        (ProposedAction(kind="alarm_set", tool="device__alarm_set", details={"hour": 7, "label": v}),
         "Set an alarm for 07:00 V"),
        (ProposedAction(kind="terminal", tool="device__terminal", details={"argv": ["echo", v]}),
         "Run V on the phone"),
    ]


def as_v(message: str) -> str:
    """The question with each quoted value (and each cut's note after it) as V, and the honest bare values
    the actions hold beside the attack."""
    body = outside(NOTE.sub("", message))
    body = re.sub(r"V… \(\d+ more characters not shown\)", "V", body)
    return re.sub(r"(?<=[ (])(hi|Ann|note|OK|\+15550100)(?=[ :?)])", "V", body)


@pytest.mark.parametrize("attack", ATTACKS)
def test_no_value_passes_for_words_of_the_device_question(attack: str) -> None:
    for action, shape in actions(attack):
        q = question_for(action, assessed())
        assert q.startswith("Risk high: "), q
        body = NOTE.sub("", q)
        assert not any(is_hidden(ch) for ch in body), ascii(q)
        for mark in SINGLE_QUOTES:  # no quote of another convention: each value is “…”
            assert mark not in outside(body), ascii(q)
        assert as_v(q) == f"Risk high: {shape}? (submits credentials)", (ascii(q), shape)
        for value in QUOTED.findall(body):
            whole = unescaped(CUT.sub("", value))
            assert whole in attack or attack.startswith(whole) or whole in ("hi", "Ann", "note", "OK") \
                or whole.startswith("echo "), ascii(value)


def test_honest_values_read_as_before() -> None:
    target = Target(id="e", text="Sign in", package="com.example.bank")
    q = question_for(ProposedAction(kind="click", tool="device__click", target=target), assessed())
    assert q == "Risk high: Tap \u201cSign in\u201d in Bank? (submits credentials)", q
    sms = ProposedAction(kind="sms_send", tool="device__sms_send", text="See you at 7",
                         details={"to": "+15550100", "name": "Alice"})
    q = question_for(sms, assessed())
    assert q == ("Risk high: Send an SMS to Alice (+15550100): \u201cSee you at 7\u201d? "
                 "(submits credentials)"), q
