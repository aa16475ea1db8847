"""The policy page's remembered check of the rulebase in force: reused only for exactly what was checked (each
file's bytes, the tools, each cited document's size and change time), never past its TTL, bounded in
entries; and the page says a check could not run when no place is free and nothing is remembered."""

from __future__ import annotations

import os
from pathlib import Path

from mcp.types import Tool

from sentinel_mcp.console.in_force_checks import InForceChecks, check_key


def _tool(name: str) -> Tool:
    return Tool(name=name, input_schema={"type": "object"})


def test_the_key_follows_files_tools_and_documents(tmp_path: Path) -> None:
    rules, doc = tmp_path / "r.pl", tmp_path / "policy.md"
    rules.write_text("guard(t, [], true).\n")
    doc.write_text("# Policy\n")
    first = check_key([rules], [_tool("a")], frozenset({doc}))
    assert check_key([rules], [_tool("a")], frozenset({doc})) == first
    assert check_key([rules], [_tool("b")], frozenset({doc})) != first  # another reach
    assert check_key([rules], None, frozenset({doc})) != first
    rules.write_text("guard(t, [], fail).\n")  # same size: the bytes decide, not the time
    changed = check_key([rules], [_tool("a")], frozenset({doc}))
    assert changed != first
    st = doc.stat()
    doc.write_text("# Policz\n")  # same size, another time
    os.utime(doc, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    assert check_key([rules], [_tool("a")], frozenset({doc})) != changed
    rules.unlink()  # unreadable: a key of its own, never a readable file's
    assert check_key([rules], [_tool("a")], frozenset({doc})) not in {first, changed}


def test_remembered_within_its_ttl_and_bound() -> None:
    kept = InForceChecks(ttl=3600, max_entries=2)
    kept.put("a", [1])
    kept.put("b", [2])
    assert kept.get("a") == [1] and kept.get("b") == [2]
    kept.put("c", [3])  # the oldest leaves
    assert kept.get("a") is None and kept.get("c") == [3]
    stale = InForceChecks(ttl=-1)
    stale.put("a", [1])
    assert stale.get("a") is None  # past its TTL: checked afresh
    got = kept.get("c")
    assert got is not None
    got.append(99)  # a caller's list is its own
    assert kept.get("c") == [3]


def test_the_key_follows_an_included_files_bytes(tmp_path: Path) -> None:
    """A remembered check of a rulebase whose included file changed is not the check of what is in force."""
    rules, more = tmp_path / "r.pl", tmp_path / "more.pl"
    rules.write_text(":- include_rules('more.pl').\n")
    more.write_text("guard(t, [], true).\n")
    first = check_key([rules], None, frozenset())
    more.write_text("guard(t, [], fail).\n")
    assert check_key([rules], None, frozenset()) != first
