"""A call's outcome row takes its decision row's redacted arguments and proof (``audit_repeats.py``): the
rows stored are the rows the redactor gives each entry alone, for secrets, cards, IBANs, codes, secret
argument names, values repeated across arguments, hostile texts, proofs quoting secrets, reasons and errors
quoting them, marked texts, values past the record bounds, nesting past the recursion limit; and an outcome
row that does not repeat its decision row's objects and content (a tool that changed its arguments in place,
another secret list, another call, a second outcome row) is redacted afresh. The redactor's scan runs once a
call."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from sentinel_mcp.core import redactor
from sentinel_mcp.core.display_text import Marked
from sentinel_mcp.gateway import audit as audit_module
from sentinel_mcp.gateway.audit import AuditEntry, AuditLog, redact_entry
from sentinel_mcp.gateway.audit_repeats import CAPACITY, MAX_KEPT_CHARS, RepeatedRows
from tests.policy.test_lazy_proofs import HOSTILE

SECRETS = [
    "4111 1111 1111 1111", "4111-1111-1111-1111", "DE89 3704 0044 0532 0130 00", "de89370400440532013000",
    "Kartenprüfnummer: 737", "Twój kod482913", "OTP482913", "password=hunter2hunter2",
    "sk-live-0123456789abcdef",
    "AKIAIOSFODNN7EXAMPLE", "ghp_0123456789abcdefghijklmnopqrstuvwxyz", "a\u0000b", "\udc80lone", "é" * 30,
]


def _text(rng: random.Random) -> str:
    return rng.choice([*SECRETS, *HOSTILE[:20], "ok", "", "x" * 5000])


def _value(rng: random.Random, depth: int = 0) -> Any:
    kinds = ["text", "text", "int", "float", "list", "object", "null", "bool"]
    kind = rng.choice(kinds if depth < 3 else ["text"])
    if kind == "text":
        return _text(rng)
    if kind == "int":
        return rng.choice([4111111111111111, 7, -1, 10 ** 30])
    if kind == "float":
        return rng.choice([0.5, 1e300, -2.0])
    if kind == "list":
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == "object":
        names = ["password", "token", "note", "card", "cvv", "q", "api_key"]
        return {rng.choice(names): _value(rng, depth + 1) for _ in range(rng.randint(0, 3))}
    return None if kind == "null" else rng.random() < 0.5


def _pair(rng: random.Random, n: int) -> tuple[AuditEntry, AuditEntry]:
    """A call's decision and outcome entries as ``CallRecord`` makes them: the same arguments and proof."""
    arguments = rng.choice([None, {}, {"q": _text(rng)}]) if rng.random() < 0.15 else {
        rng.choice(["q", "password", "note", "card", "secret", "text", "pin"]) + str(i): _value(rng)
        for i in range(rng.randint(1, 4))}
    if rng.random() < 0.2 and isinstance(arguments, dict) and arguments:  # a secret value repeated
        first = next(iter(arguments.values()))
        arguments["confirm_password"] = first
        arguments["again"] = first
    proof = rng.choice([None, None, {"goal": _text(rng), "by": [_text(rng) for _ in range(3)]}, [_text(rng)]])
    sensitive = frozenset(rng.sample(["q", "note0", "text1", "card0"], rng.randint(0, 2)))
    reason = rng.choice([None, "allowed", _text(rng), Marked(_text(rng))])
    base = dict(session=f"s{n}", tool="rec__echo", client="c", upstream="rec", arg_digest="d" * 64,
                arguments=arguments, proof=proof, sensitive=sensitive, policy_version="v1",
                decision_id=f"0190{n:028x}", principal="owner", decision="allow", reason=reason)
    decision = AuditEntry(event="decision", outcome="forwarded", **base)
    error = rng.choice([None, None, _text(rng), Marked(_text(rng))])
    outcome = AuditEntry(event="outcome", outcome=rng.choice(["ok", "tool_error", "cancelled"]), error=error,
                         **{**base, "reason": reason if rng.random() < 0.8 else _text(rng)})
    return decision, outcome


