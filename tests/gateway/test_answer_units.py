"""The parts under the answer checks, one by one: safe display text, strict answer validation, the nonce book
and the sealed request state. (The same behaviour through the real gateway: test_answer_forgery.py.)"""

from __future__ import annotations

import unicodedata

import pytest

from sentinel_mcp.core.answer_validation import answer_problem, approves, content_problem, goes_ahead
from sentinel_mcp.core.decision import Answer, Question
from sentinel_mcp.policy.default_guard import CONFIRM_SCHEMA
from sentinel_mcp.core.display_text import is_hidden, safe_question, shown
from sentinel_mcp.gateway.nonce_book import MemoryNonceBook
from sentinel_mcp.gateway.request_state import RequestStateSeal

BIDI = [0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x200E, 0x200F, 0x061C]
INVISIBLE = [0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF, 0x00AD, 0x180E, 0x2061, 0x2064, 0x034F, 0x115F, 0x3164,
             0xFFA0, 0xFE0F, 0xE0001, 0xE0041, 0xE007F, 0x1D173]
CONTROLS = [0x00, 0x07, 0x08, 0x0A, 0x0D, 0x1B, 0x7F, 0x85, 0x9B, 0x2028, 0x2029]
ODD = [0xD800, 0xDFFF, 0xE000, 0xF8FF, 0x10FFFD, 0x0378]  # surrogates, private use, unassigned


@pytest.mark.parametrize("cp", BIDI + INVISIBLE + CONTROLS + ODD)
def test_every_hidden_character_is_made_visible(cp: int) -> None:
    s = shown(f"a{chr(cp)}b")
    assert s.text == f"a⟨U+{cp:04X}⟩b" and s.hidden == 1 and s.changed


def test_ordinary_text_is_left_alone() -> None:
    for text in (
        "plain ascii",
        "Grüße, déjà vu",
        "日本語のテキスト",
        "emoji 🙂 ok",
        "עברית בלי סימנים",
        "tab-free",
    ):
        s = shown(text)
        assert s.text == text and not s.changed


def test_terminal_escapes_and_long_values() -> None:
    s = shown("ok\x1b[2K\x1b]0;title\x07\x1b[1Adone")
    assert "\x1b" not in s.text and "\x07" not in s.text and s.text.startswith("ok⟨U+001B⟩[2K")
    long = shown("x" * 1000 + "TAIL", limit=100)
    assert "TAIL" not in long.text and long.cut == 904 and "904 more characters not shown" in long.text
    kept = shown("line one\nline two\x1b[0m", keep_newlines=True)
    assert kept.text == "line one\nline two⟨U+001B⟩[0m"
    assert shown(shown("a\u202eb").text).text == "a⟨U+202E⟩b"  # rendering twice changes nothing more


def test_no_hidden_category_slips_through() -> None:
    # every code point whose category hides it is marked; a sweep over the whole BMP and plane 14
    for cp in list(range(0x10000)) + list(range(0xE0000, 0xE1000)):
        ch = chr(cp)
        if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"):
            assert is_hidden(ch), hex(cp)


def test_question_note_names_the_changed_values() -> None:
    text, changed = safe_question(
        "Delete a\u202egpj.exe and " + "y" * 900 + "?",
        {"path": "a\u202egpj.exe", "body": "y" * 900, "fine": "ok"},
    )
    assert changed == ["value of path", "value of body"]
    assert "a⟨U+202E⟩gpj.exe" in text and "600 more characters not shown" in text and "Shown safely" in text
    text, changed = safe_question("Plain question?", {"x": "plain"})
    assert text == "Plain question?" and changed == []


CONFIRM = Question(
    key="sentinel.confirm.x",
    message="ok?",
    requested_schema=CONFIRM_SCHEMA,
    meta={"kind": "confirmation", "from": ["user"]},
)
CHOICE = Question(
    key="q",
    message="which?",
    meta={"kind": "ask", "from": ["user", "agent"]},
    requested_schema={
        "type": "object",
        "required": ["answer"],
        "properties": {"answer": {"type": "string", "enum": ["red", "blue"]}},
    },
)
NUMBER = Question(
    key="n",
    message="how many?",
    meta={"kind": "ask", "from": ["user"]},
    requested_schema={"type": "object", "required": ["answer"], "properties": {"answer": {"type": "number"}}},
)


