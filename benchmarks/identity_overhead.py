"""What knowing who is asking costs per call: resolving a token to a principal (1 and 100 principals), opening
a sealed session key, the audit redactor on a typical record and on one with a large proof, and the consent
gate's look-up for a personal read with a standing consent. Prints one table, each row with its goal.
Usage: python benchmarks/identity_overhead.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcp.types import Tool  # noqa: E402

from sentinel_mcp.gateway.consent_gate import ConsentGate  # noqa: E402
from sentinel_mcp.gateway.consents import ConsentBook  # noqa: E402
from sentinel_mcp.gateway.conversations import Conversations  # noqa: E402
from sentinel_mcp.core.decision import Allow, ToolCall  # noqa: E402
from sentinel_mcp.core.redactor import redact_record  # noqa: E402
from sentinel_mcp.identity.credentials import Credentials  # noqa: E402
from sentinel_mcp.identity.principal import Principal  # noqa: E402
from sentinel_mcp.identity.resolver import Authenticator, TokenResolver  # noqa: E402


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def atimed(fn: Callable[[], Any], runs: int) -> list[float]:
    async def go() -> list[float]:
        out = []
        for _ in range(runs):
            t = time.perf_counter()
            await fn()
            out.append((time.perf_counter() - t) * 1e6)
        return out
    return asyncio.run(go())


def authenticator(n: int) -> Authenticator:
    tokens = TokenResolver()
    for i in range(n):
        tokens.add(Principal(f"p{i}", "token"), token=f"token-of-principal-{i:04d}-abcdef")
    return Authenticator([tokens])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    args = ap.parse_args()
    n = args.runs
    rows: list[tuple[str, list[float], float]] = []

    one, hundred = authenticator(1), authenticator(100)
    last = Credentials(bearer="token-of-principal-0099-abcdef")
    rows.append(("token -> principal, 1 principal", timed(lambda: one.authenticate(
        Credentials(bearer="token-of-principal-0000-abcdef")), n), 50))
    rows.append(("token -> principal, 100 principals", timed(lambda: hundred.authenticate(last), n), 500))

    conv = Conversations()
    alice = Principal("alice", "token")
    sealed = conv.sealed(conv.open(alice, "conv"))
    rows.append(("sealed session key -> conversation", timed(lambda: conv.named(sealed, alice), n), 50))

    typical = {
        "session": "alice/http-0011223344556677",
        "tool": "airline__cancel_reservation",
        "arguments": {"reservation_id": "NO6JO3", "reason": "change of plan"},
        "reason": "guard of airline__cancel_reservation proved (rulebase 1b158e52)",
        "proof": {"rulebase": "1b158e52", "tree": [["owns", "u_123", "NO6JO3"], ["confirmed", "yes"]] * 5},
    }
    large = {
        **typical,
        "arguments": {"snapshot_id": "s-1", "element_id": "e-2", "text": "Tr0ub4dor&3"},
        "proof": {"tree": [["fact", f"flight_{i}", "2024-05-16", "HAT083", i] for i in range(400)]},
    }
    rows.append(("redact a typical audit record", timed(lambda: redact_record(typical), n), 100))
    rows.append(
        ("redact a record with a 20 KB proof", timed(lambda: redact_record(large, {"text"}), n // 10), 5000)
    )

    with tempfile.TemporaryDirectory() as d:
        book = ConsentBook(Path(d) / "consents.db")
        book.grant("alice", "messages", by="cli")
        gate = ConsentGate(book)
        tool = Tool(
            name="device__sms_list", input_schema={"type": "object"}, _meta={"sentinel/personal": "messages"}
        )
        call = ToolCall(
            name="device__sms_list",
            server="device",
            tool="sms_list",
            principal="alice",
            session_id="alice/conv-1",
        )
        rows.append(
            (
                "consent gate, standing consent (SQLite)",
                atimed(lambda: gate.gate(call, tool, Allow()), n),
                300,
            )
        )
        book.close()

    w = max(len(r[0]) for r in rows)
    print(f"\nIdentity overhead per call ({n} runs each; microseconds)")
    print(f"{'case':{w}}  {'p50 us':>9}  {'p99 us':>9}  {'goal p50':>9}  ok")
    for name, samples, goal in rows:
        p50 = statistics.median(samples)
        p99 = sorted(samples)[int(len(samples) * 0.99) - 1]
        print(f"{name:{w}}  {p50:>9.1f}  {p99:>9.1f}  {goal:>9.0f}  {'yes' if p50 <= goal else 'NO'}")


if __name__ == "__main__":
    main()
