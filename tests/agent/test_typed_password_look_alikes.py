"""A typed password spelled in look-alike letters, or in pieces, is the same password to whoever reads it.

Redaction folded letters by NFKC and case only: "Нunter2-Ѕecret" (a Cyrillic Н and Ѕ), "Ηunτer2" (Greek),
"Hünter2" (a combining mark), "Hunter２" (a fullwidth digit NFKC folds, with a zero-width joiner beside it)
were kept in clear in the trace and typed into a chat's field: a reader reads the password. Now both the
password and the text are taken to their UTS #39 confusable skeleton (``core/look_alike_names``) letter by
letter before they are compared.

And a password is seldom typed in one piece only: typed into its field in two or more steps, each piece was
a password of its own, and the whole one, spelled apart, matched none of them; a screen (or the model's
answer) saying half of it at a time kept each half in clear, and typing it into a chat's field a piece a step
sent it all. Now the pieces typed into one password field make one password, a run of more than half of a
password's letters (``typed_secrets.fragment_letters``) is redacted and held to its field like the whole, and
the pieces the run types into other fields, one after another, are read together."""

from __future__ import annotations

import json

import pytest
from mcp import Client
from tests.agent.phone_policies import act, element_id, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of
from tests.agent.test_typed_password_redacted import everything_in, say_yes
from tests.agent.test_typed_password_spellings import BANK, SECRET, screen, typing

from sentinel_mcp.agent.decision import Decision, UnusableDecision
from sentinel_mcp.agent.typed_secrets import REDACTED, TypedSecrets
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)

# SECRET ("Hunter2-Secret") as others write it: each reads as it
LOOK_ALIKES = {
    "cyrillic": "\u041dunt\u0435r2-\u0405\u0435cr\u0435t",  # Н е Ѕ
    "greek capitals": "\u0397UN\u03a4\u0395R2-S\u0395CR\u0395\u03a4",  # Η Τ Ε
    "cyrillic capitals": "\u041dUNT\u0415R2-S\u0415\u0421R\u0415\u0422",
    "combining marks": "Hu\u0308nte\u0301r2-Se\u0300cre\u0302t",
    "precomposed accents": "H\u00fcnt\u00e9r2-S\u00e8cr\u00eat",
    "fullwidth digit, joiners": "Hunter\uff12\u200d-\u200dSecret",
    "mixed case": "hUnTeR2-sEcReT",
    "mathematical, cyrillic": "\U0001d407unter2-\u0405ecret",
}


@pytest.mark.parametrize("spelling", list(LOOK_ALIKES))
def test_a_password_in_look_alike_letters_is_redacted_and_stays_put(spelling):
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)
    said = LOOK_ALIKES[spelling]
    assert secrets.scrub(f"the password is {said}, ok") == f"the password is {REDACTED}, ok"
    assert secrets.scrub({said: said}) == {REDACTED: REDACTED}
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-2", f"it is {said}"), screen())
    assert secrets.placed(typing("e-1", said), screen())


def test_a_password_typed_in_look_alikes_is_found_in_plain_letters():
    """The other way round: what was typed is folded as the text is."""
    secrets = TypedSecrets()
    assert secrets.add(LOOK_ALIKES["cyrillic"], BANK)
    assert secrets.scrub(f"it was {SECRET}") == f"it was {REDACTED}"
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-2", SECRET), screen())


def test_a_separator_that_looks_like_a_letter_still_separates():
    """"|" reads as "l": a password spelled apart with bars is still found, and so is one written with bars
    for its "l"s."""
    secrets = TypedSecrets()
    assert secrets.add("Hello-World-9", BANK)
    for said in ("|".join("Hello-World-9"), "He||o-Wor|d-9", "He11o-Wor1d-9"):
        assert secrets.scrub(said) == REDACTED, said


