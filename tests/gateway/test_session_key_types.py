"""A client names its conversation with a text key (``_meta["sentinel/session"]``: a label or an id Sentinel
sealed). Any other JSON value there is refused and runs nothing, on the lean path and the SDK's alike: it was
read as its Python text (``5`` named the label "5", ``true`` the label "True") or, when falsy (``0``,
``false``, ``[]``), passed over for the ``X-Sentinel-Session`` header or a new conversation, so one call
named two conversations depending on who read it.
"""

from __future__ import annotations

from typing import Any

import pytest

from sentinel_mcp.core.call_meta import SESSION_KEY
from tests.gateway.test_lean_calls import ENVELOPE, gateway, headers_for, post  # noqa: F401 - its fixture

pytestmark = pytest.mark.timeout(120)


def _call(key: Any, via_sdk: bool) -> dict[str, Any]:
    meta = {**ENVELOPE, SESSION_KEY: key, **({"progressToken": "p1"} if via_sdk else {})}
    return {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "tb__echo", "arguments": {"text": "ran"}, "_meta": meta}}


@pytest.mark.parametrize("via_sdk", [False, True])
@pytest.mark.parametrize("key", [5, True, 1.5, 0, False, [], ["work"], {}, {"a": 1}])
def test_a_session_key_that_is_not_text_is_refused(gateway: int, key: Any, via_sdk: bool) -> None:  # noqa: F811
    import json

    status, _, answer = post(gateway, json.dumps(_call(key, via_sdk)),
                             headers_for("tb__echo", **{"X-Sentinel-Session": "work"}))
    assert status == 200, answer
    result = answer["result"]
    text = result["content"][0]["text"]
    assert result.get("isError") and text.startswith("sentinel:") and "session key" in text, (key, result)
    assert "ran" not in text


@pytest.mark.parametrize("key", ["work", "sentinel2.not-one-we-sealed"])
def test_a_text_key_is_read_as_before(gateway: int, key: str) -> None:  # noqa: F811
    import json

    status, _, answer = post(gateway, json.dumps(_call(key, False)), headers_for("tb__echo"))
    text = answer["result"]["content"][0]["text"]
    assert status == 200 and (text == "ran" if key == "work" else "session key" in text), answer
