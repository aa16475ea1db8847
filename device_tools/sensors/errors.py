"""Why a sensor request failed: each error has a stable code and a message a user can act on."""

from __future__ import annotations
from sentinel_mcp.core.errors import SentinelError


class SensorError(SentinelError):
    area = "sensors"
    code = "sensor_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_dict(self) -> dict[str, object]:
        return {"error": self.code, "message": self.message}


class StoreUnavailable(SensorError):
    """The sensors' store (consents, retention, audit) cannot be reached: calls are refused (fail closed)."""
    code = "store_unavailable"


class InvalidRequest(SensorError):
    code = "invalid_request"


class ConsentRequired(SensorError):
    code = "consent_required"


class ConsentDeclined(SensorError):
    code = "consent_declined"


class Throttled(SensorError):
    code = "throttled"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after

    def to_dict(self) -> dict[str, object]:
        return super().to_dict() | {"retry_after": round(self.retry_after, 3)}


class SensorUnsupported(SensorError):
    """The configured source has no such sensor on this device."""

    code = "sensor_unsupported"


class SourceUnavailable(SensorError):
    """The source cannot be reached: no device, no Termux binary, a timeout, a failing command."""

    code = "source_unavailable"


class SourceMissing(SourceUnavailable):
    """The source's command is not installed here: its message is our own (command and search path), kept."""


class NotRecorded(SensorError):
    """The request's audit row could not be written: refused, nothing read is returned or kept."""

    code = "not_recorded"


class ReadRefused(SensorError):
    """The device gate refused the command (not a read-only one): nothing reached the device."""

    code = "read_refused"


class MalformedOutput(SensorError):
    """The source answered, but not in a format we can read."""

    code = "malformed_output"


class NoReading(SensorError):
    """The source works but has no value right now (e.g. no last known location)."""

    code = "no_reading"


class StaleReading(SensorError):
    """The fix read is older than the requester's ``max_age``: nothing is returned (its text is our own)."""

    code = "stale_reading"


# What a client and the audits learn of a failed read: a fixed sentence per code. A source's or parser's own
# text can quote the device's output (a fix's coordinates), and it must not pass the granted scope.
_FIXED: dict[str, str] = {
    SourceUnavailable.code: "{source} could not read {sensor} (unreachable, failed or timed out)",
    MalformedOutput.code: "{source} answered for {sensor} in a form that cannot be read",
    NoReading.code: "{source} has no {sensor} reading right now",
    SensorUnsupported.code: "{source} cannot read {sensor} on this device",
    ReadRefused.code: "the device gate refused the {sensor} read",
}


def device_failure(error: Exception, source: str, sensor: str) -> SensorError:
    """The error to report for a failed device read: same code, a fixed message (never the device's text)."""
    if isinstance(error, SourceMissing):
        return error
    kinds: tuple[type[SensorError], ...] = (SourceUnavailable, MalformedOutput, NoReading, SensorUnsupported,
                                            ReadRefused)
    kind = next((k for k in kinds if isinstance(error, k)), SourceUnavailable)
    return kind(_FIXED[kind.code].format(source=source[:100], sensor=sensor))
