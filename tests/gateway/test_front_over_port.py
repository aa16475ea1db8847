"""The MCP front as a unit: served by the real ``Front`` and the real ``mcp`` client (both eras, in memory),
over a double of the gateway's ``FrontPort``. The front must need nothing of the gateway but the port: a front
that reached into the engine again (``execute``, ``guard``, ``manager``, ``conversations``) would fail here
with an AttributeError, and one that imported the engine fails the last test (and the import-linter contract).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Awaitable, Callable

import pytest
from mcp import Client
from mcp.types import (
    CallToolResult,
    CompleteResult,
    ElicitResult,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    TextContent,
    Tool,
)

import sentinel_mcp.gateway.front as front_module
import sentinel_mcp.gateway.front_utilities as utilities_module
from sentinel_mcp.core.call_meta import SESSION_KEY
from sentinel_mcp.core.decision import Deny, Question
from sentinel_mcp.core.port import (
    CallOutcome,
    CallRequest,
    Completed,
    FrontPort,
    NeedsInput,
    NotInCatalog,
    Refused,
)
from sentinel_mcp.gateway.conversations import Conversations
from sentinel_mcp.gateway.front import Front
from sentinel_mcp.identity.principal import OWNER
from tests.support.source_ast import parsed

ECHO = Tool(name="tb__echo", description="echo", input_schema={"type": "object"})


class PortDouble:
    """Exactly the ``FrontPort`` surface, nothing more: what the front may use of the gateway."""

    def __init__(self, outcomes: list[CallOutcome]) -> None:
        self.outcomes = outcomes
        self.runs: list[CallRequest] = []
        self.refusals: list[str] = []
        self.notices: tuple[Any, ...] = ()

    @property
    def policy_version(self) -> str:
        return "v-test"

    async def run(self, req: CallRequest) -> CallOutcome:
        self.runs.append(req)
        return self.outcomes.pop(0)

    async def invoke(self, name: str, arguments: dict[str, Any] | None, **kw: Any) -> Any:
        raise AssertionError("the front calls run(CallRequest), not invoke")

    async def refuse_answers(self, name: str, arguments: Any, *, session_id: str, client: str | None,
                             origin: Any, reason: str, principal: Any = None) -> Refused:
        self.refusals.append(reason)
        return Refused(reason=f"the answer was not accepted: {reason}")

    def find_tool(self, name: str) -> Tool | None:
        return ECHO if name == ECHO.name else None

    def list_catalog_tools(self, principal: Any = None) -> list[Tool]:
        return [ECHO]

    def upstream_of(self, name: str) -> str | None:
        return "tb" if name == ECHO.name else None

    def mounted_by_sentinel(self, name: str) -> bool:
        return False

    def pushes_mid_call(self, name: str) -> bool:
        return False

    def list_resources(self, principal: Any) -> list[Resource]:
        return []

    def list_resource_templates(self, principal: Any) -> list[ResourceTemplate]:
        return []

    def list_prompts(self, principal: Any) -> list[Prompt]:
        return []

    async def read_resource(
        self, uri: str, principal: Any, client: str | None, *, session: str = ""
    ) -> ReadResourceResult:
        raise NotInCatalog(uri)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None,
                         principal: Any) -> GetPromptResult:
        raise NotInCatalog(name)

    async def complete(self, ref: Any, argument: dict[str, Any], context: dict[str, Any] | None,
                       principal: Any) -> CompleteResult:
        raise NotInCatalog(str(ref))

    def resource_upstream(self, uri: str, principal: Any = None) -> Any:
        raise NotInCatalog(uri)

    async def set_log_level(self, level: str | None) -> None:
        return None

    def roots_changed(self, principal: str) -> None:
        return None

    def on_upstream_notices(self, resource_updated: Callable[[str, str, str | None], Awaitable[None]],
                            elicit_complete: Callable[[str, str, str | None], Awaitable[None]]) -> None:
        self.notices = (resource_updated, elicit_complete)


def _front(outcomes: list[CallOutcome]) -> tuple[Front, PortDouble]:
    port = PortDouble(outcomes)
    typed: FrontPort = port  # the double is a FrontPort (mypy checks it structurally)
    return Front(typed, Conversations(), confirm_ttl=60.0), port


def _done(text: str) -> Completed:
    return Completed(result=CallToolResult(content=[TextContent(type="text", text=text)]))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_goes_through_the_port_once_with_what_the_client_sent(mode: str) -> None:
    front, port = _front([_done("hello back")])
    assert port.notices  # the front's fan-out was registered with the port, not the manager
    async with Client(front.server, mode=mode) as c:  # type: ignore[arg-type]
        tools = await c.list_tools()
        assert [t.name for t in tools.tools] == ["tb__echo"]
        r = await c.call_tool("tb__echo", {"text": "hello"})
    assert not r.is_error and r.content[0].text == "hello back"  # type: ignore[union-attr]
    assert r.meta and SESSION_KEY in r.meta  # the conversation handed to the front names the session
    [req] = port.runs
    assert (req.name, req.arguments, req.origin) == ("tb__echo", {"text": "hello"}, "client")
    assert req.principal == OWNER
    assert req.session_id.startswith("owner/") and req.depth == 0


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_refusal_from_the_port_reaches_the_client_with_its_decision(mode: str) -> None:
    deny = Deny(reason="not on weekends", unmet=["weekday"], how_to_unblock=["wait for Monday"])
    front, port = _front([Refused(reason="not on weekends", decision=deny, decision_id="d-1")])
    async with Client(front.server, mode=mode) as c:  # type: ignore[arg-type]
        r = await c.call_tool("tb__echo", {})
    text = r.content[0].text  # type: ignore[union-attr]
    assert r.is_error and "not on weekends" in text and "wait for Monday" in text
    assert r.meta and r.meta.get("sentinel/decision_id") == "d-1"
    assert len(port.runs) == 1 and not port.refusals


async def test_questions_from_the_port_are_listed_to_a_client_that_cannot_be_asked() -> None:
    q = Question(key="why", message="Why do you need the echo?",
                 requested_schema={"type": "object", "properties": {"why": {"type": "string"}}},
                 meta={"kind": "ask", "predicate": "echo_reason", "inputs": ["x"], "from": ["user", "agent"]})
    confirm = Question(key="ok", message="Echo x?", requested_schema={"type": "object", "properties": {}},
                       meta={"kind": "confirm", "from": ["user"]})
    front, port = _front([NeedsInput(reason="the user must say why", questions=[q], decision_id="d-2"),
                          NeedsInput(reason="the user must confirm", questions=[confirm], decision_id="d-3")])
    async with Client(front.server, mode="legacy") as c:  # no elicitation callback: nobody can be asked
        r = await c.call_tool("tb__echo", {})
        text = r.content[0].text  # type: ignore[union-attr]
        assert r.is_error and "Why do you need the echo?" in text and "sentinel__sentinel_answer" in text
        assert "(predicate, inputs and the answer" in text and "Only the user" not in text
        # the arguments sentinel_answer takes (its schema has no "key"), not the question's key
        shown = r.meta or {}
        assert shown["sentinel/questions"][0]["answer_with"] == {"tool": "sentinel__sentinel_answer",
                                                        "predicate": "echo_reason", "inputs": ["x"]}, shown
        assert r.meta and r.meta.get("sentinel/decision_id") == "d-2"
        r = await c.call_tool("tb__echo", {})  # a confirmation: the agent's answer would be refused
        text = r.content[0].text  # type: ignore[union-attr]
        assert r.is_error and "Echo x?" in text and "sentinel__sentinel_answer" not in text
        assert "Only the user can answer it" in text
        assert "answer_with" not in (r.meta or {})["sentinel/questions"][0]
    assert len(port.runs) == 2


async def test_a_forged_answer_state_is_refused_through_the_port() -> None:
    front, port = _front([])
    async with Client(front.server, mode="auto") as c:
        r = await c.session.call_tool("tb__echo", {}, input_responses={"why": ElicitResult(action="accept")},
                                      request_state="forged")
    assert r.is_error and port.refusals and not port.runs  # audited by the port, nothing ran


@pytest.mark.parametrize("module", [front_module, utilities_module])
def test_the_front_imports_no_part_of_the_engine(module: Any) -> None:
    """Direct imports only (the import-linter contract in pyproject.toml follows indirect ones too)."""
    tree = parsed(Path(module.__file__))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    engine = {"sentinel_mcp.gateway.core", "sentinel_mcp.gateway.upstream_manager",
              "sentinel_mcp.gateway.catalog", "sentinel_mcp.gateway.catalog_view"}
    assert not imported & engine, imported & engine
    assert "sentinel_mcp.core.port" in imported
