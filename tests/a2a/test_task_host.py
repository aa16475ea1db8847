"""The A2A area is type-checked: the task mixins name what they need of the service (``TaskHost``), the
service provides all of it, and the loosely typed spots mypy found now check what a peer sends."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from mcp.types import (
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from sentinel_mcp.a2a.actions import result_text
from sentinel_mcp.a2a.assist_tasks import PersonAssist
from sentinel_mcp.a2a.bridge import relayed_reply
from sentinel_mcp.a2a.leased_tasks import LeasedTasks
from sentinel_mcp.a2a.orchestrated_tasks import OrchestratorFirst
from sentinel_mcp.a2a.service import A2AService
from sentinel_mcp.a2a.task_host import TaskHost

ROOT = Path(__file__).resolve().parents[2]


def test_make_lint_holds_the_a2a_area_under_mypy():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert any(Path("sentinel_mcp/a2a").is_relative_to(f) for f in config["files"])
    ignored = [m for o in config.get("overrides", []) if o.get("ignore_errors") for m in o["module"]]
    assert not [m for m in ignored if m.startswith("sentinel_mcp.a2a")]


@pytest.mark.parametrize("mixin", [OrchestratorFirst, PersonAssist, LeasedTasks])
def test_a_task_mixin_alone_is_not_a_service(mixin):
    """A mixin declares the service's moves without providing them: it cannot stand in for the service."""
    assert issubclass(mixin, TaskHost)
    assert {"_run", "_settle", "_set_status"} <= set(mixin.__abstractmethods__)
    with pytest.raises(TypeError):
        mixin()


def test_the_service_provides_every_move_its_mixins_use():
    assert A2AService.__abstractmethods__ == frozenset()


def test_result_text_takes_only_text_content():
    result = CallToolResult(content=[
        TextContent(type="text", text="one"),
        ImageContent(type="image", data="aGk=", mime_type="image/png"),
        ResourceLink(type="resource_link", uri="file:///x", name="text"),
        EmbeddedResource(type="resource", resource=TextResourceContents(uri="file:///y", text="hidden")),
        TextContent(type="text", text="two"),
    ])
    assert result_text(result) == "one\ntwo"


@pytest.mark.parametrize("status", [None, "done", ["TASK_STATE_COMPLETED"], 7, {"state": None}])
def test_a_peers_task_without_a_status_object_reads_as_unknown(status):
    reply = relayed_reply({"task": {"id": "t1", "status": status}}, 10_000)
    assert reply["state"] == "unknown" and reply["texts"] == [] and reply["task_id"] == "t1"


@pytest.mark.parametrize("state, task_id", [("\x1b[2J\x1b]0;owned\x07", "t\u202e1"), ("TASK_STATE_DONE", 7),
                                            (["TASK_STATE_COMPLETED"], "t" * 10_000)])
def test_a_peers_state_and_task_id_are_relayed_only_when_they_are_what_a2a_allows(state, task_id):
    """What the bridged agent says its state and task id are reaches the person's chat: a state outside A2A's
    reads as unknown, and a task id no A2A message could carry back (or a person read) is dropped."""
    reply = relayed_reply({"task": {"id": task_id, "status": {"state": state}}}, 100_000)
    assert reply["state"] == "unknown" and reply["task_id"] is None


@pytest.mark.parametrize("bad", [7, "parts", {"parts": 3}, [3, "x", None], True])
def test_a_peers_malformed_parts_and_artifacts_are_skipped_not_fatal(bad):
    """Any shape where a list of parts or artifacts belongs loses only that piece, never the answer."""
    ok = {"parts": [{"text": "kept"}]}
    done = "TASK_STATE_COMPLETED"
    keeping = (
        {"task": {"id": "t", "status": {"state": done, "message": ok}, "artifacts": bad}},
        {"task": {"id": "t", "status": {"state": done}, "artifacts": [bad, ok]}},
        {"task": {"id": "t", "status": {"state": done, "message": bad}, "artifacts": [ok]}},
    )
    for result in keeping:
        assert relayed_reply(result, 10_000)["texts"] == ["kept"]
    for result in ({"message": {"parts": bad}}, {"message": bad}, {"task": {"id": "t", "artifacts": bad}}):
        assert relayed_reply(result, 10_000)["texts"] == []
