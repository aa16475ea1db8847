"""A lazy guard's first pass run at once on the caller's thread (``PolicyGuard._first_pass``): an
allow proved by it is answered without the solver, anything else goes on from that very pass. It must decide
and show exactly what the general path does, and never run a pass twice: the same decisions, proofs and
questions as the guard without the shortcut and as the reference path, with the same number of passes through
the engine; a first pass over the caller's cap decided once more on the engine thread only; sessions not
loaded yet, shared stores, strict symbolic mode and proofs written at once or behind taking the general path.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import copy_shipped_rulebase
from sentinel_mcp.core.decision import Allow, ToolCall
from sentinel_mcp.core.lazy_proof import LazyProof, rendered_proof
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy import engine as engine_module
from sentinel_mcp.policy.engine import PrologEngine, answer_of
from sentinel_mcp.policy.guard import PolicyGuard
from tests.policy.confirmation_facts import plant_confirmation
from tests.policy.test_compiled_rules import FAR, airline_call, airline_facts, call, unnamed
from tests.policy.test_lazy_proofs import HOSTILE, shown
from tests.policy.test_native_and_inline import HEAVY, InlineSpy

pytestmark = pytest.mark.timeout(240)

_PASSES = ("_SN_DECIDE", "_SN_DECIDE_COMPACT", "_SN_DECIDE_CAPPED", "_SN_DECIDE_INLINE")


class PassSpy:
    """Counts the decision passes that reach the engine (every direct call of a sn_decide predicate) and the
    first passes tried on the caller's thread."""

    def __init__(self, engine: PrologEngine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.passes = self.first = 0
        self.log: list[tuple[str, str]] = []  # (predicate, answer or error) of each pass
        for name in _PASSES:
            real = getattr(engine_module, name)

            def counted(*args: Any, _real: Any = real, _name: str = name) -> str:
                self.passes += 1
                try:
                    out = str(_real(*args))
                except Exception as e:
                    self.log.append((_name, repr(e)))
                    raise
                self.log.append((_name, out))
                return out

            monkeypatch.setattr(engine_module, name, counted)
        here = engine.decide_compact_here

        def counted_here(*args: Any, **kw: Any) -> Any:
            self.first += 1
            return here(*args, **kw)

        monkeypatch.setattr(engine, "decide_compact_here", counted_here)


async def without_first_pass(guard: PolicyGuard, c: ToolCall) -> Any:
    """The same guard's decision on the general path (the shortcut off for this one call)."""
    first = guard._first_pass

    async def general(call: ToolCall, rb: Any) -> None:
        return None

    guard._first_pass = general  # type: ignore[method-assign]
    try:
        return await guard.decide(c)
    finally:
        guard._first_pass = first  # type: ignore[method-assign]


async def view(d: Any) -> dict[str, Any]:
    proof = await rendered_proof(getattr(d, "proof", None))
    for f in (proof or {}).get("fetches", []):
        f.pop("started"), f.pop("ended")
    return unnamed({"kind": d.kind, "reason": d.reason, "unmet": getattr(d, "unmet", None),
                    "unblock": getattr(d, "how_to_unblock", None), "proof": proof,
                    "questions": [
                        [q.key, q.message, q.requested_schema, q.meta] for q in getattr(d, "questions", [])
                    ]})



def counted_solves(guard: PolicyGuard, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The passes of each solve of ``guard``, appended as it solves."""
    solved: list[int] = []
    solve = guard.solver.solve

    async def counted_solve(*args: Any, **kw: Any) -> Any:
        result = await solve(*args, **kw)
        solved.append(result.passes)
        return result

    monkeypatch.setattr(guard.solver, "solve", counted_solve)
    return solved

def airline_on_planted_facts(tmp: Path) -> Path:
    """airline.pl without ``fresh_for_writes``: these guards have no upstream, so a write's proof stands on
    the planted facts rather than drop them to read them again."""
    text = (RULEBASES_DIR / "airline.pl").read_text().replace(", fresh_for_writes]", "]")
    return copy_shipped_rulebase("airline.pl", tmp / "airline.pl", text)


async def test_first_passes_decide_as_the_general_path_with_no_pass_run_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guard = PolicyGuard([airline_on_planted_facts(tmp_path)], None, store_path=tmp_path / "facts.db",
                        seeds={"current_user": "amelia_davis_8890"}, lazy_proofs=True)
    await guard.start(watch=False)
    rng = random.Random(2141)
    kinds: dict[str, int] = {}
    try:
        spy = PassSpy(guard.engine, monkeypatch)
        solved = counted_solves(guard, monkeypatch)  # the passes of each solve
        for i in range(80):
            session, r, user = f"f{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = airline_facts(rng, r, user)
            confirmer = rng.choice(["user", "user", "agent"]) if rng.random() < 0.6 else None
            await guard.engine.assert_facts(mod, facts)
            if confirmer:
                await plant_confirmation(guard, c, confirmer)
            log, first, solves = len(spy.log), spy.first, len(solved)
            d = await guard.decide(c)
            runs = spy.log[log:]
            assert spy.first == first + 1, c  # the session is loaded: the first pass ran at once
            # every pass ran once, but a first one over the caller's cap (then once more on the engine thread;
            # the passes after it too, never tried on the caller's thread again)
            over = [r for r in runs if r[0] == "_SN_DECIDE_INLINE" and '"status":"proved"' not in r[1]
                    and '"status":"failed"' not in r[1] and '"status":"incomplete"' not in r[1]]
            assert len(over) <= 1 and (not over or runs[0] == over[0]), runs
            if isinstance(d, Allow) and not over:  # answered without the solver
                assert isinstance(d.proof, LazyProof) and len(solved) == solves and len(runs) == 1, (d, runs)
            else:
                assert len(solved) == solves + 1, d  # the solver went on from the first pass
                assert len(runs) == solved[-1] + len(over), (runs, solved[-1])
            assert all(r[0] != "_SN_DECIDE_INLINE" for r in runs[1:]) or not over, runs
            general = await without_first_pass(guard, c)
            shown_here = await view(d)
            assert shown_here == await view(general), c
            _, ref = await shown(guard, c, lazy=False)  # and the reference path (every rule interpreted)
            guard.lazy_proofs = True
            for k in ("kind", "reason", "unmet", "proof", "questions"):
                assert shown_here[k] == ref[k], (k, c)
            key = d.kind + (" over the cap" if over else "")
            kinds[key] = kinds.get(key, 0) + 1
        # a session loaded for the first time takes the general path (then it is loaded)
        first = spy.first
        d = await guard.decide(airline_call(rng, "R9999", "amelia_davis_8890", "fresh"))
        assert spy.first == first and d.kind in ("allow", "deny", "ask")
    finally:
        await guard.close()
    assert {"allow", "deny", "deny over the cap"} <= set(kinds), kinds


async def test_a_first_pass_over_the_cap_is_decided_once_more_on_the_engine_thread_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rb = tmp_path / "heavy.pl"
    rb.write_text(HEAVY)
    guard = PolicyGuard(
        [rb], None, store_path=tmp_path / "facts.db", inference_limit=400_000, lazy_proofs=True
    )
    await guard.start(watch=False)
    try:
        mod = await guard.knowledge.ensure("s", guard.rulebases.current)
        await guard.engine.assert_facts(mod, [("item(3)", FAR, "observed")])
        inline = InlineSpy(guard.engine, monkeypatch)
        spy = PassSpy(guard.engine, monkeypatch)
        for tool, kind, inline_runs, jobs in (("t__light", "allow", 1, 0), ("t__heavy", "allow", 1, 1),
                                              ("t__loop", "deny", 1, 1), ("t__err", "deny", 1, 1),
                                              ("t__late", "deny", 1, 0), ("t__loops", "deny", 1, 1)):
            c = call(tool, {"n": 3}, "s")
            here, put, passes = inline.here, inline.jobs, spy.passes
            d = await guard.decide(c)
            assert d.kind == kind, (tool, d)
            # tried once on this thread; over the cap (or an error the cap may cause): once on the engine's
            assert (inline.here - here, inline.jobs - put) == (inline_runs, jobs), tool
            assert spy.passes - passes == inline_runs + jobs, tool
            guard.fast_path, guard.lazy_proofs = False, False
            ref = await guard.decide(c)
            guard.fast_path, guard.lazy_proofs = True, True
            assert await view(d) == await view(ref), tool
    finally:
        await guard.close()


async def test_the_general_path_when_the_first_pass_may_not_run_here(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Proofs written at once or behind, the reference path and strict symbolic mode never take the shortcut
    (strict symbolic mode checks the arguments first); each still decides as the general path."""
    strict = tmp_path / "strict.pl"
    strict.write_text("option(strict_symbolic).\nfact(item/1).\nguard('t__get', [n = N], item(N)).\n")
    guard = PolicyGuard([strict], None, store_path=tmp_path / "facts.db", lazy_proofs=True)
    await guard.start(watch=False)
    try:
        mod = await guard.knowledge.ensure("s", guard.rulebases.current)
        await guard.engine.assert_facts(mod, [("item(3)", FAR, "observed")])
        spy = PassSpy(guard.engine, monkeypatch)
        for n in ("3", "4", 3):
            await guard.decide(call("t__get", {"n": n}, "s"))
        d = await guard.decide(call("t__get", {"n": "unknown"}, "s"))
        assert spy.first == 0 and d.kind == "deny" and "strict symbolic" in d.reason, d
    finally:
        await guard.close()
    echo = tmp_path / "echo.pl"
    echo.write_text("said(T) :- atom(T).\nguard('t__echo', [text = T], said(T)).\n")
    guard = PolicyGuard([echo], None, store_path=tmp_path / "facts2.db", lazy_proofs=True)
    await guard.start(watch=False)
    try:
        spy = PassSpy(guard.engine, monkeypatch)
        await guard.decide(call("t__echo", {"text": "load"}, "s"))  # loads the session
        for fast, lazy, behind in ((True, True, True), (True, False, False), (False, False, False)):
            guard.fast_path, guard.lazy_proofs, guard.write_proofs_behind = fast, lazy, behind
            first = spy.first
            d = await guard.decide(call("t__echo", {"text": "x"}, "s"))
            assert spy.first == first and d.kind == "allow", (fast, lazy, behind)
        guard.fast_path, guard.lazy_proofs, guard.write_proofs_behind = True, True, False
        for t in HOSTILE:  # hostile text through the shortcut: decided and shown as on the reference path
            c = call("t__echo", {"text": t}, "s")
            first = spy.first
            d, lazy_view = await shown(guard, c, lazy=True)
            assert spy.first == first + 1
            _, ref = await shown(guard, c, lazy=False)
            guard.lazy_proofs = True
            assert lazy_view == ref, t[:40]
    finally:
        await guard.close()


async def test_a_first_pass_from_a_thread_without_an_engine_is_one_job_and_decides_as_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From an event loop on a thread without a SWI-Prolog engine of its own (or with the engine busy), the
    first pass is one job on the engine thread: an allow it proves is answered without the solver (one pass),
    anything else goes on from that pass; the decisions and proofs are the general path's."""
    import asyncio

    guard = PolicyGuard([airline_on_planted_facts(tmp_path)], None, store_path=tmp_path / "facts.db",
                        seeds={"current_user": "amelia_davis_8890"}, lazy_proofs=True)
    await guard.start(watch=False)
    rng = random.Random(2143)
    kinds: dict[str, int] = {}
    try:
        spy = PassSpy(guard.engine, monkeypatch)
        solved = counted_solves(guard, monkeypatch)
        for i in range(60):
            session, r, user = f"j{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            await guard.engine.assert_facts(mod, airline_facts(rng, r, user))
            if rng.random() < 0.6:
                await plant_confirmation(guard, c, rng.choice(["user", "agent"]))
            log, solves = len(spy.log), len(solved)
            d = await asyncio.to_thread(lambda: asyncio.run(guard.decide(c, spend=False)))
            runs = spy.log[log:]
            assert runs and all(name == "_SN_DECIDE_COMPACT" for name, _ in runs), runs  # jobs, whole limit
            if isinstance(d, Allow):  # answered without the solver, from the one job
                assert isinstance(d.proof, LazyProof) and len(solved) == solves and len(runs) == 1, (d, runs)
            else:
                assert len(solved) == solves + 1 and len(runs) == solved[-1], (runs, solved)
            assert await view(d) == await view(await without_first_pass(guard, c)), c
            kinds[d.kind] = kinds.get(d.kind, 0) + 1
    finally:
        await guard.close()
    assert {"allow", "deny"} <= set(kinds), kinds


def test_a_kept_answer_is_read_as_its_json() -> None:
    """The kept answer's fixed text is read without a JSON parse, as exactly the dict its JSON is; every other
    text, near misses too, is parsed as JSON (and malformed JSON raises)."""
    kept = ('{{"status":"proved","tree":{{"kept":{}}},"needs":[],"unmet":[],"tentative":[],'
            '"violations":[]}}')
    for i in (1, 7, 1024, 10**17, 99999999999999999):
        text = kept.format(i)
        assert answer_of(text) == json.loads(text)
        assert type(answer_of(text)["tree"]["kept"]) is int
    near = [kept.format(1) + " ", kept.format("1.5"), kept.format('"1"'), kept.format(-3), kept.format(0),
            kept.format(10**30), kept.format(1).replace("proved", "failed"),
            kept.format(1).replace('"needs":[]', '"needs":[{"kind":"fetch"}]'),
            '{"status":"proved","tree":{"kept":1}}', '{"status":"error","message":"x"}']
    for text in near:
        assert answer_of(text) == json.loads(text), text
    for bad in (kept.format("01"), kept.format(1)[:-1], ""):
        with pytest.raises(ValueError):
            answer_of(bad)


async def test_kept_proofs_live_under_integer_keys_only_and_are_dropped(tmp_path: Path) -> None:
    rb = tmp_path / "echo.pl"
    rb.write_text("said(T) :- atom(T).\nguard('t__echo', [text = T], said(T)).\n")
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", lazy_proofs=True)
    await guard.start(watch=False)
    try:
        d = await guard.decide(call("t__echo", {"text": "x"}, "s"))
        await guard.decide(call("t__echo", {"text": "y"}, "s"))
        keys = (await guard.engine.json_query(
            "findall(K, ( current_key(K), recorded(K, kept(_, _, _)) ), Ks), "
            "sentinel_core:to_json_atom(json([k=Ks]), Out)"
        ))["k"]
        assert keys and all(isinstance(k, int) for k in keys), keys
        assert "x" in json.dumps(await rendered_proof(d.proof))
        await guard.engine.goal("sentinel_core:sn_drop_kept_proofs")
        left = (await guard.engine.json_query(
            "findall(K, ( current_key(K), recorded(K, kept(_, _, _)) ), Ks), "
            "sentinel_core:to_json_atom(json([k=Ks]), Out)"
        ))["k"]
        assert left == []
    finally:
        await guard.close()
