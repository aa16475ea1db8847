"""The gateway's catalog as its ports show it (``core.port.GatewayPort`` and ``FrontPort``): tools, resources,
templates and prompts a principal may use, and the upstream requests the front relays.

The front, A2A and the policy see only these methods; the upstream manager and the catalog stay the engine's.
Something a principal may not use is as unknown to it as something that does not exist (the same error).
"""

from __future__ import annotations

import difflib
import logging
from collections import Counter
from contextlib import contextmanager
from typing import Any, Awaitable, Callable, Iterator

from mcp.types import (
    CompleteResult,
    Completion,
    GetPromptResult,
    Prompt,
    PromptReference,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    ResourceTemplateReference,
    Tool,
)

from sentinel_mcp.config import Config
from sentinel_mcp.gateway.call_rates import CallRates
from sentinel_mcp.core.builtin import declares_self_confirming
from sentinel_mcp.core.call_meta import call_meta
from sentinel_mcp.core.display_text import Marked, compose
from sentinel_mcp.core.echoed_text import ECHO_LIMIT, echoed
from sentinel_mcp.core.port import NotInCatalog
from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.gateway.catalog import PromptRoute
from sentinel_mcp.gateway.consent_gate import ConsentGate
from sentinel_mcp.gateway.first_connections import first_connecting, until_first_listed
from sentinel_mcp.gateway.foreign_resources import without_foreign_contents
from sentinel_mcp.gateway.principal_sessions import on_own_session
from sentinel_mcp.gateway.result_shape import ResultRefused, too_many_blocks
from sentinel_mcp.core.own_voice import attributed_contents
from sentinel_mcp.gateway.shown_result import shown_blocks
from sentinel_mcp.gateway.tool_words import shown_prompt_result, visible
from sentinel_mcp.gateway.own_results import without_upstream_stamp
from sentinel_mcp.gateway.upstream import BuiltinTarget, Upstream
from sentinel_mcp.gateway.upstream_client import UpstreamUnavailable
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.identity.principal import Principal

log = logging.getLogger(__name__)


