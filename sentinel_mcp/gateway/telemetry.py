"""OpenTelemetry spans per call: ``sentinel.call`` with ``sentinel.guard`` (and the solver's
``sentinel.fetch``
calls inside it), ``sentinel.ask`` (the user is asked), ``sentinel.relay`` (an upstream's request relayed to
the
client) and ``sentinel.forward`` (the upstream call).

Spans go through the OpenTelemetry API only, so they cost next to nothing until an exporter is configured,
which
is opt-in: ``sentinel.telemetry = {"exporter": "otlp", "endpoint": "http://collector:4318/v1/traces"}`` (or
``"console"``), with the ``otel`` extra installed. Attributes carry names, decisions and outcomes, never
arguments or answers. A span's name and every text attribute are cut and made visible (``echoed``, as in an
error or a log line): a client names its tool and itself, and a 3 MB or escape-laden name would otherwise go
whole to the collector and whatever shows its spans.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
from typing import TYPE_CHECKING, Any, Awaitable, Callable, TypeVar

from mcp.server._otel import OpenTelemetryMiddleware
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from opentelemetry import trace

from sentinel_mcp import __version__
from sentinel_mcp.core.echoed_text import ECHO_LIMIT, echoed

if TYPE_CHECKING:
    from sentinel_mcp.config import Config
    from sentinel_mcp.gateway.audit import AuditEntry

log = logging.getLogger(__name__)
tracer = trace.get_tracer("sentinel_mcp", __version__)
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])
# ``get_tracer_provider`` looks this variable up in ``os.environ`` on every call until a provider is set (five
# times per call on the hot path); it is read once here, as the API reads it once to load that provider
_PROVIDER_FROM_ENV = "OTEL_PYTHON_TRACER_PROVIDER" in os.environ
_UNKNOWN = object()


def tracing_off() -> bool:
    """No tracer provider is installed, so every span would be a no-op (the answer
    ``isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)`` gives, without the environment
    look-up while none is set)."""
    if not _PROVIDER_FROM_ENV and getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None:
        return True
    return isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def traced(
    name: str | Callable[..., str], attributes: Callable[..., dict[str, Any]] | None = None
) -> Callable[[F], F]:
    """Run an async function inside a span; ``name`` and ``attributes`` may be computed from its arguments.
    Without a tracer provider the call is the function's own coroutine, with no layer around it (three such
    layers per call on the hot path): the wrapper is a plain function returning an awaitable."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> Awaitable[Any]:
            # ``tracing_off()``'s first test written out: three such layers a call, a call less each
            if not _PROVIDER_FROM_ENV and getattr(trace, "_TRACER_PROVIDER", _UNKNOWN) is None:
                return fn(*args, **kwargs)  # no provider installed: spans would go nowhere
            if tracing_off():
                return fn(*args, **kwargs)
            return spanned(*args, **kwargs)

        async def spanned(*args: Any, **kwargs: Any) -> Any:
            span_name = _text(name(*args, **kwargs) if callable(name) else name)
            attrs = span_attributes(attributes(*args, **kwargs) if attributes else {})
            with tracer.start_as_current_span(span_name, attributes=attrs) as span:
                result = await fn(*args, **kwargs)
                span.set_attribute("sentinel.result", type(result).__name__)
                return result

        return inner  # type: ignore[return-value]

    return wrap


def span_attributes(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` without its Nones, each text (alone or in a list) cut and made visible (``echoed``)."""
    return {_text(k): _attribute(v) for k, v in values.items() if v is not None}


def _attribute(value: Any) -> Any:
    if isinstance(value, str):
        return _text(value)
    if isinstance(value, (list, tuple)):
        return [_text(v) if isinstance(v, str) else v for v in value]
    return value


def _text(value: str) -> str:
    # the common case (a catalog name, an id) is printable ASCII within the limit: ``echoed`` would return it
    # unchanged, at several times the cost, for each of a span's texts
    if len(value) <= ECHO_LIMIT and value.isascii() and value.isprintable():
        return value
    return echoed(value)


def annotate(entry: "AuditEntry") -> None:
    """An audited decision, on the span of the call it decides (a ``Gateway.observers`` hook)."""
    if tracing_off():  # no provider: no span records (the context's look-up spared, once a call; issue 21)
        return
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attributes(
            span_attributes(
                {
                    "sentinel.decision": entry.decision,
                    "sentinel.outcome": entry.outcome,
                    "sentinel.upstream": entry.upstream or "",
                    "sentinel.policy": entry.policy_version or "",
                }
            )
        )


class ShownSpanMiddleware(OpenTelemetryMiddleware):
    """The SDK's span around each inbound request (it names the span after the tool or prompt the caller
    named, and records the method and request id), made from a copy of the request whose caller-written
    texts are ``echoed``; the handlers get the request as it came."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        params = ctx.params
        if params is not None and isinstance(params.get("name"), str):
            params = {"name": _text(params["name"])}  # all the SDK's span reads of the params
        shown = dataclasses.replace(
            ctx,
            method=_attribute(ctx.method),
            protocol_version=_attribute(ctx.protocol_version),
            params=params,
            request_id=_attribute(ctx.request_id),
        )
        return await super().__call__(shown, lambda _shown: call_next(ctx))


def shown_spans(middleware: list[Any]) -> list[Any]:
    """A server's middleware with the SDK's span replaced by ``ShownSpanMiddleware``, in the same place."""
    return [ShownSpanMiddleware() if type(m) is OpenTelemetryMiddleware else m for m in middleware]


_configured = False


def configure(config: "Config") -> str | None:
    """Install the exporter ``sentinel.telemetry`` asks for (once per process); a problem text, or None."""
    global _configured
    settings = config.sentinel.builtin_settings("telemetry")
    exporter_name = settings.get("exporter")
    if not exporter_name or _configured:
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
    except ImportError:
        return "telemetry: the exporter needs the otel extra (pip install 'sentinel-mcp-gateway[otel]')"
    if exporter_name == "console":
        exporter: Any = ConsoleSpanExporter()
    elif exporter_name == "otlp":
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            return (
                "telemetry: the otlp exporter needs the otel extra (pip install 'sentinel-mcp-gateway[otel]')"
            )
        exporter = (
            OTLPSpanExporter(endpoint=settings.get("endpoint"))
            if settings.get("endpoint")
            else OTLPSpanExporter()
        )
    else:
        return f"telemetry: unknown exporter {exporter_name!r} (otlp or console)"
    provider = TracerProvider(
        resource=Resource.create({"service.name": settings.get("service_name", "sentinel")})
    )
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _configured = True
    return None
