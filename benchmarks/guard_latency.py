"""Policy guard latency: decision time with all facts present, and solver fetches concurrent vs sequential.

Rows: a one-line guard; a strict-symbolic-mode guard with 10k facts in the session (its arguments are looked
up among the session's facts on every call); the airline cancel guard (rulebases/airline.pl, the real airline
example server) with 10k and 100k other facts in the session's store, each on the reference path (every rule
interpreted by prove/2, the goal sent as query text: ``fast_path=False``), on the fast path (compiled rules,
direct C call) and on the fast path with a lazy proof (the gateway's guard: an allow's proof kept in the
engine and rendered when read; with and without rendering it), measured at PolicyGuard.decide (from the event
loop's thread, which has a SWI-Prolog engine of its own, and from a thread without one: a job on the engine
thread) and inside the engine (Prolog only, its own CPU clock); the solver fetching N facts from a real slow
read-only MCP tool with concurrent fetches vs one fetch at a time.
Prints one table, each row with its goal (issue 21: airline cancel guard at 100k facts p50 <= 0.1 ms,
p99 <= 1 ms).
Usage: python benchmarks/guard_latency.py [--decisions N] [--needs N] [--delay S]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import inspect
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import Tool, ToolAnnotations

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from examples.airline.server import create_server as airline_server  # noqa: E402
from sentinel_mcp.config import PolicySettings  # noqa: E402
from sentinel_mcp.core.decision import Allow, Answer, Ask, ToolCall  # noqa: E402
from sentinel_mcp.core.lazy_proof import rendered_proof  # noqa: E402
from sentinel_mcp.core.port import Completed, InvokeOutcome, Refused  # noqa: E402
from sentinel_mcp.paths import RULEBASES_DIR  # noqa: E402
from sentinel_mcp.policy.fact_store import Fact  # noqa: E402
from sentinel_mcp.policy.guard import PolicyGuard  # noqa: E402


class DirectPort:
    """A GatewayPort over one real MCP client (the solver's fetches go straight to the upstream)."""

    def __init__(self, client: Client, prefix: str) -> None:
        self.client, self.prefix, self.tools = client, prefix, {}

    async def refresh(self) -> None:
        self.tools = {f"{self.prefix}__{t.name}": t for t in (await self.client.list_tools()).tools}

    def find_tool(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def list_catalog_tools(self) -> list[Tool]:
        return list(self.tools.values())

    async def invoke(self, name: str, arguments: dict[str, Any] | None, **_: Any) -> InvokeOutcome:
        if name not in self.tools:
            return Refused(reason=f"unknown tool {name}")
        return Completed(result=await self.client.call_tool(name.split("__", 1)[1], arguments or {}))


def call(name: str, args: dict[str, Any], session: str) -> ToolCall:
    server, _, tool = name.partition("__")
    return ToolCall(name=name, server=server, tool=tool, arguments=args, session_id=session)


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q * (len(values) - 1))))]


def looking(guard: PolicyGuard) -> PolicyGuard:
    """The guard deciding without using up the confirmation its proof stands on: a benchmark decides one
    confirmed call again and again (the logic the goal times), where a real call uses its confirmation once.
    A tree from before ``spend`` decides as it is."""
    if "spend" in inspect.signature(guard.decide).parameters:
        guard.decide = functools.partial(guard.decide, spend=False)  # type: ignore[method-assign]
    return guard


async def timed_decisions(guard: PolicyGuard, c: ToolCall, n: int, render: bool = False) -> list[float]:
    """Milliseconds per decision (``render``: and its proof rendered, as the gateway does for the audit)."""
    for _ in range(10):
        assert isinstance(await guard.decide(c), Allow)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        d = await guard.decide(c)
        if render:
            await rendered_proof(d.proof)
        out.append((time.perf_counter() - t) * 1000)
        assert isinstance(d, Allow), d
    return out


async def from_other_thread(guard: PolicyGuard, c: ToolCall, n: int) -> list[float]:
    """``timed_decisions`` from an event loop on a thread without a SWI-Prolog engine of its own: each pass
    is a job on the engine thread (the hop a decision on the caller's thread saves)."""
    import threading

    out: list[float] = []

    def thread() -> None:
        out.extend(asyncio.run(timed_decisions(guard, c, n)))

    t = threading.Thread(target=thread)
    t.start()
    await asyncio.to_thread(t.join)
    return out


async def one_line(tmp: Path, n: int) -> list[float]:
    rb = tmp / "one_line.pl"
    rb.write_text("guard('bench__ping', [n = N], N =< 10).\n")
    guard = PolicyGuard([rb], None, store_path=tmp / "one.db")
    await guard.start(watch=False)
    try:
        return await timed_decisions(guard, call("bench__ping", {"n": 3}, "s"), n)
    finally:
        await guard.close()


