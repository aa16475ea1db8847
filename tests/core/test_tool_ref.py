"""Cross-area tool names: a ToolRef resolves through the real catalog whatever prefix exposes the tool."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from mcp.types import Tool

from sentinel_mcp.core.tool_ref import IDENTITY_SEP, ToolRef
from sentinel_mcp.gateway.catalog import SEP, Catalog, identity_of
from sentinel_mcp.gateway.core import Gateway


def _catalog(*upstreams: tuple[str, str | None, list[str]]) -> SimpleNamespace:
    catalog = Catalog()
    catalog.rebuild(
        [
            SimpleNamespace(
                name=name,
                prefix=prefix,
                builtin=False,
                prompts=[],
                resources=[],
                resource_templates=[],
                tools={t: Tool(name=t, input_schema={"type": "object"}) for t in tools},
            )
            for name, prefix, tools in upstreams
        ]
    )
    gateway = SimpleNamespace(manager=SimpleNamespace(catalog=catalog))
    # the gateway's own lookup (exposed name, then identity), on the real catalog
    return SimpleNamespace(find_tool=lambda name: Gateway.find_tool(gateway, name))  # type: ignore[arg-type]


def test_the_separator_is_the_catalogs():
    assert IDENTITY_SEP == SEP and ToolRef("llm", "llm_generate") == identity_of("llm", "llm_generate")


@pytest.mark.parametrize(
    "prefix,exposed",
    [
        (None, "sensors__sensor_read"),
        ("phone", "phone__sensor_read"),
        ("", "sensor_read"),
        ("s", "s__sensor_read"),
    ],
)
def test_a_ref_resolves_to_the_exposed_name_under_any_prefix(prefix, exposed):
    catalog = _catalog(("sensors", prefix, ["sensor_read", "sensor_consent"]))
    tool = ToolRef("sensors", "sensor_read").resolve(catalog)
    assert tool is not None and tool.name == exposed


def test_a_literal_name_misses_under_another_prefix_where_the_ref_does_not():
    catalog = _catalog(("sensors", "phone", ["sensor_read"]))
    assert catalog.find_tool("phone__sensor_read") is not None
    assert ToolRef("sensors", "sensor_read").resolve(catalog).name == "phone__sensor_read"


@pytest.mark.parametrize(
    "server,tool",
    [("llm", "nope"), ("nope", "llm_generate"), ("LLM", "llm_generate"), ("llm ", "llm_generate")],
)
def test_an_absent_tool_resolves_to_none(server, tool):
    assert ToolRef(server, tool).resolve(_catalog(("llm", None, ["llm_generate"]))) is None


@pytest.mark.parametrize("server,tool", [("", "x"), ("x", ""), ("a__b", "x")])
def test_a_malformed_ref_is_refused(server, tool):
    with pytest.raises(ValueError):
        ToolRef(server, tool)


def test_a_ref_is_its_identity_wherever_a_name_went():
    ref = ToolRef("llm", "llm_classify_risk")
    assert ref == "llm__llm_classify_risk" and {ref: 1}["llm__llm_classify_risk"] == 1
    assert (ref.server, ref.tool, ref.identity) == ("llm", "llm_classify_risk", "llm__llm_classify_risk")
    assert repr(ref) == "ToolRef('llm', 'llm_classify_risk')"


@pytest.mark.parametrize("prefix", [None, "brain", ""])
def test_a_configured_default_name_keeps_naming_its_tool_under_another_prefix(prefix):
    """``tool_ref``: a configured ``server__tool`` (the swarm's llm tool) is resolved, not sent as a literal.
    """
    from sentinel_mcp.core.tool_ref import tool_ref

    catalog = _catalog(("llm", prefix, ["llm_generate"]))
    ref = tool_ref("llm__llm_generate")
    assert isinstance(ref, ToolRef)
    tool = ref.resolve(catalog)
    assert (
        tool is not None
        and tool.name
        == {None: "llm__llm_generate", "brain": "brain__llm_generate", "": "llm_generate"}[prefix]
    )
    assert tool_ref("llm_generate") == "llm_generate" and not isinstance(tool_ref("llm_generate"), ToolRef)
    assert not isinstance(tool_ref("__x"), ToolRef) and not isinstance(tool_ref("x__"), ToolRef)
