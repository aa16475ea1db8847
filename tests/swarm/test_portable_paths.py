"""A generated project is opened where its user works (macOS, Windows: case-insensitive file systems, names
Windows reserves), not only on the gateway's disk. Through the real gateway, a hostile planner (the model
endpoint: its answer is hostile text) names what the blueprint's patterns allow but such a disk cannot hold:
screens that differ only in case (``NoteList`` and ``Notelist``: the second screen's files overwrite the
first's there), an entity named for a device (``Nul.kt``, ``Aux.kt``: a file no Windows checkout can make).
The plan is refused before any code is asked for; a spec whose package is such a name, or too long for its
files' paths, is invalid before a build starts."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.swarm.support.scripted_model import BLUEPRINT, SPEC
from tests.swarm.support.swarm_fixtures import gateway_config

from sentinel_mcp.app.runtime import running_gateway

pytestmark = pytest.mark.timeout(120)
EDITOR, LISTING = BLUEPRINT["screens"]


def screens(first: str, second: str) -> dict[str, Any]:
    return dict(BLUEPRINT, screens=[dict(EDITOR, screen=first), dict(LISTING, screen=second)])


async def _build(c: Client) -> dict[str, Any]:
    r = await c.call_tool("swarm__swarm_build", {"spec": SPEC, "wait": True})
    assert not r.is_error, r.content[0].text
    return r.structured_content


@pytest.mark.parametrize(
    "blueprint, why",
    [
        (screens("NoteList", "Notelist"), "case"),
        (screens("NoteEditor", "NOTEEditor"), "case"),
        (dict(BLUEPRINT, entity="Nul"), "reserve"),
        (dict(BLUEPRINT, entity="Aux"), "reserve"),
        (dict(BLUEPRINT, entity="Com1"), "reserve"),
        (dict(BLUEPRINT, entity="Lpt9"), "reserve"),
        (dict(BLUEPRINT, entity="CON"), "reserve"),
    ],
)
async def test_a_plan_whose_files_collide_or_are_reserved_elsewhere_is_refused(
    tmp_path, openai_env, blueprint, why
) -> None:
    openai_env.script("planner", json.dumps(blueprint))
    async with running_gateway(gateway_config(tmp_path)) as rt, Client(rt.front.server, mode="legacy") as c:
        done = await _build(c)
    assert done["state"] == "FAILED", done["files"]
    assert done["error"].startswith("plan rejected") and why in done["error"], done["error"]
    assert openai_env.calls("coder") == [] and done["files"] == []


@pytest.mark.parametrize(
    "package, why",
    [
        ("com.example.con", "reserve"),
        ("com.aux.notes", "reserve"),
        ("com.example.lpt1", "reserve"),
        ("com.example." + "a" * 200, "long"),
        ("com." + ".".join(["abcdefghij"] * 20), "long"),
    ],
)
async def test_a_package_that_cannot_become_a_portable_path_is_an_invalid_spec(
    tmp_path, openai_env, package, why
) -> None:
    spec = dict(SPEC, package_name=package)
    async with running_gateway(gateway_config(tmp_path)) as rt, Client(rt.front.server, mode="legacy") as c:
        checked = await c.call_tool("swarm__swarm_validate", {"spec": spec})
        refused = await c.call_tool("swarm__swarm_build", {"spec": spec, "wait": True})
        with anyio.fail_after(10):
            listed = (await c.call_tool("swarm__swarm_list", {})).structured_content["tasks"]
    assert checked.structured_content["valid"] is False
    assert any("package_name" in p and why in p for p in checked.structured_content["problems"])
    assert refused.is_error and "package_name" in refused.content[0].text
    assert listed == [] and openai_env.calls() == []  # no build, no model call