def test_a_password_typed_in_pieces_is_one_password():
    secrets = TypedSecrets()
    for piece in ("Hu", "nt", "er2-S", "ecret"):  # into the same password field, one step each
        secrets.add(piece, BANK, field="password")
    spaced = " ".join(SECRET)
    assert secrets.scrub(f"it is {spaced}") == f"it is {REDACTED}"
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-2", spaced), screen())
    assert secrets.placed(typing("e-1", "ecret"), screen())  # its own field: the next piece


@pytest.mark.parametrize("half", ["Hunter2-S", "H u n t e r 2", "r2-Secret", "\u041dunter2-\u0405e"])
def test_more_than_half_a_password_is_redacted_and_stays_put(half):
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)
    assert secrets.scrub(f"[{half}]") == f"[{REDACTED}]"
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-2", half), screen())


def test_pieces_typed_one_after_another_into_other_fields_are_read_together():
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)
    for piece in ("Hun", "ter"):  # each, and both, less than half of it
        assert secrets.placed(typing("e-2", piece), screen())
    with pytest.raises(UnusableDecision):  # the piece that makes more than half of it
        secrets.placed(typing("e-2", "2-Sec"), screen())


def test_a_short_shared_run_is_left_alone():
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)
    for text in ("hunter and secret", "the secret hunter", "Hunt", "a secret"):
        assert secrets.scrub(text) == text
        assert secrets.placed(typing("e-2", text), screen())


async def test_a_password_said_back_in_look_alikes_is_not_kept(tmp_path, openai_env):
    """The model's answer and reasoning name the typed password in Cyrillic look-alikes: agent.db and the
    run's result do not keep it."""
    typed: list[str] = []
    said = LOOK_ALIKES["cyrillic"]

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
        typed.append(app)
        if len(typed) == 1:
            return act("type", sid, element_id(lines, "password"), SECRET, why="the password")
        return act("done", sid, text=f"signed in with {said}", why=f"it was {said}")

    openai_env.script("unknown", policy, policy, policy)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open my bank and sign in"})
        assert phone_of(rt).field_text("password") == SECRET
    run = r.structured_content
    assert [s["outcome"] for s in run["steps"]] == ["done", "done", "done"], run["steps"]
    kept = everything_in(tmp_path)
    assert said not in kept and said not in str(run)
    assert "\u041dunt" not in kept and REDACTED in kept


def test_pieces_sent_in_tools_arguments_one_after_another_are_read_together():
    """A message's body, a piece a step, to whomever: read together, as its recipient reads them."""
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)

    def sms(to: str, body: str) -> Decision:
        return Decision(action="tool", tool="phone__sms_send", arguments={"to": to, "body": body})

    assert secrets.placed(sms("+15550100", "Hun"), screen())
    assert secrets.placed(typing("e-2", "hello"), screen())  # (typed elsewhere: another stream)
    assert secrets.placed(sms("+15550100", "ter"), screen())
    with pytest.raises(UnusableDecision):
        secrets.placed(sms("+15550100", "2-Sec"), screen())
    assert secrets.placed(sms("+15550100", "thanks"), screen())  # a later body that holds none of it


async def test_a_password_typed_in_pieces_is_not_kept_spelled_apart(tmp_path, openai_env):
    """Typed into the bank's password field in four steps (pieces of three or four letters: each alone too
    short to look for spelled out), then said spelled apart in the answer: agent.db and the run do not keep
    it."""
    pieces = ["Hun", "ter2", "-Sec", "ret"]
    said = " ".join(SECRET)
    typed: list[str] = []

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
        typed.append(app)
        if len(typed) <= len(pieces):
            return act("type", sid, element_id(lines, "password"), pieces[len(typed) - 1], why="a piece")
        return act("done", sid, text=f"signed in with {said}", why="done")

    openai_env.script("unknown", *[policy] * 6)
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": "open my bank and sign in"})
        assert phone_of(rt).field_text("password") == SECRET
    run = r.structured_content
    assert [s["outcome"] for s in run["steps"]] == ["done"] * 6, run["steps"]
    kept = everything_in(tmp_path)
    for text in (kept, json.dumps(run, ensure_ascii=False)):
        assert "e c r e t" not in text and "u n t e r" not in text, text[:3000]
