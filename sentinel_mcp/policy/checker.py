"""Checking rulebase files: what the loader finds (syntax with file and line, undefined predicates,
malformed declarations, askables without a question) plus, given a catalog, the tools they name:
bindings to tools that are not read-only and guards or effects for tools no upstream has."""

from __future__ import annotations

import fnmatch
from pathlib import Path

from mcp.types import Tool

from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.rulebase import Problem, RulebaseError, load_rulebase


def _matches(pattern: str, names: list[str]) -> bool:
    if pattern.endswith("*"):
        return any(fnmatch.fnmatchcase(n, pattern) for n in names)
    return pattern in names


def unreadable_files(files: list[Path]) -> tuple[list[Problem], list[Path]]:
    """Problems for paths that are no readable file, and the files that can be checked."""
    problems, ok = [], []
    for f in files:
        if f.is_dir():
            why = "is a directory, not a rulebase file"
        elif not f.exists():
            why = "file not found"
        else:
            try:
                f.read_bytes()
                ok.append(f)
                continue
            except OSError as e:
                why = f"cannot be read ({e.strerror or e})"
        problems.append(Problem(severity="error", file=str(f), line=0, message=why))
    return problems, ok


def problem_line(p: Problem) -> str:
    """``file:line: kind: message`` on one line (a multi-line message is folded)."""
    return f"{p.file}:{p.line}: {p.severity}: {' '.join(p.message.split())}"


async def check_paths(engine: PrologEngine, files: list[Path], catalog: list[Tool] | None = None) -> list[Problem]:
    """check_files for paths given by a user: missing or unreadable ones are problems of their own, and
    the readable ones are still checked (together, as the gateway loads them)."""
    problems, ok = unreadable_files(files)
    if ok:
        problems += await check_files(engine, ok, catalog)
    return problems


async def check_files(engine: PrologEngine, files: list[Path], catalog: list[Tool] | None = None) -> list[Problem]:
    """All problems (errors and warnings) of a set of files, in file/line order."""
    try:
        rb = await load_rulebase(engine, files)
    except RulebaseError as e:
        return sorted(e.problems, key=lambda p: (p.file, p.line))
    problems = list(rb.warnings)
    try:
        if catalog is not None:
            tools = {t.name: t for t in catalog}
            names = list(tools)
            declared_ro = set(rb.info.read_only)
            for site in await engine.tool_sites(rb.module):
                tool, where = site["tool"], dict(file=site["file"], line=site["line"])
                if site["kind"] == "binding":
                    t = tools.get(tool)
                    if t is None:
                        problems.append(Problem(severity="error", message=f"binding to {tool}, which no upstream has",
                                                **where))
                    elif not ((t.annotations and t.annotations.read_only_hint) or tool in declared_ro):
                        problems.append(Problem(severity="error", message=f"binding to {tool}, which is not read-only "
                                                "(no readOnlyHint annotation and no read_only/1 declaration)", **where))
                    elif tool in declared_ro and t.annotations and t.annotations.destructive_hint:
                        problems.append(Problem(severity="warning", message=f"{tool} is declared read_only but its "
                                                "upstream marks it destructive", **where))
                elif not _matches(tool, names):
                    problems.append(Problem(severity="error", message=f"{site['kind']} for {tool}, which no upstream "
                                            "has", **where))
    finally:
        await engine.unload(rb.module)
    return sorted(problems, key=lambda p: (p.file, p.line))
