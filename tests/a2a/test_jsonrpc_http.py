"""A2A v1.0 JSON-RPC over HTTP against a real uvicorn server: error codes, lifecycle, cancel, resume."""

from __future__ import annotations

import asyncio
import json

import pytest
from tests.a2a.a2a_rig import RELEASE, open_port, rpc, serve, user_message
from tests.a2a.test_ws_binding import ws_connect

from sentinel_mcp.a2a.settings import A2ASettings

pytestmark = pytest.mark.timeout(60)


def sensor_part(scope: str = "minimal") -> dict:
    return {"data": {"type": "sensor_request", "sensor": "location", "scope": scope,
                     "policy_tag": "location-for-search"}, "mediaType": "application/json"}


def tool_part(name: str, args: dict, call_id: str = "call-1") -> dict:
    return {"data": {"type": "tool_call", "tool_call_id": call_id, "name": name, "args": args}}


def task_result_of(task: dict) -> dict:
    parts = task["artifacts"][-1]["parts"]
    return next(
        p["data"] for p in parts if isinstance(p.get("data"), dict) and p["data"].get("type") == "task_result"
    )


# --- envelope errors ---------------------------------------------------------------------------


async def test_parse_error_is_32700(rig, http):
    for raw in (b'{"jsonrpc": "2.0", "method": ', b"\xff\xfe\x00garbage", b"[" * 100_000):
        r = await http.post(rig.rpc_url, content=raw, headers={"content-type": "application/json"})
        body = r.json()
        assert r.status_code == 200 and body["error"]["code"] == -32700 and body["id"] is None, raw[:20]


