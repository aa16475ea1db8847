"""Lazy proofs (the gateway's guard): an allow's proof is kept in the engine and rendered when read. The lazy
path must decide exactly as the reference path (every rule interpreted, the proof written at once) and render
the same proof: on many generated airline calls (allow, deny, ask, facts still needed) and on hostile text in
the arguments (quotes, newlines, a Prolog injection, huge and non-ASCII strings)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.decision import Allow, Decision, ToolCall
from sentinel_mcp.core.lazy_proof import LazyProof, rendered_proof
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy.engine import EngineError
from sentinel_mcp.policy.guard import PolicyGuard
from tests.policy.confirmation_facts import plant_confirmation
from tests.policy.test_compiled_rules import airline_call, airline_facts, call, unnamed
from tests.policy.test_engine_calls import NASTY

pytestmark = pytest.mark.timeout(120)

HOSTILE = [*NASTY, "'),halt,('", "'), halt, ('", "\"), halt, (\"", "x'). :- halt. ('", "a\\'b",
           "\n:- halt.\n",
           "0'a", "[]", "{}", "_", "X", "'", "\\", "%", "/*", "é" * 20000, "q" * 200_000, "\u0000'),halt,('"]


async def shown(guard: PolicyGuard, c: ToolCall, *, lazy: bool,
                behind: bool = False) -> tuple[Decision, dict[str, Any]]:
    """The decision on the lazy path (fast, proof kept) or the reference path, and what it shows: kind,
    reason, unmet conditions, questions and the rendered proof (variables unnamed, fetch times dropped)."""
    guard.fast_path, guard.lazy_proofs, guard.write_proofs_behind = lazy, lazy, behind
    try:
        d = await guard.decide(c)
    finally:
        guard.fast_path, guard.lazy_proofs, guard.write_proofs_behind = True, False, False
    proof = await rendered_proof(getattr(d, "proof", None))
    for f in (proof or {}).get("fetches", []):
        f.pop("started"), f.pop("ended")
    return d, unnamed({"kind": d.kind, "reason": d.reason, "unmet": getattr(d, "unmet", None), "proof": proof,
                       "questions": [q.key for q in getattr(d, "questions", [])]})


@pytest.mark.parametrize("behind", [False, True], ids=["when-read", "written-behind"])
async def test_airline_lazy_and_reference_decide_and_show_the_same(tmp_path: Path, behind: bool) -> None:
    guard = PolicyGuard([RULEBASES_DIR / "airline.pl"], None, store_path=tmp_path / "facts.db",
                        seeds={"current_user": "amelia_davis_8890"})
    await guard.start(watch=False)
    rng = random.Random(2121)
    kinds: dict[str, int] = {}
    try:
        for i in range(100):
            session, r, user = f"s{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = airline_facts(rng, r, user)
            # the confirmation of this very call (of the text its guard shows over these facts)
            confirmer = rng.choice(["user", "agent"]) if rng.random() < 0.5 else None
            await guard.engine.assert_facts(mod, facts)
            if confirmer:
                await plant_confirmation(guard, c, confirmer)
            lazy_d, lazy = await shown(guard, c, lazy=True, behind=behind)
            _, ref = await shown(guard, c, lazy=False)
            assert lazy == ref, (c, facts)
            # the lazy path was taken: an allow carries a proof rendered when read
            assert isinstance(lazy_d.proof, LazyProof) == isinstance(lazy_d, Allow), lazy_d
            missing = any("could not find out" in u for u in lazy["unmet"] or [])
            key = f"{lazy['kind']}{' (facts needed)' if missing else ''}"
            kinds[key] = kinds.get(key, 0) + 1
    finally:
        await guard.close()
    # allow, deny, and a deny for facts Sentinel could not fetch (no upstream here), or it proves little (the
    # questions: below)
    assert {"allow", "deny", "deny (facts needed)"} <= set(kinds), kinds


ECHO = """
fact(seen/1).
askable(fine(X), "Is ~w fine?", yes_no, [from([user])]).
said(T) :- atom(T), atom_length(T, N), N >= 0.
guard('t__echo', [text = T], said(T)).
guard('t__both', [text = T, other = O], ( said(T), T \\== O )).
guard('t__never', [text = T], seen(T)).
guard('t__ask', [text = T], ( said(T), fine(T) )).
"""


async def test_hostile_text_is_decided_and_shown_as_on_the_reference_path(tmp_path: Path) -> None:
    rb = tmp_path / "echo.pl"
    rb.write_text(ECHO)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    try:
        for t in HOSTILE:
            for name, args, kind in (("t__echo", {"text": t}, "allow"),
                                     ("t__both", {"text": t, "other": t}, "deny"),
                                     ("t__both", {"text": t, "other": t + "."}, "allow"),
                                     ("t__never", {"text": t}, "deny"), ("t__echo", {"txt": t}, "deny"),
                                     ("t__ask", {"text": t}, "ask")):
                c = call(name, args, "s")
                d, lazy = await shown(guard, c, lazy=True)
                _, ref = await shown(guard, c, lazy=False)
                assert lazy["kind"] == kind, (t[:50], name, lazy)
                assert lazy == ref, (t[:50], name)
                if kind == "allow":  # a proof of the rule, whatever the argument holds
                    assert isinstance(d.proof, LazyProof)
                    assert '"goal": "said(' in json.dumps(await rendered_proof(d.proof))
    finally:
        await guard.close()


async def test_a_proof_is_rendered_once_and_the_engine_keeps_a_bounded_number(tmp_path: Path) -> None:
    rb = tmp_path / "echo.pl"
    rb.write_text(ECHO)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", lazy_proofs=True)
    await guard.start(watch=False)
    try:
        first = await guard.decide(call("t__echo", {"text": "first"}, "s"))
        again = await guard.decide(call("t__echo", {"text": "again"}, "s"))
        assert isinstance(first.proof, LazyProof) and isinstance(again.proof, LazyProof)
        a = await rendered_proof(again.proof)
        assert await rendered_proof(again.proof) == a  # read twice: rendered once, the same proof
        for i in range(1100):  # more allows than the engine keeps proofs of, none read
            await guard.decide(call("t__echo", {"text": f"t{i}"}, "s"))
        with pytest.raises(EngineError):  # dropped: its reader is told, never shown another proof
            await rendered_proof(first.proof)
        newest = await guard.decide(call("t__echo", {"text": "newest"}, "s"))
        assert "newest" in str(await rendered_proof(newest.proof))

        def keys(prolog) -> list[int]:  # type: ignore[no-untyped-def]
            q = "findall(K, (current_key(K), integer(K)), Ks)"
            return list(next(iter(prolog.query(q, maxresult=1)))["Ks"])

        # kept under their id modulo 1024: a key stays in SWI-Prolog's record table once used (~160 bytes),
        # so one key per decision grew the engine for good
        used = await guard.engine.run(keys)
        assert used and all(0 <= k < 1024 for k in used), sorted(used)[-5:]
    finally:
        await guard.close()


DEEP = """
down(0).
down(N) :- integer(N), N > 0, M is N - 1, down(M).
guard('t__deep', [depth = N], down(N)).
"""


@pytest.mark.parametrize("depth", [3, 60, 200])
async def test_a_kept_proof_is_read_as_a_term_or_as_text_alike_and_once(tmp_path: Path, depth: int) -> None:
    """A kept proof is read as a term in C, or, past what the C reader takes (a tree over 256 levels deep: 200
    recursions here), written as JSON text and parsed: the same tree either way, and forgotten once read."""
    from sentinel_mcp.policy import engine as engine_module

    rb = tmp_path / "deep.pl"
    rb.write_text(DEEP)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", lazy_proofs=True)
    await guard.start(watch=False)
    try:
        c = call("t__deep", {"depth": depth}, "s")
        assert isinstance(await guard.decide(c), Allow)
        rulebase = guard.rulebases.current
        session = await guard.knowledge.ensure("s", rulebase)

        async def kept() -> int:
            out = await guard.engine.decide_compact(rulebase.module, session, time.time(), c.identity,
                                                    c.arguments, c.digest, rulebase.version)
            assert out["status"] == "proved" and isinstance(out["tree"], engine_module.KeptProof), out
            return out["tree"].id

        term_id, text_id = await kept(), await kept()
        # the C reader's answer, the proof still kept
        read = engine_module._SN_KEPT_TERM.json_call(-1, term_id)
        assert (read is engine_module.NOT_NATIVE) == (depth == 200), depth
        tree = await guard.engine.run(lambda _: engine_module._kept_tree(term_id))
        written = await guard.engine.run(
            lambda _: engine_module.from_prolog_json(engine_module._SN_RENDER_KEPT(text_id))["tree"])
        assert tree == written and json.dumps(tree).count('"goal": "down(') == depth + 1
        for kept in (term_id, text_id):  # read once, by either way: then forgotten
            with pytest.raises(EngineError):
                await guard.engine.render_kept(engine_module.KeptProof(kept, None))
    finally:
        await guard.close()


@pytest.mark.parametrize("behind", [False, True], ids=["when-read", "written-behind"])
async def test_the_gateway_audits_a_lazy_proof_rendered(tmp_path: Path, behind: bool) -> None:
    """Through the real gateway: the decision row written ahead holds the rendered proof (its tree, with the
    policy sentence a requirement cites), never a placeholder for it."""
    from mcp import Client

    from sentinel_mcp.app.runtime import running_gateway
    from sentinel_mcp.gateway.audit import read_audit
    from tests.policy.test_through_gateway import config, user_answers

    async with running_gateway(config(tmp_path)) as rt:
        guard = rt.gateway.guard
        assert isinstance(guard, PolicyGuard)
        assert guard.lazy_proofs  # the gateway's own guard keeps its proofs and renders them for the row
        guard.write_proofs_behind = behind
        async with Client(rt.front.server, mode="auto", elicitation_callback=user_answers([])) as c:
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert not r.is_error, r.content[0].text
        await rt.audit.flush()
        rows = [row for row in await read_audit(rt.config.store_path, tail=200)
                if row.get("tool") == "bk__cancel_booking" and row.get("decision") == "allow"]
    assert rows
    for row in rows:
        proof = row["proof"] if isinstance(row["proof"], dict) else json.loads(row["proof"])
        assert isinstance(proof.get("tree"), dict) and "LazyProof" not in json.dumps(row), row
        assert proof["rulebase"] and "BK-789" in json.dumps(proof["tree"])
