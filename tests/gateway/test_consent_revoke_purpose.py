"""Revoking a consent for one purpose ends that purpose only: ``ConsentBook.revoke`` took no purpose, so the
console's Revoke on one row (kind + purpose) ended every purpose of the kind. Through the real gateway and the
real mcp Client: two purposes of one kind, one revoked, a read under the other still runs and one under the
revoked asks again. And the ``consent revoke`` command: ``--purpose`` ends that one, without it every purpose
of the kind, and it says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.cli import main
from sentinel_mcp.gateway.consents import ConsentBook

from .helpers import make_config

pytestmark = pytest.mark.timeout(120)
KEEP, DROP = "show the weather", "plan a trip/with friends"


def purpose(text: str) -> dict[str, Any]:
    return {"sentinel/purpose": text}


async def test_revoking_one_purpose_keeps_the_other_and_its_reads(data_dir: Path) -> None:
    async with running_gateway(make_config(data_dir, fork=True, personal={"tb__echo": "messages"})) as rt:
        book = rt.gateway.consent_gate.book
        for p in (KEEP, DROP):
            book.grant("owner", "messages", p)
        async with Client(rt.front.server, mode="legacy") as c:  # no elicitation: a question is an error
            for p in (KEEP, DROP):
                ok = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(p))
                assert not ok.is_error, ok.content
            assert book.revoke("owner", "messages", DROP, by="console") == 1
            assert [(x.kind, x.purpose) for x in book.list("owner")] == [("messages", KEEP)]
            kept = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(KEEP))
            assert not kept.is_error, kept.content
            again = await c.call_tool("tb__echo", {"text": "hi"}, meta=purpose(DROP))
            assert again.is_error and "consent" in again.content[0].text.lower(), again.content
        # another principal naming the same kind and purpose ends nothing of the owner's
        assert book.revoke("bob", "messages", KEEP) == 0
        assert [(x.kind, x.purpose) for x in book.list("owner")] == [("messages", KEEP)]


@pytest.mark.parametrize("bad", ["", None, 7, b"x", ["x"]])
def test_a_purpose_that_is_not_non_empty_text_revokes_nothing(tmp_path: Path, bad: Any) -> None:
    book = ConsentBook(tmp_path / "consents.db")
    try:
        book.grant("owner", "messages", KEEP)
        book.grant("owner", "messages", DROP)
        if bad is None:  # no purpose: every purpose of the kind, as before
            assert book.revoke("owner", "messages", bad) == 2
            return
        with pytest.raises(ValueError):
            book.revoke("owner", "messages", bad)
        with pytest.raises(ValueError):  # a purpose without its kind is never "every kind"
            book.revoke("owner", None, KEEP)
        assert len(book.list("owner")) == 2
        assert book.revoke("owner", "messages", "x" * 100_000) == 0  # long: matched exactly, never cut
        assert book.revoke("owner", "messages", "plan a trip") == 0  # a prefix of DROP is another purpose
        assert len(book.list("owner")) == 2
    finally:
        book.close()


def test_the_command_revokes_one_purpose_or_says_it_revoked_all(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("SENTINEL_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("SENTINEL_CONFIG", raising=False)
    for p in (KEEP, DROP, "third"):
        assert main(["consent", "grant", "bob", "messages", "--purpose", p]) == 0
    capsys.readouterr()
    assert main(["consent", "revoke", "bob", "messages", "--purpose", DROP]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out) | {} == {"revoked": 1, "principal": "bob", "kind": "messages", "purpose": DROP,
                                         "all_purposes": False}
    for refused in (["consent", "revoke", "bob", "messages", "--purpose", ""],
                    ["consent", "revoke", "bob", "--purpose", KEEP]):
        assert main(refused) == 2
        out = capsys.readouterr()
        assert out.out == "" and "nothing revoked" in out.err, out
    assert main(["consent", "revoke", "bob", "messages"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["revoked"] == 2 and json.loads(out.out)["all_purposes"] is True
    assert "every purpose of messages" in out.err, out.err
