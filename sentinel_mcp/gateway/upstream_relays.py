"""What an upstream sends that is not the answer to a call: requests it pushes during a call (elicitation,
sampling, roots, log lines), routed to the caller whose call it is, and resource updates for subscriptions
that Sentinel keeps on behalf of its clients (kept across reconnects). Mixins of ``Upstream``. Log lines and
resource updates go through the upstream's ``NoticeQueue`` (notice_queue.py), as do progress reports.
"""

from __future__ import annotations

import asyncio
import json
import logging
from functools import partial
from typing import TYPE_CHECKING, Any, Awaitable, Callable, cast

import anyio
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    ErrorData,
    ListRootsResult,
    LoggingMessageNotificationParams,
    RootsListChangedNotification,
)

from sentinel_mcp.core.asking import marked
from sentinel_mcp.core.caller_link import CURRENT_LINK, CallerLink, refusal
from sentinel_mcp.core.log_cadence import worth_saying
from sentinel_mcp.core.utf8_text import utf8_prefix, utf8_size
from sentinel_mcp.gateway.midcall_answers import asked
from sentinel_mcp.gateway.notice_budget import NoticeBudget
from sentinel_mcp.gateway.notice_queue import NoticeQueue
from sentinel_mcp.gateway.paced_reading import progress_of
from sentinel_mcp.core.own_voice import attributed_data
from sentinel_mcp.gateway.push_callers import ConnectionCallers
from sentinel_mcp.gateway.push_shares import PushShares
from sentinel_mcp.gateway.relayed_answer import relayed_answer
from sentinel_mcp.gateway.relayed_roots import NARROWED, relayed_roots
from sentinel_mcp.gateway.sampling_bounds import TOO_LARGE, sampling_problem
from sentinel_mcp.gateway.sampling_fields import narrowed_sampling, token_cap
from sentinel_mcp.gateway.form_shape import NOT_A_FORM, configured_form_problem
from sentinel_mcp.gateway.relay_permits import ELICITATION, ROOTS, SAMPLING, refused_kind
from sentinel_mcp.gateway.undeclared_requests import kind_of, refused_request, undeclared
from sentinel_mcp.gateway.unfit_notices import MALFORMED, UNKNOWN, head, unfit
from sentinel_mcp.gateway.upstream_client import UpstreamUnavailable, describe_error

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks
    from sentinel_mcp.gateway.upstream_calls import _InFlight

log = logging.getLogger(__name__)

# requests one upstream has pushed that wait for an answer at once (a person answers a few at a time; a
# hostile upstream's flood must not become thousands of tasks, questions and inbox items)
MAX_PUSHES_WAITING = 64
# a log line's data kept while it waits for its client (more than a client is shown: front_link.py): a line
# may be as long as an answer, and ``MAX_NOTICES_WAITING`` of them may wait
LOG_DATA_BYTES = 16_000
# a log line's logger name kept while it waits: a name, never the megabytes a line may hold (256 may wait)
LOGGER_BYTES = 200
# the audit cause of a request refused as tied to no call Sentinel could prove it belongs to
UNATTRIBUTED = "unattributed"


