"""Notes are written by every caller that may use the device: each note and their number are bounded, and
a note past a bound is refused naming it, with nothing stored."""

from __future__ import annotations

import pytest
from tests.device.device_helpers import Answers, connect, sim_server

from device_tools.modules import notes


@pytest.mark.parametrize("arguments,said", [
    ({"title": "t" * 201}, "at most 200 characters"),
    ({"title": "ok", "body": "b" * 64_001}, "64,000"),
    ({"title": "ok", "tags": [f"t{i}" for i in range(33)]}, "at most 32 tags"),
    ({"title": "ok", "tags": ["x" * 51]}, "at most 50 characters each"),
    ({"title": "ok", "tags": ["a,b"]}, "none with a comma"),
])
async def test_a_note_past_a_bound_is_refused_and_nothing_is_stored(tmp_path, arguments, said):
    server = sim_server(tmp_path)
    async with connect(server, "auto", Answers()) as client:
        refused = await client.call_tool("notes_add", arguments)
        listed = await client.call_tool("notes_search", {})
    assert refused.is_error and said in refused.content[0].text
    assert listed.structured_content["notes"] == []


async def test_the_store_holds_at_most_max_notes(tmp_path, monkeypatch):
    monkeypatch.setattr(notes, "MAX_NOTES", 3)
    server = sim_server(tmp_path)
    async with connect(server, "auto", Answers()) as client:
        added = [await client.call_tool("notes_add", {"title": f"n{i}"}) for i in range(4)]
        assert [a.is_error for a in added] == [False, False, False, True]
        assert "delete some first" in added[3].content[0].text
        await client.call_tool("notes_delete", {"note_id": added[0].structured_content["id"]})
        again = await client.call_tool("notes_add", {"title": "n4"})
    assert not again.is_error
