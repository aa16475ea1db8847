"""The lean upstream client (gateway/lean_upstream.py, gateway/lean_http.py): a streamable-HTTP upstream's
``tools/call`` as one POST, in both eras. Against real upstream processes over real HTTP on 127.0.0.1:

- the same calls down the lean path and down the SDK's client give the same results, progress and log
  lines (``Upstream`` in process, ``SENTINEL_LEAN_UPSTREAM=off`` for the second pass), both eras, and
  through a whole gateway with the real ``mcp`` client in front in both eras;
- on the handshake era the upstream's requests on a call's own stream reach exactly that call's caller, so
  lean calls run concurrently; ``"concurrent": false`` still serializes them;
- a hostile upstream (tests/gateway/hostile_http_upstream.py) gets the same kind of outcome down both paths
  in both eras (an error, or the same result), a clear error down the lean path for every malformed,
  oversized, slow or misdirected answer, never a hang, and the next call still works;
- a cancelled call is cancelled upstream, down both paths.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData, ListRootsResult, Root

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.core.caller_link import CallerLink
from sentinel_mcp.gateway.upstream import Upstream, UpstreamCallError, UpstreamHooks
from tests.conftest import free_port, stop_process, wait_http
from tests.gateway.helpers import TOOLBOX

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]
ERAS = ["modern", "legacy"]


def _serve(cmd: list[str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
    return proc


@pytest.fixture(scope="module")
def toolbox() -> Any:
    port = free_port()
    proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


@pytest.fixture(scope="module")
def hostile() -> Any:
    port = free_port()
    proc = _serve([sys.executable, "-m", "tests.gateway.hostile_http_upstream", str(port)], port)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        stop_process(proc)


async def _nothing(*_: Any) -> None:
    return None


# a lost connection is made again after at most this long (30 s in a gateway): these tests lose it on purpose,
# what they assert is the answers either side of it, not the back-off
RECONNECT_SECONDS = 0.25

async def _with_upstream(url: str, body: Any, *, protocol: str = "modern", timeout: float = 60.0,
                         lean: bool = True, health_interval: float = 3600, **extra: Any) -> Any:
    os.environ["SENTINEL_LEAN_UPSTREAM"] = "on" if lean else "off"  # read when the connection is made
    try:
        up = Upstream("tb", RemoteServer(url=url, protocol=protocol, timeout=timeout,  # type: ignore[arg-type]
                                         **extra),
                      UpstreamHooks(catalog_changed=_nothing), health_interval=health_interval,
                      max_backoff=RECONNECT_SECONDS)
        async with anyio.create_task_group() as tg:
            tg.start_soon(up.run)
            assert await up.wait_ready(30), up.last_error
            assert (up.lean is not None) == lean
            try:
                return await body(up)
            finally:
                await up.stop()
    finally:
        os.environ.pop("SENTINEL_LEAN_UPSTREAM", None)


def _plain(result: Any) -> dict:
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


class Asker(CallerLink):
    """A caller that answers what the upstream asks during its call, and keeps its log lines."""

    who = "the test's caller"

    def __init__(self, word: str = "w", barrier: Any = None) -> None:
        self.word, self.barrier, self.logged = word, barrier, []

    async def elicit(self, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        if self.barrier is not None:
            await self.barrier()
        return ElicitResult(action="accept", content={"word": self.word, "approve": True, "ok": True})

    async def list_roots(self) -> ListRootsResult | ErrorData:
        return ListRootsResult(roots=[Root(uri="file:///tmp/root", name="r")])

    async def log(self, params: Any) -> None:
        self.logged.append(params.data)


CALLS = [("noop", {}), ("echo", {"text": "héllo \u2028 \"q\""}), ("add", {"a": 2, "b": 3.5}),
         ("add", {"a": "x", "b": 1}), ("item", {"key": "k1"}), ("no_such_tool", {}), ("chatty", {}),
         ("slow", {"seconds": 0.02})]
ASKING = [("ask_word", {"item": "i1"}), ("confirm_push", {"what": "ship"})]


async def _run(up: Upstream, calls: list) -> list:
    out = []
    for tool, args in calls:
        seen: list[str] = []

        async def progress(p: float, total: float | None, message: str | None) -> None:
            seen.append(f"{p}/{total}/{message}")

        link = Asker("answered")
        try:
            r = _plain(await up.call_tool(tool, args, progress=progress, link=link))
            if tool == "slow":  # its text is the start and end times
                r["content"] = len(r["content"])
                r.pop("structuredContent", None)
            out.append((r, seen, link.logged))
        except UpstreamCallError as e:
            out.append(({"error": str(e), "code": e.code}, seen, link.logged))
    return out


@pytest.mark.parametrize("era", ERAS)
def test_lean_and_sdk_paths_give_the_same_results(toolbox: str, era: str) -> None:
    calls = CALLS + (ASKING if era == "legacy" else [])

    async def body(up: Upstream) -> list:
        return await _run(up, calls)

    lean = anyio.run(lambda: _with_upstream(toolbox, body, protocol=era))
    sdk = anyio.run(lambda: _with_upstream(toolbox, body, protocol=era, lean=False))
    assert lean == sdk
    assert lean[0][0]["content"][0]["text"] == "ok"
    assert lean[2][0]["structuredContent"] == {"total": 5.5, "terms": 2}
    assert lean[3][0].get("isError") is True  # a tool error stays a result
    assert lean[6][2] == ["chatty: first line", "chatty: second line"]  # log lines reach their caller
    assert lean[7][1] == ["1.0/4.0/step 1", "2.0/4.0/step 2", "3.0/4.0/step 3", "4.0/4.0/step 4"]
    if era == "legacy":  # pushed questions answered by the caller, on the call's own stream
        assert lean[8][0]["content"][0]["text"] == "i1=answered"
        assert lean[9][0]["content"][0]["text"] == "ship:accept:True"


def test_streamable_http_upstreams_get_the_lean_path_in_both_eras(toolbox: str) -> None:
    async def body(up: Upstream) -> Any:
        return up.lean is not None, up.protocol_version, _plain(await up.call_tool("noop", {}))

    for era, version in (("modern", "2026-07-28"), ("legacy", "2025-11-25"), ("auto", "2025-11-25")):
        lean, got, result = anyio.run(lambda: _with_upstream(toolbox, body, protocol=era))
        assert lean and got == version and result["content"][0]["text"] == "ok"


def test_auto_keeps_the_handshake_with_a_both_era_upstream_so_its_pushes_work(toolbox: str) -> None:
    """Why ``auto`` does not move a both-era upstream to 2026-07-28 (upstream_client.py): nothing says
    before a call whether a tool will ask by push, and on 2026-07-28 a push fails (``NoBackChannelError``).
    Under ``modern`` the same call is an error: the check below tells the two apart."""

    async def body(up: Upstream) -> Any:
        try:
            r = await up.call_tool("confirm_push", {"what": "ship"}, link=Asker())
        except UpstreamCallError as e:
            return up.protocol_version, str(e)
        return up.protocol_version, r.content[0].text

    pushed = anyio.run(lambda: _with_upstream(toolbox, body, protocol="auto"))
    assert pushed == ("2025-11-25", "ship:accept:True")
    version, said = anyio.run(lambda: _with_upstream(toolbox, body, protocol="modern"))
    assert version == "2026-07-28" and "back-channel" in said


def test_a_proxy_in_the_environment_keeps_the_sdk_path(toolbox: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lean client speaks no proxy: where the environment sends an upstream through one (as httpx2 would
    for the SDK's client), it makes no pool and the upstream's calls stay on the SDK's path."""
    from sentinel_mcp.gateway.lean_http import pool_for, proxied

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                 "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert not proxied(toolbox) and pool_for(toolbox, {}, None, 3) is not None
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    assert proxied(toolbox) and pool_for(toolbox, {}, None, 3) is None
    assert not proxied("https://example.org/mcp")  # no https proxy named
    monkeypatch.setenv("ALL_PROXY", "http://127.0.0.1:9")
    assert proxied("https://example.org/mcp")
    monkeypatch.setenv("no_proxy", "127.0.0.1,example.org")
    assert not proxied(toolbox) and not proxied("https://example.org/mcp")
    assert pool_for(toolbox, {}, None, 3) is not None


