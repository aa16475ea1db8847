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
