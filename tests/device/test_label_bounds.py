"""A label too long to read whole is asked, never allowed silently, and rating it is bounded work.

A hostile screen can write a megabyte into one label (or put 100k elements around a bare "OK"). Cutting
the label before the rules read it would hide a "Pay" or a "Delete account" at its end; folding it whole ran
seconds on the event loop for every action (a 1 MB label of fullwidth letters or combining marks: ~8 s in the
firewall, ~16 s in the rules, ~1.3 s in the question). Now the rules read a bounded window and a label past
``READ_LIMIT`` characters (counted as the screen gives them, so a label of only combining marks or zero-width
characters, which folds to nothing, counts whole) is itself rated high with a floor of high: the person is
asked, and no model can lower it. The work is asserted by the characters handed to the fold
(``label_fold.work``), never by a clock.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from tests.device.device_helpers import Answers, connect, element, sim_server, snapshot_id

from device_tools import confirmation_text, label_fold
from device_tools.actions import RISK_ORDER, ProposedAction, Target
from device_tools.confirmation_text import question_for
from device_tools.element_registry import Element, Snapshot
from device_tools.label_window import READ_LIMIT
from device_tools.risk_classifier import ActionRiskClassifier
from device_tools.risk_rules import RiskRules
from device_tools.screen_context import screen_text, surrounding_text

MB = 1_000_000
FOLD_BUDGET = 64 * READ_LIMIT  # characters handed to the fold for one rating, however long the label
FILLERS = {
    "words": "lorem ipsum ",
    "fullwidth": "Ｌｏｒｅｍ ",
    "accents": "lórem ípsum ",
    "cyrillic look-alikes": "lоrem ",
    "combining marks": "\u0301",
    "zero-width": "\u200b",
}
ENDINGS = ["Pay", "Delete account", "Ｐａｙ", "Dеlete account", "Pa\u200by", "Ｄｅｌｅｔｅ account"]


def click_on(label: str, *, where: str = "text", package: str = "com.example.notes") -> ProposedAction:
    return ProposedAction(kind="click", tool="click", package=package,
                          target=Target(id="e-1", package=package, **{where: label}))


def huge(filler: str, ending: str = "", size: int = MB) -> str:
    return filler * (size // len(filler)) + ending


async def rated(action: ProposedAction, model_says: str | None = None):
    """The classifier's assessment; ``model_says``: a model that rates everything that risk (and asks
    nothing): the floor must hold against it."""
    call_tool = None
    if model_says is not None:
        async def call_tool(tool, arguments):  # the llm built-in's answer, as the gateway returns it
            return SimpleNamespace(is_error=False, structured_content={
                "risk": model_says, "reasons": ["looks fine"], "requires_confirmation": False})
    return await ActionRiskClassifier(call_tool, model_role="flagged").assess(action)


def assert_asked_unlowerably(a) -> None:
    assert a.requires_confirmation, a.public()
    assert RISK_ORDER[a.risk] >= RISK_ORDER["high"] and RISK_ORDER[a.floor] >= RISK_ORDER["high"], a.public()
    assert any("too long to read whole" in r for r in a.reasons), a.reasons


@pytest.mark.parametrize("filler", FILLERS.values(), ids=list(FILLERS))
@pytest.mark.parametrize("ending", ["Pay", "Delete account"])
async def test_a_megabyte_label_with_the_deed_at_its_end_is_asked_and_read_in_bounded_work(filler, ending):
    action = click_on(huge(filler, ending))
    label_fold.work.characters = 0
    a = await rated(action, model_says="low")
    assert_asked_unlowerably(a)
    assert label_fold.work.characters <= FOLD_BUDGET, label_fold.work.characters


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("where", ["text", "desc", "hint", "resource_id"])
async def test_every_spelling_of_the_deed_at_the_end_of_any_label_field_is_asked(ending, where):
    a = await rated(click_on(huge("lorem ", ending, 200_000), where=where))
    assert_asked_unlowerably(a)


@pytest.mark.parametrize("filler", ["\u0301", "\u200b", "\u034f", "\U000e0041", "\u0301\u200d"])
@pytest.mark.parametrize("size", [READ_LIMIT + 2, MB])
async def test_a_label_of_only_marks_or_invisible_characters_past_the_bound_is_asked(filler, size):
    """It folds to nothing (a reader sees no word), so only its length as the screen gave it can tell."""
    label_fold.work.characters = 0
    a = await rated(click_on(huge(filler, size=size)), model_says="low")
    assert_asked_unlowerably(a)
    assert label_fold.work.characters <= FOLD_BUDGET


async def test_a_long_label_within_the_bound_is_read_whole_and_not_flagged():
    label = "Open the note " * (READ_LIMIT // 14 - 1) + "Delete account"
    assert len(label) <= READ_LIMIT
    a = RiskRules().assess(click_on(label))
    assert a.requires_confirmation and "deletes data" in a.reasons, a.public()  # the end was read
    assert not any("too long" in r for r in a.reasons)
    assert not RiskRules().assess(click_on("Open the note " * (READ_LIMIT // 14))).requires_confirmation


async def test_a_long_package_is_read_in_bounded_work_and_asked():
    label_fold.work.characters = 0
    a = RiskRules().assess(click_on("Open", package="com." + "x" * MB + ".bank"))
    assert_asked_unlowerably(a)
    assert label_fold.work.characters <= FOLD_BUDGET


@pytest.mark.parametrize("filler", FILLERS.values(), ids=list(FILLERS))
def test_the_question_for_a_megabyte_label_is_short_says_why_and_reads_a_bounded_prefix(filler, monkeypatch):
    action = click_on(huge(filler, "Pay"))
    assessment = RiskRules().assess(action)
    looked = 0
    real = confirmation_text.is_hidden

    def counting(ch: str) -> bool:
        nonlocal looked
        looked += 1
        return real(ch)

    monkeypatch.setattr(confirmation_text, "is_hidden", counting)
    label_fold.work.characters = 0
    question = question_for(action, assessment)
    assert len(question) < 600, len(question)
    assert "too long to read whole" in question, question
    assert question.startswith(("Risk high: Tap \u201c", "Risk critical: Tap \u201c")), question
    assert "…" in question  # the cut is shown
    assert looked <= 16 * confirmation_text.LABEL_LIMIT, looked
    assert label_fold.work.characters <= FOLD_BUDGET, label_fold.work.characters


def node_at(i: int, depth: int, text: str = "", **flags: bool) -> Element:
    return Element(id=f"e-{i}", index=i + 1, cls="android.widget.TextView", text=text, desc="",
                   resource_id="", package="com.example.notes", bounds=(0, i, 1080, i + 1),
                   clickable=flags.get("clickable", False), long_clickable=False, checkable=False,
                   checked=False, scrollable=False, focusable=False, focused=False, editable=False,
                   password=False, enabled=True, selected=False, depth=depth, path="", fingerprint=str(i),
                   seq=i)


@pytest.mark.parametrize("where", ["dialog", "screen"])
async def test_a_bare_ok_among_a_hundred_thousand_elements_is_asked_in_bounded_work(where):
    """A dialog (or the screen around it) of 100k labels with "Delete account?" last: what the tap commits is
    past any bound a reading can have, so the bare "OK" is asked, never rated low on the first labels."""
    n = 100_000
    fillers = [node_at(i + 2, 2, f"Note number {i}") for i in range(n)]
    deed = node_at(n + 2, 2, "Delete account? This cannot be undone.")
    ok = node_at(n + 3, 2, "OK", clickable=True)
    if where == "dialog":
        elements = [node_at(0, 0), node_at(1, 1), *fillers, deed, ok]
    else:  # the filler fills the screen; the dialog is elsewhere
        elements = [node_at(0, 0), node_at(1, 1), *fillers, node_at(n + 1, 1), ok]
    snapshot = Snapshot("s-1", elements, "com.example.notes")
    target = Target(id=ok.id, text="OK", package="com.example.notes",
                    context=surrounding_text(snapshot, ok), screen=screen_text(snapshot, ok))
    assert len(target.context) <= 2 * READ_LIMIT and len(target.screen) <= 2 * READ_LIMIT
    label_fold.work.characters = 0
    a = await rated(ProposedAction(kind="click", tool="click", package="com.example.notes", target=target),
                    model_says="low")
    assert a.requires_confirmation and RISK_ORDER[a.floor] >= RISK_ORDER["medium"], a.public()
    assert any("too long to read whole" in r for r in a.reasons), a.reasons
    assert label_fold.work.characters <= FOLD_BUDGET


def test_a_bare_ok_on_an_ordinary_screen_stays_quiet():
    elements = [node_at(0, 0), node_at(1, 1), node_at(2, 2, "Your changes were saved."),
                node_at(3, 2, "OK", clickable=True)]
    snapshot = Snapshot("s-1", elements, "com.example.notes")
    ok = elements[-1]
    target = Target(id=ok.id, text="OK", package="com.example.notes",
                    context=surrounding_text(snapshot, ok), screen=screen_text(snapshot, ok))
    a = RiskRules().assess(ProposedAction(kind="click", tool="click", target=target))
    assert not a.requires_confirmation, a.public()


@pytest.mark.parametrize("label", [huge("lorem ipsum ", "Pay"), huge("\u0301"),
                                   huge("Ｌｏｒｅｍ ", "Delete account")],
                         ids=["words then Pay", "combining marks", "fullwidth then Delete account"])
@pytest.mark.parametrize("answer", ["no", "yes"])
async def test_a_tap_on_a_megabyte_label_asks_once_and_only_the_persons_yes_taps(tmp_path, label, answer):
    """Through the real device server and an MCP client: the question names why (the label's length), is
    short, and the tap happens only on the person's yes."""
    from tests.device.test_tap_integrity import GAME, new_screen, node, phone_of, taps

    server = sim_server(tmp_path)
    phone = phone_of(server)
    button = node(text=label, rid=f"{GAME}:id/go", pkg=GAME, bounds="[90,2100][990,2200]")
    new_screen(phone, "long", GAME, [button], f"{GAME}:id/none")
    answers = Answers(answer)
    async with connect(server, "legacy", answers) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, resource_id="id/go")
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(screen)})
    assert len(answers.questions) == 1, answers.questions
    question = answers.questions[0]
    assert "too long to read whole" in question and len(question) < 1000, question[:300]
    assert r.structured_content["decision"]["assessment"]["floor"] in ("high", "critical")
    assert (taps(phone) != []) == (answer == "yes"), r.content[0].text[:300]


