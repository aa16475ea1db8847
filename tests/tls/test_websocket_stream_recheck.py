"""A stream on an A2A WebSocket is checked as a stream over HTTP is (``app/stream_recheck.py``): every frame
was checked again (``test_websocket_recheck.py``) but the events of a stream already open were not, so a
client certificate revoked while its task streamed still received the rest, the result included. Now each
event is sent only while the connection's credentials still name its caller; a certificate that stays good
gets the whole stream."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
from tests.tls.test_stream_recheck import _with_toolbox
from tests.tls.tls_rig import client_context, https_sentinel, tls_config
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.timeout(240)


def _slow_task(seconds: float) -> dict[str, Any]:
    data = {"type": "tool_call", "tool_call_id": "t", "name": "tb__slow", "args": {"seconds": seconds}}
    message = {"messageId": str(uuid.uuid4()), "role": "ROLE_USER", "parts": [{"data": data}]}
    return {"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage", "params": {"message": message}}


async def _frames(url: str, ctx: Any, on_first: Any = None) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []
    async with connect(url, ssl=ctx, subprotocols=["a2a.v1.json"]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps(_slow_task(4.0)))
        try:
            while True:
                frame = json.loads(await ws.recv())
                got.append(frame)
                if len(got) == 1 and on_first is not None:
                    on_first()
                if frame.get("frame") == "fin":
                    break
        except ConnectionClosed:
            pass
    return got


def _completed(frames: list[dict[str, Any]]) -> bool:
    return "TASK_STATE_COMPLETED" in json.dumps([f.get("result") for f in frames if f.get("frame") == "ev"])


async def test_a_certificate_revoked_while_its_websocket_streams_gets_nothing_more(tmp_path, pki):
    cfg = _with_toolbox(tls_config(tmp_path, pki))
    with https_sentinel(cfg, pki) as (base, _):
        url = base.replace("https://", "wss://") + "/a2a/ws"
        whole = await _frames(url, client_context(pki, pki.bob))
        assert _completed(whole) and whole[-1].get("result") is not None, whole  # the path works

        revoke = lambda: pki.ca.revoke(f"{pki.alice.serial:x}")  # noqa: E731
        cut = await _frames(url, client_context(pki, pki.alice), revoke)
        assert cut and not _completed(cut), cut  # the result never reached the revoked caller
        last = cut[-1]
        assert last.get("frame") == "fin" and "revoked" in last["error"]["message"], last
