"""What the gateway's HTTP app shares with what is mounted on it (A2A, the web console, /metrics).

The app is built before its lifespan starts the gateway, so what is mounted reads the running gateway from
here once it exists. Each mounted part adds its own lifespan to ``lifespans`` instead of replacing the app's:
the app's lifespan starts the gateway, then enters these in order (each gets the running gateway), and leaves
them in reverse before it stops the gateway.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import Any, Callable, Generic, Protocol, TypeVar

from starlette.types import ASGIApp

from sentinel_mcp.core.builtin import Services
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import GatewayPort


class InstanceFiles(Protocol):
    """This gateway's own directory of files it holds exclusively (``storage.instances.Instance``)."""

    @property
    def dir(self) -> Path: ...


class RunningHost(Protocol):
    """The running gateway as every part mounted on the HTTP app may use it (``app.runtime.Runtime`` is one;
    core cannot name the application floor). A part that needs more (the console: the engine, the front)
    declares its own protocol over this one and is handed a ``HostState`` of it."""

    @property
    def gateway(self) -> GatewayPort: ...

    @property
    def services(self) -> Services: ...

    @property
    def instance(self) -> InstanceFiles | None: ...


class A2AHostService(Protocol):
    """The A2A participant as the host reads it (``a2a.service.A2AService`` is one; core cannot name it): the
    server ends its streams at shutdown, the console shows and answers the tasks waiting for the person."""

    def end_streams(self) -> None:
        """End open event streams so the server can shut down (the tasks keep their state)."""
        ...

    async def waiting_for(self, callers: str | Sequence[str]) -> Sequence[Any]:
        """The callers' tasks waiting for input (``a2a.task_store.TaskRecord``s), any replica's: one look."""
        ...

    async def answer_as_user(self, task_id: str, caller: str, answers: dict[str, Answer],
                             still_asks: Callable[[Any], bool] | None = None) -> None:
        """The principal's own answers, given in the console: the task resumes, if it ``still_asks`` (given
        the task's record, under its lock) what the person was shown."""
        ...

    @property
    def inbox(self) -> object | None:
        """Other agents' help requests for the person (an ``a2a.assist_inbox.AssistInbox``), when kept."""
        ...


class EndsWatchers(Protocol):
    """The console's inbox: its open pages' live updates end when the server starts to shut down."""

    def end_watchers(self) -> None: ...


# entered with the running gateway once it has started; left before it stops
Lifespan = Callable[[RunningHost], AbstractAsyncContextManager[None]]

# covariant: a HostState of the application's Runtime is a HostState of every protocol the Runtime satisfies
# (only the HTTP app that made the holder sets ``runtime``; what is mounted reads it)
R_co = TypeVar("R_co", bound=RunningHost, covariant=True)


@dataclass(slots=True)
class HostState(Generic[R_co]):
    runtime: R_co | None = None  # the running gateway, None until started
    mcp_app: ASGIApp | None = None  # the streamable HTTP endpoint, created with the runtime
    tls_status: Callable[[], tuple[Any, list[str]]] | None = None
    a2a_service: A2AHostService | None = None  # the A2A participant, when mounted
    console_inbox: EndsWatchers | None = None  # the web console's inbox, when mounted
    lifespans: list[Lifespan] = field(default_factory=list)

    def add_lifespan(self, lifespan: Lifespan) -> None:
        self.lifespans.append(lifespan)