@pytest.mark.parametrize(
    "body",
    [
        {"jsonrpc": "1.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
        {"id": 1, "method": "GetTask"},
        {"jsonrpc": "2.0", "id": 1},
        {"jsonrpc": "2.0", "id": True, "method": "GetTask"},
        {"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": "x"},
        [{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}],
        "just a string",
    ],
)
async def test_invalid_request_is_32600(rig, http, body):
    r = await http.post(rig.rpc_url, json=body)
    assert r.status_code == 200
    assert r.json()["error"]["code"] == -32600


async def test_unknown_method_is_32601_and_seed_methods_are_not_a2a_methods(rig, http):
    for method in ("tasks/frobnicate", "sensor_request"):
        body = await rpc(http, rig.rpc_url, method, {})
        assert body["error"]["code"] == -32601 and body["id"] == 1


async def test_invalid_params_is_32602(rig, http):
    bad = [
        ("GetTask", {}),  # id missing
        ("GetTask", {"id": "x", "historyLength": -1}),
        ("SendMessage", {"message": {"role": "ROLE_USER", "parts": [{"text": "hi"}]}}),  # messageId missing
        ("SendMessage", {"message": user_message()}),  # no parts
        ("SendMessage", {"message": user_message({"text": "a", "data": {}})}),  # two contents in one part
        ("SendMessage", {"message": {**user_message({"text": "a"}), "role": "ROLE_MARTIAN"}}),
        (
            "SendMessage",
            {
                "message": user_message(
                    {
                        "data": {
                            "type": "sensor_request",
                            "sensor": "location",
                            "scope": "galactic",
                            "policy_tag": "x",
                        }
                    }
                )
            },
        ),
        ("SendMessage", {"message": user_message({"data": {"type": "teleport"}})}),
        ("ListTasks", {"pageSize": 0}),
        ("ListTasks", {"pageToken": "not-ours"}),
        # numbers are JSON numbers and flags JSON booleans: no text, no true for 1, no fraction read as whole
        *(("GetTask", {"id": "x", "historyLength": v}) for v in ("2", True, 2.0, "1e3")),
        *(("ListTasks", {"pageSize": v}) for v in ("10", True, 10.0)),
        *(("ListTasks", {"includeArtifacts": v}) for v in ("true", 1, "yes")),
        *(("SendMessage", {"message": user_message({"text": "a"}), "configuration": {"returnImmediately": v}})
          for v in ("true", 1, "on")),
        ("SendMessage", {"message": user_message({"text": "a"}), "configuration": {"historyLength": "3"}}),
    ]
    for method, params in bad:
        body = await rpc(http, rig.rpc_url, method, params)
        assert body["error"]["code"] == -32602, (method, params, body)
        assert body["error"]["data"][0]["reason"] == "INVALID_PARAMS"
    assert rig.port.calls == []  # nothing ran


async def test_a_page_token_nested_deep_is_invalid_params_not_an_internal_error(rig, http):
    import base64

    deep = base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode()
    for token in (deep, "A" * 100_000):
        body = await rpc(http, rig.rpc_url, "ListTasks", {"pageToken": token})
        assert body["error"]["code"] == -32602, body
        assert body["error"]["data"][0]["reason"] == "INVALID_PARAMS"


async def test_ids_a_peer_names_are_bounded_and_never_echoed_whole(rig, http):
    """A context id becomes part of the guard's session (and of every audit row of its calls), and an id is
    echoed in errors: an id longer than any a client needs is -32602, and nothing runs for it."""
    long = "c" * 100_000
    bad = [
        ("SendMessage", {"message": user_message({"text": "hi"}, context_id=long)}),
        ("SendMessage", {"message": user_message({"text": "hi"}, message_id=long)}),
        ("SendMessage", {"message": {**user_message({"text": "hi"}), "referenceTaskIds": ["t"] * 10_000}}),
        ("GetTask", {"id": long}),
        ("CancelTask", {"id": long}),
        ("ListTasks", {"contextId": long}),
    ]
    for method, params in bad:
        r = await http.post(rig.rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        body = r.json()
        assert body["error"]["code"] == -32602, (method, body["error"]["message"][:200])
        assert len(r.content) < 4096, method
    assert rig.port.calls == [] and len(rig.service.store) == 0


async def test_a_request_id_is_bounded_as_on_the_mcp_front(rig, http):
    """Every answer echoes the request's id, and a stream echoes it in each event: a 900 KB id came back three
    times (2.7 MB) from one streamed tool call. An id is now held to the MCP front's rule (a string of at most
    1,000 characters, an integer JSON carries exactly: |n| <= 2**53 - 1; no boolean, float, array or object):
    past it the request is -32600 with id null, and nothing runs; on the WebSocket binding alike."""
    call = {"data": {"type": "tool_call", "tool_call_id": "c1", "name": "tools__echo", "args": {"text": "x"}}}
    for rid in ("i" * 1001, "i" * 900_000, 2**53, -(2**53), 2**63 - 1, -(2**63), 2**64, -(2**64) - 1, 10**99,
                True, 1.0, 1e3, [1], {"id": 1}):
        for method, params in (("SendStreamingMessage", {"message": user_message(call)}),
                               ("SendMessage", {"message": user_message(call)}), ("GetTask", {"id": "x"})):
            sent = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
            r = await http.post(rig.rpc_url, json=sent)
            body = r.json()
            assert body["error"]["code"] == -32600 and body["id"] is None, (method, body["error"])
            assert len(r.content) < 4096
    async with ws_connect(rig.ws_url) as ws:
        for rid in ("i" * 1001, 2**53, -(2**63), 1.0, True):
            await ws.send(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tool_call",
                                      "params": {k: v for k, v in call["data"].items() if k != "type"}}))
            body = json.loads(await ws.recv())
            assert body["error"]["code"] == -32600 and body["id"] is None, rid
    assert rig.port.calls == [] and len(rig.service.store) == 0
    for rid in ("i" * 1000, 2**53 - 1, -(2**53 - 1), 0):  # within the rule: answered under that id
        body = await rpc(http, rig.rpc_url, "GetTask", {"id": "x"}, rid=rid)
        assert body["id"] == rid and body["error"]["code"] == -32001


async def test_an_error_quotes_the_caller_cut_not_whole(rig, http):
    """A method, a message type or a field name a caller sent is quoted in the error, cut: a megabyte sent
    never comes back as one (or as two, in the message and the error's metadata)."""
    big = "m" * 500_000
    sent = [
        {"jsonrpc": "2.0", "id": 1, "method": big},
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
         "params": {"message": user_message({"data": {"type": big}})}},
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
         "params": {"message": user_message({"data": {"type": "tool_call", "tool_call_id": "x", "name": "n",
                                                      big: 1}})}},
    ]
    for body in sent:
        r = await http.post(rig.rpc_url, json=body)
        assert r.json()["error"]["code"] in (-32601, -32602) and len(r.content) < 10_000


async def test_task_not_found_is_32001(rig, http):
    for method in ("GetTask", "CancelTask"):
        body = await rpc(http, rig.rpc_url, method, {"id": "no-such-task"})
        assert body["error"]["code"] == -32001
    body = await rpc(
        http, rig.rpc_url, "SendMessage", {"message": user_message({"text": "hi"}, task_id="no-such-task")}
    )
    assert body["error"]["code"] == -32001


