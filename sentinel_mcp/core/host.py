"""What the gateway's HTTP app shares with what is mounted on it (A2A, the web console, /metrics).

The app is built before its lifespan starts the gateway, so what is mounted reads the running gateway from
here once it exists. Each mounted part adds its own lifespan to ``lifespans`` instead of replacing the app's:
the app's lifespan starts the gateway, then enters these in order (each gets the running gateway), and leaves
them in reverse before it stops the gateway.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Callable

# entered with the running gateway once it has started; left before it stops
Lifespan = Callable[[Any], AbstractAsyncContextManager[None]]


@dataclass(slots=True)
class HostState:
    # the running gateway (``app.runtime.Runtime``; core cannot name the application floor), None until started
    runtime: Any = None
    mcp_app: Any = None  # the streamable HTTP endpoint, created with the runtime
    tls_status: Callable[[], tuple[Any, list[str]]] | None = None  # the front's TLS health, when it serves TLS
    a2a_service: Any = None  # the A2A participant, when mounted (its streams end when the server shuts down)
    console_inbox: Any = None  # the web console's inbox, when mounted
    lifespans: list[Lifespan] = field(default_factory=list)

    def add_lifespan(self, lifespan: Lifespan) -> None:
        self.lifespans.append(lifespan)
