"""RiskRules on the labelled phone actions (benchmarks/data): the measured quality holds, and the rules'
reasons
hold case by case (a word can be a view or a deed)."""

from __future__ import annotations


import pytest

from device_tools.actions import ProposedAction, Target
from device_tools.risk_classifier import ActionRiskClassifier
from device_tools.risk_rules import RiskRules
from benchmarks.risk_classifier import classify_with, load, metrics


def test_labelled_sets_are_big_enough_and_cover_every_level():
    for name in ("dev", "holdout"):
        items = load(name)
        labels = {d["label"] for d in items}
        assert labels == {"low", "medium", "high", "critical"}
        for d in items:
            ProposedAction.model_validate(d["action"])  # every entry is a real action
    assert len(load("dev")) + len(load("holdout")) >= 120


def test_rules_beat_the_keyword_firewall_on_the_holdout_set():
    from device_tools.firewall import ActionFirewall

    items = load("holdout")  # written after the rules; never used to tune them
    rules = metrics(items, classify_with(RiskRules().assess, items))
    keywords = metrics(items, classify_with(ActionFirewall().assess, items))
    assert rules["hc_recall"] >= 0.85 and rules["hc_precision"] >= 0.9 and rules["ask_precision"] >= 0.9, (
        rules
    )
    assert (
        rules["hc_precision"] > keywords["hc_precision"]
        and rules["ask_precision"] > keywords["ask_precision"]
    )
    assert rules["hc_recall"] >= keywords["hc_recall"]
    dev = load("dev")
    assert metrics(dev, classify_with(RiskRules().assess, dev))["hc_recall"] == 1.0


def click(label: str = "", package: str = "com.example.app", **kw) -> ProposedAction:
    target = Target(id="e-1", text=label, package=package, cls=kw.pop("cls", "android.widget.Button"), **kw)
    return ProposedAction(kind="click", tool="click", target=target, package=package)


@pytest.mark.parametrize(
    "action, risk",
    [
        (
            click("Don't allow", "com.google.android.permissioncontroller"),
            "low",
        ),  # the safe choice, even there
        (click("Don’t allow", "com.android.permissioncontroller"), "low"),  # curly apostrophe
        (click("Allow", "com.google.android.permissioncontroller"), "high"),
        (click("Only this time", "com.google.android.permissioncontroller"), "high"),
        (click("Cancel", "com.example.bank"), "low"),
        (click(desc="Navigate up", package="com.example.bank"), "low"),
        (click("Statements", "com.example.bank"), "low"),
        (click("Continue", "com.example.bank"), "high"),  # a commit inside a payment app
        (click("Frobnicate", "com.example.bank"), "medium"),  # unknown there: asked
        (click("Confirm transfer", "com.example.bank"), "critical"),
        (click("Pay now", "com.example.shop"), "critical"),
        (click("Payment methods", "com.example.shop"), "low"),  # a page, not a deed
        (click("Delete history", "com.example.browser"), "high"),  # "delete" is only ever a verb
        (click("Empty trash", "com.example.files"), "high"),
        (click("Post", "com.example.social"), "high"),
        (click("Save", "com.example.app"), "medium"),
        (click("Bluetooth", "com.android.settings", checkable=True), "medium"),
        (click("Use screen lock", "com.android.settings", checkable=True), "high"),
        (
            click("None", "com.android.settings", cls="android.widget.TextView", hint="Screen lock"),
            "critical",
        ),
    ],
)
def test_rules_read_how_words_are_used(action, risk):
    assert RiskRules().assess(action).risk == risk


@pytest.mark.parametrize("kind", ["back", "home", "scroll", "open_app", "recents"])
def test_moving_about_is_low_whatever_the_app(kind):
    action = ProposedAction(kind=kind, tool=kind, package="com.example.bank")
    assert not RiskRules().assess(action).requires_confirmation


def test_typed_secrets_keep_the_firewalls_floors():
    pw = ProposedAction(
        kind="type",
        tool="type_text",
        text="hunter2",
        package="com.example.mail",
        target=Target(id="e", editable=True, password=True, package="com.example.mail"),
    )
    card = ProposedAction(
        kind="type",
        tool="type_text",
        text="4111 1111 1111 1111",
        package="com.x",
        target=Target(id="e", editable=True, package="com.x"),
    )
    note = ProposedAction(
        kind="type",
        tool="type_text",
        text="call me maybe",
        package="com.x",
        target=Target(id="e", editable=True, package="com.x"),
    )
    rules = RiskRules()
    assert (rules.assess(pw).risk, rules.assess(pw).floor) == ("critical", "high")
    assert rules.assess(card).floor == "critical" and rules.assess(note).risk == "low"


async def test_the_model_is_asked_only_in_the_ambiguous_band_and_cannot_lower_a_floor():
    asked: list[dict] = []

    async def model(name, arguments):  # a model that calls everything low
        asked.append(arguments["action"])
        from types import SimpleNamespace

        return SimpleNamespace(
            is_error=False,
            structured_content={"risk": "low", "reasons": ["fine"], "requires_confirmation": False},
        )

    classifier = ActionRiskClassifier(model, model_role="ambiguous")
    reply = await classifier.assess(click("Reply", "com.example.mail"))  # medium on a bare keyword: asked
    bank = await classifier.assess(click("Continue", "com.example.bank"))  # high with a floor: not asked
    home = await classifier.assess(click("Settings", "com.example.launcher"))  # low: not asked
    assert reply.risk == "low" and bank.risk == "high" and home.risk == "low"
    assert [a["target"]["text"] for a in asked] == ["Reply"]
    off = ActionRiskClassifier(model, model_role="off")
    assert (await off.assess(click("Reply", "com.example.mail"))).risk == "medium" and len(asked) == 1


@pytest.mark.parametrize(
    "label, package, at_least",
    [
        # invisible characters do not split a deed into harmless pieces
        ("Pa\u200by now", "com.example.shop", "high"),
        ("Con\u00adfirm pay\u2060ment", "com.example.app", "high"),
        ("Del\u200dete account", "com.example.app", "medium"),
        # and a "safe choice" that is not what a person reads is never waved through
        ("Cancel\u202e", "com.example.bank", "medium"),
        ("\u2066Not now\u2069", "com.example.app", "medium"),
        ("Close\ufe0f", "com.example.app", "medium"),
    ],
)
def test_hidden_characters_never_lower_the_risk(label, package, at_least):
    from device_tools.actions import RISK_ORDER

    a = RiskRules().assess(click(label, package))
    assert RISK_ORDER[a.risk] >= RISK_ORDER[at_least], (label, a)
    assert a.requires_confirmation