@pytest.mark.parametrize(
    "content,why",
    [
        ({"approve": "true"}, "expected a boolean"),
        ({"approve": "false"}, 'the string "false"'),
        ({"approve": "yes"}, "expected a boolean"),
        ({"approve": 1}, "the number 1"),
        ({"approve": 0}, "number"),
        ({"approve": "1"}, "string"),
        ({"approve": None}, "null"),
        ({"approve": []}, "array"),
        ({"approve": {}}, "object"),
        ({"approve": {"approve": True}}, "object"),
        ({}, "is missing"),
        ({"approve": True, "extra": 1}, "extra was not asked for"),
        ({"Approve": True}, "approve"),
        ({"approve": 1.0}, "number"),
        ({"approve": "\u202etrue"}, "⟨U+202E⟩"),
    ],
)
def test_confirmation_answers_that_are_not_answers(content: dict, why: str) -> None:
    answer = Answer(action="accept", content=content)
    problem = answer_problem(CONFIRM, answer)
    assert problem and why in problem, problem
    assert not approves(CONFIRM, answer)


def test_only_json_true_approves() -> None:
    yes = Answer(action="accept", content={"approve": True})
    assert answer_problem(CONFIRM, yes) is None and approves(CONFIRM, yes) and goes_ahead(CONFIRM, yes)
    for no in (
        Answer(action="accept", content={"approve": False}),
        Answer(action="decline"),
        Answer(action="cancel"),
        Answer(action="decline", content={"approve": True}),
    ):
        assert answer_problem(CONFIRM, no) is None and not goes_ahead(CONFIRM, no)
    agent = Answer(action="accept", content={"approve": True}, provenance="agent")
    assert "must be answered by the user" in answer_problem(CONFIRM, agent)


def test_choices_and_numbers_are_strict() -> None:
    for bad in ("RED", "red ", "purple", 1, True, None, ["red"]):
        assert "expected" in answer_problem(CHOICE, Answer(action="accept", content={"answer": bad}))
    assert (
        answer_problem(CHOICE, Answer(action="accept", content={"answer": "red"}, provenance="agent")) is None
    )
    for bad in ("2", "two", True, None, [2]):
        assert "expected" in answer_problem(NUMBER, Answer(action="accept", content={"answer": bad}))
    for good in (2, 2.5, -1, 0):
        assert answer_problem(NUMBER, Answer(action="accept", content={"answer": good})) is None
    assert content_problem({"type": "object"}, "yes").startswith("the answer must be an object")


def test_nonce_book_is_single_use_bounded_and_expires() -> None:
    now = [1000.0]
    book = MemoryNonceBook(capacity=3, clock=lambda: now[0])
    book.issue("a", 1010)
    assert book.consume("a") and not book.consume("a") and not book.consume("never-issued")
    for n in "bcde":
        book.issue(n, 1010)
    assert len(book) == 3 and not book.consume("b")  # the oldest was dropped: refused, never reused
    book.issue("late", 1005)
    now[0] = 1006
    assert not book.consume("late")  # expired
    assert book.consume("e")


def test_one_owners_flood_drops_only_its_own_nonces() -> None:
    """Past capacity the owner holding the most gives up its oldest: bob minting states by the thousand never
    pushes out alice's open question (before, the oldest of anyone's went first, and hers was refused)."""
    book = MemoryNonceBook(capacity=10, clock=lambda: 1000.0)
    book.issue("alice-1", 2000, "alice")
    book.issue("carol-1", 2000, "carol")
    for i in range(1000):
        book.issue(f"bob-{i}", 2000, "bob")
    assert len(book) == 10
    assert book.consume("alice-1") and book.consume("carol-1")
    assert book.consume("bob-999") and not book.consume("bob-0")  # bob's newest kept, its oldest dropped
    for i in range(20):  # with no one holding more, alice's own flood drops only alice's
        book.issue(f"alice-{i + 2}", 2000, "alice")
    assert book.consume("bob-998") and book.consume("alice-21") and not book.consume("alice-2")