class PushRelays:
    """Requests a handshake-era upstream pushes while it works on calls."""

    name: str
    target: Any
    client: Client | None
    log_level: str | None
    _inflight: dict[int, _InFlight]
    callers: ConnectionCallers
    notices: NoticeQueue
    hooks: UpstreamHooks
    _pushes_waiting = 0  # pushed requests relayed and not yet answered (``MAX_PUSHES_WAITING``)
    _waiting_pushes: PushShares  # those by principal (push_shares.py)
    pushes_refused = 0  # refused at that bound or their call's (``MAX_QUESTIONS_PER_CALL``), since the start
    pushes_not_permitted = 0  # refused as a kind the server may not send (``relay_permits``), since the start
    # the connection may carry the calls of more than one principal: no roots on it (``relay_permits``)
    shared = False
    roots_given_to: str | None = None  # whose roots this connection was given last (``roots_changed``)
    _tg: anyio.abc.TaskGroup | None
    notice_budget: NoticeBudget
    notices_unfit: dict[str, int]  # notices no client can take, by why (``unfit_notices.py``), ever
    # pushes attributed to no call, so shown to no client (log lines dropped, requests refused, progress under
    # a token Sentinel minted for a call that has ended), since the start
    pushes_unrouted = 0
    # requests of a kind the connection was not told Sentinel answers, or of no known method, since the start
    pushes_undeclared = 0
    requests_heard = 0  # every request it pushed, since the start: a sign of life (``Upstream._pinged``)

    @property
    def notices_unknown(self) -> int:
        """Notices of a method no client takes, since the start (``unfit_notices.UNKNOWN``)."""
        return self.notices_unfit.get(UNKNOWN, 0)

    @property
    def notices_malformed(self) -> int:
        """Notices whose params are not of their method's shape, since the start (``MALFORMED``)."""
        return self.notices_unfit.get(MALFORMED, 0)

    @property
    def notice_pauses(self) -> int:
        """Times its reading paused past its budget of notices reaching no client (notice_budget.py)."""
        return self.notice_budget.pauses

    @property
    def modern(self) -> bool:  # Upstream's: the era its connection speaks
        raise NotImplementedError

    @property
    def builtin(self) -> bool:  # Upstream's: one of Sentinel's own, speaking as itself
        raise NotImplementedError

    def _caller_for_push(self) -> CallerLink | None:
        target = self._push_target()
        return None if target is None else target[1]

    def _push_target(self) -> tuple[_InFlight, CallerLink] | None:
        """The call a pushed request belongs to. In-process, the calling task's link names it exactly, as it
        does a lean HTTP call's request on the call's own stream (one naming no call came on the server's
        standalone stream: about no call, refused, whatever is in flight); over stdio (and the SDK's HTTP
        path) a push carries nothing that names its call, so route only when one call is in flight,
        or when every call in flight is one party's (one client session: ``party_turns.py``): the party is
        asked with its oldest call that is not asking already (on its stream, in its next held round, or in
        the console inbox), the question marked as naming no call (``shared_note``), as is a refused answer's
        record. Never once the connection carried calls of several principals (``push_callers.py``): the
        push may be what the upstream still does for another principal's call, answered already.
        """
        link = CURRENT_LINK.get()
        if link is not None:
            # named exactly; a call that has ended (a built-in's background work) is asked of no one else
            return next(((f, link) for f in self._inflight.values() if f.link is link), None)
        if self.callers.several:
            return None
        # in the order the calls started; a call sent as one POST is named by its own stream's requests, so
        # one naming no call came on the server's standalone stream and is none of its (``_InFlight``)
        flights = [f for f in self._inflight.values() if not f.streamed]
        if len(flights) == 1:
            return flights[0], flights[0].link
        if not flights:
            return None
        party = flights[0].link.party
        if party is None or any(f.link.party != party for f in flights):
            return None
        # the oldest call not already asking something (a held round shows one question at a time)
        free = next((f for f in flights if not f.link.asking), flights[0])
        return free, free.link.for_one_of(len(flights))

    def _unrouted(self, what: str) -> ErrorData:
        if CURRENT_LINK.get() is not None:
            return refusal(what, "the call it belongs to has ended")
        if self.callers.several:  # never who: the callers' names are not the asker's to know
            why = "it names no call and this server's connection has carried calls of more than one principal"
        elif not self._inflight:
            why = "no call to it is in progress"
        elif all(f.streamed for f in self._inflight.values()):
            why = ("it came on no call's stream (the server's own stream carries requests about no call), "
                   "and no call to it is in progress otherwise")
        else:
            why = (
                f"it names no call and {len(self._inflight)} calls are in flight, not all one client's "
                '(set "concurrent": false on this upstream to serialize its calls)'
            )
        return refusal(what, why)

    async def _relayed(self, what: str, kind: str, ask: Callable[[CallerLink], Awaitable[Any]]) -> Any:
        """``ask(link)`` of the call the push belongs to, while fewer than ``MAX_PUSHES_WAITING`` of this
        upstream's pushes wait for their answers; past that the push is refused at once, as is one of a kind
        the server may not send (``relay_permits``); each refusal is audited with its call
        (``push_refusals.py``)."""
        target = self._push_target()
        if target is None:
            refused = self._unrouted(what)
            self._unattributed(what, refused.message)
            # audited with the call it names exactly (ended), else with none: never a guessed principal's
            hook, ended = self.hooks.push_refused, CURRENT_LINK.get()
            if hook is not None:
                await hook(cast("Upstream", self), kind, UNATTRIBUTED, refused.message,
                           ended.call_of if ended is not None else None)
            return refused
        flight, link = target
        why = refused_kind(self.name, self.target, kind, self.shared)
        if why is not None:
            self.pushes_not_permitted += 1
            log.info("upstream %s: %s refused: %s", self.name, what, why)
            await self._refused_push(link, kind, "not_permitted", f"sentinel: {what} refused: {why}")
            return refusal(what, why)
        shares = self._waiting_pushes
        if self._pushes_waiting >= MAX_PUSHES_WAITING and shares.make_room(flight.who, MAX_PUSHES_WAITING):
            self._pushes_waiting -= 1  # another principal's newest gave its place (refused in its own wait)
        if self._pushes_waiting >= MAX_PUSHES_WAITING:
            self.pushes_refused += 1
            if worth_saying(self.pushes_refused - 1, self.pushes_refused):  # a flood is not a flood of lines
                log.info("upstream %s: %s refused, %d of its requests are waiting already (%d so far)",
                         self.name, what, self._pushes_waiting, self.pushes_refused)
            why = f"{MAX_PUSHES_WAITING} of this server's requests are waiting already"
            await self._refused_push(link, kind, "too_many_waiting", f"sentinel: {what} refused: {why}")
            return refusal(what, why)
        self._pushes_waiting += 1
        asking = asyncio.ensure_future(ask(link))  # a task: cancelled if it gives its place (push_shares)
        entry = shares.add(flight.who, asking)
        try:
            return await asking
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not entry.evicted or (current is not None and current.cancelling()):
                asking.cancel()
                raise
            self.pushes_refused += 1
            why = (f"{MAX_PUSHES_WAITING} of this server's requests were waiting; it gave its place to a "
                   "request of another principal's call")
            await self._refused_push(link, kind, "too_many_waiting", f"sentinel: {what} refused: {why}")
            return refusal(what, why)
        finally:
            if not entry.evicted:  # an evicted one's place was taken over already
                shares.remove(entry)
                self._pushes_waiting -= 1

    async def screen_request(self, declared: frozenset[str], method: str) -> ErrorData | None:
        """A request this upstream sent on a connection told Sentinel answers ``declared`` (kinds): None to
        answer it so (its callback routes it), else refused here, audited with the call it belongs to when
        one can be proved (``_push_target``), else with none (``undeclared_requests.py``)."""
        self.requests_heard += 1
        cause = undeclared(method, declared, self.modern)
        if cause is None:
            return None
        self.pushes_undeclared += 1
        refused = refused_request(method, cause)
        log.info("upstream %s: %s", self.name, refused.message)
        target, ended = self._push_target(), CURRENT_LINK.get()
        call = target[1].call_of if target is not None else ended.call_of if ended is not None else None
        hook = self.hooks.push_refused
        if hook is not None:  # into the audit log before the upstream hears of it
            await hook(cast("Upstream", self), kind_of(method), cause, refused.message, call)
        return refused

    async def _refused_push(self, link: CallerLink, kind: str, cause: str, why: str) -> None:
        """Into the audit log (``push_refusals.py``: bounded) before the upstream hears of it."""
        hook = self.hooks.push_refused
        if hook is not None:
            await hook(cast("Upstream", self), kind, cause, why, link.call_of)

    async def _on_elicit(
        self, ctx: ClientRequestContext, params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        async def ask(link: CallerLink) -> ElicitResult | ErrorData:
            # the upstream hears who answered from the gateway alone: whatever the answerer wrote is removed
            # and carries only what the question can be answered with, whichever link answered it
            link_asked = isinstance(params, ElicitRequestURLParams)
            problem = None if link_asked else configured_form_problem(self.target, params)  # (form_shape.py)
            if problem is not None:
                self.pushes_refused += 1
                why = f"sentinel: an elicitation refused: {problem}"
                await self._refused_push(link, ELICITATION, NOT_A_FORM, why)
                return refusal("an elicitation", problem)
            # bounded, an accept decided again (midcall_answers.py)
            answer = await asked(link, lambda: link.elicit(params),
                                 partial(self._too_many_questions, link, ELICITATION))
            return marked(relayed_answer(answer, link=link_asked), link.answers_as)

        return cast("ElicitResult | ErrorData", await self._relayed("an elicitation", ELICITATION, ask))

    async def _too_many_questions(self, link: CallerLink, kind: str, why: str) -> None:
        """A request past its call's bound (``midcall_answers.MAX_QUESTIONS_PER_CALL``, each kind apart):
        counted with the refused pushes, and audited."""
        self.pushes_refused += 1
        await self._refused_push(link, kind, "too_many_questions", why)

    async def _on_sample(
        self, ctx: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        async def ask(link: CallerLink) -> Any:  # bounded, its answer decided again (midcall_answers.py)
            problem = sampling_problem(params)  # what the client's model would read (sampling_bounds.py)
            if problem is not None:
                self.pushes_refused += 1
                why = f"sentinel: a sampling request refused: {problem}"
                await self._refused_push(link, SAMPLING, TOO_LARGE, why)
                return refusal("a sampling request", problem)
            shown = narrowed_sampling(params, token_cap(self.target))  # its fields bounded (sampling_fields)
            return await asked(link, lambda: link.sample(shown),
                               partial(self._too_many_questions, link, SAMPLING), SAMPLING)

        sampled = await self._relayed("a sampling request", SAMPLING, ask)
        return cast("CreateMessageResult | ErrorData", sampled)

    async def _on_roots(self, ctx: ClientRequestContext) -> ListRootsResult | ErrorData:
        async def ask(link: CallerLink) -> Any:  # bounded, its answer decided again (midcall_answers.py)
            answer = await asked(link, link.list_roots, partial(self._too_many_questions, link, ROOTS), ROOTS)
            return marked(await self.relayed_roots(link, answer), link.answers_as)

        return cast("ListRootsResult | ErrorData", await self._relayed("a roots request", ROOTS, ask))

    async def relayed_roots(self, link: CallerLink | None, answer: Any) -> Any:
        """A client's answer to this upstream's roots request as the upstream gets it, rebuilt within bounds
        (``relayed_roots``); what was left out goes into the call's audit row before the upstream hears."""
        relayed = relayed_roots(answer)
        hook = self.hooks.push_refused
        call = link.call_of if link is not None else None
        if relayed.why is not None and hook is not None:
            await hook(cast("Upstream", self), ROOTS, NARROWED, f"sentinel: {relayed.why}", call)
        if isinstance(relayed.answer, ListRootsResult):  # its principal's next change of roots is told here
            self.roots_given_to = call.principal if call is not None else None
        return relayed.answer

    def roots_changed(self, principal: str) -> bool:
        """A client of ``principal`` said its roots changed: told to this connection when it was given that
        principal's roots (only a connection serving one principal is: ``relay_permits``), once per roots
        given: a flood of changes is one notice, and a connection that never asked hears none. The upstream
        asks again during a call (the calling client's roots). Sent in the connection's own tasks, never
        holding the client's connection up; True when one was sent."""
        client, tg = self.client, self._tg
        if self.roots_given_to != principal or client is None or tg is None or self.modern:
            return False
        self.roots_given_to = None

        async def tell() -> None:
            with anyio.move_on_after(self.target.timeout):
                try:
                    await client.session.send_notification(RootsListChangedNotification())
                except Exception as e:  # noqa: BLE001 - a connection ending: its next one is asked afresh
                    log.debug("upstream %s: roots/list_changed not sent: %s", self.name, describe_error(e))

        tg.start_soon(tell)
        return True

    async def _on_log(self, params: LoggingMessageNotificationParams) -> None:
        target = self._push_target()
        if target is None:
            self._unattributed("a log line", f"[{params.level}] {str(params.data)[:200]}")
            return
        flight, link = target
        kept = _bounded_log(params)
        if not self.builtin:  # its words never Sentinel's, as a result's are not (own_voice.py)
            data = attributed_data(kept.data, self.name)
            if data is not kept.data:
                kept = kept.model_copy(update={"data": data})
        self.notices.put(flight, "log", lambda: link.log(kept), who=flight.who)

    def progress_stray(self, params: Any) -> bool:
        """Whether a progress notice the SDK's session is about to be handed (its params, as sent) is no
        waiting request's own: under a token of any shape but an int naming a request that waits for
        progress, or with values that are no report. Such a notice is counted and charged here, and reaches
        no one (``paced_reading.py``); a call's own is the SDK's to route."""
        token, report = progress_of(params)
        client = self.client
        if report and type(token) is int and client is not None:
            # the SDK's own table of requests waiting (a dispatcher without one: nothing to tell, routed)
            pending = getattr(client.session._dispatcher, "_pending", None)
            if pending is None:
                return False
            waiting = pending.get(token)
            if waiting is not None and waiting.on_progress is not None:
                return False
        self.stray_progress(token)
        return True

    def notice_stray(self, method: Any, params: Any) -> bool:
        """Whether a notice the SDK's session is about to be handed reaches no one (``paced_reading.py``): a
        progress no waiting call's own, or one the session cannot take (``unfit_notices.py``), which it would
        log, each, uncharged. Such a notice is counted and charged here."""
        if method == "notifications/progress":
            return self.progress_stray(params)
        client = self.client
        # as the session reads it: on its era, or the SDK's fallback before the handshake
        version = getattr(client.session, "_negotiated_version", None) if client is not None else None
        why = unfit(method, params, version or "2025-11-25")
        if why is None:
            return False
        self.unfit_notice(why, method)
        return True

    def unfit_notice(self, why: str, method: object) -> None:
        """A notice no client can take: counted by why and charged, said at a cadence (never its params)."""
        self.notice_budget.spend()
        n = self.notices_unfit[why] = self.notices_unfit.get(why, 0) + 1
        if worth_saying(n - 1, n):
            log.info("upstream %s: %d notices %s reached no client (the last of method %s)", self.name, n,
                     why, head(method))

    def stray_progress(self, token: object) -> None:
        """A progress notice that is no call's own (its call has ended, or it never was one of ours, or it
        is malformed): counted and charged, shown to no one."""
        # said briefly whatever it is (the detail is made for every notice): a string's head only, an int
        # past 64 bits (a JSON int may have 4,300 digits, slow to write out) by its type
        if type(token) is str:
            shape = repr(token[:40])
        elif type(token) is int and -(1 << 63) <= token < 1 << 63:
            shape = str(token)
        else:
            shape = f"of type {type(token).__name__}"
        self._unattributed("a progress report", f"token {shape} names no call in flight")

    def _unattributed(self, what: str, detail: str) -> None:
        """A push shown to no one: counted, and said in Sentinel's own log at a cadence (a flood of them is
        not a flood of lines)."""
        self.pushes_unrouted += 1
        self.notice_budget.spend()
        if worth_saying(self.pushes_unrouted - 1, self.pushes_unrouted):
            log.info("upstream %s: %s reached no client (%s; %d so far)", self.name, what, detail,
                     self.pushes_unrouted)
        else:
            log.debug("upstream %s: %s reached no client (%s)", self.name, what, detail)

    async def _apply_log_level(self) -> None:
        client = self.client
        if self.log_level is None or client is None or self.modern:
            return
        caps = client.server_capabilities
        if caps is not None and caps.logging is not None:
            try:
                await client.set_logging_level(self.log_level)  # type: ignore[arg-type]
            except MCPError as e:
                log.info("upstream %s refused logging/setLevel: %s", self.name, e.message)

    async def set_log_level(self, level: str | None) -> None:
        """The level Sentinel asks of this upstream (``front_utilities.RELAYED_LEVEL``); applied now and on
        every reconnect."""
        self.log_level = level
        await self._apply_log_level()


def _bounded_log(params: LoggingMessageNotificationParams) -> LoggingMessageNotificationParams:
    """At most ``LOG_DATA_BYTES`` UTF-8 bytes of the line's data (structured data that long: its JSON text,
    cut), at most ``LOGGER_BYTES`` of its logger's name."""
    if isinstance(params.logger, str) and utf8_size(params.logger) > LOGGER_BYTES:
        params = params.model_copy(update={"logger": utf8_prefix(params.logger, LOGGER_BYTES)})
    data = params.data
    if isinstance(data, str):
        if utf8_size(data) <= LOG_DATA_BYTES:
            return params
        return params.model_copy(update={"data": utf8_prefix(data, LOG_DATA_BYTES)})
    if isinstance(data, (int, float, bool)) or data is None:
        return params
    try:
        text = json.dumps(data, default=str)
    except (ValueError, RecursionError):  # deeper than it can be written: never the reader's fault
        return params.model_copy(update={"data": "[log data not shown: nested too deep]"})
    if len(text) <= LOG_DATA_BYTES:  # ASCII: json.dumps escaped every other character
        return params
    return params.model_copy(update={"data": text[:LOG_DATA_BYTES]})


class ResourceWatch:
    """Resource subscriptions held upstream for Sentinel's clients: ``resources/subscribe`` on the handshake
    era,
    one ``subscriptions/listen`` stream per URI on 2026-07-28."""

    name: str
    client: Client | None
    hooks: "UpstreamHooks"
    subscribed: set[str]
    _watchers: dict[str, anyio.CancelScope]
    _tg: anyio.abc.TaskGroup | None
    notice_budget: NoticeBudget
    notices: NoticeQueue
    updates_unsubscribed = 0  # "updated" for URIs nobody subscribed to here, dropped at once, since the start

    @property
    def modern(self) -> bool:  # Upstream's: the era its connection speaks
        raise NotImplementedError

    @property
    def builtin(self) -> bool:  # Upstream's: one of Sentinel's own, speaking as itself
        raise NotImplementedError

    async def subscribe(self, uri: str, *, on: bool = True) -> None:
        """Subscribe to a resource's updates (kept across reconnects) or drop the subscription."""
        if self.client is None:
            raise UpstreamUnavailable(f"upstream {self.name} is not connected")
        if on:
            # named before it is asked: an update the upstream sends right behind its answer is let through
            known = uri in self.subscribed
            self.subscribed.add(uri)
            try:
                await self._watch(uri)
            except BaseException:
                if not known:
                    self.subscribed.discard(uri)
                raise
            return
        self.subscribed.discard(uri)
        scope = self._watchers.pop(uri, None)
        if scope is not None:
            scope.cancel()
        elif not self.modern:
            await self.client.unsubscribe_resource(uri)

    async def _watch(self, uri: str) -> None:
        client = self.client
        if client is None:
            return
        if not self.modern:
            await client.subscribe_resource(uri)
            return
        if uri in self._watchers or self._tg is None:
            return
        scope = self._watchers[uri] = anyio.CancelScope()
        self._tg.start_soon(self._listen_resource, client, uri, scope)

    def updated(self, uri: str) -> None:
        """A resource's "updated", on its way to its subscribers (never waiting for them). One for a URI no
        client subscribed to through this upstream is dropped here, counted, before it takes a place in the
        notice queue or a line of the log each (a flood of made-up URIs costs a set look-up apiece)."""
        if uri not in self.subscribed:
            self.updates_unsubscribed += 1
            self.notice_budget.spend()
            if worth_saying(self.updates_unsubscribed - 1, self.updates_unsubscribed):
                log.info("upstream %s: resources/updated for %.200r dropped (not subscribed here; %d so far)",
                         self.name, uri, self.updates_unsubscribed)
            return
        hook = self.hooks.resource_updated
        if hook is not None:
            self.notices.put(("updated", uri), "updated", lambda: hook(cast("Upstream", self), uri))

    async def _listen_resource(self, client: Client, uri: str, scope: anyio.CancelScope) -> None:
        """2026-era upstreams send resource updates only on a listen stream naming the URI."""
        with scope:
            try:
                async with client.listen(resource_subscriptions=[uri]) as sub:
                    async for _event in sub:
                        self.updated(uri)
            except Exception as e:  # noqa: BLE001 - the stream ended; a resubscribe starts another
                log.debug("upstream %s: resource listen on %s ended: %s", self.name, uri, describe_error(e))
        if self._watchers.get(uri) is scope:
            del self._watchers[uri]
