"""The guard protocol is complete: every guard states the whole interface, the gateway probes for nothing."""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest
from mcp.types import CallToolResult

import sentinel_mcp
from sentinel_mcp.core.decision import Guard, ToolCall
from sentinel_mcp.gateway.closed_guard import ClosedGuard
from sentinel_mcp.policy.default_guard import DefaultGuard
from sentinel_mcp.policy.guard import PolicyGuard
from tests.support.source_ast import parsed

LIFECYCLE = ("start", "close", "observe", "observes", "governed_names", "record_databases")


@pytest.mark.parametrize("cls", [DefaultGuard, ClosedGuard, PolicyGuard])
def test_every_guard_is_a_guard(cls):
    assert Guard in cls.__mro__  # subclassed explicitly: the defaults are inherited, nothing is probed
    for name in ("decide", "record_answer", *LIFECYCLE):
        assert callable(getattr(cls, name)), name


async def test_the_defaults_do_nothing_and_say_so():
    for guard in (DefaultGuard(), ClosedGuard("no engine")):
        await guard.start()
        call, result = ToolCall(name="a__b", server="a", tool="b", arguments={}), CallToolResult(content=[])
        await guard.observe(call, result)
        assert not guard.observes(call, result)  # the default observe learns nothing: never called
        assert guard.governed_names() == set() and guard.record_databases() == []
        await guard.close()
    assert DefaultGuard().problem is None and ClosedGuard("no engine").problem == "no engine"


# what the areas share through typed seams (the guard protocol, the port, the host state): never probed
# (and a call's outcome: its kinds are typed in core.port, a getattr on one hides which kind carries what)
PROBED = (
    "guard", "gateway", "runtime", "services", "holder", "a2a_service", "consent_gate", "outcome", "port",
)


def _probes(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", None) in ("getattr", "hasattr")
        and any(word in PROBED for word in re.findall(r"[a-z0-9_]+", ast.unparse(node.args[0]).lower()))
    )


def test_no_module_probes_the_guard_with_getattr():
    # every area calls the protocols; a getattr on a guard (or the gateway, its port, the runtime, the
    # services) would hide a missing method
    offenders = []
    root = Path(sentinel_mcp.__file__).parent
    for path in [*root.rglob("*.py"), *(root.parent / "device_tools").rglob("*.py")]:
        for node in ast.walk(parsed(path)):
            if _probes(node):
                offenders.append(f"{path.relative_to(root.parent)}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


def test_the_probe_check_sees_a_probe():
    # the check above is only worth something if it finds the spellings it forbids
    found = [ast.unparse(n.args[0]) for n in ast.walk(parsed(
        "getattr(console.runtime.gateway.guard, 'store', None)\nhasattr(guard, 'rulebases')\n"
        "getattr(self.holder.a2a_service, 'inbox')\ngetattr(params, 'message', '')\n"
        "getattr(outcome, 'decision_id', None)\ngetattr(self.port, 'principal_for', None)\n"
        "getattr(transport, 'get_extra_info')")) if _probes(n)]
    assert found == [
        "console.runtime.gateway.guard", "guard", "self.holder.a2a_service", "outcome", "self.port"
    ]


async def test_only_the_policy_guard_shows_session_facts(tmp_path):
    assert DefaultGuard().session_facts() is None and ClosedGuard("no engine").session_facts() is None
    assert "session_facts" in PolicyGuard.__dict__


def test_policy_guard_names_its_fact_store_through_the_protocol():
    # its own, not the protocol's defaults (observe lives in a base of its own, policy/observe_step.py)
    for name in ("record_databases", "observe", "observes"):
        assert getattr(PolicyGuard, name) is not getattr(Guard, name), name
    assert inspect.iscoroutinefunction(PolicyGuard.start) and inspect.iscoroutinefunction(PolicyGuard.close)
