"""What the task mixins (``orchestrated_tasks``, ``assist_tasks``, ``leased_tasks``) need of the service they
are mixed into: its parts and the three moves of a task. ``A2AService`` provides them; declaring them here
lets the mixins be type-checked on their own."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from sentinel_mcp.a2a.actions import GuardedCall
from sentinel_mcp.a2a.protocol import Artifact, Part
from sentinel_mcp.a2a.settings import A2ASettings
from sentinel_mcp.a2a.task_store import TaskRecord, TaskStore
from sentinel_mcp.core.decision import Answer
from sentinel_mcp.core.port import GatewayPort

if TYPE_CHECKING:  # discovery pulls in the TLS client; the service takes a registry only when discovery runs
    from sentinel_mcp.a2a.discovery import PeerRegistry


class TaskHost(ABC):
    port: GatewayPort
    settings: A2ASettings
    store: TaskStore
    peers: PeerRegistry | None

    @abstractmethod
    async def _run(
        self, record: TaskRecord, call: GuardedCall, answers: dict[str, Answer] | None,
        identity: str | None = None,
    ) -> None:
        """Run the guarded call of a task and settle the task with its outcome (``identity``: with answers,
        the tool they were asked about)."""

    @abstractmethod
    async def _settle(
        self,
        record: TaskRecord,
        state: str,
        text: str | None = None,
        parts: list[Part] | None = None,
        artifact: Artifact | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        """Move the task to a state a peer may act on (recorded first, then announced)."""

    @abstractmethod
    def _set_status(
        self, record: TaskRecord, state: str, text: str | None = None, parts: list[Part] | None = None
    ) -> None:
        """Change the task's status while it works (saved and announced)."""
