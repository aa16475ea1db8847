"""A recorded proof as a tree a person can read: what was proved, from which facts (with provenance), which
questions were answered, which rule required what. Any JSON the tree does not know is shown as it is."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sentinel_mcp.core.record_bounds import CUT_KEY, KEPT_KEY, was_cut

MAX_NODES = 2000  # a hostile or huge proof is cut, never rendered without bound
MAX_DEPTH = 60


@dataclass
class Node:
    kind: str  # rule | all | fact | context | confirmed | require | if | not | tool | builtin | value
    label: str
    note: str = ""
    children: list["Node"] = field(default_factory=list)
    fact: str | None = None  # the fact's text, to look up its TTL
    provenance: str | None = None


def _node(tree: Any, budget: list[int], depth: int) -> Node:
    budget[0] -= 1
    if budget[0] <= 0 or depth > MAX_DEPTH:
        return Node("value", "… (proof cut here: too large)")
    if isinstance(tree, dict):
        if "all" in tree:
            items = tree["all"] if isinstance(tree["all"], list) else [tree["all"]]
            return Node("all", "all of", children=_children(items, budget, depth))
        if "fact" in tree:
            return Node(
                "fact",
                str(tree["fact"]),
                f"provenance: {tree.get('provenance')}",
                fact=str(tree["fact"]),
                provenance=str(tree.get("provenance") or "observed"),
            )
        if "confirmed" in tree:
            return Node("confirmed", f"confirmed: {tree['confirmed']}", f"by: {tree.get('provenance')}")
        if "context" in tree:  # with the proofs of its checks, proved again when it was read
            checked = tree.get("checked")
            checks = _children(checked, budget, depth) if isinstance(checked, list) else []
            return Node("context", f"context {tree['context']} = {tree.get('value')}",
                        "its check holds" if checks else "", children=checks)
        if "require" in tree:
            return Node(
                "require", f"required: {tree['require']}", children=[_node(tree.get("by"), budget, depth + 1)]
            )
        if "if" in tree:
            return Node(
                "if",
                "if",
                children=[
                    _node(tree.get("if"), budget, depth + 1),
                    Node("then", "then", children=[_node(tree.get("then"), budget, depth + 1)]),
                ],
            )
        if "not" in tree:
            return Node("not", f"not provable: {tree['not']}")
        if "tool" in tree and len(tree) == 1:
            return Node("tool", f"tool call {tree['tool']}")
        if "builtin" in tree:
            return Node("builtin", str(tree["builtin"]))
        if "goal" in tree:
            by = tree.get("by")
            if by is None or by == "native":
                return Node("rule", str(tree["goal"]), "built-in" if by == "native" else "")
            return Node("rule", str(tree["goal"]), children=[_node(by, budget, depth + 1)])
        if "other" in tree:
            return Node("value", str(tree["other"]))
        return Node("value", "", children=_children(list(tree.items()), budget, depth, keyed=True))
    if isinstance(tree, list):
        return Node("all", "list", children=_children(tree, budget, depth))
    return Node("value", "" if tree is None else str(tree))


def _children(items: list[Any], budget: list[int], depth: int, *, keyed: bool = False) -> list[Node]:
    """A node's children while the budget lasts, then one node saying how many were left out: a branch
    past the budget is not a node of its own (a list of a million made a million "cut" nodes)."""
    out: list[Node] = []
    for i, item in enumerate(items):
        if budget[0] <= 0:
            out.append(Node("value", f"… ({len(items) - i} more not shown: proof cut here, too large)"))
            break
        if keyed:
            budget[0] -= 1
            out.append(Node("value", str(item[0]), children=[_node(item[1], budget, depth + 1)]))
        else:
            out.append(_node(item, budget, depth + 1))
    return out


def proof_nodes(proof: Any) -> tuple[Node | None, dict[str, Any]]:
    """The proof tree's root (None when the record has no tree) and the rest of the proof (rulebase version,
    passes, fetches, questions, unmet) for a plain listing."""
    notice = None
    if was_cut(proof):  # kept cut in the record (``core/record_bounds``): the tree of what was kept, and why
        notice, proof = proof[CUT_KEY], proof[KEPT_KEY]
    if not isinstance(proof, dict):
        rest_only: dict[str, Any] = {"proof": proof} if proof is not None else {}
        return None, rest_only | ({"cut": notice} if notice is not None else {})
    rest = {k: v for k, v in proof.items() if k != "tree"} | ({"cut": notice} if notice is not None else {})
    tree = proof.get("tree")
    return (_node(tree, [MAX_NODES], 0) if tree is not None else None), rest


def facts_in(node: Node | None) -> list[str]:
    return [text for text, _ in facts_with_provenance(node)]


def facts_with_provenance(node: Node | None) -> list[tuple[str, str]]:
    """The facts a proof rests on, each with the provenance it had then."""
    out: list[tuple[str, str]] = []
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        if n.fact:
            out.append((n.fact, n.provenance or "observed"))
        stack.extend(n.children)
    return out


def readable_tree(proof: Any) -> Node | None:
    """The proof tree, or, for a decision without one (a denial says which rules failed, an ask what it
    asked), what the proof holds besides its bookkeeping, as a tree."""
    root, rest = proof_nodes(proof)
    if root is not None:
        return root
    shown = {
        k: v
        for k, v in rest.items()
        if k not in ("rulebase", "passes", "fetches") and v not in (None, [], {})
    }
    if not shown:
        return None
    # one budget for the whole tree, as for a recorded one
    return Node("value", "why", children=_children(sorted(shown.items()), [MAX_NODES], -1, keyed=True))
