"""A fact reaches a guard ground. The secret walk, the guards and the store's look-ups take every stored fact,
tool answer and context to be ground; the store keeps a fact as its text (``~q``) and reads that text back
into the session's module. writeq writes ``'$VAR'(N)`` as a variable's name, so a ground seed
``admin('$VAR'(1))`` (an odd constant to a reader) was kept as ``admin(B)``, mirrored as ``admin(_)``, and
every guard asking ``admin(U)`` held for anyone. Now such a term is refused where the rulebase writes it (an
error with its line), the store refuses a fact whose text does not read back ground, and the mirror refuses
a text that is no ground fact (whoever wrote the row)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.policy.policy_rig import make_guard

from sentinel_mcp.core.decision import Deny, ToolCall
from sentinel_mcp.policy.checker import check_files
from sentinel_mcp.policy.engine import EngineError, shared_engine

pytestmark = pytest.mark.timeout(90)

GUARD = "fact(admin/1).\nguard('shop__purge', [user = U], admin(U)).\n"
UNBOUND_ON_READING = ["'$VAR'(1)", "'$VAR'('Who')", "'$VAR'('_')", "f('$VAR'(0))"]


def purge(user: str) -> ToolCall:
    return ToolCall(name="shop__purge", server="shop", tool="purge", arguments={"user": user},
                    session_id="s1")


@pytest.mark.parametrize("value", UNBOUND_ON_READING)
async def test_a_seed_written_as_a_variable_lets_no_one_through(tmp_path: Path, value: str) -> None:
    rb = tmp_path / "rb.pl"
    rb.write_text(f"{GUARD}seed(admin({value})).\n", encoding="utf-8")
    errors = [p for p in await check_files(shared_engine(), [rb]) if p.severity == "error"]
    assert any(p.line == 3 and "variable" in p.message for p in errors), errors
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    try:
        assert isinstance(await g.decide(purge("mallory")), Deny)
    finally:
        await g.close()


@pytest.mark.parametrize("value", UNBOUND_ON_READING)
async def test_the_store_refuses_a_fact_whose_text_reads_back_unbound(value: str) -> None:
    with pytest.raises(EngineError):
        await shared_engine().fact_json(f"admin({value})")


# one a line (the bulk path), and one whose text spans lines (the list path)
@pytest.mark.parametrize("text", ["admin(_)", "admin(\n_)", "admin(X, X)", "_"])
async def test_the_mirror_refuses_a_text_that_is_no_ground_fact(text: str) -> None:
    engine = shared_engine()
    session = "s_rt_walks2_ground"
    with pytest.raises(EngineError):
        await engine.assert_facts(session, [(text, None, "seed")])
    out = await engine.json_query(
        f"findall(x, sentinel_core:stored_fact({session}, admin(_), _, _), L), "
        "sentinel_core:to_json_atom(json([n=L]), Out)"
    )
    assert out["n"] == []


async def test_a_plain_seed_still_lets_its_admin_through(tmp_path: Path) -> None:
    """The control: a seed of a constant is kept, and holds for that user only."""
    from sentinel_mcp.core.decision import Allow

    rb = tmp_path / "rb.pl"
    rb.write_text(f"{GUARD}seed(admin(eve)).\n", encoding="utf-8")
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    try:
        assert isinstance(await g.decide(purge("eve")), Allow)
        assert isinstance(await g.decide(purge("mallory")), Deny)
    finally:
        await g.close()


async def test_a_stored_row_that_is_no_ground_fact_denies(tmp_path: Path) -> None:
    """Whoever wrote the row (a store shared with another process, an old version): the gateway that reads
    it back denies, where ``admin(_)`` let anyone through."""
    import contextlib

    from sentinel_mcp.policy.fact_rows import Fact

    rb = tmp_path / "rb.pl"
    rb.write_text(GUARD, encoding="utf-8")
    row = Fact(session="s1", predicate="admin", args=[None], fact="admin(_)", provenance="seed")
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    try:
        with contextlib.suppress(EngineError):  # the store keeps it; its mirror here refuses it already
            await g.knowledge.add([row])
    finally:
        await g.close()
    g = await make_guard(None, tmp_path / "facts.db", files=[rb], seeds={})
    try:
        assert isinstance(await g.decide(purge("mallory")), Deny)
    finally:
        await g.close()
