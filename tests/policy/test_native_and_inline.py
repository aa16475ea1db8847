"""The guard's two shortcuts against the reference path.

The native proof (``native_guards.pl``): a guard's body compiled, tried first; it may only ever say "proved",
with exactly the tree the full pass would build; anything else (a need, an assumption, an unmet condition, an
error, the limit) is the full pass's to decide. The decision on the caller's thread
(``PrologEngine.try_now``): the same answer as on the engine thread, under a small inference cap (a pass
over it, or one that errs, is decided again on the engine thread with the whole limit), never before a job
put earlier, never for big arguments. Compared over corpora of rulebases, calls, arguments and fact states
(present, missing, pending, expired, another session's), every field of the answer, not just allow or deny.
"""

from __future__ import annotations

import asyncio
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from sentinel_mcp.core.decision import Allow, Deny, ToolCall
from sentinel_mcp.core.lazy_proof import rendered_proof
from sentinel_mcp.paths import RULEBASES_DIR
from sentinel_mcp.policy import engine as engine_module
from sentinel_mcp.policy.engine import INLINE_ARGUMENT_CHARS, INLINE_INFERENCES, KeptProof, PrologEngine
from sentinel_mcp.policy.guard import PolicyGuard
from tests.policy.confirmation_facts import plant_confirmation
from sentinel_mcp.policy.prolog_text import fact_text, json_atom, quote_atom
from tests.policy.test_compiled_rules import (
    CONSTRUCTS,
    FAR,
    airline_call,
    airline_facts,
    call,
    construct_facts,
    unnamed,
)
from tests.policy.test_lazy_proofs import HOSTILE

pytestmark = pytest.mark.timeout(240)

NATIVE_ONLY = (
    "sentinel_core:begin_query({rb}, {s}, {now}, c({tool}, {digest}, {version})), "
    "sentinel_core:from_json_atom({args}, json(CA)), "
    "( sentinel_core:native_decision({rb}, {tool}, CA, {limit}, O0) -> true "
    "; O0 = json([status=fallback]) ), "
    "sentinel_core:add_needs(O0, O1), sentinel_core:to_json_atom(O1, Out)"
)


async def native_and_reference(guard: PolicyGuard, c: ToolCall) -> tuple[dict[str, Any], dict[str, Any]]:
    """The native proof alone (status "fallback" when it leaves the call to the full pass) and the reference
    pass (every rule interpreted), over the same facts at the same time."""
    rb = guard.rulebases.current
    mod = await guard.knowledge.ensure(c.session_id, rb)
    now = time.time()
    limit = rb.info.inference_limit(guard.inference_limit)
    native = await guard.engine.json_query(
        NATIVE_ONLY.format(rb=quote_atom(rb.module), s=quote_atom(mod), now=repr(now),
                           tool=quote_atom(c.identity), digest=quote_atom(c.digest),
                           version=quote_atom(rb.version), args=json_atom(c.arguments), limit=limit)
    )
    ref = await guard.engine.decide(rb.module, mod, now, c.identity, c.arguments, c.digest, rb.version, limit,
                                    fast=False)
    return unnamed(native), unnamed(ref)




def check_native(native: dict[str, Any], ref: dict[str, Any], seen: dict[str, int]) -> None:
    if native["status"] == "proved":  # a native proof is the reference's proof, field for field
        assert native == ref
    else:
        assert native == {"status": "fallback", "needs": [], "unmet": [], "tentative": [], "violations": []}
    key = f"{native['status']}/{ref['status']}"
    seen[key] = seen.get(key, 0) + 1


