"""Shared helpers for the device tests: building the server and connecting a real mcp.Client."""

from __future__ import annotations

import contextlib
import xml.etree.ElementTree as ET
from typing import Any

from mcp import Client
from mcp.types import ElicitResult

from device_tools.server import create_server
from sentinel_mcp.core.builtin import BuiltinContext


def adb_server(fake, tmp_path, **settings: Any):
    cfg = {"backend": "adb", "serial": fake.serial, "adb_port": fake.port, "dump_backoff": 0} | settings
    return create_server(BuiltinContext(name="device", data_dir=tmp_path, settings=cfg))


def sim_server(tmp_path, call_tool=None, **settings: Any):
    return create_server(
        BuiltinContext(name="device", data_dir=tmp_path, settings=settings, call_tool=call_tool)
    )


class Answers:
    """An elicitation callback that records questions and answers from a script ("yes", "no", "cancel")."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    async def __call__(self, context, params) -> ElicitResult:
        self.questions.append(params.message)
        answer = self.answers.pop(0) if self.answers else "no"
        if answer == "cancel":
            return ElicitResult(action="cancel")
        return ElicitResult(action="accept", content={"confirm": answer == "yes"})


@contextlib.asynccontextmanager
async def connect(server, mode: str = "legacy", answers: Answers | None = None):
    kwargs = {"elicitation_callback": answers} if answers is not None else {}
    async with Client(server, mode=mode, **kwargs) as client:
        yield client


def element(result, **match: str) -> dict[str, Any]:
    """The first element of a result's screen whose fields contain the given values."""
    screen = result.structured_content.get("screen") or result.structured_content
    for e in screen["elements"]:
        if all(v in (e.get(k) or "") for k, v in match.items()):
            return e
    raise AssertionError(f"no element {match} on {screen.get('snapshot_id')}")


def snapshot_id(result) -> str:
    screen = result.structured_content.get("screen") or result.structured_content
    return screen["snapshot_id"]


def ui_node(cls: str, pkg: str, bounds: str, children: tuple = (), **attrs: str) -> ET.Element:
    """A uiautomator dump's node as the phone writes it (every attribute), ``attrs`` with _ for -."""
    base = {"index": "0", "text": "", "resource-id": "", "class": cls, "package": pkg, "content-desc": "",
            "checkable": "false", "checked": "false", "clickable": "false", "enabled": "true",
            "focusable": "false", "focused": "false", "scrollable": "false", "long-clickable": "false",
            "password": "false", "selected": "false", "bounds": bounds}
    made = ET.Element("node", {**base, **{k.replace("_", "-"): v for k, v in attrs.items()}})
    made.extend(children)
    return made
