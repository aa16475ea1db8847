"""The contract of a built-in capability: an in-process MCP server the gateway mounts as an upstream.

A built-in module exposes ``create_server(ctx: BuiltinContext) -> mcp.server.Server | MCPServer`` and states
how the gateway treats that server with ``declare(server, BuiltinTraits(...))`` (every built-in does, the
defaults too; a server that declares nothing is not mounted). ``protocol="legacy"``: it pushes questions to
its caller during a call (elicitation), which only handshake-era connections carry. ``timeout`` (seconds)
raises the per-call timeout without progress (300 s) for a built-in whose calls run long (the agent's run);
the config's ``sentinel.builtin_timeouts`` overrides it. ``result_meta`` names the ``sentinel/`` keys its
results state about its own work (the device's ``sentinel/device-decision``): the gateway keeps those keys
from this built-in only and drops them from every other upstream's results. ``direct_tools`` names the tools
that never ask their caller anything nor announce list changes (progress and log lines are fine): the gateway
calls those in its own task, not over the in-memory MCP pair (``gateway/builtin_direct.py``).
The gateway connects to it with the real ``mcp.Client`` in-process, exactly as it connects to a
configured stdio server, so every call to it is guarded and audited on the one path.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Literal, Protocol, TypeVar
from weakref import WeakKeyDictionary

from sentinel_mcp.core.caller_checks import LapseRecorder
from sentinel_mcp.core.errors import SentinelError
from sentinel_mcp.core.import_collector import imports_uncollected
from sentinel_mcp.core.shared_devices import SharedDevices

if TYPE_CHECKING:  # annotations only: the config imports this registry and stays light (no mcp, no port)
    from mcp_types import CallToolResult

    from sentinel_mcp.core.decision import Guard
    from sentinel_mcp.core.port import GatewayPort
    from sentinel_mcp.core.tool_ref import ToolRef


class ToolInvoker(Protocol):
    """Calls a tool through the gateway (guarded and audited): another area's tool by its ``ToolRef``
    (``ToolRef("llm", "llm_classify_risk")``, resolved from the catalog), or a name as the catalog exposes it.
    ``principal``: the call is that principal's work (its reach, rate and audit rows; a build's model calls),
    else the built-in's own; ``recheck``: that principal's credential check (``core/caller_checks.py``).
    """

    def __call__(
        self, name: str | ToolRef, arguments: dict[str, Any], *, principal: str | None = None,
        recheck: Callable[[], Any] | None = None,
    ) -> Awaitable[CallToolResult]: ...


class RunTraces(Protocol):
    """The agent's runs as others read them (the agent area's ``TraceStore``): the console lists a principal's
    runs, shows one, and follows changes through ``listeners`` (told ``(principal, run_id)``)."""

    listeners: list[Callable[[str, str], None]]

    # ``held``: the kinds of personal data the reader holds consent for, for any purpose (None: all); what a
    # run read of any other kind is taken out, on disk too. ``shown``: the kinds this read may show (None:
    # those held); what a run read of another kind is left out of the answer only
    async def runs(self, principal: str, limit: int = 20, held: frozenset[str] | None = None, *,
                   shown: frozenset[str] | None = None) -> list[dict[str, Any]]: ...

    async def run(self, principal: str, run_id: str, held: frozenset[str] | None = None, *,
                  shown: frozenset[str] | None = None) -> dict[str, Any] | None: ...


@dataclass
class Services:
    """What the gateway shares with its built-ins in-process, by name and type (not a dict of anything)."""

    gateway: GatewayPort | None = None  # guarded calls, the catalog
    guard: Guard | None = None  # the active guard; the policy's own tools need the policy guard
    cortex: Any = None  # the llm built-in's Cortex once mounted (its type is the llm area's, not core's)
    a2a_peers: Any = None  # the A2A host's PeerRegistry, shared with the a2a built-in (the a2a area's type)
    agent_traces: RunTraces | None = None  # the agent built-in's runs, once mounted
    replica: Any = None
    # one gate per phone for the device and sensors built-ins (one record, one rule set); one per gateway
    devices: SharedDevices = field(default_factory=SharedDevices)
    store_url: str | None = None  # the postgresql:// URL replicas share (``${VAR}`` unexpanded); None: SQLite
    # signs the console inbox's shared rows (from ``sentinel.cluster.seal_key``); None: this process's own key
    inbox_key: bytes | None = None
    sensor_consent_key: bytes | None = None  # signs the sensors' shared consents (the same origin)
    label_key: bytes | None = None  # signs the conversations labels and A2A contexts name (the same origin)
    a2a_offer_key: bytes | None = None  # signs the A2A offers waiting for the orchestrator (the same origin)
    a2a_task_key: bytes | None = None  # signs the A2A tasks' rows replicas share (a2a/task_rows.py)
    assist_key: bytes | None = None  # signs the person's replies to other agents' help requests (shared)
    swarm_key: bytes | None = None  # signs what binds a build to its owner (swarm/build_rows.py; shared)
    agent_trace_key: bytes | None = None  # signs the agent's run traces (agent/trace_rows.py; shared)
    # the audit row of a built-in's work its caller's lapsed credentials ended (core/caller_checks.py)
    record_lapse: LapseRecorder | None = None

    # the mapping spelling of older callers (``services.get("guard")``); only the names above exist
    def _name(self, key: str) -> str:
        if key not in self.__dataclass_fields__:
            raise KeyError(f"no shared service {key!r}; known: {', '.join(self.__dataclass_fields__)}")
        return key

    def get(self, key: str, default: Any = None) -> Any:
        value = getattr(self, self._name(key))
        return default if value is None else value

    def __getitem__(self, key: str) -> Any:
        value = getattr(self, self._name(key))
        if value is None:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self, self._name(key), value)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key in self.__dataclass_fields__ and getattr(self, key) is not None

    def setdefault(self, key: str, value: Any) -> Any:
        if getattr(self, self._name(key)) is None:
            setattr(self, key, value)
        return getattr(self, key)


@dataclass
class BuiltinContext:
    name: str  # the server name it is mounted under ("device", "llm", ...)
    data_dir: Path  # a writable directory for this built-in's own state
    settings: dict[str, Any] = field(default_factory=dict)  # the config's ``sentinel.<name>`` section
    call_tool: ToolInvoker | None = None  # None when the built-in runs on its own (python -m ...)
    services: Services = field(
        default_factory=Services
    )  # shared objects the gateway offers (a dict is taken too)
    # ``sentinel.store``'s postgresql:// URL when replicas share one database (a built-in's shared records
    # live
    # there, e.g. the sensors' consents); None: the built-in keeps them in ``data_dir``
    store: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.services, dict):
            self.services = Services(**self.services)


DEFAULT_TIMEOUT = 300.0  # seconds a call may go without progress, unless a built-in or the config says more


@dataclass(frozen=True)
class BuiltinTraits:
    """How the gateway treats a built-in's server (the module docstring says what each one means)."""

    timeout: float = DEFAULT_TIMEOUT
    protocol: Literal["auto", "legacy"] = "auto"
    result_meta: frozenset[str] = frozenset()
    direct_tools: frozenset[str] = frozenset()

    def __post_init__(self) -> None:  # type-strict: a tuple or list given is kept as a frozenset
        seconds = self.timeout
        if isinstance(seconds, bool) or not (isinstance(seconds, (int, float)) and 0 < seconds < math.inf):
            raise BuiltinContractError(f"a built-in's timeout must be positive seconds, not {self.timeout!r}")
        if self.protocol not in ("auto", "legacy"):
            raise BuiltinContractError(f"a built-in's protocol is 'auto' or 'legacy', not {self.protocol!r}")
        for name in ("result_meta", "direct_tools"):
            value = getattr(self, name)
            listed = isinstance(value, (frozenset, set, tuple, list))
            if not listed or any(not isinstance(v, str) for v in value):
                raise BuiltinContractError(f"a built-in's {name} is a set of names, not {value!r}")
            object.__setattr__(self, name, frozenset(value))
        object.__setattr__(self, "timeout", float(self.timeout))


