"""The turns a write takes across every process deciding on the same facts (the replicas of a server store),
and the turn of the writes that establish kept facts (``kept_effects.py``). A base of ``PolicyGuard``, which
sets the attributes named here.

Within a process the gateway's shared turns (``write_turns.py``: a write's upstream's, each upstream its guard
reads from, the kept facts') let one write that another depends on be decided, forwarded and recorded at a
time. Replicas of a server store each had only their own: two conversations of one customer modifying one
order's items through two replicas were each decided on the order as it was, and both were sent. On a server
store the same turns are also the cluster's (``cluster_turns``; ``storage/server_turn.py``: advisory locks the
server ends with the holder's session, taken in the same sorted order on one connection), held until the
write's outcome is recorded. A store of this process only (SQLite) needs no more than the gateway's own turns.

A write that establishes a kept fact also holds the kept facts' turn (``kept_turn``: the cluster's turn of
``write_turns.KEPT_TURN``, among its keys, taken with the others on their one connection). A holder that dies
loses
its turn with its session, and what it sent is unknown. So the holder writes down its call (``kept_pending``)
right before it is written ahead and forwarded (``forwarding``: never while it is decided or asked about, when
nothing has left), and deletes it before giving the turn back: a row the next holder finds is a dead holder's.
What that call would have kept is recorded as unsure (``'$unsure'(Fact)`` in the kept scope: it denies the
same write for every conversation, never grants), until the operator, having looked at what the upstream did,
clears it (``sentinel-mcp kept clear``).

Every such turn is waited for at most ``policy.write_turn_seconds`` (the gateway's ``within``), the kept
facts' as well: it is one of the write's turns, and its wait is for the same thing, another write this one
depends on being recorded (it had a bound of its own, 30 s, not a setting, waited for after the others). A
turn not had by then, or at all (the server is down), denies the call.
"""

from __future__ import annotations

import contextlib
import json
import logging
from contextvars import ContextVar
from dataclasses import dataclass
from typing import AsyncContextManager, AsyncIterator

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.decision import ToolCall
from sentinel_mcp.core.stored_text import restored as _back
from sentinel_mcp.core.stored_text import stored as _kept
from sentinel_mcp.policy.engine import PrologEngine
from sentinel_mcp.policy.fact_store import Fact, FactStore
from sentinel_mcp.policy.kept_effects import KEPT_SCOPE, indicator, kept_predicates
from sentinel_mcp.policy.knowledge import Knowledge
from sentinel_mcp.policy.rulebase import RulebaseHolder
from sentinel_mcp.policy.write_turns import KEPT_TURN, turn_keys
from sentinel_mcp.storage import Statement
from sentinel_mcp.storage.location import ServerLocation
from sentinel_mcp.storage.row_signature import sign, signed
from sentinel_mcp.storage.server_turn import server_turn

log = logging.getLogger(__name__)

_TURN_NAME = "sentinel.kept-facts"  # one turn per database: every kept write of the cluster
_WRITE_TURN = "sentinel.turn."  # + a write turn's key (write_turns.py): one per upstream of the cluster
_NO_TURN = "the cluster's turn for such changes could not be taken: "
_PENDING = ("INSERT INTO kept_pending (session, tool, arguments, digest, started_at, mac) "
            "VALUES (?,?,?,?,?,?) RETURNING id")
_PURPOSE = "kept write pending"  # its row signed with the facts' key: one made up in SQL is dropped, unused




@dataclass(slots=True)
class _Held:
    """The kept turn this task holds, for ``call``: its pending row's id once written."""

    call: ToolCall
    pending: int | None = None


_HELD: ContextVar[_Held | None] = ContextVar("sentinel_kept_turn", default=None)
# the keys of the cluster's write turns this task holds (``cluster_turns``)
_WRITES_HELD: ContextVar[frozenset[str]] = ContextVar("sentinel_write_turns", default=frozenset())


