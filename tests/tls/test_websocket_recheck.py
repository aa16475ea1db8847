"""Every frame of an A2A WebSocket is a request, checked as a request on a kept-alive HTTP connection is (red
team "tls", finding 5): the socket was authenticated once, at its upgrade, so a client certificate revoked
(or expired, or whose CA was taken out of ``ca``) while the socket stayed open kept calling tools as its
principal."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.tls.tls_rig import client_context, https_sentinel, tls_config
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

pytestmark = pytest.mark.timeout(240)


async def test_a_certificate_revoked_while_its_websocket_is_open_calls_nothing_more(tmp_path, pki):
    cfg = tls_config(tmp_path, pki)
    with https_sentinel(cfg, pki) as (base, _):
        url = base.replace("https://", "wss://") + "/a2a/ws"
        async with connect(url, ssl=client_context(pki, pki.alice), subprotocols=["a2a.v1.json"]) as ws:  # type: ignore[list-item]

            async def get_task(i: int) -> dict:
                frame = {"jsonrpc": "2.0", "id": i, "method": "GetTask", "params": {"id": "x"}}
                await ws.send(json.dumps(frame))
                return json.loads(await ws.recv())

            assert (await get_task(1))["error"]["code"] == -32001  # alice, past authentication
            pki.ca.revoke(f"{pki.alice.serial:x}")
            await asyncio.sleep(1.1)  # the front looks at its files at most once a second
            answer = await get_task(2)
            assert answer["error"]["code"] == -32600 and "has been revoked" in answer["error"]["message"]
            with pytest.raises(ConnectionClosed) as closed:
                await get_task(3)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