class BuiltinContractError(SentinelError):
    """A built-in broke its contract (it declared no traits, or traits of the wrong shape)."""


# the traits each built server declared; weak: a server dropped (a test's, a stopped upstream's) leaves it
_DECLARED: WeakKeyDictionary[Any, BuiltinTraits] = WeakKeyDictionary()
S = TypeVar("S")


def declare(server: S, traits: BuiltinTraits) -> S:
    """A built-in states how the gateway treats ``server`` (returned, so ``return declare(server, ...)``)."""
    _DECLARED[server] = traits
    return server


def traits_of(server: Any) -> BuiltinTraits:
    """What ``server`` declared; a server that declared nothing breaks the contract."""
    try:
        return _DECLARED[server]
    except (KeyError, TypeError):
        raise BuiltinContractError(
            f"the built-in server {type(server).__name__} declares no traits "
            "(sentinel_mcp.core.builtin.declare)"
        ) from None


# A built-in's tool declares in its ``_meta`` that it asks the user itself before every risky action (the
# device's
# firewall and classifier decide what is risky). The gateway honours it only for trusted built-ins
# (``sentinel.policy.self_confirming``), never for a configured upstream.
SELF_CONFIRMS_KEY = "sentinel/confirms"
SELF_CONFIRMS = {SELF_CONFIRMS_KEY: "risky-actions"}


