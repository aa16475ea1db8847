"""The cost of making approvals unforgeable and questions safe to read, side by side in one run.

Rows: sealing a request state (HMAC + nonce issued); accepting a retry (open, bind to session/tool/arguments/
policy version/keys, consume the nonce, convert the answers); strict validation of one answer against its
question's schema; rendering a question safely (plain text, and text full of hidden characters); and, end to
end through the real gateway (in-process front, real stdio upstream, 2026-07-28 client), a destructive call
answered with the user's approval compared with a read-only call that asks nothing.
Usage: python benchmarks/approval_checks.py [--n N] [--calls N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import anyio
from mcp import Client
from mcp.types import ElicitResult

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sentinel_mcp.config import parse_config  # noqa: E402
from sentinel_mcp.core.answer_validation import answer_problem  # noqa: E402
from sentinel_mcp.core.decision import Answer, ToolCall  # noqa: E402
from sentinel_mcp.policy.default_guard import confirmation_question  # noqa: E402
from sentinel_mcp.core.display_text import safe_question  # noqa: E402
from sentinel_mcp.gateway.input_rounds import InputRounds  # noqa: E402
from sentinel_mcp.gateway.request_state import RequestStateSeal  # noqa: E402
from sentinel_mcp.app.runtime import running_gateway  # noqa: E402

TOOLBOX = str(ROOT / "tests" / "gateway" / "toolbox_server.py")
ARGS = {"path": "/tmp/x", "text": "hello"}


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    for _ in range(min(200, n)):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1e6)
    return out


def micro_rows(n: int) -> list[tuple[str, list[float], str, str]]:
    rounds = InputRounds(RequestStateSeal())
    yes = {"sentinel.confirm.x": ElicitResult(action="accept", content={"approve": True})}

    def issue() -> str:
        return rounds.issue("ask", principal="owner", session="s", tool="tb__write_marker", arguments=ARGS,
                            version="v", asked=["sentinel.confirm.x"])

    states = [issue() for _ in range(n + 200)]
    it = iter(states)

    def accept() -> None:
        r = rounds.accept(
            modern=True,
            can_elicit=True,
            principal="owner",
            session="s",
            tool="tb__write_marker",
            arguments=ARGS,
            version="v",
            responses=yes,
            request_state=next(it),
        )
        assert r.kind == "ask"

    call = ToolCall(name="tb__write_marker", server="tb", tool="write_marker", arguments=ARGS)
    q = confirmation_question(call, "It may change things.")
    answer = Answer(action="accept", content={"approve": True})
    plain = (
        "Cancel reservation NO6JO3 (reason: change_of_plan)? The refund goes to the original payment methods."
    )
    hostile = "Cancel reservation NO6\u202eJO3\u200b (reason: \x1b[2Kchange_of_plan)? " + "x" * 600
    tricky = ToolCall(
        name="tb__write_marker",
        server="tb",
        tool="write_marker",
        arguments={"path": "/tmp/a\u202egpj.exe", "text": "y" * 2000},
    )
    return [
        ("seal a request state", timed(issue, n), "µs", "< 0.1 ms"),
        ("accept a retry (open+bind+consume)", timed(accept, n), "µs", "< 0.1 ms"),
        ("validate one answer strictly", timed(lambda: answer_problem(q, answer), n), "µs", "< 0.1 ms"),
        ("question text, plain", timed(lambda: safe_question(plain, ARGS), n), "µs", "< 0.1 ms"),
        (
            "question text, hidden chars + long",
            timed(lambda: safe_question(hostile, ARGS), n),
            "µs",
            "< 1 ms",
        ),
        (
            "default guard question, hostile args",
            timed(lambda: confirmation_question(tricky, "x"), n),
            "µs",
            "< 1 ms",
        ),
    ]


async def end_to_end(calls: int) -> list[tuple[str, list[float], str, str]]:
    tmp = Path(tempfile.mkdtemp())
    config = parse_config(
        {
            "mcpServers": {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
            "sentinel": {"data_dir": str(tmp), "builtins": []},
        },
        source="<bench>",
        base_dir=tmp,
    )

    async def yes(ctx: Any, params: Any) -> ElicitResult:
        return ElicitResult(action="accept", content={"approve": True})

    async with running_gateway(config) as rt:
        async with Client(rt.front.server, mode="auto", elicitation_callback=yes) as c:

            async def run(name: str, args: dict[str, Any]) -> list[float]:
                for _ in range(10):
                    await c.call_tool(name, args)
                out = []
                for _ in range(calls):
                    t0 = time.perf_counter()
                    r = await c.call_tool(name, args)
                    out.append((time.perf_counter() - t0) * 1000)
                    assert not r.is_error, r.content[0].text
                return out

            plain = await run("tb__echo", {"text": "x"})
            confirmed = await run("tb__write_marker", {"path": str(tmp / "m.txt"), "text": "x"})
    return [
        ("read-only call, nothing asked (e2e)", plain, "ms", "baseline"),
        (
            "destructive call + approval round trip (e2e)",
            confirmed,
            "ms",
            "two round trips: <= 2.5x baseline",
        ),
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    rows = micro_rows(args.n) + anyio.run(end_to_end, args.calls)
    w = max(len(r[0]) for r in rows)
    print(
        f"\nApproval checks and safe display ({args.n} runs per micro row, {args.calls} calls end to end)\n"
    )
    print(f"{'case':{w}}  {'p50':>10}  {'p99':>10}  goal")
    for name, values, unit, goal in rows:
        print(
            f"{name:{w}}  {statistics.median(values):>7.2f} {unit:2}  {pct(values, 0.99):>7.2f} {unit:2}  "
            f"{goal}"
        )


if __name__ == "__main__":
    main()
