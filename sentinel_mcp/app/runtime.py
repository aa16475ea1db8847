"""Assemble a running gateway from a ``Config``: audit log, upstreams, built-ins, guard, front.

The host (stdio main, HTTP app lifespan, a test) owns this context; upstream connections live exactly as
long as it does, however many clients come and go.
"""

from __future__ import annotations

import contextlib
import importlib.util
import logging
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, AsyncIterator, Callable

import anyio
from mcp.types import CallToolResult, TextContent

from sentinel_mcp.app import sdk_logging  # noqa: F401 - the SDK skips building a handler it would drop
from sentinel_mcp.app.server_stores import check_serving
from sentinel_mcp.app.missing_extra import install_hint
from sentinel_mcp.app.collector import serving_collector
from sentinel_mcp.app.idle_trim import trim_when_idle
from sentinel_mcp.app.listed_secret_flows import check_listed, checking_listings, walking_reloads
from sentinel_mcp.config import Config, StdioServer
from sentinel_mcp.gateway.audit import AuditLog
from sentinel_mcp.gateway.audit_anchor import AnchorLog
from sentinel_mcp.gateway.audit_anchoring import Anchoring
from sentinel_mcp.core.builtin import (
    BUILTINS,
    CALL_LIMITS,
    DEFAULT_MAX_CALL_SECONDS,
    BuiltinContext,
    Services,
    load_factory,
    traits_of,
)
from sentinel_mcp.gateway.audit_cluster import anchor_loop
from sentinel_mcp.gateway import builtin_description
from sentinel_mcp.gateway.closed_guard import ClosedGuard
from sentinel_mcp.gateway import early_spawn
from sentinel_mcp.gateway.consent_gate import ConsentGate
from sentinel_mcp.storage.conversation_names import SharedLabels
from sentinel_mcp.gateway.shared_asked_questions import SharedAskedQuestions
from sentinel_mcp.gateway.lapsed_work import lapse_recorder
from sentinel_mcp.gateway.consents import ConsentBook
from sentinel_mcp.gateway.core import Gateway
from sentinel_mcp.gateway.tool_pins import FILE_NAME as PINS_FILE, ToolPins
from sentinel_mcp.core.decision import Guard
from sentinel_mcp.policy import load_rehearsal
from sentinel_mcp.policy.confirmation_book import SharedConfirmationBook
from sentinel_mcp.policy.default_guard import DefaultGuard
from sentinel_mcp.gateway.front import Front
from sentinel_mcp.gateway import telemetry
from sentinel_mcp.gateway.metrics import Metrics
from sentinel_mcp.core.tool_ref import ToolRef
from sentinel_mcp.core.port import Completed, NeedsInput
from sentinel_mcp.gateway.upstream import BuiltinTarget
from sentinel_mcp.gateway.catalog_health import CatalogHealth
from sentinel_mcp.gateway.upstream_manager import UpstreamManager
from sentinel_mcp.identity.http_auth import configured_principals
from sentinel_mcp.identity.principal import OWNER_NAME
from sentinel_mcp.gateway.nonce_book import NoNonceBook
from sentinel_mcp.gateway.replica import (
    SharedStore,
    audit_key,
    checked_seal_key,
    claimed_name,
    open_nonce_book,
    shared_store,
)
from sentinel_mcp.gateway.request_state import RequestStateSeal
from sentinel_mcp.storage.instances import Instance, crashed_instances, settle_dead
from sentinel_mcp.storage.open import release
from sentinel_mcp.storage.private_paths import private_dir

log = logging.getLogger(__name__)
LAUNCH_WAIT = 2.0  # seconds at most that start-up waits for the stdio upstreams' processes to be spawned


@dataclass
class Runtime:
    config: Config
    gateway: Gateway
    front: Front
    manager: UpstreamManager
    audit: AuditLog
    instance: Instance | None = None  # this gateway's own files (None: its directory could not be made)
    services: Services = field(default_factory=Services)
    problems: list[str] = field(default_factory=list)  # built-ins or rulebases that could not start
    metrics: Metrics = field(default_factory=Metrics)

    @property
    def catalog_health(self) -> CatalogHealth:
        """The upstreams and the catalog, read-only: what health, metrics, the banner and the console show."""
        return CatalogHealth(self.manager)

    @property
    def policy_problem(self) -> str | None:
        """Why the policy cannot govern right now (every call is then denied), or None."""
        return self.gateway.guard.problem


