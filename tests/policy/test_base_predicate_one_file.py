"""A base predicate belongs to one file, as a rule does: each declaration that makes facts of it (fact/1,
seed/1, binding/4, askable/4, an effect's establish) widens every guard that reads it. A second file (a draft
added beside the rulebases in force, from hostile words or a hostile model) gave another file's
``fact(admin/1)`` a ``seed(admin(eve))``, an askable the agent answers, a binding or an effect establishing
it, and every guard that asked ``admin(U)`` then held for eve; ``check`` said nothing. Now each is an error
naming the later file and line, unless every file with a source of it declares ``:- multifile Name/Arity.``"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import shared_engine

pytestmark = pytest.mark.timeout(90)

OWNER = "fact(admin/1).\nguard('shop__purge', [user = U], admin(U)).\n"
WIDENING = [
    "seed(admin(eve)).\n",
    'askable(admin(U), "Is ~w an admin?", yes_no, [from([user, agent])]).\n',
    "binding(admin(U), tool('shop__get_order', [id = U]), extract([]), [ttl(60)]).\n",
    "fact(admin/1).\n",
    "effect('shop__get_order', [], [establish(admin(eve))]).\n",
    "effect('shop__get_order', [], [establish(admin(eve), true)]).\n",
    # the second file's consent alone does not open the first's predicate
    ":- multifile admin/1.\nseed(admin(eve)).\n",
]


def call(user: str) -> ToolCall:
    return ToolCall(
        name="shop__purge", server="shop", tool="purge", arguments={"user": user}, session_id="s1"
    )


@pytest.mark.parametrize("other", WIDENING)
async def test_a_second_files_source_of_a_base_predicate_is_an_error(tmp_path: Path, other: str) -> None:
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text(OWNER)
    b.write_text(other)
    line = other.count("\n")
    errors = [p for p in await check_files(shared_engine(), [a, b]) if p.severity == "error"]
    assert any(
        p.file == str(b) and p.line == line and "admin/1" in p.message and str(a) in p.message for p in errors
    ), errors


async def test_a_second_files_seed_no_longer_lets_eve_through(tmp_path: Path) -> None:
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text(OWNER)
    b.write_text("seed(admin(eve)).\n")
    g = await make_guard(None, tmp_path / "facts.db", files=[a, b])
    try:
        assert not g.rulebases.loaded and "admin/1" in str(g.load_error)
        assert isinstance(await g.decide(call("eve")), Deny)
    finally:
        await g.close()


@pytest.mark.parametrize(
    "first,second",
    [
        # one file's many sources of its own predicate
        (OWNER + "seed(admin(root)).\neffect('shop__get_order', [], [establish(admin(eve))]).\n", "x.\n"),
        # both files consent
        (":- multifile admin/1.\n" + OWNER, ":- multifile admin/1.\nseed(admin(eve)).\n"),
    ],
)
async def test_sources_in_one_file_or_consented_in_each_load(tmp_path: Path, first: str, second: str) -> None:
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text(first)
    b.write_text(second)
    errors = [p for p in await check_files(shared_engine(), [a, b]) if p.severity == "error"]
    assert errors == [], errors
    g = await make_guard(None, tmp_path / "facts.db", files=[a, b])
    try:
        assert isinstance(await g.decide(call("mallory")), Deny)
        if "eve" in second:
            assert isinstance(await g.decide(call("eve")), Allow)
    finally:
        await g.close()


OPEN_DOOR = "fact(admin/1).\nguard('shop__purge', [user = U], ( option(open_door) -> true ; admin(U) )).\n"


@pytest.mark.parametrize("other", ["option(open_door).\n", ":- multifile option/1.\noption(open_door).\n"])
async def test_an_option_a_rule_reads_from_another_file_is_an_error(tmp_path: Path, other: str) -> None:
    """An option is data a rule may read: another file's option(open_door) opened the first file's guard."""
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text(OPEN_DOOR)
    b.write_text(other)
    errors = [p for p in await check_files(shared_engine(), [a, b]) if p.severity == "error"]
    assert any(
        p.file == str(b) and p.line == other.count("\n") and "open_door" in p.message for p in errors
    ), errors


@pytest.mark.parametrize(
    "first,second",
    [
        (OPEN_DOOR + "option(open_door).\n", "option(strict_symbolic).\n"),  # its own; one no rule reads
        (":- multifile option/1.\n" + OPEN_DOOR, ":- multifile option/1.\noption(open_door).\n"),
    ],
)
async def test_an_option_in_its_readers_file_or_consented_loads(
    tmp_path: Path, first: str, second: str
) -> None:
    a, b = tmp_path / "a.pl", tmp_path / "b.pl"
    a.write_text(first)
    b.write_text(second)
    assert [p for p in await check_files(shared_engine(), [a, b]) if p.severity == "error"] == []