def test_pushes_on_a_calls_own_stream_reach_its_caller_and_calls_run_concurrently(toolbox: str) -> None:
    """Five handshake-era calls that ask, each answered by its own caller only once all five have asked:
    that can only finish if they run at once, and each gets its own caller's answer."""
    n = 5

    async def body(up: Upstream) -> dict:
        asked = anyio.Event()
        count = 0

        async def barrier() -> None:
            nonlocal count
            count += 1
            if count == n:
                asked.set()
            await asked.wait()

        results: dict[int, str] = {}

        async def one(i: int) -> None:
            r = await up.call_tool("ask_word", {"item": f"item{i}"}, link=Asker(f"W{i}", barrier))
            results[i] = r.content[0].text

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                for i in range(n):
                    tg.start_soon(one, i)
        return results

    results = anyio.run(lambda: _with_upstream(toolbox, body, protocol="legacy"))
    assert results == {i: f"item{i}=W{i}" for i in range(n)}


def test_concurrent_false_still_serializes_lean_calls(toolbox: str) -> None:
    async def body(up: Upstream) -> int:
        most = 0

        async def barrier() -> None:
            nonlocal most
            most = max(most, len(up._inflight))

        async def one(i: int) -> None:
            await up.call_tool("ask_word", {"item": f"item{i}"}, link=Asker(f"W{i}", barrier))

        async with anyio.create_task_group() as tg:
            for i in range(4):
                tg.start_soon(one, i)
        return most

    most = anyio.run(lambda: _with_upstream(toolbox, body, protocol="legacy", concurrent=False))
    assert most == 1