def test_a_sealed_state_is_booked_for_the_principal_it_names() -> None:
    seal = RequestStateSeal(max_age=60, nonces=MemoryNonceBook(capacity=3))
    alice = seal.open(seal.seal({"kind": "ask", "principal": "alice"}))
    for _ in range(50):
        seal.seal({"kind": "ask", "principal": "bob"})
    assert alice is not None and seal.consume(alice)


def test_sealed_state_is_bound_signed_and_single_use() -> None:
    seal = RequestStateSeal(max_age=60)
    token = seal.seal({"kind": "ask", "session": "s"})
    payload = seal.open(token)
    assert payload is not None and payload["session"] == "s"
    assert seal.open(token) is not None  # opening does not use it
    assert seal.consume(payload) and not seal.consume(payload)
    other = RequestStateSeal(max_age=60)
    assert other.open(token) is None  # another process's key
    assert seal.open(token[:-2]) is None and seal.open("sentinel2.") is None and seal.open(None) is None
    expired = RequestStateSeal(max_age=-1)
    assert expired.open(expired.seal({"kind": "ask"})) is None


async def test_the_async_seal_path_means_the_same() -> None:
    seal = RequestStateSeal(max_age=60)
    payload = seal.open(await seal.seal_async({"kind": "ask", "session": "s"}))
    assert payload is not None and payload["session"] == "s"
    assert await seal.consume_async(payload) and not await seal.consume_async(payload)
    assert not seal.consume(payload)  # one book behind both paths
    assert not await seal.consume_async({"nonce": 5}) and not await seal.consume_async({})


async def test_a_request_state_is_bound_to_its_principal_too() -> None:
    from mcp.types import ElicitResult

    from sentinel_mcp.gateway.input_rounds import InputRounds, RefusedRetry, Retry

    rounds = InputRounds(RequestStateSeal(max_age=60))
    args = {"path": "/tmp/x"}
    state = await rounds.issue(
        "ask",
        principal="alice",
        session="alice/conv-1",
        tool="tb__w",
        arguments=args,
        version="v1",
        asked=["sentinel.confirm.x"],
    )
    yes = {"sentinel.confirm.x": ElicitResult(action="accept", content={"approve": True})}

    async def accept(principal: str, session: str = "alice/conv-1") -> Retry | RefusedRetry:
        return await rounds.accept(
            modern=True,
            declared={"elicitation"},
            principal=principal,
            session=session,
            tool="tb__w",
            arguments=args,
            version="v1",
            responses=yes,
            request_state=state,
        )

    for who in ("bob", "Alice", "alice ", "", "owner"):  # any other caller, even with the same session named
        refused = await accept(who)
        # read as a state never issued: nothing says it is genuine, live, or anyone's
        assert isinstance(refused, RefusedRetry) and "Sentinel did not issue" in refused.reason, who
        assert "alice" not in refused.reason  # never says whose
    assert isinstance(
        await accept("alice", "alice/conv-2"), RefusedRetry
    )  # its principal, another conversation
    # none of the refusals used the state up: its own caller's answer counts, once
    ok = await accept("alice")
    assert isinstance(ok, Retry) and ok.kind == "ask" and ok.ours["confirm.x"].content == {"approve": True}
    again = await accept("alice")
    assert isinstance(again, RefusedRetry) and "already used" in again.reason


def test_a_reusable_seal_never_stands_in_for_a_single_use_one() -> None:
    from sentinel_mcp.gateway.nonce_book import NoNonceBook

    seal = RequestStateSeal(max_age=60, nonces=NoNonceBook())
    token = seal.seal({"session": "alice/conv-1", "principal": "alice"})
    payload = seal.open(token)
    assert payload is not None and seal.open(token) is not None  # carried back many times
    assert not seal.consume(payload)  # but it grants nothing single-use
    assert RequestStateSeal(max_age=60).open(token) is None  # and no other seal's key opens it