class KeptTurns:
    rulebases: RulebaseHolder
    store: FactStore
    knowledge: Knowledge
    engine: PrologEngine

    def keeps_facts(self, call: ToolCall) -> bool:
        rb = self.rulebases.active
        return rb is not None and rb.info.keeps(call.identity)

    def turn_keys(self, call: ToolCall) -> tuple[str, ...]:
        """Its upstream's turn, that of each upstream its guard may read from, the kept facts' where it
        may read or establish one (write_turns.py)."""
        rb = self.rulebases.active
        return turn_keys(rb.info if rb is not None else None, call, keeps=self.keeps_facts(call))

    def cluster_turns(self, keys: tuple[str, ...], *, wait: bool,
                      within: float) -> AsyncContextManager[str | None]:
        if not self.store.shared:
            return contextlib.nullcontext(None)  # one process's store: the gateway's own turns are the turns
        return self._write_turns(keys, within if wait else 0.0)

    @contextlib.asynccontextmanager
    async def _write_turns(self, keys: tuple[str, ...], wait: float) -> AsyncIterator[str | None]:
        location = self._location()
        if location is None:  # closed, or not a server: no turn, no call
            yield _NO_TURN + "the fact store is not open"
            return
        names = tuple(sorted(_TURN_NAME if k == KEPT_TURN else _WRITE_TURN + k for k in keys))
        async with server_turn(location, names, wait=wait) as refused:
            if refused is not None:
                yield ("another change this one depends on is in progress on another replica "
                       f"({refused.why}); nothing was done, call again once it has finished"
                       if refused.busy else _NO_TURN + refused.why)
                return
            token = _WRITES_HELD.set(frozenset(keys))
            try:
                yield None
            finally:
                with contextlib.suppress(ValueError):  # left in another context: nothing of ours to undo
                    _WRITES_HELD.reset(token)

    def kept_turn(self, call: ToolCall, *, wait: bool) -> AsyncContextManager[str | None]:
        if not self.store.shared:
            return contextlib.nullcontext(None)  # one process's store: the gateway's own turn is the turn
        return self._kept_turn(call)

    def _location(self) -> ServerLocation | None:
        location = getattr(self.store.database, "location", None)
        return location if isinstance(location, ServerLocation) else None

    @contextlib.asynccontextmanager
    async def _kept_turn(self, call: ToolCall) -> AsyncIterator[str | None]:
        """The kept facts' bookkeeping, within the cluster's turns of ``call`` (its keys hold ``KEPT_TURN``:
        the kept facts' lock, already taken with the others on their connection, under their bound)."""
        if self._location() is None:  # closed, or not a server: no turn, no call
            yield _NO_TURN + "the fact store is not open"
            return
        if KEPT_TURN not in _WRITES_HELD.get():
            yield _NO_TURN + "it is not held for this call"
            return
        try:
            await self._settle_dead_holders()
        except Exception as e:  # noqa: BLE001 - nothing was decided: the call is refused, said why
            log.exception("the cluster's turn for kept writes")
            yield _NO_TURN + f"its record of writes in progress failed ({type(e).__name__})"
            return
        held = _Held(call)
        token = _HELD.set(held)
        try:
            yield None
        finally:
            with contextlib.suppress(ValueError):  # left in another context: nothing of ours to undo
                _HELD.reset(token)
            if held.pending is not None:
                await self.store.db.run([Statement("DELETE FROM kept_pending WHERE id = ?", (held.pending,))])

    async def forwarding(self, call: ToolCall) -> str | None:
        """A kept write about to be written ahead and forwarded on a server store: its pending row, now that
        it may leave (a dead holder's row found later is a call that may have run). A kept write without the
        cluster's turn held for this very call, or without its row, is denied. (Held for it: the row is
        written even if a rulebase loaded since keeps nothing of it; the turn was taken for what it may keep.)
        """
        held = _HELD.get()
        if held is None or held.call is not call:
            if self.store.shared and self.keeps_facts(call):
                return _NO_TURN + "it is not held for this call"
            return None
        if held.pending is not None:
            return None
        row = (_kept(call.session_id), _kept(call.identity), json.dumps(call.arguments), _kept(call.digest))
        try:
            written = await self.store.db.run([Statement(_PENDING, (
                *row, process_clock.now(), sign(self.store.key, _PURPOSE, *row)))])
        except Exception as e:  # noqa: BLE001 - nothing was forwarded: the call is refused, said why
            log.exception("the cluster's turn for kept writes")
            return _NO_TURN + f"its record of writes in progress failed ({type(e).__name__})"
        held.pending = written[0].rows[0][0]
        return None

    async def _settle_dead_holders(self) -> None:
        """Record as unsure what each dead holder's call would have kept, then forget the call."""
        rows = await self.store.db.query("SELECT id, session, tool, arguments, digest, mac FROM kept_pending")
        if not rows:
            return
        rb = self.rulebases.current
        kept = kept_predicates(rb.info.options)
        unsure: list[Fact] = []
        for _, session, tool, arguments, digest, mac in rows:
            if not signed(self.store.key, mac, _PURPOSE, session, tool, arguments, digest):
                log.warning("a kept write's pending row not signed by a replica of this cluster: dropped")
                continue
            session, tool, digest = _back(session), _back(tool), _back(digest)
            log.warning("a replica died holding the turn of %s (conversation %s): what it kept is recorded "
                        "as unsure until the operator clears it (sentinel-mcp kept)", tool[:99], session[:99])
            await self.knowledge.ensure(session, rb)
            actions = await self.engine.effect_actions(rb.module, self.knowledge.module(session), tool,
                                                       json.loads(arguments), process_clock.now())
            for text in actions["establish"]:
                plain = await self.knowledge.fact_of_text(KEPT_SCOPE, text, "observed")
                if indicator(plain.predicate, plain.args) in kept:
                    unsure.append(await self.knowledge.fact_of_text(
                        KEPT_SCOPE, f"'$unsure'({text})", "observed", source_tool=tool, source_digest=digest))
        await self.knowledge.keep(unsure)
        await self.store.db.run([Statement("DELETE FROM kept_pending WHERE id = ?", [(r[0],) for r in rows],
                                           many=True)])