def test_a_kept_alive_connection_serves_many_calls(toolbox: str) -> None:
    """Event-stream answers too: the rest of the stream is drained beside the caller, then reused."""
    async def body(up: Upstream) -> int:
        assert up.lean is not None
        for _ in range(30):
            await up.call_tool("noop", {})
            await anyio.sleep(0.01)  # let the drain finish before the next call (it never delays a call)
        return up.lean.pool.opened

    for era in ERAS:
        assert anyio.run(lambda: _with_upstream(toolbox, body, protocol=era)) <= 3, era


HOSTILE = [
    ("bad_json", "-32700", "Failed to parse JSON response"),
    ("wrong_id", "-32700", "answer to id"),
    ("string_id", "-32700", "answer to id"),
    ("batch", "-32700", "a batch"),
    ("not_a_result", "-32700", "not a valid tools/call result"),
    ("rpc_error", "-32602", "no such thing"),
    ("wrong_type", "-32600", "Unexpected content type: text/html"),
    ("status_500", "-32603", "Server returned an error response"),
    ("oversize_declared", "-32600", "larger than 16777216 bytes"),
    ("oversize_chunked", "-32600", "larger than 16777216 bytes"),
    ("sse_oversize", "-32600", "event larger than"),
    ("sse_no_answer", "-32603", "event stream ended without an answer"),
]
# the lean path on the handshake era resumes a stream that ended after an event with an id, as the SDK does
RESUMING = ("sse_resume_refused", "-32603", "event stream ended without an answer (resuming it failed)")


# given a time limit (the SDK's client), an attack it can only see end there (no answer under its id ever
# comes) waits this long, not the others' limit
WAITED_OUT = {"wrong_id": 1.0}


async def _attacks(up: Upstream, names: list[str], timeout: float | None = None) -> list:
    out = []
    for tool in names:
        with anyio.fail_after(60):  # never a hang
            try:
                limit = WAITED_OUT.get(tool, timeout) if timeout is not None else None
                r = await up.call_tool(tool, {}, link=Asker("hostile"), timeout=limit)
                out.append(("result", _plain(r)))
            except UpstreamCallError as e:
                out.append(("error", str(e)))
        for attempt in range(60):  # polled, bounded by count
            await up.wait_ready(30)  # a lost connection reconnects
            try:
                assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
                break
            except UpstreamCallError as e:  # the SDK's client: a broken answer can take its connection down
                if attempt == 59 or "went away" not in str(e):
                    raise
                await anyio.sleep(0.05)
    return out


@pytest.mark.parametrize("era", ERAS)
def test_a_hostile_upstream_gets_clear_errors_and_the_next_call_works(hostile: str, era: str) -> None:
    cases = HOSTILE + ([RESUMING] if era == "legacy" else [])
    names = [tool for tool, _, _ in cases]
    lean = anyio.run(lambda: _with_upstream(hostile, lambda up: _attacks(up, names), protocol=era))
    for (tool, code, text), (kind, said) in zip(cases, lean):
        assert kind == "error" and text in said, (tool, said)
        assert f"error {code}" in said, (tool, said)
    # the same corpus down the SDK's client: the same outcome (an error) for every attack; the SDK waits for
    # an answer it cannot recognise until the call's time limit, so that is short here. One deliberate
    # difference: the SDK takes an answer whose id is the request's id spelled as a string ("5" for 5), the
    # lean path holds ids to their type
    sdk = dict(zip(names, anyio.run(lambda: _with_upstream(hostile, lambda up: _attacks(up, names, 3.0),
                                                           protocol=era, lean=False))))
    assert sdk.pop("string_id")[0] == "result"
    assert {name: kind for name, (kind, _) in sdk.items()} == {name: "error" for name in sdk}


PUSHED = ["push_elicit", "push_ping", "push_roots", "push_unknown", "push_bad_params", "sse_answer",
          "sse_odd_events"]


