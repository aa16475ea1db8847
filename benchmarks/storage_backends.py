"""Storage backends and replicas, side by side in one run: SQLite (embedded) vs PostgreSQL (shared by
replicas).

Rows, each with its goal:

* driver: psycopg 3 (what the seam uses, a thread-owned connection) vs asyncpg, per round trip and per commit;
* seam: durable writes per second with 32 concurrent writers (group commit), SQLite file vs PostgreSQL;
* per decision on PostgreSQL: the read-through check of a session's facts, a nonce issued and used;
* gateway: guarded calls per second (16 HTTP clients, the default rulebase, a no-op upstream) with one replica
  on SQLite, one on PostgreSQL, and two on PostgreSQL behind haproxy; per-core efficiency (this machine has
  2 cores shared by everything: replicas, PostgreSQL, haproxy, the clients);
* per call: CPU of the replicas (and of the server's backends) per call, so per-core efficiency can be
  compared across 1 and 2 replicas on a machine the clients share; PostgreSQL round trips per call
  (pg_stat_statements);
* shared meaning (``--only meaning`` runs just these): the default guard's confirmation in the shared store
  against the one replica's dict, a label's conversation row and a replica's copy of it, the look for cancels
  asked through other replicas, each with its CPU;
* capacity: PostgreSQL commits per call (from its own counters) and how many replicas one server could take at
  the measured commit rate.

Run: ``python benchmarks/storage_backends.py [--calls 25] [--clients 16]`` (starts its own throwaway
PostgreSQL).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from examples.cluster.recipe import Cluster, wait_ok  # noqa: E402
from sentinel_mcp.paths import RULEBASES_DIR  # noqa: E402
from sentinel_mcp.storage import Schema, open_database  # noqa: E402
from sentinel_mcp.storage.local_server import LocalServer, free_port  # noqa: E402
from sentinel_mcp.storage.open import release  # noqa: E402
from sentinel_mcp.storage.sqlite import SHARED  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks" / "harness"))
from pg_counters import commits, postmaster, statements, top_statements, tree_cpu  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
TOKEN = "benchmark-owner-token-0123456789"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
rows: list[tuple[str, str, str, str]] = []


def row(name: str, value: str, goal: str, note: str = "") -> None:
    rows.append((name, value, goal, note))
    print(f"  {name}: {value}", file=sys.stderr, flush=True)


def new_db(url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name


async def drivers(url: str, n: int = 2000, commits: int = 300) -> None:
    import asyncpg
    import psycopg

    conn = psycopg.connect(url, autocommit=True)
    conn.execute("CREATE TABLE IF NOT EXISTS d (k BIGINT)")

    def sync_selects() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            conn.execute("SELECT 1").fetchall()
        return (time.perf_counter() - t0) / n * 1e6

    def sync_commits() -> float:
        conn.autocommit = False
        t0 = time.perf_counter()
        for i in range(commits):
            conn.execute("INSERT INTO d VALUES (%s)", (i,))
            conn.commit()
        conn.autocommit = True
        return (time.perf_counter() - t0) / commits * 1e6

    async def hop_selects() -> float:  # the seam's shape: each statement handed to a thread from the loop
        t0 = time.perf_counter()
        for _ in range(n // 4):
            await asyncio.to_thread(lambda: conn.execute("SELECT 1").fetchall())
        return (time.perf_counter() - t0) / (n // 4) * 1e6

    ps, pc, ph = sync_selects(), sync_commits(), await hop_selects()
    conn.close()
    a = await asyncpg.connect(url)
    t0 = time.perf_counter()
    for _ in range(n):
        await a.fetch("SELECT 1")
    asel = (time.perf_counter() - t0) / n * 1e6
    t0 = time.perf_counter()
    for i in range(commits):
        async with a.transaction():
            await a.execute("INSERT INTO d VALUES ($1)", i)
    acom = (time.perf_counter() - t0) / commits * 1e6
    await a.close()
    row(
        "driver round trip SELECT 1: psycopg / asyncpg",
        f"{ps:.0f} / {asel:.0f} µs",
        "pick by measurement",
        f"psycopg from the event loop via a thread: {ph:.0f} µs",
    )
    row(
        "driver INSERT + COMMIT: psycopg / asyncpg",
        f"{pc:.0f} / {acom:.0f} µs",
        "pick by measurement",
        "dominated by the server's WAL flush",
    )


KV = Schema(
    "bench",
    {
        "sqlite": ["CREATE TABLE b (k INTEGER PRIMARY KEY, v TEXT)"],
        "postgres": ["CREATE TABLE b (k BIGINT PRIMARY KEY, v TEXT)"],
    },
)


async def seam_writes(location: str, label: str, writers: int = 32, each: int = 50) -> float:
    db = open_database(location, "bench", SHARED)
    await db.migrate(KV)
    counter = iter(range(10**9))

    async def writer() -> None:
        for _ in range(each):
            await db.write("INSERT INTO b (k, v) VALUES (?, ?)", (next(counter), "x" * 200))

    t0 = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(writers)))
    rate = writers * each / (time.perf_counter() - t0)
    per_commit = db.committed_jobs / max(1, db.commits)
    await release(db)
    row(
        f"durable writes/s, 32 writers: {label}",
        f"{rate:,.0f}",
        "PostgreSQL within 3x of SQLite",
        f"{per_commit:.1f} writes per commit (group commit)",
    )
    return rate


async def per_decision(url: str, n: int = 500) -> None:
    from sentinel_mcp.gateway.stored_nonces import SCHEMA, StoredNonceBook
    from sentinel_mcp.policy.fact_store import FactStore

    store = await FactStore(url).open()
    t0 = time.perf_counter()
    for _ in range(n):
        await store.version("session-1")
    check = (time.perf_counter() - t0) / n * 1e3
    await store.close()
    row(
        "read-through check per decision (PostgreSQL)",
        f"{check:.2f} ms",
        "< 1 ms",
        "one indexed read; the mirror reloads only when another replica changed the session",
    )
    db = open_database(url, "nonces")
    await db.migrate(SCHEMA)
    book = StoredNonceBook(db)
    rounds = n // 5

    # the two ways, interleaved round by round (this machine is shared: a burst of load hits both alike); a
    # ticker
    # that wakes every millisecond adds up how long the event loop was held beyond that (a busy ticker would
    # fight the writer thread for the GIL)
    took = {"before": 0.0, "now": 0.0}
    held = {"before": 0.0, "now": 0.0}
    phase, running = "before", True

    async def ticker() -> None:
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            held[phase], last = held[phase] + max(0.0, now - last - 0.001), now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    for i in range(rounds):
        phase, t0 = "before", time.perf_counter()
        book.issue(f"n{i}", time.time() + 60)  # before: the seal wrote on the event loop (blocking)
        book.consume(f"n{i}")
        took["before"] += time.perf_counter() - t0
        await asyncio.sleep(0.002)  # the ticker sees the gap above, attributed to "before"
        phase, t0 = "now", time.perf_counter()
        await book.issue_async(f"m{i}", time.time() + 60)  # now: awaited through the writer thread
        await book.consume_async(f"m{i}")
        took["now"] += time.perf_counter() - t0
        await asyncio.sleep(0.002)
    running = False
    await tick
    before, after = took["before"] / rounds * 1e3, took["now"] / rounds * 1e3
    held_before, held_after = held["before"] / rounds * 1e3, held["now"] / rounds * 1e3
    await release(db)
    row(
        "nonce issued + used once (PostgreSQL), blocking (before)",
        f"{before:.2f} ms",
        "< 5 ms",
        f"event loop held {held_before:.2f} ms per round",
    )
    row(
        "nonce issued + used once (PostgreSQL), async (now)",
        f"{after:.2f} ms",
        "< 5 ms",
        f"event loop held {held_after:.2f} ms per round (two durable commits; ask rounds only)",
    )


async def shared_meaning(url: str, n: int = 300) -> None:
    """The round trips this branch added, each with its CPU (process time, robust to load): the default
    guard's confirmation kept in the shared store (given, then used once), a destructive call's look for one
    that is not there, a plain label's conversation (the shared row, and the copy a replica keeps for up to a
    minute), and a replica's look for cancels asked through other replicas (every 0.5 s while it runs
    tasks)."""
    from sentinel_mcp.a2a.task_journal import TaskJournal
    from sentinel_mcp.core.decision import ToolCall
    from sentinel_mcp.storage.conversation_names import SharedLabels
    from sentinel_mcp.policy.confirmation_book import ConfirmationBook, SharedConfirmationBook

    db = open_database(url, "meaning")
    shared = await SharedConfirmationBook.open(db, 300)
    local = ConfirmationBook(300)

    def call(i: int) -> ToolCall:
        return ToolCall(name="srv__pay", server="srv", tool="pay", arguments={"n": i}, session_id=f"s{i}")

    async def timed(step: Any, rounds: int) -> tuple[float, float]:
        wall, cpu = time.perf_counter(), time.process_time()
        for i in range(rounds):
            await step(i)
        return ((time.perf_counter() - wall) / rounds * 1e3, (time.process_time() - cpu) / rounds * 1e3)

    async def given_and_used(book: Any, i: int) -> None:
        await book.grant(call(i), "v")
        assert await book.take(call(i), "v")

    # interleaved in blocks: a burst of load on this shared machine hits both alike
    mem = pg = (0.0, 0.0)
    for block in range(5):
        m = await timed(lambda i: given_and_used(local, i + block * n), n // 5)
        p = await timed(lambda i: given_and_used(shared, i + block * n), n // 5)
        mem, pg = (mem[0] + m[0] / 5, mem[1] + m[1] / 5), (pg[0] + p[0] / 5, pg[1] + p[1] / 5)
    row("default guard confirmation given + used (in process)", f"{mem[0]:.3f} ms", "-",
        f"CPU {mem[1]:.3f} ms (before: one replica's dict)")
    row("default guard confirmation given + used (PostgreSQL)", f"{pg[0]:.2f} ms", "< 5 ms",
        f"CPU {pg[1]:.2f} ms; two durable round trips, only when the user confirms")
    miss = await timed(lambda i: shared.take(call(10**6 + i), "v"), n)
    row("destructive call, no confirmation held (PostgreSQL)", f"{miss[0]:.2f} ms", "< 2 ms",
        f"CPU {miss[1]:.2f} ms; one DELETE that finds nothing (commits no WAL), then the user is asked")

    labels = await SharedLabels.open(db, 12 * 3600)
    labels.refresh = 0  # every naming goes to the row
    cold = await timed(lambda i: labels.session("alice", f"label{i % 50}"), n)
    labels.refresh = 60.0
    warm = await timed(lambda i: labels.session("alice", f"label{i % 50}"), n * 10)
    row("plain label -> conversation, the shared row (PostgreSQL)", f"{cold[0]:.2f} ms", "< 5 ms",
        f"CPU {cold[1]:.2f} ms; one durable upsert per label and replica per minute")
    row("plain label -> conversation, the replica's copy", f"{warm[0] * 1e3:.1f} µs", "< 50 µs",
        f"CPU {warm[1] * 1e3:.1f} µs; every other call of the minute")
    await release(db)

    from sentinel_mcp.agent.trace_store import TraceStore

    tmp = Path(tempfile.mkdtemp(prefix="sentinel-bench-traces-"))
    for where, location in (("SQLite", str(tmp / "agent.db")), ("PostgreSQL", url)):
        async with TraceStore(location) as traces:
            await traces.start_run(f"run-{where}", "alice", "s", "goal", "m")
            run_id = f"run-{where}"
            step = await timed(lambda i: traces.record_step(run_id, i, {"summary": "x" * 200}), n // 3)
        row(f"agent step written ({where})", f"{step[0]:.2f} ms", "< 10 ms",
            f"CPU {step[1]:.2f} ms; one durable write before the step acts (now shared with replicas)")
    shutil.rmtree(tmp, ignore_errors=True)

    journal = TaskJournal(url, "replica-bench")
    await journal.open()
    ids = [f"task-{i}" for i in range(50)]
    look = await timed(lambda i: journal.asked_cancels(ids), n)
    row("cancels asked through other replicas, one look (50 tasks)", f"{look[0]:.2f} ms", "< 2 ms",
        f"CPU {look[1]:.2f} ms; every 0.5 s while the replica runs tasks")
    await journal.close()


async def rulebase_reach(url: str, rounds: int = 5) -> None:
    """From one replica's reload to another replica deciding on that version (two followers in one process,
    on one engine; the file watcher's own poll, 1 s, comes on top for an edited file)."""
    from sentinel_mcp.policy.engine import shared_engine
    from sentinel_mcp.policy.rulebase import RulebaseHolder
    from sentinel_mcp.policy.shared_rulebases import SharedRulebases

    db = open_database(url, "versions")
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-versions-"))
    files = {name: tmp / name / "gate.pl" for name in ("a", "b")}
    for f in files.values():
        f.parent.mkdir()
        f.write_text("guard('x__y', [], true).\n")
    engine = shared_engine()
    holders = {name: RulebaseHolder(engine, [f]) for name, f in files.items()}
    followers = []
    for name, holder in holders.items():
        await holder.reload()
        followers.append(SharedRulebases(db, holder, name, tmp / f"v{name}"))
        await followers[-1].start()
    waits = []
    for i in range(rounds):
        files["a"].write_text(f"guard('x__y', [], true).\n% {i}\n")
        t0 = time.perf_counter()
        await holders["a"].reload(cause="hot reload: benchmark")
        while holders["b"].current.version != holders["a"].current.version:
            await asyncio.sleep(0.005)
        waits.append(time.perf_counter() - t0)
    for f in followers:
        await f.close()
    for holder in holders.values():
        await holder.unload_all()
    await release(db)
    shutil.rmtree(tmp, ignore_errors=True)
    row(
        "rulebase version: reload on A to B deciding on it",
        f"{sum(waits) / rounds * 1e3:.0f} ms",
        "about 1 s",
        f"worst {max(waits) * 1e3:.0f} ms; B polls every 0.5 s, validates, swaps",
    )


