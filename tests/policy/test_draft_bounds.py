"""``sentinel-mcp draft`` over schemas made to hold it: the upstream's tools/list is hostile, and a few
kilobytes of it once took the draft minutes to hours and hundreds of megabytes of output (a schema is
tiny beside what it expands to). Every case here ends in a bounded number of steps, as a tool left out (a
TODO says why) or as the whole draft refused with a named error; never a draft that runs on."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.policy.draft import draft_rulebase
from sentinel_mcp.policy.draft_budget import DRAFT_STEPS, TOOL_STEPS, DraftTooLarge

pytestmark = pytest.mark.timeout(120)

RO = {"readOnlyHint": True}


def _spellings(n: int) -> list[str]:
    """``n`` plain property names that all read as the one variable ``A`` (``a``, ``a_``, ``a.``, ``a-_``):
    each took a walk past every name before it, 10^5 of them some 10^10 steps."""
    out: list[str] = []
    for length in itertools.count(1):
        for tail in itertools.product("_.-", repeat=length):
            out.append("a" + "".join(tail))
            if len(out) == n:
                return out
    raise AssertionError


def _ref_fan(n: int, depth: int) -> dict[str, Any]:
    """An output schema of ``n`` properties, each a ``$ref`` to one object of ``n`` fields, each a ``$ref``
    chain ``depth`` long: ~25 KB expanded to n*n*depth resolution steps and n*n extract entries."""
    defs: dict[str, Any] = {f"c{i}": {"$ref": f"#/$defs/c{i + 1}"} for i in range(depth)}
    defs[f"c{depth}"] = {"type": "string"}
    defs["big"] = {"type": "object", "properties": {f"f{i}": {"$ref": "#/$defs/c0"} for i in range(n)}}
    fan = {f"p{i}": {"$ref": "#/$defs/big"} for i in range(n)}
    return {"type": "object", "$defs": defs, "properties": fan}


HOLDING: dict[str, dict[str, Any]] = {
    "10^5 properties of one spelling": {
        "name": "set_x", "annotations": {"destructiveHint": True},
        "inputSchema": {"type": "object",
                        "properties": {k: {"type": "string"} for k in _spellings(100_000)}}},
    "a $ref fan-out": {
        "name": "get_x", "annotations": RO, "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": _ref_fan(1000, 150)},
    "10^5 enum values": {
        "name": "set_y", "annotations": {"destructiveHint": True},
        "inputSchema": {"type": "object", "properties": {
            "r": {"type": "string", "enum": [f"v{i}" for i in range(100_000)]}}}},
    "10^5 output properties": {
        "name": "get_y", "annotations": RO, "inputSchema": {"type": "object", "properties": {}},
        "outputSchema": {"type": "object",
                         "properties": {f"f{i}": {"type": "string"} for i in range(100_000)}}},
}


@pytest.mark.parametrize("case", list(HOLDING))
def test_a_tool_whose_schema_expands_past_the_bound_is_left_out(case: str) -> None:
    keep = {"name": "cancel_order", "annotations": {"destructiveHint": True},
            "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
    draft = draft_rulebase("shop", [HOLDING[case], keep], "shop", "policy.md", [])
    name = HOLDING[case]["name"]
    assert f"% TODO: tool '{name}' left out: its schemas are too large to draft" in draft.text
    assert f"shop__{name}" not in draft.text
    assert any(g.startswith("guard('shop__cancel_order'") for g in draft.guards)  # the others still drafted
    assert len(draft.text) < 10_000


def test_names_of_one_spelling_within_the_bound_still_get_variables_of_their_own() -> None:
    names = _spellings(300)
    wipe = {"name": "wipe_x", "annotations": {"destructiveHint": True},
            "inputSchema": {"type": "object", "properties": {k: {"type": "string"} for k in names}}}
    guard = draft_rulebase("shop", [wipe], "shop", "policy.md", []).guards[0]
    pattern = guard.split("\n", 1)[0]
    variables = [part.split(" = ")[1].rstrip("],") for part in pattern.split("[", 1)[1].split(", ")]
    assert len(variables) == len(set(variables)) == len(names)


def _wide_server(reads: int, writes: int) -> list[dict[str, Any]]:
    """Each write invalidates every fact of every read keyed by the same identifier: reads x writes terms."""
    key = {"type": "object", "properties": {"order_id": {"type": "string"}}}
    out = {"type": "object", "properties": {"status": {"type": "string"}}}
    return [{"name": f"get_s{i}", "annotations": RO, "inputSchema": key, "outputSchema": out}
            for i in range(reads)] + [
        {"name": f"set_s{i}", "annotations": {"destructiveHint": True}, "inputSchema": key}
        for i in range(writes)]


def test_a_draft_past_its_whole_bound_is_a_named_error() -> None:
    """Each tool within its own bound, together past the draft's: 2,000 reads and 2,000 writes of one key
    wrote 4 million invalidations (~300 MB) before anything said no."""
    assert 2000 * 2000 > DRAFT_STEPS and TOOL_STEPS < DRAFT_STEPS
    with pytest.raises(DraftTooLarge) as raised:
        draft_rulebase("shop", _wide_server(2000, 2000), "shop", "policy.md", [])
    assert "too large to draft" in str(raised.value)


def test_the_command_says_the_draft_is_too_large_in_one_line(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "policy.md").write_text("# P\n\nText.\n")
    (tmp_path / "tools.json").write_text(json.dumps(_wide_server(2000, 2000)))
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json"), "-o", str(tmp_path / "out.pl")])
    err = capsys.readouterr().err
    assert code == 2 and "too large to draft" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out.pl").exists()


def test_a_saved_tool_list_longer_than_any_server_lists_is_refused(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The gateway takes at most 5,000 tools of an upstream (upstream_listing.MAX_ITEMS); a list longer than
    that is no server's, named as the file it came from."""
    from sentinel_mcp.gateway.upstream_listing import MAX_ITEMS

    (tmp_path / "policy.md").write_text("# P\n\nText.\n")
    tools = [{"name": f"t{i}"} for i in range(MAX_ITEMS + 1)]
    (tmp_path / "tools.json").write_text(json.dumps(tools))
    code = main(["draft", "--policy", str(tmp_path / "policy.md"), "--server", "shop", "--tools",
                 str(tmp_path / "tools.json")])
    err = capsys.readouterr().err
    assert code == 2 and "tools.json" in err and f"{MAX_ITEMS:,}" in err, err


def test_a_long_policy_over_many_tools_is_a_named_error() -> None:
    """Every paragraph is searched for every write tool: 300 tools over a policy of 20,000 paragraphs (1 MB)
    took 37 s, 1,000 of them 44 s and more with the policy."""
    from sentinel_mcp.search.paragraphs import split_markdown

    policy = "# P\n\n" + "".join(f"Cancel order number {i} when pending.\n\n" for i in range(20_000))
    tools = [{"name": f"cancel_order_x{i}", "annotations": {"destructiveHint": True},
              "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
             for i in range(300)]
    assert 300 * 20_000 > DRAFT_STEPS
    with pytest.raises(DraftTooLarge):
        draft_rulebase("shop", tools, "shop", "policy.md", split_markdown(policy, "shop"))
