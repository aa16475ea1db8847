"""What ``check`` finds in rulebase text a test writes: the one helper the checker's tests share
(tests/policy/test_check_*.py), each binding the form it asserts on (functools.partial)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from mcp.types import Tool

from sentinel_mcp.policy.checker import check_paths
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import Problem

Shown = Literal["brief", "with_tool", "full"]


async def checked_problems(
    tmp_path: Path, *texts: str, head: str = "", name: str = "rb.pl", catalog: list[Tool] | None = None,
    policy: str | None = None,
) -> list[Problem]:
    """The problems ``check`` finds in ``texts``, checked together as the gateway loads them: one text is
    written to ``name``, several to part0.pl, part1.pl, ... (each after ``head``). ``policy``: the text of
    policy.md beside them (the document citations name); ``catalog``: the tools the guards name."""
    if policy is not None:
        (tmp_path / "policy.md").write_text(policy)
    names = [name] if len(texts) == 1 else [f"part{n}.pl" for n in range(len(texts))]
    files = []
    for file_name, text in zip(names, texts, strict=True):
        f = tmp_path / file_name
        f.write_text(head + text, encoding="utf-8")
        files.append(f)
    return await check_paths(shared_engine(), files, catalog)


async def checked_lines(
    tmp_path: Path, *texts: str, shown: Shown = "brief", head: str = "", name: str = "rb.pl",
    catalog: list[Tool] | None = None, policy: str | None = None,
) -> list[str]:
    """checked_problems as lines: "severity line message" (brief), with the tool after the line (with_tool),
    or each problem as it prints (full)."""
    problems = await checked_problems(tmp_path, *texts, head=head, name=name, catalog=catalog, policy=policy)
    if shown == "full":
        return [str(p) for p in problems]
    if shown == "with_tool":
        return [f"{p.severity} {p.line} {p.tool} {p.message}" for p in problems]
    return [f"{p.severity} {p.line} {p.message}" for p in problems]
