"""Built-ins known before they are built: an in-process target, and an upstream that serves a built-in's
recorded catalog (gateway/builtin_description.py) until a call, read, prompt or completion first needs it,
then builds its server (its modules imported then) and connects it like any other upstream (issue 21)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Literal

import anyio
from mcp.types import Prompt, Resource, ResourceTemplate, Tool

from sentinel_mcp.gateway.upstream_client import UpstreamUnavailable

if TYPE_CHECKING:
    from sentinel_mcp.gateway.upstream import UpstreamHooks

log = logging.getLogger(__name__)


@dataclass
class BuiltinTarget:
    """An in-process MCP server (``Server`` or ``MCPServer``) mounted like any other upstream."""

    server: Any  # None while a described built-in is not built yet (``build`` makes it on first use)
    prefix: str | None = None
    timeout: float = 300.0  # seconds without an answer or progress
    max_call_seconds: float = 3600.0  # progress keeps a call alive up to this long
    connect_timeout: float = 20.0
    protocol: Literal["auto", "legacy", "modern"] = "auto"
    concurrent: bool = True
    result_meta: frozenset[str] = frozenset()  # ``sentinel/`` keys its results state about its own work
    # tools that never ask their caller: called in the caller's task, not over the in-memory pair
    # (``builtin_direct.py``)
    direct_tools: frozenset[str] = frozenset()
    # a built-in known by its recorded description (gateway/builtin_description.py): its catalog is served
    # from it, and ``build()`` makes the server (imports included) when a call, read or prompt first needs it
    described: Any = None
    build: Callable[[], Any] | None = None
    # imports its modules (30 to 100 ms of CPU): run in a worker thread before ``build()``, so the first use
    # of one built-in does not stall every other client's requests on the event loop
    load: Callable[[], Any] | None = None


class LazyBuiltin:
    """The first-use build of a described built-in, mixed into ``Upstream`` (which owns the state)."""

    name: str
    target: Any
    hooks: UpstreamHooks
    state: str
    last_error: str | None
    tools: dict[str, Tool]
    resources: list[Resource]
    resource_templates: list[ResourceTemplate]
    prompts: list[Prompt]
    ready: anyio.Event
    settled: anyio.Event
    launched: anyio.Event
    _stop: anyio.Event
    _described: Any  # the recorded description (builtin_description.Description) until built, then None

    def _init_lazy(self, target: Any) -> None:
        self._described = getattr(target, "described", None)
        self._wake = anyio.Event()  # a described built-in is needed: build it
        self._failed = anyio.Event()  # ... and building it failed

    async def _notify_state(self) -> None:
        raise NotImplementedError

    @property
    def loaded(self) -> bool:
        """False while a described built-in waits for its first use (its server not built yet)."""
        return self._described is None

    async def _until_first_use(self) -> bool:
        """Serve the recorded catalog until something needs the server, then build it: True once built."""
        d = self._described
        self.tools = {t.name: t for t in d.tools}
        self.resources, self.resource_templates, self.prompts = d.resources, d.resource_templates, d.prompts
        self.state = "ready"
        self.settled.set()
        self.launched.set()
        await self._notify_state()
        await self.hooks.catalog_changed(self)  # type: ignore[arg-type]
        async with anyio.create_task_group() as tg:  # the first of: a use, stop()

            async def first(ev: anyio.Event) -> None:
                await ev.wait()
                tg.cancel_scope.cancel()

            tg.start_soon(first, self._wake)
            tg.start_soon(first, self._stop)
        if self._stop.is_set():
            return False
        try:
            if self.target.load is not None:
                await anyio.to_thread.run_sync(self.target.load)
            self.target.server = self.target.build()
        except Exception as e:  # noqa: BLE001 - said in status, healthz and to the call that woke it
            self.last_error = f"built-in {self.name!r} not started: {type(e).__name__}: {e}"
            log.warning("%s", self.last_error)
            self._described = None
            self.tools, self.resources, self.resource_templates, self.prompts = {}, [], [], []
            self.state = "stopped"
            self.settled.set()
            self._failed.set()
            await self._notify_state()
            await self.hooks.catalog_changed(self)  # type: ignore[arg-type]
            return False
        self._described = None
        return True

    async def _woken(self) -> None:
        """A use of a described built-in: build it now, and wait (bounded) for its connection."""
        if self._described is not None:
            self._wake.set()
            with anyio.move_on_after(self.target.connect_timeout):
                async with anyio.create_task_group() as tg:

                    async def first(ev: anyio.Event) -> None:
                        await ev.wait()
                        tg.cancel_scope.cancel()

                    tg.start_soon(first, self.ready)
                    tg.start_soon(first, self._failed)
        if self._failed.is_set():
            raise UpstreamUnavailable(self.last_error or f"built-in {self.name!r} not started")