async def test_a_native_proof_is_the_reference_proof_on_every_construct(tmp_path: Path) -> None:
    rb = tmp_path / "constructs.pl"
    rb.write_text(CONSTRUCTS)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    tools = list(guard.rulebases.current.info.guards)
    rng = random.Random(2111)
    seen: dict[str, int] = {}
    try:
        for i in range(21 * 14):
            session, x = f"n{i}", rng.choice(["k1", "k2"])
            tool = tools[i % len(tools)]
            c = call(tool, {} if tool in ("t__zero", "t__loud") else {"x": x}, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = construct_facts(rng, x)
            confirm = rng.random() < 0.5
            await guard.engine.assert_facts(mod, facts)
            if confirm:  # the user's confirmation of this very call
                await plant_confirmation(guard, c, "user")
            native, ref = await native_and_reference(guard, c)
            check_native(native, ref, seen)
    finally:
        await guard.close()
    # the native proof decides most allows, and never anything else
    assert seen.get("proved/proved", 0) >= 40, seen
    assert seen.get("proved/proved", 0) >= 3 * seen.get("fallback/proved", 0), seen
    assert {"fallback/failed", "fallback/incomplete"} <= set(seen), seen


async def test_a_native_proof_is_the_reference_proof_on_the_airline_policy(tmp_path: Path) -> None:
    guard = PolicyGuard([RULEBASES_DIR / "airline.pl"], None, store_path=tmp_path / "facts.db",
                        seeds={"current_user": "amelia_davis_8890"})
    await guard.start(watch=False)
    rng = random.Random(2112)
    seen: dict[str, int] = {}
    try:
        for i in range(160):
            session, r, user = f"a{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            mod = await guard.knowledge.ensure(session, guard.rulebases.current)
            facts = airline_facts(rng, r, user)
            confirmer = rng.choice(["user", "agent"]) if rng.random() < 0.6 else None
            await guard.engine.assert_facts(mod, facts)
            if confirmer:
                await plant_confirmation(guard, c, confirmer)
            native, ref = await native_and_reference(guard, c)
            check_native(native, ref, seen)
    finally:
        await guard.close()
    assert seen.get("proved/proved", 0) >= 10, seen
    assert {"fallback/failed", "fallback/incomplete"} <= set(seen), seen


CITED = """
fact(p/1). fact(q/2).
binding(b(X, Y), tool('t__get', [x = X]), extract([Y = '/y']), [ttl(60)]).
askable(why(X, W), "Why ~w?", choice([a - "A", b - "B"]), [from([user, agent])]).
r1(X) :- p(X), q(X, _).
r2(X) :- ( q(X, n) -> true ; require(p(X), 'inner p', policy_ref(doc, 'Inner')) ).
guard('t__cited', [x = X], ( require(p(X), 'p holds', policy_ref(doc, 'P holds')),
                             require(r1(X), 'r1 holds', policy_ref(doc, 'R1 holds')),
                             why(X, W), require(\\+ q(X, W), 'not q', policy_ref(doc, 'Not Q')),
                             require(r2(X), 'r2 holds'), b(X, Y),
                             confirmed_items('Do it?', ['X' = X, 'Y' = Y, 'W' = W]) )).
guard('t__cited', [x = X], require(( r1(X), once(b(X, _)) ), 'second guard', policy_ref(doc, 'Second'))).
"""


def cited_facts(rng: random.Random, x: str, c: ToolCall, version: str) -> list[tuple[str, float | None, str]]:
    """Mostly a complete state (every rule holds), each part sometimes missing, wrong or expired."""
    out: list[tuple[str, float | None, str]] = []

    def add(text: str, prov: str = "observed", p: float = 0.9) -> None:
        if rng.random() < p:
            out.append((text, FAR if rng.random() < 0.95 else time.time() - 1, prov))

    add(fact_text("p", [x]))
    add(fact_text("q", [x, rng.choice(["n", "m", "a"])]))
    add(fact_text("why", [x, rng.choice(["a", "b"])]), rng.choice(["user", "agent", "observed"]))
    add("'$fetched'(b,2,'t__get',json([x=" + quote_atom(x) + "]))")
    add(fact_text("b", [x, rng.choice(["y1", "y2"])]))
    answer = rng.choice(["yes", "yes", "no"])
    if rng.random() < 0.9:  # the confirmation, planted after the rest (of the text its guard shows over them)
        out.append(("$confirmed", FAR if rng.random() < 0.95 else time.time() - 1, answer))
    return out


async def assert_cited(guard: PolicyGuard, c: ToolCall, facts: list[tuple[str, float | None, str]]) -> None:
    """``cited_facts`` into the call's session: the confirmation (if any) last, for the text shown then."""
    mod = await guard.knowledge.ensure(c.session_id, guard.rulebases.current)
    await guard.engine.assert_facts(mod, [f for f in facts if f[0] != "$confirmed"])
    for _, expires, answer in [f for f in facts if f[0] == "$confirmed"]:
        await plant_confirmation(guard, c, "user", answer=answer, expires=expires or FAR)


async def test_a_native_proof_is_the_reference_proof_with_citations_questions_and_fetches(
    tmp_path: Path,
) -> None:
    rb = tmp_path / "cited.pl"
    rb.write_text(CITED)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    rng = random.Random(2115)
    seen: dict[str, int] = {}
    try:
        for i in range(200):
            session, x = f"c{i}", rng.choice(["k1", "k2", "it's", "x\\y"])
            c = call("t__cited", {"x": x}, session)
            await assert_cited(guard, c, cited_facts(rng, x, c, guard.version))
            native, ref = await native_and_reference(guard, c)
            check_native(native, ref, seen)
            if native["status"] == "proved":  # the citations are in the tree compared
                assert "P holds" in str(native["tree"]) and "Second" in str(native["tree"])
    finally:
        await guard.close()
    assert seen.get("proved/proved", 0) >= 20, seen
    assert {"fallback/failed", "fallback/incomplete"} <= set(seen), seen


WILDCARD = """
fact(p/1). fact(q/1).
guard('w__*', [], ( p(a), require(\\+ q(blocked), 'nothing is blocked') )).
guard('w__use', [n = N], ( q(N), require(p(N), 'p of the item') )).
guard('w__all', [args(All)], ( is_list(All), length(All, L), L =< 2 )).
"""


async def test_wildcard_and_whole_argument_guards_are_proved_natively_as_by_the_reference(
    tmp_path: Path,
) -> None:
    """Guards that name their tools by a prefix apply with the tool's own guards, in clause order, natively
    as in the full pass; a guard over all the arguments too."""
    rb = tmp_path / "wild.pl"
    rb.write_text(WILDCARD)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    rng = random.Random(2116)
    seen: dict[str, int] = {}
    try:
        for i in range(120):
            name = rng.choice(["w__use", "w__all", "w__other"])
            args = {"n": rng.choice(["a", "b"])} if name == "w__use" else {
                k: 1 for k in rng.sample(["x", "y", "z"], rng.randint(0, 3))}
            c = call(name, args, f"w{i}")
            mod = await guard.knowledge.ensure(c.session_id, guard.rulebases.current)
            facts = [(fact_text(rng.choice(["p", "q"]), [rng.choice(["a", "b", "blocked"])]), FAR, "observed")
                     for _ in range(rng.randint(0, 5))]
            await guard.engine.assert_facts(mod, facts)
            native, ref = await native_and_reference(guard, c)
            check_native(native, ref, seen)
    finally:
        await guard.close()
    assert seen.get("proved/proved", 0) >= 10 and seen.get("fallback/failed", 0) >= 10, seen


TTL = """
fact(owner/2).
binding(status(R, S), tool('t__status', [id = R]), extract([S = '/status']), [ttl(60)]).
guard('t__use', [id = R], ( owner(R, me), require(status(R, open), 'the item must be open') )).
"""


async def test_expired_facts_and_other_sessions_facts_are_never_a_native_proof(tmp_path: Path) -> None:
    """TTLs and sessions hold on the native path: a fact past its expiry, or another session's, proves
    nothing; the full pass then says what is missing, as the reference does."""
    rb = tmp_path / "ttl.pl"
    rb.write_text(TTL)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db")
    await guard.start(watch=False)
    marker = "'$fetched'(status,2,'t__status',json([id='I1']))"
    try:
        cases = [  # (facts of session "mine", facts of session "theirs", expected status)
            ([("owner('I1',me)", FAR), ("status('I1',open)", FAR), (marker, FAR)], [], "proved"),
            ([("owner('I1',me)", time.time() - 1), ("status('I1',open)", FAR), (marker, FAR)], [], "failed"),
            ([("owner('I1',me)", FAR), ("status('I1',open)", FAR), (marker, time.time() - 1)], [],
             "incomplete"),
            ([("owner('I1',me)", FAR)], [("status('I1',open)", FAR), (marker, FAR)], "incomplete"),
            ([], [("owner('I1',me)", FAR), ("status('I1',open)", FAR), (marker, FAR)], "failed"),
        ]
        for n, (mine, theirs, expected) in enumerate(cases):
            c = call("t__use", {"id": "I1"}, f"mine{n}")
            m_mod = await guard.knowledge.ensure(f"mine{n}", guard.rulebases.current)
            t_mod = await guard.knowledge.ensure(f"theirs{n}", guard.rulebases.current)
            await guard.engine.assert_facts(m_mod, [(f, e, "observed") for f, e in mine])
            await guard.engine.assert_facts(t_mod, [(f, e, "observed") for f, e in theirs])
            native, ref = await native_and_reference(guard, c)
            assert ref["status"] == expected, (n, ref)
            assert native["status"] == ("proved" if expected == "proved" else "fallback"), (n, native)
            check_native(native, ref, {})
            d = await guard.decide(c)
            assert isinstance(d, Allow) == (expected == "proved"), (n, d)
    finally:
        await guard.close()


# ---------------------------------------------------------------- the caller's thread, the engine thread


async def decide_on_engine_thread(engine: PrologEngine, *args: Any, **kw: Any) -> Any:
    """``engine.decide`` from an event loop on a thread without a Prolog engine of its own: a job."""

    def other_thread() -> Any:
        return asyncio.run(engine.decide(*args, **kw))

    return await asyncio.to_thread(other_thread)


class InlineSpy:
    """Counts the decisions try_now (its ``try_call``, which a decision calls directly) ran on the caller's
    thread and the jobs put on the engine's."""

    def __init__(self, engine: PrologEngine, monkeypatch: pytest.MonkeyPatch) -> None:
        self.here = self.jobs = 0
        try_call, put = engine.try_call, engine._put

        def counted_try_call(fn: Any, *args: Any) -> Any:
            ran, value = try_call(fn, *args)
            self.here += ran
            return ran, value

        def counted_put(job: Any) -> None:
            self.jobs += 1
            put(job)

        monkeypatch.setattr(engine, "try_call", counted_try_call)
        monkeypatch.setattr(engine, "_put", counted_put)


async def test_the_caller_thread_and_the_engine_thread_decide_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    guard = PolicyGuard([RULEBASES_DIR / "airline.pl"], None, store_path=tmp_path / "facts.db",
                        seeds={"current_user": "amelia_davis_8890"})
    await guard.start(watch=False)
    rng = random.Random(2113)
    statuses: dict[str, int] = {}
    try:
        spy = InlineSpy(guard.engine, monkeypatch)
        for i in range(60):
            session, r, user = f"t{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            rb = guard.rulebases.current
            mod = await guard.knowledge.ensure(session, rb)
            facts = airline_facts(rng, r, user)
            confirm = rng.random() < 0.6
            await guard.engine.assert_facts(mod, facts)
            if confirm:
                await plant_confirmation(guard, c, "user")
            now, limit = time.time(), rb.info.inference_limit(guard.inference_limit)
            args = (rb.module, mod, now, c.identity, c.arguments, c.digest, rb.version, limit)
            before = spy.here
            here = await guard.engine.decide(*args)
            assert spy.here == before + 1  # decided on this thread (its own engine, the engine idle)
            there = await decide_on_engine_thread(guard.engine, *args)
            assert unnamed(here) == unnamed(there), c
            statuses[here["status"]] = statuses.get(here["status"], 0) + 1
        assert {"proved", "failed", "incomplete"} <= set(statuses), statuses
    finally:
        await guard.close()


HEAVY = f"""
fact(item/1).
count(0) :- !.
count(N) :- N > 0, N1 is N - 1, count(N1).
loop(X) :- loop(X).
guard('t__light', [n = N], ( item(N), count(10) )).
guard('t__heavy', [n = N], ( item(N), count({INLINE_INFERENCES * 2}) )).
guard('t__loop', [n = N], ( item(N), loop(N) )).
guard('t__err', [n = N], ( item(N), atom_length(_, N) )).
guard('t__late', [n = N], ( require(item(none), 'an item none'), require(item(N), 'the item'),
                            require(( pairs_keys_values(P, [a], [1]), P == [b-1] ), 'pairs') )).
guard('t__loops', [n = N], ( require(item(none), 'an item none'), require(loop(N), 'a loop'),
                             require(loop(N), 'another loop') )).
"""


async def test_over_the_cap_or_an_error_is_decided_on_the_engine_thread_with_the_whole_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass needing more than INLINE_INFERENCES is allowed as before (decided again with the rulebase's
    limit on the engine thread); a loop is denied at the limit; an error denies; each as on the reference
    path."""
    rb = tmp_path / "heavy.pl"
    rb.write_text(HEAVY)
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", inference_limit=400_000)
    await guard.start(watch=False)
    try:
        mod = await guard.knowledge.ensure("s", guard.rulebases.current)
        await guard.engine.assert_facts(mod, [("item(3)", FAR, "observed")])
        spy = InlineSpy(guard.engine, monkeypatch)
        for tool, kind, on_engine_thread in (("t__light", "allow", False), ("t__heavy", "allow", True),
                                            ("t__loop", "deny", True), ("t__err", "deny", True),
                                            ("t__late", "deny", False), ("t__loops", "deny", True)):
            c = call(tool, {"n": 3}, "s")
            jobs = spy.jobs
            d = await guard.decide(c)
            assert d.kind == kind, (tool, d)
            assert (spy.jobs > jobs) == on_engine_thread, tool
            guard.fast_path = False
            ref = await guard.decide(c)
            guard.fast_path = True
            assert unnamed({"d": d.model_dump()}) == unnamed({"d": ref.model_dump()}), tool
        loop = await guard.decide(call("t__loop", {"n": 3}, "s"))
        assert isinstance(loop, Deny) and "inference limit" in loop.reason, loop
        late = await guard.decide(call("t__late", {"n": 3}, "s"))
        assert isinstance(late, Deny) and late.unmet == ["an item none", "pairs"], late
        # a limit reached after a denial ends the pass: it is never caught as an error to skip (SWI-Prolog
        # raises it once; the next loop used to run with no limit, and the engine thread never came back)
        for fast in (True, False):
            guard.fast_path = fast
            loops = await asyncio.wait_for(guard.decide(call("t__loops", {"n": 3}, "s")), 60)
            assert isinstance(loops, Deny) and loops.unmet == ["an item none"], loops
        guard.fast_path = True
    finally:
        await guard.close()


async def test_a_job_put_earlier_runs_before_a_decision_on_the_callers_thread() -> None:
    engine = engine_module.shared_engine()
    engine.start()
    gate, started = threading.Event(), threading.Event()

    def blocking(_: Any) -> str:
        started.set()
        gate.wait(10)
        return "done"

    job = engine.submit(blocking)
    assert started.wait(10)
    assert engine.try_now(lambda _: "here") == (False, None)  # the engine is running a job
    queued = engine.submit(lambda _: "queued")
    gate.set()
    assert job.result(10) == "done" and queued.result(10) == "queued"
    # a job put (not yet started) while the engine is free for a moment: the caller's thread waits its turn
    order: list[str] = []
    with engine._use:  # as between two jobs: the engine thread has taken the job, not yet the engine
        pending = engine.submit(lambda _: order.append("job"))
    assert engine.try_now(lambda _: order.append("here")) == (False, None)
    pending.result(10)
    assert order == ["job"]
    for _ in range(100):  # the counter of waiting jobs settles once the engine is idle
        if engine.try_now(lambda _: "here") == (True, "here"):
            break
        time.sleep(0.01)
    else:
        raise AssertionError("the engine never became free for the caller's thread")
    def failing(_: Any) -> None:
        raise ValueError("a job's own error")

    with pytest.raises(ValueError, match="own error"):  # a job that raises: its caller gets the error
        engine.submit(failing).result(10)
    assert engine.submit(lambda _: "still here").result(10) == "still here"  # and the engine goes on
    other: list[Any] = []
    t = threading.Thread(target=lambda: other.append(engine.try_now(lambda _: "there")))
    t.start()
    t.join()
    assert other == [(False, None)]  # a thread without a Prolog engine of its own puts a job


async def test_big_arguments_and_hostile_text_are_decided_as_on_the_reference_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rb = tmp_path / "echo.pl"
    rb.write_text(
        "said(T) :- atom(T), atom_length(T, N), N >= 0.\n"
        "guard('t__echo', [text = T], said(T)).\n"
        "guard('t__both', [text = T, other = O], ( said(T), T \\== O )).\n"
    )
    guard = PolicyGuard([rb], None, store_path=tmp_path / "facts.db", lazy_proofs=True)
    await guard.start(watch=False)
    try:
        spy = InlineSpy(guard.engine, monkeypatch)
        for t in [*HOSTILE, "x" * (INLINE_ARGUMENT_CHARS + 1)]:
            for name, args in (("t__echo", {"text": t}), ("t__both", {"text": t, "other": t}),
                               ("t__both", {"text": t, "other": t + "."})):
                c = call(name, args, "s")
                here = spy.here
                d = await guard.decide(c)
                big = len(engine_module.json_text(args)) > INLINE_ARGUMENT_CHARS
                assert (spy.here > here) == (not big), (name, len(t))
                proof = await rendered_proof(d.proof)
                guard.fast_path, guard.lazy_proofs = False, False
                ref = await guard.decide(c)
                guard.fast_path, guard.lazy_proofs = True, True
                assert unnamed({"k": d.kind, "r": d.reason, "p": proof}) == unnamed(
                    {"k": ref.kind, "r": ref.reason, "p": ref.proof}), (name, t[:40])
    finally:
        await guard.close()


async def test_call_arguments_split_in_c_are_the_terms_the_json_reader_gives() -> None:
    """The flat form of a call's arguments (engine.call_args_text) reads back as exactly the terms of their
    JSON as a call's arguments are read (``from_call_json``): texts (hostile ones too, and those spelling a
    literal, which are strings), integers of any size and sign, booleans, nulls, empty texts and objects;
    anything else, or the form's own separators in a key or value, goes as JSON."""
    engine = engine_module.shared_engine()
    rng = random.Random(2117)
    texts = [*HOSTILE[:40], "", "\x1e", "\x1f", "a\x1fb", "s", "i5", "t", "\x1e\x1f", "k=v", "[]", "json([])",
             "true", "false", "null", "True", "S", "Strue"]
    values: list[Any] = [*texts, 0, -1, 7, 2**70, -(2**65), True, False, None, 1.5, [1, "a"], {"x": 1}]
    seen = {"flat": 0, "json": 0}
    for i in range(300):
        args = {rng.choice(texts) if rng.random() < 0.5 else f"k{j}": rng.choice(values)
                for j in range(rng.randint(0, 5))}
        flat = engine_module.call_args_text(args)
        seen["flat" if flat.startswith("\x1e") else "json"] += 1
        pc = engine_module.PrologCall("user", "sn_test_args", 3)
        await engine.goal(
            "( current_predicate(user:sn_test_args/3) -> true ; assertz((user:sn_test_args(A, B, Out) :- "
            "sentinel_core:call_args(A, PA), sentinel_core:from_call_json(B, json(PB)), "
            "( PA == PB -> Out = same ; format(atom(Out), '~q ~q', [PA, PB]) ))) )")
        same = await engine.run(lambda _: pc(flat, engine_module.json_text(args)))
        assert same == "same", (args, same)
    literal = await engine.run(lambda _: pc(engine_module.call_args_text({"a": "true", "b": True}),
                                            engine_module.json_text({"a": "true", "b": True})))
    assert literal == "same"
    assert engine_module.call_args_text({"a": "true"}) != engine_module.call_args_text({"a": True})
    assert seen["flat"] >= 50 and seen["json"] >= 50, seen


