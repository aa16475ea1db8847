"""SensorBridge: every sensor request passes consent, scope, rate limit, retention and audit, in that order.

Nothing leaves the bridge above the scope the requester was granted; every request, whatever its
outcome, writes exactly one audit row.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from sentinel_mcp.core.asking import Asker, AskUser
from sentinel_mcp.core.quoted_values import readable_text

from device_tools.sensors.audit_log import AuditLog
from device_tools.sensors.consent_registry import ANY_REQUESTER, Consent, ConsentRegistry
from device_tools.sensors.database import SensorDatabase
from device_tools.sensors.errors import (
    ConsentDeclined,
    ConsentRequired,
    InvalidRequest,
    SensorError,
    SourceUnavailable,
    StaleReading,
    StoreUnavailable,
    device_failure,
)
from device_tools.sensors.fix_time import DEFAULT_MAX_AGE, fix_time, shown_time, youngest_age
from sentinel_mcp.core.sensor_kinds import DESCRIPTIONS, MAX_RATE_HZ, SCOPED_SENSORS, Scope, SensorKind
from sentinel_mcp.core.sensor_messages import SensorRequest, SensorResponse, iso_utc
from device_tools.sensors.cell_store import CellStore
from device_tools.sensors.location_cells import LocationCells
from device_tools.sensors.rate_limiter import RateLimiter
from device_tools.sensors.reading_check import check_reading
from device_tools.sensors.reading_vault import ReadingVault
from device_tools.sensors.redaction import apply_scope
from device_tools.sensors.sources.base import SensorSource

# reads one requester may have running at once: half the source's slots (read_slots), so a requester whose
# reads hang (a sensor that never reports) cannot keep every other principal's reads refused
MAX_READS_PER_REQUESTER = 2

REMEMBER_SECONDS: dict[str, float | None] = {"this request only": 0, "1 hour": 3600, "1 day": 86_400,
                                             "until revoked": None}


class UserConsent(BaseModel):
    """The user's answer to a consent question (MCP elicitation form): strict JSON types, nothing extra."""

    model_config = ConfigDict(strict=True, extra="forbid")
    allow: bool
    remember: Literal["this request only", "1 hour", "1 day", "until revoked"] = "this request only"


