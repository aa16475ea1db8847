"""An ``initialize`` the SDK would refuse for its params is refused before it reaches the SDK's HTTP session
manager, so that it leaves no session behind.

The manager opens a session (an ``Mcp-Session-Id``, a server task, an entry in the principal's share of
sessions) for a POST without a session id before the message is read, and kept it after its own validation
refused the handshake ("Invalid request parameters", the id issued all the same): each refused handshake held
a session until it went idle. The check is the SDK's own (``InitializeRequestParams`` with its options, the
params absent read as ``{}``), so the two verdicts agree; only an ``initialize`` pays for it.
"""

from __future__ import annotations

from typing import Any

from mcp_types import InitializeRequestParams
from pydantic import ValidationError

from sentinel_mcp.core.wire_limits import INVALID_PARAMS, WireError, valid_id


def initialize_refusal(message: dict[str, Any]) -> WireError | None:
    """The error an ``initialize`` request whose params the SDK refuses gets (None: any other message, or
    params it takes)."""
    if "id" not in message:
        return None
    try:
        InitializeRequestParams.model_validate(message.get("params", {}), by_name=False)
    except ValidationError as e:
        errors = e.errors()
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else ""
        why = f"Invalid params: initialize {where or 'params'}: {errors[0]['msg'] if errors else 'invalid'}"
        return WireError(INVALID_PARAMS, why[:300], valid_id(message.get("id")))
    return None