async def test_the_model_is_shown_the_window_of_a_megabyte_label_and_cannot_lower_it():
    asked: list[dict] = []

    async def call_tool(tool, arguments):
        asked.append(arguments)
        return SimpleNamespace(is_error=False, structured_content={
            "risk": "low", "reasons": [], "requires_confirmation": False})

    a = await ActionRiskClassifier(call_tool, model_role="flagged").assess(click_on(huge("lorem ", "Pay")))
    assert_asked_unlowerably(a)
    shown = asked[0]["action"]["target"]["text"]
    assert len(shown) <= READ_LIMIT + 1 and shown.endswith("Pay"), len(shown)


@pytest.mark.parametrize("said", ["Pay now", "Delete account", "Ｐａｙ"])
@pytest.mark.parametrize("before", [60, 200, 5000])
async def test_a_row_is_rated_on_the_whole_labels_inside_it(tmp_path, said, before):
    """An unlabeled row is rated by the labels inside it (its ``hint``): each was cut at 60 characters, so
    a row saying "… (60 characters) Pay now" was rated on the filler and tapped without a question."""
    from tests.device.test_tap_integrity import GAME, TEXT, new_screen, node, phone_of, taps

    server = sim_server(tmp_path)
    phone = phone_of(server)
    words = node(text="x " * (before // 2) + said, cls=TEXT, pkg=GAME, clickable="false",
                 bounds="[90,2100][990,2200]")
    row = node(rid=f"{GAME}:id/row", cls="android.widget.LinearLayout", pkg=GAME,
               bounds="[90,2100][990,2200]", children=(words,))
    new_screen(phone, "row", GAME, [row], f"{GAME}:id/none")
    answers = Answers("no")
    async with connect(server, "legacy", answers) as client:
        screen = await client.call_tool("screen_read", {})
        target = element(screen, resource_id="id/row")
        r = await client.call_tool("click", {"element_id": target["id"], "snapshot_id": snapshot_id(screen)})
    assert len(answers.questions) == 1, r.content[0].text[:300]
    assert taps(phone) == []


def test_a_label_that_says_what_it_does_is_not_asked_for_a_long_screen_around_it():
    """The text around a target is read only for a label that says little ("OK"): a long page around an
    "Open" is not a reason to ask."""
    target = Target(id="e-1", text="Open", package="com.example.notes", context="Note " * READ_LIMIT,
                    screen="Note " * READ_LIMIT)
    a = RiskRules().assess(ProposedAction(kind="click", tool="click", target=target))
    assert not a.requires_confirmation, a.public()


def test_a_switch_is_rated_on_its_whole_row():
    """A switch without a label is named and rated by its row: a row cut at 200 characters hid "USB
    debugging" after filler, and turning it off was a plain tap."""
    from dataclasses import replace

    from device_tools.screen_context import row_of

    filler = node_at(2, 2, "x " * 150)
    words = node_at(3, 2, "USB debugging")
    switch = replace(node_at(4, 2), checkable=True, checked=True, clickable=True,
                     cls="android.widget.Switch")
    snapshot = Snapshot("s-1", [node_at(0, 0), node_at(1, 1), filler, words, switch], "com.example.tools")
    row = row_of(snapshot, switch)
    assert "USB debugging" in row
    target = Target(id=switch.id, package="com.example.tools", checkable=True, checked=True, row=row,
                    cls="android.widget.Switch")
    a = RiskRules().assess(ProposedAction(kind="click", tool="click", target=target))
    assert a.risk == "critical" and "turns a security feature off" in a.reasons, a.public()