def test_what_a_hostile_upstream_asks_mid_call_gets_the_sdks_answers(hostile: str) -> None:
    """Handshake era: requests on the call's stream (valid, unknown, malformed) are answered down the lean
    path exactly as the SDK's client answers them (the upstream returns the answer it received)."""
    lean = anyio.run(lambda: _with_upstream(hostile, lambda up: _attacks(up, PUSHED), protocol="legacy"))
    sdk = anyio.run(lambda: _with_upstream(hostile, lambda up: _attacks(up, PUSHED), protocol="legacy",
                                           lean=False))
    assert lean == sdk
    answers = {name: json.loads(r["content"][0]["text"]) for name, (_, r) in zip(PUSHED, lean)
               if not name.startswith("sse_")}
    # comments, a priming event, another type of event, a bad retry, CRLF lines: the answer after them counts
    assert lean[-1][1]["content"][0]["text"] == "hostile ok"
    assert answers["push_elicit"]["result"]["content"]["word"] == "hostile"
    assert answers["push_ping"] == {"id": 7, "result": {}}
    assert answers["push_roots"]["result"]["roots"][0]["uri"] == "file:///tmp/root"
    assert answers["push_unknown"]["error"]["code"] == -32601
    assert answers["push_bad_params"]["error"]["code"] in (-32600, -32602)


def test_an_event_stream_answer_is_read_with_its_log_lines(hostile: str) -> None:
    async def body(up: Upstream) -> Any:
        link = Asker()
        return _plain(await up.call_tool("sse_answer", {}, link=link)), link.logged

    for era in ERAS:
        result, logged = anyio.run(lambda: _with_upstream(hostile, body, protocol=era))
        assert result["content"][0]["text"] == "hostile ok"
        assert logged == ["working"]


@pytest.mark.parametrize("era", ERAS)
def test_a_slow_drip_times_out_instead_of_hanging(hostile: str, era: str) -> None:
    async def body(up: Upstream) -> str:
        with anyio.fail_after(30):
            with pytest.raises(UpstreamCallError) as e:
                await up.call_tool("drip", {}, timeout=2.0)
        assert e.value.timeout
        assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
        return str(e.value)

    said = anyio.run(lambda: _with_upstream(hostile, body, protocol=era))
    assert "did not answer within 2s" in said


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("lean", [True, False])
def test_a_cancelled_call_is_cancelled_upstream(toolbox: str, tmp_path: Path, era: str, lean: bool) -> None:
    marker = tmp_path / "marker"

    async def body(up: Upstream) -> None:
        with anyio.move_on_after(30):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: up.call_tool("hang_marked", {"path": str(marker)}))
                while "started" not in (marker.read_text() if marker.exists() else ""):
                    await anyio.sleep(0.05)
                tg.cancel_scope.cancel()  # the caller gives up
        with anyio.fail_after(20):
            while "cancelled" not in marker.read_text():
                await anyio.sleep(0.05)
        assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"

    anyio.run(lambda: _with_upstream(toolbox, body, protocol=era, lean=lean))
    assert marker.read_text().split() == ["started", "cancelled"]


# ------------------------------------------------------------------ a whole gateway, both eras in front
TOKEN = "lean-upstream-token-0123456789"


def _gateway(tmp: Path, url: str, lean: bool) -> tuple[subprocess.Popen, str]:
    cfg = tmp / f"sentinel-{lean}.json"
    state = str(tmp / f"state-{lean}")
    cfg.write_text(json.dumps({"mcpServers": {"tb": {"url": url, "protocol": "modern"}},
                               "sentinel": {"data_dir": state, "http": {"token": TOKEN}}}))
    port = free_port()
    env = {**os.environ, "SENTINEL_LEAN_UPSTREAM": "on" if lean else "off"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env)
    wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc)
    return proc, f"http://127.0.0.1:{port}/mcp"


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _masked(v) for k, v in value.items() if not k.startswith("sentinel/")}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


async def _front_calls(url: str, mode: str) -> list:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
    out = []
    async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
        for tool, args in CALLS[:5]:
            r = await client.session.call_tool(f"tb__{tool}", args)
            out.append(_masked(_plain(r)))
    return out


def test_through_a_gateway_both_eras_get_the_same_answers_lean_or_not(
    toolbox: str, tmp_path: Path
) -> None:
    gateways = [_gateway(tmp_path, toolbox, lean) for lean in (True, False)]
    try:
        for mode in ("legacy", "auto"):
            lean, sdk = (anyio.run(_front_calls, url, mode) for _, url in gateways)
            assert lean == sdk, mode
            assert lean[0]["content"][0]["text"] == "ok"
    finally:
        for proc, _ in gateways:
            stop_process(proc)


