"""What binds a person's or an agent's choice on the phone is the whole sha256 or an exact comparison, never a
cut digest of text the other side writes.

- An action's digest binds its confirmation, the answer round sealed for it and its approval. The caller
  writes the typed text and details, the screen's app the target's labels; cut to 16 hex digits a colliding
  pair of actions costs 2^32 hashes (the gateway's argument digest had such a pair: test_digest_collisions).
- An element id is 8 hex digits of the labels its app writes: two elements share one for 2^16 tries (found
  below, in this test, by naming a container). The id is only a handle to read and write back; the element is
  found again by its fingerprint, which before left out what the id is made of (the container's path), so an
  element under another container passed for the one chosen whenever its state read alike. Now the
  fingerprint is the whole sha256 of the id's fields, the state and the window.
- A snapshot id was 10 hex digits (2^20 tries): a screen read later with the id of one read before replaced
  it in the registry, and "#7" of the old snapshot was then found on the new screen.
"""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace

from device_tools import element_registry
from device_tools.actions import ProposedAction, Target
from device_tools.confirmation_text import question_for
from device_tools.element_registry import ElementRegistry, parse_dump
from device_tools.firewall import Assessment
from device_tools.risk_classifier import ActionRiskClassifier

from .test_element_registry import hierarchy, node


def _ok_under(container_rid: str) -> str:
    ok = node("OK", rid="android:id/button1", cls="android.widget.Button", bounds="[740,1200][940,1350]",
              clickable="true")
    return hierarchy(node(rid=container_rid, cls="android.widget.FrameLayout", bounds="[0,0][1080,2400]",
                          children=ok))


def _colliding_containers() -> tuple[str, str]:
    """Two container ids under which the OK button gets the same element id (a birthday search of ~2^16
    hashes over the button's id fields, as ``parse_dump`` makes them)."""
    seen: dict[str, str] = {}
    n = 0
    while True:
        n += 1
        rid = f"app:id/c{n}"
        key = ("android:id/button1", "android.widget.Button", "", "OK", "", f"/FrameLayout#c{n}")
        short = element_registry._digest(*key)
        if short in seen:
            return seen[short], rid
        seen[short] = rid


def test_an_element_with_a_colliding_id_under_another_container_is_not_the_one_chosen() -> None:
    first, second = _colliding_containers()
    a, b = parse_dump(_ok_under(first)), parse_dump(_ok_under(second))
    (ok_a,) = [e for e in a.elements if e.text == "OK"]
    (ok_b,) = [e for e in b.elements if e.text == "OK"]
    assert ok_a.id == ok_b.id and ok_a.path != ok_b.path  # the pair is real: one id, two places
    # what the actuator compares to take the element now for the one chosen (``Actuator.target``)
    assert ok_a.fingerprint != ok_b.fingerprint


def test_the_same_element_read_twice_keeps_its_id_and_fingerprint() -> None:
    first, _ = _colliding_containers()
    a, again = parse_dump(_ok_under(first)), parse_dump(_ok_under(first))
    assert [(e.id, e.fingerprint) for e in a.elements] == [(e.id, e.fingerprint) for e in again.elements]
    assert a.snapshot_id == again.snapshot_id


def test_fingerprints_and_snapshot_ids_are_whole_digests() -> None:
    first, second = _colliding_containers()
    a, b = parse_dump(_ok_under(first)), parse_dump(_ok_under(second))
    for snap in (a, b):
        assert len(snap.snapshot_id) == len("s-") + 64
        assert all(len(e.fingerprint) == 64 for e in snap.elements)
    registry = ElementRegistry()
    registry.remember(a)
    registry.remember(b)
    assert registry.get(a.snapshot_id) is a and registry.get(b.snapshot_id) is b


def test_an_action_digest_is_the_whole_sha256_of_the_action() -> None:
    action = ProposedAction(kind="sms_send", tool="device__sms_send", text="hi", details={"to": "+15550100"})
    canonical = json.dumps(action.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    assert action.digest == hashlib.sha256(canonical.encode()).hexdigest()
    caller = json.dumps(action.for_caller(), sort_keys=True, separators=(",", ":"))
    assert action.caller_digest == hashlib.sha256(caller.encode()).hexdigest()


LOOK_ALIKES = ["pаypal.com", "Ρay now", "Sеnd", "аpple id"]  # a Cyrillic а, a Greek Ρ, a Cyrillic е


def _assessed() -> Assessment:
    a = Assessment()
    a.flag("high", "sends money")
    return a


def test_a_device_question_says_a_label_mixes_scripts() -> None:
    for label in LOOK_ALIKES:
        target = Target(id="e-1", text=label, package="com.example.bank")
        q = question_for(ProposedAction(kind="click", tool="device__click", target=target), _assessed())
        assert q.startswith("Risk high: ") and "mixing the letters of different scripts" in q, q
        typed = question_for(ProposedAction(kind="sms_send", tool="device__sms_send", text=f"pay {label}",
                                            details={"to": "+15550100"}), _assessed())
        assert "mixing the letters of different scripts" in typed, typed


def test_a_device_question_in_one_script_has_no_note() -> None:
    for label in ("Pay now", "Оплатить", "支付", "Zahlung bestätigen", "pay 12€"):
        target = Target(id="e-1", text=label, package="com.example.bank")
        q = question_for(ProposedAction(kind="click", tool="device__click", target=target), _assessed())
        assert "Shown safely" not in q, q


def test_a_mark_the_screen_writes_is_not_shown_as_sentinels() -> None:
    target = Target(id="e-1", text="Pay ⟨U+200B⟩ now", package="com.example.bank")
    q = question_for(ProposedAction(kind="click", tool="device__click", target=target), _assessed())
    assert "⟨U+200B⟩" not in q and "⟨U+27E8⟩" in q, q


async def test_a_rating_cached_for_one_window_is_not_the_rating_in_another() -> None:
    """The model's answer is cached by what it was asked: the action and the screen's window. Keyed by the
    action alone, a tap rated on another app's window (a node claims any package) kept that rating when the
    same tap came up in the bank's."""
    asked: list[str] = []

    async def call_tool(name: str, arguments: dict) -> SimpleNamespace:  # the model: it reads the window
        asked.append(arguments["context"])
        risk = "critical" if "com.example.bank" in arguments["context"] else "medium"
        answer = json.dumps({"risk": risk, "reasons": [], "requires_confirmation": True})
        return SimpleNamespace(is_error=False, structured_content=None,
                               content=[SimpleNamespace(type="text", text=answer)])

    classifier = ActionRiskClassifier(call_tool)
    action = ProposedAction(kind="click", tool="click", target=Target(id="e", text="Delete account",
                                                                      package="com.example.bank"))
    first = await classifier.assess(action, "screen of com.evil.app")
    then = await classifier.assess(action, "screen of com.example.bank")
    again = await classifier.assess(action, "screen of com.example.bank")
    assert first.risk != "critical" and then.risk == "critical" and again.risk == "critical"
    assert asked == ["screen of com.evil.app", "screen of com.example.bank"]  # the same question: cached