async def test_version_rules(rig, http):
    params = {"id": "x"}
    for version in ("0.3", "2.0", "banana"):
        body = await rpc(http, rig.rpc_url, "GetTask", params, headers={"A2A-Version": version})
        assert body["error"]["code"] == -32009, version
    # query parameter form
    body = await rpc(http, rig.rpc_url + "?A2A-Version=0.3", "GetTask", params, headers={"A2A-Version": ""})
    assert body["error"]["code"] == -32009
    for version in ("1.0", "1.0.1", ""):
        body = await rpc(http, rig.rpc_url, "GetTask", params, headers={"A2A-Version": version})
        assert body["error"]["code"] == -32001, version  # accepted: the task just does not exist
    r = await http.post(rig.rpc_url, json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": params})
    assert r.headers["A2A-Version"] == "1.0"


async def test_unoffered_operations_have_their_codes(rig, http):
    # streaming is offered now: bad params are refused before any stream starts
    assert (await rpc(http, rig.rpc_url, "SendStreamingMessage", {}))["error"]["code"] == -32602
    assert (await rpc(http, rig.rpc_url, "CreateTaskPushNotificationConfig", {}))["error"]["code"] == -32003
    assert (await rpc(http, rig.rpc_url, "GetExtendedAgentCard", {}))["error"]["code"] == -32007


async def test_a_push_config_is_refused_never_ignored(rig, http):
    """The card says pushNotifications false: a message asking to be called back is refused (-32003) before
    anything runs, in every spelling of the config, on both send methods; a peer never waits for a call that
    never comes."""
    calls = len(rig.port.calls)
    configs = [
        {"url": "https://peer.example/hook"},
        {"pushNotificationConfig": {"url": "http://127.0.0.1:1/x", "token": "t"}},
        {},
        [],
        "https://peer.example/hook",
    ]
    for method in ("SendMessage", "SendStreamingMessage"):
        for push in configs:
            msg = user_message(tool_part("tools__echo", {"text": "call me back"}))
            params = {"message": msg, "configuration": {"taskPushNotificationConfig": push}}
            body = await rpc(http, rig.rpc_url, method, params)
            assert body["error"]["code"] in (-32003, -32602), (method, push, body)
            if isinstance(push, dict):
                assert body["error"]["code"] == -32003 and "nothing was started" in body["error"]["message"]
    # other names for it (a v0.3 peer's, a case or spelling of its own), or any key this agent does not
    # know: refused, never dropped
    for key in ("pushNotificationConfig", "TaskPushNotificationConfig", "task_push_notification_configs",
                "blocking", "callbackUrl"):
        msg = user_message(tool_part("tools__echo", {"text": "call me back"}))
        params = {"message": msg, "configuration": {key: {"url": "x"}}}
        body = await rpc(http, rig.rpc_url, "SendMessage", params)
        assert body["error"]["code"] == -32602 and key in body["error"]["message"], (key, body)
    assert len(rig.port.calls) == calls
    # without one (or null) the same message runs
    params = {"message": user_message(tool_part("tools__echo", {"text": "hi"})),
              "configuration": {"taskPushNotificationConfig": None}}
    ok = await rpc(http, rig.rpc_url, "SendMessage", params)
    assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_oversized_body_is_refused(http):
    async with open_port() as port, serve(port, A2ASettings(max_frame_bytes=4096)) as srv:
        big = {"message": user_message({"text": "x" * 10_000})}
        body = await rpc(http, srv.rpc_url, "SendMessage", big)
        assert body["error"]["code"] == -32600 and "larger" in body["error"]["message"]
        assert port.calls == []


# --- lifecycle ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_sensor_request_completes_with_a_task_result(http, mode):
    async with open_port(mode=mode) as port, serve(port, A2ASettings()) as srv:
        body = await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message(sensor_part("minimal"))})
        task = body["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED", task
        result = task_result_of(task)
        reading = result["artifacts"][0]["content"]
        assert result["artifacts"][0]["artifact_type"] == "sensor_response"
        assert reading["payload"] == {"latitude": 38, "longitude": -122}
        assert "Removed altitude" in reading["redactions"]
        assert reading["task_id"] == task["id"] and result["policy_tag"] == "location-for-search"
        call = port.calls[-1]
        assert call.name == "sensors__sensor_read" and call.origin == "a2a"
        assert call.client == "peer:127.0.0.1"
        assert (
            call.arguments["scope"] == "minimal"
            and call.session_id.startswith("peer:127.0.0.1/a2a-")
            and call.session_id.endswith(task["contextId"])
        )
        # GetTask returns the same task; history has the user's message and the agent's status message
        got = (await rpc(http, srv.rpc_url, "GetTask", {"id": task["id"]}))["result"]
        assert got["status"]["state"] == "TASK_STATE_COMPLETED" and got["artifacts"] == task["artifacts"]
        assert [m["role"] for m in got["history"]] == ["ROLE_USER", "ROLE_AGENT"]
        short = (await rpc(http, srv.rpc_url, "GetTask", {"id": task["id"], "historyLength": 1}))["result"]
        assert [m["role"] for m in short["history"]] == ["ROLE_AGENT"]


async def test_tool_call_error_fails_the_task(rig, http):
    part = {"data": {"type": "sensor_request", "sensor": "barometer", "scope": "minimal", "policy_tag": "t"}}
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(part)}))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_FAILED"
    assert "unknown sensor" in task["status"]["message"]["parts"][0]["text"]


