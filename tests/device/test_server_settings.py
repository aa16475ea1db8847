"""Settings validation, tool annotations, the stdio entry point, and the optional Termux backend."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from tests.device.device_helpers import connect, sim_server
from mcp import Client, StdioServerParameters

from device_tools.errors import DeviceCommandFailed
from device_tools.gate import CommandGate
from device_tools.server import create_server
from device_tools.termux_backend import TermuxBackend
from sentinel_mcp.config import ConfigError
from sentinel_mcp.core.builtin import BuiltinContext, load_factory

pytestmark = pytest.mark.timeout(60)
ROOT = Path(__file__).parents[2]


@pytest.mark.parametrize(
    "settings, key",
    [
        ({"backend": "usb"}, "sentinel.device.backend"),
        ({"adb_port": 70000}, "sentinel.device.adb_port"),
        ({"confirm_timeout": 0}, "sentinel.device.confirm_timeout"),
        ({"colour": "red"}, "sentinel.device.colour"),
    ],
)
def test_bad_settings_are_config_errors(tmp_path, settings, key):
    with pytest.raises(ConfigError, match=key.replace(".", r"\.")):
        create_server(BuiltinContext(name="device", data_dir=tmp_path, settings=settings))


def test_gateway_factory_resolves(tmp_path):
    assert load_factory("device") is create_server


async def test_annotations_mark_reads_and_destructive_tools(tmp_path):
    async with connect(sim_server(tmp_path)) as client:
        tools = {t.name: t.annotations for t in (await client.list_tools()).tools}
    for name in (
        "screen_read",
        "screenshot",
        "element_info",
        "wait_for",
        "calendar_list",
        "contacts_search",
        "sms_list",
        "notes_search",
    ):
        assert tools[name].read_only_hint is True, name
    for name in (
        "click",
        "type_text",
        "sms_send",
        "terminal_run",
        "notes_delete",
        "open_app",
        "calendar_create",
    ):
        assert tools[name].read_only_hint is False and tools[name].destructive_hint is True, name
    assert tools["press_back"].destructive_hint is False


async def test_python_dash_m_serves_over_stdio(tmp_path):
    env = {
        **os.environ,
        "SENTINEL_DEVICE_BACKEND": "simulated",
        "SENTINEL_DEVICE_DATA_DIR": str(tmp_path),
        "PYTHONPATH": str(ROOT),
    }
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "device_tools"], env=env, cwd=str(ROOT)
    )
    async with Client(params, mode="legacy") as client:
        names = {t.name for t in (await client.list_tools()).tools}
        read = await client.call_tool("screen_read", {})
    assert {"screen_read", "click", "sms_send", "terminal_run"} <= names
    assert not read.is_error and read.structured_content["package"] == "com.google.android.apps.nexuslauncher"


class RecordedTermux:
    """Replays recorded Termux:API outputs by program name and records the argv it was given."""

    def __init__(self, outputs: dict[str, bytes]) -> None:
        self.outputs = outputs
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str], timeout: float) -> bytes:
        self.calls.append(argv)
        return self.outputs.get(" ".join(argv[:2]), b"")


async def test_termux_backend_translates_commands():
    dump = (ROOT / "device_tools" / "screens" / "home.xml").read_text()
    runner = RecordedTermux(
        {
            "termux-accessibility dump": b"\xff\xfe" + dump.encode("utf-16-le"),
            "termux-dialog confirm": json.dumps({"code": -1, "text": "yes"}).encode(),
        }
    )
    backend = TermuxBackend(runner)
    assert "<hierarchy" in (await backend.exec_out(["uiautomator", "dump", "/dev/tty"])).decode()
    await backend.shell(["input", "tap", "10", "20"])
    await backend.shell(["input", "text", "Gr%süße"])
    await backend.shell(["input", "keyevent", "KEYCODE_BACK"])
    assert await backend.wait_for_key("KEY_VOLUMEUP", timeout=5)
    assert runner.calls[1:4] == [
        ["termux-accessibility", "click", "10", "20"],
        ["termux-accessibility", "type", "Gr üße"],
        ["termux-accessibility", "global-action", "BACK"],
    ]
    with pytest.raises(DeviceCommandFailed, match="cannot run"):
        await backend.shell(["reboot"])


async def test_termux_confirmation_dialog_shows_the_question_and_takes_only_a_yes_object():
    """On the phone the dialog is all the person sees: it said "Allow the pending action?" for every action,
    whatever it was; now it shows Sentinel's question. An answer that is not a JSON object is a no (a list
    raised AttributeError out of the wait)."""
    question = "Risk high: Tap \u201cSign in\u201d in Bank? (submits credentials; banking or payment app)"
    for output, expected in [
        (json.dumps({"code": -1, "text": "yes"}).encode(), True),
        (json.dumps(["yes"]).encode(), False),
        (json.dumps("yes").encode(), False),
        (b"\xff\xfe", False),
    ]:
        runner = RecordedTermux({"termux-dialog confirm": output})
        gate = CommandGate(TermuxBackend(runner))
        assert await gate.wait_for_key("KEY_VOLUMEUP", timeout=5, question=question) is expected
        (dialog,) = runner.calls
        assert dialog[:2] == ["termux-dialog", "confirm"] and question in dialog
