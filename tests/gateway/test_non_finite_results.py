"""An upstream's result holding a number JSON has no spelling for (``NaN``, ``Infinity``, an overflowing
``1e999``) is refused in Sentinel's words, on the lean path and the SDK client's, and audited as the call's
error; the connection stays and answers the next call.

Before, the readers took them (Python's and pydantic's both accept ``NaN``, ``Infinity`` and read ``1e999`` as
an infinity): the guard and the audit saw one number, the client ``null`` (the serializer's spelling), a
silent rewrite of what the upstream said. The real gateway, the real client, a raw stdio upstream in a
subprocess (``non_finite_upstream.py``), the real SQLite audit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from sentinel_mcp.app.runtime import running_gateway
from tests.gateway.helpers import make_config
from tests.gateway.non_finite_upstream import RESULTS
from tests.gateway.test_push_refusals_audited import _rows

pytestmark = pytest.mark.timeout(180)
ROOT = Path(__file__).resolve().parents[2]
REFUSED = [name for name in RESULTS if name != "plain"]


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_non_finite_numbers_in_a_result_are_refused_and_audited(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, lean: str) -> None:
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)  # off: the SDK client's path
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.non_finite_upstream"],
              "cwd": str(ROOT)}
    config = make_config(data_dir, {"nf": server})
    said: dict[str, Any] = {}
    async with running_gateway(config) as rt:
        assert await rt.manager.upstreams["nf"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            for name in [*REFUSED, "plain"]:
                said[name] = await c.call_tool(f"nf__{name}", {})
    for name in REFUSED:
        r = said[name]
        text = r.content[0].text
        assert r.is_error and len(r.content) == 1 and r.structured_content is None, (name, r)
        assert "a number JSON has no spelling for" in text and text.startswith(f"nf__{name}:"), (name, text)
        assert (r.meta or {}).get("sentinel/error") == "result_shape", (name, r.meta)
    plain = said["plain"]  # the connection is not poisoned: finite numbers, large or signed zero, pass
    assert not plain.is_error and plain.structured_content == {"x": 1.5e300, "y": -0.0}, plain
    rows = _rows(config.store_path)
    for name in REFUSED:
        ended = [r for r in rows if r["tool"] == f"nf__{name}" and r["outcome"] != "forwarded"]
        assert [r["outcome"] for r in ended] == ["tool_error"], (name, ended)
        assert "a number JSON has no spelling for" in ended[0]["error"], ended
    assert [r["outcome"] for r in rows if r["tool"] == "nf__plain" and r["outcome"] != "forwarded"] == ["ok"]


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_non_finite_numbers_in_a_prompt_or_resource_are_refused(
        data_dir: Path, monkeypatch: pytest.MonkeyPatch, lean: str) -> None:
    """The same for the two other results the shape bounds hold (``prompts/get``, ``resources/read``)."""
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.non_finite_upstream"],
              "cwd": str(ROOT)}
    async with running_gateway(make_config(data_dir, {"nf": server})) as rt:
        assert await rt.manager.upstreams["nf"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            prompts = [p.name for p in (await c.list_prompts()).prompts]
            resources = [str(r.uri) for r in (await c.list_resources()).resources]
            failures = []
            for ask in (lambda: c.get_prompt("nf__p"), lambda: c.read_resource("nf://a")):
                try:
                    failures.append(repr(await ask()))
                except Exception as e:  # noqa: BLE001 - the refusal as the client hears it
                    failures.append(str(e))
            plain = await c.call_tool("nf__plain", {})
    assert "nf__p" in prompts and "nf://a" in resources, (prompts, resources)
    assert all("a number JSON has no spelling for" in f for f in failures), failures
    assert not plain.is_error, plain


@pytest.mark.parametrize("lean", ["on", "off"])
async def test_non_finite_progress_is_dropped(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                              lean: str) -> None:
    """Progress under the call's own token with ``NaN`` or an infinity (as its progress or its total) is
    dropped as malformed on both paths; the SDK client's passed it to the client (an in-process client got
    ``nan``, a wire client ``null``, no number), and each moved the call's deadline. The finite one passes."""
    monkeypatch.setenv("SENTINEL_LEAN_UPSTREAM", lean)
    server = {"command": sys.executable, "args": ["-m", "tests.gateway.non_finite_upstream"],
              "cwd": str(ROOT)}
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with running_gateway(make_config(data_dir, {"nf": server})) as rt:
        assert await rt.manager.upstreams["nf"].wait_ready(30)
        async with Client(rt.front.server, mode="legacy") as c:
            result = await c.call_tool("nf__progress", {}, progress_callback=on_progress)
            plain = await c.call_tool("nf__plain", {})  # after it: every report of the first is delivered
    assert not result.is_error and not plain.is_error, (result, plain)
    assert seen == [(0.5, 1.0, None)], seen
