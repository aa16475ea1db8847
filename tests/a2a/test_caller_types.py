"""What a caller sends to Sentinel's A2A server (SendMessage, SendStreamingMessage, GetTask, ListTasks,
CancelTask, SubscribeToTask, and the design messages in its data parts) is read as A2A's JSON mapping says,
as a peer's answer is (``peer_answer.py``): a field left out, or null, is its default; a field present is of
its type, strictly. Before, a sensor request's ``retention`` of ``"300"`` or ``true`` (one second) and a
``rate`` of ``"2"`` or ``true`` were read as numbers, and a null flag (``returnImmediately: null``, proto3's
"default") was refused. Each wrong type is a JSON-RPC error (-32602, or -32600/-32700 for the envelope),
never a crash or a hang, and nothing runs. Real HTTP on 127.0.0.1 (``tests/a2a/a2a_rig.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest
import pytest_asyncio
from tests.a2a.a2a_rig import Served, open_port, rpc, serve

from sentinel_mcp.a2a.settings import A2ASettings

# one event loop for the module: the server the refused cases share lives in it
pytestmark = [pytest.mark.timeout(120), pytest.mark.asyncio(loop_scope="module")]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared() -> AsyncIterator[Served]:
    """One server for every case refused before it runs (starting one is most of a case's time): each case
    asserts that nothing ran or was relayed, so on a shared server that holds for every case before it too."""
    async with open_port() as port, serve(port, A2ASettings(name="sentinel-test")) as served:
        yield served


@pytest_asyncio.fixture(loop_scope="module")
async def rig() -> AsyncIterator[Served]:
    """A server of the case's own (a case that may run what it asks for)."""
    async with open_port() as port, serve(port, A2ASettings(name="sentinel-test")) as served:
        yield served


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def http() -> AsyncIterator[httpx2.AsyncClient]:
    async with httpx2.AsyncClient(timeout=30, headers={"A2A-Version": "1.0"}) as c:
        yield c


def user_message(*parts: dict[str, Any]) -> dict[str, Any]:
    """A user's message with a fixed id (test ids are the same in every process)."""
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": list(parts)}


def sensor(**fields: Any) -> dict[str, Any]:
    data = {"type": "sensor_request", "sensor": "location", "scope": "minimal", "policy_tag": "why", **fields}
    return {"message": user_message({"data": data})}


def message(**fields: Any) -> dict[str, Any]:
    return {"message": {**user_message({"text": "hi"}), **fields}}


def part(**fields: Any) -> dict[str, Any]:
    return {"message": user_message(fields)}


BOOLS = ["true", "yes", 1, 0, "1", [], {}]
INTS = ["2", True, 2.0, "1e3", [2], {"n": 2}]
TEXTS = [5, True, 1.5, ["x"], {"x": 1}]
OBJECTS = ["x", 1, True, ["x"], [{"a": 1}]]
LISTS = ["text/plain", 1, True, {"a": 1}]

WRONG: list[tuple[str, Any]] = [
    *(("SendMessage", message(role=v)) for v in ("ROLE_ROOT", "user", "ROLE_user", 1, None, ["ROLE_USER"])),
    *(("SendMessage", message(parts=v)) for v in ("hi", {"text": "hi"}, 1, True, ["hi"], [None], None)),
    *(("SendMessage", message(messageId=v)) for v in TEXTS),
    *(("SendMessage", message(contextId=v)) for v in TEXTS),
    *(("SendMessage", message(taskId=v)) for v in TEXTS),
    *(("SendMessage", message(metadata=v)) for v in OBJECTS),
    *(("SendMessage", message(extensions=v)) for v in ("abc", 1, {"a": 1}, [1])),
    *(("SendMessage", message(referenceTaskIds=v)) for v in ("abc", [1], {"a": 1})),
    *(("SendMessage", part(text=v)) for v in TEXTS),
    *(("SendMessage", part(text="hi", metadata=v)) for v in OBJECTS),
    *(("SendMessage", part(text="hi", mediaType=v)) for v in TEXTS),
    *(("SendMessage", part(text="hi", filename=v)) for v in TEXTS),
    *(("SendMessage", part(raw=v)) for v in (1, ["aGk="], "not base64!")),
    ("SendMessage", part(data=None)),
    *(("SendMessage", {**message(), "metadata": v}) for v in OBJECTS),
    *(("SendMessage", {**message(), "configuration": {"returnImmediately": v}}) for v in BOOLS),
    *(("SendMessage", {**message(), "configuration": {"historyLength": v}}) for v in INTS),
    *(("SendMessage", {**message(), "configuration": {"acceptedOutputModes": v}}) for v in LISTS),
    *(("SendMessage", {**message(), "configuration": v}) for v in ("x", 1, True, [])),
    *(("SendMessage", {"message": v}) for v in ("hi", 1, True, [], None)),
    *(("SendMessage", sensor(retention=v)) for v in INTS),
    *(("SendMessage", sensor(rate=v)) for v in ("2", True, [2], {"r": 2})),
    *(("SendMessage", sensor(sensor=v)) for v in (1, True, ["location"])),
    *(("SendMessage", sensor(policy_tag=v)) for v in TEXTS),
    *(("SendStreamingMessage", message(role=v)) for v in ("ROLE_ROOT", 1)),
    *(("SendStreamingMessage", {**message(), "configuration": {"returnImmediately": v}}) for v in BOOLS),
    *(("GetTask", {"id": v}) for v in TEXTS),
    *(("GetTask", {"id": "x", "historyLength": v}) for v in INTS),
    *(("ListTasks", {"includeArtifacts": v}) for v in BOOLS),
    *(("ListTasks", {"pageSize": v}) for v in INTS),
    *(("ListTasks", {"status": v}) for v in ("completed", 3, True)),
    *(("ListTasks", {"contextId": v}) for v in TEXTS),
    *(("CancelTask", {"id": v}) for v in TEXTS),
    *(("CancelTask", {"id": "x", "metadata": v}) for v in OBJECTS),
    *(("SubscribeToTask", {"id": v}) for v in TEXTS),
]


def shown(value: object) -> str:
    """A case's id: the params without the well-formed message around the field under test."""
    text = ascii(value).replace(ascii(user_message({"text": "hi"})), "M")
    return text.replace("'messageId': 'm-1', 'role': 'ROLE_USER', ", "")[:160]


@pytest.mark.parametrize(("method", "params"), WRONG, ids=shown)
async def test_a_field_of_the_wrong_type_is_invalid_params(shared, http, method: str, params: Any) -> None:
    body = await rpc(http, shared.rpc_url, method, params)
    assert body.get("error", {}).get("code") == -32602, body
    assert shared.port.calls == [], shared.port.calls  # nothing ran, nothing was relayed


NULL_IS_DEFAULT: list[tuple[str, Any]] = [
    ("SendMessage", {**message(), "configuration": {"returnImmediately": None, "historyLength": None,
                                                    "acceptedOutputModes": None}}),
    ("SendMessage", {**message(contextId=None, taskId=None, metadata=None, extensions=None),
                     "configuration": None, "metadata": None, "tenant": None}),
    ("SendMessage", part(text="hi", data=None, raw=None, url=None, metadata=None, mediaType=None)),
    ("ListTasks", {"includeArtifacts": None, "pageSize": None, "contextId": None, "status": None}),
    ("GetTask", {"id": "x", "historyLength": None, "tenant": None}),
]


@pytest.mark.parametrize(("method", "params"), NULL_IS_DEFAULT, ids=shown)
async def test_a_null_field_is_its_default(rig, http, method: str, params: Any) -> None:
    body = await rpc(http, rig.rpc_url, method, params)
    error = body.get("error") or {}
    assert error.get("code") != -32602, body  # (GetTask of an unknown id: -32001, not a type error)


HUGE = {"deep": '{"a": ' * 5_000 + '"x"' + "}" * 5_000, "deep-list": "[" * 100_000 + "]" * 100_000,
        "long-text": '{"k": "' + "x" * 2_000_000 + '"}',
        "many-keys": "{" + ", ".join(f'"{i}": {i}' for i in range(200_000)) + "}",
        "huge-int": '{"n": ' + "9" * 5_000 + "}", "nan": '{"n": NaN}'}


@pytest.mark.parametrize("metadata", list(HUGE.values()), ids=list(HUGE))
async def test_huge_or_deep_values_are_an_error_not_a_crash(shared, http, metadata: str) -> None:
    import json
    head = ('{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
            + json.dumps(message()["message"]) + ', "metadata": ')
    raw = head + metadata + "}}"
    r = await http.post(shared.rpc_url, content=raw.encode(), headers={"content-type": "application/json"})
    assert r.status_code in (200, 413), r.status_code
    if r.status_code == 200:
        assert r.json()["error"]["code"] in (-32700, -32600, -32602), r.text[:300]
    assert shared.port.calls == [], shared.port.calls
