"""An answer's caller is checked again right before each part of the answer is sent, not once a second.

What broke (red team "rt-llm"): ``app/stream_recheck.py`` asked the caller's check only once a second had
passed since the last ask (the request's own authentication counting as one), so an answer ready within a
second of its request (a quick model call, a queued call released just then) still went, whole, to a token
rotated meanwhile; and a stream's next chunk inside that second likewise. The check is cheap (a SHA-256 and a
cached file look, a few microseconds: the token file itself is looked at most once a second by
``file_secret.py``), so it is now asked before the answer's head and before each chunk of its body.

Real parts: the owner's token followed from its file and really replaced (``owner_token.replace``), the
real request check (``CredentialCheck``) and the real ``StreamRecheck`` wrapping an ASGI send. The file is
looked at on every ask here (a clock that moves a second per reading): only the answer's own recheck decides.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.app.stream_recheck import StreamRecheck
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.credential_stamp import CredentialCheck
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver
from tests.support.followed_token import followed_owner_token


def _check(keys: Path) -> CredentialCheck:
    source, token = followed_owner_token(keys)
    tokens = TokenResolver()
    owner = Principal("owner", "token")
    tokens.follow(owner, source)
    check = CredentialCheck(Authenticator([tokens]), Credentials(bearer=token), owner)
    assert check().name == "owner"  # the request's own authentication
    return check


class _Wire:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.refused: list[str] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    async def refuse(self, why: str) -> None:
        self.refused.append(why)


HEAD = {"type": "http.response.start", "status": 200, "headers": []}


@pytest.mark.parametrize("rotate", [True, False])
async def test_an_answer_ready_at_once_is_refused_to_a_token_rotated_meanwhile(tmp_path: Path,
                                                                               rotate: bool) -> None:
    keys = tmp_path / "keys"
    check, wire = _check(keys), _Wire()
    answer = StreamRecheck(wire.send, check, "/mcp", wire.refuse)
    if rotate:
        owner_token.replace(keys)
    await answer.send(HEAD)
    await answer.send({"type": "http.response.body", "body": b'{"result": "secret"}', "more_body": False})
    if not rotate:
        assert wire.refused == [] and [m["type"] for m in wire.sent] == ["http.response.start",
                                                                           "http.response.body"]
        return
    assert wire.sent == [] and len(wire.refused) == 1, (wire.sent, wire.refused)
    assert answer.cut is not None


async def test_a_streams_next_chunk_is_withheld_at_once_after_the_rotation(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    check, wire = _check(keys), _Wire()
    stream = StreamRecheck(wire.send, check, "/mcp", wire.refuse)
    await stream.send(HEAD)
    await stream.send({"type": "http.response.body", "body": b"data: progress\n\n", "more_body": True})
    owner_token.replace(keys)
    await stream.send({"type": "http.response.body", "body": b"data: the result\n\n", "more_body": True})
    await stream.send({"type": "http.response.body", "body": b"", "more_body": False})
    bodies = [m.get("body") for m in wire.sent if m["type"] == "http.response.body"]
    assert bodies == [b"data: progress\n\n", b""], bodies  # the stream ended there; the result never went
    assert wire.refused == [] and stream.cut is not None
