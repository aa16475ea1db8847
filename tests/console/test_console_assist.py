"""The last console pieces of the self-watching loop and of other agents' help requests, through a real
gateway
(HTTP on 127.0.0.1, A2A and the console mounted, the simulated phone, a scripted model):

- the Agent trace page shows a run's reflections (UTC time, kind, signs, text) and each step's health scores,
  hostile text inert;
- a peer's HumanAssistRequest sent over real A2A HTTP appears in the owner's console inbox, marked as another
  agent's; the owner's reply there goes back to the requesting agent (its task completes carrying it);
- attacks: the peer's own console neither sees nor answers it, another principal gets "not found", a forged or
  missing CSRF token is refused, an oversized or blank reply, or one with a control, invisible or
  direction-changing character, is refused naming it and loses nothing; two owner sessions replying at once:
  exactly one reply goes back, the other is told "already answered".
"""

from __future__ import annotations

import asyncio
import html
import re

import httpx2
import pytest
from tests.console.console_rig import ALICE, BOB, csrf_of, mcp_client, signed_in
from tests.console.test_console_agent import HOSTILE, ROVER, phone_gateway

from tests.a2a.a2a_rig import user_message  # noqa: E402
from sentinel_mcp.a2a.assist_inbox import AssistInbox, inbox_path
from tests.agent.phone_policies import act, element_id, screen_of  # noqa: E402
from tests.swarm.support.scripted_model import ScriptedModelServer  # noqa: E402

pytestmark = pytest.mark.timeout(180)
UTC_ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


