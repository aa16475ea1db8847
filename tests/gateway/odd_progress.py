"""Progress notices under tokens that name no call of the gateway's, sent by the hostile upstreams
(``hostile_stdio_upstream.py``, ``hostile_http_upstream.py``: attack ``odd_tokens``) during a call, before
its answer: every token shape JSON can spell, and ints and strings near the call's own id; and under the
call's own token, values that are no report (``BAD_VALUES``)."""

from __future__ import annotations

from typing import Any

EACH = 20  # notices of each token
BAD_VALUES = ["abc", True, None]  # a progress no number, under the call's own token


def odd_tokens(rid: Any) -> list[Any]:
    """The tokens, for a call of request id ``rid`` (its own token is ``rid``: never among them)."""
    # ids the lean calls use (from 2**40) and the SDK's (from 0), never the call's own
    near = [rid + 1, rid + 2, -1, rid + (1 << 40), rid - (1 << 40)] if isinstance(rid, int) else [987654]
    return ["someone-else", str(rid), 1.5, float(rid) if isinstance(rid, int) else 2.0, True, False, None,
            [rid], {"id": rid}, "x" * 100_000, *near]


def odd_progress(rid: Any) -> list[dict[str, Any]]:
    """``EACH`` notices a token, and as many with no token at all."""
    out: list[dict[str, Any]] = []
    for token in odd_tokens(rid):
        out += [{"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": token, "progress": i}} for i in range(EACH)]
    out += [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": i}}
            for i in range(EACH)]
    for value in BAD_VALUES:
        out += [{"jsonrpc": "2.0", "method": "notifications/progress",
                 "params": {"progressToken": rid, "progress": value}}] * EACH
    return out


def sent(rid: Any) -> int:
    return EACH * (len(odd_tokens(rid)) + 1 + len(BAD_VALUES))