class CatalogView:
    config: Config
    manager: UpstreamManager
    consent_gate: ConsentGate | None
    calls_in_flight: Counter[str]  # Gateway's: one principal's calls running at once
    max_calls_in_flight: int
    rates: CallRates  # Gateway's: each principal's calls a minute

    def _over_cap(self, key: str, said: str) -> None:
        raise NotImplementedError  # Gateway's: said in the log once a minute

    def _take_place(self, name: str) -> str | None:
        """One of ``name``'s places among its calls running at once, and one call of its rate; else why not
        (said in the log). ``_give_place`` gives the place back."""
        # ``get``, and ``pop`` below: a ``Counter``'s missing key and its ``del`` are Python calls (issue 21)
        running = self.calls_in_flight.get(name, 0)
        if running >= self.max_calls_in_flight:
            self._over_cap(name, f"{name} has {self.max_calls_in_flight} calls running, the most one caller "
                                 "may; more are refused until one ends")
            return (f"{self.max_calls_in_flight} calls of yours are already running (the most one caller may "
                    "have at once); call again when one has finished")
        wait = self.rates.take(name)
        if wait is not None:
            rate = self.rates.rate_of(name)
            self._over_cap(f"{name}\0rate", f"{name} made its {rate} calls a minute; more are refused until "
                                            "its rate allows")
            return (f"you have made the {rate} calls a minute your principal may "
                    f"make; the next one is taken in {max(wait, 0.01):.2f} s")
        self.calls_in_flight[name] = self.calls_in_flight.get(name, 0) + 1  # read again: assume nothing
        return None

    def _give_place(self, name: str) -> None:
        left = self.calls_in_flight.get(name, 0) - 1
        if left:
            self.calls_in_flight[name] = left
        else:
            self.calls_in_flight.pop(name, None)

    @contextmanager
    def _request_held(self, principal: Principal) -> Iterator[None]:
        """A resource read, a prompt or a completion counts among its principal's calls running at once
        (``Gateway.run``'s share): outside it, one principal held any number of a slow upstream's reads
        open."""
        refused = self._take_place(principal.name)
        if refused is not None:
            raise UpstreamUnavailable(f"Sentinel refused this request: {refused}")
        try:
            yield
        finally:
            self._give_place(principal.name)

    async def _after_first_connections(self, principal: Principal, found: Callable[[], bool]) -> bool:
        """A resource, prompt or completion's reference not there: wait for the first connections of the
        upstreams ``principal`` may read, or until ``found()`` (first_connections.py), the wait counted among
        its requests; True if there were any (look it up again)."""
        if not first_connecting(self.manager.upstreams.values(), principal.may_read):
            return False
        with self._request_held(principal):
            return await until_first_listed(self.manager.upstreams.values(), principal.may_read, found)

    # ------------------------------------------------------------------ tools
    def find_tool(self, name: str) -> Tool | None:
        """An exposed name's tool, or a tool's identity's (the policy names tools by identity)."""
        catalog = self.manager.catalog
        route = catalog.route(name) or catalog.route(name, by_identity=True)
        return route.exposed if route else None

    def withheld_personal(self, name: str, principal: str) -> str | None:
        """The kind of personal data tool ``name`` reads that ``principal`` has not consented to (None: none);
        the policy's introspection tools keep facts from such tools away from that principal."""
        catalog = self.manager.catalog
        route = catalog.route(name) or catalog.route(name, by_identity=True)
        if route is None or self.consent_gate is None:
            return None
        return self.consent_gate.withheld_kind(route.exposed, route.identity, principal)

    def list_catalog_tools(self, principal: Principal | None = None) -> list[Tool]:
        """The catalog, or the part of it ``principal`` may reach."""
        if principal is None or principal.unrestricted:
            return self.manager.catalog.tool_list()
        return [
            r.exposed for r in self.manager.catalog.tools.values() if principal.may_reach(r.upstream, r.tool)
        ]

    def catalog_tool(self, name: str, principal: Principal | None = None) -> Tool | None:
        """The first tool named ``name`` in ``list_catalog_tools(principal)`` (None: none), found by its route
        rather than by listing the catalog (and, for a principal limited to some tools, matching its patterns
        against every tool): the lean call path asks it on each call with arguments. A route is kept under
        the name its tool is shown by; should the two ever differ, or no route hold the name, the list is
        searched as before."""
        route = self.manager.catalog.tools.get(name)
        if route is None or route.exposed.name != name:
            return next((t for t in self.list_catalog_tools(principal) if t.name == name), None)
        if principal is None or principal.unrestricted or principal.may_reach(route.upstream, route.tool):
            return route.exposed
        return None

    def catalog_by_identity(self, principal: Principal | None = None) -> list[Tool]:
        """``list_catalog_tools`` named as rules name them, by identity (``<server>__<tool>``): a check of a
        rulebase compares its guards with these (a prefix or a shortened name exposes a tool under another
        name, which no guard applies to)."""
        return [
            r.exposed.model_copy(update={"name": r.identity})
            for r in self.manager.catalog.tools.values()
            if principal is None or principal.unrestricted or principal.may_reach(r.upstream, r.tool)
        ]

    def identity_of(self, name: str) -> ToolRef | None:
        """The tool an exposed name is, by identity (``core.port.GatewayPort.identity_of``)."""
        route = self.manager.catalog.route(name)
        return ToolRef(route.upstream, route.tool) if route is not None else None

    def upstream_of(self, name: str) -> str | None:
        route = self.manager.catalog.tools.get(name)
        return route.upstream if route is not None else None

    def mounted_by_sentinel(self, name: str) -> bool:
        route = self.manager.catalog.tools.get(name)
        up = self.manager.upstreams.get(route.upstream) if route is not None else None
        return (up is not None and isinstance(up.target, BuiltinTarget)
                and up.name in self.config.sentinel.builtins)

    def pushes_mid_call(self, name: str) -> bool:
        route = self.manager.catalog.tools.get(name)
        up = self.manager.upstreams.get(route.upstream) if route is not None else None
        # a built-in not built yet answers in the era its description recorded (it is built by this call)
        return up is not None and up.protocol_version is not None and not up.modern

    def self_confirming(self, name: str) -> bool:
        """Whether calls to the catalog tool ``name`` are left to its trusted built-in's own confirmation."""
        route = self.manager.catalog.route(name)
        up = self.manager.upstreams.get(route.upstream) if route else None
        return bool(route and up and self._self_confirming(up, route.exposed))

    def _self_confirming(self, up: Upstream, tool: Tool) -> bool:
        """A trust decision, not a claim: only a built-in Sentinel mounted itself, named in the config's trust
        list, may let its own confirmation replace the gateway's; a configured upstream's ``_meta`` counts for
        nothing (it is never a ``BuiltinTarget``)."""
        return (
            isinstance(up.target, BuiltinTarget)
            and up.name in self.config.sentinel.builtins
            and up.name in self.config.sentinel.policy.self_confirming
            and declares_self_confirming(tool.meta)
        )

    def _unknown_tool_message(self, name: str, principal: Principal) -> str:
        """Why ``name`` is not there, naming only what ``principal`` may use: a held tool or a down upstream
        of another principal's is as one that does not exist (named, it told of that server and its state)."""
        catalog = self.manager.catalog
        held = catalog.held.get(name)
        owner = catalog.held_tools.get(name)
        if held is not None and owner is not None and principal.may_reach(*owner):
            return held  # its upstream changed it since it was pinned: the caller is told so
        names = [t.name for t in self.list_catalog_tools(principal)]
        close = difflib.get_close_matches(name[:ECHO_LIMIT], names, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        down = [u.name for u in self.manager.upstreams.values()
                if u.state != "ready" and principal.may_reach_some(u.name)]
        if down:
            hint += f" (not connected now: {', '.join(down)})"
        return compose("unknown tool ", Marked(repr(echoed(name))), hint)  # (a shown text's repr: no hidden)

    # ------------------------------------------------------------------ resources and prompts
    def list_resources(self, principal: Principal) -> list[Resource]:
        return [r for up, r in self.manager.catalog.resources.values() if principal.may_read(up)]

    def list_resource_templates(self, principal: Principal) -> list[ResourceTemplate]:
        return [t for _, up, t in self.manager.catalog.templates if principal.may_read(up)]

    def list_prompts(self, principal: Principal) -> list[Prompt]:
        return [r.exposed for r in self.manager.catalog.prompts.values() if principal.may_read(r.upstream)]

    def resource_upstream(self, uri: str, principal: Principal | None = None) -> Upstream:
        name = self.manager.catalog.route_resource(uri)
        if name is None or (principal is not None and not principal.may_read(name)):
            raise NotInCatalog(uri)
        return self.manager.upstreams[name]

    def may_read_resource(self, uri: str, principal: Principal) -> bool:
        """Whether ``principal``'s ``resources/read`` of ``uri`` would reach its upstream (its listing and its
        read's own rule): the console shows no more of a resource than that."""
        try:
            self.resource_upstream(uri, principal)
        except NotInCatalog:
            return False
        return True

    async def read_resource(
        self, uri: str, principal: Principal, client: str | None, *, session: str = ""
    ) -> ReadResourceResult:
        try:
            up = self.resource_upstream(uri, principal)
        except NotInCatalog:  # perhaps one of an upstream still making its first connection's
            if not await self._after_first_connections(principal,
                                                       lambda: self.may_read_resource(uri, principal)):
                raise
            up = self.resource_upstream(uri, principal)
        # a built-in scopes what it shows to the caller (its builds, its conversation), as for its tools; no
        # session given ("") names none, and a built-in shows no session's state for it
        meta = (
            call_meta(session, client, "client", principal.name)
            if isinstance(up.target, BuiltinTarget) else None
        )
        with self._request_held(principal):
            try:
                result: ReadResourceResult = await (
                    up.read_resource(uri, meta=meta) if up.principals is None  # per principal: its own
                    else on_own_session(up, principal.name, lambda own: own.read_resource(uri, meta=meta)))
            except ResultRefused as e:  # as it was parsed (result_shape.py)
                raise UpstreamUnavailable(
                    compose("upstream ", up.name, "'s resource ", echoed(uri), ": ", e.why)) from None
        bomb = None if up.builtin else too_many_blocks(len(result.contents), "resource contents")
        if bomb is not None:  # refused before an item is looked at (shown_result.py)
            raise UpstreamUnavailable(compose("upstream ", up.name, "'s resource ", echoed(uri), ": ", bomb))
        # attributed before Sentinel's own note (a withheld resource's) takes a foreign item's place: the note
        # is Sentinel's words, never the server's
        said = None if up.builtin else attributed_contents(result.contents, up.name)
        if said is not None:  # read by the model as a result's text is (own_voice.py)
            result = result.model_copy(update={"contents": said})
        contents = without_foreign_contents(
            result.contents, uri, up.name, self.manager.catalog, builtin=up.builtin
        )
        if contents is not None:  # another server's URI (or Sentinel's): not this one's to answer with
            result = result.model_copy(update={"contents": contents})
        return without_upstream_stamp(result)

    def _prompt_route(self, name: str, principal: Principal) -> PromptRoute | None:
        """The prompt's route, if ``principal`` may read its upstream."""
        route = self.manager.catalog.prompts.get(name)
        return route if route is not None and principal.may_read(route.upstream) else None

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None, principal: Principal
    ) -> GetPromptResult:
        route = self._prompt_route(name, principal)
        if route is None and await self._after_first_connections(
                principal, lambda: self._prompt_route(name, principal) is not None):
            route = self._prompt_route(name, principal)
        if route is None:
            raise NotInCatalog(name)
        with self._request_held(principal):
            up = self.manager.upstreams[route.upstream]
            try:
                result: GetPromptResult = await (
                    up.get_prompt(route.prompt, arguments) if up.principals is None  # per principal: its own
                    else on_own_session(up, principal.name,
                                        lambda own: own.get_prompt(route.prompt, arguments)))
            except ResultRefused as e:  # as it was parsed (result_shape.py)
                why = f"upstream {up.name}'s prompt {route.prompt[:100]!r}: {e.why}"
                raise UpstreamUnavailable(why) from None
        if not up.builtin:  # the user's words to the model: nothing in them the user cannot see
            bomb = too_many_blocks(len(result.messages), "messages")
            if bomb is not None:  # refused before a message is looked at (shown_result.py)
                raise UpstreamUnavailable(f"upstream {up.name}'s prompt {route.prompt[:100]!r}: {bomb}")
            result = shown_prompt_result(result, up.name)
        shown = [shown_blocks([m.content], up.name, self.manager.catalog, builtin=up.builtin)
                 for m in result.messages]
        if any(s is not None for s in shown):  # in Sentinel's voice, another's resource, an icon to fetch
            messages = [m if s is None else m.model_copy(update={"content": s[0]})
                        for m, s in zip(result.messages, shown)]
            result = result.model_copy(update={"messages": messages})
        return without_upstream_stamp(result)

    def _completion_target(
        self, ref: Any, principal: Principal
    ) -> tuple[str, PromptReference | ResourceTemplateReference] | None:
        """The upstream a completion's prompt or resource template is ``principal``'s to read at, and the
        reference as that upstream names it (None: not there for it)."""
        catalog = self.manager.catalog
        if isinstance(ref, PromptReference):
            route = catalog.prompts.get(ref.name)
            if route is None or not principal.may_read(route.upstream):
                return None
            return route.upstream, ref.model_copy(update={"name": route.prompt})
        found = next(
            (u for _, u, t in catalog.templates if t.uri_template == ref.uri and principal.may_read(u)), None
        )
        if found is None:
            found = catalog.route_resource(ref.uri)
        if found is None or not principal.may_read(found):
            return None
        return found, ref

    async def complete(
        self, ref: Any, argument: dict[str, Any], context: dict[str, Any] | None, principal: Principal
    ) -> CompleteResult:
        if not isinstance(ref, (PromptReference, ResourceTemplateReference)):
            raise NotInCatalog("unknown completion reference")
        target = self._completion_target(ref, principal)
        # perhaps one of an upstream still making its first connection's, as for prompts/get
        if target is None and await self._after_first_connections(
                principal, lambda: self._completion_target(ref, principal) is not None):
            target = self._completion_target(ref, principal)
        if target is None:
            raise NotInCatalog(compose("unknown prompt: ", echoed(ref.name))
                               if isinstance(ref, PromptReference) else ref.uri)
        upstream, upstream_ref = target
        up = self.manager.upstreams[upstream]
        if not up.offers("completions"):
            return CompleteResult(completion=Completion(values=[], has_more=False))  # nothing to suggest
        with self._request_held(principal):
            done = await (  # per principal: on its own session
                up.complete(upstream_ref, argument, context) if up.principals is None
                else on_own_session(up, principal.name,
                                    lambda own: own.complete(upstream_ref, argument, context)))
            return _bounded(without_upstream_stamp(done))

    async def set_log_level(self, level: str | None) -> None:
        for up in list(self.manager.upstreams.values()):
            if up.log_level != level:
                try:
                    await up.set_log_level(level)
                except Exception as e:  # noqa: BLE001 - one upstream's logging never fails the client's request
                    log.info("upstream %s: log level not applied: %s", up.name, e)

    def roots_changed(self, principal: str) -> None:
        for up in list(self.manager.upstreams.values()):
            own = up.principals.open().get(principal) if up.principals is not None else up
            if own is not None and own.roots_changed(principal):
                log.debug("upstream %s: told its roots changed", up.name)

    def on_upstream_notices(
        self,
        resource_updated: Callable[[str, str, str | None], Awaitable[None]],
        elicit_complete: Callable[[str, str, str | None], Awaitable[None]],
    ) -> None:
        self.manager.on_resource_updated = resource_updated
        self.manager.on_elicit_complete = elicit_complete


