"""The sensors built-in: an MCP server with ``sensor_list``, ``sensor_read``, ``sensor_consent`` and
``sensor_retained``. Mounted by the gateway as ``sensors`` (tools appear as ``sensors__sensor_read``).

Consent is asked through MCP elicitation with the era-portable ``Resolve``/``Elicit`` pattern: pushed on
2025-era connections, returned as ``InputRequiredResult`` on 2026-07-28 ones (the gateway relays both).
"""

# no `from __future__ import annotations`: MCPServer evaluates tool annotations, and the resolvers are
# closures

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

import anyio
from mcp.server.elicitation import AcceptedElicitation, ElicitationResult, render_elicitation_schema
from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp_types.version import is_version_at_least
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from device_tools.sensors.bridge import SensorBridge, UserConsent
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import SensorError, StoreUnavailable
from device_tools.sensors.reading_text import PURPOSES, untrusted_meta
from sentinel_mcp.core.sensor_kinds import SensorKind, parse_scope, parse_sensor
from device_tools.sensors.settings import SensorSettings
from device_tools.sensors.sources.factory import make_source
from device_tools.strict_arguments import strict_arguments
from sentinel_mcp.core.builtin import BuiltinContext, BuiltinTraits, declare
from sentinel_mcp.core.call_meta import behind_gateway, decision_id_of, principal_of
from sentinel_mcp.identity.principal import OWNER_NAME
from sentinel_mcp.core.asking import Asker, AskUser, answered_by
from sentinel_mcp.core.quoted_values import readable_text

Settings = SensorSettings  # the built-in contract: its typed settings beside create_server

log = logging.getLogger(__name__)
_NOT_ASKED = "not-asked"  # resolver outcome when no question is needed (or none can be asked)
_DECLINED = "declined"
_NOT_USER = "not-user"  # resolver outcome: the answer did not come from the user (it counts for nothing)
SENSOR_HELP = "one of: " + ", ".join(k.value for k in SensorKind)
SCOPE_HELP = "minimal (city) | standard (street) | detailed (GPS); the highest precision returned"


class GrantConfirmation(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")  # only JSON true/false, nothing extra
    confirm: bool = Field(description="Grant this sensor access?")


def _can_elicit(ctx: Context) -> bool:
    caps = ctx.client_capabilities
    el = caps.elicitation if caps is not None else None
    return el is not None and (el.form is not None or el.url is None)


def _modern(ctx: Context) -> bool:
    version = ctx.protocol_version
    return version is not None and is_version_at_least(version, "2026-07-28")


async def _pushed(ctx: Context, ask: AskUser, model: type[BaseModel]) -> Any:
    """Ask during the call (handshake era) and keep the raw answer, so that who answered can be checked: the
    form's values when the user accepted, else why not (``_DECLINED``, ``_NOT_USER``)."""
    try:
        raw = await ask.push(ctx, render_elicitation_schema(model))
    except Exception as e:  # noqa: BLE001 - no back channel, a transport error: nobody said yes
        log.info("consent question could not be asked: %s", e)
        return _DECLINED
    if not ask.hears(ctx, raw):
        log.info("consent answer refused: not given by the user (%r)", answered_by(ctx, raw))
        return _NOT_USER
    if raw.action != "accept":
        return _DECLINED
    try:
        return model.model_validate(raw.content)
    except ValidationError:
        return _DECLINED  # not an answer to the question asked (strict types, nothing extra)


def _round_heard(ctx: Context, asker: Asker) -> bool:
    """2026 era: every answer this round brings (``inputResponses``) was given by the user, as the gateway
    marked it; handshake era (no round answers), True."""
    responses = ctx.input_responses or {}
    ask = AskUser(asker, "")
    return all(ask.hears(ctx, value) for value in responses.values())


def _ok(data: dict[str, Any], meta: dict[str, Any] | None = None) -> CallToolResult:
    """``meta``: its ``_meta`` (``reading_text.untrusted_meta`` when a reading holds others' text)."""
    # allow_nan=False: the text stays strict JSON (readings are checked finite; this refuses any that is not)
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, allow_nan=False))],
                          structured_content=data, _meta=meta)


