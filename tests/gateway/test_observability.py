"""What operators see: Prometheus /metrics (calls, decisions, latencies, upstream health), OpenTelemetry spans
per
call (guard, fetch, ask, forward), and OAuth protected-resource metadata for HTTP clients that look for it."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from mcp import Client, MCPError
from mcp.types import ElicitResult
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from sentinel_mcp.config import parse_config
from sentinel_mcp.gateway import telemetry
from sentinel_mcp.app.runtime import running_gateway
from sentinel_mcp.paths import RULEBASES_DIR

from ..conftest import free_port, stop_process
from .helpers import TOOLBOX, make_config, toolbox_stdio
from .test_transports import start_http_sentinel, write_config

POLICY = Path(__file__).resolve().parent.parent / "policy"


def get(url: str, token: str | None = None) -> tuple[int, dict[str, str], str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


async def test_metrics_count_what_the_audit_log_records(data_dir):
    cfg = make_config(data_dir, policy={"deny": ["tb__pid"]})
    async with running_gateway(cfg) as rt:
        async with Client(rt.front.server) as c:
            for _ in range(3):
                await c.call_tool("tb__echo", {"text": "x"})
            await c.call_tool("tb__pid", {})
            await c.call_tool("tb__delete_thing", {"name": "x"})  # asks; this client cannot answer
            await c.call_tool("tb__nope", {})
        text = rt.metrics.render(rt.catalog_health)
    lines = set(text.splitlines())
    assert (
        'sentinel_calls_total{tool="tb__echo",upstream="tb",origin="client",decision="allow",outcome="ok"} 3'
        in lines
    )
    assert (
        'sentinel_calls_total{tool="tb__pid",upstream="tb",origin="client",decision="deny",outcome="denied"} '
        '1'
        in lines
    )
    assert (
        'sentinel_calls_total{tool="unknown",upstream="",origin="client",decision="error",outcome="unknown_tool"} 1'  # noqa: E501 (verbatim text)
        in lines
    )
    assert "tb__nope" not in text  # a name the caller made up is not a label
    assert {
        'sentinel_decisions_total{decision="allow"} 3',
        'sentinel_decisions_total{decision="ask"} 1',
        'sentinel_decisions_total{decision="deny"} 1',
    } <= lines
    assert 'sentinel_call_duration_seconds_count{upstream="tb",decision="allow"} 3' in lines
    assert 'sentinel_call_duration_seconds_bucket{upstream="tb",decision="allow",le="+Inf"} 3' in lines
    assert (
        'sentinel_upstream_up{upstream="tb"} 1' in lines
        and 'sentinel_upstream_breaker_open{upstream="tb"} 0' in lines
    )
    assert {  # nothing in flight or waiting now; nothing dropped or refused
        'sentinel_upstream_calls_in_flight{upstream="tb"} 0',
        'sentinel_upstream_calls_waiting{upstream="tb"} 0',
        'sentinel_upstream_notices_dropped_total{upstream="tb"} 0',
        'sentinel_upstream_pushes_refused_total{upstream="tb"} 0',
        'sentinel_upstream_pushes_not_permitted_total{upstream="tb"} 0',
        'sentinel_upstream_updates_unsubscribed_total{upstream="tb"} 0',
        'sentinel_upstream_principals_refused_total{upstream="tb"} 0',  # shared: no principal refused
    } <= lines


def test_metrics_label_sets_stay_bounded():
    from sentinel_mcp.gateway.audit import AuditEntry
    from sentinel_mcp.gateway.metrics import MAX_SERIES, Metrics

    m = Metrics()
    for i in range(MAX_SERIES + 500):  # an upstream listing ever more tools (names it chose)
        m.observe(
            AuditEntry(session="s", tool=f'made"up\n{i}', upstream="up", decision="allow", outcome="ok")
        )
    calls = m.calls[None]  # entries of no principal
    assert len(calls) == MAX_SERIES + 1 and any(k[0] == "other" for k in calls)
    assert '\\"' in m.render() and "\\n" in m.render()  # label values escaped, one sample per line


@pytest.mark.parametrize("outcome", ["unknown_tool", "over_rate", "refused", "error"])
def test_names_a_caller_made_up_take_no_series_and_are_shown_to_no_one(outcome):
    """bob's made-up names (or alice's typo) never became labels: 2000 of them took every series, so alice's
    real tool then counted as "other", and each was shown to whoever reads /metrics."""
    from sentinel_mcp.gateway.audit import AuditEntry
    from sentinel_mcp.gateway.metrics import MAX_SERIES, Metrics

    m = Metrics()
    for i in range(MAX_SERIES + 5):
        m.observe(AuditEntry(session="bob/http-1", tool=f"bob_junk_{i}", decision="error", outcome=outcome))
    for name in ("alice_typo_project_zeta", "tb__echo ", "TB__ECHO", "tb__echo\u200b"):  # near spellings too
        m.observe(AuditEntry(session="alice/http-1", tool=name, decision="error", outcome=outcome))
    m.observe(
        AuditEntry(session="alice/http-1", tool="tb__echo", upstream="tb", decision="allow", outcome="ok")
    )
    lines = m.render().splitlines()
    echo = '{tool="tb__echo",upstream="tb",origin="client",decision="allow",outcome="ok"}'
    assert f"sentinel_calls_total{echo} 1" in lines
    assert not any(w in line for line in lines for w in ("bob_junk", "alice_typo", "TB__ECHO"))
    unknown = f'{{tool="unknown",upstream="",origin="client",decision="error",outcome="{outcome}"}}'
    assert f"sentinel_calls_total{unknown} {MAX_SERIES + 9}" in lines


def test_metrics_and_protected_resource_metadata_over_http(tmp_path):
    port = free_port()
    cfg = write_config(
        tmp_path,
        {"tb": {"command": sys.executable, "args": [TOOLBOX]}},
        http={"token": "s3cret"},
        oauth={"issuer": "https://auth.example.test", "scopes": ["mcp:tools"]},
    )
    proc = start_http_sentinel(cfg, port)
    base = f"http://127.0.0.1:{port}"
    try:
        assert get(f"{base}/metrics")[0] == 401  # behind the token like MCP
        status, _, body = get(f"{base}/metrics", "s3cret")
        assert status == 200 and 'sentinel_upstream_up{upstream="tb"} 1' in body
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"):
            status, _, body = get(base + path)  # public: a client reads it before it has a token
            assert status == 200, path
            assert json.loads(body) == {
                "resource": f"{base}/mcp",
                "authorization_servers": ["https://auth.example.test"],
                "bearer_methods_supported": ["header"],
                "scopes_supported": ["mcp:tools"],
            }
        status, headers, _ = get(f"{base}/mcp")
        challenge = {k.lower(): v for k, v in headers.items()}["www-authenticate"]
        assert status == 401
        assert challenge == (
            f'Bearer realm="sentinel", resource_metadata="{base}/.well-known/oauth-protected-resource"'
            ', scope="mcp:tools"'
        )
    finally:
        stop_process(proc)


@pytest.mark.parametrize(
    "oauth, expected",
    [
        ({"issuer": "ftp://auth.example.test"}, "sentinel.oauth.issuer"),
        ({"issuer": "http://auth.example.test"}, "must be an https:// URL"),
        ({"issuer": "https://a.test", "audience": "x"}, "sentinel.oauth.audience"),
    ],
)
def test_bad_oauth_settings_are_config_errors(tmp_path, oauth, expected):
    cfg = write_config(tmp_path, {}, oauth=oauth)
    p = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"127.0.0.1:{free_port()}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and expected in p.stderr and "Traceback" not in p.stderr


@pytest.fixture(scope="module")
def spans():
    exporter = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # the API allows one provider per process: install it once
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield exporter
    exporter.clear()
    _uninstall(provider)


def _uninstall(provider: TracerProvider) -> None:
    """The process as it was before the module: no provider, and no tracer bound to this one (a tracer the API
    handed out before binds to the first provider it sees and keeps it), so a later test in the same worker
    (pytest-xdist's --dist loadfile) runs with tracing off, as it would alone."""
    from mcp.shared import _otel

    from sentinel_mcp.gateway import telemetry

    provider.shutdown()
    trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
    trace._TRACER_PROVIDER_SET_ONCE._done = False  # type: ignore[attr-defined]
    for tracer in (telemetry.tracer, _otel._tracer):
        if isinstance(tracer, trace.ProxyTracer):
            tracer._real_tracer = None  # type: ignore[attr-defined]


async def test_spans_per_call_guard_fetch_ask_forward(data_dir, spans):
    cfg = parse_config(
        {
            "mcpServers": {"bk": {"command": sys.executable, "args": [str(POLICY / "bookings_server.py")]}},
            "sentinel": {
                "rulebases": [str(RULEBASES_DIR / "default.pl"), str(POLICY / "rulebases" / "bookings.pl")],
                "data_dir": str(data_dir),
                "seeds": {"current_user": "u_123", "today": "2025-01-15"},
            },
        },
        base_dir=str(data_dir),
    )

    async def answer(ctx, params):  # noqa: ANN001
        prop = params.requested_schema["properties"]["answer"]
        return ElicitResult(
            action="accept",
            content={
                "answer": True
                if prop["type"] == "boolean"
                else ("health" if "enum" in prop or "oneOf" in prop else "x")
            },
        )

    async with running_gateway(cfg) as rt:
        spans.clear()
        async with Client(rt.front.server, mode="legacy", elicitation_callback=answer) as c:
            r = await c.call_tool("bk__cancel_booking", {"booking_id": "BK-789"})
            assert not r.is_error, r.content[0].text
    done = spans.get_finished_spans()
    by_id = {s.context.span_id: s for s in done}
    calls = [
        s for s in done if s.name == "sentinel.call" and s.attributes["sentinel.tool"] == "bk__cancel_booking"
    ]
    assert calls and all(s.attributes["sentinel.origin"] == "client" for s in calls)
    final = calls[-1]
    assert final.attributes["sentinel.decision"] == "allow" and final.attributes["sentinel.outcome"] == "ok"

    def parent_name(s):  # noqa: ANN001, ANN202
        return by_id[s.parent.span_id].name if s.parent is not None and s.parent.span_id in by_id else None

    names = {(s.name, parent_name(s)) for s in done}
    assert ("sentinel.guard", "sentinel.call") in names
    assert ("sentinel.fetch", "sentinel.guard") in names  # the solver's data-tool call, itself guarded
    assert ("sentinel.forward", "sentinel.call") in names and ("sentinel.forward", "sentinel.fetch") in names
    # the user is asked between guard rounds, within the same client request as the calls it unblocks
    ask = next(s for s in done if s.name == "sentinel.ask")
    assert ask.parent is not None and ask.parent.span_id == final.parent.span_id
    assert ask.context.trace_id == final.context.trace_id
    forward = next(
        s for s in done if s.name == "sentinel.forward" and s.attributes["sentinel.tool"] == "cancel_booking"
    )
    assert (
        forward.attributes["sentinel.upstream"] == "bk" and forward.attributes["sentinel.era"] == "2025-11-25"
    )
    assert all("booking_id" not in json.dumps(dict(s.attributes)) for s in done)  # names, never arguments


def test_exporter_is_opt_in_and_problems_are_reported(tmp_path):
    def cfg(telemetry_section):  # noqa: ANN001, ANN202
        return parse_config({"sentinel": {"telemetry": telemetry_section}}, base_dir=str(tmp_path))

    assert telemetry.configure(cfg({})) is None  # nothing asked: nothing installed
    assert "unknown exporter 'zipkin'" in telemetry.configure(cfg({"exporter": "zipkin"}))


# A span's name and attributes go to a collector and to whatever reads it (a trace viewer, a terminal): the
# caller's words in them are cut and made visible, as in an error or a log line (core/echoed_text.py).
SPAN_TEXT_BOUND = 2_100  # characters: ECHO_LIMIT, each perhaps shown as ⟨U+XXXXX⟩, and the cut mark
HOSTILE_NAMES = [
    "t" * 3_000_000,
    "tb__echo\x1b[2J\x1b]0;owned\x07",
    "tb__\u202eohce",  # right-to-left override
    "tb__e\u200bcho\x00",
    "tb__echo\nsentinel.decision=allow",
]


def _span_texts(span):  # noqa: ANN001, ANN202
    yield span.name
    if span.status.description:
        yield span.status.description
    for value in dict(span.attributes or {}).values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(item, str):
                yield item


def _sentinels(done):  # noqa: ANN001, ANN202
    """The spans Sentinel made: from the SDK's server span on in (the test's client sends from outside it)."""
    by_id = {s.context.span_id: s for s in done}

    def inside(s):  # noqa: ANN001, ANN202
        while s is not None:
            if s.kind == trace.SpanKind.SERVER or s.name.startswith("sentinel."):
                return True
            s = by_id.get(s.parent.span_id) if s.parent is not None else None
        return False

    found = [s for s in done if inside(s)]
    assert any(s.kind == trace.SpanKind.SERVER for s in found)
    return found


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_spans_carry_a_callers_names_cut_and_visible(data_dir, spans, mode):  # noqa: ANN001
    from mcp.types import Implementation

    from sentinel_mcp.core.display_text import is_hidden

    info = Implementation(name="c" * 3_000_000 + "\x1b[31m", version="1\u202e2\r\n")
    async with running_gateway(make_config(data_dir, {"tb": toolbox_stdio()})) as rt:
        spans.clear()
        async with Client(rt.front.server, mode=mode, client_info=info) as c:
            assert not (await c.call_tool("tb__echo", {"text": "hi"})).is_error
            for name in HOSTILE_NAMES:
                assert (await c.call_tool(name, {})).is_error
                with pytest.raises(MCPError):
                    await c.get_prompt(name)
    done = spans.get_finished_spans()
    calls = [s for s in done if s.name == "sentinel.call"]
    assert len(calls) == 1 + len(HOSTILE_NAMES)
    for span in _sentinels(done):
        for text in _span_texts(span):
            assert len(text) <= SPAN_TEXT_BOUND, (span.name[:40], len(text))
            assert not any(is_hidden(ch) for ch in text), (span.name[:40], text[:80])
    shown = {s.attributes["sentinel.tool"] for s in calls}
    assert "tb__echo" in shown  # a plain name is kept as it is
    assert "tb__echo⟨U+001B⟩[2J⟨U+001B⟩]0;owned⟨U+0007⟩" in shown


def test_traced_cuts_every_text_it_is_given(spans):  # noqa: ANN001
    import asyncio

    from sentinel_mcp.core.display_text import is_hidden

    @telemetry.traced(
        lambda name, attrs: name,
        lambda name, attrs: attrs,
    )
    async def work(name, attrs):  # noqa: ANN001, ANN202
        return None

    spans.clear()
    asyncio.run(
        work("x" * 100_000 + "\x1b", {"a": "\u202e" + "y" * 100_000, "b": ["z\x00" * 50_000], "n": 3})
    )
    (span,) = spans.get_finished_spans()
    assert span.attributes["n"] == 3
    for text in _span_texts(span):
        assert len(text) <= SPAN_TEXT_BOUND and not any(is_hidden(ch) for ch in text)


def test_each_principal_reads_its_own_series_and_the_operator_all_of_them():
    """alice's calls are counted in series bob never reads; the operator's view sums every principal's, as
    the one set of series before; past MAX_PRINCIPALS names, calls count for the operator alone (never under
    another principal's name, nor shown to a newcomer as its own)."""
    from sentinel_mcp.gateway.audit import AuditEntry
    from sentinel_mcp.gateway.metrics import MAX_PRINCIPALS, Metrics

    m = Metrics()

    def call(who: str | None, decision: str = "allow") -> None:
        m.observe(AuditEntry(session=f"{who}/s", tool="tb__echo", upstream="tb", decision=decision,
                             outcome="ok", latency_ms=3.0, principal=who))

    for _ in range(3):
        call("alice")
    call("alice", "deny")
    call("bob")
    echo = '{tool="tb__echo",upstream="tb",origin="client",decision="allow",outcome="ok"}'
    bob = m.render(viewer="bob").splitlines()
    assert f"sentinel_calls_total{echo} 1" in bob and not any('"deny"' in line for line in bob)
    assert 'sentinel_call_duration_seconds_count{upstream="tb",decision="allow"} 1' in bob
    whole = m.render().splitlines()
    assert f"sentinel_calls_total{echo} 4" in whole and 'sentinel_decisions_total{decision="deny"} 1' in whole
    assert 'sentinel_call_duration_seconds_count{upstream="tb",decision="allow"} 4' in whole
    for spelling in ("Alice", "alice ", "\u0430lice", "", "ALICE", "alice\x00"):  # nobody's series but hers
        assert not any("sentinel_calls_total{" in line for line in m.render(viewer=spelling).splitlines())

    for i in range(MAX_PRINCIPALS):  # names past the bound count for the operator alone
        call(f"p{i}")
    assert len(m.calls) == MAX_PRINCIPALS + 1  # and one None: past the bound
    late = f"p{MAX_PRINCIPALS - 1}"
    assert not any("sentinel_calls_total{" in line for line in m.render(viewer=late).splitlines())
    assert f"sentinel_calls_total{echo} {4 + MAX_PRINCIPALS}" in m.render().splitlines()