def _builtin_invoker(gateway: Gateway, builtin: str):  # type: ignore[no-untyped-def]
    async def call_tool(
        name: str | ToolRef, arguments: dict[str, Any], *, session_id: str | None = None,
        principal: str | None = None, recheck: Callable[[], Any] | None = None,
    ) -> CallToolResult:
        """``principal``: whose work the call is (a build's model calls are its caller's: its reach, quota
        and audit rows), else Sentinel's own; ``recheck``: that caller's credentials, asked before it is
        sent."""
        if isinstance(name, ToolRef):  # another area's tool: the name the catalog exposes it under now
            tool = name.resolve(gateway)
            if tool is None:
                return CallToolResult(
                    content=[
                        TextContent(type="text", text=f"{name.tool} of {name.server!r} is not in the catalog")
                    ],
                    is_error=True,
                )
            name = tool.name
        outcome = await gateway.invoke(
            name,
            arguments,
            session_id=session_id or f"builtin:{builtin}",
            client=f"builtin:{builtin}",
            origin="builtin",
            principal=principal,
            recheck=recheck,
        )
        if isinstance(outcome, Completed):
            return outcome.result
        reason = outcome.reason
        if isinstance(outcome, NeedsInput):
            reason += " (needs: " + "; ".join(q.message for q in outcome.questions) + ")"
        return CallToolResult(content=[TextContent(type="text", text=reason)], is_error=True)

    return call_tool


def _create_guard(
    config: Config, gateway: Gateway, fallback: DefaultGuard, problems: list[str], *,
    shared: SharedStore | None,
) -> Guard:
    if not config.sentinel.rulebases:
        return fallback
    try:
        from sentinel_mcp.policy.guard_of_config import create_guard
    except ImportError as e:  # rulebases are configured: without them nothing is served (fail closed)
        return ClosedGuard(f"the policy engine is unavailable ({e})")
    # a conversation this gateway opened has an id made here from random bytes: no other process writes its
    # facts (the policy guard's observe needs no store look-up for it); replicas share sessions
    private = None if shared else gateway.conversations.minted_here
    return create_guard(
        config, gateway, withheld=gateway.withheld_personal, default=fallback, private=private,
        fact_key=shared.key("facts") if shared is not None else None,  # the facts replicas share are signed
        passage_key=shared.key("passages") if shared is not None else None,  # and the passages
    )


def _claim_instance(config: Config) -> tuple[Instance | None, Path, list[str]]:
    """This gateway's own directory for the files it holds exclusively (its audit log, its A2A journal), so
    that several gateways can run on one data dir; dead instances' files are settled first (their WAL
    replayed, empty ones removed). Without a directory the audit log cannot be opened: calls are refused."""
    root = config.store_path.parent
    problems: list[str] = []  # what health says: an ended gateway's file that could not be settled, ...
    try:
        settle_dead(root, problems)
    except OSError as e:
        log.warning("could not settle earlier gateways' files under %s: %s", root, e)
    try:
        instance = Instance.claim(root)
    except OSError as e:
        unclaimed = root / "instances" / f"unclaimed-{os.getpid()}-{secrets.token_hex(3)}"
        problems.append(f"cannot create this gateway's instance directory under {root}: {e.strerror or e}")
        return None, unclaimed / config.store_path.name, problems
    return instance, instance.dir / config.store_path.name, problems


async def _start_anchoring(
    config: Config, audit: AuditLog, instance: Instance | None, crashed: list[Path]
) -> Anchoring | None:
    """This gateway's chain anchored outside the data dir (``gateway/audit_anchoring.py``) before any call;
    a key or anchor that cannot be used stops the start (saying what is wrong), never an unanchored run."""
    directory = config.audit_anchor_dir
    if directory is None or instance is None:  # turned off; or no instance: the audit log is refused anyway
        return None
    try:
        anchoring = Anchoring(AnchorLog(directory, config.store_path.parent), audit, config.store_path)
        await anchoring.start(crashed)
    except BaseException:
        with anyio.CancelScope(shield=True):
            await audit.close()
        instance.release()
        raise
    return anchoring


def not_started(name: str, error: BaseException) -> str:
    """Why a built-in did not start, with the extra to install when an optional module is missing."""
    return f"built-in {name!r} not started: {type(error).__name__}: {error}{install_hint(error)}"


BuildSteps = tuple[Callable[[], Any], Callable[[], Any]]  # a described built-in's (load, build)