def declares_self_confirming(meta: dict[str, Any] | None) -> bool:
    return isinstance(meta, dict) and meta.get(SELF_CONFIRMS_KEY) == SELF_CONFIRMS[SELF_CONFIRMS_KEY]


# name -> "module:function"; a module that is missing or fails to import is reported, not fatal.
BUILTINS: dict[str, str] = {
    "sentinel": "sentinel_mcp.policy.own_tools:create_server",
    "device": "device_tools.server:create_server",
    "sensors": "device_tools.sensors.server:create_server",
    "llm": "sentinel_mcp.llm.server:create_server",
    "swarm": "sentinel_mcp.swarm.server:create_server",
    "a2a": "sentinel_mcp.a2a.mcp_tools:create_server",
    "agent": "sentinel_mcp.agent.server:create_server",
}


# name -> "module:Model": the typed ``Settings`` of each ``sentinel.<name>`` section. ``parse_config``
# validates
# every section present against its model when the config is loaded; a built-in's module exports the same
# model
# as ``Settings`` beside ``create_server`` (tests/core/test_builtin_contract.py holds them to it).
SECTION_MODELS: dict[str, str] = {
    "sentinel": "sentinel_mcp.core.settings:NoSettings",  # the policy's own tools take none
    "device": "device_tools.settings:DeviceSettings",
    "sensors": "device_tools.sensors.settings:SensorSettings",
    "llm": "sentinel_mcp.llm.settings:LlmSettings",
    "swarm": "sentinel_mcp.swarm.settings:SwarmSettings",
    "a2a": "sentinel_mcp.a2a.settings:A2ASettings",
    "agent": "sentinel_mcp.agent.settings:AgentSettings",
    "search": "sentinel_mcp.search.settings:SearchSettings",
}
# name -> the config seeds its section gives the guard (the model's ``guard_seeds()``): parse_config adds them
# to ``sentinel.seeds``, and refuses a seed of these names written there by hand, so the section's checks
# (device_tools/readable_config.py) are the one way in
SECTION_SEEDS: dict[str, tuple[str, ...]] = {
    "device": ("device_readable_prop", "device_readable_system", "device_readable_secure",
               "device_readable_global"),
}
# sections of the application floor, validated where they are read at start-up (serve, console, telemetry)
APPLICATION_SECTIONS = frozenset({"oauth", "console", "telemetry"})


def load_section_model(name: str) -> type[Any] | None:
    """The model of ``sentinel.<name>``; None when its area is not installed (a partial install)."""
    module_name, _, attr = SECTION_MODELS[name].partition(":")
    try:
        with imports_uncollected(module_name):  # the first read of a config (start-up) imports it
            module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            return None
        raise
    model: type[Any] = getattr(module, attr)
    return model


# the longest a call to a built-in may run while it reports progress, when the config says nothing: a swarm
# build may take its own 90-minute cap, plus verifying; the others answer within minutes
CALL_LIMITS: dict[str, float] = {"swarm": 95 * 60.0}
DEFAULT_MAX_CALL_SECONDS = 3600.0


def load_factory(name: str) -> Callable[[BuiltinContext], Any]:
    try:
        target = BUILTINS[name]
    except KeyError:
        raise KeyError(f"unknown built-in {name!r}; known: {', '.join(sorted(BUILTINS))}") from None
    module_name, _, attr = target.partition(":")
    module = importlib.import_module(module_name)
    return getattr(module, attr)