async def test_a_proof_kept_on_the_callers_thread_is_rendered_by_the_engine_thread(tmp_path: Path) -> None:
    """Kept proofs live where every engine reads them: a proof kept by a decision on this thread is written
    the same by the engine thread, exactly as the proof a decision writes at once."""
    guard = PolicyGuard([RULEBASES_DIR / "airline.pl"], None, store_path=tmp_path / "facts.db",
                        seeds={"current_user": "amelia_davis_8890"})
    await guard.start(watch=False)
    rng = random.Random(2114)
    rendered = 0
    try:
        for i in range(80):
            session, r, user = f"k{i}", f"R{i:04d}", "amelia_davis_8890"
            c = airline_call(rng, r, user, session)
            rb = guard.rulebases.current
            mod = await guard.knowledge.ensure(session, rb)
            facts = airline_facts(rng, r, user)
            await guard.engine.assert_facts(mod, facts)
            await plant_confirmation(guard, c, "user")
            now, limit = time.time(), rb.info.inference_limit(guard.inference_limit)
            args = (rb.module, mod, now, c.identity, c.arguments, c.digest, rb.version, limit)
            kept = await guard.engine.decide_compact(*args)
            written = await guard.engine.decide(*args)
            assert kept["status"] == written["status"]
            if isinstance(kept["tree"], KeptProof):
                assert kept["tree"].small  # decided on this thread, under the cap
                tree = await guard.engine.run(
                    lambda _, k=kept["tree"].id: engine_module.from_prolog_json(
                        engine_module._SN_RENDER_KEPT(k))["tree"])
                assert unnamed({"t": tree}) == unnamed({"t": written["tree"]})
                rendered += 1
    finally:
        await guard.close()
    assert rendered >= 10