def _alone(log: AuditLog, entry: AuditEntry) -> tuple[Any, ...]:
    """The row the redactor gives ``entry`` alone (a redactor other than the default: nothing repeated)."""
    other = AuditLog(log.path, redactor=lambda e: redact_entry(e))
    return other.row(entry)


def test_every_row_is_the_row_of_its_entry_alone(tmp_path) -> None:
    log = AuditLog(tmp_path / "a.db")
    rng = random.Random(2121)
    taken = 0
    for n in range(1500):
        decision, outcome = _pair(rng, n)
        assert log.row(decision) == _alone(log, decision), (n, decision)
        kept = len(log._repeats.kept)
        assert log.row(outcome) == _alone(log, outcome), (n, outcome)
        taken += len(log._repeats.kept) < kept
    assert taken > 700, taken  # most pairs took the decision row's work (the rest: no arguments, no proof)


def test_the_arguments_are_redacted_once_a_call(tmp_path, monkeypatch) -> None:
    scans = []
    real = redactor.redact_arguments

    def counted(*args: Any, **kw: Any) -> Any:
        scans.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(audit_module, "redact_arguments", counted)
    log = AuditLog(tmp_path / "a.db")
    arguments = {"card": "4111 1111 1111 1111", "password": "hunter2hunter2", "note": "hunter2hunter2"}
    proof = {"goal": "pay", "by": ["hunter2hunter2 was given"]}
    for n in range(10):
        base = dict(session="s", tool="t", decision="allow", arguments=arguments, proof=proof,
                    decision_id=f"id{n}", reason="allowed for hunter2hunter2")
        decision = log.row(AuditEntry(event="decision", outcome="forwarded", **base))
        outcome = log.row(AuditEntry(event="outcome", outcome="ok", error="hunter2hunter2 failed", **base))
        assert "hunter2hunter2" not in repr(decision) + repr(outcome)
        assert "1111 1111" not in repr(decision) + repr(outcome)
    assert len(scans) == 10  # one a call, not one a row


def _rows(log: AuditLog, decision: AuditEntry, outcome: AuditEntry) -> tuple[Any, Any]:
    return log.row(decision), log.row(outcome)


@pytest.mark.parametrize("change", [
    lambda a: a.__setitem__("note", "4111 1111 1111 1111"),  # a card put in after the decision
    lambda a: a["items"].append("DE89 3704 0044 0532 0130 00"),  # deep in a list
    lambda a: a["items"].__setitem__(0, "password=hunter2hunter2"),
    lambda a: a.__setitem__("password", "another-secret-value"),  # the secret itself changed: its mask too
    lambda a: a.pop("password"),
    lambda a: a["items"].__setitem__(0, ("tuple", "4111 1111 1111 1111")),
])
def test_arguments_changed_in_place_are_redacted_afresh(tmp_path, change) -> None:
    log = AuditLog(tmp_path / "a.db")
    arguments: dict[str, Any] = {"note": "plain", "items": ["a", "b"], "password": "hunter2hunter2"}
    base = dict(session="s", tool="t", decision="allow", arguments=arguments, decision_id="id1",
                reason="ok")
    decision = AuditEntry(event="decision", outcome="forwarded", **base)
    log.row(decision)
    change(arguments)  # (a tool of the gateway's own process holding the very dict)
    outcome = AuditEntry(event="outcome", outcome="ok", error="hunter2hunter2 another-secret-value", **base)
    row = log.row(outcome)
    assert row == _alone(log, outcome)
    # (a tuple is no JSON a client can send: the redactor leaves it as it is, on main too)
    cards = () if any(type(v) is tuple for v in arguments["items"]) else ("1111 1111",)
    for secret in (*cards, "3704", *(v for k, v in arguments.items() if k == "password")):
        assert secret not in repr(row), (secret, row)