def config(store: str | None, data: Path) -> dict[str, Any]:
    s: dict[str, Any] = {
        "builtins": [],
        "http": {"token": TOKEN},
        "rulebases": [str(RULEBASES_DIR / "default.pl")],
        "data_dir": str(data),
    }
    if store:
        s["store"] = store
    return {"mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}}, "sentinel": s}


async def calls_per_second(port: int, clients: int, calls: int) -> float:
    async def one() -> None:
        async with (
            httpx2.AsyncClient(timeout=60, headers=AUTH) as http,
            Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)) as c,
        ):
            await c.call_tool("tb__noop", {})  # warm: session, first decision
            for _ in range(calls):
                r = await c.call_tool("tb__noop", {})
                assert not r.is_error, r

    t0 = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(clients)))
    return clients * (calls + 1) / (time.perf_counter() - t0)


async def logged_round_trips(server: LocalServer, port: int, calls: int) -> float:
    """Statements per call as the server logs them (``log_statement = all`` for this phase only: every simple
    query and every execution of a prepared one is a line, so each is one round trip): one client, one call
    after
    the other, so nothing is grouped (the worst case). The replicas' background reads (rulebase versions, the
    inbox) are included."""
    import psycopg
    import re

    def setting(value: str | None) -> None:
        with psycopg.connect(server.url, autocommit=True) as conn:
            conn.execute(
                f"ALTER SYSTEM SET log_statement = '{value}'" if value else "ALTER SYSTEM RESET log_statement"
            )
            conn.execute("SELECT pg_reload_conf()")

    log = server.root / "log"
    setting("all")
    await asyncio.sleep(0.5)  # the reload reaches every backend
    start = log.stat().st_size
    await calls_per_second(port, 1, calls)
    end = log.stat().st_size
    setting(None)
    with log.open("rb") as f:
        f.seek(start)
        text = f.read(end - start).decode(errors="replace")
    said = len(re.findall(r"LOG:  (?:statement|execute [^:]*):", text))
    return said / (calls + 1)


