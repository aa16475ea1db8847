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


@pytest.mark.parametrize("status", [None, {}, {"state": None}])
def test_a_peers_task_status_left_out_or_null_reads_as_unspecified(status):
    """ProtoJSON: a status left out (or null) is the empty message, a state left out is TASK_STATE_UNSPECIFIED
    (a proto3 writer leaves a default out)."""
    reply = relayed_reply({"task": {"id": "t1", "status": status}}, 10_000)
    assert reply["state"] == "TASK_STATE_UNSPECIFIED" and reply["texts"] == [] and reply["task_id"] == "t1"


@pytest.mark.parametrize("task", [{"id": "t1", "status": "done"},
                                  {"id": "t1", "status": ["TASK_STATE_COMPLETED"]}, {"id": "t1", "status": 7},
                                  {"id": "t1", "status": {"state": 7}},
                                  {"id": 7, "status": {"state": "TASK_STATE_COMPLETED"}},
                                  {"id": "t1", "status": {"state": ["TASK_STATE_COMPLETED"]}}])
def test_a_peers_task_of_the_wrong_type_is_invalid(task):
    """A status, state or id of the wrong type is not an A2A task: refused whole, never read as a state."""
    reply = relayed_reply({"task": task}, 10_000)
    assert reply["state"] == "invalid" and reply["texts"] == [] and "not an A2A task" in reply["note"]


@pytest.mark.parametrize("state, task_id", [("\x1b[2J\x1b]0;owned\x07", "t\u202e1"),
                                            ("TASK_STATE_DONE", "t" * 10_000)])
def test_a_peers_state_and_task_id_are_relayed_only_when_they_are_what_a2a_allows(state, task_id):
    """What the bridged agent says its state and task id are reaches the person's chat: a state outside A2A's
    reads as unknown, and a task id no A2A message could carry back (or a person read) is dropped."""
    reply = relayed_reply({"task": {"id": task_id, "status": {"state": state}}}, 100_000)
    assert reply["state"] == "unknown" and reply["task_id"] is None


@pytest.mark.parametrize("bad", [7, "parts", {"parts": 3}, [3, "x", None], True])
def test_a_peers_malformed_parts_and_artifacts_make_the_answer_invalid(bad):
    """Any shape but a list of parts or artifacts where one belongs is not an A2A answer: refused whole
    (state "invalid", nothing relayed), not read as a task that completed with fewer parts than it has."""
    ok = {"parts": [{"text": "kept"}]}
    done = "TASK_STATE_COMPLETED"
    for result in (
        {"task": {"id": "t", "status": {"state": done, "message": ok}, "artifacts": bad}},
        {"task": {"id": "t", "status": {"state": done}, "artifacts": [bad, ok]}},
        {"task": {"id": "t", "status": {"state": done, "message": bad}, "artifacts": [ok]}},
        {"message": {"parts": bad}}, {"message": bad}, {"task": {"id": "t", "artifacts": bad}},
    ):
        reply = relayed_reply(result, 10_000)
        assert reply["state"] == "invalid" and reply["texts"] == [], (result, reply)
