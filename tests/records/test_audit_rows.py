"""Audit rows built cheaply must be the same rows: the stored and hashed JSON texts are byte for byte what
they were (old rows keep verifying), an entry with nothing to mask is stored as it is, and secret argument
names are found however long and however many names callers send (the name check is cached for short names
only)."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from datetime import datetime, timezone

from sentinel_mcp.core.audit_entry import AuditEntry
from sentinel_mcp.core.decision import argument_digest
from sentinel_mcp.core.redactor import redact_record
from sentinel_mcp.core.secret_names import secret_name
from sentinel_mcp.core.record_bounds import AUDIT_ARGUMENTS, RecordLimits, was_cut
from sentinel_mcp.gateway.audit import _json, canonical, redact_entry

VALUES = [
    {"b": 1, "a": [1.5, None, True, "é"], "c": {"z": "\ud800 lone", "y": "日本"}},
    ["\u2028", "\x00", 10**30, -0.0, 1e-300],
    {"when": datetime(2026, 1, 1, tzinfo=timezone.utc), "set": "plain"},  # default=str
    "a plain string",
    {},
    [],
    OrderedDict(),
    {"": {}},
]


def test_the_stored_and_hashed_texts_are_what_json_dumps_wrote() -> None:
    for value in VALUES:
        assert _json(value) == json.dumps(value, ensure_ascii=True, default=str, sort_keys=True)
        if not isinstance(value, dict) or "when" not in value:
            row = ("main", 1.0, value, None, None)
            assert canonical(row) == json.dumps(
                ("main", 1.0, value), ensure_ascii=False, separators=(",", ":")
            )  # the optional tail's empty columns left out, as before
        if isinstance(value, dict):
            text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
            assert argument_digest(value) == hashlib.sha256(text.encode()).hexdigest()


def test_a_value_within_its_limits_is_stored_as_before_and_one_past_them_cut_as_json() -> None:
    """Within the record's limits (the usual row) the text is what it was; past them it is never a text cut
    mid-value (``record_bounds``): valid JSON, with the full value's hash."""
    for value in VALUES:
        full = json.dumps(value, ensure_ascii=True, default=str, sort_keys=True)
        assert _json(value, AUDIT_ARGUMENTS) == full
        if type(value) is dict and not value:
            continue  # ``{}``, the arguments of most calls, written without the encoder: always kept
        for chars in (1, 2, 3):
            limits = RecordLimits(chars=chars, string=1, items=1, depth=1)
            text = _json(value, limits)
            assert text is not None
            stored = json.loads(text)
            assert text == full if len(full) <= chars and full.count("[") + full.count("{") <= 1 else (
                was_cut(stored) and stored["sentinel_cut"]["full_sha256"] is not None)


def _entry(**kw: object) -> AuditEntry:
    base = dict(session="owner/s", tool="t__x", decision="allow", outcome="ok", reason="fine", proof=None)
    return AuditEntry(**{**base, **kw})  # type: ignore[arg-type]


def test_an_entry_with_nothing_to_mask_is_stored_as_it_is_and_a_secret_never_is() -> None:
    plain = _entry(arguments={"city": "Lyon", "n": 3, "flags": [True, None]})
    assert redact_entry(plain) is plain
    for args in (
        {"password": "hunter2-long"},
        {"nested": {"apiKey": "sk-abc-123456"}},
        {"userPassword": "pw-987654"},
        {"note": "Authorization: Bearer abcdefghijklmnop"},
        {"card": "4111 1111 1111 1111"},
    ):
        entry = _entry(arguments=args, reason=f"because {json.dumps(args)}")
        stored = redact_entry(entry)
        assert stored is not entry
        secret = [v for v in _leaves(args)][0]
        assert secret not in json.dumps(stored.arguments) and secret not in (stored.reason or "")
        assert entry.arguments == args  # the caller's entry is untouched


def _leaves(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _leaves(v)]
    return [value.split(": ")[-1] if "Bearer" in value else value] if isinstance(value, str) else []


def test_secret_names_are_found_however_long_and_however_many_names_came_before() -> None:
    for i in range(5000):  # fills the cache of short names with harmless ones
        assert not secret_name(f"field_{i}")
    spellings = ["password", "api_key", "apiKey", "API-KEY", "userPassword", "client_secret", "accessToken"]
    long_ones = ["x" * 80 + "_password", "a_really_" * 12 + "secret", "y" * 500 + "ApiKey"]
    for name in spellings + long_ones:
        assert secret_name(name), name
        out = redact_record({"arguments": {name: "value-that-is-secret"}})
        assert "value-that-is-secret" not in json.dumps(out), name
    assert not secret_name("z" * 200)  # a long harmless name stays harmless (and is not remembered)


