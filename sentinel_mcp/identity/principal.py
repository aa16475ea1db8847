"""A principal: the identity Sentinel establishes for a caller, never one the caller states.

stdio (and in-process) callers are the local user, ``owner``; HTTP and A2A callers are whoever their token,
API key or client certificate (mutual TLS) names. Consents, approvals, ``user`` facts, A2A tasks and the audit
view belong to a principal, and a principal may be limited to some tools and upstreams.
"""

from __future__ import annotations

import fnmatch
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
    def unrestricted(self) -> bool:
        return self.tools == ("*",) and self.upstreams == ("*",)

    def may_use(self, server: str) -> bool:
        """Whether this principal may use upstream ``server`` at all (its resources and prompts)."""
        return self.upstreams == ("*",) or any(fnmatch.fnmatchcase(server, p) for p in self.upstreams)

    def may_reach(self, server: str, tool: str) -> bool:
        """Whether this principal may see and call ``tool`` of upstream ``server`` (its own name)."""
        if self.unrestricted:
            return True
        identity = f"{server}__{tool}"
        return (any(fnmatch.fnmatchcase(server, p) for p in self.upstreams)
                and any(fnmatch.fnmatchcase(identity, p) for p in self.tools))


OWNER = Principal(OWNER_NAME, "local")  # stdio, in-process, the CLI, and HTTP with the owner's token
ANONYMOUS = Principal(ANONYMOUS_NAME, "anonymous")  # every HTTP caller when the config says "auth": "none"
INTERNAL = Principal(INTERNAL_NAME, "internal")  # built-ins' and the solver's own calls