async def gateways(server: LocalServer, tmp: Path, clients: int, calls: int, pg_rate: float) -> None:
    import json
    import subprocess

    results: dict[str, float] = {}
    # one replica on SQLite (the embedded default)
    port = free_port()
    cfg = tmp / "sqlite.json"
    cfg.write_text(json.dumps(config(None, tmp / "sqlite-data")))
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", str(port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        await asyncio.to_thread(wait_ok, port, 60.0, proc, AUTH)
        cpu0 = tree_cpu(proc.pid)
        results["sqlite1"] = await calls_per_second(port, clients, calls)
        sqlite_cpu = (tree_cpu(proc.pid) - cpu0) / (clients * (calls + 1))
    finally:
        proc.terminate()
        proc.wait(15)
    row(
        "calls/s, 1 replica, SQLite",
        f"{results['sqlite1']:,.0f}",
        "baseline",
        f"{clients} clients, default.pl; {sqlite_cpu * 1e3:.2f} ms replica CPU per call "
        f"({1 / max(sqlite_cpu, 1e-9):,.0f} calls per CPU-second); 0 round trips (in process)",
    )
    for n in (1, 2):
        url = new_db(server.url, f"gw{n}")
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        cluster = Cluster(tmp / f"pg{n}", config(None, tmp / "unused"), replicas=n, store_url=url)
        try:
            await asyncio.to_thread(cluster.up, AUTH)
            pids = [p.pid for p in cluster.procs.values()]
            with_pg = [*pids, postmaster(server)]
            before, said = commits(url), statements(url)
            cpu0, pg0 = sum(tree_cpu(p) for p in pids), sum(tree_cpu(p) for p in with_pg)
            rate = await calls_per_second(cluster.port, clients, calls)
            done = clients * (calls + 1)
            replica_cpu = (sum(tree_cpu(p) for p in pids) - cpu0) / done
            all_cpu = (sum(tree_cpu(p) for p in with_pg) - pg0) / done
            per_call = (commits(url) - before) / done
            trips = (statements(url) - said - 1) / done  # the count's own query aside
            if n == 1:
                print("  statements per call (1 replica, whole run incl. start-up):", file=sys.stderr)
                for per, query in top_statements(url, done):
                    print(f"    {per:6.2f}  {query}", file=sys.stderr)
                logged = await logged_round_trips(server, cluster.port, 30)
        finally:
            await asyncio.to_thread(cluster.down)
        results[f"pg{n}"] = rate
        goal = "≥ 80% of SQLite" if n == 1 else "> 1 replica (2 cores shared)"
        row(
            f"calls/s, {n} replica(s), PostgreSQL" + (" + haproxy" if n > 1 else " + haproxy"),
            f"{rate:,.0f}",
            goal,
            f"{rate / n:,.0f} per replica; {per_call:.2f} PostgreSQL transactions per call",
        )
        row(
            f"  CPU per call, {n} replica(s): replicas / + PostgreSQL",
            f"{replica_cpu * 1e3:.2f} / {all_cpu * 1e3:.2f} ms",
            "per-core efficiency",
            f"{1 / max(replica_cpu, 1e-9):,.0f} calls per replica CPU-second, {1 / max(all_cpu, 1e-9):,.0f} "
            "counting the server's backends",
        )
        row(
            f"  PostgreSQL statements per call, {n} replica(s)",
            f"{trips:.1f}",
            "few; SQLite: 0",
            "pg_stat_statements (it misses prepared utility statements: SAVEPOINT/RELEASE after 5 uses)",
        )
        if n == 1:
            row(
                "  PostgreSQL round trips per call, 1 client, nothing grouped",
                f"{logged:.1f}",
                "few; SQLite: 0",
                "every statement the server logged (log_statement = all, this phase only)",
            )
        if n == 1:
            added = (1 / rate - 1 / results["sqlite1"]) * 1000 * clients
            row(
                "added ms per call vs SQLite (at 16 clients)",
                f"{added:+.2f} ms",
                "< 2 ms",
                "includes the balancer hop",
            )
            capacity = pg_rate / max(per_call, 1e-9) / max(rate, 1e-9)
            row(
                "replicas one PostgreSQL could serve",
                f"~{capacity:.0f}",
                "≥ 4",
                "measured commit capacity / (commits per call × calls/s of one replica)",
            )
    row(
        "2-replica speed-up on this 2-core machine",
        f"{results['pg2'] / results['pg1']:.2f}x",
        "> 1x",
        "CPU-bound: replicas, PostgreSQL and clients share 2 cores",
    )


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=25)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--only", choices=["meaning"], help="run only these rows (the shared confirmation, "
                    "labels and cancel round trips)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-bench-"))
    server = LocalServer(tmp / "pg", free_port())
    try:
        server.init()
        with (server.data / "postgresql.conf").open("a") as conf:  # counts every statement: round trips
            conf.write("\nshared_preload_libraries = 'pg_stat_statements'\npg_stat_statements.track = all\n")
        server.start()
        await shared_meaning(new_db(server.url, "meaning"))
        if args.only == "meaning":
            return
        await drivers(new_db(server.url, "drivers"))
        await seam_writes(str(tmp / "seam.db"), "SQLite")
        pg_rate = await seam_writes(new_db(server.url, "seam"), "PostgreSQL")
        await per_decision(new_db(server.url, "decisions"))
        await rulebase_reach(new_db(server.url, "versions"))
        await gateways(server, tmp, args.clients, args.calls, pg_rate)
    finally:
        server.stop("immediate")
        shutil.rmtree(tmp, ignore_errors=True)
        report()


def report() -> None:
    width = max(len(r[0]) for r in rows)
    print(f"\n{'measure':{width}}  {'value':>16}  {'goal':>30}  note")
    for name, value, goal, note in rows:
        print(f"{name:{width}}  {value:>16}  {goal:>30}  {note}")
    print(f"\n({os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; every figure from this run)")


if __name__ == "__main__":
    asyncio.run(main())
