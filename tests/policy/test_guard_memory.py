"""A guard's memory is bounded where it runs.

A decision tried on the caller's thread (the event loop's, ``EngineThread.try_now``) runs under a small
stack limit of that thread's own (``CALLER_STACK_BYTES``): a guard that builds a big term in a few inferences
runs out there and is decided again on the engine thread, the loop free meanwhile. A decision that runs out of
the engine thread's memory denies, saying so, and the next decision is decided as usual. Real SWI-Prolog
throughout; what ran where is seen from the answers of the caller's thread, the jobs put and the order of the
loop's other work, never by timing.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import pytest_asyncio

from sentinel_mcp.core.decision import Allow, Deny
from sentinel_mcp.core.lazy_proof import rendered_proof
from sentinel_mcp.policy.deep_json import CUT
from sentinel_mcp.policy.engine_thread import CALLER_STACK_BYTES, ENGINE_STACK_BYTES, thread_stack_limit
from sentinel_mcp.policy.guard import PolicyGuard
from tests.policy.test_compiled_rules import FAR, call, unnamed
from tests.policy.test_native_and_inline import InlineSpy

pytestmark = [pytest.mark.timeout(240), pytest.mark.asyncio(loop_scope="module")]

# a list of a million fresh variables is 24 MB on the global stack (length/2 makes no longer one in a
# rulebase: bounded_terms.pl): over the caller's limit, far under the engine's; one of KEPT fits the caller's
LIST_BYTES = 24 * 1_000_000
KEPT = CALLER_STACK_BYTES // 8 // 24
WRITTEN = CALLER_STACK_BYTES // 2 // 24  # fits too, but not with its proof's terms as JSON
ENGINE_TEST_LIMIT = 3 * CALLER_STACK_BYTES  # the engine thread's limit while the last test runs
HUGE_COPIES = ENGINE_TEST_LIMIT // LIST_BYTES + 2
PAST_COPIES = ENGINE_STACK_BYTES // LIST_BYTES + 2  # past the engine thread's own bound, under SWI's 1 GB
VAST = 400_000  # a list of VAST fresh variables is 1.2M cells: more than one kept proof may hold

MEMORY = f"""
fact(item/1).
held(_).
copies(0, _, []) :- !.
copies(K, L, [C|Cs]) :- K1 is K - 1, copy_term(L, C), copies(K1, L, Cs).
guard('t__light', [n = N], item(N)).
% (\\+ \\+: nothing big in the proof)
guard('t__big', [n = N], ( item(N), \\+ \\+ ( length(L, 1000000), copies(1, L, Cs), Cs \\== [] ) )).
guard('t__kept', [n = N], ( item(N), length(L, {KEPT}), held(L) )).
guard('t__written', [n = N], ( item(N), length(L, {WRITTEN}), held(L) )).
guard('t__huge', [n = N], ( item(N), \\+ \\+ ( length(L, 1000000), copies({HUGE_COPIES}, L, Cs),
                                                 Cs \\== [] ) )).
guard('t__past', [n = N], ( item(N), \\+ \\+ ( length(L, 1000000), copies({PAST_COPIES}, L, Cs),
                                                 Cs \\== [] ) )).
guard('t__vast', [n = N], ( item(N), length(L, {VAST}), held(L) )).
deep(0, T, T) :- !.
deep(K, T0, T) :- K1 is K - 1, deep(K1, f(T0), T).
guard('t__deep', [n = N], ( item(N), deep(300000, a, T), held(T) )).
walk([]).
walk([_|T]) :- walk(T).
guard('t__levels', [n = N, k = K], ( item(N), integer(K), K >= 0, K =< 5000, length(L, K), walk(L) )).
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def memory_guard(tmp_path_factory: pytest.TempPathFactory) -> Any:
    tmp = tmp_path_factory.mktemp("memory")
    rb = tmp / "memory.pl"
    rb.write_text(MEMORY)
    guard = PolicyGuard([rb], None, store_path=tmp / "facts.db", lazy_proofs=True)  # as the gateway
    await guard.start(watch=False)
    mod = await guard.knowledge.ensure("s", guard.rulebases.current)
    await guard.engine.assert_facts(mod, [("item(3)", FAR, "observed")])
    try:
        yield guard
    finally:
        await guard.close()


