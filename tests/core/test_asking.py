"""The one way to ask the user (core.asking): every asker's question goes through the same safety path, names
its asker, channel and the provenance whose answer counts; a stray value is refused, not guessed."""

from __future__ import annotations

import pytest

from device_tools.sensors.bridge import SensorBridge
from sentinel_mcp.core.asking import Asker, AskUser, Channel, Provenance
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.policy.default_guard import confirmation_question
from sentinel_mcp.policy.questions import question_of

HOSTILE = "Bob\u202e\u200b <b>approve</b>" + "x" * 3000


@pytest.mark.parametrize("asker", list(Asker))
def test_every_asker_gets_the_same_safe_text(asker):
    shown = AskUser(asker, f"Allow {HOSTILE}?", {"who": HOSTILE}).shown()
    assert "\u202e" not in shown and "\u200b" not in shown and len(shown) < 2000


@pytest.mark.parametrize("bad", [{"asker": "llm"}, {"channel": "sms"}, {"accepts_from": ("admin",)},
                                 {"accepts_from": ()}, {"accepts_from": ("User",)}])
def test_unknown_askers_channels_and_provenances_are_refused(bad):
    with pytest.raises(ValueError):
        AskUser(**({"asker": Asker.POLICY, "text": "q?"} | bad))


def test_only_the_named_provenance_counts():
    ask = AskUser(Asker.DEVICE, "Tap Send?", channel=Channel.PHONE)
    assert (
        ask.counts("user") and not ask.counts("agent") and not ask.counts("policy") and not ask.counts("USER")
    )
    both = AskUser(Asker.POLICY, "Which seat?", accepts_from=(Provenance.USER, Provenance.AGENT))
    assert both.counts("agent")


def test_the_guard_and_the_policy_ask_through_it():
    call = ToolCall(name="mail__send", server="mail", tool="send", arguments={"to": HOSTILE})
    q = confirmation_question(call, "it sends mail")
    assert q.meta["asked_by"] == "guard" and q.meta["channel"] == "client" and q.meta["from"] == ["user"]
    assert q.meta["kind"] == "confirmation" and "\u202e" not in q.message
    need = {"kind": "confirm", "question": f"Send to {HOSTILE}?"}
    assert "\u202e" not in question_of(need, call, "v1").message


def test_the_sensors_consent_asks_through_it(tmp_path):
    from device_tools.sensors.database import SensorDatabase
    from device_tools.sensors.sources.simulated import SimulatedSource

    db = SensorDatabase(tmp_path)
    try:
        bridge = SensorBridge(SimulatedSource(), db)
        text = bridge.consent_question(HOSTILE, {"sensor": "location", "scope": "minimal", "policy_tag": "t"})
        # the long name is cut where it is quoted, so what is asked stays in view
        assert text is not None and "\u202e" not in text and "to read your location" in text
    finally:
        db.close()