async def strict_symbolic(tmp: Path, n: int, size: int) -> list[float]:
    rb = tmp / "strict.pl"
    rb.write_text("option(strict_symbolic).\nfact(item/2).\n"
                  "guard('bench__use', [id = X, owner = O], item(X, O)).\n")
    guard = PolicyGuard([rb], None, store_path=tmp / "strict.db")
    await guard.start(watch=False)
    try:
        exp = time.time() + 3600
        await guard.knowledge.ensure("strict", guard.rulebases.current)
        await guard.knowledge.add(
            [
                Fact(
                    session="strict",
                    predicate="item",
                    args=[f"I{i:06d}", f"owner{i % 100}"],
                    fact=f"item('I{i:06d}',owner{i % 100})",
                    provenance="observed",
                    expires_at=exp,
                )
                for i in range(size)
            ]
        )
        return await timed_decisions(
            guard, call("bench__use", {"id": f"I{size // 2:06d}", "owner": "owner0"}, "strict"), n
        )
    finally:
        await guard.close()


def filler(session: str, start: int, count: int) -> list[Fact]:
    """Facts of the same predicates the cancel guard reads, about other reservations and flights."""
    out = []
    for i in range(start, start + count):
        r, f = f"Z{i:06d}", f"HZ{i % 997:03d}"
        if i % 2:
            out.append(
                Fact(
                    session=session,
                    predicate="reservation_leg",
                    args=[r, f, "2024-05-20", "JFK", "LAX"],
                    fact=f"reservation_leg('{r}','{f}','2024-05-20','JFK','LAX')",
                    provenance="observed",
                    expires_at=time.time() + 3600,
                )
            )
        else:
            out.append(
                Fact(
                    session=session,
                    predicate="flight_status",
                    args=[f, f"d{i}", "available"],
                    fact=f"flight_status('{f}',d{i},available)",
                    provenance="observed",
                    expires_at=time.time() + 3600,
                )
            )
    return out


@contextlib.asynccontextmanager
async def allowed_airline_guard(tmp: Path, facts: int) -> AsyncIterator[tuple[PolicyGuard, ToolCall]]:
    """The airline cancel guard with the call allowed (its reservation and flights fetched, its reason and
    confirmation answered) and ``facts`` other facts in the session; its paths as the guard starts."""
    async with Client(airline_server(), mode="auto") as client:
        port = DirectPort(client, "airline")
        await port.refresh()
        guard = PolicyGuard([RULEBASES_DIR / "airline.pl"], port, store_path=tmp / "airline-allowed.db",
                            settings=PolicySettings(guard_timeout=30),
                            seeds={"current_user": "amelia_davis_8890"})
        await guard.start(watch=False)
        looking(guard)
        try:
            c = call("airline__cancel_reservation", {"reservation_id": "8C8K4E"}, "bench")
            d = await guard.decide(c)
            while isinstance(d, Ask):
                for q in d.questions:
                    value = True if q.meta["kind"] == "confirm" else "change_of_plan"
                    await guard.record_answer(c, q, Answer(action="accept", content={"answer": value}))
                d = await guard.decide(c)
            assert isinstance(d, Allow), d
            if facts:
                await guard.knowledge.add(filler("bench", 0, facts))
            yield guard, c
        finally:
            await guard.close()


async def in_engine(guard: PolicyGuard, c: ToolCall, n: int, fast: bool, lazy: bool = False) -> list[float]:
    """Milliseconds per sn_decide inside the engine thread (its CPU clock): the logic without the plumbing
    (``lazy``: the proof kept, not written; the kept proofs dropped after each run)."""
    from sentinel_mcp.policy import engine
    from sentinel_mcp.policy.prolog_text import json_atom, quote_atom

    rb = guard.rulebases.current
    mod = await guard.knowledge.ensure(c.session_id, rb)
    pred = "sn_decide_compact" if lazy else "sn_decide" if fast else "sn_decide_interpreted"
    # the arguments as the fast path passes them (a tree without call_args_text passes JSON)
    args = quote_atom(engine.call_args_text(c.arguments)) if fast and hasattr(engine, "call_args_text") else (
        json_atom(c.arguments)
    )
    goal = (
        f"sentinel_core:{pred}({quote_atom(rb.module)}, {quote_atom(mod)}, {time.time()!r}, "
        f"{quote_atom(c.identity)}, {args}, {quote_atom(c.digest)}, "
        f"{quote_atom(rb.version)}, "
        f"{rb.info.inference_limit(guard.inference_limit)}, _)"
    )
    q = (
        f"findall(T, (between(1, {n}, _), statistics(cputime, T0), {goal}, statistics(cputime, T1), "
        f"T is (T1 - T0) * 1000), Out)"
    )
    rows = await guard.engine.run(lambda p: list(p.query(q, maxresult=1)))
    await guard.engine.goal("sentinel_core:sn_drop_kept_proofs")
    return [float(x) for x in rows[0]["Out"]]


