"""A rulebase check run in a child process (check_process, for the console): the same problems the checker
finds in process, and one that could not finish is an error ("could not finish checking", a draft's refusal),
never "no problems"; the child ends when its stdin does (the gateway gone), whatever it is doing. Real
SWI-Prolog in a real child; asserted on outcomes and exit codes, never on the clock."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from mcp.types import Tool, ToolAnnotations

from sentinel_mcp.policy.check_places import ChecksBusy, check_slot, MAX_RUNNING
from sentinel_mcp.policy.check_process import check_isolated
from sentinel_mcp.policy.checker import UNCHECKED_GUARD, UNFINISHED, check_paths
from sentinel_mcp.policy.draft_check import REFUSING_CODES
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(180)
BOOKINGS = Path(__file__).parent / "rulebases" / "bookings.pl"


def _costly(guards: int = 60, width: int = 40, depth: int = 7) -> str:
    out = "".join(f"guard('shop__t{i}', [order = O], p0(O)).\n" for i in range(guards))
    for level in range(depth):
        out += f"p{level}(X) :- " + ", ".join([f"p{level + 1}(X)"] * width) + ".\n"
    return out + f"p{depth}(X) :- X \\== a.\n"


async def test_the_child_finds_what_the_checker_finds(tmp_path: Path) -> None:
    f = tmp_path / "rb.pl"
    f.write_text(BOOKINGS.read_text() + "guard('bk__x', [], (\\+ fail)).\nunused(1).\nguard(y, (\n")
    missing = tmp_path / "missing.pl"
    here = await check_paths(shared_engine(), [f, missing])
    with check_slot("owner", owner=True):
        there = await check_isolated([f, missing])
    assert [p.model_dump() for p in there] == [p.model_dump() for p in here]
    assert any(p.severity == "error" for p in there)


async def test_a_check_that_could_not_finish_is_an_error_that_refuses_a_draft(tmp_path: Path) -> None:
    f = tmp_path / "rb.pl"
    f.write_text(_costly())
    with check_slot("owner", owner=True):
        [p] = await check_isolated([f], seconds=0.5, about=f)  # killed long before its budget is spent
    assert p.severity == "error" and UNFINISHED in p.message and p.file == str(f)
    assert p.code == UNCHECKED_GUARD and p.code in REFUSING_CODES


async def test_only_so_many_checks_hold_a_place_at_once() -> None:
    with contextlib.ExitStack() as held:
        held.enter_context(check_slot("owner", owner=True))
        for i in range(MAX_RUNNING - 1):
            held.enter_context(check_slot(f"reader{i}", owner=False))
        with pytest.raises(ChecksBusy), check_slot("owner2", owner=True):
            pass
    with check_slot("owner2", owner=True):  # given back at the end of each
        pass


def test_the_child_ends_when_its_stdin_ends(tmp_path: Path) -> None:
    """Its request read, the child checks a costly rulebase; stdin closed (its parent gone), it ends at once
    with its own code (3), never finishing the check (0)."""
    f = tmp_path / "rb.pl"
    f.write_text(_costly())
    child = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp.policy.check_child"], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        request = {"files": [str(f)], "catalog": None, "untrusted": None}
        child.stdin.write(json.dumps(request).encode() + b"\n")
        child.stdin.flush()
        child.stdin.close()
        assert child.wait(timeout=120) == 3
        assert child.stdout.read() == b""
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()


def _catalog() -> list[Tool]:
    props = {"booking_id": {"type": "string"}, "mode": {"enum": ["a", "b"]}}
    schema = {"type": "object", "properties": props}
    return [
        Tool(name="bk__cancel_booking", input_schema=schema),  # destructive as MCP's defaults read
        Tool(name="bk__list_bookings", input_schema={"type": "object"},
             annotations=ToolAnnotations(read_only_hint=True)),
        Tool(name="bk__get_booking", input_schema=schema,
             annotations=ToolAnnotations(destructive_hint=False)),
        Tool(name="bk__touch", input_schema=schema, annotations=ToolAnnotations(destructive_hint=True)),
        Tool(name="bk__unguarded", input_schema={"type": "object"}),
    ]


async def test_the_child_reads_the_catalog_as_the_checker_does(tmp_path: Path) -> None:
    """Read-only and destructive hints (an absent one, true, false) and the schemas' properties decide what
    the check finds about a tool: the child, reading the catalog it is sent, finds what the checker finds with
    the gateway's tools."""
    f = tmp_path / "rb.pl"
    f.write_text(
        "guard('bk__cancel_booking', [booking_id = _], confirmed('Cancel it?', [])).\n"
        "guard('bk__touch', [], true).\n"
        "guard('bk__get_booking', [], true).\n"
        "guard('bk__list_bookings', [mode = M], confirmed('List?', [M])).\n"
        "guard('bk__gone', [], true).\n"
    )
    here = await check_paths(shared_engine(), [f], _catalog())
    with check_slot("owner", owner=True):
        there = await check_isolated([f], _catalog())
    assert [p.model_dump() for p in there] == [p.model_dump() for p in here]
    codes = {p.code for p in there}
    assert len(codes) >= 3, there  # the hints and the schemas told: more than one kind of problem


def test_the_check_child_starts_without_the_mcp_types() -> None:
    """The MCP types are half a check child's start-up (benchmarks/check_child_start.py): the child reads the
    catalog it is sent without them."""
    probe = (
        "import sys\nimport sentinel_mcp.policy.check_child as c\nc._warm()\n"
        "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]", out.stdout[:2000]