def answers_here(guard: PolicyGuard, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The answers of the passes run on the caller's thread from now on."""
    answers: list[Any] = []
    try_call = guard.engine.try_call

    def recorded(fn: Any, *args: Any) -> Any:
        ran, value = try_call(fn, *args)
        if ran:
            answers.append(value)
        return ran, value

    monkeypatch.setattr(guard.engine, "try_call", recorded)
    return answers


async def decided_before_ping(guard: PolicyGuard, tool: str) -> tuple[Any, list[str]]:
    """The decision of ``tool``, and the order in which it and a ping put on the loop right after it ended:
    a decision held on the loop's thread ends before the ping runs; one moved to the engine thread lets it
    run."""
    order: list[str] = []

    async def decide() -> Any:
        d = await guard.decide(call(tool, {"n": 3}, "s"))
        order.append("decided")
        return d

    async def ping() -> None:
        order.append("ping")

    task = asyncio.ensure_future(decide())
    pinged = asyncio.ensure_future(ping())
    d = await task
    await pinged
    return d, order


async def test_a_guard_building_a_big_term_is_decided_on_the_engine_thread_the_loop_free(
    memory_guard: PolicyGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    guard, tool = memory_guard, "t__big"
    spy = InlineSpy(guard.engine, monkeypatch)
    answers = answers_here(guard, monkeypatch)
    d, order = await decided_before_ping(guard, tool)
    assert isinstance(d, Allow), d  # as the reference path decides it
    # the loop's thread ran out of its memory at once (not at the pass's time budget, nor done there)
    assert len(answers) == 1 and "needed more memory than its budget" in str(answers[0]), answers
    assert spy.jobs >= 1 and order == ["ping", "decided"], (spy.jobs, order)
    guard.fast_path = False
    try:
        ref = await guard.decide(call(tool, {"n": 3}, "s"))
    finally:
        guard.fast_path = True
    assert isinstance(ref, Allow) and d.reason == ref.reason, ref
    tree, ref_tree = (await rendered_proof(d.proof))["tree"], (await rendered_proof(ref.proof))["tree"]
    assert unnamed(tree) == unnamed(ref_tree)
    # a small decision still runs on the caller's thread, at once
    here, jobs = spy.here, spy.jobs
    light, order = await decided_before_ping(guard, "t__light")
    assert isinstance(light, Allow) and (spy.here, spy.jobs) == (here + 1, jobs), light
    assert order == ["decided", "ping"]


async def test_a_proof_too_big_for_the_callers_thread_is_written_on_the_engine_thread(
    memory_guard: PolicyGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pass on the caller's thread may fit while its proof (its terms, the texts shown of them) does not.
    Kept (the gateway's lazy proofs): written there, it runs out, and the engine thread writes it (it used to
    be forgotten before it was written: nobody could then). Written at once: the out-of-memory error used to
    escape the proof's writer as an internal error; the call is decided again on the engine thread."""
    guard = memory_guard
    spy = InlineSpy(guard.engine, monkeypatch)
    guard.fast_path = False
    try:
        reference = await rendered_proof((await guard.decide(call("t__kept", {"n": 3}, "s"))).proof)
    finally:
        guard.fast_path = True
    here, jobs = spy.here, spy.jobs
    d = await guard.decide(call("t__kept", {"n": 3}, "s"))
    assert isinstance(d, Allow) and (spy.here, spy.jobs) == (here + 1, jobs), d  # proved here, proof kept
    # this thread now holds less than the proof (the flag is this thread's own; set while it holds the engine)
    ran, old = guard.engine.try_now(lambda _: thread_stack_limit(CALLER_STACK_BYTES // 16))
    assert ran
    try:
        kept = await rendered_proof(d.proof)
    finally:
        assert guard.engine.try_now(lambda _: thread_stack_limit(old or CALLER_STACK_BYTES))[0]
    assert unnamed(kept["tree"]) == unnamed(reference["tree"])
    # a pass that fits the caller's stacks, its proof's text does not
    guard.lazy_proofs = False
    try:
        answers = answers_here(guard, monkeypatch)
        written = await guard.decide(call("t__written", {"n": 3}, "s"))
        assert isinstance(written, Allow) and spy.jobs > jobs, written
        assert len(answers) == 1 and "needed more memory than its budget" in str(answers[0]), answers
    finally:
        guard.lazy_proofs = True


async def test_a_decision_out_of_the_engine_threads_memory_denies_and_the_next_is_decided(
    memory_guard: PolicyGuard,
) -> None:
    guard = memory_guard
    old = await guard.engine.run(lambda _: thread_stack_limit(ENGINE_TEST_LIMIT))
    try:
        for fast in (True, False):
            guard.fast_path = fast
            d = await guard.decide(call("t__huge", {"n": 3}, "s"))
            assert isinstance(d, Deny) and "needed more memory than its budget" in d.reason, (fast, d)
            light = await guard.decide(call("t__light", {"n": 3}, "s"))
            assert isinstance(light, Allow), (fast, light)
    finally:
        guard.fast_path = True
        await guard.engine.run(lambda _: thread_stack_limit(old))


async def test_the_engine_threads_own_stacks_are_bounded_and_a_guard_past_them_denies(
    memory_guard: PolicyGuard,
) -> None:
    """No limit set by the test: the engine thread's stacks are ENGINE_STACK_BYTES from its start
    (SWI-Prolog's default is 1 GB), a guard that builds more is denied for memory on both paths, and the
    next is decided."""
    guard = memory_guard
    old = await guard.engine.run(lambda _: thread_stack_limit(ENGINE_STACK_BYTES))
    assert old == ENGINE_STACK_BYTES < 1024 * 1024 * 1024
    # the memory bound is what this test is about, not the wall clock of a loaded machine: a long budget
    await guard.engine.goal("sentinel_core:sn_set_guard_seconds(600.000)")
    try:
        for fast in (True, False):
            guard.fast_path = fast
            d = await guard.decide(call("t__past", {"n": 3}, "s"))
            assert isinstance(d, Deny) and "needed more memory than its budget" in d.reason, (fast, d)
            light = await guard.decide(call("t__light", {"n": 3}, "s"))
            assert isinstance(light, Allow), (fast, light)
    finally:
        guard.fast_path = True


async def kept_cells(guard: PolicyGuard) -> int:
    return int(await guard.engine.run(lambda p: list(p.query("sentinel_core:sn_kept_cells(C)"))[0]["C"]))


async def test_a_proof_too_big_to_keep_is_written_at_once_its_big_term_shown_by_a_marker(
    memory_guard: PolicyGuard,
) -> None:
    """A kept proof lives outside every stack limit (SWI-Prolog's recorded database): one holding a list of
    VAST elements is not kept (the kept proofs' cells do not grow by it), and its proof shows the list by the
    marker, not whole."""
    guard = memory_guard
    before = await kept_cells(guard)
    d = await guard.decide(call("t__vast", {"n": 3}, "s"))
    assert isinstance(d, Allow), d
    after = await kept_cells(guard)
    assert after - before < VAST, (before, after)
    text = str((await rendered_proof(d.proof))["tree"])
    assert "<a term too large to show>" in text and len(text) < VAST, text[:300]
    small = await guard.decide(call("t__kept", {"n": 3}, "s"))  # one that fits is kept as before
    assert isinstance(small, Allow) and await kept_cells(guard) > after
    assert "<a term too large to show>" not in str((await rendered_proof(small.proof))["tree"])


async def test_a_term_nested_deep_in_a_proof_is_written_and_the_process_lives(
    memory_guard: PolicyGuard,
) -> None:
    """f(f(...)) 300,000 levels deep, made by a rule, in an allow's proof: writing it recurses in C. The
    engine thread's C stack was exactly the size SWI-Prolog checks from a point below its top, and the
    process died (SIGSEGV) writing the kept proof; now the engine thread has room past what SWI-Prolog
    checks: the writer errs or writes it, and the next decision is decided."""
    guard = memory_guard
    for fast in (True, False):
        guard.fast_path = fast
        try:
            d = await guard.decide(call("t__deep", {"n": 3}, "s"))
            assert isinstance(d, Allow), (fast, d)
            try:
                text = str((await rendered_proof(d.proof))["tree"])
                assert "f(f(f(" in text and len(text) < 4_000_000
            except Exception as e:  # noqa: BLE001 - a writer's error is an answer; a dead process is not
                assert "stack" in str(e).lower(), e
            light = await guard.decide(call("t__light", {"n": 3}, "s"))
            assert isinstance(light, Allow), (fast, light)
        finally:
            guard.fast_path = True


@pytest.mark.parametrize("levels", [300, 1_000, 3_000])
async def test_a_proof_tree_many_rule_levels_deep_is_allowed_and_recorded_cut(
    memory_guard: PolicyGuard, levels: int
) -> None:
    """A recursive rule walking a list of 1,000 elements proves a tree 1,000 rule levels deep: past the C
    reader's 256 levels it is written as text, and Python's JSON reader raised RecursionError on it, so an
    allowed call was denied as an internal error, on both paths. The tree is now read with its deep part
    marked (``policy/deep_json.py``)."""
    guard = memory_guard
    for fast in (True, False):
        guard.fast_path = fast
        try:
            d = await guard.decide(call("t__levels", {"n": 3, "k": levels}, "s"))
            assert isinstance(d, Allow), (fast, levels, d)
            tree = (await rendered_proof(d.proof))["tree"]
            shown = str(tree)
            assert "walk(" in shown[:100_000], shown[:300]
            # past what Python's JSON reader takes, its deep part is marked (never a tree silently short)
            assert (CUT.strip('"') in shown) == (levels > 300), (levels, shown[-300:])
            light = await guard.decide(call("t__light", {"n": 3}, "s"))
            assert isinstance(light, Allow), (fast, light)
        finally:
            guard.fast_path = True
