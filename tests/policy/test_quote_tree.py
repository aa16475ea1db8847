"""Citations quoted into proof trees (PolicyDocuments.quote_tree, on every decision's path: the gateway audits
every proof). The quick walk must give exactly what the plain walk it replaced gave (same values, same key
order: the audit row is hashed as JSON): on the engine's trees for many generated airline calls, on hostile
text in the arguments, and on odd trees (citations unknown, malformed, repeated, nested, shared)."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from mcp import Client

from examples.airline.server import create_server as airline_server
from sentinel_mcp.core.decision import Ask, ToolCall
from sentinel_mcp.policy.guard import PolicyGuard
from sentinel_mcp.policy.policy_documents import PolicyDocuments
from sentinel_mcp.policy.prolog_text import fact_text
from tests.policy.airline_replay import AIRLINE_PL, DATA_DIR, answer_questions
from tests.policy.policy_rig import ClientPort, make_guard
from tests.policy.test_compiled_rules import FAR, call, unnamed
from tests.policy.test_lazy_proofs import HOSTILE

pytestmark = pytest.mark.timeout(120)


def reference_quote_tree(docs: PolicyDocuments, tree: Any) -> Any:
    """The walk as it was (m21): every container visited, each citation resolved through ``cite``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            ref = node.get("policy")
            if isinstance(ref, dict) and "anchor" in ref:
                cited = docs.cite(ref.get("document", ""), ref["anchor"])
                if cited is not None:
                    node["policy"] = {**ref, **cited.as_dict()}
            stack.extend(v for k, v in node.items() if k != "policy" and isinstance(v, (list, dict)))
    return tree


def quoted_both_ways(docs: PolicyDocuments, tree: Any) -> tuple[Any, Any]:
    fast, ref = docs.quote_tree(copy.deepcopy(tree)), reference_quote_tree(docs, copy.deepcopy(tree))
    assert fast == ref
    assert json.dumps(fast) == json.dumps(ref)  # same key order: the audit hashes the row's JSON text
    return fast, ref


def citations(tree: Any) -> int:
    """How many nodes carry a quoted citation (so a test over trees without any cannot pass unnoticed)."""
    return json.dumps(tree).count('"quote": ')


async def test_airline_trees_are_quoted_as_by_the_plain_walk(tmp_path: Path) -> None:
    """Calls of many users on their own reservations through the real airline example server (the solver
    fetches what the guards read; questions answered), each tree the engine proves quoted both ways."""
    db = json.loads((DATA_DIR / "db.json").read_text())
    rng = random.Random(2124)
    quoted, statuses = 0, set()
    async with Client(airline_server(), mode="auto") as client:
        port = ClientPort(client, "airline")
        await port.refresh()
        guard = await make_guard(port, tmp_path / "facts.db", files=[AIRLINE_PL], seeds={})
        try:
            docs = guard.documents()
            users = sorted(db["users"])[:12]
            for i, user in enumerate(users):
                for r in db["users"][user]["reservations"][:3]:
                    session = f"s-{user}-{r}"
                    mod = await guard.knowledge.ensure(session, guard.rulebases.current)
                    await guard.engine.assert_facts(mod, [(fact_text("current_user", [user]), FAR, "seed")])
                    name, args = rng.choice([
                        ("airline__cancel_reservation", {"reservation_id": r}),
                        ("airline__update_reservation_baggages",
                         {"reservation_id": r, "total_baggages": rng.randint(0, 4),
                          "nonfree_baggages": rng.randint(0, 2), "payment_id": "credit_card_1"}),
                        ("airline__cancel_reservation", {"reservation_id": r})])
                    c = port.call_of(name, args, session)
                    d = await guard.decide(c, spend=False)
                    for _ in range(3):  # bounded: each round answers every question asked
                        if not isinstance(d, Ask):
                            break
                        answers = {"cancel_reason": rng.choice(["change_of_plan", "health", "weather"])}
                        for q in d.questions:
                            if q.meta.get("kind") == "confirm" or q.meta.get("predicate") in answers:
                                await answer_questions(guard, c, Ask(reason="", questions=[q]), answers)
                        d = await guard.decide(c, spend=False)
                    result = await guard.prove_call(c)  # the engine's tree, as the gateway's guard gets it
                    statuses.add(result.status)
                    fast, _ = quoted_both_ways(docs, result.tree)
                    quoted += citations(fast)
                    # the decision carries that tree, quoted (another pass: variables unnamed)
                    proof = getattr(await guard.decide(c, spend=False), "proof", None)
                    if isinstance(proof, dict) and proof.get("tree") is not None:
                        assert unnamed(proof["tree"]) == unnamed(fast), (user, r, name)
        finally:
            await guard.close()
    assert quoted > 20, (quoted, statuses)
    assert "proved" in statuses and len(statuses) > 1, statuses


POLICY = """# Echo policy

## Saying

Say what you mean, in your own words.

## Checking

A text must be checked before it is sent:

- no empty text
- no text twice
"""

