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


@pytest.mark.parametrize("spelt", [b'"x\\ud800"', b'"\\udfff"', b'"a\\ud83d b"'])
@pytest.mark.parametrize("where", ["args", "text"])
async def test_a_lone_surrogate_anywhere_in_a_frame_is_refused(rig, http, spelt, where):
    """Half a surrogate pair is no Unicode: no reader agrees on it (one replaces it, one drops it, UTF-8
    cannot carry it). Refused at A2A's door as on the MCP fronts (a regression test: it held on main)."""
    if where == "args":
        edited = _message(7).replace(b'"args": {"text": "x"}', b'"args": {"text": ' + spelt + b"}")
    else:
        edited = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "SendMessage",
                             "params": {"message": user_message({"text": "@@"})}}).encode()
        edited = edited.replace(b'"@@"', spelt)
    r = await http.post(rig.rpc_url, content=edited, headers={"content-type": "application/json"})
    answer = r.json()
    assert answer["error"]["code"] == -32602 and "surrogate" in answer["error"]["message"], answer
    assert answer["id"] == 7
    assert rig.port.calls == [] and len(rig.service.store) == 0
