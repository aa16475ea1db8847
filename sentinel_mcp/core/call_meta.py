"""Who is calling: the gateway forwards the caller's session and identity to built-ins in ``_meta``.

Built-ins (mounted in-process) read these to scope per-session state (facts, contexts) and per-principal
state (consents, retained readings). Only the gateway sets them: a client's own ``_meta`` never reaches a
built-in.
"""

from __future__ import annotations

from typing import Any

SESSION_KEY = "sentinel/session"
CLIENT_KEY = "sentinel/client"
ORIGIN_KEY = "sentinel/origin"
CAN_SAMPLE_KEY = "sentinel/can_sample"
PRINCIPAL_KEY = "sentinel/principal"
DECISION_KEY = "sentinel/decision_id"  # the gateway's audit row for this call: built-ins' records point to it
# the kinds of personal data the caller holds consent for (a tool that declares ``sentinel/personal_screen``):
# a list of kinds, or ALL_KINDS for a call no consent gates (the policy's own fetches, built-ins' own calls)
CONSENTED_KEY = "sentinel/consented"
# the same tool's kinds the caller holds consent for, for any purpose (the consented ones are this call's):
# what a built-in keeps of another kind may go for good, what is held for another purpose only stays unshown
STANDING_KEY = "sentinel/standing"
# the purpose the caller stated (consents are per purpose): a built-in whose calls are its caller's (the
# agent's steps) states it again on each
PURPOSE_KEY = "sentinel/purpose"
MAX_PURPOSE = 80  # the longest purpose the front accepts from a client (a longer one is refused, not cut)
ALL_KINDS = "*"


def call_meta(session_id: str, client: str | None, origin: str, principal: str | None = None, *,
              can_sample: bool = False, decision_id: str = "",
              consented: list[str] | str | None = None, purpose: str | None = None,
              standing: list[str] | str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {SESSION_KEY: session_id, CLIENT_KEY: client or "", ORIGIN_KEY: origin,
                            PRINCIPAL_KEY: principal or "", DECISION_KEY: decision_id}
    if purpose is not None:
        meta[PURPOSE_KEY] = purpose
    if standing is not None:
        meta[STANDING_KEY] = standing
    if consented is not None:
        meta[CONSENTED_KEY] = consented
    # true when a sampling request the built-in sends during this call reaches the caller's model
    if can_sample:
        meta[CAN_SAMPLE_KEY] = True
    return meta


def _meta_of(ctx: Any) -> dict[str, Any]:
    # MCPServer's Context -> request_context.meta; low-level ServerRequestContext -> .meta
    rc = getattr(ctx, "request_context", ctx)
    meta = getattr(rc, "meta", None)
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return meta
    return dict(getattr(meta, "model_extra", None) or {}) | {
        k: v for k, v in getattr(meta, "__dict__", {}).items() if not k.startswith("_")
    }


def behind_gateway(ctx: Any) -> bool:
    """Whether the call being handled came through the gateway (which always names its session)."""
    return SESSION_KEY in _meta_of(ctx)


def session_of(ctx: Any, default: str = "default") -> str:
    """The Sentinel session of the call being handled (``default`` when run standalone)."""
    return str(_meta_of(ctx).get(SESSION_KEY) or default)


def client_of(ctx: Any, default: str = "local") -> str:
    return str(_meta_of(ctx).get(CLIENT_KEY) or default)


def origin_of(ctx: Any, default: str = "client") -> str:
    """Which front the call came through (client, a2a, builtin, ...), as the gateway established it."""
    return str(_meta_of(ctx).get(ORIGIN_KEY) or default)


def can_sample_of(ctx: Any) -> bool | None:
    """Through the gateway: whether the calling client's model can be asked (sampling relayed); None
    standalone."""
    meta = _meta_of(ctx)
    return bool(meta.get(CAN_SAMPLE_KEY)) if SESSION_KEY in meta else None


def principal_of(ctx: Any, default: str = "local") -> str:
    """The principal the call runs for (consents and retained data are theirs); ``default`` standalone."""
    return str(_meta_of(ctx).get(PRINCIPAL_KEY) or default)


def decision_id_of(ctx: Any) -> str:
    """The gateway's decision id for the call being handled ("" standalone or when malformed)."""
    value = _meta_of(ctx).get(DECISION_KEY)
    return value if isinstance(value, str) and len(value) <= 200 else ""


def purpose_of(ctx: Any) -> str | None:
    """The purpose the caller stated, as the gateway passed it on (None: none, or not text it keeps)."""
    value = _meta_of(ctx).get(PURPOSE_KEY)
    return value if isinstance(value, str) and value.strip() and len(value) <= MAX_PURPOSE else None


def consented_of(ctx: Any, key: str = CONSENTED_KEY) -> list[str] | None:
    """The kinds the gateway says the caller holds consent for (``key``: for this call's purpose, or
    ``STANDING_KEY``: for any): None for all (``ALL_KINDS``); a call without the key, or with anything but a
    list of texts, holds none (the built-in shows no personal data)."""
    value = _meta_of(ctx).get(key)
    if value == ALL_KINDS:
        return None
    if isinstance(value, list) and all(isinstance(k, str) for k in value):
        return list(value)
    return []


def standing_of(ctx: Any) -> list[str] | None:
    """The kinds the caller holds consent for, for any purpose (``consented_of`` with ``STANDING_KEY``); a
    call the gateway told no standing kinds: its consented ones (what it may see, it may keep)."""
    return consented_of(ctx, STANDING_KEY if STANDING_KEY in _meta_of(ctx) else CONSENTED_KEY)