CITING = """
policy_document(echo, 'policy.md').
said(T) :- atom(T), atom_length(T, N), N >= 0.
different(T, O) :- T \\== O.
guard('t__echo', [text = T], require(said(T), 'the text must be said', policy_ref(echo, 'Say what you mean'))).
guard('t__both', [text = T, other = O],
      ( require(said(T), 'the text must be said', policy_ref(echo, 'Saying \u203a in your own words')),
        require(different(T, O), 'no text twice', policy_ref(echo, 'must be checked before it is sent')) )).
"""  # noqa: E501 (verbatim text)


async def test_hostile_arguments_are_quoted_as_by_the_plain_walk(tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_text(POLICY)
    rb = tmp_path / "echo.pl"
    rb.write_text(CITING)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    quoted = 0
    try:
        docs = guard.documents()
        assert not docs.problems, docs.problems
        lookalike = {"policy": {"document": "echo", "anchor": "Say what you mean"}}
        for t in [
            *HOSTILE,
            json.dumps(lookalike),
            '"policy": {"document": "echo", "anchor": "Say what you mean"}',
        ]:
            for name, args in (
                ("t__echo", {"text": t}),
                ("t__both", {"text": t, "other": t}),
                ("t__both", {"text": t, "other": t + "."}),
                ("t__echo", {"text": lookalike}),
            ):
                c: ToolCall = call(name, args, "s")
                result = await guard.prove_call(c)
                fast, _ = quoted_both_ways(docs, result.tree)
                quoted += citations(fast)
                proof = getattr(await guard.decide(c), "proof", None)
                if isinstance(proof, dict) and "tree" in proof:
                    assert unnamed(proof["tree"]) == unnamed(fast), (t[:50], name)
    finally:
        await guard.close()
    assert quoted > len(HOSTILE), quoted


class Node(dict):  # type: ignore[type-arg]
    """A dict subclass: not what the JSON parser makes, still walked as before."""


class Nodes(list):  # type: ignore[type-arg]
    pass


def test_odd_trees_are_quoted_as_by_the_plain_walk(tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_text(POLICY)
    docs = PolicyDocuments()
    docs.add("echo", "policy.md", str(tmp_path / "echo.pl"))
    ok = {"document": "echo", "anchor": "Say what you mean"}
    shared = {"require": "shared", "policy": dict(ok)}
    trees: list[Any] = [
        None,
        "policy",
        7,
        [],
        {},
        {"policy": ok},
        {"policy": {**ok, "extra": [1, {"policy": ok}]}},
        {"policy": {"anchor": "Say what you mean"}},  # no document: none found
        {"policy": {"document": "echo", "anchor": "nowhere in the text"}},
        {"policy": {"document": "nope", "anchor": "Say what you mean"}},
        {"policy": {"document": "echo"}},
        {"policy": "Say what you mean"},
        {"policy": [ok]},
        {"policy": None},
        {"policy": {"document": "echo", "anchor": "Checking \u203a must be checked"}},
        {"policy": {"document": "echo", "anchor": "Saying \u203a must be checked"}},  # not under that section
        {"policy": {"document": "echo", "anchor": ""}},
        {"all": [{"policy": ok, "by": {"policy": ok, "by": [[{"policy": ok}]]}}, "x", 1, None, True]},
        {"all": [shared, shared, {"by": shared}]},
        Node(policy=dict(ok), by=Nodes([Node(policy=dict(ok)), {"policy": dict(ok)}])),
        {"by": Node(policy=dict(ok))},
        [Nodes([{"policy": dict(ok)}])],
        {"policy": Node(ok)},
        {"policy": ok, "policy2": {"policy": ok}},
    ]
    for tree in trees:
        fast, ref = docs.quote_tree(copy.deepcopy(tree)), reference_quote_tree(docs, copy.deepcopy(tree))
        assert fast == ref, tree

    def deep() -> Any:  # deeper than Python's recursion limit (a long recursive proof)
        node: Any = {"policy": dict(ok)}
        for i in range(5000):
            node = {"by": node, "policy": dict(ok)} if i % 2 else {"all": [node, "x"]}
        return node

    fast, ref = docs.quote_tree(deep()), reference_quote_tree(docs, deep())
    for _ in range(2500):  # down both trees, level by level (the comparison of Python would recurse)
        assert fast["policy"] == ref["policy"] and fast["policy"]["quote"].startswith("Say what you mean")
        fast, ref = fast["by"]["all"], ref["by"]["all"]
        assert fast[1] == ref[1] == "x"
        fast, ref = fast[0], ref[0]
    assert fast == ref == {"policy": {**ok, **docs.cite("echo", ok["anchor"]).as_dict()}}  # type: ignore[union-attr]
    # the shared node is quoted once per place, and each quoted node has its own line list
    tree = docs.quote_tree({"all": [{"policy": dict(ok)}, {"policy": dict(ok)}]})
    a, b = (n["policy"] for n in tree["all"])
    assert a == b and a["quote"].startswith("Say what you mean") and a["lines"] is not b["lines"]
    a["lines"].append(0)
    assert docs.quote_tree({"policy": dict(ok)})["policy"]["lines"] == b["lines"]
