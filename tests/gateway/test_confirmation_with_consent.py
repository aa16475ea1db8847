"""A destructive tool that also reads personal data: the fail-safe default guard asks to confirm it, the
consent gate asks for the user's consent. Both are asked in one round, so the confirmation is not spent on a
call the gate then stops (before: the handshake era refused the call after both answers, "did not let the
call go ahead", and the 2026-07-28 era asked in a loop). Real ``mcp`` client in both eras, a real stdio
upstream; a "no" to either question runs nothing and stores nothing; a tool that only reads personal data is
asked consent only; a tool on the deny list is refused without asking for consent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.types import ElicitResult

from sentinel_mcp.app.runtime import running_gateway
from tests.gateway.helpers import make_config

pytestmark = pytest.mark.timeout(120)


class Person:
    """Answers each question: the confirmation with ``approve``, the consent with ``allow``."""

    def __init__(self, approve: bool = True, allow: bool = True) -> None:
        self.approve, self.allow = approve, allow
        self.asked: list[str] = []

    async def __call__(self, ctx: Any, params: Any) -> ElicitResult:
        schema = str(params.requested_schema)
        self.asked.append("confirm" if "approve" in schema else "consent")
        if "approve" in schema:
            return ElicitResult(action="accept", content={"approve": self.approve})
        return ElicitResult(action="accept", content={"allow": self.allow, "remember": False})


def config(tmp: Path, **sentinel: Any) -> Any:
    return make_config(tmp / "data", fork=True, builtins=[],
                       personal={"tb__write_marker": "notes", "tb__echo": "notes"}, **sentinel)


@pytest.mark.parametrize("mode", ["legacy", "auto"])  # handshake era (pushed), 2026-07-28 (input rounds)
async def test_confirm_and_consent_are_asked_once_each_and_the_call_runs_once(
    tmp_path: Path, mode: str
) -> None:
    marker = tmp_path / "marker.txt"
    async with running_gateway(config(tmp_path)) as rt:
        person = Person()
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as c:
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "once"})
            assert not r.is_error, r.content[0].text
            assert sorted(person.asked) == ["confirm", "consent"], person.asked
            assert marker.read_text() == "once\n"
            # used by that call: the same call again asks both again
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "once"})
            assert not r.is_error and sorted(person.asked) == ["confirm", "confirm", "consent", "consent"]


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.parametrize("approve,allow", [(True, False), (False, True), (False, False)])
async def test_a_no_to_either_runs_nothing_and_stores_nothing(
    tmp_path: Path, mode: str, approve: bool, allow: bool
) -> None:
    marker = tmp_path / "marker.txt"
    async with running_gateway(config(tmp_path)) as rt:
        async with Client(rt.front.server, mode=mode, elicitation_callback=Person(approve, allow)) as c:
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "no"})
            assert r.is_error and "declined" in r.content[0].text, r.content[0].text
        assert not marker.exists()
        person = Person()
        async with Client(rt.front.server, mode=mode, elicitation_callback=person) as c:  # nothing kept
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "yes"})
            assert not r.is_error and sorted(person.asked) == ["confirm", "consent"], person.asked


async def test_a_read_only_personal_tool_asks_consent_only_and_a_denied_tool_asks_nothing(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "marker.txt"
    async with running_gateway(config(tmp_path, policy={"deny": ["tb__write_marker"]})) as rt:
        person = Person()
        async with Client(rt.front.server, mode="legacy", elicitation_callback=person) as c:
            r = await c.call_tool("tb__echo", {"text": "hi"})
            assert not r.is_error and person.asked == ["consent"], person.asked
            r = await c.call_tool("tb__write_marker", {"path": str(marker), "text": "x"})
            assert r.is_error and "deny list" in r.content[0].text and person.asked == ["consent"]
    assert not marker.exists()
