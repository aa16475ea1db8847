"""The console's live count of help requests: counted by the store (SQL COUNT), not by the first page of rows.
"""

from __future__ import annotations

from types import SimpleNamespace

from sentinel_mcp.a2a.assist_inbox import MAX_OPEN, AssistInbox
from sentinel_mcp.console import assist_pages
from sentinel_mcp.identity.principal import OWNER, Principal


async def test_the_live_count_counts_every_open_request_the_owner_may_answer(tmp_path):
    inbox = AssistInbox(tmp_path / "assist.db")
    waiting = 120  # more than the page lists (open_requests' limit is 50)
    for i in range(waiting):
        inbox.add(from_agent=f"rover-{i % 10}", reason=f"r{i}", questions=["q"])  # within each agent's cap
    inbox.add(from_agent="rover", reason="bridged", questions=["q"], channel="chan-1")  # answered on its chat
    inbox.add(from_agent=OWNER.name, reason="the viewer's own", questions=["q"])  # not the viewer's to answer
    answered = inbox.add(from_agent="rover", reason="done", questions=["q"])
    assert inbox.answer(answered, "yes")
    expired = inbox.add(from_agent="rover", reason="late", questions=["q"])
    inbox.close(expired)
    assert len(inbox.open_requests()) == 50 < waiting < MAX_OPEN

    console = SimpleNamespace(holder=SimpleNamespace(a2a_service=SimpleNamespace(inbox=inbox)))
    owner = SimpleNamespace(principal=OWNER)
    assert await assist_pages.count_for(console, owner) == waiting  # type: ignore[arg-type]
    other = SimpleNamespace(principal=Principal("bob", "token", tools=(), upstreams=()))
    assert await assist_pages.count_for(console, other) == 0  # type: ignore[arg-type]
    no_a2a = SimpleNamespace(holder=SimpleNamespace(a2a_service=None))
    assert await assist_pages.count_for(no_a2a, owner) == 0  # type: ignore[arg-type]
