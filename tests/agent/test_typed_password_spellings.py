"""A typed password is the same password spelled with spaces, dots, dashes or hidden characters between its
letters ("H u n t e r 2", "Hun\\u200bter2"): a screen that tells the model to type it so into a chat's
field, or to say it so in its answer, got it onto the phone and into agent.db in clear, since only the exact
letters (in any case) were matched; so did it in fullwidth or mathematical letters ("Ｈｕｎｔｅｒ２"). And a
run that typed more than 32 passwords forgot the first ones: no longer redacted, no longer held to their
field. Real gateway, simulated phone (its bank's login screen),
scripted model behind real HTTP; and TypedSecrets itself."""

from __future__ import annotations

import time

import pytest
from mcp import Client
from tests.agent.phone_policies import act, element_id, screen_of
from tests.agent.test_agent_loop import agent_config, phone_of
from tests.agent.test_typed_password_redacted import everything_in, say_yes

from sentinel_mcp.agent.decision import Decision, UnusableDecision
from sentinel_mcp.agent.screen import Screen
from sentinel_mcp.agent.typed_secrets import MAX_SECRETS, REDACTED, TypedSecrets
from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
SECRET = "Hunter2-Secret"
BANK = "com.example.bank"
# the letters of SECRET with something between them: what a reader (or a chat's recipient) reads as it
SPELLED = {
    "spaced": " ".join(SECRET),
    "dotted": ".".join(SECRET),
    "dashes dropped": SECRET.replace("-", ""),
    "dash as space, other case": SECRET.replace("-", " ").upper(),
    "zero-width": "\u200b".join(SECRET),
    "soft hyphens": "\u00ad".join(SECRET),
    "underscores": "_".join(SECRET),
    # the same letters as other characters a reader reads as them (NFKC folds them to these)
    "fullwidth": "".join(chr(ord(c) + 0xFEE0) for c in SECRET),
    "mathematical bold": "".join(chr(0x1D400 + ord(c) - 65) if c.isupper() else chr(0x1D41A + ord(c) - 97)
                                 if c.islower() else chr(0x1D7CE + int(c)) if c.isdigit() else c
                                 for c in SECRET),
    "fullwidth, spaced": " ".join(chr(ord(c) + 0xFEE0) for c in SECRET),
}
ASCII = [k for k, v in SPELLED.items() if v.isascii()]  # what adb's `input text` can type


@pytest.mark.parametrize("spelling", ASCII)
async def test_a_typed_password_spelled_apart_is_not_typed_into_a_plain_field(tmp_path, openai_env, spelling):
    typed: list[str] = []

    def policy(body):
        sid, app, lines = screen_of(body)
        if app.endswith("nexuslauncher"):
            return act("click", sid, element_id(lines, "text='Bank'"), why="open the bank")
        typed.append(app)
        if len(typed) == 1:
            return act("type", sid, element_id(lines, "password"), SECRET, why="the password")
        if len(typed) == 2:
            return act("type", sid, element_id(lines, "res=username"), SPELLED[spelling], why="as told")
        return act("done", sid, text=f"signed in; it was {SPELLED[spelling]}", why=SPELLED[spelling])

    openai_env.script("unknown", policy, policy, policy, policy)
    goal = f"open my bank, sign in with the password {SECRET}"
    async with running_gateway(agent_config(tmp_path)) as rt:
        async with Client(rt.front.server, mode="legacy", elicitation_callback=say_yes) as c:
            r = await c.call_tool("agent__agent_run", {"goal": goal})
        phone = phone_of(rt)
        username = phone.field_text("username")
        sent = [" ".join(cmd) for cmd in phone.commands]
    run = r.structured_content
    assert [s["outcome"] for s in run["steps"]] == ["done", "done", "unusable", "done"], run["steps"]
    assert username == "", username
    assert len([c for c in sent if "input text" in c]) == 1, sent  # the password, into its own field
    kept = everything_in(tmp_path)
    assert SPELLED[spelling] not in kept and SPELLED[spelling] not in str(run)