TEXTS = [None, "", "read-only: allowed by default", "card 4111 1111 1111 1111 in the reason",
         "Authorization: Bearer abcdefghijklmnopqrstu", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
         "your code is 123456", "password=hunter2-long", "api_key: sk-abc-123456", "\ud800 lone \u202e",
         "x" * 2000 + " 4111111111111111", "日本 0000-0000-0000-0000"]


def test_an_entry_without_arguments_or_proof_is_redacted_as_the_full_way_does() -> None:
    """The short way for rows of calls without arguments (no secret values to look for; the scrubbed text of
    a reason or error kept, as they repeat) stores what ``redact_record`` stores, every time."""
    for _ in range(2):  # the second time from the kept texts
        for reason in TEXTS:
            for error in TEXTS:
                for arguments in (None, {}):
                    entry = _entry(arguments=arguments, reason=reason, error=error)
                    full = redact_record({"arguments": arguments, "reason": reason, "proof": None,
                                          "error": error}, entry.sensitive)
                    stored = redact_entry(entry)
                    assert (stored.arguments, stored.reason, stored.proof, stored.error) == (
                        full["arguments"], full["reason"], full["proof"], full["error"])
                    assert (stored is entry) == (full["reason"] == reason and full["error"] == error)


def test_the_timings_text_is_what_json_wrote() -> None:
    """A call's timings are written out directly (four floats under fixed names): the same stored and hashed
    text as the encoder's, and anything of another shape through the encoder."""
    import random

    from sentinel_mcp.gateway.audit import _timings_text
    from sentinel_mcp.gateway.call_timings import CallTimings

    rng = random.Random(21)
    values = [0.0, -0.0, 1e-9, 0.001, 123.456, 1e21, 1e300, 5e-324, 0.1 + 0.2]
    for _ in range(500):
        t = CallTimings(ask_s=rng.choice([0.0, rng.random() * 100]))
        t.guard_s, t.forward_s = rng.random() / 100, rng.choice(values)
        if rng.random() < 0.3:
            t.fetch_spans.append((0.0, rng.random() / 1000))
        d = t.as_dict()
        assert _timings_text(d) == _json(d)
    rest = {"fetch": 0.0, "forward": 0.0, "guard": 0.0}
    for odd in ({"ask": 1, **rest}, {"ask": float("nan"), **rest}, {"ask": float("inf"), **rest},
                {"ask": True, **rest}, {"ask": "0.0", **rest}, {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0},
                {"ask": 0.0}, {}, None):
        assert _timings_text(odd) == _json(odd), odd
    for v in values:
        d = {"ask": v, "fetch": v, "forward": v, "guard": v}
        assert _timings_text(d) == _json(d)


def test_a_rows_texts_are_stored_as_each_columns_cut_would_store_them() -> None:
    """The usual row's texts are told plain all at once (``_texts``): every row, plain or not, holds what
    ``_text`` gives column by column (cut at its limit, lone surrogates and NUL escaped)."""
    import random

    from sentinel_mcp.gateway.audit import _TEXT_LIMITS, _text, _texts

    rng = random.Random(21)
    pieces = [None, "", "allow", "owner/s-1", "\x00", "\ud800", "é", "日本", "a" * 999, "b" * 1000,
              "c" * 1001, "r" * 19_999 + "\x00", "s" * 25_000, 0, 7, 1.5, True]
    for _ in range(3000):
        values = tuple(rng.choice(pieces) if rng.random() < 0.3
                       else rng.choice([None, "x" * rng.randrange(90)]) for _ in _TEXT_LIMITS)
        assert _texts(values) == tuple(_text(v, lim) for v, lim in zip(values, _TEXT_LIMITS)), values
    many = ("n" * 100,) * 11 + (None,) * 3  # each short, together past the names' limit: still each as it is
    assert _texts(many) == many


def test_a_calls_timings_are_what_the_rounded_formula_gives() -> None:
    """``CallTimings.as_dict`` skips rounding a zero: the same floats (signs and nan included) as rounding
    every value of the formula."""
    import itertools

    from sentinel_mcp.gateway.call_timings import CallTimings

    values = [0.0, -0.0, 1e-9, 0.0004, 0.0123456, 2.5, -1.0, float("nan"), float("inf")]
    for guard, ask, forward, spans in itertools.product(values, values, values, ([], [(0.0, 0.001)],
                                                                                   [(1.0, 3.0), (2.0, 2.5)])):
        t = CallTimings(ask_s=ask)
        t.guard_s, t.forward_s, t.fetch_spans = guard, forward, list(spans)
        fetch = t.fetch_s()
        want = {"guard": round(max(0.0, guard - fetch) * 1000, 3), "fetch": round(fetch * 1000, 3),
                "ask": round(ask * 1000, 3), "forward": round(forward * 1000, 3)}
        assert repr(t.as_dict()) == repr(want)  # repr: -0.0 and nan told apart and alike
