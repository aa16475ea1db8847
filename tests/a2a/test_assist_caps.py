"""One agent cannot use up the person's open help requests: each agent has its own cap besides the total."""

from __future__ import annotations

from pathlib import Path

import pytest

from sentinel_mcp.a2a.assist_inbox import MAX_OPEN, MAX_OPEN_PER_AGENT, AssistInbox, InboxFull


@pytest.mark.parametrize(
    "spelling",
    [
        {},  # plain requests
        {"channel": "chan-1"},  # bridged chats count too
        {"task_id": "t-1", "context": "ctx"},
        {"questions": [], "reason": ""},  # empty requests
        # oversize ones (truncated, still counted)
        {"questions": ["q" * 10_000] * 50, "reason": "r" * 100_000},
    ],
)
def test_one_agent_has_its_own_cap_and_the_others_still_get_through(tmp_path: Path, spelling: dict) -> None:
    inbox = AssistInbox(tmp_path / "assist.db")
    try:
        fields = {"reason": "help", "questions": ["?"], **spelling}
        for _ in range(MAX_OPEN_PER_AGENT):
            inbox.add(from_agent="rover", **fields)
        for _ in range(3):
            with pytest.raises(InboxFull, match="per agent"):
                inbox.add(from_agent="rover", **fields)
        # other agents, the owner's own, a name that only starts like rover's: each has its own room
        for other in ("mallory", "owner", "rover2", "ROVER"):
            inbox.add(from_agent=other, reason="real", questions=["?"])
        # a reply frees room for rover again
        first = inbox.open_requests(limit=1)[0]
        assert first["from_agent"] == "rover" and inbox.answer(first["id"], "ok")
        inbox.add(from_agent="rover", **fields)
        with pytest.raises(InboxFull):
            inbox.add(from_agent="rover", **fields)
    finally:
        inbox.release()


def test_a_name_past_the_stored_length_is_counted_as_stored(tmp_path: Path) -> None:
    """The stored name is cut at 200 characters: long names differing after that are one agent, not many."""
    inbox = AssistInbox(tmp_path / "assist.db")
    try:
        base = "a" * 200
        for i in range(MAX_OPEN_PER_AGENT):
            inbox.add(from_agent=f"{base}{i}", reason="r", questions=[])
        with pytest.raises(InboxFull, match="per agent"):
            inbox.add(from_agent=f"{base}-more", reason="r", questions=[])
    finally:
        inbox.release()


def test_the_total_leaves_room_for_many_agents_at_their_cap() -> None:
    assert MAX_OPEN >= 20 * MAX_OPEN_PER_AGENT