async def test_unknown_tool_fails_and_denied_tool_is_rejected(rig, http):
    t1 = (
        await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(tool_part("nope__nothing", {}))})
    )["result"]["task"]
    assert (
        t1["status"]["state"] == "TASK_STATE_FAILED"
        and "unknown tool" in t1["status"]["message"]["parts"][0]["text"]
    )
    t2 = (
        await rpc(
            http, rig.rpc_url, "SendMessage", {"message": user_message(tool_part("tools__forbidden", {}))}
        )
    )["result"]["task"]
    assert t2["status"]["state"] == "TASK_STATE_REJECTED"
    assert "ask an administrator" in t2["status"]["message"]["parts"][0]["text"]


async def test_text_without_llm_is_rejected_saying_degraded(rig, http):
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message({"text": "hello?"})}))[
        "result"
    ]["task"]
    assert task["status"]["state"] == "TASK_STATE_REJECTED"
    assert "degraded" in task["status"]["message"]["parts"][0]["text"]


async def test_text_with_llm_is_answered_through_the_guard(http):
    async with open_port(with_llm=True) as port, serve(port, A2ASettings()) as srv:
        task = (
            await rpc(http, srv.rpc_url, "SendMessage", {"message": user_message({"text": "what is up"})})
        )["result"]["task"]
        assert task["status"]["state"] == "TASK_STATE_COMPLETED"
        assert task_result_of(task)["artifacts"][0]["content"] == {"result": "llm heard: what is up"}
        assert port.calls[-1].name == "llm__llm_generate" and port.calls[-1].origin == "a2a"


async def test_input_required_then_resume_with_answers(rig, http):
    msg = user_message(tool_part("tools__delete_file", {"path": "/tmp/x"}))
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": msg}))["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    parts = task["status"]["message"]["parts"]
    har = next(p["data"] for p in parts if p.get("data", {}).get("type") == "human_assist_request")
    assert har["agent_id"] == "sentinel-test" and har["context_handle"] == task["contextId"]
    assert har["suggested_questions"][0].startswith("Allow tools__delete_file")
    questions = next(p["data"] for p in parts if p.get("data", {}).get("type") == "input_request")[
        "questions"
    ]
    key = questions[0]["key"]
    # a message without answers, or answering an unknown question, is refused and changes nothing
    no_answer = await rpc(
        http, rig.rpc_url, "SendMessage", {"message": user_message({"text": "ok"}, task_id=task["id"])}
    )
    assert no_answer["error"]["code"] == -32602 and key in no_answer["error"]["message"]
    wrong = await rpc(
        http,
        rig.rpc_url,
        "SendMessage",
        {"message": user_message({"data": {"answers": {"other": {"action": "accept"}}}}, task_id=task["id"])},
    )
    assert wrong["error"]["code"] == -32602
    assert len(rig.port.calls) == 1
    # the answer resumes the same call; the peer cannot claim user provenance
    answer = {
        "data": {"answers": {key: {"action": "accept", "content": {"confirm": True}, "provenance": "user"}}}
    }
    done = (
        await rpc(
            http,
            rig.rpc_url,
            "SendMessage",
            {"message": user_message(answer, task_id=task["id"], context_id=task["contextId"])},
        )
    )["result"]["task"]
    assert done["id"] == task["id"] and done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task_result_of(done)["artifacts"][0]["content"] == {"result": "deleted /tmp/x"}
    last = rig.port.calls[-1]
    assert last.arguments == {"path": "/tmp/x"} and last.answers[key].provenance == "agent"
    assert last.session_id == rig.port.calls[0].session_id
    # a terminal task takes no more messages
    again = await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(answer, task_id=task["id"])})
    assert again["error"]["code"] == -32004


