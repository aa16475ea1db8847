"""The signatures of an agent run's rows on a server store (``storage/row_signature.py``; the cluster's key
"agent trace"), and their checks.

A run's trace is shown to the principal its run row names, on every replica: what the agent read (messages,
screens) is that principal's. Unsigned, anyone who could write the database without the seal key could hand
a run to another principal, move or copy a step or a reflection (or its text) into another principal's run,
or plant a run. So each row is signed by the replica that writes it, over what binds it and what it shows:
- a run: id, principal, conversation, goal, reason, answer (``RUN_SIGNED``);
- a step: its run, number and record;
- a reflection: its run, step number, time, kind, signs and text.
A row that fails its check is nobody's: never listed, opened or shown (a run's bad steps and reflections are
left out of it). Not signed: a run's status, times and counters (shown, never acted on, and nobody else's
words), and a reflection's order (``seq``). Rows from before signing are unsigned: no longer shown.
"""

from __future__ import annotations

from typing import Any, Sequence

from sentinel_mcp.storage.row_signature import sign_row, signed_row

RUN_SIGNED = ("run_id", "principal", "session", "goal", "reason", "answer")


def run_mac(key: bytes, run: Sequence[Any]) -> str:
    """``run``: the values of ``RUN_SIGNED`` in that order (text; the answer may be None)."""
    return sign_row(key, "agent run", tuple(run))


def run_signed(key: bytes, mac: Any, run: Sequence[Any]) -> bool:
    return _all_text(run[:5]) and signed_row(key, mac, "agent run", tuple(run))


def step_mac(key: bytes, run_id: str, n: int, record: str) -> str:
    return sign_row(key, "agent step", (run_id, str(n), record))


def step_signed(key: bytes, mac: Any, run_id: Any, n: Any, record: Any) -> bool:
    return (type(n) is int and _all_text((run_id, record))
            and signed_row(key, mac, "agent step", (run_id, str(n), record)))


def reflection_mac(key: bytes, run_id: str, n: int, at: str, kind: str, signs: str, text: str) -> str:
    return sign_row(key, "agent reflection", (run_id, str(n), at, kind, signs, text))


def reflection_signed(key: bytes, mac: Any, run_id: Any, n: Any, at: Any, kind: Any, signs: Any,
                      text: Any) -> bool:
    fields = (run_id, at, kind, signs, text)
    return (type(n) is int and _all_text(fields)
            and signed_row(key, mac, "agent reflection", (run_id, str(n), at, kind, signs, text)))


def _all_text(values: Sequence[Any]) -> bool:
    return all(isinstance(v, str) for v in values)
