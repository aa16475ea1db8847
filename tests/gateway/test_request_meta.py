"""``unspanned_kernel.request_meta`` is the SDK kernel's ``_extract_meta`` (``RequestParams`` validating the
params for their ``_meta``) without the model for a built-in's direct call (issue 21): for every shape of
params, the common ones and hostile ones, the same value, the same key order, the same objects inside."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from mcp.server.runner import _extract_meta

from sentinel_mcp.gateway.unspanned_kernel import request_meta

NESTED: dict[str, Any] = {"a": [1, {"b": None}]}
for _ in range(200):
    NESTED = {"n": NESTED}

VALUES: list[Any] = [
    "s", "", "caf\u00e9 \u202e\u200b\U0001f600", 0, -1, 2**53 + 1, 2**200, -(2**80), 1.5, float("nan"),
    float("inf"), True, False, None, [], {}, [1, [2, [3]]], NESTED, "x" * 100_000, {"k": [None, "é"]},
]
TOKENS: list[Any] = [5, 0, -7, 2**70, "t", "", "é\u202e", True, False, 1.0, 5.5, None, [1], {"a": 1}]


def shapes() -> list[Any]:
    out: list[Any] = [None, {}, {"name": "x"}, {"_meta": None}, {"_meta": {}}, {"_meta": []},
                      {"_meta": "x"}, {"_meta": 5}, {"name": "x", "arguments": 5, "_meta": {"a": 1}}]
    for token in TOKENS:
        out.append({"name": "x", "_meta": {"progressToken": token}})
        out.append({"name": "x", "arguments": {}, "_meta": {"sentinel/s": "v", "progressToken": token}})
        out.append({"_meta": {"progressToken": token, "progress_token": "other"}})
    for value in VALUES:
        out.append({"name": "x", "_meta": {"progressToken": 3, "sentinel/call": value, "other": value}})
        out.append({"_meta": {"progress_token": value}})
    keys = ["progressToken", "sentinel/a", "io.modelcontextprotocol/x", "z", "\u00e9"]
    for order in itertools.permutations(keys):
        out.append({"name": "x", "_meta": {k: i for i, k in enumerate(order)}})
    out.append({"_meta": {1: "int key", "progressToken": 1}})
    out.append({"_meta": {("t",): 1}})
    return out


@pytest.mark.parametrize("params", shapes())
def test_request_meta_is_the_kernels_meta(params: Any) -> None:
    before = repr(params)
    try:
        want: Any = _extract_meta(params)
    except Exception as e:  # noqa: BLE001 - then ours must raise the same
        with pytest.raises(type(e)):
            request_meta(params)
        return
    got = request_meta(params)
    assert repr(params) == before  # the caller's params are not changed
    if want is None:
        assert got is None
        return
    assert type(got) is type(want)
    assert list(got) == list(want)  # the same keys in the same order
    for key in want:
        assert type(got[key]) is type(want[key])
        if key != "progress_token":
            assert got[key] is want[key] or got[key] == want[key]  # NaN: the same object
        else:
            assert got[key] == want[key]


def test_a_direct_calls_meta_is_told_without_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    import sentinel_mcp.gateway.unspanned_kernel as kernel

    asked: list[Any] = []
    monkeypatch.setattr(kernel, "_extract_meta", lambda p: asked.append(p) or _extract_meta(p))
    meta = kernel.request_meta({"name": "bench__noop", "arguments": {},
                                "_meta": {"sentinel/session": "s", "progressToken": 12}})
    assert meta == {"progress_token": 12, "sentinel/session": "s"} and asked == []
    kernel.request_meta({"_meta": {"progressToken": 1.0}})  # a float token: the SDK's own coercion
    assert len(asked) == 1
