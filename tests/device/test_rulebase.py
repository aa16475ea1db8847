"""rulebases/device.pl on the real policy guard (SWI-Prolog) over the device server via mcp.Client."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from tests.device.device_helpers import Answers, element, sim_server, snapshot_id
from mcp import Client
from mcp.types import Tool

from sentinel_mcp.config import PolicySettings
from sentinel_mcp.core.decision import Allow, Answer, Ask, Deny, ToolCall
from sentinel_mcp.core.port import Completed, Refused
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.guard import PolicyGuard

pytestmark = pytest.mark.timeout(90)


class DevicePort:
    """The gateway's view of the mounted device server: ``device__<tool>``, guarded solver fetches."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.tools: dict[str, Tool] = {}
        self.guard: PolicyGuard | None = None

    async def refresh(self) -> None:
        self.tools = {
            f"device__{t.name}": t.model_copy(update={"name": f"device__{t.name}"})
            for t in (await self.client.list_tools()).tools
        }

    def find_tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def list_catalog_tools(self) -> list[Tool]:
        return list(self.tools.values())

    def call_of(
        self, name: str, arguments: dict[str, Any], origin: str = "client", depth: int = 0
    ) -> ToolCall:
        ann = self.tools[name].annotations
        return ToolCall(
            name=name,
            server="device",
            tool=name.split("__", 1)[1],
            arguments=arguments,
            session_id="s1",
            origin=origin,
            depth=depth,  # type: ignore[arg-type]
            read_only=ann.read_only_hint if ann else None,
            destructive=ann.destructive_hint if ann else None,
        )

    async def invoke(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        *,
        session_id: str,
        client: str | None = None,
        origin: str = "client",
        answers: Any = None,
        depth: int = 0,
        progress: Any = None,
    ):
        call = self.call_of(name, arguments or {}, origin, depth)
        decision = await self.guard.decide(call)
        if not isinstance(decision, Allow):
            return Refused(reason=getattr(decision, "reason", "refused"))
        result = await self.client.call_tool(call.tool, arguments or {})
        await self.guard.observe(call, result)
        return Completed(result=result)


@contextlib.asynccontextmanager
async def guarded_device(tmp_path, seeds: dict | None = None):
    async with Client(sim_server(tmp_path), mode="auto", elicitation_callback=Answers("yes")) as client:
        port = DevicePort(client)
        await port.refresh()
        guard = PolicyGuard(
            [RULEBASES_DIR / "device.pl"],
            port,
            store_path=tmp_path / "facts.db",
            settings=PolicySettings(guard_timeout=20.0, confirm_ttl=300.0),
            seeds=seeds or {},
        )
        port.guard = guard
        await guard.start(watch=False)
        try:
            yield client, port, guard
        finally:
            await guard.close()


async def test_sms_guard_blocks_forwarding_codes(tmp_path):
    async with guarded_device(tmp_path) as (_, port, guard):
        code = await guard.decide(
            port.call_of("device__sms_send", {"to": "+15550100", "body": "Your code is 482913"})
        )
        bare = await guard.decide(port.call_of("device__sms_send", {"to": "+15550100", "body": "482913"}))
        ok = await guard.decide(port.call_of("device__sms_send", {"to": "Alice", "body": "See you at 7"}))
    assert isinstance(code, Deny) and "one-time code" in code.unmet[0]
    assert isinstance(bare, Deny)
    assert isinstance(ok, Allow), ok


async def test_terminal_guard_keeps_private_data_out(tmp_path):
    async with guarded_device(tmp_path) as (_, port, guard):
        private = await guard.decide(
            port.call_of(
                "device__terminal_run",
                {"command": "cat", "args": ["/data/data/com.example.bank/shared_prefs/session.xml"]},
            )
        )
        unknown = await guard.decide(port.call_of("device__terminal_run", {"command": "reboot"}))
        ok = await guard.decide(
            port.call_of("device__terminal_run", {"command": "getprop", "args": ["ro.product.model"]})
        )
    assert isinstance(private, Deny) and "private app data" in private.unmet[0]
    assert isinstance(unknown, Deny)
    assert isinstance(ok, Allow), ok


async def test_password_entry_needs_the_users_per_app_grant(tmp_path):
    async with guarded_device(tmp_path) as (client, port, guard):
        login = await client.call_tool("open_app", {"package": "com.example.bank"})  # the device asks; "yes"
        assert not login.is_error, login.content[0].text
        pw = element(login, resource_id="password")
        user = element(login, resource_id="username")
        call = port.call_of(
            "device__type_text",
            {"snapshot_id": snapshot_id(login), "element_id": pw["id"], "text": "hunter2"},
        )
        asked = await guard.decide(call)
        plain = await guard.decide(
            port.call_of(
                "device__type_text",
                {"snapshot_id": snapshot_id(login), "element_id": user["id"], "text": "alice"},
            )
        )
        code = await guard.decide(
            port.call_of(
                "device__type_text",
                {"snapshot_id": snapshot_id(login), "element_id": user["id"], "text": "verification 482913"},
            )
        )
        assert isinstance(asked, Ask) and "com.example.bank" in asked.questions[0].message
        assert isinstance(plain, Allow), plain
        assert isinstance(code, Deny) and "one-time code" in code.unmet[0]
        await guard.record_answer(
            call, asked.questions[0], Answer(action="accept", content={"answer": "yes"})
        )
        assert isinstance(await guard.decide(call), Allow)


async def test_the_terminal_guard_refuses_the_battery(tmp_path):
    async with guarded_device(tmp_path) as (_, port, guard):
        battery = await guard.decide(port.call_of("device__terminal_run", {"command": "dumpsys battery"}))
    assert isinstance(battery, Deny), battery
