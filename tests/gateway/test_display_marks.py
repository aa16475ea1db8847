"""Sentinel's marks (``⟨U+XXXX⟩``, ``…⟨N more characters not shown⟩``) cannot be typed by a value: a
value's own ``⟨`` ``⟩``, and every bracket that can be drawn like them, is itself shown marked, so a typed-out
mark never reads like a real hidden character, and text already marked is never marked twice."""

from __future__ import annotations

import re

import pytest

from sentinel_mcp.core.display_text import Marked, compose, safe_question, safe_text, shown
from sentinel_mcp.core.mark_brackets import passes_for_mark_bracket

REAL = "report\u202efdp.exe"
# a value that types Sentinel's marking out, in many spellings: its brackets, look-alikes, a forged cut mark
TYPED = [
    "report⟨U+202E⟩fdp.exe",
    "report〈U+202E〉fdp.exe",
    "report〈U+202E〉fdp.exe",
    "report❬U+202E❭fdp.exe",
    "report＜U+202E＞fdp.exe",
    "report⧼U+202E⧽fdp.exe",
    "report﹤U+202E﹥fdp.exe",
    "report⟨U+202E〉fdp.exe",
    "x⟩ and ⟨U+200B",  # a fake closing of a mark and a fake opening
    "short…⟨40 more characters not shown⟩",
]


@pytest.mark.parametrize("typed", TYPED)
def test_a_typed_out_mark_never_reads_like_a_real_one(typed: str) -> None:
    real = shown(REAL).text
    forged = shown(typed)
    assert forged.text != real and forged.brackets >= 1 and forged.changed
    # every mark left in what is shown names a character the value really holds
    assert all(passes_for_mark_bracket(ch) or ord(ch) < 0x20 for ch in _marked_characters(forged.text))
    assert not any(passes_for_mark_bracket(ch) for ch in forged.text if ch not in "⟨⟩")
    assert shown(REAL).text == "report⟨U+202E⟩fdp.exe"


def test_ascii_angle_brackets_and_plain_text_stay_raw() -> None:
    for text in ("a <b> c", "x << 2 >> 1", "« guillemets »", "“quoted” ‘too’", "f(x)[0]{}", "plain"):
        s = shown(text)
        assert s.text == text and not s.changed


def test_marked_text_is_marked_once() -> None:
    once = safe_text("a\u202eb ⟨U+200B⟩ 〈")
    assert once == "a⟨U+202E⟩b ⟨U+27E8⟩U+200B⟨U+27E9⟩ ⟨U+3008⟩"
    assert isinstance(once, Marked) and safe_text(once) == once and shown(once).text == once
    assert shown(shown(REAL).text).text == "report⟨U+202E⟩fdp.exe"
    # a plain str copy of marked text is a raw value again: marked, never taken for Sentinel's
    assert safe_text(str(once)) != once
    # a hidden character that reaches marked text raw is still marked
    assert safe_text(Marked("x\u202ey")) == "x⟨U+202E⟩y"
    joined = compose("Sentinel: allow ", once, "? ", "⟨U+202E⟩")
    assert joined == f"Sentinel: allow {once}? ⟨U+27E8⟩U+202E⟨U+27E9⟩" and isinstance(joined, Marked)


def test_a_question_quoting_a_typed_out_mark_reads_apart_from_one_quoting_a_real_character() -> None:
    for long in (False, True):
        tail = "y" * 900 if long else ""
        real, _ = safe_question(f"Delete {REAL}{tail}?", {"path": REAL + tail})
        for typed in TYPED:
            forged, changed = safe_question(f"Delete {typed}{tail}?", {"path": typed + tail})
            assert forged.split(" [")[0] != real.split(" [")[0], typed
            assert "like Sentinel's marks" in forged and changed == ["value of path"]
            if long:  # the cut mark is Sentinel's, the value's brackets are not
                assert re.search(r"…⟨\d+ more characters not shown⟩", forged.split(" [")[0]), forged


def _marked_characters(text: str) -> list[str]:
    return [chr(int(h, 16)) for h in re.findall(r"⟨U\+([0-9A-F]{4,6})⟩", text)]


def test_the_guards_confirmation_marks_each_value_once() -> None:
    """The default guard quotes each argument marked, then asks through the one question path: the marks it
    made stay Sentinel's (not marked again), a typed-out one is marked, and the tool's name is too."""
    from sentinel_mcp.core.decision import ToolCall
    from sentinel_mcp.policy.default_guard import confirmation_question

    def asked(name: str, value: str) -> str:
        call = ToolCall(name=name, server="fs", tool="write", arguments={"path": value})
        return confirmation_question(call, "It writes a file.").message

    real, typed = asked("fs__write", REAL), asked("fs__write", "report⟨U+202E⟩fdp.exe")
    assert 'path="report⟨U+202E⟩fdp.exe"' in real and "U+27E8" not in real
    assert 'path="report⟨U+27E8⟩U+202E⟨U+27E9⟩fdp.exe"' in typed
    assert real.split(" [")[0] != typed.split(" [")[0]
    assert "like Sentinel's marks" in typed and "like Sentinel's marks" not in real  # the note says so
    named = asked("fs__write⟨U+200B⟩", "x")
    assert "fs__write⟨U+27E8⟩U+200B⟨U+27E9⟩(" in named and "⟨U+27E8⟩U+27E8" not in named


def test_the_chat_shows_a_question_of_sentinels_front_with_its_marks_once() -> None:
    """``sentinel-mcp chat`` hears only Sentinel's front, whose questions are marked there: a real override
    reads ``⟨U+202E⟩`` (not ``⟨U+27E8⟩U+202E⟨U+27E9⟩``), a typed-out one stays marked, a raw one is marked."""
    import io

    from sentinel_mcp.app.chat_link import Question
    from sentinel_mcp.app.chat_terminal import ChatTerminal

    out = io.StringIO()
    term = ChatTerminal(None, out=out)  # type: ignore[arg-type]  # answering a question needs no link
    for value in (REAL, "report⟨U+202E⟩fdp.exe"):
        message, _ = safe_question(f"Delete {value}?", {"path": value})
        term.answer(Question(message=str(message), schema={}))  # plain text, as it crosses MCP
    term.answer(Question(message="raw x\u202ey?", schema={}))
    said = out.getvalue()
    assert "Delete report⟨U+202E⟩fdp.exe?" in said and "Delete report⟨U+27E8⟩U+202E⟨U+27E9⟩fdp.exe?" in said
    assert "⟨U+27E8⟩U+27E8" not in said and "raw x⟨U+202E⟩y?" in said