@pytest.fixture
def model(monkeypatch):
    server = ScriptedModelServer().start()
    monkeypatch.setenv("SWARM_OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("SWARM_OPENAI_API_KEY", "test-key")
    yield server
    server.stop()


def tap_phone_until_reflected(body: dict) -> str:
    """Stuck tapping an icon that does nothing until a reflection is read; then it gives up, saying so."""
    context = next(m["content"] for m in body["messages"] if m["role"] == "user")
    sid, _, lines = screen_of(body)
    if "Reflection:" in context:
        return act("done", sid, text="stopped tapping")
    return act("click", sid, element_id(lines, "text='Phone'"), why=HOSTILE)


async def test_the_trace_page_shows_reflections_and_step_health_escaped(tmp_path, model):
    model.script("unknown", *[tap_phone_until_reflected] * 6)
    async with phone_gateway(tmp_path, model) as (base, _owner, holder):
        async with signed_in(base, ALICE) as alice, mcp_client(base, ALICE) as c:
            run = (await c.call_tool("agent__agent_run", {"goal": "call someone"})).structured_content
            assert [r["kind"] for r in run["reflections"]] == ["reflection"], run
            # a sign quoting hostile model output (what an ungrounded value's sign carries)
            store = holder.runtime.services["agent_traces"]
            await store.record_reflection(
                run["run_id"], 9, "replan", [f"value {HOSTILE!r} found nowhere"], HOSTILE
            )
            page = await alice.page(f"/console/agent/{run['run_id']}")
    reflections = page[page.index('id="run-reflections"') :]
    assert reflections.count('class="card reflection"') == 2
    assert "Reflection: the proposed" in html.unescape(reflections) and "replan" in reflections
    assert UTC_ISO.search(reflections)
    assert "<script>" not in page and "<img src=x" not in page  # hostile text is inert
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in reflections
    steps = page[page.index('id="run-steps"') : page.index('id="run-reflections"')]
    assert steps.count('class="health"') == sum("health" in s for s in run["steps"]) >= 2
    assert "repetition 0" in steps and "score 1" in steps


async def test_a_peers_help_request_is_answered_by_the_owner_in_the_console(tmp_path, model):
    async with phone_gateway(tmp_path, model) as (base, owner_token, _holder):
        async with (
            httpx2.AsyncClient(timeout=60, headers={"A2A-Version": "1.0"}) as http,
            signed_in(base, owner_token) as owner,
            signed_in(base, ROVER) as rover,
            signed_in(base, BOB) as bob,
            signed_in(base, owner_token) as owner2,
        ):

            async def rpc(method: str, params: dict) -> dict:
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                return (
                    await http.post(base + "/a2a", json=body, headers={"Authorization": f"Bearer {ROVER}"})
                ).json()

            har = {
                "type": "human_assist_request",
                "agent_id": "orchestrator",
                "reason": "Which seat? " + HOSTILE,
                "suggested_questions": ["Window or <b>aisle</b>?"],
            }
            task = (
                await rpc(
                    "SendMessage",
                    {"message": user_message({"data": har}), "configuration": {"returnImmediately": True}},
                )
            )["result"]["task"]
            form = re.compile(r'action="/console/inbox/assist/(har-[0-9a-f]{10})"')
            for _ in range(100):
                page = await owner.page("/console/inbox")
                if form.search(page):
                    break
                await asyncio.sleep(0.1)
            [request_id] = form.findall(page)
            assists = page[page.index('id="assist-items"') :]
            assert "another agent" in assists and "rover" in assists  # who authenticated, marked as an agent
            assert "<script>" not in page and "<b>aisle" not in page and "Window or &lt;b&gt;aisle" in assists
            path = f"/console/inbox/assist/{request_id}"

            # the peer that asked, and any other principal: not shown, "not found"
            for other in (rover, bob):
                assert request_id not in await other.page("/console/inbox")
                assert (await other.post(path, {"reply": "window"})).status_code == 404
            # made-up ids, CSRF missing or forged, oversized or blank replies: refused, nothing lost
            for bad in ("har-0000000000", "har-" + "0" * 11, "x", request_id.upper()):
                assert (
                    await owner.post(f"/console/inbox/assist/{bad}", {"reply": "window"})
                ).status_code == 404
            assert (await owner.post(path, {"reply": "window"}, csrf=None)).status_code == 403
            assert (await owner.post(path, {"reply": "window"}, csrf="0" * 64)).status_code == 403
            assert (
                await owner.post(path, {"reply": "window"}, csrf=csrf_of(await rover.page("/console/inbox")))
            ).status_code == 403  # the peer's token is not the owner's
            for reply in ("x" * 4001, "   ", ""):
                assert (await owner.post(path, {"reply": reply})).status_code == 400
            assert (await owner.post(path, {})).status_code == 400
            for reply, code in (
                ("aisle\u202e", "U+202E"),
                ("\x1b[2Jaisle", "U+001B"),
                ("ai\u200bsle", "U+200B"),
                ("aisle\U000e0041", "U+E0041"),
                ("a\x00isle", "U+0000"),
                ("\u2066aisle", "U+2066"),
            ):
                r = await owner.post(path, {"reply": reply})
                assert r.status_code == 400 and code in html.unescape(r.text), (reply, r.status_code)
            assert request_id in await owner.page("/console/inbox")
            assert (await rpc("GetTask", {"id": task["id"]}))["result"]["status"][
                "state"
            ] == "TASK_STATE_WORKING"

            # two owner sessions reply at once: one reply goes back to the agent that asked, the other is told
            replies = ("aisle, thanks", "window,\r\nplease")
            both = await asyncio.gather(
                owner.post(path, {"reply": replies[0]}), owner2.post(path, {"reply": replies[1]})
            )
            assert sorted(r.status_code for r in both) == [303, 409], [r.status_code for r in both]
            [won] = [replies[i].replace("\r\n", "\n") for i, r in enumerate(both) if r.status_code == 303]
            [lost] = [r for r in both if r.status_code == 409]
            assert "already answered" in lost.text and "not sent" in lost.text
            assert next(r for r in both if r.status_code == 303).headers["location"] == "/console/inbox"
            assert request_id not in await owner.page("/console/inbox")
            r = await owner.post(
                path, {"reply": "twice"}
            )  # answered already: told so, nothing more goes back
            assert r.status_code == 409 and "already answered" in r.text
            assert (
                await bob.post(path, {"reply": "twice"})
            ).status_code == 404  # still "not found" to others
            for _ in range(50):
                got = (await rpc("GetTask", {"id": task["id"]}))["result"]
                if got["status"]["state"] == "TASK_STATE_COMPLETED":
                    break
                await asyncio.sleep(0.2)
            assert got["status"]["state"] == "TASK_STATE_COMPLETED", got
            reply = next(p["data"] for a in got["artifacts"] for p in a["parts"] if "data" in p)
            assert reply["type"] == "human_reply" and reply["request_id"] == request_id
            assert reply["reply"] == won
            # read and sent back: marked so (history now), where before only the wall clock aged it out
            inbox = AssistInbox(inbox_path(tmp_path))
            try:
                for _ in range(50):
                    if (inbox.get(request_id) or {}).get("status") == "delivered":
                        break
                    await asyncio.sleep(0.1)
                assert (inbox.get(request_id) or {}).get("status") == "delivered"
            finally:
                inbox.release()


async def test_the_live_count_announces_help_requests(tmp_path, model):
    """The owner's open console (its event stream) is told when a help request arrives over A2A and when one
    is
    answered, in the console or elsewhere (the terminal's /reply writes the same inbox file); nobody else's
    is."""
    async with phone_gateway(tmp_path, model) as (base, owner_token, _holder):
        async with (
            httpx2.AsyncClient(timeout=60, headers={"A2A-Version": "1.0"}) as http,
            signed_in(base, owner_token) as owner,
        ):

            async def rpc(method: str, params: dict) -> dict:
                body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
                return (
                    await http.post(base + "/a2a", json=body, headers={"Authorization": f"Bearer {ROVER}"})
                ).json()

            async def ask(reason: str) -> None:
                har = {
                    "type": "human_assist_request",
                    "agent_id": "orchestrator",
                    "reason": reason,
                    "suggested_questions": ["Window or aisle?"],
                }
                await rpc(
                    "SendMessage",
                    {"message": user_message({"data": har}), "configuration": {"returnImmediately": True}},
                )

            counts: dict[str, asyncio.Queue] = {"owner": asyncio.Queue(), "bob": asyncio.Queue()}

            async def listen(who: str, token: str) -> None:
                async with (
                    httpx2.AsyncClient(timeout=None, headers={"Authorization": f"Bearer {token}"}) as c,
                    c.stream("GET", f"{base}/console/events") as r,
                ):
                    event = None
                    async for line in r.aiter_lines():
                        if line.startswith("event: "):
                            event = line[7:]
                        elif line.startswith("data: ") and event == "inbox":
                            counts[who].put_nowait(int(line[6:].split()[0]))

            async def next_count(who: str) -> int:
                return await asyncio.wait_for(counts[who].get(), 15)

            listeners = [
                asyncio.create_task(listen("owner", owner_token)),
                asyncio.create_task(listen("bob", BOB)),
            ]
            try:
                assert await next_count("owner") == 0 and await next_count("bob") == 0
                await ask("Which seat?")
                assert await next_count("owner") == 1
                await ask("Which meal?")
                assert await next_count("owner") == 2
                [first, second] = [r["id"] for r in AssistInbox(inbox_path(tmp_path)).open_requests()]
                r = await owner.post(f"/console/inbox/assist/{first}", {"reply": "aisle"})
                assert r.status_code == 303
                assert await next_count("owner") == 1
                # answered elsewhere (as the terminal's /reply does: its own connection to the inbox file)
                assert AssistInbox(inbox_path(tmp_path)).answer(second, "vegetarian")
                assert await next_count("owner") == 0
                assert counts["bob"].empty()  # another principal's count never moved
            finally:
                for task in listeners:
                    task.cancel()
                await asyncio.gather(*listeners, return_exceptions=True)