@pytest.mark.parametrize("lean", [True, False])
def test_a_restarted_handshake_upstream_gets_a_new_session(lean: bool) -> None:
    """The upstream restarts on the same port and forgets the session: the call that meets the 404 fails
    (nothing can say whether it ran), the upstream reconnects with a new session, and calls work again."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)

    async def body(up: Upstream) -> Any:
        nonlocal proc
        assert _plain(await up.call_tool("noop", {}))["content"][0]["text"] == "ok"
        first = up._session.session_id if up._session is not None else None
        stop_process(proc)
        proc = _serve([sys.executable, TOOLBOX, "--http", str(port)], port)
        with pytest.raises(UpstreamCallError) as e:
            await up.call_tool("noop", {})
        with anyio.fail_after(60):
            while True:
                await up.wait_ready(30)
                try:
                    result = _plain(await up.call_tool("noop", {}))
                    break
                except UpstreamCallError:
                    await anyio.sleep(0.5)  # still the old connection: its reconnect is under way
        again = up._session.session_id if up._session is not None else None
        return str(e.value), result, first, again

    try:
        said, result, first, again = anyio.run(
            lambda: _with_upstream(url, body, protocol="legacy", lean=lean))
    finally:
        stop_process(proc)
    assert "went away" in said and result["content"][0]["text"] == "ok"
    assert first is not None and again is not None and first != again


def test_no_stream_reader_is_left_for_the_collector(toolbox: str, hostile: str) -> None:
    """The lean path closes the generators that read an answer (the event stream, the body) itself, also when
    it returns or fails mid-stream: one left suspended is finalized by asyncio through call_soon_threadsafe,
    a write to the loop's wake-up pipe and one more turn of the loop on every call (issue 21)."""
    import gc

    lean_files = ("lean_upstream.py", "lean_http.py")

    async def calls(url: str, names: list[str], era: str) -> list[str]:
        left: list[str] = []
        hooks = sys.get_asyncgen_hooks()

        def finalizer(agen: Any) -> None:
            if agen.ag_code.co_filename.endswith(lean_files):
                left.append(agen.ag_code.co_qualname)
            assert hooks.finalizer is not None
            hooks.finalizer(agen)

        sys.set_asyncgen_hooks(firstiter=hooks.firstiter, finalizer=finalizer)
        try:
            async def body(up: Upstream) -> None:
                for tool in names:
                    try:
                        await up.call_tool(tool, {"text": "x"} if tool == "echo" else {}, link=Asker())
                    except UpstreamCallError:
                        await up.wait_ready(30)
                    await anyio.sleep(0.01)  # a drain beside the caller ends
                gc.collect()
                await anyio.sleep(0.05)

            await _with_upstream(url, body, protocol=era)
        finally:
            sys.set_asyncgen_hooks(*hooks)
        return left

    for era in ERAS:
        assert anyio.run(lambda: calls(toolbox, ["noop", "echo", "chatty", "noop"], era)) == [], era
        stream = ["sse_answer", "sse_oversize", "oversize_chunked", "bad_json", "sse_answer"]
        assert anyio.run(lambda: calls(hostile, stream, era)) == [], era


def test_the_request_body_is_the_text_json_dumps_writes() -> None:
    """The lean calls' bodies come from an encoder built once (``lean_upstream._BODY``): byte for byte the
    text ``json.dumps(..., separators=(",", ":"), ensure_ascii=False)`` writes; what it refuses, refused."""
    from sentinel_mcp.gateway.lean_upstream import _BODY

    def dumps(value: Any) -> str:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    values: list[Any] = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {}}},
        {"a": "caf\u00e9 \u20ac \U0001f600 \ud800 \u2028 \" \\ \n \x00",
         "b": [1, -0.0, 1e308, 2 ** 80, True, None]},
        {"n": float("nan"), "i": float("inf")}, {"z": {}, "a": [], "m": {"2": 1, "10": 2, "\u00e9": 3}},
        {1: "int key", 2.5: "float key", None: "none key"}, {True: "bool key"}, "a string alone", 5, [[[[]]]],
    ]
    for value in values:
        assert _BODY(value) == dumps(value)
    for bad in ({"x": object()}, {"x": {1, 2}}, {(1, 2): "tuple key"}, {"x": b"bytes"}):
        with pytest.raises(TypeError):
            dumps(bad)
        with pytest.raises(TypeError):
            _BODY(bad)