MAX_COMPLETION_VALUES = 100  # the spec's cap on ``completion.values``
# one suggested value: an argument a person picks from a list, never the megabytes an answer may hold
MAX_COMPLETION_CHARS = 1_000


def _offered(value: str) -> bool:
    """A suggested value a person can pick as they see it: not too long, and every character one they can
    see (one with a hidden character is left out: shown made visible, it would not be the value the upstream
    gets; sent as it is, it would carry words the person never saw)."""
    return len(value) <= MAX_COMPLETION_CHARS and visible(value) == value


def _bounded(result: CompleteResult) -> CompleteResult:
    """At most 100 values, as the spec allows, each one a person can see whole (``_offered``: a longer one,
    or one with hidden characters, is left out: cut or changed, it would suggest a value the upstream never
    offered); ``total`` never below the values the upstream gave, and ``hasMore`` set when some were left out
    (an upstream may send any number, or a total that says fewer)."""
    done = result.completion
    given = len(done.values)
    total = done.total if done.total is None or done.total >= given else given
    offered = all(_offered(v) for v in done.values[:MAX_COMPLETION_VALUES])
    if given <= MAX_COMPLETION_VALUES and total == done.total and offered:
        return result
    kept = [v for v in done.values if _offered(v)][:MAX_COMPLETION_VALUES]
    cut = len(kept) < given
    completion = done.model_copy(update={
        "values": kept,
        "total": total,
        "has_more": True if cut else done.has_more,
    })
    return result.model_copy(update={"completion": completion})
