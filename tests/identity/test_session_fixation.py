"""Session fixation over streamable HTTP (red team "red26"): an ``initialize`` carrying an ``Mcp-Session-Id``
the client chose opens no session under that id (so no id can be planted for someone else to be handed), and
one carrying another principal's live id neither joins nor re-opens that session: both are answered exactly
as an initialize under an id nobody was given, in every spelling of the id, and the owner's session still
serves its owner afterwards.

A real Sentinel over HTTP (the identity rig), raw HTTP on 127.0.0.1."""

from __future__ import annotations

import uuid
from typing import Any, Iterator

import httpx2
import pytest

from .identity_rig import ALICE, BOB, http_sentinel, write_config
from .test_every_method_every_door import ACCEPT, HANDSHAKE, INIT, _handshake, _request

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with http_sentinel(write_config(tmp_path_factory.mktemp("fixation"))) as (url, _proc):
        yield url


async def _initialize(http: httpx2.AsyncClient, base: str, token: str, sid: str) -> Any:
    r = await http.post(f"{base}/mcp", json=_request("initialize", INIT, 1),
                        headers={**ACCEPT, "Authorization": f"Bearer {token}", "Mcp-Session-Id": sid})
    return r.status_code, r.text, r.headers.get("mcp-session-id")


async def _ping(http: httpx2.AsyncClient, base: str, token: str, sid: str) -> int:
    r = await http.post(f"{base}/mcp", json=_request("ping", {}, 2),
                        headers={**ACCEPT, "Authorization": f"Bearer {token}", "Mcp-Session-Id": sid,
                                 "MCP-Protocol-Version": HANDSHAKE})
    return r.status_code


async def test_an_initialize_under_a_chosen_or_anothers_session_id_opens_and_joins_nothing(base: str) -> None:
    async with httpx2.AsyncClient(timeout=60) as http:
        nobodys = await _initialize(http, base, BOB, uuid.uuid4().hex)
        assert nobodys[0] == 404 and nobodys[2] is None, nobodys
        # a chosen id: refused, and nothing was opened under it for the chooser or anyone else
        planted = uuid.uuid4().hex
        assert await _initialize(http, base, BOB, planted) == nobodys
        assert await _ping(http, base, BOB, planted) == 404
        assert await _ping(http, base, ALICE, planted) == 404
        # bob's live session, named by alice's initialize in any spelling: as unknown to her as a made-up id
        bobs = await _handshake(http, base, BOB)
        wrong = []
        for spelt in (bobs, bobs.upper(), str(uuid.UUID(hex=bobs))):
            got = await _initialize(http, base, ALICE, spelt)
            if got != nobodys:
                wrong.append((spelt, got))
        assert not wrong, wrong
        assert await _ping(http, base, BOB, bobs) == 200  # still his, still serving him
        assert await _ping(http, base, ALICE, bobs) == 404
