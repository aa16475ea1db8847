"""The person's reply to another agent's help request, where it is kept (``AssistInbox.answer``, used by the
console and by ``sentinel-mcp chat``'s /reply): line ends normalised; a character that changes how text reads
(controls, terminal escapes, bidi overrides and isolates, zero-width, tags, separators, surrogates, private
use)
refused with a message naming it, and nothing kept; and answered once only, however many answer at once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from sentinel_mcp.a2a.assist_inbox import AssistInbox
from sentinel_mcp.core.typed_text import TypedTextRefused, typed_text

HIDDEN = [
    "\x1b[2J",
    "\x00",
    "\x07",
    "\x7f",
    "\x85",
    "\x0b",
    "\x0c",
    "\u202e",
    "\u202a",
    "\u2066",
    "\u2069",
    "\u200e",
    "\u200f",
    "\u061c",
    "\u200b",
    "\u2060",
    "\ufeff",
    "\u00ad",
    "\U000e0041",
    "\u2028",
    "\u2029",
    "\ud800",
    "\ue000",
    "\U0010ffff",
    "\u0378",
]


def _inbox(tmp_path: Path) -> tuple[AssistInbox, str]:
    inbox = AssistInbox(tmp_path / "assist.db")
    return inbox, inbox.add(from_agent="rover", reason="which seat?", questions=["window or aisle?"])


@pytest.mark.parametrize("ch", HIDDEN, ids=[f"U+{ord(c[0]):04X}" for c in HIDDEN])
def test_a_reply_with_a_hidden_character_is_refused_naming_it(tmp_path: Path, ch: str) -> None:
    inbox, rid = _inbox(tmp_path)
    for reply, at in ((f"aisle{ch}", 6), (f"{ch}aisle please", 1), (f" ai{ch}sle\r\n", 3)):
        with pytest.raises(TypedTextRefused) as e:
            inbox.answer(rid, reply)
        assert f"(U+{ord(ch[0]):04X} at character {at})" in str(e.value), str(e.value)
    row = inbox.get(rid)
    assert row is not None and row["status"] == "open" and row["reply"] is None  # nothing kept, still open


def test_line_ends_are_normalised_and_ordinary_text_is_kept(tmp_path: Path) -> None:
    inbox, rid = _inbox(tmp_path)
    reply = "  aisle,\r\nthanks\rsee\tyou \u2764\ufe0f \U0001f468\u200d\U0001f469\u200d\U0001f467 \u05e9\u05dc\u05d5\u05dd  "  # noqa: E501 (verbatim text)
    assert inbox.answer(rid, reply)
    row = inbox.get(rid)
    assert row is not None and row["reply"] == (
        "aisle,\nthanks\nsee\tyou \u2764\ufe0f "
        "\U0001f468\u200d\U0001f469\u200d\U0001f467 \u05e9\u05dc\u05d5\u05dd"
    )


def test_blank_and_oversized_replies_are_refused_clearly() -> None:
    for blank in ("", "   ", "\r\n\t"):
        with pytest.raises(TypedTextRefused, match="needs some text"):
            typed_text(blank, limit=10)
    with pytest.raises(TypedTextRefused, match="at most 10 characters"):
        typed_text("x" * 11, limit=10)


def test_many_answering_at_once_exactly_one_counts(tmp_path: Path) -> None:
    inbox, rid = _inbox(tmp_path)
    n = 8
    start = threading.Barrier(n)
    results: dict[int, bool] = {}

    def answer(i: int) -> None:
        start.wait()
        results[i] = inbox.answer(rid, f"reply {i}")

    threads = [threading.Thread(target=answer, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == n and sum(results.values()) == 1, results
    [winner] = [i for i, ok in results.items() if ok]
    row = inbox.get(rid)
    assert row is not None and row["status"] == "answered" and row["reply"] == f"reply {winner}"
