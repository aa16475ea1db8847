"""How an upstream's MCP session is shared among principals (``isolation``), and the bounds of keeping one
per principal. Mixed into every configured server's section (``config.ServerCommon``).

An upstream that keeps state per session or per client (a browser's logged-in cookies, a shell's working
directory, a notes server's "current user", resources subscribed) shares that state among every principal
calling it through one session: ``"per_principal"`` gives each principal a session of its own (a process of
its own over stdio, an MCP session and connection of its own over HTTP), opened on its first call, at most
``max_principals`` at once, each closed once idle for ``principal_idle_seconds``
(``gateway/principal_sessions.py``). The catalog stays one, listed from the shared session.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

MAX_PRINCIPAL_SESSIONS = 1_024  # processes or connections per server: past it is a typo, not a wish


class SessionIsolation(BaseModel):
    # "shared": one session for every caller (the default: one process, state shared by all principals);
    # "per_principal": one session per principal (a process each over stdio)
    isolation: Literal["shared", "per_principal"] = "shared"
    # the most principals with a session of their own at once: one more is refused, with the reason
    max_principals: int = Field(16, ge=1, le=MAX_PRINCIPAL_SESSIONS, strict=True)
    # a principal's session unused this long is closed (its process ended); its next call opens a new one
    principal_idle_seconds: float = Field(600.0, gt=0, le=86_400.0)
