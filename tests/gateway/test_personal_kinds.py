"""What personal data a call reads (``consent_gate.personal_kinds``): a tool that declares nothing and is not
configured is told at once to read none (the hot path's shortcut); the config's word and each declaration
still name their kinds, with or without the others."""

from __future__ import annotations

from typing import Any

from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.gateway.consent_gate import personal_kinds


def _tool(meta: Any) -> Any:
    return type("Tool", (), {"meta": meta})()


def _call(**arguments: Any) -> ToolCall:
    return ToolCall(name="pim__read", server="pim", tool="read", arguments=arguments, principal="bob")


def test_a_tool_declaring_nothing_reads_no_kind() -> None:
    for meta in (None, {}, ""):
        assert personal_kinds(_tool(meta), _call(q="x"), {}) == []
        assert personal_kinds(_tool(meta), _call(q="x"), {"other__tool": "contacts"}) == []
    assert personal_kinds(object(), _call(), {}) == []  # no meta attribute at all


def test_the_config_names_a_kind_for_a_tool_declaring_nothing() -> None:
    for meta in (None, {}):
        assert personal_kinds(_tool(meta), _call(), {"pim__read": "calendar"}) == [("calendar", False)]


def test_each_declaration_still_names_its_kinds() -> None:
    assert personal_kinds(_tool({"sentinel/personal": "contacts"}), _call(), {}) == [("contacts", False)]
    by_argument = _tool({"sentinel/personal_arguments": {"who": "contacts"}})
    assert personal_kinds(by_argument, _call(who="alice"), {}) == [("contacts", True)]
    assert personal_kinds(by_argument, _call(), {}) == []
    screen = _tool({"sentinel/personal_screen": {"kinds": ["photos", "sms"], "argument": "show"}})
    assert personal_kinds(screen, _call(show=["sms"]), {}) == [("sms", False)]
    names = _tool({"sentinel/personal_names": {"to": "contacts"}})
    assert personal_kinds(names, _call(to="Alice"), {}) == [("contacts", False)]