def screen(package: str = BANK) -> Screen:
    elements = [
        {"id": "e-1", "index": 1, "class": "EditText", "flags": ["editable", "password"], "window": package},
        {"id": "e-2", "index": 2, "class": "EditText", "flags": ["editable"], "window": package},
    ]
    found = Screen.from_result({"snapshot_id": "s-1", "package": package, "elements": elements})
    assert found is not None
    return found


def typing(element: str, text: str) -> Decision:
    return Decision(action="type", snapshot_id="s-1", element_id=element, text=text)


@pytest.mark.parametrize("spelling", list(SPELLED))
def test_a_password_spelled_apart_is_redacted_and_stays_put(spelling):
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)
    said = SPELLED[spelling]
    assert secrets.scrub(f"the password is {said}, ok") == f"the password is {REDACTED}, ok"
    assert secrets.scrub({"a": [said]}) == {"a": [REDACTED]}
    for decision in (typing("e-2", said), typing("e-2", f"x {said} y"),
                     Decision(action="wait_for", text=said),
                     Decision(action="tool", tool="x__y", arguments={"q": said})):
        with pytest.raises(UnusableDecision):
            secrets.placed(decision, screen())
    assert secrets.placed(typing("e-1", said), screen())  # into its own field, however spelled


def test_words_that_only_share_letters_are_left_alone():
    secrets = TypedSecrets()
    assert secrets.add(SECRET, BANK)
    # (less than half of its letters in a row: more is it said in part, test_typed_password_look_alikes)
    for text in ("hunter and secret", "the 2nd Hunter's secret", "alice", "H-u-n-t-e-r", "Hunt er"):
        assert secrets.scrub(text) == text
        assert secrets.placed(typing("e-2", text), screen())


def test_a_run_that_typed_many_passwords_forgets_none():
    secrets = TypedSecrets()
    first = "First-Pass-0"
    assert secrets.add(first, BANK)
    for i in range(1, MAX_SECRETS):
        word = f"Pass-{i:03d}-x"
        assert secrets.placed(typing("e-1", word), screen())
        assert secrets.add(word, BANK)
    with pytest.raises(UnusableDecision):  # one more new password: refused, not the first one forgotten
        secrets.placed(typing("e-1", "One-Too-Many"), screen())
    assert secrets.placed(typing("e-1", first), screen())  # a known one, into its field: still fine
    assert secrets.scrub(f"it was {first}") == f"it was {REDACTED}"
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-2", first), screen())



def test_a_short_password_is_matched_as_typed():
    secrets = TypedSecrets()
    assert secrets.add("x!9", BANK)  # too few letters to look for spelled apart: as typed, any case
    assert secrets.scrub("it was X!9 and x ! 9") == f"it was {REDACTED} and x ! 9"
    with pytest.raises(UnusableDecision):
        secrets.placed(typing("e-2", "X!9"), screen())


def _cpu(run) -> float:
    """The least thread CPU time of five runs of ``run`` (other work on the machine does not count)."""
    best = float("inf")
    for _ in range(5):
        started = time.thread_time()
        run()
        best = min(best, time.thread_time() - started)
    return best


def test_redacting_does_not_grow_with_the_passwords_length():
    """32 long look-alike passwords (the model chooses what it types) over a 4,000-character text of their
    common prefix: a pattern with separators between every letter backtracked for seconds here (0.1 s with
    named groups as typed). The cost of ten times longer passwords, measured beside the short ones."""
    def cost(length: int) -> float:
        secrets = TypedSecrets()
        for i in range(32):
            assert secrets.add("a" * length + f"b{i:03d}xyzq", BANK)
        texts = ["a" * 4000, " ".join("a" * 2000)]
        return _cpu(lambda: [secrets.scrub(t) for t in texts])

    short, long = cost(50), cost(500)
    assert long < 3 * short, (short, long)