def _builder(name: str, ctx: BuiltinContext, problems: list[str]) -> BuildSteps:
    """A described built-in's ``load`` (its imports, in a worker thread) and ``build`` (on the event loop: a
    factory may make event-loop objects)."""

    def load() -> Any:
        try:
            return load_factory(name)
        except Exception as e:
            problems.append(not_started(name, e))
            raise

    def build() -> Any:
        try:
            factory = load_factory(name)  # imported already by load(): a look-up
            private_dir(ctx.data_dir)
            server = factory(ctx)
            traits_of(server)  # the contract holds on first use too (its recorded description gave them)
            return server
        except Exception as e:
            problems.append(not_started(name, e))
            raise

    return load, build


def _target(config: Config, name: str, described: Any, steps: BuildSteps | None) -> BuiltinTarget:
    load, build = steps or (None, None)
    target = BuiltinTarget(server=None, described=described, build=build, load=load)
    if described is not None:
        _limit(config, name, target, described.timeout, described.protocol, described.result_meta)
    return target


def _limit(config: Config, name: str, target: BuiltinTarget, own: float, protocol: Any,
           result_meta: frozenset[str]) -> None:
    """The server's own wishes (timeout, era, result keys), under the config's ``builtin_timeouts``."""
    limits = config.sentinel.builtin_timeouts.get(name)
    # a built-in that asks its caller mid-call (the agent) must speak the push era to the gateway
    target.protocol = protocol
    target.result_meta = result_meta
    target.timeout = limits.timeout if limits else max(300.0, own)
    target.max_call_seconds = (
        limits.max_call_seconds
        if limits and limits.max_call_seconds
        else max(own, CALL_LIMITS.get(name, DEFAULT_MAX_CALL_SECONDS))
    )


@contextlib.asynccontextmanager
async def running_gateway(
    config: Config, *, default_session: str | None = None, startup_wait: float = 15.0,
    lazy_builtins: bool = True, deferrable: tuple[str, ...] = builtin_description.DEFERRABLE,
) -> AsyncIterator[Runtime]:
    """The upstreams of the config connect first (a stdio upstream: its process spawned, its own interpreter
    and
    imports, its tools), while the gateway loads its built-ins and starts its guard (Prolog, fact store,
    rulebases): the two starts overlap. No call is taken before both are done; start-up still waits for every
    upstream (built-ins included) as ``UpstreamManager.run`` says, and failures are reported the same way."""
    manager = UpstreamManager()
    callers = configured_principals(config)
    manager.others_may_call = lambda server: any(
        p.name != OWNER_NAME and p.may_reach_some(server) for p in callers.values())
    manager.catalog.reserved = config.namespaces()  # another server's names, even before it connects
    if config.sentinel.policy.pin_tools:
        manager.catalog.pins = ToolPins(config.data_dir / PINS_FILE)
    for name, spec in config.mcp_servers.items():
        if not spec.disabled:
            manager.add(name, spec)
    all_added = anyio.Event()  # the built-ins are added too: the start-up wait may begin
    manager_started = anyio.Event()
    yielded = False
    try:
        async with anyio.create_task_group() as early:

            async def run_manager() -> None:
                await early.start(
                    lambda task_status: manager.run(
                        task_status, startup_wait=startup_wait, all_added=all_added
                    )
                )
                manager_started.set()

            early.start_soon(run_manager, name="upstream-manager")
            # let the stdio upstreams' processes be spawned before the synchronous part of the set-up
            # (built-ins'
            # imports) holds the event loop; bounded, it only decides how much the two starts overlap
            with anyio.move_on_after(LAUNCH_WAIT):
                for up in list(manager.upstreams.values()):
                    if isinstance(up.target, StdioServer):
                        await up.launched.wait()
            try:
                async with _assembled(
                    config, manager, all_added, manager_started, default_session,
                    deferrable if lazy_builtins else (),
                ) as runtime:
                    yielded = True
                    with serving_collector():  # start-up's objects frozen, young ones collected less often
                        yield runtime
            finally:
                early.cancel_scope.cancel()
    except (
        BaseExceptionGroup
    ) as eg:  # the errors keep the shape they had before this outer task group existed
        inner = eg.exceptions[0] if len(eg.exceptions) == 1 else None
        if not yielded and isinstance(inner, Exception):  # a set-up error alone: raised as itself
            raise inner from None
        if yielded and isinstance(inner, BaseExceptionGroup):  # the host's own error, grouped once as before
            raise inner from None
        raise


