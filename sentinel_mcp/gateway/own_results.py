"""Results Sentinel writes itself (a refusal, a hold, an error): text for the model, details in ``_meta``.

Never in ``structuredContent``: when the tool declares an ``outputSchema``, SDK clients (the TypeScript one,
and so the Inspector, Claude Desktop, VS Code) validate ``structuredContent`` against it and throw, so the
user would never see why the call was held. ``_meta`` is free for vendor keys; ours all start ``sentinel/``.
"""

from __future__ import annotations

from typing import Any, TypeVar

from mcp.types import CallToolResult, Result, TextContent
from mcp_types import SERVER_INFO_META_KEY

META_PREFIX = "sentinel/"
R = TypeVar("R", bound=Result)


def sentinel_result(text: str, **info: Any) -> CallToolResult:
    """An ``isError`` result whose details live under ``_meta["sentinel/<key>"]``."""
    meta = {META_PREFIX + key: value for key, value in info.items() if value is not None}
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True, _meta=meta or None)


def sentinel_info(result: CallToolResult) -> dict[str, Any]:
    """What Sentinel said about a result (``{}`` when the result is the upstream's own)."""
    meta = result.meta or {}
    return {key.removeprefix(META_PREFIX): value for key, value in meta.items()
            if isinstance(key, str) and key.startswith(META_PREFIX)}


# What one built-in states about its own results (the device firewall's decision): kept only from the upstream
# that declares it (``BuiltinTarget.result_meta``); from any other upstream it is a claim to be that built-in.
# (the device's decision, and the kinds of personal data a screen of its showed: ``screen_privacy``)
BUILTIN_KEYS = frozenset({META_PREFIX + "device-decision", META_PREFIX + "personal_shown"})


def without_others_claims(result: R, declared: frozenset[str]) -> R:
    """An upstream's result without a built-in's keys that this upstream has not declared as its own."""
    return _without(result, BUILTIN_KEYS - declared if declared else BUILTIN_KEYS)


# What only Sentinel states about a result: its decision and record, why it refused or holds a call, its own
# errors, the session. An upstream's result naming any of these is hostile (or confused): they are dropped
# before Sentinel stamps its own. An upstream's other ``sentinel/`` keys (``untrusted``) describe its own data
# and
# stay; a built-in's own keys stay from that built-in only (``without_others_claims``).
VERDICT_KEYS = frozenset(
    META_PREFIX + key
    for key in (
        "decision_id",
        "decision",
        "reason",
        "unmet",
        "how_to_unblock",
        "blocked",
        "questions",
        "error",
        "upstream",
        "session",
    )
)


# Who answered (a 2026-07-28 result's ``io.modelcontextprotocol/serverInfo``) is Sentinel's to state as well:
# the client talks to Sentinel, whose discovery names Sentinel; an upstream's stamp (its name and version, or
# any name it claims) is dropped, and the answer carries Sentinel's own, as every other answer does.
NOT_AN_UPSTREAMS = VERDICT_KEYS | {SERVER_INFO_META_KEY}
_STAMP = frozenset({SERVER_INFO_META_KEY})


def without_verdict(result: R) -> R:
    """An upstream's result (or input request) without any claim to be Sentinel's word, or to be who answers.
    """
    return _without(result, NOT_AN_UPSTREAMS)


def without_upstream_stamp(result: R) -> R:
    """An upstream's other answer (a resource read, a prompt, completions) without its stamp of who answered
    (Sentinel stamps its own)."""
    return _without(result, _STAMP)


def _without(result: R, keys: frozenset[str]) -> R:
    """``result`` without those ``_meta`` keys (the same object when it has none of them)."""
    meta = result.meta
    if not meta or keys.isdisjoint(meta):
        return result  # the common case costs one check
    kept = {k: v for k, v in meta.items() if k not in keys}
    return result.model_copy(update={"meta": kept or None})