def test_another_calls_outcome_or_a_second_one_takes_nothing(tmp_path) -> None:
    log = AuditLog(tmp_path / "a.db")
    secret_args = {"password": "hunter2hunter2", "q": "x"}
    other_args = {"password": "hunter2hunter2", "q": "x"}  # equal, but another call's object
    d = AuditEntry(session="s", tool="t", decision="allow", event="decision", outcome="forwarded",
                   arguments=secret_args, decision_id="id1", reason="r")
    log.row(d)
    # another call's outcome with equal arguments: its own redaction, and the kept entry stays for id1
    o2 = replace(d, event="outcome", outcome="ok", decision_id="id2", arguments=other_args,
                 error="hunter2hunter2")
    assert log.row(o2) == _alone(log, o2) and "id1" in log._repeats.kept
    # the same id, other objects: not taken
    o3 = replace(d, event="outcome", outcome="ok", arguments=dict(secret_args))
    assert log.row(o3) == _alone(log, o3) and "id1" not in log._repeats.kept
    log.row(d)
    o1 = replace(d, event="outcome", outcome="ok", error="hunter2hunter2 leaked")
    assert log.row(o1) == _alone(log, o1)
    assert "hunter2hunter2" not in repr(log.row(o1))  # a second outcome row: redacted afresh, the same
    # another secret list (a tool whose schema changed): not taken
    log.row(d)
    o4 = replace(d, event="outcome", outcome="ok", sensitive=frozenset({"q"}))
    assert log.row(o4) == _alone(log, o4)


def test_final_rows_and_other_redactors_keep_nothing_and_it_is_bounded(tmp_path) -> None:
    log = AuditLog(tmp_path / "a.db")
    args = {"q": "4111 1111 1111 1111"}
    log.row(AuditEntry(session="s", tool="t", decision="deny", event="final", outcome="denied",
                       arguments=args, decision_id="f1"))
    assert not log._repeats.kept
    for n in range(CAPACITY + 50):
        log.row(AuditEntry(session="s", tool="t", decision="allow", event="decision", outcome="forwarded",
                           arguments=args, decision_id=f"d{n}"))
    assert len(log._repeats.kept) == CAPACITY
    custom = AuditLog(tmp_path / "b.db", redactor=lambda e: redact_entry(e))
    custom.row(AuditEntry(session="s", tool="t", decision="allow", event="decision", outcome="forwarded",
                          arguments=args, decision_id="c1"))
    assert not custom._repeats.kept
    nan = RepeatedRows()  # a value no strict JSON holds: never kept
    nan_entry = AuditEntry(session="s", tool="t", decision="allow", event="decision", outcome="forwarded",
                           arguments={"x": float("nan")}, decision_id="n1")
    nan.keep(nan_entry, set(), nan_entry, "{}", None)
    assert not nan.kept


def test_a_proof_changed_in_place_and_large_arguments_are_redacted_afresh(tmp_path) -> None:
    log = AuditLog(tmp_path / "a.db")
    proof: dict[str, Any] = {"goal": "ok", "by": ["plain"]}
    base = dict(session="s", tool="t", decision="allow", arguments={"q": "x"}, proof=proof, decision_id="p1")
    log.row(AuditEntry(event="decision", outcome="forwarded", **base))
    proof["by"].append("4111 1111 1111 1111")
    outcome = AuditEntry(event="outcome", outcome="ok", **base)
    row = log.row(outcome)
    assert row == _alone(log, outcome) and "1111 1111" not in repr(row)
    big = {"q": "y" * (MAX_KEPT_CHARS + 1)}
    log.row(AuditEntry(event="decision", outcome="forwarded", **{**base, "arguments": big, "proof": None}))
    assert not log._repeats.kept  # a call that never writes its outcome row holds no large copy


def test_arguments_nested_past_the_recursion_limit_are_stored_as_alone(tmp_path) -> None:
    log = AuditLog(tmp_path / "a.db")
    deep: Any = "4111 1111 1111 1111"
    for _ in range(5000):
        deep = [deep]
    base = dict(session="s", tool="t", decision="allow", arguments={"q": deep}, decision_id="deep1")
    decision = AuditEntry(event="decision", outcome="forwarded", **base)
    outcome = AuditEntry(event="outcome", outcome="ok", **base)
    assert log.row(decision) == _alone(log, decision)
    assert log.row(outcome) == _alone(log, outcome)
