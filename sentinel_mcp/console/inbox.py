"""The inbox: questions the policy asked that wait for a person, by principal.

Clients that cannot elicit (and 2026-era clients between their rounds) leave their questions here. The
principal answers them in the console: the answer is bound to the exact call (principal, conversation, tool,
argument digest, policy version), carries provenance ``user``, counts once and expires. A call held open by
the front gets it at once; otherwise the next identical call in that conversation takes it ("the retry
passes"). A denial is a "decline" of every question: the call ends, nothing is remembered.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from sentinel_mcp.core import process_clock
from sentinel_mcp.core.deployment_caps import cap
from sentinel_mcp.gateway import call_timings
from sentinel_mcp.core.decision import Answer, Question, argument_digest

ItemKind = Literal["held", "blocked", "retry", "waiting"]  # waiting: nobody else can be asked
MAX_ITEMS = 2000  # across principals; the oldest settled or expired go first
MAX_OPEN_PER_PRINCIPAL = 200  # a principal's items, open or answered (waiting for the retry)
CHANGE_KINDS = ("agent", "activity")  # what a page shown follows by reloading (console.js)
MAX_STREAMS_PER_PRINCIPAL = 16  # open live-update streams (/console/events) of one principal
MAX_STREAMS = 512  # of everyone
# open streams of one console session: past it its oldest ends (a page reloaded leaves one behind), so one
# session (a copied cookie, a script looping) never holds its principal's whole share from its other sessions
MAX_STREAMS_PER_SESSION = 4
# a console page that reloads (after answering: the form's redirect) closes its live stream for a moment; a
# principal counts as watching for this long after its last page closed (whole seconds,
# SENTINEL_CAP_WATCH_GRACE_SECONDS: a test that waits it out lowers it)
WATCH_GRACE = float(cap("WATCH_GRACE_SECONDS", 10))


@dataclass
class InboxItem:
    id: str
    principal: str
    session: str
    client: str | None
    kind: ItemKind
    tool: str
    arguments: Any  # as the person approves them: as sent, the tool's own secrets masked (approval_arguments)
    digest: str
    version: str
    reason: str
    questions: list[Question]
    created: float  # wall time (shown)
    # when it stops counting, by the process clock (``core/process_clock.py``): a wall clock set back
    # kept a question open, and an approval waiting for its retry valid, for as long as the step
    expires: float
    answers: dict[str, Answer] | None = None  # set once the person answered (or denied)
    denied: bool = False
    used: bool = False
    answered_at: float = 0.0
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    replica: str | None = None  # another replica's question (cluster_inbox.py); None: held here
    # another replica's question: the signature of the shared row this copy was read from (an answer counts
    # only while the row still asks what this copy showed)
    shown_from: str = ""
    # the principal whose call asked, when not the one whose inbox it is in (an A2A peer's, in the owner's):
    # its items count against its own bound there (``_bound``)
    asker: str = ""

    @property
    def asked_by(self) -> str:
        return self.asker or self.principal

    @property
    def open(self) -> bool:
        return self.answers is None and not self.used and process_clock.now() < self.expires

    @property
    def waiting_for_retry(self) -> bool:
        return self.answers is not None and not self.used and process_clock.now() < self.expires

    @property
    def call_key(self) -> tuple[str, str, str, str, str]:
        return (self.principal, self.session, self.tool, self.digest, self.version)

    @property
    def risky(self) -> bool:
        """Confirmations of writes: the console plays a sound for these."""
        return any(q.meta.get("kind") in ("confirm", "confirmation")
                   or (q.meta.get("kind") == "upstream_question" and q.meta.get("confirmation"))
                   for q in self.questions)


class Inbox:
    def __init__(self, ttl: float = 600.0, hold_seconds: float = 60.0, hold_when: str = "watched") -> None:
        self.ttl = ttl
        self.hold_seconds = hold_seconds
        self.hold_when = hold_when  # "watched" (a console of that principal is open) | "always" | "never"
        self._items: OrderedDict[str, InboxItem] = OrderedDict()
        self._watchers: dict[str, set[asyncio.Queue[str]]] = {}
        self._last_watched: dict[str, float] = {}
        # each live stream's console session (None once a sign-out ended it)
        self._stream_sessions: dict[asyncio.Queue[str], str | None] = {}
        self.hint = "or the user answers it in Sentinel's web console (/console/inbox); then call again"
        self.shared: Any = None  # a ClusterInbox when replicas share a PostgreSQL store
        # other replicas' open questions, and every replica's answers waiting for a retry, as the store last
        # said
        self.remote: dict[str, InboxItem] = {}
        self.remote_answered: dict[str, InboxItem] = {}
        # whose console answers a principal's questions: its own, except another agent's (the owner's)
        self.answerer: Callable[[str], str] = _itself
        # how often each principal's pages that follow a change (CHANGE_KINDS) had it: a page says the
        # count it was rendered at, a stream opening says the count now: a change in between is not missed
        self._changes: dict[tuple[str, str], int] = {}

    # ---------------------------------------------------------------- the front's side
    def post(
        self,
        *,
        principal: str,
        session: str,
        client: str | None,
        tool: str,
        arguments: Any,
        shown_arguments: Any,
        version: str,
        reason: str,
        questions: list[Question],
        kind: ItemKind,
        asker: str | None = None,
    ) -> InboxItem:
        """A call's questions, waiting (one open item per exact call: asking again refreshes it). A question
        asked while a call runs (``waiting``) is that running call's own and always gets its own item: two
        calls with the same arguments may be asked different things (the device's question depends on the
        screen), and a refresh put the second question on the first call's item, so the answer the person
        gave to the question shown let the other, no longer shown, go ahead."""
        digest = argument_digest(arguments if isinstance(arguments, dict) else None)
        key = (principal, session, tool, digest, version)
        for item in self._items.values() if kind != "waiting" else ():
            if item.call_key == key and item.open and item.kind != "waiting":
                item.kind, item.questions, item.reason = kind, questions, reason
                item.expires = process_clock.now() + self.ttl
                self._notify(principal, "inbox")
                if self.shared is not None:
                    self.shared.posted(item)
                return item
        now = time.time()
        item = InboxItem(
            secrets.token_urlsafe(16),
            principal,
            session,
            client,
            kind,
            tool,
            shown_arguments,
            digest,
            version,
            reason,
            questions,
            now,
            process_clock.now() + self.ttl,
        )
        if asker is not None and asker != principal:
            item.asker = asker
        self._items[item.id] = item
        self._bound(item.asked_by)
        self._notify(principal, "inbox")
        if self.shared is not None:
            self.shared.posted(item)
        return item

    async def take(
        self, *, principal: str, session: str, tool: str, arguments: Any, version: str
    ) -> dict[str, Answer] | None:
        """The answers the person gave in the console for exactly this call, once (None: none given). With a
        shared store the answer is consumed there, so a retry may land on any replica and passes once."""
        if self.shared is None and not self._items:
            return None  # nothing was ever asked here (most calls): no digest to compute
        digest = argument_digest(arguments if isinstance(arguments, dict) else None)
        key = (principal, session, tool, digest, version)
        if self.shared is not None:
            taken = await self.shared.take(key)
            if taken is None:
                return None
            item_id, answers, waited = taken
            local = self._items.get(item_id)
            if local is not None:
                local.used = True
            self.remote_answered.pop(item_id, None)
            call_timings.waited(waited)
            self._notify(principal, "inbox")
            return answers
        for item in self._items.values():
            if item.call_key == key and item.waiting_for_retry:
                item.used = True
                # the retry's decision carries the time the person took to answer here
                call_timings.waited(max(0.0, item.answered_at - item.created))
                self._notify(principal, "inbox")
                return dict(item.answers or {})
        return None

    async def open_elsewhere(
        self, *, principal: str, session: str, tool: str, arguments: Any, version: str
    ) -> str | None:
        """The id of another replica's open question for exactly this call, when replicas share a store and
        this replica holds none of its own: a retry that lands here joins it (one question, one answer)."""
        if self.shared is None:
            return None
        digest = argument_digest(arguments if isinstance(arguments, dict) else None)
        key = (principal, session, tool, digest, version)
        if any(item.call_key == key and item.open for item in self._items.values()):
            return None  # asked here before: post() refreshes this replica's own item
        return await self.shared.open_elsewhere(key)

    def settle_elsewhere(self, *, principal: str, session: str, tool: str, arguments: Any) -> None:
        """The client answered itself (a 2026-era retry with answers): its console item is no longer open."""
        digest = argument_digest(arguments if isinstance(arguments, dict) else None)
        for item in self._items.values():
            if (item.principal, item.session, item.tool, item.digest) == (
                principal,
                session,
                tool,
                digest,
            ) and item.open:
                item.used = True
                self._notify(principal, "inbox")

    def should_hold(self, principal: str) -> bool:
        if self.hold_seconds <= 0 or self.hold_when == "never":
            return False
        who = self.answerer(principal)  # whose open console would answer it
        if self.hold_when == "always" or self._watchers.get(who):
            return True
        return time.monotonic() - self._last_watched.get(who, float("-inf")) < WATCH_GRACE

    async def wait(self, item: InboxItem, timeout: float, withdraw: bool = False) -> dict[str, Answer] | None:
        """Hold a call open until the person answers (the answers, used now) or ``timeout`` passes (None).
        ``withdraw``: on a timeout (or cancellation) the question goes away (a late answer lets nothing pass).
        """
        try:
            await asyncio.wait_for(item.settled.wait(), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError) as e:
            if withdraw:
                item.used = True
                self._notify(item.principal, "inbox")
                if isinstance(e, asyncio.CancelledError):
                    raise
                return None
            if isinstance(e, asyncio.CancelledError):
                raise
            if item.open:
                item.kind = "blocked"  # not held any more: the answer now lets the retry pass
                self._notify(item.principal, "inbox")
            return None
        if item.used or item.answers is None:
            return None
        # shared store: the answer is used once in the cluster (a retry on another replica may not take it
        # too)
        # (the row decides: a tick that saw it used meanwhile marked this item used too)
        if self.shared is not None and not await self.shared.use(item.id):
            item.used = True
            self._notify(item.principal, "inbox")
            return None
        item.used = True
        self._notify(item.principal, "inbox")
        return dict(item.answers)

    # ---------------------------------------------------------------- the console's side
    def open_items(self, principal: str) -> list[InboxItem]:
        """This principal's open questions: held here, then held by other replicas (shared store)."""
        return [i for i in reversed(self._items.values()) if i.principal == principal and i.open] + [
            i for i in self.remote.values() if i.principal == principal and i.open
        ]

    def local(self, item_id: str) -> InboxItem | None:
        return self._items.get(item_id)

    def is_open(self, item_id: str) -> bool:
        item = self._items.get(item_id)
        return item is not None and item.open

    def answered_items(self, principal: str) -> list[InboxItem]:
        """Answered, waiting for the client's retry: here, then on other replicas (shared store)."""
        here = [i for i in reversed(self._items.values()) if i.principal == principal and i.waiting_for_retry]
        seen = {i.id for i in here}
        return here + [
            i
            for i in self.remote_answered.values()
            if i.principal == principal and i.id not in seen and i.waiting_for_retry
        ]

    def waiting_ids(self) -> set[str]:
        return {i.id for i in self._items.values() if i.waiting_for_retry}

    def used_elsewhere(self, item_ids: set[str]) -> None:
        """Answers given here that the shared store no longer offers (a retry on another replica used them, or
        they expired): not listed as waiting any more."""
        for item_id in item_ids:
            item = self._items.get(item_id)
            if item is not None and item.waiting_for_retry:
                item.used = True
                self._notify(item.principal, "inbox")

    def get(self, principal: str, item_id: str) -> InboxItem | None:
        """An open item of this principal (another principal's, or a settled one, does not exist for it)."""
        item = self._items.get(item_id) or self.remote.get(item_id)
        if item is None or item.principal != principal or not item.open:
            return None
        return item

    async def give(self, item: InboxItem, answers: dict[str, Answer]) -> bool:
        """The person's answer from the console; False when it cannot count (answered already, on this or
        another replica, withdrawn, expired, or the shared store cannot say). Counted once in the cluster."""
        asked = list(item.questions)  # what the console showed and checked the form against
        if self.shared is not None:
            if not await self.shared.claim(item, answers, asked):
                if (
                    self.remote.pop(item.id, None) is not None
                ):  # settled elsewhere: not shown until the next poll
                    self._notify(item.principal, "inbox")
                return False
            if item.replica is not None:  # another replica holds the call: it picks the answer up
                self.remote.pop(item.id, None)
                self._notify(item.principal, "inbox")
                return True
        # asked anew while the store counted the answer: the answer was to the text shown, not to this one
        # (its copy in the store, rewritten with the new text, keeps no answer: ``ClusterInbox._publish``)
        if not item.open or item.questions != asked:
            return False
        self.answer(item, answers)
        return True

    @staticmethod
    def denial(item: InboxItem) -> dict[str, Answer]:
        return {q.key: Answer(action="decline", provenance="user") for q in item.questions}

    def answer(self, item: InboxItem, answers: dict[str, Answer]) -> None:
        item.answers = {k: a.model_copy(update={"provenance": "user"}) for k, a in answers.items()}
        item.denied = any(a.action != "accept" for a in answers.values())
        item.answered_at = time.time()
        item.expires = process_clock.now() + self.ttl  # the retry has the full time to come back
        item.settled.set()
        self._notify(item.principal, "inbox")

    def deny(self, item: InboxItem) -> None:
        self.answer(item, self.denial(item))

    # ---------------------------------------------------------------- live updates
    def end_session_streams(self, session_id: str) -> None:
        """A console session was signed out: its live streams end now, and count as no one watching at once
        (no grace: the person left, the page did not just reload)."""
        for queue, sid in list(self._stream_sessions.items()):
            if sid == session_id:
                self._end_stream(queue)

    def _end_stream(self, queue: asyncio.Queue[str]) -> None:
        self._stream_sessions[queue] = None  # ended here: its unwatch gives no grace
        if queue.full():
            queue.get_nowait()
        queue.put_nowait("end")
        for principal, watchers in list(self._watchers.items()):
            if queue in watchers:
                watchers.discard(queue)
                if not watchers:
                    del self._watchers[principal]

    def watch(self, principal: str, session_id: str | None = None) -> asyncio.Queue[str] | None:
        """A queue of this principal's events; None past the bound on open streams (each holds a connection
        and a file descriptor: one principal must not hold them all). A session at its own bound has its
        oldest stream ended first."""
        if session_id is not None:
            mine = [q for q, sid in self._stream_sessions.items() if sid == session_id]
            for oldest in mine[: max(0, len(mine) + 1 - MAX_STREAMS_PER_SESSION)]:
                self._end_stream(oldest)
        if len(self._watchers.get(principal, ())) >= MAX_STREAMS_PER_PRINCIPAL or \
                sum(map(len, self._watchers.values())) >= MAX_STREAMS:
            return None
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=100)
        self._watchers.setdefault(principal, set()).add(queue)
        if session_id is not None:
            self._stream_sessions[queue] = session_id
        return queue

    def unwatch(self, principal: str, queue: asyncio.Queue[str]) -> None:
        if queue in self._stream_sessions and self._stream_sessions.pop(queue) is None:
            return  # ended by its session's sign-out: already no one, and no grace
        watchers = self._watchers.get(principal)
        if watchers is not None:
            watchers.discard(queue)
            if not watchers:
                del self._watchers[principal]
                self._last_watched[principal] = time.monotonic()

    def end_watchers(self) -> None:
        """The server is stopping: every open event stream ends (they would hold the shutdown)."""
        for watchers in self._watchers.values():
            for queue in watchers:
                if queue.full():
                    queue.get_nowait()
                queue.put_nowait("end")

    def notify(self, principal: str | None, what: str) -> None:
        """Tell the principal's open consoles (None: every principal's) that ``what`` changed."""
        for name in [principal] if principal is not None else list(self._watchers):
            self._notify(name, what)

    def changes(self, principal: str, what: str) -> int:
        """How many ``what`` changes (one of CHANGE_KINDS) ``principal``'s consoles were told of."""
        return self._changes.get((principal, what), 0)

    def _notify(self, principal: str, what: str) -> None:
        if self.shared is not None and what == "inbox":
            self.shared.changed()  # a local question changed: the shared copy follows now
        who = self.answerer(principal)
        names = [principal] if who == principal else [principal, who]
        if what in CHANGE_KINDS:  # one count per principal and kind: bounded by the configured principals
            for name in names:
                self._changes[name, what] = self._changes.get((name, what), 0) + 1
        for queue in [q for name in names for q in self._watchers.get(name, ())]:
            if not queue.full():  # a console that does not read misses updates, never blocks the gateway
                queue.put_nowait(what)

    def _bound(self, asker: str) -> None:
        now = process_clock.now()
        for item_id in [
            i.id for i in self._items.values() if not i.open and not i.waiting_for_retry or i.expires < now
        ]:
            self._items.pop(item_id, None)
        # every item counts against the bound of the principal whose call asked, open or answered and
        # waiting for the retry: one principal's flood evicts its own oldest, never another's question or
        # answer (an A2A peer's questions wait in the owner's inbox: they never push out the owner's own)
        mine = [i for i in self._items.values() if i.asked_by == asker]
        for item in mine[: max(0, len(mine) - MAX_OPEN_PER_PRINCIPAL)]:
            self._items.pop(item.id, None)
        while len(self._items) > MAX_ITEMS:  # many principals at their bound: the one with the most gives way
            counts: dict[str, int] = {}
            for i in self._items.values():
                counts[i.asked_by] = counts.get(i.asked_by, 0) + 1
            most = max(counts, key=lambda name: counts[name])
            self._items.pop(next(i.id for i in self._items.values() if i.asked_by == most))


def _itself(principal: str) -> str:
    return principal
