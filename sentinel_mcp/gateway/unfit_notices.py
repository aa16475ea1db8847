"""Whether a notice an upstream sent is one the client's session can take: a method its era defines, with
params of that method's shape. One that is not (a method no era defines, a near spelling, a huge name;
params of the wrong shape; a method that is no string) reaches no one; a flood of them cost the gateway a
log line each (the SDK's session: a warning with its traceback, or a debug line; the lean HTTP path: an info
line), uncharged. Now each is charged to its upstream's notice budget and counted, and said at a cadence
(``upstream_relays.unfit_notice``)."""

from __future__ import annotations

from typing import Any

from mcp_types import methods as sdk_methods

UNKNOWN = "of a method no client takes"
MALFORMED = "whose params are not of their method's shape"
# each why's label on /metrics (``notices_unfit_total``): a fixed set, never a name the upstream sent
LABELS = {UNKNOWN: "unknown_method", MALFORMED: "malformed"}
SHOWN = 60  # characters of a method's name said in the log (a name may be 100 KB)


def unfit(method: Any, params: Any, version: str) -> str | None:
    """Why a notice of ``method`` and ``params`` (as sent) is no session's to take, on protocol ``version``
    (None: it is, and goes on as before)."""
    return read(method, params, version)[1]


def read(method: Any, params: Any, version: str) -> tuple[Any, str | None]:
    """The notice as the SDK's session reads it (a ``ServerNotification``), or why it cannot be read."""
    if not isinstance(method, str) or (params is not None and not isinstance(params, dict)):
        return None, MALFORMED
    try:
        return sdk_methods.parse_server_notification(method, version, params), None
    except KeyError:
        return None, UNKNOWN
    except Exception:  # pydantic's ValidationError, or anything else the reader raises: no session takes it
        return None, MALFORMED


def head(method: Any) -> str:
    """A method as said in the log: a string's head, anything else by its type."""
    return repr(method[:SHOWN]) if isinstance(method, str) else f"of type {type(method).__name__}"
