"""A2A's JSON-RPC door reads a frame once, as the MCP fronts do (``wire_limits.loads``): a name given twice
in one object is refused before anything runs (-32602 inside ``params``, -32600 elsewhere), answered with the
request's id when the id itself is given once. Before, the last value was acted on (a ``taskId`` or a tool
part's argument), while a proxy, a log or a peer's reader that keeps the first saw the other."""

from __future__ import annotations

import json

import pytest
from tests.a2a.a2a_rig import user_message

pytestmark = pytest.mark.timeout(60)


def _message(rid: int) -> bytes:
    part = {"data": {"type": "tool_call", "tool_call_id": "c1", "name": "demo__echo", "args": {"text": "x"}}}
    return json.dumps({"jsonrpc": "2.0", "id": rid, "method": "SendMessage",
                       "params": {"message": user_message(part)}}).encode()


@pytest.mark.parametrize(("edit", "code", "rid"), [
    (lambda b: b.replace(b'"args": {"text": "x"}', b'"args": {"text": "x", "text": "y"}'), -32602, 7),
    (lambda b: b.replace(b'"name": "demo__echo"', b'"name": "demo__echo", "name": "demo__other"'), -32602, 7),
    (lambda b: b.replace(b'"method": "SendMessage"', b'"method": "GetTask", "method": "SendMessage"'), -32600,
     7),
    (lambda b: b.replace(b'"id": 7', b'"id": 7, "id": 8'), -32600, None),
])
async def test_a_name_given_twice_is_refused_and_nothing_runs(rig, http, edit, code, rid):
    body = _message(7)
    edited = edit(body)
    assert edited != body  # the rewrite matched
    r = await http.post(rig.rpc_url, content=edited, headers={"content-type": "application/json"})
    answer = r.json()
    assert answer["error"]["code"] == code and "twice" in answer["error"]["message"], answer
    assert answer["id"] == rid, answer
    assert rig.port.calls == [] and len(rig.service.store) == 0
