"""Each note is its writer's: through the real gateway, a principal finds, lists and deletes only the notes
it wrote (another's note answers as a missing one, under every search and id spelling), and fills only its
own share of the store; standalone calls and the notes kept before notes had owners are the owner's."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from tests.device.device_helpers import Answers, connect, sim_server

from device_tools.modules import notes
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import Completed, NeedsInput, Refused
from sentinel_mcp.paths import RULEBASES_DIR

pytestmark = pytest.mark.timeout(120)


def config(tmp_path: Path) -> Any:
    return parse_config({"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "builtins": ["device"], "data_dir": str(tmp_path),
        "principals": [{"name": "alice", "token": "alice-token-0123456789abcdef"},
                       {"name": "bob", "token": "bob-token-0123456789abcdef00"}],
        "device": {"backend": "simulated", "risk_classifier": False}}}, base_dir=tmp_path)


async def call(rt: Any, who: str, tool: str, args: dict[str, Any]) -> Any:
    """The call as the principal's client makes it, its person saying yes to each question the guard asks."""
    answers: dict[str, Answer] = {}
    for _ in range(3):  # bounded: a write is asked once
        out = await rt.gateway.invoke(f"device__{tool}", args, session_id=f"s-{who}", origin="client",
                                      principal=who, answers=answers or None)
        if not isinstance(out, NeedsInput):
            break
        for q in out.questions:
            props = (q.requested_schema or {}).get("properties", {})
            answers[q.key] = Answer(action="accept", content={k: True for k in props})
    assert isinstance(out, Completed), out
    return out.result


def found(result: Any) -> list[str]:
    return [n["title"] for n in result.structured_content["notes"]]


async def test_a_principal_sees_and_deletes_only_its_own_notes(tmp_path: Path) -> None:
    async with running_gateway(config(tmp_path)) as rt:
        mine = await call(rt, "alice", "notes_add", {"title": "alice's passport number", "body": "X123"})
        note = mine.structured_content["id"]
        await call(rt, "bob", "notes_add", {"title": "bob's list"})
        assert found(await call(rt, "alice", "notes_search", {})) == ["alice's passport number"]
        for query in (None, "", "passport", "%", "_", "alice", "X123", "'", "' OR 1=1 --"):
            args = {} if query is None else {"query": query}
            assert "alice's passport number" not in found(await call(rt, "bob", "notes_search", args)), query
        # alice's note is as missing to bob as one that never was, under every spelling of its id
        never = await call(rt, "bob", "notes_delete", {"note_id": 999_999})
        gone = await call(rt, "bob", "notes_delete", {"note_id": note})
        assert gone.is_error and gone.content[0].text == never.content[0].text.replace("999999", str(note))
        for spelled in (str(note), f" {note}", [note], True):  # other spellings never reach the store
            refused = await rt.gateway.invoke("device__notes_delete", {"note_id": spelled},
                                              session_id="s-bob", origin="client", principal="bob")
            assert isinstance(refused, Refused) and "invalid arguments" in refused.reason, (spelled, refused)
        assert found(await call(rt, "alice", "notes_search", {})) == ["alice's passport number"]
        assert not (await call(rt, "alice", "notes_delete", {"note_id": note})).is_error
        assert found(await call(rt, "alice", "notes_search", {})) == []
        assert found(await call(rt, "bob", "notes_search", {})) == ["bob's list"]


async def test_one_principal_fills_only_its_own_share(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(notes, "MAX_NOTES", 3)
    async with running_gateway(config(tmp_path)) as rt:
        added = [await call(rt, "bob", "notes_add", {"title": f"n{i}"}) for i in range(4)]
        assert [a.is_error for a in added] == [False, False, False, True]
        assert not (await call(rt, "alice", "notes_add", {"title": "still room for alice"})).is_error
        monkeypatch.setattr(notes, "MAX_ALL_NOTES", 4)  # the whole store's bound holds too
        full = await call(rt, "alice", "notes_add", {"title": "one too many"})
        assert full.is_error and "the notes store holds 4" in full.content[0].text


async def test_notes_kept_before_owners_are_the_owners(tmp_path: Path) -> None:
    # a notes file of the earlier schema (no owner column), as a gateway before this one left it
    path = tmp_path / "notes.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL, "
                   "body TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '', created TEXT NOT NULL)")
        db.execute("INSERT INTO notes (title, created) VALUES ('kept from before', '2026-01-01T00:00:00')")
    store = notes.NoteStore(path)
    assert [n["title"] for n in store.list("owner", None, 10)] == ["kept from before"]
    assert store.list("alice", None, 10) == []
    # standalone (no gateway names a principal): the owner's notes
    server = sim_server(tmp_path)
    async with connect(server, "auto", Answers()) as client:
        listed = await client.call_tool("notes_search", {})
    assert [n["title"] for n in listed.structured_content["notes"]] == ["kept from before"]
