"""Session knowledge: the fact store (truth, on disk) kept in step with the engine's per-session mirror.

Every write goes to the store first, then to the session's Prolog module, so a proof sees exactly the
stored facts; the facts a tool's result taught are written behind the call (``FactStore.learn``), and a read
of their session waits for them. A session is loaded into the engine on first use (valid facts, contexts,
seeds).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import Provenance
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.fact_store import Fact, FactStore, Learned
from sentinel_mcp.policy.kept_clears import last_clear
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE, kept_predicates
from sentinel_mcp.policy.mirror_writes import MirrorWrites, writes
from sentinel_mcp.policy.prolog_text import fact_text, module_name, quote_atom as _atom
from sentinel_mcp.policy.read_sources import Forgotten, ReadSources
from sentinel_mcp.policy.seed_only_sessions import forget_seed_only
from sentinel_mcp.policy.rulebase import Rulebase

# loads of a session's mirror raced by a write of it before one is refused (the decision is denied)
LOAD_TRIES = 8


def seed_facts_of(seeds: dict[str, Any]) -> list[tuple[str, list[Any]]]:
    """Config seeds: {"current_user": "u_123"} -> current_user(u_123); a list value gives several facts;
    a dict value {"args": [...]} gives one fact of several arguments."""
    out: list[tuple[str, list[Any]]] = []
    for name, value in seeds.items():
        if isinstance(value, list):
            out.extend((name, [v]) for v in value)
        elif isinstance(value, dict) and isinstance(value.get("args"), list):
            out.append((name, list(value["args"])))
        else:
            out.append((name, [value]))
    return out


class Knowledge:
    def __init__(
        self,
        store: FactStore,
        engine: PrologEngine,
        namespace: str,
        seeds: dict[str, Any] | None = None,
        max_sessions: int = 256,
        max_counters: int = 20_000,
    ):
        self.store = store
        self.engine = engine
        self.namespace = namespace
        self.seeds = dict(seeds or {})
        self.max_sessions = max_sessions
        # session -> rulebase version its seeds came from; insertion order = least recently loaded first
        self._loaded: dict[str, str] = {}
        # session -> the mark of its mirror's load (a clock value, new on every load): a proof pass that began
        # on one mark and ended on another (or none) ran on a mirror dropped or reloaded since (``mirror``)
        self._marks: dict[str, int] = {}
        self._loading = asyncio.Lock()
        self._modules: dict[str, str] = {}  # session -> its module's name (module())
        # (rulebase version, seed text) -> the engine's canonical form: every new conversation is seeded with
        # the same few facts (a conversation per 2026-era call), so they are written canonically once
        self._seed_forms: dict[tuple[str, str], dict[str, Any]] = {}
        # session -> a counter bumped on every change of its facts (copies elsewhere know when they are stale)
        self.generation: dict[str, int] = {}
        self._seen: dict[str, int] = {}  # shared store: session -> its counter the mirror reflects
        # both maps keep the most recently changed ``max_counters`` sessions (a conversation per call must not
        # grow them forever); values come from one process-wide clock, so a session dropped and changed again
        # never gets back a value a stale copy still holds, and a dropped one reads 0 (its copies rebuild)
        self.max_counters = max_counters
        self._clock = itertools.count(1)
        self.reads = ReadSources()  # which read last taught each observed fact: a newer answer replaces it
        self._cleared: int | None = None  # the latest clear of a kept fact this process saw (follow_clears)
        self.writes = MirrorWrites(max_counters)  # a load raced by a write of its session is done again

    def _changed(self, session: str) -> None:
        self.generation.pop(session, None)  # re-inserted last: insertion order = least recently changed first
        self.generation[session] = next(self._clock)
        _trim(self.generation, self.max_counters)

    def module(self, session: str) -> str:
        # a sha256 per call otherwise (on every decision); bounded, as session ids come from clients
        mod = self._modules.get(session)
        if mod is None:
            mod = module_name(f"s{self.namespace}", session)
            if len(self._modules) >= 4096:
                self._modules.clear()
            self._modules[session] = mod
        return mod

    async def ensure(self, session: str, rb: Rulebase) -> str:
        """Load the session into the engine (once), seed it; returns its module."""
        mod = self.module(session)
        if (
            self.store.shared
        ):  # replicas share the store: another may have changed this session (read through)
            await self._follow(session)
            if kept_predicates(rb.info.options):  # or the kept facts every session is loaded with
                await self._follow_kept()
        if self._loaded.get(session) == rb.version:
            return mod
        async with self._loading:  # two first decisions of a session must not load it twice
            return await self._load(session, rb, mod)

    def ready(self, session: str, rb: Rulebase) -> str | None:
        """The session's module when ``ensure`` would have nothing to do (mirrored and seeded for this
        rulebase version, in a store of this process only), else None (then ``ensure``)."""
        if self.store.shared or self._loaded.get(session) != rb.version:
            return None
        return self.module(session)

    async def _load(self, session: str, rb: Rulebase, mod: str) -> str:
        seeded = self._loaded.get(session)
        held: set[str] | None = None  # the seeds the store holds, when just read
        if seeded is None:
            if self._cleared is None and not self.store.shared:
                # the clears' baseline before the first mirror (follow_clears): a first look reloading every
                # mirror would only cost their reloads
                self._cleared = await last_clear(self.store)
            await self._evict()
            scopes = [session, KEPT_SCOPE] if kept_predicates(rb.info.options) else [session]
            for _ in range(LOAD_TRIES):
                await self.writes.idle(scopes)  # the writes begun before the read land in it
                mark = self.writes.mark(scopes)
                held = await self._read_into(session, rb, mod)
                if mark is not None and self.writes.mark(scopes) == mark:
                    break  # no write of the session began or ended since the store was read
            else:  # fail closed: a mirror that may miss a fact the store holds, or keep one it does not
                await self.engine.drop_session(mod)
                raise RuntimeError(f"the facts of a conversation changed during each of {LOAD_TRIES} loads")
            self._loaded[session] = ""  # mirrored from here on (seeding below writes through)
            self._marks[session] = next(self._clock)
            self._changed(session)
        if seeded != rb.version:
            await self._seed(session, rb, held)
            self._loaded[session] = rb.version
        return mod

    async def _read_into(self, session: str, rb: Rulebase, mod: str) -> set[str]:
        """Replace the session's module with what the store holds of it now; the seeds it holds."""
        now = process_clock.now()
        facts = await self.store.valid(session, now)
        held = {f.fact for f in facts if f.provenance == "seed"}
        forgotten = self.reads.note(session, ((f.fact, (f.source_tool, f.source_digest)) for f in facts
                                              if f.provenance == "observed" and f.source_tool
                                              and f.source_digest))
        if forgotten:  # past the bounds of what is kept of reads: not mirrored, and gone from the store
            gone = {(sess, t) for sess, _, texts in forgotten for t in texts}
            facts = [f for f in facts if (session, f.fact) not in gone or f.provenance != "observed"]
            await self._forget_reads(forgotten)  # its own: not a write racing it
        ctx = await self.store.contexts(session)
        if kept_predicates(rb.info.options):  # what writes of any conversation kept (kept_effects.py)
            facts += await self.store.valid(KEPT_SCOPE, now)
        await self.engine.drop_session(mod)
        rows: list[tuple[str, float | None, str]] = [(f.fact, f.expires_at, f.provenance) for f in facts]
        rows += [(fact_text("$context", [k, v]), None, "seed") for k, v in ctx.items()]
        await self.engine.assert_facts(mod, rows)  # the facts and the bound contexts, in one engine call
        return held

    async def _follow(self, session: str) -> None:
        """Drop the session's mirror when its counter in the shared store is not the one this replica last saw
        (one indexed read per decision; measured in ``benchmarks/storage_backends.py``)."""
        now = await self.store.version(session)
        if self._seen.get(session) == now:
            return
        if session in self._loaded:
            self._unload(session)
            self._changed(session)
        self._seen.pop(session, None)
        self._seen[session] = now
        _trim(self._seen, self.max_counters)  # a session missing here is simply reloaded from the store

    async def _follow_kept(self) -> None:
        """Reload every mirror when another replica kept a fact since this one looked (kept_effects.py)."""
        now = await self.store.version(KEPT_SCOPE)
        if self._seen.get(KEPT_SCOPE) == now:
            return
        for s in list(self._loaded):
            self._unload(s)
            self._changed(s)
        self._seen.pop(KEPT_SCOPE, None)
        self._seen[KEPT_SCOPE] = now

    async def follow_clears(self) -> None:
        """A store of this process (SQLite): reload every mirror when the operator cleared a kept fact since
        this process last looked (kept_clears.py). A server store needs none: the clear moves the kept facts'
        counter, which every decision follows (``_follow_kept``). A decision in flight loses nothing by a
        reload (``Solver._pass``)."""
        now = await last_clear(self.store)
        if self._cleared is None or now == self._cleared:
            # no mirror loaded yet (``_load`` takes the baseline before the first): nothing to reload
            self._cleared = now
            return
        for s in list(self._loaded):
            self._unload(s)
            self._changed(s)
        self._cleared = now

    @writes(lambda facts: (KEPT_SCOPE,))
    async def keep(self, facts: list[Fact]) -> None:
        """Store facts of kept predicates (in ``KEPT_SCOPE``), and put them in every loaded session's mirror:
        each conversation sees what a write of any other did, and a session loaded later reads them from the
        store (``_load``)."""
        if not facts:
            return
        before = {KEPT_SCOPE: self._seen.get(KEPT_SCOPE)}
        await self.store.add(facts)
        if self.store.shared:
            self._note_own({KEPT_SCOPE}, before)
        rows: list[tuple[str, float | None, str]] = [(f.fact, f.expires_at, f.provenance) for f in facts]
        for s in list(self._loaded):
            await self.engine.assert_facts(self.module(s), rows)
            self._changed(s)

    def _note_own(self, sessions: set[str], before: dict[str, int | None]) -> None:
        """After this replica's own change: the mirror is current if nobody else changed the session between
        (its counter moved by exactly our one bump); otherwise it is reloaded before the next decision."""
        for s in sessions:
            mine, old = self.store.versions.get(s), before.get(s)
            if mine is not None and old is not None and mine[1] == old:  # ours replaced the one we had seen
                self._seen[s] = mine[0]

    @writes(lambda session, *_: (session,))
    async def spend_confirmation(self, session: str, tool: str, digest: str) -> bool:
        """Shared store, before a call a confirmation allowed goes on: use it up across the cluster. False
        when
        another replica used it first (the session's mirror is then dropped: decide again on what is stored).
        """
        before = {session: self._seen.get(session)}
        spent, _ = await self.store.spend_confirmation(session, tool, digest)
        if spent:
            self._note_own({session}, before)
            if session in self._loaded:
                await self.engine.retract(
                    self.module(session), f"'$confirmed'({_atom(tool)}, {_atom(digest)}, _, _, _)"
                )
            self._changed(session)
            return True
        if await self.store.version(session) == before[session]:
            return True  # nothing changed since the proof: it did not stand on a stored confirmation
        self._unload(session)
        self._changed(session)
        return False

    async def take_confirmation(self, session: str, rb: Rulebase, tool: str, digest: str) -> bool:
        """A store of this process only, before a call a proof allowed goes on: use up a confirmation of this
        very call (one confirmation, one call), from the engine (atomically) and then the store, whose delete
        is committed before this returns (a reload never brings it back). False when there is none."""
        mod = await self.ensure(session, rb)  # a session evicted since its proof is loaded again first
        return await self._take(session, mod, rb, tool, digest)

    @writes(lambda session, *_: (session,))
    async def _take(self, session: str, mod: str, rb: Rulebase, tool: str, digest: str) -> bool:
        taken = await self.engine.take_confirmation(mod, tool, digest, rb.version)
        if not taken:
            return False
        self._changed(session)
        await self.store.delete(session, taken)
        return True

    async def _evict(self) -> None:
        """Keep at most ``max_sessions`` sessions mirrored in the engine; the store keeps everything, and an
        evicted session is simply loaded again on its next use."""
        while len(self._loaded) >= self.max_sessions:
            oldest = next(iter(self._loaded))
            self._unload(oldest)
            await self.engine.drop_session(self.module(oldest))

    async def _seed(self, session: str, rb: Rulebase, held: set[str] | None = None) -> None:
        texts = [fact_text(n, a) for n, a in seed_facts_of(self.seeds)] + list(rb.info.seeds)
        if held is None:
            held = {f.fact for f in await self.store.valid(session, predicate=None) if f.provenance == "seed"}
        new: list[Fact] = []
        for t in texts:
            j = self._seed_forms.get((rb.version, t))
            if j is None:
                j = await self.engine.fact_json(t)
                if len(self._seed_forms) >= 1024:  # seeds come from the config and rulebases: a few texts
                    self._seed_forms.clear()
                self._seed_forms[(rb.version, t)] = j
            if j["fact"] not in held:
                new.append(
                    Fact(
                        session=session,
                        predicate=j["predicate"],
                        args=list(j["args"]),
                        fact=j["fact"],
                        provenance="seed",
                    )
                )
        await self.add(new)

    @writes(lambda facts: {f.session for f in facts})
    async def add(self, facts: list[Fact]) -> None:
        """Write facts to the store, then to the mirrors of their sessions that are loaded."""
        if not facts:
            return
        sessions = {f.session for f in facts}
        before = {s: self._seen.get(s) for s in sessions}
        await self.store.add(facts)
        if self.store.shared:
            self._note_own(sessions, before)
        for s in sessions:
            self._changed(s)
        by_session: dict[str, list[tuple[str, float | None, str]]] = {}
        for f in facts:
            if f.session in self._loaded:
                by_session.setdefault(f.session, []).append((f.fact, f.expires_at, f.provenance))
        for s, rows in by_session.items():
            await self.engine.assert_facts(self.module(s), rows)

    @writes(lambda facts: (facts.session,))
    async def learn(self, facts: Learned) -> None:
        """Write what one tool's result taught (``fact_rows.learned``) behind the call (``FactStore.learn``:
        not waited for), and to the session's mirror if it is loaded (at once)."""
        session = facts.session
        source = (facts.source_tool, facts.source_digest)
        stale, forgotten = self.reads.replace(session, source, (text for text, _, _ in facts.mirror))
        if stale:  # what this read's previous answer said and its new one does not: not kept any longer
            if session in self._loaded:
                await self.engine.retract_observed(self.module(session), stale)
            await self.store.forget_read(session, *source, stale)
        await self._drop_forgotten(forgotten)
        before = {session: self._seen.get(session)}
        await self.store.learn_rows(facts)
        if self.store.shared:
            self._note_own({session}, before)
        self._changed(session)
        if session in self._loaded:
            await self.engine.assert_facts(self.module(session), facts.mirror)

    @writes(lambda session, *_: (session,))
    async def unlearn(self, session: str, tool: str, digest: str) -> None:
        """A read answered nothing its bindings can be read from (an error, no fact, too large to read): what
        its earlier answers taught is no longer known to hold, and goes from the store and the mirror (a
        guard that needs it fetches it again, and fails closed on another such answer). Kept, it stood to its
        TTL: a booking read as confirmed, then answered with an error, stayed confirmed for the guard."""
        _, forgotten = self.reads.replace(session, (tool, digest), ())
        doomed = await self.store.taught_by(session, tool, digest)
        if doomed:
            if session in self._loaded:
                await self.engine.retract_observed(self.module(session), doomed)
            await self.store.forget_read(session, tool, digest, doomed)
            self._changed(session)
        await self._drop_forgotten(forgotten)

    @writes(lambda forgotten: {session for session, _, _ in forgotten})
    async def _drop_forgotten(self, forgotten: Forgotten) -> None:
        await self._forget_reads(forgotten)

    async def _forget_reads(self, forgotten: Forgotten) -> None:
        """Delete the facts of reads ``ReadSources`` forgot to keep within its bounds, from the store and the
        mirror (a guard that needs one fetches it again)."""
        for session, (tool, digest), texts in forgotten:
            if session in self._loaded:
                await self.engine.retract_observed(self.module(session), texts)
            await self.store.forget_read(session, tool, digest, texts)
            self._changed(session)

    async def new_fact(
        self,
        session: str,
        predicate: str,
        args: list[Any],
        provenance: Provenance,
        *,
        ttl: float | None = None,
        source_tool: str | None = None,
        source_digest: str | None = None,
        contexts: list[str] | None = None,
    ) -> Fact:
        """A Fact with its canonical text (the engine writes it, so it matches facts from proofs)."""
        j = await self.engine.fact_json(fact_text(predicate, args))
        return _fact(session, j, provenance, source_tool, source_digest, contexts or [], ttl)

    async def fact_of_text(
        self,
        session: str,
        text: str,
        provenance: Provenance,
        *,
        source_tool: str | None = None,
        source_digest: str | None = None,
    ) -> Fact:
        """A Fact from its Prolog text (a ground term the engine wrote, e.g. an effect's ``establish``)."""
        j = await self.engine.fact_json(text)
        return _fact(session, j, provenance, source_tool, source_digest, [], None)

    @writes(lambda session, *_, **__: (session,))
    async def invalidate(self, session: str, pattern: str, rb: Rulebase | None = None) -> list[str]:
        """Remove the facts unifying with a Prolog pattern (text) from the mirror and the store; with a
        rulebase, also the fetch markers of the bindings that establish them."""
        mod = self.module(session)
        if rb is not None:
            removed = await self.engine.invalidate(rb.module, mod, pattern)
        else:
            removed = await self.engine.retract(mod, pattern)
        before = {session: self._seen.get(session)}
        await self.store.delete(session, removed)
        if self.store.shared and removed:
            self._note_own({session}, before)
        self._changed(session)
        return removed

    @writes(lambda session, *_: (session,))
    async def delete(self, session: str, texts: list[str]) -> None:
        """Delete these facts (exact texts) from the mirror and the store, as one write (a load of the
        session meanwhile is done again: it kept the one it had read)."""
        for text in texts:  # the mirror's copy (a ground text matches only itself), then the store's
            await self.invalidate(session, text)
        await self.store.delete(session, texts)
        self._changed(session)

    @writes(lambda session, *_: (session,))
    async def bind_context(self, session: str, name: str, value: Any) -> list[str]:
        """Bind a context; the answers given through it are deleted (they were about the old value)."""
        await self.store.bind_context(session, name, value)
        mod = self.module(session)
        if session in self._loaded:
            await self.engine.retract(mod, f"'$context'({fact_text(name, [])}, _)")
            await self.engine.assert_facts(mod, [(fact_text("$context", [name, value]), None, "seed")])
        self._changed(session)
        doomed = await self.store.delete_depending_on(session, name)
        if session in self._loaded:
            for t in doomed:
                await self.engine.retract(mod, t)
        return doomed

    def _unload(self, session: str) -> None:
        """The session is no longer mirrored (its next use loads it from the store)."""
        self._loaded.pop(session, None)
        self._marks.pop(session, None)

    def mirror(self, session: str) -> int | None:
        """The mark of the session's mirror as loaded now (None: not mirrored). A reload gives a new one."""
        return self._marks.get(session) if session in self._loaded else None

    def is_loaded(self, session: str) -> bool:
        """Whether the engine mirrors this session now (else its facts are only in the store)."""
        return session in self._loaded

    async def purge(self) -> int:
        now = process_clock.now()
        n = await self.store.purge_expired(now)
        await forget_seed_only(self.store)  # conversations left with their seeds alone (a row a call, else)
        # a copy: sessions load while this awaits the engine (iterating the live dict raised, and nothing was
        # purged)
        for s in list(self._loaded):
            await self.engine.purge(self.module(s), now)
        return n

    async def forget_sessions(self) -> None:
        for s in list(self._loaded):
            self._unload(s)
            await self.engine.drop_session(self.module(s))


def _trim(counters: dict[str, int], keep: int) -> None:
    while len(counters) > keep:
        del counters[next(iter(counters))]


def _fact(
    session: str,
    j: dict[str, Any],
    provenance: Provenance,
    source_tool: str | None,
    source_digest: str | None,
    contexts: list[str],
    ttl: float | None,
) -> Fact:
    """A Fact from the engine's canonical JSON of it (``fact_json``), established now."""
    now = process_clock.now()
    return Fact(
        session=session,
        predicate=j["predicate"],
        args=j["args"],
        fact=j["fact"],
        provenance=provenance,
        source_tool=source_tool,
        source_digest=source_digest,
        contexts=contexts,
        established_at=now,
        expires_at=None if ttl is None else now + ttl,
    )
