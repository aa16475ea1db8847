"""A row whose arguments are large is redacted in a worker thread, never on the event loop. Redaction walks
every key and string of the arguments (a secret may hide anywhere; ~20 us a key): one hostile call of 99,000
undeclared keys (1.3 MB, refused for its size) held the gateway's event loop, every other caller's answers
with it, for seconds on each call (measured against a real gateway: a concurrent one-word call waited 4.4 s).
The row stored is the one built on the loop before (same redaction, same cut, same chain)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from sentinel_mcp.core.record_bounds import CHARS_PER_VALUE, values_past
from sentinel_mcp.gateway import audit
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog
from sentinel_mcp.gateway.audit_chain import verify_file

pytestmark = pytest.mark.timeout(120)

MANY_KEYS = {"text": "x"} | {f"k{i}": i for i in range(50_000)}
SECRET = "sk-live-" + "9f3Kq7Zx" * 4


def _watched(monkeypatch: pytest.MonkeyPatch, on_large: Any = None) -> list[tuple[int, bool]]:
    """Each redaction's argument count and whether it ran on the event loop's thread; ``on_large`` runs in
    the redaction of the large arguments (before it)."""
    loop_thread = threading.get_ident()
    seen: list[tuple[int, bool]] = []
    real = audit.redact_arguments

    def redact(arguments: Any, sensitive: Any) -> Any:
        seen.append((len(arguments), threading.get_ident() == loop_thread))
        if on_large is not None and len(arguments) > 1000:
            on_large()
        return real(arguments, sensitive)

    monkeypatch.setattr(audit, "redact_arguments", redact)
    return seen


async def test_large_arguments_are_redacted_off_the_loop_and_small_ones_on_it(tmp_path, monkeypatch):
    seen = _watched(monkeypatch)
    log = await AuditLog(tmp_path / "sentinel.db").open()
    try:
        await log.write(AuditEntry(session="s", tool="big", decision="deny", outcome="denied",
                                   arguments=MANY_KEYS | {"api_key": SECRET}, reason=f"said {SECRET}"))
        await log.write(AuditEntry(session="s", tool="long", decision="allow", outcome="ok",
                                   arguments={"text": "4111 1111 1111 1111 " * 45_000}))  # 900 KB, one string
        await log.write(AuditEntry(session="s", tool="small", decision="allow", outcome="ok",
                                   arguments={"text": "hi"}))
        calls = await log.read(tail=10)
    finally:
        await log.close()
    assert seen == [(50_002, False), (1, False), (1, True)], seen  # the usual row stays inline: no thread hop
    assert [c["tool"] for c in calls] == ["big", "long", "small"]
    assert SECRET not in repr(calls), "the secret was stored"  # redacted as before, in the thread
    assert verify_file(tmp_path / "sentinel.db").ok


async def test_others_rows_are_written_while_a_large_one_is_redacted(tmp_path, monkeypatch):
    """The large row's redaction waits until another row is durable: on the loop, nothing else ran (the
    other row never came; it waited its 30 s and the order says so)."""
    other_written = threading.Event()
    order: list[str] = []
    _watched(monkeypatch, on_large=lambda: order.append("large redacted after the other row"
                                                          if other_written.wait(30) else "loop held"))
    log = await AuditLog(tmp_path / "sentinel.db").open()
    try:
        large = asyncio.create_task(log.write(AuditEntry(session="s", tool="big", decision="deny",
                                                         outcome="denied", arguments=MANY_KEYS)))
        await asyncio.sleep(0)  # the large write starts first
        await log.write(AuditEntry(session="t", tool="small", decision="allow", outcome="ok",
                                   arguments={"text": "hi"}))
        other_written.set()
        await large
    finally:
        await log.close()
    assert order == ["large redacted after the other row"], order
    assert verify_file(tmp_path / "sentinel.db").ok


@pytest.mark.parametrize(("value", "past"), [
    (None, False), ([1] * 255, False), ([1] * 256, True), ({"a": [1] * 253}, False), ({"a": [1] * 254}, True),
    ({f"k{i}": i for i in range(300)}, True), ([[[[1]]]] * 63, False), ([[[[1]]]] * 64, True),
    ("x" * (255 * CHARS_PER_VALUE), False), ("x" * (256 * CHARS_PER_VALUE), True),
    ({"k" * (300 * CHARS_PER_VALUE): 1}, True), ([1] * 10**6, True),
])
def test_values_past_counts_keys_items_and_scalars(value: Any, past: bool) -> None:
    assert values_past(value, audit.INLINE_VALUES) is past
