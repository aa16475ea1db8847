"""A WebSocket message past the A2A frame bound is never read whole: the server stops reading it at
``max_frame_bytes`` and closes the socket with 1009 (message too big), however the peer spells it (one frame,
many fragments, a small deflated frame that inflates past the bound). Before, the server read any message up
to uvicorn's own 16 MiB (a deflated one from a few kilobytes on the wire), on each of a caller's sockets, and
only then refused it. A message within the bound is still answered, on the same server's sockets."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.a2a.a2a_rig import open_port, serve
from tests.a2a.test_ws_binding import Peer
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.app.serve import http_server
from sentinel_mcp.config import parse_config

pytestmark = pytest.mark.timeout(60)

BOUND = 4096


def _get_task(pad: int) -> str:
    params = {"id": "x", "pad": "y" * pad}
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": params})


async def _closed_as_too_big(url: str, message: Any, **kw: Any) -> None:
    async with connect(url, subprotocols=["a2a.v1.json"], max_size=None, **kw) as ws:
        await ws.send(message)
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009, closed.value


async def test_a_message_past_the_bound_is_refused_before_it_is_read_whole():
    async with open_port() as port, serve(port, A2ASettings(max_frame_bytes=BOUND)) as srv:
        async with connect(srv.ws_url, subprotocols=["a2a.v1.json"]) as ws:  # within the bound: answered
            assert (await Peer(ws).raw(_get_task(BOUND // 2)))["error"]["code"] == -32001
        far = _get_task(64 * BOUND)
        await _closed_as_too_big(srv.ws_url, far, compression=None)  # one frame
        fragments = [far[i : i + 1024] for i in range(0, len(far), 1024)]
        await _closed_as_too_big(srv.ws_url, fragments, compression=None)  # a fragmented message
        await _closed_as_too_big(srv.ws_url, far)  # deflated: a few hundred bytes on the wire
        async with connect(srv.ws_url, subprotocols=["a2a.v1.json"]) as ws:  # the server serves on
            assert (await Peer(ws).call("GetTask", {"id": "x"}))["error"]["code"] == -32001
        assert srv.port.calls == []


def test_the_gateways_server_reads_no_websocket_message_past_the_a2a_bound(tmp_path):
    raw = {"sentinel": {"a2a": {"max_frame_bytes": BOUND}}, "mcpServers": {}}
    server = http_server(parse_config(raw, source="<test>", base_dir=tmp_path), "127.0.0.1", 0)
    assert server.config.ws_max_size == BOUND
