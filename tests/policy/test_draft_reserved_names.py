"""``sentinel-mcp draft`` names a fact after its tool (``get_member`` offers ``member``) or an askable after
its tool and argument (``write``'s ``canonical``): a name that is a builtin's or Sentinel's own (member/2,
length/2, write_canonical/1, guard/3) is refused by the check (its look-up would replace the library's
predicate in every rule), and the whole draft was then refused for one tool's name. Such a fact is named with
the next number free, asked of the engine (the check's own test), and the draft is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.cli import main

pytestmark = pytest.mark.timeout(90)


def _read(name: str, inputs: tuple[str, ...] = ("order_id",)) -> dict[str, Any]:
    return {"name": name, "annotations": {"readOnlyHint": True},
            "inputSchema": {"type": "object", "properties": {i: {"type": "string"} for i in inputs}},
            "outputSchema": {"type": "object", "properties": {"result": {"type": "string"}}}}


TOOLS = [
    _read("get_member"), _read("get_length"), _read("get_guard", ("a", "b")), _read("get_member_2"),
    {"name": "write", "annotations": {"destructiveHint": True},
     "inputSchema": {"type": "object", "properties": {"canonical": {"type": "string"}}}},
]


def test_a_fact_named_like_a_builtin_is_named_again(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.md").write_text("# Shop\n\nWrite only what the user asked.\n")
    (tmp_path / "tools.json").write_text(json.dumps({"tools": TOOLS}))
    out = tmp_path / "shop.pl"
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json"), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    text = out.read_text()
    for head in ("binding(member_2(", "binding(length_2(", "binding(guard_2(", "askable(write_canonical_2("):
        assert head in text, text
    assert "binding(member(" not in text and "binding(length(" not in text
    assert main(["check", str(out)]) == 0