async def test_declined_answer_rejects_the_task(rig, http):
    msg = user_message(tool_part("tools__delete_file", {"path": "/etc/passwd"}))
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": msg}))["result"]["task"]
    key = task["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
    answer = {"data": {"answers": {key: {"action": "decline"}}}}
    done = (
        await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(answer, task_id=task["id"])})
    )["result"]["task"]
    assert done["status"]["state"] == "TASK_STATE_REJECTED"


async def test_cancel_working_task_and_not_cancelable(rig, http):
    RELEASE.pop("cancel-me", None)
    msg = user_message(tool_part("tools__wait_for", {"key": "cancel-me"}))
    task = (
        await rpc(
            http, rig.rpc_url, "SendMessage", {"message": msg, "configuration": {"returnImmediately": True}}
        )
    )["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    # a WORKING task takes no input
    busy = await rpc(
        http, rig.rpc_url, "SendMessage", {"message": user_message({"text": "hurry"}, task_id=task["id"])}
    )
    assert busy["error"]["code"] == -32004
    canceled = (await rpc(http, rig.rpc_url, "CancelTask", {"id": task["id"]}))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"
    got = (await rpc(http, rig.rpc_url, "GetTask", {"id": task["id"]}))["result"]
    assert got["status"]["state"] == "TASK_STATE_CANCELED"
    again = await rpc(http, rig.rpc_url, "CancelTask", {"id": task["id"]})
    assert again["error"]["code"] == -32002
    # the server still works after a canceled upstream call
    ok = await rpc(
        http, rig.rpc_url, "SendMessage", {"message": user_message(tool_part("tools__echo", {"text": "hi"}))}
    )
    assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_cancel_input_required_task(rig, http):
    msg = user_message(tool_part("tools__delete_file", {"path": "/tmp/y"}))
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": msg}))["result"]["task"]
    canceled = (await rpc(http, rig.rpc_url, "CancelTask", {"id": task["id"]}))["result"]
    assert canceled["status"]["state"] == "TASK_STATE_CANCELED"


async def test_return_immediately_then_poll_until_completed(rig, http):
    RELEASE.pop("poll-me", None)
    msg = user_message(tool_part("tools__wait_for", {"key": "poll-me"}))
    task = (
        await rpc(
            http, rig.rpc_url, "SendMessage", {"message": msg, "configuration": {"returnImmediately": True}}
        )
    )["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_WORKING"
    RELEASE.setdefault("poll-me", asyncio.Event()).set()
    runner = rig.service.store.get(task["id"], "peer:127.0.0.1").runner
    await asyncio.wait({runner})
    got = (await rpc(http, rig.rpc_url, "GetTask", {"id": task["id"]}))["result"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_list_tasks_filters_and_pages(rig, http):
    ctx = "ctx-list"
    ids = []
    for i in range(3):
        t = (
            await rpc(
                http,
                rig.rpc_url,
                "SendMessage",
                {"message": user_message(tool_part("tools__echo", {"text": str(i)}), context_id=ctx)},
            )
        )["result"]["task"]
        ids.append(t["id"])
    await rpc(http, rig.rpc_url, "SendMessage", {"message": user_message({"text": "other context"})})
    page1 = (await rpc(http, rig.rpc_url, "ListTasks", {"contextId": ctx, "pageSize": 2}))["result"]
    assert page1["totalSize"] == 3 and page1["pageSize"] == 2 and len(page1["tasks"]) == 2
    assert all("artifacts" not in t for t in page1["tasks"])  # includeArtifacts defaults to false
    # a task added between pages does not shift the next page (the token is a cursor, not an offset)
    await rpc(
        http,
        rig.rpc_url,
        "SendMessage",
        {"message": user_message(tool_part("tools__echo", {"text": "late"}), context_id=ctx)},
    )
    page2 = (
        await rpc(
            http,
            rig.rpc_url,
            "ListTasks",
            {"contextId": ctx, "pageSize": 2, "pageToken": page1["nextPageToken"]},
        )
    )["result"]
    assert len(page2["tasks"]) == 1 and page2["nextPageToken"] == "" and page2["totalSize"] == 4
    assert {t["id"] for t in page1["tasks"] + page2["tasks"]} == set(ids)
    newest_first = [t["status"]["timestamp"] for t in page1["tasks"] + page2["tasks"]]
    assert newest_first == sorted(newest_first, reverse=True)
    since = page1["tasks"][0]["status"]["timestamp"].replace("Z", "+00:00")
    recent = (await rpc(http, rig.rpc_url, "ListTasks", {"contextId": ctx, "statusTimestampAfter": since}))[
        "result"
    ]
    assert page1["tasks"][0]["id"] in [t["id"] for t in recent["tasks"]] and recent["totalSize"] < 4
    rejected = (
        await rpc(http, rig.rpc_url, "ListTasks", {"status": "TASK_STATE_REJECTED", "includeArtifacts": True})
    )["result"]
    assert rejected["totalSize"] == 1 and rejected["tasks"][0]["contextId"] != ctx


async def test_tasks_are_private_to_their_caller(http):
    settings = A2ASettings(api_keys={"alice": "alice-key-123", "bob": "bob-key-4567"})
    async with open_port() as port, serve(port, settings) as srv:
        alice = {"X-API-Key": "alice-key-123"}
        t = (
            await rpc(
                http,
                srv.rpc_url,
                "SendMessage",
                {"message": user_message(tool_part("tools__echo", {"text": "a"}))},
                headers=alice,
            )
        )["result"]["task"]
        assert port.calls[-1].client == "alice"
        bob = await rpc(http, srv.rpc_url, "GetTask", {"id": t["id"]}, headers={"X-API-Key": "bob-key-4567"})
        assert bob["error"]["code"] == -32001
        listed = (await rpc(http, srv.rpc_url, "ListTasks", {}, headers={"X-API-Key": "bob-key-4567"}))[
            "result"
        ]
        assert listed["totalSize"] == 0


async def test_task_store_cap_evicts_finished_tasks_only(http):
    # the whole store's cap (one caller here, its share the whole store; the share: test_task_quota.py)
    async with open_port() as port, serve(port, A2ASettings(max_tasks=2, max_open_per_caller=2)) as srv:
        RELEASE.pop("cap", None)
        for _ in range(2):  # two messages (one message sent twice is one task: test_message_replays.py)
            w = user_message(tool_part("tools__wait_for", {"key": "cap"}))
            await rpc(
                http, srv.rpc_url, "SendMessage", {"message": w, "configuration": {"returnImmediately": True}}
            )
        full = await rpc(
            http,
            srv.rpc_url,
            "SendMessage",
            {"message": user_message(tool_part("tools__echo", {"text": "x"}))},
        )
        assert full["error"]["code"] == -32004 and "full" in full["error"]["message"]
        RELEASE.setdefault("cap", asyncio.Event()).set()
        for rec in srv.service.store.all_records():
            await asyncio.wait({rec.runner})
        ok = await rpc(
            http,
            srv.rpc_url,
            "SendMessage",
            {"message": user_message(tool_part("tools__echo", {"text": "x"}))},
        )
        assert ok["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        assert len(srv.service.store) == 2


async def test_concurrent_answers_resume_the_call_once(rig, http):
    msg = user_message(tool_part("tools__delete_file", {"path": "/tmp/race"}))
    task = (await rpc(http, rig.rpc_url, "SendMessage", {"message": msg}))["result"]["task"]
    key = task["status"]["message"]["parts"][2]["data"]["questions"][0]["key"]
    answer = {"data": {"answers": {key: {"action": "accept", "content": {"confirm": True}}}}}
    replies = await asyncio.gather(
        *(
            rpc(http, rig.rpc_url, "SendMessage", {"message": user_message(answer, task_id=task["id"])})
            for _ in range(5)
        )
    )
    ok = [r for r in replies if "result" in r]
    assert len(ok) == 1 and ok[0]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert all(r["error"]["code"] == -32004 for r in replies if "error" in r)
    assert [c.name for c in rig.port.calls].count("tools__delete_file") == 2  # the ask, then one resumed call


async def test_many_concurrent_tasks(rig, http):
    replies = await asyncio.gather(
        *(
            rpc(
                http,
                rig.rpc_url,
                "SendMessage",
                {"message": user_message(tool_part("tools__echo", {"text": str(i)}, call_id=f"c{i}"))},
                rid=i,
            )
            for i in range(40)
        )
    )
    assert [r["id"] for r in replies] == list(range(40))
    texts = sorted(r["result"]["task"]["artifacts"][0]["parts"][1]["text"] for r in replies)
    assert texts == sorted(f"echo: {i}" for i in range(40))