@contextlib.asynccontextmanager
async def _assembled(
    config: Config,
    manager: UpstreamManager,
    all_added: anyio.Event,
    manager_started: anyio.Event,
    default_session: str | None,
    deferrable: tuple[str, ...] = builtin_description.DEFERRABLE,
) -> AsyncIterator[Runtime]:
    shared, shared_problems = shared_store(config)  # several replicas on one PostgreSQL (gateway/replica.py)
    if shared is not None:  # a serving role on a schema behind this Sentinel: refused (server_stores.py)
        await check_serving(shared.url)
    if shared is not None:  # a seal key not the cluster's refuses the start (before anything is written)
        shared_problems += await checked_seal_key(shared)
    name_lease, lease_db = None, None
    if shared is not None:  # one live process per replica name (a live other one refuses the start)
        name_lease, lease_db, lease_problems = await claimed_name(shared)
        shared_problems += lease_problems
    # ended without a clean stop: their heads are anchored once this gateway's anchor starts (before settling)
    crashed = crashed_instances(config.store_path.parent) if shared is None else []
    instance, audit_path, instance_problems = _claim_instance(config)
    sealed_with = audit_key(config)  # each row's MAC (gateway/audit_seal.py); None: an embedded store unkeyed
    if shared is not None:  # one audit log for the cluster: this replica's own chain in it
        audit = await AuditLog(shared.url, chain=shared.replica, key=sealed_with).open()  # type: ignore[arg-type]
    else:
        audit = await AuditLog(audit_path, chain=instance.id if instance else audit_path.parent.name,
                               key=sealed_with, sync=config.sentinel.audit.sync).open()
    anchoring = await _start_anchoring(config, audit, instance, crashed) if shared is None else None
    fallback = DefaultGuard(config.sentinel.policy)
    gateway = Gateway(config, audit, manager, fallback)
    if anchoring is not None:  # an anchor that cannot be written refuses calls, as a store does
        gateway.more_records.append(anchoring)
    if name_lease is not None:  # its name taken by another process while this one ran: calls refused
        gateway.more_records.append(name_lease)
    gateway.principals.update(configured_principals(config))
    # shared by every replica when sentinel.store names PostgreSQL; else next to the facts, as before
    consents = (  # a server store's consents signed with the cluster's key for them
        ConsentBook(shared.url, key=shared.key("consent")) if shared is not None
        else ConsentBook(config.store_path.parent / "consents.db")
    )
    gateway.consent_gate = ConsentGate(consents, config.sentinel.personal)
    services = Services(gateway=gateway, record_lapse=lapse_recorder(gateway))
    if shared is not None:  # before the built-ins start: the swarm leases its builds in the shared store
        services.replica, services.store_url = shared.replica, shared.url
        services.inbox_key = shared.key("inbox")
        services.sensor_consent_key = shared.key("sensor consent")
        services.label_key = shared.key("conversation label")
        services.a2a_offer_key = shared.key("a2a offer")
        services.a2a_task_key = shared.key("a2a task")
        services.assist_key = shared.key("assist reply")
        services.swarm_key = shared.key("swarm build")
        services.agent_trace_key = shared.key("agent trace")
    problems: list[str] = (
        list(config.warnings) + shared_problems
    )  # keys of a pasted host config Sentinel ignores
    problems += instance_problems
    if anchoring is not None and anchoring.problem:
        problems.append(anchoring.problem)
    for name in config.sentinel.builtins:
        ctx = BuiltinContext(
            name=name,
            data_dir=config.data_dir / name,
            settings=config.sentinel.builtin_settings(name),
            call_tool=_builtin_invoker(gateway, name),
            services=services,
            store=shared.url if shared is not None else None,
        )
        described = (
            builtin_description.load(name, ctx.settings, deferrable=deferrable) if ctx.store is None else None
        )
        if described is not None and importlib.util.find_spec(BUILTINS[name].partition(":")[0]) is not None:
            # its catalog from the record; its module imported and its server built on first use (a failure
            # then is reported as the eager start reports it: in ``problems``, and the upstream stopped)
            manager.add(name, _target(config, name, described, _builder(name, ctx, problems)))
            continue
        try:
            factory = load_factory(name)
            private_dir(ctx.data_dir)
            server = factory(ctx)
            traits = traits_of(server)  # a server that declares nothing breaks the contract: not mounted
        except Exception as e:  # noqa: BLE001 - one broken built-in must not stop the others
            problems.append(not_started(name, e))
            continue
        target = _target(config, name, None, None)
        target.server = server
        _limit(config, name, target, traits.timeout, traits.protocol, traits.result_meta)
        # tools that never ask their caller are called in its task (builtin_direct.py); a built-in known by
        # its recorded description stays on the in-memory pair (nothing it records says which tools may ask)
        target.direct_tools = traits.direct_tools
        manager.add(name, target)
    all_added.set()
    if not audit.health.ok:  # refused calls until it can be written; say why at start-up too
        problems.append(f"audit log not writable, calls are refused until it is: {audit.health.cause}")
    guard = _create_guard(config, gateway, fallback, problems, shared=shared)
    gateway.guard = guard
    services.guard = guard
    manager.catalog.governed = guard.governed_names
    # upstreams listed before the guard was there: built without the names it governs (none while the
    # manager's start-up wait lasts: its one build follows, with them)
    if not manager.starting and manager.catalog.governance_moved():
        manager.catalog.rebuild(manager.upstreams.values())
    seal, nonce_db = None, None
    if shared is not None:
        nonces, nonce_db = await open_nonce_book(shared)
        # the default guard's confirmations (also the policy guard's, for tools no rulebase governs): used
        # once in the cluster, in the same database
        fallback.share_confirmations(
            await SharedConfirmationBook.open(
                nonce_db, config.sentinel.policy.confirm_ttl, key=shared.key("confirmation")
            )
        )
        seal = RequestStateSeal(
            key=shared.key("request state"), max_age=config.sentinel.policy.confirm_ttl, nonces=nonces
        )
        gateway.conversations.seal = RequestStateSeal(
            key=shared.key("conversation"), max_age=gateway.conversations.seal.max_age, nonces=NoNonceBook()
        )
        # a plain label names the same conversation on every replica (its idle time to live shared too)
        gateway.conversations.labels = await SharedLabels.open(
            nonce_db, gateway.conversations.idle, key=shared.key("conversation label")  # its rows signed
        )
        # what one replica asked a conversation, for the answer that comes back through another
        gateway.asked_questions.shared = await SharedAskedQuestions.open(
            nonce_db, config.sentinel.policy.confirm_ttl, gateway.asked_questions.per_principal,
            key=shared.key("asked question"))
        services.replica = shared.replica
        # a policy guard's rulebase versions follow the cluster's
        guard.join_cluster(shared.replica, shared.key("rulebase version"))
    front = Front(
        gateway,
        gateway.conversations,
        confirm_ttl=config.sentinel.policy.confirm_ttl,
        default_session=default_session,
        seal=seal,
    )
    manager.on_catalog_changed = checking_listings(front.announce_catalog_changed, guard, manager.catalog)
    walking_reloads(guard, manager.catalog)  # a reload's rules walked for the listed tools' secrets
    for p in problems:
        log.warning("%s", p)
    runtime = Runtime(config, gateway, front, manager, audit, instance, services, problems)
    gateway.observers += [runtime.metrics.observe, telemetry.annotate]
    telemetry_problem = telemetry.configure(config)
    if telemetry_problem:
        problems.append(telemetry_problem)
    try:
        async with anyio.create_task_group() as tg:
            await guard.start()
            tg.start_soon(trim_when_idle)  # glibc's free heap pages back once quiet after work (issue 21)
            if name_lease is not None:
                tg.start_soon(name_lease.run)
            if shared is not None:  # commit every replica's chain head now and then (audit_cluster.py)
                tg.start_soon(anchor_loop, audit.db, shared.replica)
            if anchoring is not None:  # this chain's head in the anchor outside the data dir, now and then
                tg.start_soon(anchoring.run)
            await manager_started.wait()
            await check_listed(guard, manager.catalog)  # the first listing, the guard started
            await (
                early_spawn.discard()
            )  # every stdio upstream's first spawn was asked for: the rest are strays
            # the guard has started: an early rehearsal it did not take is a stray
            await load_rehearsal.discard_early()
            try:
                yield runtime
            finally:
                await manager.stop()
                tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            try:
                await guard.close()
            except Exception:  # noqa: BLE001
                log.exception("guard close failed")
            await gateway.push_refusals.flush()  # the refused pushes counted and not yet written
            if anchoring is not None:
                try:
                    await anchoring.stop()
                except Exception as e:  # noqa: BLE001 - the rows stay; only the last window is not anchored
                    log.warning("audit anchor not written at stop: %s", e)
            await audit.close()
            if nonce_db is not None:
                await release(nonce_db)
            if name_lease is not None:  # the name free at once for a restart (a crash: once its lease lapses)
                await name_lease.give_back()
                await release(lease_db)
            consents.close()
            if instance is not None:
                instance.release()