STAGE_NAMES = {
    "state": "query state and arguments",
    "prove": "native proof (guards' goals under the limit)",
    "keep": "proof kept (recorded)",
    "tree": "proof tree to JSON terms (when written)",
    "needs": "needs and unmet conditions",
    "json": "JSON text of a written proof",
}
STAGES = """
    RB = {rb}, S = {s}, Now = {now}, Tool = {tool}, ArgsJson = {args}, Digest = {digest}, Version = {version},
    Limit = {limit},
    State = ( sentinel_core:begin_query(RB, S, Now, c(Tool, Digest, Version)), sentinel_core:call_args(ArgsJson, CA) ),
    call(State), sentinel_core:native_guards_of(RB, Tool, Is),
    Prove = ( sentinel_core:native_guards_of(RB, Tool, Is0),
              call_with_inference_limit(sentinel_core:prove_native(Is0, RB, CA, Trees0), Limit, _) ),
    copy_term(Prove-Trees0, Once-Trees), call(Once), sentinel_core:tree_json(and_all(Trees), TJ),
    sentinel_core:add_needs(json([status=proved, tree=TJ]), J),
    Timed = [state-State, prove-Prove, keep-(sentinel_core:keep_proof(and_all(Trees), _)),
             tree-(sentinel_core:tree_json(and_all(Trees), _)),
             needs-(sentinel_core:add_needs(json([status=proved, tree=TJ]), _)), json-(sentinel_core:to_json_atom(J, _))],
    findall(Name-Ms, ( member(Name-G, Timed), between(1, {n}, _),
                       statistics(cputime, T0), \\+ \\+ call(G), statistics(cputime, T1), Ms is (T1 - T0) * 1000 ),
            Pairs),
    findall(json([stage=N, ms=M]), member(N-M, Pairs), L), sentinel_core:json_text(json([times=L]), Out)
"""  # noqa: E501 (verbatim text)


async def engine_stages(guard: PolicyGuard, c: ToolCall, n: int) -> dict[str, list[float]]:
    """Milliseconds per stage of a fast-path sn_decide inside the engine (its CPU clock): the query state and
    the call's arguments, the native proof under the inference limit, keeping the proof, the proof tree as
    JSON terms and its JSON text (when the proof is written at once), the needs and unmet conditions."""
    from sentinel_mcp.policy.engine import call_args_text
    from sentinel_mcp.policy.prolog_text import quote_atom

    rb = guard.rulebases.current
    mod = await guard.knowledge.ensure(c.session_id, rb)
    goal = STAGES.format(
        rb=quote_atom(rb.module),
        s=quote_atom(mod),
        now=repr(time.time()),
        tool=quote_atom(c.identity),
        args=quote_atom(call_args_text(c.arguments)),
        digest=quote_atom(c.digest),
        version=quote_atom(rb.version),
        limit=rb.info.inference_limit(guard.inference_limit),
        n=n,
    )
    out: dict[str, list[float]] = {}
    for row in (await guard.engine.json_query(goal.replace("\n", " ")))["times"]:
        out.setdefault(row["stage"], []).append(float(row["ms"]))
    await guard.engine.goal("sentinel_core:sn_drop_kept_proofs")
    return out


async def airline_cancel(tmp: Path, n: int, sizes: list[int]) -> dict[tuple[int, str], list[float]]:
    results: dict[tuple[int, str], list[float]] = {}
    async with allowed_airline_guard(tmp, 0) as (guard, c):
        have = 0
        for size in sizes:
            await guard.knowledge.add(filler("bench", have, size - have))
            have = size
            for fast in (False, True):  # the reference path, then the fast path, on the same facts
                guard.fast_path = fast
                label = "fast" if fast else "reference"
                results[(size, f"{label}, guard.decide")] = await timed_decisions(guard, c, n)
                results[(size, f"{label}, in engine")] = await in_engine(guard, c, n, fast)
            guard.fast_path = guard.lazy_proofs = True  # proofs rendered when read
            results[(size, "fast, lazy proof, guard.decide")] = await timed_decisions(guard, c, n)
            results[(size, "fast, lazy proof, guard.decide from a thread without an engine")] = (
                await from_other_thread(guard, c, n)
            )
            results[(size, "fast, lazy proof, guard.decide + rendering it")] = await timed_decisions(
                guard, c, n, render=True
            )
            results[(size, "fast, lazy proof, in engine")] = await in_engine(guard, c, n, True, lazy=True)
            guard.lazy_proofs = False
            for stage, t in (await engine_stages(guard, c, n)).items():
                results[(size, f"fast, in engine: {STAGE_NAMES[stage]}")] = t
    return results