class SensorBridge:
    def __init__(self, source: SensorSource, db: SensorDatabase, *, default_retention: int = 300,
                 max_retention: int = 86_400, clock: Callable[[], float] = time.time,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.source, self.db = source, db
        self.consents = ConsentRegistry(db, clock, on_narrowed=self._forget_uncovered)
        self.vault = ReadingVault(db, clock, covered=self._covers)
        self.audit = AuditLog(db, clock)
        self.limiter = RateLimiter(monotonic)
        # the coarse location each scope showed, kept in the store (every replica's): steady for a phone that
        # stays, whichever replica is read
        self.cells = LocationCells(CellStore(db))
        self.default_retention, self.max_retention = default_retention, max_retention
        self._running: dict[str, int] = {}  # requester -> its reads of the source running now
        self._clock = clock

    # --- consent questions (asked by the MCP layer before handle()) ---------------------------------

    def consent_question(self, requester: str, request: dict[str, Any]) -> str | None:
        """The question to ask the user, or None when stored consent covers it (or the request is invalid)."""
        try:
            req, _ = self._validate(request)
        except (ValidationError, ValueError):
            return None  # handle() reports the bad argument; asking the user about it would be pointless
        if self._covering(requester, req.sensor, req.scope, req):
            return None
        scope_text = f" at {req.scope.value} scope" if req.sensor.value in SCOPED_SENSORS else ""
        # what the person agrees to: the purpose the requester states and how long the reading is kept
        kept = f"kept for {req.retention} s" if req.retention else "not kept"
        # the requester's name and its stated purpose are theirs: each reads as one quoted value unless it is
        # one bare word (quoted_values.py), so a purpose cannot close its quote and state another retention
        return AskUser(Asker.SENSORS, f"Allow {readable_text(requester, 200)} to read your "
                       f"{req.sensor.value}{scope_text} for {readable_text(req.policy_tag, 300)} ({kept})?",
                       {"requester": requester, "policy_tag": req.policy_tag}).shown()

    def _covering(self, requester: str, sensor: SensorKind, scope: Scope,
                  req: SensorRequest | None = None) -> Consent | None:
        """The consent that covers a read at ``scope`` (and, given ``req``, its purpose and retention). The
        best live consent that allows the purpose decides the scope: the requester's own before the
        any-requester one, so an owner's narrower grant to one requester still narrows it."""
        for consent in self.consents.live(requester, sensor):
            if req is not None and not consent.allows(req.policy_tag, req.retention):
                continue  # a yes to another purpose (or a shorter keep) says nothing about this read
            return consent if sensor.value not in SCOPED_SENSORS or consent.scope.covers(scope) else None
        return None

    def _forget_uncovered(self, requester: str, sensor: SensorKind | None) -> None:
        """After a revoke or a grant: the kept readings no live consent covers any more are deleted, so a
        consent taken back (or narrowed) takes back what ``sensor_retained`` would still serve. Revoking the
        any-requester consent looks at every requester's readings (it may have been what covered them)."""
        whose = None if requester == ANY_REQUESTER else requester
        self.vault.forget_uncovered(whose, sensor.value if sensor else None)

    def _covers(self, requester: str, sensor: str, scope: str) -> bool:
        try:
            return self._covering(requester, SensorKind(sensor), Scope(scope)) is not None
        except ValueError:
            return False  # a row no consent can name is not kept either

    def retained(self, requester: str, task_id: str | None = None) -> list[dict[str, object]]:
        """``requester``'s kept readings that a live consent still covers: those of a consent that expired
        since (no revoke told us) are deleted as they are asked for, as a revoke deletes them at once."""
        self._forget_uncovered(requester, None)
        return self.vault.retained(requester, task_id)

    def retained_answer(self, requester: str,
                        task_id: str | None = None) -> tuple[list[dict[str, object]], int]:
        """``retained`` as one answer holds it: the newest readings that fit, and how many it left out."""
        self._forget_uncovered(requester, None)
        return self.vault.retained_within(requester, task_id)

    # --- the pipeline ------------------------------------------------------------------------------

    async def handle(self, request: SensorRequest | dict[str, Any], requester: str,
                     answer: UserConsent | Literal["declined"] | None = None,
                     decision_id: str = "") -> SensorResponse:
        """Run one request through the policy. Raises a SensorError (already audited) when refused.
        ``decision_id``: the gateway's decision for this call, which every audit row points to."""
        raw = request if isinstance(request, dict) else request.model_dump()
        try:
            req, rate = self._validate(request)
        except (ValidationError, ValueError) as e:
            invalid = InvalidRequest(_explain(e))
            self._audit(raw, requester, "invalid", invalid.message, [], decision_id=decision_id)
            raise invalid from None

        try:
            one_time = self._check_consent(req, requester, answer)  # 1. consent
            if self._running.get(requester, 0) >= MAX_READS_PER_REQUESTER:
                raise SourceUnavailable(f"{MAX_READS_PER_REQUESTER} reads of {requester!r} are already "
                                        "running; retry when one has ended")
            self.limiter.acquire(req.sensor, requester, rate)  # 3. rate limit
        except SensorError as e:
            decision = {
                "consent_required": "denied",
                "consent_declined": "denied",
                "throttled": "throttled",
            }.get(e.code, "failed")
            self._audit(raw, requester, decision, f"{e.code}: {e.message}", [], req, decision_id)
            raise
        self._running[requester] = self._running.get(requester, 0) + 1
        try:
            reading = await self.source.read(req.sensor)
            check_reading(reading.values)
            # a location's time is its fix's (fix_time.py): an old last-known fix is never shown as now
            fix_at = fix_time(reading.values, reading.taken_at) if req.sensor is SensorKind.location \
                else reading.taken_at
        except Exception as e:  # noqa: BLE001 - a source bug must not leak a traceback or crash the server
            raise self._failed(e, raw, requester, req, decision_id) from None
        finally:
            self._running[requester] -= 1
            if not self._running[requester]:
                del self._running[requester]  # an entry per requester only while it reads
        # max_age and the stale flag judge the time as the scope shows it (``youngest_age``), never the fix's
        # exact age: a read per max_age (0, 1, 2, ... s), or a read a second until the flag turned, told the
        # fix's time to the second that the scope's cut withholds
        age = youngest_age(req.scope, reading.taken_at, fix_at) if req.sensor is SensorKind.location \
            else 0.0
        if req.max_age is not None and age > req.max_age:
            stale = StaleReading(f"the phone's last {req.sensor.value} fix is older than the max_age of "
                                 f"{req.max_age} s asked for; nothing was returned or kept")
            self._audit(raw, requester, "failed", f"{stale.code}: {stale.message}", [], req, decision_id)
            raise stale
        try:
            # 2. scope is enforced by apply_scope: the reading is cut down before it exists outside
            payload, redactions = apply_scope(req.sensor, req.scope, reading.values, self.cells,
                                              reading.source)
        except Exception as e:  # noqa: BLE001 - as a read that failed
            raise self._failed(e, raw, requester, req, decision_id) from None
        shown_at = fix_at  # as the scope shows it: a location's time cut down to the scope's step
        if req.sensor is SensorKind.location:
            shown_at = shown_time(req.scope, fix_at)
            if age > DEFAULT_MAX_AGE:
                payload["stale"] = True  # said to be old: the requester set no max_age

        # consent again, now that the reading is here: a read takes seconds (a GPS fix), and a consent
        # revoked, narrowed or run out meanwhile must not release what it no longer covers
        stored = self._covering(requester, req.sensor, req.scope, req) is not None
        if not stored and not one_time:
            ended = ConsentRequired(f"the consent for {requester!r} to read {req.sensor.value} ended during "
                                    "the read; nothing was returned or kept")
            self._audit(raw, requester, "denied", f"{ended.code}: {ended.message}", [], req, decision_id)
            raise ended
        response = SensorResponse(
            task_id=req.task_id, payload=payload, redactions=redactions, timestamp=iso_utc(shown_at)
        )
        # a reading is kept only under a stored consent: one that covers nothing (a yes for this request only)
        # would be deleted unseen by sensor_retained, and meanwhile sit in the store
        retention = req.retention if stored else 0
        # 4. audit, before the reading is kept or leaves: a row that cannot be written refuses (NotRecorded)
        self._audit(raw, requester, "allowed", f"source {reading.source}", redactions, req, decision_id,
                    retention)
        self.vault.store(requester, req.sensor.value, req.scope.value, response, retention)  # 5. retention
        return response

    def _failed(self, e: Exception, raw: dict[str, Any], requester: str, req: SensorRequest,
                decision_id: str) -> SensorError:
        """A failed read, audited: a fixed message per code (the source's own text may quote device output,
        exact coordinates)."""
        # the store's own failure (the cells kept there) is said as such: its text is ours, not the phone's
        err = e if isinstance(e, StoreUnavailable) else device_failure(e, self.source.name, req.sensor.value)
        self._audit(raw, requester, "failed", f"{err.code}: {err.message}", [], req, decision_id)
        return err

    def _validate(self, request: SensorRequest | dict[str, Any]) -> tuple[SensorRequest, float]:
        if isinstance(request, SensorRequest):
            req = request
        else:
            given = {k: v for k, v in request.items() if v is not None}
            req = SensorRequest.model_validate({"retention": self.default_retention} | given)
        rate = req.effective_rate()
        if req.retention > self.max_retention:
            raise ValueError(f"retention {req.retention} s exceeds the maximum of {self.max_retention} s")
        return req, rate

    def _check_consent(self, req: SensorRequest, requester: str, answer: UserConsent | str | None) -> bool:
        """Raise unless consent covers the request; True when it is the user's yes for this request only
        (nothing stored that a revoke could take back), False when a stored consent covers it."""
        if self._covering(requester, req.sensor, req.scope, req):
            return False
        if answer == "declined" or (isinstance(answer, UserConsent) and not answer.allow):
            raise ConsentDeclined(f"the user declined {requester!r} access to {req.sensor.value}")
        if isinstance(answer, UserConsent):
            seconds = REMEMBER_SECONDS[answer.remember]
            if seconds != 0:
                # remembered for what the question said: this purpose, kept no longer than it said
                self.consents.grant(requester, req.sensor, req.scope, seconds, granted_by="elicitation",
                                    purpose=req.policy_tag, max_retention=req.retention)
                return False
            return True
        live = self.consents.live(requester, req.sensor)
        held = next((c for c in live if c.allows(req.policy_tag, req.retention)), None)
        why = (
            f"consent for {req.sensor.value} covers scope {held.scope.value!r} only"
            if held
            else f"the consent for {req.sensor.value} was given for another purpose or a shorter retention"
            if live
            else f"no consent for {requester!r} to read {req.sensor.value}"
        )
        raise ConsentRequired(
            f"{why}; the user can grant it with `sentinel-mcp sensors consent grant "
            f"{req.sensor.value} --requester {requester} --scope {req.scope.value}` "
            "or by answering the consent question in an MCP client that supports elicitation"
        )

    def _audit(
        self,
        raw: dict[str, Any],
        requester: str,
        decision: str,
        reason: str,
        redactions: list[str],
        req: SensorRequest | None = None,
        decision_id: str = "",
        retention: int = 0,
    ) -> None:
        self.audit.record(
            requester=requester,
            sensor=req.sensor.value if req else str(raw.get("sensor", ""))[:100],
            scope=req.scope.value if req else str(raw.get("scope", ""))[:100],
            policy_tag=req.policy_tag if req else str(raw.get("policy_tag", ""))[:200],
            task_id=req.task_id if req else str(raw.get("task_id", ""))[:200],
            decision=decision,
            reason=reason[:1000],
            redactions=redactions,
            retention=retention,
            decision_id=decision_id,
        )

    # --- inventory ---------------------------------------------------------------------------------

    async def sensor_list(self) -> dict[str, Any]:
        error = None
        try:
            available = await self.source.available()
        except SensorError as e:
            available, error = set(), device_failure(e, self.source.name, "its sensors").message
        sensors = [
            {
                "sensor": k.value,
                "available": k in available,
                "max_rate_hz": MAX_RATE_HZ[k],
                "scopes": [s.value for s in Scope],
                "description": DESCRIPTIONS[k],
            }
            for k in SensorKind
        ]
        out: dict[str, Any] = {"source": self.source.name, "sensors": sensors}
        if error:
            out["error"] = error
        return out


def _explain(e: Exception) -> str:
    if isinstance(e, ValidationError):
        parts = []
        for err in e.errors():
            loc = ".".join(str(p) for p in err["loc"]) or "request"
            msg = str(err["msg"]).removeprefix("Value error, ")
            parts.append(f"{loc}: {msg}")
        return "; ".join(parts)
    return str(e)
