"""The catalog: every upstream's tools, resources and prompts under the names the client sees.

Tools and prompts are exposed as ``<prefix>__<name>`` (prefix defaults to the server name; an empty prefix
wraps a server transparently). Names keep to MCP's 64-character limit and allowed characters; collisions
(names equal but for letter case included) are resolved deterministically (the alphabetically first server
keeps the plain name, others get a hash suffix, lengthened until no other tool has or asks for that name: a
suffixed name never hides another tool).
Resources keep their URIs and are routed to the one server that claims them, by exact URI or URI template
(scheme and authority compared case-insensitively, as RFC 3986 has them): a URI two servers could claim, and a
template that could overlap another server's, is withheld from all of them and reported as a conflict, never
settled by name order.

A tool's identity is ``<server>__<tool>`` (its server's config name and its own name), whatever name exposes
it: rules, allow lists and principals' reach bind to the identity. No tool may be exposed under another
tool's identity, nor under a name the policy governs that is not its own, nor in another configured server's
namespace (``<its name or prefix>__...`` in any letter case, a built-in's included), whether that server is
connected yet or not: such a tool is withheld and the conflict reported, naming both servers (a shadowing
server would otherwise take a guarded tool's name, or take it while its server is still starting). Prompts
follow the same rule (a prompt is text the user sends the model).

A configured upstream's tool, prompt and resource are exposed with the characters of their words a person
cannot see made visible (``tool_words.py``). A configured upstream's tool whose definition changed since it
was first seen is held (``tool_pins.py``): it is in no listing and no call reaches it; ``held`` says why, by
the name that would expose it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable

from mcp.shared.uri_template import UriTemplate
from mcp.types import Prompt, Resource, ResourceTemplate, Tool

from sentinel_mcp.core.secret_names import secret_arguments_of, sensitive_fields_of
from sentinel_mcp.gateway.template_overlap import overlapping
from sentinel_mcp.gateway.tool_pins import Held, ToolPins
from sentinel_mcp.gateway.tool_words import shown_prompt, shown_tool, shown_words

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import Upstream

log = logging.getLogger(__name__)

SEP = "__"
MAX_NAME = 64
_BAD = re.compile(r"[^A-Za-z0-9_.\-]")


def _short_hash(text: str, width: int = 6) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:width]


def exposed_name(prefix: str, name: str, salt: str = "", width: int = 6) -> str:
    """``prefix__name``, sanitized and kept within 64 characters; with ``salt``, ending in ``_`` and
    ``width`` hex digits of its hash (``unique_name`` picks the width that no other name takes)."""
    full = _BAD.sub("_", f"{prefix}{SEP}{name}" if prefix else name)
    if salt:
        full = f"{full[:MAX_NAME - 1 - width]}_{_short_hash(salt, width)}"
    if len(full) > MAX_NAME:
        full = f"{full[:MAX_NAME - 7]}_{_short_hash(prefix + SEP + name)}"
    return full


def unique_name(prefix: str, name: str, salt: str, taken: Callable[[str], bool]) -> str:
    """The name of a tool (or prompt) whose plain name is another's: the first suffixed spelling that
    ``taken`` says no other tool has, wants or is governed under. The suffix grows (6, 8, ... 40 hex digits
    of the salt's hash, then of the salt counted on), so the names are unique by construction and the same
    catalog always gives the same ones: a suffixed name never replaces another tool's route."""
    for width in range(6, 41, 2):
        candidate = exposed_name(prefix, name, salt, width)
        if not taken(candidate):
            return candidate
    n = 0
    while True:  # ends: ``taken`` holds finitely many names, and each count is a new hash
        n += 1
        candidate = exposed_name(prefix, name, f"{salt}#{n}", 40)
        if not taken(candidate):
            return candidate


def identity_of(server: str, tool: str) -> str:
    return f"{server}{SEP}{tool}"


@dataclass(frozen=True)
class ToolRoute:
    upstream: str
    tool: str  # the upstream's own name
    exposed: Tool  # the Tool as the client sees it (renamed, everything else verbatim)

    @property
    def identity(self) -> str:
        return identity_of(self.upstream, self.tool)

    @cached_property
    def sensitive(self) -> frozenset[str]:
        """The argument names the tool declares secret (``sensitive_fields_of``), read from its definition
        once per route, not on every call (a route holds one definition: a changed tool is a new route)."""
        return frozenset(sensitive_fields_of(self.exposed))

    @cached_property
    def secret_arguments(self) -> frozenset[str]:
        """The arguments a person approving a call never reads (``secret_arguments_of``), once per route."""
        return frozenset(secret_arguments_of(self.exposed))


@dataclass(frozen=True)
class PromptRoute:
    upstream: str
    prompt: str
    exposed: Prompt


class Catalog:
    def __init__(self) -> None:
        self.tools: dict[str, ToolRoute] = {}
        self.prompts: dict[str, PromptRoute] = {}
        self.resources: dict[str, tuple[str, Resource]] = {}  # by canonical URI (canonical_uri)
        self.templates: list[tuple[UriTemplate, str, ResourceTemplate]] = []
        self.identities: dict[str, str] = {}  # identity -> exposed name
        self.conflicts: list[str] = []  # tools and resources withheld because they would shadow another's
        self.contested: set[str] = set()  # resource URIs two servers claim: served by neither
        # names the policy governs (guards, bindings, read-only declarations), set by the guard
        self.governed: Callable[[], set[str]] | None = None
        # the governed names the catalog was built with (None: the policy could not say, so every name is)
        self.governance: frozenset[str] | None = frozenset()
        # namespace (a configured server's name or prefix, a built-in's name) -> its server, set by the host
        # from the config: reserved whether that server is connected yet or not
        self.reserved: dict[str, str] = {}
        # the first definitions of configured upstreams' tools (None: not pinned), set by the host
        self.pins: ToolPins | None = None
        self.held: dict[str, str] = {}  # exposed name -> why the tool is held (its definition changed)
        self.held_tools: dict[str, tuple[str, str]] = {}  # exposed name held -> (its upstream, its tool)
        self.version = 0

    def rebuild(self, upstreams: Iterable["Upstream"]) -> None:
        ordered = sorted(upstreams, key=lambda u: u.name)
        owners = {identity_of(up.name, t): up.name for up in ordered for t in up.tools}
        prompt_owners = {identity_of(up.name, p.name): up.name for up in ordered for p in up.prompts}
        governed = self._governed()
        # a policy that cannot say which names it governs governs every name (a guard that fails denies): no
        # tool is exposed under a name that is not its own identity until it can say again
        governs: Callable[[str], bool] = (lambda _n: True) if governed is None else governed.__contains__
        spaces = self._namespaces(ordered)
        conflicts: list[str] = []
        held = self._held(ordered)
        held_names: dict[str, str] = {}
        held_tools: dict[str, tuple[str, str]] = {}
        tools: dict[str, ToolRoute] = {}
        prompts: dict[str, PromptRoute] = {}
        # the names taken, in lower case: two names that differ only by case are one name to a person (and
        # to a client matching names without case), so the later is renamed as on an exact clash
        tool_names: set[str] = set()
        prompt_names: set[str] = set()
        resources: dict[str, tuple[str, Resource]] = {}
        templates: list[tuple[UriTemplate, str, ResourceTemplate]] = []
        offered: dict[str, dict[str, Resource]] = {}  # uri -> server -> its resource
        # every plain name a tool or prompt asks for: a suffixed name never takes one (a tool literally
        # named like another's suffixed name keeps its own name, in any order of servers)
        wanted = {exposed_name(_prefix(up), t) for up in ordered for t in up.tools}
        wanted_prompts = {exposed_name(_prefix(up), p.name) for up in ordered for p in up.prompts}
        for up in ordered:
            prefix = _prefix(up)
            for tname in sorted(up.tools):
                tool = up.tools[tname]
                name = exposed_name(prefix, tname)
                own = identity_of(up.name, tname)
                if own in held:
                    why = held[own]
                    held_names[name] = why.reason() if isinstance(why, Held) else why
                    held_tools[name] = (up.name, tname)
                    continue
                if governed is None and name != own:
                    conflicts.append(_ungoverned(up.name, tname, name))
                    continue
                other = _foreign(name, up.name, spaces, (up.name, up.prefix)) or (
                    owners.get(name) or name.split(SEP, 1)[0]
                    if name != own and (name in owners or governs(name)) else None
                )
                if other is None and name.lower() in tool_names and governed is None:
                    conflicts.append(_ungoverned(up.name, tname, name))  # a new name would not be known free
                    continue
                if other is None and name.lower() in tool_names:
                    log.warning("tool name collision on %r: %s.%s renamed", name, up.name, tname)

                    def taken(n: str, own: str = own) -> bool:
                        return (n.lower() in tool_names or n in wanted or n in held_names
                                or (n != own and (n in owners or governs(n))))

                    name = unique_name(prefix, tname, f"{up.name}:{tname}", taken)
                    other = _foreign(name, up.name, spaces, (up.name, up.prefix))
                if other is not None:
                    conflicts.append(_shadowing("tool", up.name, tname, name, other))
                    continue
                exposed = (tool.model_copy(update={"name": name}) if up.builtin
                           else shown_tool(tool, name, up.name))
                tools[name] = ToolRoute(up.name, tname, exposed)
                tool_names.add(name.lower())
            for prompt in sorted(up.prompts, key=lambda p: p.name):
                name = exposed_name(prefix, prompt.name)
                own = identity_of(up.name, prompt.name)
                other = _foreign(name, up.name, spaces, (up.name, up.prefix)) or (
                    prompt_owners[name] if name != own and name in prompt_owners else None
                )
                if other is None and name.lower() in prompt_names:

                    def prompt_taken(n: str, own: str = own) -> bool:
                        return (n.lower() in prompt_names or n in wanted_prompts
                                or (n != own and n in prompt_owners))

                    name = unique_name(prefix, prompt.name, f"{up.name}:{prompt.name}", prompt_taken)
                    other = _foreign(name, up.name, spaces, (up.name, up.prefix))
                if other is not None:  # a prompt is text the user sends the model: never another's name
                    conflicts.append(_shadowing("prompt", up.name, prompt.name, name, other))
                    continue
                shown = (prompt.model_copy(update={"name": name}) if up.builtin
                         else shown_prompt(prompt, name, up.name))
                prompts[name] = PromptRoute(up.name, prompt.name, shown)
                prompt_names.add(name.lower())
            for res in up.resources:
                res = res if up.builtin else shown_words(res, up.name)
                offered.setdefault(canonical_uri(res.uri), {}).setdefault(up.name, res)
            for tpl in up.resource_templates:
                try:
                    parsed = UriTemplate.parse(canonical_uri(tpl.uri_template))
                    templates.append((parsed, up.name, tpl if up.builtin else shown_words(tpl, up.name)))
                except Exception:  # noqa: BLE001 - a bad template from one upstream is skipped, not fatal
                    log.warning("upstream %s: unusable URI template %r", up.name, tpl.uri_template)
        kept = _without_overlaps(templates, conflicts)
        contested: set[str] = set()
        for uri, by in offered.items():
            claimants = set(by) | {u for t, u, _ in templates if _matches(t, uri)}
            if len(claimants) > 1:  # never settled by name order: the URI is served by nobody
                contested.add(uri)
                names = ", ".join(repr(n) for n in sorted(claimants))
                conflicts.append(
                    f"servers {names} all claim the resource {uri[:200]!r} (as a URI or a template): it is "
                    "withheld from all of them (give each server its own URI scheme)"
                )
                continue
            (owner, res), = by.items()
            resources[uri] = (owner, res)
        for c in conflicts:
            if c not in self.conflicts:
                log.error("catalog: %s", c)
        self.tools, self.prompts, self.resources = tools, prompts, resources
        self.templates = kept
        self.contested = contested
        self.identities = {r.identity: n for n, r in tools.items()}
        self.conflicts = conflicts
        for name, why in held_names.items():
            if self.held.get(name) != why:
                log.error("catalog: %s", why)
        self.held, self.held_tools = held_names, held_tools
        self.governance = None if governed is None else frozenset(governed)
        self.version += 1

    def _held(self, ordered: list["Upstream"]) -> dict[str, Held | str]:
        """The configured upstreams' tools whose definitions differ from their pins (those seen for the
        first time are pinned now)."""
        if self.pins is None:
            return {}
        listed = {
            identity_of(up.name, t): tool for up in ordered if not up.builtin for t, tool in up.tools.items()
        }
        servers = {identity_of(up.name, t): up.name for up in ordered if not up.builtin for t in up.tools}
        try:
            return self.pins.check(listed, servers)
        except OSError as e:  # the pins cannot be written: nothing new is trusted on its word
            log.error("catalog: the tool pins file %s cannot be written: %s", self.pins.path, e)
            why = f"the tool pins file {self.pins.path} cannot be written ({e.strerror or e})"
            return {identity: f"tool {identity} is held: {why}" for identity in listed}

    def _namespaces(self, ordered: list["Upstream"]) -> dict[str, str]:
        """Each server's namespaces (its name, its prefix, in lower case) -> that server: the configured ones
        (connected or not) and those of the upstreams at hand."""
        spaces = {space.lower(): server for space, server in self.reserved.items()}
        for up in ordered:
            for space in (up.name, up.prefix):
                if space:
                    spaces.setdefault(space.lower(), up.name)
        return spaces

    def _governed(self) -> set[str] | None:
        """The names the policy governs; None when it cannot say (it raised, or answered something that is not
        a collection of names): then every name counts as governed."""
        if self.governed is None:
            return set()
        try:
            names = self.governed()
            if not isinstance(names, (set, frozenset, list, tuple)) or not all(type(n) is str for n in names):
                raise TypeError(f"governed names of type {type(names).__name__}, not a collection of names")
            return {n for n in names if not n.endswith("*")}
        except Exception:  # noqa: BLE001 - a guard that fails denies: said once per failure, not every check
            if self.governance is not None:
                log.exception("catalog: the policy cannot say which names it governs: tools are exposed "
                              "under their own identities only until it can")
            return None

    def governance_moved(self) -> bool:
        """Whether the policy's governed names differ from those the catalog was built with (a rulebase was
        reloaded, or a policy that could not say can again): the catalog is then to be rebuilt."""
        governed = self._governed()
        return (None if governed is None else frozenset(governed)) != self.governance

    def route(self, name: str, *, by_identity: bool = False) -> ToolRoute | None:
        """The route of an exposed name, or (``by_identity``: the policy's own calls) of an identity."""
        if by_identity:
            exposed = self.identities.get(name)
            return self.tools.get(exposed) if exposed is not None else None
        return self.tools.get(name)

    def route_resource(self, uri: str) -> str | None:
        """The one server a URI belongs to: its exact URI or a template's, and no other server's. A URI two
        servers could claim (two templates, a URI under another's template) is nobody's: a read of it is
        refused rather than sent to whichever server sorts first."""
        uri = canonical_uri(uri)
        if uri in self.contested:
            return None
        hit = self.resources.get(uri)
        claimants = {hit[0]} if hit is not None else set()
        claimants.update(upstream for template, upstream, _ in self.templates if _matches(template, uri))
        return claimants.pop() if len(claimants) == 1 else None

    def tool_list(self) -> list[Tool]:
        return [r.exposed for r in self.tools.values()]


def _prefix(up: "Upstream") -> str:
    """The namespace a server's tools and prompts are exposed in (its name unless the config gives one)."""
    return up.name if up.prefix is None else up.prefix


def canonical_uri(uri: str) -> str:
    """``uri`` (or a URI template) with its scheme and authority in lower case: RFC 3986 makes them
    case-insensitive, so ``Toolbox://STATIC`` is claimed and routed as ``toolbox://static`` is (a look-alike
    spelling never reaches another server). The path, query and fragment keep their case (they are
    case-sensitive)."""
    scheme, sep, rest = uri.partition("://")
    if not sep or not scheme or not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
        return uri
    end = min((i for i in (rest.find(c) for c in "/?#") if i >= 0), default=len(rest))
    return f"{scheme.lower()}://{rest[:end].lower()}{rest[end:]}"


def _foreign(
    name: str, server: str, spaces: dict[str, str], own: tuple[str | None, ...] = ()
) -> str | None:
    """The other server whose namespace (``<space>__...``) exposed ``name`` is in, if any. ``own``: the
    serving server's own namespaces (its name, its prefix): servers the config gives one prefix share it
    (their names there are told apart by the tool-name rule, as before)."""
    # a namespace in another letter case is the same namespace: a look-alike ``Airline__book_flight`` is not
    # another server's to list beside ``airline__book_flight`` (exposed names are ASCII: lower() folds them)
    mine = {o.lower() for o in own if o}
    cut = name.find(SEP)
    while cut > 0:
        space = name[:cut].lower()
        owner = spaces.get(space)
        if owner is not None and owner != server and space not in mine:
            return owner
        cut = name.find(SEP, cut + 1)
    return None


def _ungoverned(server: str, own: str, name: str) -> str:
    return (
        f"server {server!r} exposes a tool named {name!r}, not its own identity "
        f"{identity_of(server, own)!r}, "
        "and the policy cannot say which tool names it governs: it is withheld until the policy can"
    )


def _shadowing(kind: str, server: str, own: str, name: str, other: str) -> str:
    return (
        f"server {server!r} exposes a {kind} named {name!r}, a name of server {other!r}: servers {server!r} "
        f"and {other!r} collide, so {server}.{own} is withheld (give {server!r} a prefix)"
    )


def _without_overlaps(
    templates: list[tuple[UriTemplate, str, ResourceTemplate]], conflicts: list[str]
) -> list[tuple[UriTemplate, str, ResourceTemplate]]:
    """The templates no other server's template could overlap; each one withheld is a reported conflict.
    (A URI under a withheld template is still contested: the caller checks URIs against every template.)"""
    hit = overlapping([(up, canonical_uri(tpl.uri_template)) for _, up, tpl in templates])
    for i in sorted(hit):
        _, up, tpl = templates[i]
        conflicts.append(
            f"server {up!r}'s resource template {tpl.uri_template[:200]!r} could match the same URIs as "
            "another server's template: it is withheld from all of them (give each server its own URI scheme)"
        )
    return [t for i, t in enumerate(templates) if i not in hit]


def _matches(template: UriTemplate, uri: str) -> bool:
    try:
        return template.match(uri) is not None
    except Exception:  # noqa: BLE001 - an upstream's odd template matches nothing, it does not break reads
        return False
