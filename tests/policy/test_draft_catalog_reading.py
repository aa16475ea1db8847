"""``sentinel-mcp draft`` reads each tool as the gateway's catalog does (``mcp.types.Tool``, what a client
makes of a listing): a tool the catalog refuses (a title or description that is no text, an annotation that
is no boolean, an output schema that is no object) was drafted all the same, its guard or binding then named
a tool no upstream has, and the whole draft failed its check and was not written. It is left out with a TODO
naming why; the rest is drafted. An annotation the catalog reads as false (``"readOnlyHint": "false"``,
``"0"``) was read as Python's truth of the text (true): a binding to a write, and again no draft."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.cli import main

pytestmark = pytest.mark.timeout(90)

KEY = {"type": "object", "properties": {"order_id": {"type": "string"}}}
OUT = {"type": "object", "properties": {"status": {"type": "string"}}}
CANCEL = {"name": "cancel_order", "annotations": {"destructiveHint": True},
          "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"},
                                                           "reason": {"type": "string"}}}}


def _draft(tmp_path: Path, tools: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]) -> str:
    (tmp_path / "policy.md").write_text("# Shop\n\n## Cancel\n\nCancel an order only when it is pending.\n")
    (tmp_path / "tools.json").write_text(json.dumps({"tools": tools}))
    out = tmp_path / "rulebases" / "shop.pl"
    out.parent.mkdir()
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0 and out.exists(), err
    return out.read_text()


REFUSED = {
    "a title that is no text": {"title": 5},
    "a description that is no text": {"description": ["a"]},
    "an annotation that is no boolean": {"annotations": {"readOnlyHint": "maybe"}},
    "an output schema that is no object": {"outputSchema": 5},
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_tool_the_catalog_refuses_is_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                case: str) -> None:
    odd = {"name": "get_order", "annotations": {"readOnlyHint": True}, "inputSchema": KEY,
           "outputSchema": OUT, **REFUSED[case]}
    text = _draft(tmp_path, [odd, CANCEL], capsys)
    assert "% TODO: tool 'get_order' left out: the gateway's catalog refuses its listing" in text, text
    assert "shop__get_order'" not in text.replace("% TODO", ""), text
    assert "guard('shop__cancel_order'" in text


@pytest.mark.parametrize("hint", ["false", "0", "no"])
def test_an_annotation_is_read_as_the_catalog_reads_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       hint: str) -> None:
    write = {"name": "cancel_order", "annotations": {"readOnlyHint": hint, "destructiveHint": True},
             "inputSchema": KEY, "outputSchema": OUT}
    text = _draft(tmp_path, [write], capsys)
    assert "binding(" not in text and "guard('shop__cancel_order'" in text, text


def test_a_property_schema_that_is_no_object_is_checked(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A property's schema that is not an object (``{"reason": 5}``: the catalog keeps the tool, an input
    schema is any object) crashed the checker's look at the confirmation (``5.get``), and with it the
    draft."""
    odd = {**CANCEL, "inputSchema": {"type": "object", "properties": {"order_id": 5, "reason": [1]}}}
    text = _draft(tmp_path, [odd], capsys)
    assert "guard('shop__cancel_order'" in text
