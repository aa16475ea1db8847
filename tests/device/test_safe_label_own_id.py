"""A control labelled as the safe choice ("Cancel", "Not now", "Back") was rated low whatever it is: the label
is what the app shows the person, and a "Cancel" whose id is ``confirm_transfer_button`` in a bank is a
control dressed as the way out. Now a safe label whose control's id shares no word with it is rated by the id
too (as an "OK" always was), and the riskier stands; an id that agrees ("cancel_payment") or says nothing
("button2") leaves it the safe choice."""

from __future__ import annotations

import pytest

from device_tools.actions import ProposedAction, Target
from device_tools.risk_rules import RiskRules

BANK = "com.example.bank"


def rated(text: str, rid: str, package: str = "com.example.app", desc: str = "") -> str:
    target = Target(id="e", text=text, desc=desc, resource_id=f"{package}:id/{rid}", package=package,
                    clickable=True)
    return RiskRules().assess(ProposedAction(kind="click", tool="click", package=package, target=target)).risk


@pytest.mark.parametrize("text,rid,package,desc", [
    ("Cancel", "confirm_transfer_button", BANK, ""),
    ("Cancel", "delete_account_button", "com.example.app", ""),
    ("Not now", "send_money", "com.example.app", ""),
    ("Back", "pay_now", "com.example.wallet", ""),
    ("Dismiss", "factory_reset", "com.android.settings", ""),
    ("", "btn_confirm_payment", BANK, "Close"),
    ("No thanks", "subscribe_premium", "com.example.app", ""),
])
def test_a_safe_label_on_a_control_named_for_a_deed_is_asked(text, rid, package, desc):
    assert rated(text, rid, package, desc) in ("medium", "high", "critical")


@pytest.mark.parametrize("text,rid,package", [
    ("Cancel", "button2", BANK),
    ("Cancel", "cancel_payment", BANK),
    ("Not now", "not_now_button", "com.example.app"),
    ("Back", "back", "com.example.app"),
    ("Cancel", "", "com.example.app"),
    ("Close", "toolbar_close", "com.example.app"),
])
def test_a_safe_label_whose_id_agrees_or_says_nothing_stays_the_safe_choice(text, rid, package):
    assert rated(text, rid, package) == "low"
