"""A clause whose head takes a name the rulebase language reserves (guard, binding, askable, context, ...)
at an arity the language does not define is an error at load. ``guard(cancel, Args, A, B).`` (a top-level
comma without brackets) or ``guard(T, Args) :- ...`` loaded as guard/4 or guard/2, a predicate of its own
nothing reads, and ``check`` said nothing: the author believed the tool guarded when its guard was not what
they wrote.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from tests.support.checked_rulebase import checked_problems
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, ToolCall
from sentinel_mcp.policy.engine import shared_engine
from sentinel_mcp.policy.rulebase import RulebaseError, load_rulebase

pytestmark = pytest.mark.timeout(120)

BASE = "fact(mine/1).\nfact(paid/1).\n"

# (text after BASE, the wrong indicator, the expected arity the message names)
WRONG = [
    ("guard('t__cancel', [id = R], mine(R), paid(R)).\n", "guard/4", "guard/3"),
    ("guard('t__cancel', [id = R]) :- mine(R).\n", "guard/2", "guard/3"),
    ("guard('t__cancel').\n", "guard/1", "guard/3"),
    ("guard('t__cancel', [id = R], mine(R), paid(R), mine(R)).\n", "guard/5", "guard/3"),
    ("guard(T, A) --> [T, A].\n", "guard/4", "guard/3"),
    ("guard :- true.\n", "guard/0", "guard/3"),
    ("binding(mine(X), tool('t__get', []), extract([X = id])).\n", "binding/3", "binding/4"),
    ("askable(ok, \"ok?\", yes_no).\n", "askable/3", "askable/4"),
    ("context(focus, B) :- mine(B).\n", "context/2", "context/1"),
    ("effect('t__cancel', [id = R]).\n", "effect/2", "effect/3"),
    ("seed(mine(a), true).\n", "seed/2", "seed/1"),
    ("option(strict_symbolic, true).\n", "option/2", "option/1"),
    ("read_only('t__get', yes).\n", "read_only/2", "read_only/1"),
    ("symbolic_exempt('t__get').\n", "symbolic_exempt/1", "symbolic_exempt/2"),
    ("fact(mine, 1).\n", "fact/2", "fact/1"),
    ("policy_document(p).\n", "policy_document/1", "policy_document/2"),
    ("cites(mine/1).\n", "cites/1", "cites/2"),
    # declarations of the wrong arity: they announce a predicate the language does not read
    (":- dynamic guard/4.\n", "guard/4", "guard/3"),
    (":- dynamic([guard/2, mine2/1]).\n", "guard/2", "guard/3"),
    (":- discontiguous guard/4.\n", "guard/4", "guard/3"),
    (":- multifile guard/4.\n", "guard/4", "guard/3"),
    (":- multifile((mine/1, binding/3)).\n", "binding/3", "binding/4"),
    ("?- dynamic(context/2).\n", "context/2", "context/1"),
]


_problems = partial(checked_problems, head=BASE, name="p.pl")


@pytest.mark.parametrize(("text", "wrong", "expected"), WRONG)
async def test_a_reserved_name_at_another_arity_is_an_error(
    tmp_path: Path, text: str, wrong: str, expected: str
) -> None:
    problems = await _problems(tmp_path, text)
    mine = [p for p in problems if p.code == "reserved_arity"]
    assert len(mine) == 1, problems
    p = mine[0]
    assert p.severity == "error" and p.line == 3 and p.file.endswith("p.pl"), p
    assert wrong in p.message and expected in p.message, p.message


async def test_a_top_level_comma_is_told_how_to_bracket_it(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, "guard('t__cancel', [id = R], mine(R), paid(R)).\n")
    (p,) = [p for p in problems if p.code == "reserved_arity"]
    assert "guard/4 is not a guard" in p.message and "(mine(A),paid(A))" in p.message.replace(" ", ""), p


async def test_a_guard_written_as_a_rule_is_told_its_goal_is_its_last_argument(tmp_path: Path) -> None:
    problems = await _problems(tmp_path, "guard('t__cancel', [id = R]) :- mine(R).\n")
    (p,) = [p for p in problems if p.code == "reserved_arity"]
    assert "guard(t__cancel,[id=A],mine(A))" in p.message.replace(" ", ""), p.message


@pytest.mark.parametrize(
    "text",
    [
        "m:guard('t__cancel', [id = R], mine(R), paid(R)).\n",
        "user:guard('t__cancel', [], true).\n",
    ],
)
async def test_a_module_qualified_reserved_head_is_an_error(tmp_path: Path, text: str) -> None:
    problems = await _problems(tmp_path, text)
    assert [p for p in problems if p.severity == "error" and p.line == 3], problems


@pytest.mark.parametrize(
    "text",
    [
        "guard('t__cancel', [id = R], (mine(R), paid(R))).\n",
        ":- dynamic guard/3.\n:- discontiguous guard/3.\n",
        ":- multifile guard/3.\nguard('t__cancel', [], mine(_)).\n",
        "context(focus).\ncontext(focus2, B, mine(B)).\n",
        "guarded(X) :- mine(X).\nguard('t__cancel', [id = R], guarded(R)).\n",  # a name that only begins so
    ],
)
async def test_the_arities_the_language_defines_are_no_problem(tmp_path: Path, text: str) -> None:
    problems = await _problems(tmp_path, text)
    assert not [p for p in problems if p.code == "reserved_arity"], problems
    assert not [p for p in problems if p.severity == "error"], problems


async def test_the_rulebase_is_refused_at_load(tmp_path: Path) -> None:
    f = tmp_path / "p.pl"
    f.write_text(BASE + "guard('t__cancel', [id = R], mine(R), paid(R)).\n")
    with pytest.raises(RulebaseError) as e:
        await load_rulebase(shared_engine(), [f])
    assert any("guard/4" in p.message for p in e.value.problems)


async def test_on_reload_the_rulebase_in_force_stays(tmp_path: Path) -> None:
    f = tmp_path / "p.pl"
    f.write_text("guard('t__ok', [n = N], N =< 10).\n")
    g = await make_guard(None, tmp_path / "facts.db", files=[f])
    try:
        v1 = g.version
        f.write_text("guard('t__ok', [n = N], N =< 10, N >= 0).\n")
        assert await g.rulebases.check_for_changes() is False
        assert g.version == v1
        assert g.rulebases.last_error is not None and "guard/4" in g.rulebases.last_error
        call = ToolCall(name="t__ok", server="t", tool="ok", arguments={"n": 5}, session_id="s")
        assert isinstance(await g.decide(call), Allow)
    finally:
        await g.close()
