"""``:- include_rules('bags.pl').``: another rulebase file read as if its text stood at the declaration,
through every check of the including file's text, each problem naming the included file and its line; and
confined: a relative name of a file in the configured file's directory or below, a regular file within the
loader's bound, each file once, no cycle, a bounded depth and count (rulebase_includes.py and .pl).

Before, the declaration was a directive the loader did not run (a warning): the rules of a file it named were
not in force, and nothing read its name."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import Problem, RulebaseError, RulebaseHolder, load_rulebase
from sentinel_mcp.policy.rulebase_includes import MAX_DEPTH, MAX_INCLUDED

pytestmark = pytest.mark.timeout(120)

GUARD = "guard('t__bags', [n = N], (integer(N), N =< 2)).\n"


def rulebase(tmp_path: Path, main: str, **others: str) -> Path:
    """A directory ``rb`` holding ``main.pl`` and the other files (``sub__x`` is ``sub/x.pl``)."""
    d = tmp_path / "rb"
    d.mkdir(exist_ok=True)
    for name, text in others.items():
        f = d / (name.replace("__", "/") + ".pl")
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    (d / "main.pl").write_text(main)
    return d / "main.pl"


def errors_at(problems: list[Problem], file: Path, line: int) -> list[str]:
    return [p.message for p in problems if p.severity == "error" and p.file == str(file) and p.line == line]


async def test_an_included_files_rules_are_in_force_and_in_the_version(tmp_path: Path) -> None:
    main = rulebase(tmp_path, "read_only('t__r').\n:- include_rules('bags.pl').\n", bags=GUARD)
    rb = await load_rulebase(shared_engine(), [main])
    assert "t__bags" in rb.info.guards
    assert rb.included == [str(main.parent / "bags.pl")]
    (main.parent / "bags.pl").write_text(GUARD.replace("2", "3"))
    again = await load_rulebase(shared_engine(), [main])
    assert again.version != rb.version  # the version is every file's content, the included one's too


async def test_an_included_files_problems_name_it_and_its_line(tmp_path: Path) -> None:
    main = rulebase(tmp_path, "read_only('t__r').\n:- include_rules('sub/bags.pl').\n",
                    sub__bags="% bags\n" + GUARD + "evil :- shell(ls).\nbroken( .\n")
    problems = await check_files(shared_engine(), [main])
    bags = main.parent / "sub" / "bags.pl"
    assert any("shell" in m for m in errors_at(problems, bags, 3)), problems
    assert any("syntax error" in m for m in errors_at(problems, bags, 4)), problems


async def test_an_included_text_is_its_includers_own_but_not_another_configured_files(tmp_path: Path) -> None:
    """A predicate, base predicate or option shared with an included file is one file's; a second configured
    file still cannot add to them without consent."""
    main = rulebase(tmp_path, ":- include_rules('more.pl').\nok(a).\n"
                    "guard('t__w', [], (ok(X), option(open))).\nfact(seen/1).\n",
                    more="ok(b).\noption(open).\nseed(seen(x)).\n")
    assert [p for p in await check_files(shared_engine(), [main]) if p.severity == "error"] == []
    other = main.parent / "other.pl"
    other.write_text("ok(c).\n")
    problems = await check_files(shared_engine(), [main, other])
    assert any("belongs to one file" in m for m in errors_at(problems, other, 1)), problems


ATTACKS = [
    "/etc/passwd",
    "../x.pl",
    "sub/../../x.pl",
    "sub/./x.pl",
    "%2e%2e/x.pl",
    "x\u2024pl",  # one dot leader
    "sub\u2215x.pl",  # division slash
    "sub\u2044x.pl",  # fraction slash
    "x\uff0epl",  # fullwidth full stop
    "x.pl\x00.txt",
    "x.txt",
    "",
    "x" * 300 + ".pl",
]


@pytest.mark.parametrize("name", ATTACKS, ids=repr)
async def test_a_name_that_is_not_a_plain_relative_name_is_refused(tmp_path: Path, name: str) -> None:
    main = rulebase(tmp_path, f"read_only('t__r').\n:- include_rules('{name}').\n", x=GUARD, sub__x=GUARD)
    (tmp_path / "x.pl").write_text(GUARD)
    problems = await check_files(shared_engine(), [main])
    assert errors_at(problems, main, 2), problems
    with pytest.raises(RulebaseError):
        await load_rulebase(shared_engine(), [main])


@pytest.mark.parametrize("declaration", [
    ":- include_rules(x).",  # an atom unquoted: no file name Python read
    ":- include_rules(\"x.pl\").",
    ":- include_rules(f('x.pl')).",
    ":- include_rules(1).",
    ":- include_rules('\\x2e\\./x.pl').",  # escapes Prolog reads as ../x.pl
    ":- include_rules('x.pl'), true.",
    "?- include_rules('x.pl').",
    ":- include_rules('x.pl'). :- include_rules('x.pl').",
])
async def test_any_other_spelling_of_an_include_is_refused(tmp_path: Path, declaration: str) -> None:
    main = rulebase(tmp_path, f"read_only('t__r').\n{declaration}\n", x=GUARD)
    problems = await check_files(shared_engine(), [main])
    assert errors_at(problems, main, 2), problems


async def test_a_declaration_in_a_comment_or_a_quoted_text_is_refused(tmp_path: Path) -> None:
    main = rulebase(tmp_path, "/* off\n:- include_rules('x.pl').\n*/\nq('\n:- include_rules('y.pl').\n').\n",
                    x=GUARD, y=GUARD)
    problems = await check_files(shared_engine(), [main])
    assert any("reads as include_rules" in m for m in errors_at(problems, main, 2)), problems
    assert any("reads as include_rules" in m for m in errors_at(problems, main, 5)), problems


async def test_a_symlink_leading_out_is_refused_one_inside_is_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.pl"
    outside.write_text(GUARD)
    main = rulebase(tmp_path, "read_only('t__r').\n:- include_rules('out.pl').\n"
                    ":- include_rules('etc/x.pl').\n:- include_rules('in.pl').\n", real=GUARD)
    (main.parent / "out.pl").symlink_to(outside)
    (main.parent / "etc").symlink_to("/etc")
    (main.parent / "in.pl").symlink_to(main.parent / "real.pl")
    problems = await check_files(shared_engine(), [main])
    assert any("leads out" in m for m in errors_at(problems, main, 2)), problems
    assert any("leads out" in m for m in errors_at(problems, main, 3)), problems
    assert not errors_at(problems, main, 4), problems


async def test_a_fifo_or_a_huge_file_is_refused_unread(tmp_path: Path) -> None:
    main = rulebase(tmp_path, "read_only('t__r').\n:- include_rules('fifo.pl').\n"
                    ":- include_rules('big.pl').\n")
    os.mkfifo(main.parent / "fifo.pl")
    with open(main.parent / "big.pl", "wb") as f:
        f.truncate(1 << 30)  # sparse: a gigabyte of NULs that costs no disk
    problems = await asyncio.wait_for(check_files(shared_engine(), [main]), 60)
    assert any("not a regular file" in m for m in errors_at(problems, main, 2)), problems
    assert any("bytes, more than" in m for m in errors_at(problems, main, 3)), problems


async def test_a_file_read_twice_or_in_a_cycle_is_refused(tmp_path: Path) -> None:
    main = rulebase(tmp_path, ":- include_rules('main.pl').\n:- include_rules('a.pl').\n"
                    ":- include_rules('a.pl').\n",
                    a=":- include_rules('b.pl').\n", b=":- include_rules('a.pl').\n" + GUARD)
    problems = await check_files(shared_engine(), [main])
    assert any("read already" in m for m in errors_at(problems, main, 1)), problems  # itself
    b = main.parent / "b.pl"
    assert any("read already" in m for m in errors_at(problems, b, 1)), problems  # a 2-cycle
    assert any("read already" in m for m in errors_at(problems, main, 3)), problems  # twice
    # a configured file included by another is read twice too
    problems = await check_files(shared_engine(), [main.parent / "b.pl", main.parent / "a.pl"])
    assert any("read already" in m for m in errors_at(problems, main.parent / "b.pl", 1)), problems


async def test_depth_and_count_are_bounded(tmp_path: Path) -> None:
    chain = {f"c{i}": f":- include_rules('c{i + 1}.pl').\n" for i in range(MAX_DEPTH + 1)}
    main = rulebase(tmp_path, ":- include_rules('c0.pl').\n", **chain, **{f"c{MAX_DEPTH + 1}": GUARD})
    problems = await check_files(shared_engine(), [main])
    deepest = main.parent / f"c{MAX_DEPTH - 1}.pl"
    assert any("deep" in m for m in errors_at(problems, deepest, 1)), problems
    many = {f"m{i}": f"m{i}(x).\n" for i in range(MAX_INCLUDED + 1)}
    declarations = "".join(f":- include_rules('m{i}.pl').\n" for i in range(MAX_INCLUDED + 1))
    main = rulebase(tmp_path, declarations, **many)
    problems = await check_files(shared_engine(), [main])
    assert any("more than" in m for m in errors_at(problems, main, MAX_INCLUDED + 1)), problems
    assert not errors_at(problems, main, MAX_INCLUDED), problems  # the last one within the bound


async def test_a_change_in_an_included_file_is_reloaded(tmp_path: Path) -> None:
    main = rulebase(tmp_path, ":- include_rules('bags.pl').\n", bags=GUARD)
    holder = RulebaseHolder(shared_engine(), [main])
    assert await holder.reload()
    v1 = holder.current.version
    assert await holder.check_for_changes() is False
    bags = main.parent / "bags.pl"
    bags.write_text(GUARD.replace("2", "3"))
    os.utime(bags, ns=(1, 1))  # another time whatever the clock's grain
    assert await holder.check_for_changes() is True
    assert holder.current.version != v1
    await holder.unload_all()


def test_check_names_the_included_files_and_their_problems(tmp_path: Path) -> None:
    main = rulebase(tmp_path, ":- include_rules('sub/bags.pl').\n", sub__bags=GUARD + "evil :- shell(ls).\n")
    done = subprocess.run([sys.executable, "-m", "sentinel_mcp", "check", str(main)], capture_output=True,
                          text=True, timeout=100, cwd=tmp_path, stdin=subprocess.DEVNULL)
    bags = main.parent / "sub" / "bags.pl"
    assert f"{bags}:2: error" in done.stdout, done.stdout + done.stderr
    assert f"1 file(s) and 1 included ({bags})" in done.stderr, done.stderr
    assert done.returncode == 1


def test_the_policy_history_keeps_an_included_files_text(tmp_path: Path) -> None:
    """A version whose included file changed showed the texts of the one before it (a diff of nothing)."""
    from sentinel_mcp.policy.version_history import read_texts

    main = rulebase(tmp_path, ":- include_rules('sub/bags.pl').\n", sub__bags=GUARD)
    assert read_texts([main]) == {"main.pl": ":- include_rules('sub/bags.pl').\n", "sub/bags.pl": GUARD}


async def test_a_file_named_in_another_spelling_includes_as_well(tmp_path: Path, monkeypatch) -> None:
    """The loader is given the configured names as a caller spells them (``./main.pl``)."""
    main = rulebase(tmp_path, ":- include_rules('bags.pl').\n", bags=GUARD)
    monkeypatch.chdir(main.parent)
    out = await shared_engine().load("rb_spelled_include", ["./main.pl"])
    await shared_engine().unload("rb_spelled_include")
    assert out["errors"] == [], out


async def test_a_query_worker_reads_the_included_rules_too(tmp_path: Path) -> None:
    """The worker that answers a client's symbolic queries loads the rulebase apart: with its includes."""
    from sentinel_mcp.policy.query_worker import QueryWorker

    main = rulebase(tmp_path, ":- include_rules('sub/more.pl').\n",
                    sub__more="extra(x).\n:- public extra/1.\n")

    async def dump() -> str:
        return ""

    qw = QueryWorker()
    try:
        out = await qw.query(rb_module="rb_included_query", rb_version="1", rb_files=[str(main)],
                             session_module="s_included", generation=1, dump_session=dump, goal="extra(X)")
    finally:
        await qw.close()
    assert out["status"] == "proved" and out["solutions"][0]["bindings"]["X"] == "x", out
