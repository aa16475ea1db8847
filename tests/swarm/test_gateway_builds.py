"""Builds through Sentinel as clients meet them: long calls kept alive by progress (a scaled-down clock),
short-timeout
clients following a build through ``swarm://`` resources, and the client's own model answering by sampling."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.types import CreateMessageRequestParams, CreateMessageResult, ErrorData, TextContent
from tests.swarm.support.scripted_model import MODEL_STEPS, PLAN_PATHS, SPEC, default_entry, role_of
from tests.swarm.support.swarm_fixtures import FAST_OPENAI, gateway_config

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)


def config(tmp_path, *, swarm: dict[str, Any], timeouts: dict[str, Any] | None = None):
    return gateway_config(tmp_path, swarm, timeouts)


SLOW = {"backend": "openai", "openai": FAST_OPENAI | {"timeout": 10.0}}


# ---- long builds: the idle timeout (scaled from 300 s to 1 s) is reset by progress, bounded by the longest
# call ----


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_longer_than_the_timeout_lives_while_it_reports_progress(
    tmp_path, openai_env, mode
) -> None:
    openai_env.script("coder", {"delay": 2.5})  # one model call takes 2.5 idle timeouts
    cfg = config(
        tmp_path, swarm=SLOW | {"heartbeat_seconds": 0.2}, timeouts={"timeout": 1.0, "max_call_seconds": 60}
    )
    messages: list[str] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        messages.append(message or "")

    async with running_gateway(cfg) as rt, Client(rt.front.server, mode=mode) as c:
        started = anyio.current_time()
        r = await c.call_tool(
            "swarm__swarm_build", {"spec": SPEC, "wait": True}, progress_callback=on_progress
        )
        took = anyio.current_time() - started
    assert not r.is_error, r.content[0].text
    assert r.structured_content["state"] == "COMPLETED" and took > 2.5
    assert any("still working" in m for m in messages)  # the heartbeat during the long call


async def test_a_silent_call_is_cut_at_the_timeout_and_the_build_ends_cancelled(tmp_path, openai_env) -> None:
    openai_env.script("coder", {"delay": 3})
    cfg = config(
        tmp_path, swarm=SLOW | {"heartbeat_seconds": 60}, timeouts={"timeout": 1.0, "max_call_seconds": 60}
    )
    async with running_gateway(cfg) as rt, Client(rt.front.server, mode="legacy") as c:
        started = anyio.current_time()
        r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
        assert anyio.current_time() - started < 2.9
        assert r.is_error and "did not answer within 1s (and reported no progress)" in r.content[0].text
        tasks = await _until_finished(c)
    assert tasks[0]["state"] == "FAILED" and tasks[0]["error"] == "cancelled"  # what it made is kept


async def test_progress_never_keeps_a_call_past_its_longest(tmp_path, openai_env) -> None:
    openai_env.script("coder", {"delay": 4})
    cfg = config(
        tmp_path, swarm=SLOW | {"heartbeat_seconds": 0.2}, timeouts={"timeout": 1.0, "max_call_seconds": 2}
    )
    async with running_gateway(cfg) as rt, Client(rt.front.server, mode="legacy") as c:
        r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
        assert r.is_error and "was still running after 2s" in r.content[0].text
        assert (await _until_finished(c))[0]["error"] == "cancelled"


async def _until_finished(c: Client) -> list[dict[str, Any]]:
    with anyio.fail_after(20):
        while True:
            tasks = (await c.call_tool("swarm__swarm_list", {})).structured_content["tasks"]
            if tasks and tasks[0]["state"] in ("COMPLETED", "FAILED"):
                return tasks
            await anyio.sleep(0.05)


# ---- a client with a short timeout: start with wait=false, follow the swarm:// resources
# ----------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_wait_false_then_the_status_resource(tmp_path, openai_env, mode) -> None:
    async with (
        running_gateway(config(tmp_path, swarm={"backend": "openai", "openai": FAST_OPENAI})) as rt,
        Client(rt.front.server, mode=mode) as c,
    ):
        # every model call waits until released: the build cannot end before the call returns, whatever the
        # machine's load (a two-second bound on the call could fall on a loaded machine's start of a built-in)
        openai_env.hold.clear()
        started = (await c.call_tool("swarm__swarm_build", {"spec": SPEC})).structured_content
        task_id = started["task_id"]
        assert started["status"] == f"swarm://{task_id}"
        held = json.loads((await c.read_resource(started["status"])).contents[0].text)
        assert held["state"] not in ("COMPLETED", "FAILED"), held
        openai_env.hold.set()
        with anyio.fail_after(30):
            while True:
                status = json.loads((await c.read_resource(started["status"])).contents[0].text)
                if status["state"] in ("COMPLETED", "FAILED"):
                    break
                await anyio.sleep(0.05)
        assert status["state"] == "COMPLETED" and sorted(status["files"]) == sorted(PLAN_PATHS)
        manifest = await c.read_resource(f"swarm://{task_id}/app/src/main/AndroidManifest.xml")
        assert "android.intent.action.MAIN" in manifest.contents[0].text


# ---- the client's own model: sampling relayed to the client whose call started the build
# ---------------------


class ClientModel:
    """What a client that offers sampling does: shows each request to its user, who approves it, then answers.
    """

    def __init__(self, decline: str | None = None) -> None:
        self.asked: list[str] = []
        self.decline = decline

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        text = params.messages[0].content.text
        body = {
            "messages": [
                {"role": "system", "content": params.system_prompt},
                {"role": "user", "content": text},
            ]
        }
        role = role_of(body)
        self.asked.append(role)
        if role == self.decline:
            return ErrorData(code=-1, message=getattr(self, "refusal", "the user declined this request"))
        return CreateMessageResult(
            role="assistant",
            model="client-model",
            content=TextContent(type="text", text=default_entry(role, body)),
        )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_build_on_the_client_model_through_the_gateway(tmp_path, mode) -> None:
    model = ClientModel()
    async with running_gateway(config(tmp_path, swarm={})) as rt:  # backend auto (the default)
        # on 2026-07-28 each model request is one more round of the same call (the gateway holds it open)
        async with Client(
            rt.front.server, mode=mode, sampling_callback=model, input_required_max_rounds=64
        ) as c:
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert not r.is_error, r.content[0].text
            result = r.structured_content
            # a client that cannot wait for its build cannot lend its model: the build would need it later
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC})
            assert not r.is_error and r.structured_content["backend"] == "local"
            await _until_finished(c)
    assert result["state"] == "COMPLETED", result["error"]
    assert result["backend"] == "sampling"
    assert model.asked == ["planner"] + ["coder", "critic"] * MODEL_STEPS + ["verifier"]
    assert result["model_calls"] == len(model.asked)


async def test_the_users_refusal_in_the_client_ends_the_build(tmp_path) -> None:
    model = ClientModel(decline="planner")
    async with running_gateway(config(tmp_path, swarm={"backend": "sampling"})) as rt:
        async with Client(rt.front.server, mode="legacy", sampling_callback=model) as c:
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
        assert not r.is_error and r.structured_content["state"] == "FAILED"
        assert "the user declined this request" in r.structured_content["error"]
        async with Client(
            rt.front.server, mode="legacy"
        ) as c:  # no sampling offered: refused before it starts
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
            assert r.is_error and "does not offer sampling" in r.content[0].text
    assert model.asked == ["planner"]


class SlowClientModel(ClientModel):
    """A client whose model (or user) takes its time over one kind of request: it answers at last."""

    def __init__(self, slow: str, seconds: float) -> None:
        super().__init__()
        self.slow, self.seconds = slow, seconds

    async def __call__(self, context: ClientRequestContext, params: CreateMessageRequestParams):
        role = role_of({"messages": [{"role": "system", "content": params.system_prompt}]})
        if role == self.slow:
            await anyio.sleep(self.seconds)
        return await super().__call__(context, params)


@pytest.mark.parametrize("slow", ["planner", "coder", "critic"])
async def test_the_wall_clock_cap_holds_while_a_model_call_runs(tmp_path, slow) -> None:
    """The wall-clock cap was checked only before each agent: a model call that took its time (here the
    client's own model, asked by sampling, which no HTTP timeout bounds) ran on past it, so a build capped at
    3 s held the one build slot for as long as the client liked (up to the gateway's longest call, 95
    minutes). Now a model call ends at the cap and the build ends FAILED saying so."""
    model = SlowClientModel(slow, 30.0)
    async with running_gateway(config(tmp_path, swarm={"backend": "sampling"})) as rt:
        async with Client(rt.front.server, mode="legacy", sampling_callback=model) as c:
            started = anyio.current_time()
            with anyio.fail_after(25):
                r = await c.call_tool(
                    "swarm__swarm_build", {"spec": SPEC, "wait": True, "max_minutes": 3 / 60}
                )
            elapsed = anyio.current_time() - started
    assert not r.is_error and r.structured_content["state"] == "FAILED", r.content[0].text
    assert "wall-clock limit of 3 s reached" in r.structured_content["error"]
    assert elapsed < 10


class NamedClientModel(ClientModel):
    """A client whose model answers well, under a name of its choosing (any length, any characters)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name

    async def __call__(self, context: ClientRequestContext, params: CreateMessageRequestParams):
        answer = await super().__call__(context, params)
        return answer.model_copy(update={"model": self.name})


@pytest.mark.parametrize(
    "name",
    ["m" * 1_000_000, "\u202eledom-tneilc" + "x" * 300, "client\nmodel\x1b[2J" * 5_000],
    ids=["1 MB", "bidi override", "control characters"],
)
async def test_the_name_a_clients_model_gives_is_bounded_in_the_audit(tmp_path, name) -> None:
    """The model name in a sampling answer is the client's to write: it went whole into every api_calls row
    (a row per model call, kept for ever), uncounted by the token cap: a 1 MB name made 16 MB of audit for a
    16-call build, and names up to the client's message size (4 MB over HTTP) 300 MB for a build of 80 calls.
    The same went for why a client refused a request (the build's error). Now a backend's model name is kept
    to 80 characters and a build's error to 2,000, control and direction characters shown safely."""
    import sqlite3

    model = NamedClientModel(name)
    async with running_gateway(config(tmp_path, swarm={"backend": "sampling"})) as rt:
        async with Client(rt.front.server, mode="legacy", sampling_callback=model) as c:
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
    assert not r.is_error and r.structured_content["state"] == "COMPLETED", r.content[0].text
    db = sqlite3.connect(tmp_path / "swarm" / "swarm.db")
    names = [row[0] for row in db.execute("SELECT model FROM api_calls")]
    # 80 characters, each hidden one drawn as ⟨U+XXXX⟩ (10 at most), and a mark saying how much was cut
    assert len(names) == len(model.asked) and all(len(n) <= 900 for n in names), max(map(len, names))
    assert not any(ch in n for n in names for ch in ("\u202e", "\n", "\x1b"))

    refusing = ClientModel(decline="planner")  # and why a client refused: its words, bounded and safe
    refusing.refusal = name
    async with running_gateway(config(tmp_path / "2", swarm={"backend": "sampling"})) as rt:
        async with Client(rt.front.server, mode="legacy", sampling_callback=refusing) as c:
            r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
    error = r.structured_content["error"]
    assert r.structured_content["state"] == "FAILED" and len(error) <= 20_100, len(error)
    assert not any(ch in error for ch in ("\u202e", "\x1b"))