def slow_server(delay: float) -> MCPServer:
    mcp = MCPServer("slow")

    @mcp.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def lookup(key: str) -> dict[str, Any]:
        """A slow read: sleeps, then answers."""
        await asyncio.sleep(delay)
        return {"key": key, "value": "ok"}

    return mcp


async def solver_fetches(tmp: Path, needs: int, delay: float, rounds: int = 3) -> dict[str, list[float]]:
    rb = tmp / "slow.pl"
    rb.write_text(
        "binding(slow_value(K, V), tool('slow__lookup', [key = K]), extract([V = '/value']), [ttl(600)]).\n"
        "guard('slow__use', [keys = L], forall(member(K, L), slow_value(K, ok))).\n"
    )
    out: dict[str, list[float]] = {}
    async with Client(slow_server(delay), mode="auto") as client:
        port = DirectPort(client, "slow")
        await port.refresh()
        for label, conc in (("concurrent", 16), ("sequential", 1)):
            guard = PolicyGuard(
                [rb], port, store_path=tmp / f"slow-{label}.db", settings=PolicySettings(guard_timeout=120)
            )
            guard.solver.max_concurrent_fetches = conc
            await guard.start(watch=False)
            try:
                times = []
                for r in range(rounds):
                    c = call("slow__use", {"keys": [f"k{i}" for i in range(needs)]}, f"{label}-{r}")
                    t = time.perf_counter()
                    d = await guard.decide(c)
                    times.append((time.perf_counter() - t) * 1000)
                    assert isinstance(d, Allow), d
                out[label] = times
            finally:
                await guard.close()
    return out


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--decisions", type=int, default=300)
    ap.add_argument("--needs", type=int, default=8)
    ap.add_argument("--delay", type=float, default=0.2)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows: list[tuple[str, str, str, str, str]] = []
        t = await one_line(tmp, args.decisions)
        rows.append(
            (
                "one-line guard, all facts present",
                f"{pct(t, 0.5):.3f}",
                f"{pct(t, 0.99):.3f}",
                str(len(t)),
                "",
            )
        )
        t = await strict_symbolic(tmp, args.decisions, 10_000)
        rows.append(
            (
                "strict symbolic guard, 10k facts in session",
                f"{pct(t, 0.5):.3f}",
                f"{pct(t, 0.99):.3f}",
                str(len(t)),
                "",
            )
        )
        airline = await airline_cancel(tmp, args.decisions, [10_000, 100_000])
        for (size, label), t in airline.items():
            goal = (
                "p50 <= 0.100, p99 <= 1.000"
                if size == 100_000
                and label
                in (
                    "fast, guard.decide",
                    "fast, in engine",
                    "fast, lazy proof, guard.decide",
                    "fast, lazy proof, in engine",
                )
                else ""
            )
            rows.append(
                (
                    f"airline cancel guard, {size // 1000}k facts, {label}",
                    f"{pct(t, 0.5):.3f}",
                    f"{pct(t, 0.99):.3f}",
                    str(len(t)),
                    goal,
                )
            )
        fetch = await solver_fetches(tmp, args.needs, args.delay)
        for label, t in fetch.items():
            rows.append(
                (
                    f"solver, {args.needs} needs x {args.delay:.1f}s tool, {label}",
                    f"{statistics.median(t):.1f}",
                    f"{max(t):.1f}",
                    str(len(t)),
                    "",
                )
            )
    w = max(len(r[0]) for r in rows)
    print(f"{'case':{w}}  {'p50 ms':>9}  {'p99 ms':>9}  {'runs':>5}  goal (ms)")
    for name, p50, p99, n, goal in rows:
        print(f"{name:{w}}  {p50:>9}  {p99:>9}  {n:>5}  {goal}")
    for size in (10_000, 100_000):
        ref, fast = airline[(size, "reference, guard.decide")], airline[(size, "fast, guard.decide")]
        eref, efast = airline[(size, "reference, in engine")], airline[(size, "fast, in engine")]
        lazy = airline[(size, "fast, lazy proof, guard.decide")]
        print(
            f"{size // 1000}k facts: the lazy proof is {pct(fast, 0.5) / pct(lazy, 0.5):.1f}x faster at "
            f"guard.decide than the fast path writing its proof (p50)"
        )
        print(
            f"{size // 1000}k facts: the fast path is {pct(ref, 0.5) / pct(fast, 0.5):.1f}x faster at "
            "guard.decide "
            f"(p50), {pct(eref, 0.5) / pct(efast, 0.5):.1f}x inside the engine"
        )
    speedup = statistics.median(fetch["sequential"]) / statistics.median(fetch["concurrent"])
    print(
        f"concurrent fetching is {speedup:.1f}x faster than one fetch after another "
        "(solver rows: median and max of the runs)"
    )


if __name__ == "__main__":
    asyncio.run(main())
