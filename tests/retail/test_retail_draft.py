"""``sentinel-mcp draft``: a candidate rulebase from the retail server's tools and policy.md, that passes
``sentinel-mcp check`` as it is and keeps what retail.pl needs from the schemas."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from sentinel_mcp.cli import main
from sentinel_mcp.paths import PROJECT_ROOT

pytestmark = pytest.mark.timeout(90)
POLICY = PROJECT_ROOT / "examples" / "retail" / "data" / "policy.md"


def test_the_draft_of_the_retail_server_passes_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "config.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "retail": {
                        "command": sys.executable,
                        "args": ["-m", "examples.retail"],
                        "cwd": str(PROJECT_ROOT),
                    }
                }
            }
        )
    )
    out = tmp_path / "retail_draft.pl"
    assert (
        main(["-c", str(config), "draft", "--policy", str(POLICY), "--server", "retail", "-o", str(out)]) == 0
    )
    text = out.read_text()
    # the policy lies elsewhere: copied beside the draft, which names it there (a rulebase's documents lie in
    # its own directory)
    assert (tmp_path / POLICY.name).read_text() == POLICY.read_text()
    assert f"policy_document(retail, '{POLICY.name}')." in text
    # bindings from the output schemas, keyed by the read tools' inputs; an optional field gets its own fact
    assert (
        "binding(order_status(OrderId, Status), tool('retail__get_order_details', [order_id = OrderId]),\n"
        "        extract([Status = '/status']), [ttl(60)])."
    ) in text
    assert "binding(user_payment_methods_balance(UserId, Id, Balance)" in text
    assert "extract([K = key('/items/*'), Name = '/items/*/name', ProductId = '/items/*/product_id'" in text
    # a guard stub per destructive tool, with its arguments and the paragraphs that mention it
    for tool in (
        "cancel_pending_order",
        "modify_pending_order_items",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
        "modify_pending_order_payment",
        "modify_pending_order_address",
        "modify_user_address",
    ):
        assert f"guard('retail__{tool}', [" in text
    assert "guard('retail__cancel_pending_order', [order_id = OrderId, reason = Reason]," in text
    # the policy's words quoted (test_draft_comment_words.py)
    assert 'line 88 under "Retail agent policy › Cancel pending order": "An order can only be' in text
    assert (
        "\nguard('retail__transfer_to_human_agents'" not in text
    )  # not destructive: left to a person (TODO)
    # the value only the user can give, the entities, the TODOs
    assert (
        "askable(cancel_pending_order_reason(OrderId, Reason)" in text
        and "find_user" not in text.split("askable(")[1]
    )
    assert "context(order_of_interest)." in text and text.count("TODO") >= 8
    # it passes check as it is (a draft is never loaded before a person finishes it)
    capsys.readouterr()
    assert main(["check", str(out)]) == 0, capsys.readouterr()
    # deterministic: the same tools and policy give the same text; an existing file is never replaced
    again = tmp_path / "again.pl"
    tools = tmp_path / "tools.json"
    from examples.retail.server import create_server
    import asyncio

    listed = asyncio.run(create_server().list_tools())
    tools.write_text(
        json.dumps({"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in listed]})
    )
    assert (
        main(
            ["draft", "--policy", str(POLICY), "--server", "retail", "--tools", str(tools), "-o", str(again)]
        )
        == 0
    )
    assert again.read_text() == text
    assert (
        main(
            ["draft", "--policy", str(POLICY), "--server", "retail", "--tools", str(tools), "-o", str(again)]
        )
        == 2
    )


def test_draft_errors_are_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "tools.json"
    bad.write_text('{"tools": [{"nope": 1}]}')
    assert main(["draft", "--policy", str(POLICY), "--server", "x", "--tools", str(bad)]) == 2
    assert "expected a list of tools" in capsys.readouterr().err
    assert (
        main(["draft", "--policy", str(tmp_path / "missing.md"), "--server", "x", "--tools", str(bad)]) == 2
    )
    assert "cannot read the policy" in capsys.readouterr().err


HOSTILE_NAMES = [
    "note = Note], true).\nguard('shop__wipe_database', [], true).\nguard('shop__refund_order_', [z",
    "a'b", "a\\b", "x\u2028guard(y, [], true).", "%", "a b", "", "9lives", "a/b", "é",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
@pytest.mark.parametrize("where", ["input property", "output property", "tool name"])
def test_a_hostile_schema_name_adds_no_clause_to_a_draft(tmp_path: Path, name: str, where: str) -> None:
    """Tool and property names come from an upstream, hostile too: a name that is not plain (letters, digits,
    _ . -) leaves its tool out of the draft (the default policy decides it), never in the Prolog text, where
    it once closed the clause being written and added allow-all guards `check` found clean."""
    from sentinel_mcp.policy.draft import draft_rulebase

    refund: dict = {"name": "refund_order", "annotations": {"destructiveHint": True},
                    "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}}}
    read: dict = {"name": "get_order_details", "annotations": {"readOnlyHint": True},
                  "inputSchema": {"type": "object", "properties": {"order_id": {"type": "string"}}},
                  "outputSchema": {"type": "object", "properties": {"status": {"type": "string"}}}}
    if where == "input property":
        hostile_enum = ["a\nguard(z, [], true).", name]
        refund["inputSchema"]["properties"][name] = {"type": "string", "enum": hostile_enum}
    elif where == "output property":
        nested = {"type": "object", "properties": {"x": {"type": "string"}}}
        read["outputSchema"]["properties"][name] = nested
    else:
        refund["name"] = name
    draft = draft_rulebase("shop", [refund, read], "shop", "policy.md", [])
    clauses = [line for line in draft.text.splitlines() if line and not line.startswith(("%", " "))]
    injected = ("wipe", "guard(z", "guard(y")
    assert not any(i in c for i in injected for c in clauses), clauses
    assert all(c.startswith(("policy_document(", "binding(", "guard(", "effect(", "context(", "askable("))
               for c in clauses), clauses
    assert len([c for c in clauses if c.startswith("guard(")]) <= 1
    assert "left out" in draft.text
    # what is written is read back by SWI-Prolog as exactly these clauses
    path = tmp_path / "draft.pl"
    path.write_text(draft.text)
    assert main(["check", str(path)]) in (0, 1)


def test_an_enum_value_with_a_line_break_stays_inside_its_quoted_atom(tmp_path: Path) -> None:
    from sentinel_mcp.policy.draft import draft_rulebase

    refund = {"name": "refund_order", "annotations": {"destructiveHint": True},
              "inputSchema": {"type": "object", "properties": {
                  "order_id": {"type": "string"},
                  "reason": {"type": "string", "enum": ["late", "x').\nguard('shop__wipe', [], true).\n%"]}}}}
    draft = draft_rulebase("shop", [refund], "shop", "policy.md", [])
    assert "guard('shop__wipe'" not in "\n".join(
        line for line in draft.text.splitlines() if not line.startswith("%"))
    assert "\\xa\\" in draft.text  # the line break, written as an escape inside the atom
    path = tmp_path / "draft.pl"
    path.write_text(draft.text)
    assert main(["check", str(path)]) in (0, 1)


@pytest.mark.parametrize("names", [
    ["Amount", "amount"], ["A"], ["_"], ["_x", "_"], ["a.b"], ["a-b"], ["x."], ["end."],
    ["order_id", "orderId"], ["Order.Id", "order-id", "ORDER_ID"],
])
def test_plain_names_that_prolog_reads_otherwise_are_written_as_atoms(tmp_path: Path, names: list) -> None:
    """A name the draft keeps may still read as a variable (``Amount``, ``_x``), a dict access (``a.b``), a
    term (``a-b``) or the end of a clause (``x.``): each is written quoted, each argument gets a variable of
    its own, and the draft passes ``check`` as the docs promise (it once failed with errors the operator could
    not place, and ``order_id`` beside ``orderId`` shared one variable)."""
    from sentinel_mcp.policy.draft import draft_rulebase

    props = {n: {"type": "string"} for n in names}
    wipe = {"name": "wipe_thing", "annotations": {"destructiveHint": True},
            "inputSchema": {"type": "object", "properties": props}}
    read = {"name": "get_thing", "annotations": {"readOnlyHint": True},
            "inputSchema": {"type": "object", "properties": props},
            "outputSchema": {"type": "object", "properties": {"status": {"type": "string"}}}}
    (tmp_path / "policy.md").write_text("# Shop\n\nThings are wiped only on request.\n")
    draft = draft_rulebase("shop", [wipe, read], "shop", "policy.md", [])
    path = tmp_path / "draft.pl"
    path.write_text(draft.text)
    assert main(["check", str(path)]) == 0, draft.text
    guard = next(c for c in draft.guards if c.startswith("guard('shop__wipe_thing'"))
    pattern = guard.split("\n", 1)[0]
    variables = [part.split(" = ")[1].rstrip("],") for part in pattern.split("[", 1)[1].split(", ")]
    assert len(set(variables)) == len(names), pattern
