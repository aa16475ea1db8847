"""Drives a Sentinel A2A server with the official ``a2a-sdk`` client (run it in a venv that has a2a-sdk).

Not a pytest module: ``test_sdk_interop.py`` runs it with ``$A2A_SDK_PYTHON`` against a live server.
Usage: python sdk_client.py http://127.0.0.1:PORT   (exit 0 = every check passed)
       python sdk_client.py https://127.0.0.1:PORT CA.pem [CERT.pem KEY.pem]   (over TLS, with a client
       certificate)
"""

import asyncio
import ssl
import sys
import uuid

import httpx
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict


def data_message(data: dict, task_id: str = "", context_id: str = "") -> pb.Message:
    msg = pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER, task_id=task_id, context_id=context_id)
    part = pb.Part(media_type="application/json")
    part.data.struct_value.update(data)
    msg.parts.append(part)
    return msg


async def one_task(client, msg: pb.Message) -> pb.Task:
    task = None
    async for event in client.send_message(pb.SendMessageRequest(message=msg)):
        task = event.task
    assert task is not None, "no task in the SendMessage response"
    return task


async def main(base: str, ca: str | None = None, cert: str | None = None, key: str | None = None) -> None:
    verify: ssl.SSLContext | bool = True
    if ca:
        verify = ssl.create_default_context(cafile=ca)
        if cert:
            verify.load_cert_chain(cert, key)
    async with httpx.AsyncClient(timeout=30, verify=verify) as http:
        card = await A2ACardResolver(http, base).get_agent_card()
        assert card.supported_interfaces[0].protocol_binding == "JSONRPC"
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)

        task = await one_task(
            client,
            data_message(
                {"type": "sensor_request", "sensor": "location", "scope": "minimal", "policy_tag": "interop"}
            ),
        )
        assert task.status.state == pb.TASK_STATE_COMPLETED, pb.TaskState.Name(task.status.state)
        got = await client.get_task(pb.GetTaskRequest(id=task.id))
        assert got.id == task.id and len(got.artifacts) == 1
        listed = await client.list_tasks(pb.ListTasksRequest())
        assert task.id in [t.id for t in listed.tasks]

        asked = await one_task(
            client,
            data_message(
                {
                    "type": "tool_call",
                    "tool_call_id": "i",
                    "name": "tools__delete_file",
                    "args": {"path": "/tmp/i"},
                }
            ),
        )
        assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
        key = MessageToDict(asked.status.message)["parts"][2]["data"]["questions"][0]["key"]
        answer = {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}
        done = await one_task(client, data_message(answer, asked.id, asked.context_id))
        assert done.status.state == pb.TASK_STATE_COMPLETED

        for call, expected in (
            (client.cancel_task(pb.CancelTaskRequest(id=done.id)), "TaskNotCancelableError"),
            (client.get_task(pb.GetTaskRequest(id="nope")), "TaskNotFoundError"),
        ):
            try:
                await call
            except Exception as e:  # noqa: BLE001
                assert type(e).__name__ == expected, (type(e).__name__, e)
            else:
                raise AssertionError(f"expected {expected}")
        await streaming(http, card)
    print("a2a-sdk interop: ok")


async def stream_kinds(client, msg: pb.Message) -> list[tuple[str, object]]:
    out = []
    async for event in client.send_message(pb.SendMessageRequest(message=msg)):
        out.append((event.WhichOneof("payload"), getattr(event, event.WhichOneof("payload"))))
    return out


async def streaming(http, card) -> None:
    """The SDK's streaming client (SSE): task, artifact update, completed; input-required and resume."""
    assert card.capabilities.streaming
    client = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
    events = await stream_kinds(
        client,
        data_message(
            {"type": "tool_call", "tool_call_id": "s", "name": "tools__echo", "args": {"text": "sdk-stream"}}
        ),
    )
    assert [k for k, _ in events] == ["task", "artifact_update", "status_update"], events
    task = events[0][1]
    assert events[2][1].status.state == pb.TASK_STATE_COMPLETED and events[2][1].task_id == task.id
    assert "echo: sdk-stream" in MessageToDict(events[1][1].artifact)["parts"][1]["text"]

    asked = await stream_kinds(
        client,
        data_message(
            {
                "type": "tool_call",
                "tool_call_id": "j",
                "name": "tools__delete_file",
                "args": {"path": "/tmp/j"},
            }
        ),
    )
    last = asked[-1][1]
    assert last.status.state == pb.TASK_STATE_INPUT_REQUIRED, asked
    key = MessageToDict(last.status.message)["parts"][2]["data"]["questions"][0]["key"]
    answer = {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}
    resumed = await stream_kinds(client, data_message(answer, last.task_id, last.context_id))
    assert resumed[-1][1].status.state == pb.TASK_STATE_COMPLETED, resumed

    for req, expected in (
        (pb.SubscribeToTaskRequest(id=task.id), "UnsupportedOperationError"),
        (pb.SubscribeToTaskRequest(id="nope"), "TaskNotFoundError"),
    ):
        try:
            async for _ in client.subscribe(req):
                pass
        except Exception as e:  # noqa: BLE001
            assert type(e).__name__ == expected, (type(e).__name__, e)
        else:
            raise AssertionError(f"expected {expected}")


if __name__ == "__main__":
    import gc  # exit without collecting the imports' objects (~0.1-1 s): a test's gateway waits for it
    gc.freeze()
    asyncio.run(main(*sys.argv[1:5]))
