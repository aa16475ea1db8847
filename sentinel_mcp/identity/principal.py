"""A principal: the identity Sentinel establishes for a caller, never one the caller states.

stdio (and in-process) callers are the local user, ``owner``; HTTP and A2A callers are whoever their token,
API key or client certificate (mutual TLS) names. Consents, approvals, ``user`` facts, A2A tasks and the audit
view belong to a principal, and a principal may be limited to some tools and upstreams.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Literal

PrincipalKind = Literal["local", "token", "anonymous", "certificate", "internal"]

OWNER_NAME = "owner"
ANONYMOUS_NAME = "anonymous"
INTERNAL_NAME = "sentinel"


@dataclass(frozen=True)
class Principal:
    name: str
    kind: PrincipalKind
    # glob patterns over a tool's identity (<server>__<tool>) and over server names; ("*",) is everything
    tools: tuple[str, ...] = ("*",)
    upstreams: tuple[str, ...] = ("*",)
    # another agent (an A2A key's name), not a person: its client never answers for the user; the questions
    # its calls raise are the owner's to answer (the console inbox)
    agent: bool = False

    @property
    def is_owner(self) -> bool:
        """The device's/machine's own user: may manage other principals' consents."""
        return self.name == OWNER_NAME and self.kind in ("local", "token", "certificate")

    @property
    def is_operator(self) -> bool:
        """Who reads every principal's figures (/metrics' series, /healthz's details): the owner, as the
        console's everyone-views. Reaching every tool is not it: bob with ``*`` reach is still not alice, and
        her calls' counts, errors and latencies are not his to read."""
        return self.is_owner and not self.agent

    @property
    def unrestricted(self) -> bool:
        return self.tools == ("*",) and self.upstreams == ("*",)

    def may_use(self, server: str) -> bool:
        """Whether this principal may use upstream ``server`` at all (its resources and prompts)."""
        return self.upstreams == ("*",) or any(fnmatch.fnmatchcase(server, p) for p in self.upstreams)

    def may_read(self, server: str) -> bool:
        """Whether this principal may see upstream ``server``'s resources, resource templates, prompts and
        completions: it may use the server and its ``tools`` patterns reach every tool the server could have
        (one covers ``<server>__*``). A narrower ``tools`` list would otherwise be sidestepped through them
        (the built-in ``sentinel``'s rulebase and facts resources against its policy tools)."""
        if not self.may_use(server):
            return False
        return self.tools == ("*",) or any(_covers_namespace(p, f"{server}__") for p in self.tools)

    def may_reach(self, server: str, tool: str) -> bool:
        """Whether this principal may see and call ``tool`` of upstream ``server`` (its own name)."""
        if self.unrestricted:
            return True
        identity = f"{server}__{tool}"
        return (any(fnmatch.fnmatchcase(server, p) for p in self.upstreams)
                and any(fnmatch.fnmatchcase(identity, p) for p in self.tools))

    def may_reach_some(self, server: str) -> bool:
        """Whether this principal may use ``server`` and some ``tools`` pattern could name one of its tools
        (its literal start and ``<server>__`` agree): what may be said of the server when its tools are not
        known (it is down)."""
        if self.unrestricted:
            return True
        namespace = f"{server}__"
        starts = (re.split(r"[*?\[]", p, maxsplit=1)[0] for p in self.tools)
        return self.may_use(server) and any(
            s.startswith(namespace) or namespace.startswith(s) for s in starts)


def _covers_namespace(pattern: str, namespace: str) -> bool:
    """Whether glob ``pattern`` matches every name starting with ``namespace``: a literal start (no glob
    characters) that ``namespace`` begins with, then only ``*``. Conservative: a pattern that might cover it
    in some other way (``*__*``) is taken not to, so reach is never granted by a pattern read too widely."""
    stem = pattern.rstrip("*")
    return (stem != pattern and not any(c in stem for c in "*?[")
            and namespace.startswith(stem))


OWNER = Principal(OWNER_NAME, "local")  # stdio, in-process, the CLI, and HTTP with the owner's token
ANONYMOUS = Principal(ANONYMOUS_NAME, "anonymous")  # every HTTP caller when the config says "auth": "none"
INTERNAL = Principal(INTERNAL_NAME, "internal")  # built-ins' and the solver's own calls
