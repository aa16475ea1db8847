"""A screenshot (and OCR) is shown only when the screens read just before and just after it show no personal
app the caller may not see. The caller cannot change the screen between those reads and the capture itself:
its own actions, sent at the same time (open Messages, then go Home), wait until the capture is done. Through
the real gateway over the adb protocol (the repo's fake adb server, a simulated phone behind it), whose
screencap takes a while, as a phone's does."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import anyio
import pytest

from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.config import parse_config
from sentinel_mcp.core.port import Completed
from sentinel_mcp.paths import RULEBASES_DIR
from tests.device.device_fake_adb import FakeAdbServer
from tests.identity.identity_rig import ALICE, BOB

pytestmark = pytest.mark.timeout(120)
MESSAGES = "com.google.android.apps.messaging"


@pytest.fixture
def phone():
    server = FakeAdbServer().start()
    yield server
    server.stop()


def slow_screencap(server: FakeAdbServer, taken_on: list[str]) -> Any:
    """screencap shows the screen as it is a moment after it was asked for (here: once Messages is open, if it
    opens within 1.5 s), and answers a moment later (once Home is back, if it comes)."""

    async def answer(w: asyncio.StreamWriter) -> None:
        device = server.device
        for wanted in ("messages_list", "home"):
            for _ in range(75):
                if device.screen == wanted:
                    break
                await asyncio.sleep(0.02)
            if wanted == "messages_list":
                png = device._run(["screencap", "-p"])
                taken_on.append(device.screen)
        w.write(png)
        await w.drain()

    return answer


@pytest.mark.parametrize("tool", ["device__screenshot", "device__screen_ocr"])
async def test_the_caller_cannot_change_the_screen_between_a_capture_and_the_reads_around_it(
        tmp_path: Path, phone: FakeAdbServer, tool: str) -> None:
    cfg = parse_config({"mcpServers": {}, "sentinel": {
        "rulebases": [str(RULEBASES_DIR / "default.pl"), str(RULEBASES_DIR / "device.pl")],
        "builtins": ["device"], "data_dir": str(tmp_path),
        "principals": [{"name": "alice", "token": ALICE}, {"name": "bob", "token": BOB}],
        "device": {"backend": "adb", "adb_host": "127.0.0.1", "adb_port": phone.port, "serial": phone.serial,
                   "risk_classifier": False, "dump_backoff": 0}}}, base_dir=tmp_path)
    taken_on: list[str] = []
    phone.streams["screencap -p"] = slow_screencap(phone, taken_on)
    bob: dict[str, Any] = {"session_id": "s-bob", "origin": "client", "principal": "bob"}
    async with running_gateway(cfg) as rt:
        gw = rt.gateway
        await gw.invoke("device__press_home", {}, **bob)
        shot: dict[str, Any] = {}

        async def capture() -> None:
            shot["outcome"] = await gw.invoke(tool, {}, **bob)

        async def flip() -> None:  # once the capture is asked for: open Messages, then go Home
            while not any("screencap" in s for s in phone.log):
                await anyio.sleep(0.01)
            await gw.invoke("device__open_app", {"package": MESSAGES}, **bob)
            await gw.invoke("device__press_home", {}, **bob)

        async with anyio.create_task_group() as tg:
            tg.start_soon(capture)
            tg.start_soon(flip)
        outcome = shot["outcome"]
        assert isinstance(outcome, Completed), outcome
        assert phone.device.screen == "home" and len(taken_on) == 1
        shown = "withheld" not in (outcome.result.structured_content or {})
        # the image shows Home (the caller's actions waited), or, had it shown Messages, it is withheld
        assert taken_on == ["home"] or not shown, (taken_on, outcome.result.content[-1])
        if tool == "device__screenshot":
            assert shown and [c for c in outcome.result.content if c.type == "image"]