def _error(err: SensorError | str, code: str = "invalid_request") -> CallToolResult:
    data = err.to_dict() if isinstance(err, SensorError) else {"error": code, "message": err}
    return CallToolResult(
        content=[TextContent(type="text", text=f"{data['error']}: {data['message']}")],
        structured_content=data,
        is_error=True,
    )


def _manages_consents(ctx: Context) -> bool:
    """The device's owner: behind the gateway, the principal it names the owner (a reserved name no token
    principal can have); standalone (no gateway), also the local user. Never decided by a name alone."""
    principal = principal_of(ctx)
    if behind_gateway(ctx):
        return principal == OWNER_NAME
    return principal in (OWNER_NAME, "local")


def _may_manage(ctx: Context, requester: str | None) -> bool:
    """Whether the caller may manage ``requester``'s consents (its own, or anyone's as the owner). Checked
    by the tool's resolver before any question is put to the user, and again by its body: a caller that may
    not manage them never makes the owner's client ask anything."""
    return (requester or principal_of(ctx)) == principal_of(ctx) or _manages_consents(ctx)


def build_server(bridge: SensorBridge, settings: SensorSettings, name: str = "sensors") -> MCPServer:
    @contextlib.asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[None]:
        # runs per connection; sweeps are idempotent, and expired rows are never served between sweeps
        async with anyio.create_task_group() as tg:
            tg.start_soon(bridge.vault.run_sweeper, settings.sweep_interval)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    server = MCPServer(
        name,
        instructions="Device sensors behind consent, scope, rate limits, retention and "
        "audit. Every read needs the user's consent and a policy_tag saying why.",
        lifespan=lifespan,
    )

    async def ask_read_consent(
        sensor: str,
        scope: str,
        policy_tag: str,
        retention: int | None,
        rate: float | None,
        task_id: str,
        ctx: Context,
        max_age: int | None = None,
    ) -> Elicit[UserConsent] | str:
        request = sensor_request(sensor, scope, policy_tag, retention, rate, task_id, max_age)
        try:
            question = bridge.consent_question(principal_of(ctx), request)
        except StoreUnavailable:
            return _NOT_ASKED  # the tool body refuses the call with the cause
        if question is None or not settings.consent_by_elicitation or not _can_elicit(ctx):
            return _NOT_ASKED
        ask = AskUser(Asker.SENSORS, question, {"requester": principal_of(ctx)})
        if _modern(ctx):
            return Elicit(ask.shown(), UserConsent)  # a round trip; who answered is checked in the tool body
        return await _pushed(ctx, ask, UserConsent)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    async def sensor_read(
        sensor: Annotated[str, Field(description=SENSOR_HELP)],
        policy_tag: Annotated[
            str, Field(description="why the data is needed (audited), e.g. location-for-search")
        ],
        consent: Annotated[ElicitationResult[UserConsent], Resolve(ask_read_consent)],
        ctx: Context,
        scope: Annotated[str, Field(description=SCOPE_HELP)] = "minimal",
        retention: Annotated[
            int | None,
            Field(description="seconds the reading may be kept; 0 = not stored; default from settings"),
        ] = None,
        rate: Annotated[
            float | None,
            Field(description="samples per second you intend to read at (at most the sensor's maximum)"),
        ] = None,
        task_id: Annotated[str, Field(description="your task id, echoed in the response")] = "",
        max_age: Annotated[
            int | None,
            Field(description="seconds: the oldest location fix you take (an older one is refused; below "
                  "detailed, judged by the fix's time as shown, to the minute or ten minutes); without it an "
                  "old fix is served with payload.stale true"),
        ] = None,
    ) -> CallToolResult:
        """Read one sensor (location, battery, motion, compass, ambient_light, barometer, nearby_devices).

        scope: minimal (city) | standard (street) | detailed (GPS) for location; policy_tag: why you need it;
        retention: seconds the reading may be kept (0 = not stored); rate: samples/s you intend to read at.
        Returns the design's SensorResponse {task_id, payload, redactions, timestamp}; a location's timestamp
        is its fix's own time (cut to the scope); a battery field the phone did not report is null and named
        in payload.unknown."""
        answer: UserConsent | Literal["declined"] | None = None
        if isinstance(consent, AcceptedElicitation):
            answer = consent.data if isinstance(consent.data, UserConsent) else None
            if consent.data == _DECLINED:
                answer = "declined"
        else:
            answer = "declined"  # declined or cancelled
        if not _round_heard(ctx, Asker.SENSORS):
            answer = None  # an answer that is not the user's is no answer: stored consent decides alone
        request = sensor_request(sensor, scope, policy_tag, retention, rate, task_id, max_age)
        try:
            response = await bridge.handle(request, principal_of(ctx), answer, decision_id_of(ctx))
        except SensorError as e:
            return _error(e)
        return _ok(response.model_dump(), untrusted_meta(response.payload))

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    async def sensor_list() -> CallToolResult:
        """Which sensors this device has through the configured source, with rates and scopes."""
        return _ok(await bridge.sensor_list())

    async def ask_grant(
        action: str,
        ctx: Context,
        sensor: str | None = None,
        requester: str | None = None,
        scope: str = "minimal",
        expires_in: float | None = None,
    ) -> Elicit[GrantConfirmation] | str:
        if action != "grant" or not _may_manage(ctx, requester) or not _can_elicit(ctx) or sensor is None:
            return _NOT_ASKED  # the tool body refuses a caller that may not manage the requester's consent
        try:
            parse_sensor(sensor), parse_scope(scope)
        except ValueError:
            return _NOT_ASKED  # the tool body reports the bad argument
        if expires_in is not None and not expires_in > 0:
            return _NOT_ASKED
        who = requester or principal_of(ctx)
        until = f" for {expires_in:g} s" if expires_in else " until revoked"
        ask = AskUser(
            Asker.SENSORS,
            # the requester is the caller's word: one quoted value (quoted_values.py), as every question's
            f"Grant {readable_text(who, 200)} access to your {sensor} at {scope} scope{until}?",
            {"requester": who},
        )
        if _modern(ctx):
            return Elicit(ask.shown(), GrantConfirmation)
        return await _pushed(ctx, ask, GrantConfirmation)

    @server.tool(annotations=ToolAnnotations(destructive_hint=False, open_world_hint=False))
    async def sensor_consent(
        action: Annotated[str, Field(description="grant | revoke | list")],
        confirmation: Annotated[ElicitationResult[GrantConfirmation], Resolve(ask_grant)],
        ctx: Context,
        sensor: Annotated[
            str | None, Field(description=SENSOR_HELP + "; revoke without it revokes all")
        ] = None,
        requester: Annotated[str | None, Field(description="whose consent; default: the caller")] = None,
        scope: Annotated[str, Field(description=SCOPE_HELP)] = "minimal",
        expires_in: Annotated[
            float | None, Field(description="seconds until the grant lapses; default: until revoked")
        ] = None,
    ) -> CallToolResult:
        """Manage sensor consent. action: grant | revoke | list. A grant is always confirmed by the user
        (elicitation); requester defaults to the caller; expires_in in seconds (default: until revoked)."""
        caller = principal_of(ctx)
        who = requester or caller
        if not _may_manage(ctx, requester):
            return _error(
                "only the device's owner manages other callers' consents; leave requester out", "forbidden"
            )
        if action == "list":
            try:
                listed = bridge.consents.list(requester if _manages_consents(ctx) else caller)
            except StoreUnavailable as e:
                return _error(e)
            # a remembered yes names the purpose its requester wrote: shown to the owner, marked as theirs
            return _ok({"consents": [c.model_dump(mode="json") for c in listed]},
                       untrusted_meta([c.purpose for c in listed if c.purpose], source=PURPOSES))
        if action not in ("grant", "revoke"):
            return _error(f"unknown action {action!r}; use grant, revoke or list")
        try:
            kind = parse_sensor(sensor) if sensor is not None else None
            level = parse_scope(scope)
        except ValueError as e:
            return _error(str(e))
        if action == "revoke":
            try:
                removed = bridge.consents.revoke(who, kind)
            except StoreUnavailable as e:
                return _error(e)
            return _ok({"revoked": removed, "requester": who, "sensor": kind.value if kind else None})
        if kind is None:
            return _error("grant needs a sensor")
        if expires_in is not None and not expires_in > 0:
            return _error("expires_in must be a positive number of seconds")
        if not _round_heard(ctx, Asker.SENSORS) or (
            isinstance(confirmation, AcceptedElicitation) and confirmation.data in (_DECLINED, _NOT_USER)
        ):
            return _error(
                "the grant was not confirmed by the user (an answer that is not the user's own "
                "counts for nothing)",
                "consent_declined",
            )
        if not isinstance(confirmation, AcceptedElicitation) or confirmation.data == _NOT_ASKED:
            if isinstance(confirmation, AcceptedElicitation):
                return _error(
                    "granting sensor consent needs the user: this client cannot ask (no elicitation); "
                    f"run `sentinel-mcp sensors consent grant {kind.value} --requester {who} "
                    f"--scope {level.value}`",
                    "consent_required",
                )
            return _error("the user did not confirm the grant", "consent_declined")
        if not confirmation.data.confirm:
            return _error("the user did not confirm the grant", "consent_declined")
        try:
            consent = bridge.consents.grant(who, kind, level, expires_in, granted_by="tool")
        except StoreUnavailable as e:
            return _error(e)
        except ValueError as e:
            return _error(str(e))
        return _ok({"granted": consent.model_dump(mode="json")})

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    async def sensor_retained(ctx: Context, task_id: str = "") -> CallToolResult:
        """Your readings still within their retention period and under a live consent (expired ones, and those
        of a consent revoked, narrowed or expired, are deleted): the newest that fit one answer, oldest first;
        left_out says how many older ones it did not hold (task_id narrows the answer)."""
        try:
            readings, left_out = bridge.retained_answer(principal_of(ctx), task_id or None)
        except StoreUnavailable as e:
            return _error(e)
        # each kept reading's payload, as sensor_read marked it when it was read
        responses = [r.get("response") for r in readings]  # each {task_id, payload, redactions, timestamp}
        payloads = [p.get("payload") for p in responses if isinstance(p, dict)]
        return _ok({"readings": readings, "left_out": left_out}, untrusted_meta(*payloads))

    return server


def sensor_request(
    sensor: str, scope: str, policy_tag: str, retention: int | None, rate: float | None, task_id: str,
    max_age: int | None = None,
) -> dict[str, Any]:
    """A ``sensor_read`` call as the bridge reads it (its consent question is asked of the same request)."""
    return {
        "sensor": sensor,
        "scope": scope,
        "policy_tag": policy_tag,
        "retention": retention,
        "rate": rate,
        "task_id": task_id,
        "max_age": max_age,
    }


def create_server(ctx: BuiltinContext) -> MCPServer:
    settings = SensorSettings.from_section(ctx.settings, f"sentinel.{ctx.name}")
    bridge = SensorBridge(
        make_source(settings, devices=ctx.services.devices),
        SensorDatabase(ctx.data_dir, ctx.store, key=ctx.services.sensor_consent_key),
        default_retention=settings.default_retention,
        max_retention=settings.max_retention,
    )
    # the defaults: quick calls, either era, no result keys of its own, every call over the MCP pair
    server = build_server(bridge, settings, ctx.name)
    strict_arguments(server)  # each argument in its own JSON type (a retention of `true` is not 1 second)
    return declare(server, BuiltinTraits())
