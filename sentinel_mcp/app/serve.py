"""Run the gateway: over stdio (for Claude Desktop) or over HTTP (streamable HTTP + SSE + A2A)."""

from __future__ import annotations

import logging
import signal
import sys
from typing import Any
from urllib.parse import urlsplit

import anyio

from sentinel_mcp.config import Config, ConfigError, loopback_host
from sentinel_mcp.config_audit import SYNC_MEANING
from sentinel_mcp.app.runtime import Runtime, running_gateway
from sentinel_mcp.core.host import HostState
from sentinel_mcp.gateway.builtin_description import RECORDED
from sentinel_mcp.storage.location import shown_location

log = logging.getLogger(__name__)
DRAIN_SECONDS = 5.0


def _banner(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr, flush=True)


async def serve_stdio(config: Config) -> None:
    from sentinel_mcp.gateway.stdio_eras import serve_stdio_eras
    from sentinel_mcp.gateway.stdio_lean_calls import StdioLeanCalls
    from sentinel_mcp.gateway.stdio_transport import stdio_transport

    # the agent built-in too is built on its first use: no console here follows its trace store
    async with running_gateway(config, default_session="stdio", deferrable=RECORDED) as rt:
        for p in [*rt.problems, *rt.catalog_health.problems]:
            log.warning(p)
        if rt.policy_problem:
            _banner([policy_problem_line(rt.policy_problem)])
        if config.sentinel.audit.sync != "full":  # a weaker record than the default is said, even over stdio
            _banner([sync_line(config)])
        served: list[tuple[Any, Any]] = []  # the server and its lifespan state while it serves
        lean = StdioLeanCalls(lambda: served[0] if served else None)
        async with stdio_transport(lean=lean) as (read, write):
            server = rt.front.server

            async def run() -> None:
                # ``server.run``, its lifespan state and the era's dispatcher shown to the lean calls
                async with server.lifespan(server) as state:
                    served[:] = [(server, state)]
                    try:
                        await serve_stdio_eras(server, read, write, lifespan_state=state,
                                               init_options=server.create_initialization_options(), lean=lean)
                    finally:
                        served.clear()

            await until_signalled(run, rt.gateway)
    # leaving running_gateway stopped every upstream and reaped its process group


async def until_signalled(run: Any, gateway: Any, drain: float = DRAIN_SECONDS) -> None:
    """Run ``run()`` until it ends or SIGTERM/SIGINT arrives; then refuse new calls, let the calls in flight
    finish for at most ``drain`` seconds, and stop. A second signal stops at once."""
    async with anyio.create_task_group() as tg:
        async def watch() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for sig in signals:
                    log.warning("%s: draining %d call(s) in flight (at most %.0fs), then stopping",
                                signal.Signals(sig).name, gateway.inflight, drain)
                    gateway.draining = True
                    tg.start_soon(drain_then_stop)
                    break
                async for _ in signals:
                    tg.cancel_scope.cancel()

        async def drain_then_stop() -> None:
            with anyio.move_on_after(drain):
                while gateway.inflight:
                    await anyio.sleep(0.02)
            tg.cancel_scope.cancel()

        tg.start_soon(watch)
        await run()
        tg.cancel_scope.cancel()


def serve_http(config: Config, host: str, port: int) -> None:
    http_server(config, host, port).run()


def http_server(config: Config, host: str, port: int) -> Any:
    """The uvicorn server of the HTTP front, assembled (not started): ``serve_http`` runs it in a loop of its
    own, ``app/early_start.py`` awaits its ``serve()`` in the loop that launched the stdio upstreams."""
    import uvicorn

    from sentinel_mcp.app.http_app import build_http_app, is_loopback
    from sentinel_mcp.app.http_protocol import FrontHTTPProtocol
    from sentinel_mcp.app.safe_headers import SafeHeaders
    from sentinel_mcp.app.startup_failure import StartupFailure
    from sentinel_mcp.app.ws_protocol import FrontWebSocketProtocol
    from sentinel_mcp.app.http_extras import ProtectedResource, metrics_route, oauth_settings
    from sentinel_mcp.identity.http_auth import http_auth_for
    from sentinel_mcp.tls.front import front_security

    http = config.sentinel.http
    if http.auth == "none" and not is_loopback(host):
        raise ConfigError(
            f'refusing to serve {host}:{port} without authentication: "auth": "none" is for '
            "loopback addresses only (remove it to use the owner's token, or add principals)"
        )
    security = front_security(config, host)  # TLS on the whole front (or a clear refusal to serve plaintext)
    auth = http_auth_for(
        config,
        refused=security.refused_request,
        is_revoked=security.contexts.is_revoked if security.contexts else None,
        trusted_cas=security.contexts.trusted_cas if security.contexts else None,
        crl_problem=security.contexts.crl_problem if security.contexts else None,
    )
    extra_routes: list[Any] = []
    a2a_settings = config.sentinel.builtin_settings("a2a")
    runtime_cm = running_gateway(config)
    app, holder = build_http_app(
        runtime_cm,
        host=host,
        port=port,
        auth=auth.authenticator,
        extra_hosts=http.allowed_hosts,
        extra_origins=http.allowed_origins,
        extra_routes=extra_routes,
    )
    # refused client certificates go to the audit log once the gateway runs
    security.audit_to(lambda: holder.runtime.audit if holder.runtime is not None else None)
    # entered first and left last of what is mounted: refusals held while it started written, the rest before
    # the audit closes
    holder.add_lifespan(security.audit_lifespan)
    holder.tls_status = security.health
    if a2a_settings.get("enabled", True):
        _mount_a2a(
            app,
            holder,
            config,
            host,
            port,
            auth.owner_token,
            security.tls is not None,
            security.tls.mode if security.tls else "off",
            auth.authenticator,
        )
    app.router.routes.append(
        metrics_route(holder)
    )  # behind CallerGuard like /mcp: Host, Origin, token or certificate
    # its cookies' names and flags follow each request's scheme (console/auth.py)
    _mount_console(app, holder, config, auth)
    tools_hint = f"{security.scheme}://{host}:{port}"

    class _Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            try:
                await super().startup(sockets)
            except SystemExit:  # uvicorn's exit(3) for a failed start-up: the deliberate error's code instead
                if failure.error is not None:
                    raise failure.error from None
                raise
            rt = holder.runtime
            if rt is None:
                return
            shown = local_url(security.scheme, host, port)  # the commands printed work as pasted
            _banner(startup_lines(config, rt, shown) + security.banner() + token_lines(auth, shown))

        async def shutdown(self, sockets: Any = None) -> None:
            # open A2A event streams would hold uvicorn's shutdown; end them (the tasks themselves stay)
            service = holder.a2a_service
            if service is not None:
                service.end_streams()
            inbox = holder.console_inbox
            if inbox is not None:  # so do open console pages' live updates
                inbox.end_watchers()
            if security.acceptor is not None:
                await security.acceptor.close()
            if security.refusals is not None:  # refusals counted and not yet written, while the audit is open
                await security.refusals.flush()
            await super().shutdown(sockets)

    _more_file_descriptors()
    asgi: Any = app
    oauth = oauth_settings(config)
    if oauth is not None:  # RFC 9728 metadata, and a challenge that names it
        asgi = ProtectedResource(app, oauth, tools_hint)
    # the outermost: every answer of every app and layer above carries the safe headers (app/safe_headers.py)
    failure = StartupFailure(SafeHeaders(asgi))
    return _Server(
        uvicorn.Config(
            failure,
            # the outer layers hand back the inner app's awaitable from a plain ``__call__``, which uvicorn's
            # "auto" would take for an ASGI 2 app
            interface="asgi3",
            host=host,
            port=port,
            log_level="warning",
            lifespan="on",
            # the peer address is the socket's: uvicorn's default trusts X-Forwarded-For/-Proto from
            # 127.0.0.1, so any local process could name itself another peer (an A2A caller's identity
            # without auth, its task quota, the console's failed-login count); it also cost ~4% of a call
            proxy_headers=False,
            timeout_graceful_shutdown=5,
            # httptools' parser with h11's bound on a request head, under TLS too
            # (and WebSocket flow control on what the server writes on its own: app/ws_protocol.py)
            **(
                security.uvicorn_options(http_base=FrontHTTPProtocol, ws_base=FrontWebSocketProtocol)
                or {"http": FrontHTTPProtocol, "ws": FrontWebSocketProtocol}
            ),
            **_a2a_ws_options(config),
        )
    )


def _a2a_ws_options(config: Config) -> dict[str, Any]:
    """The A2A WebSocket binding's bounds on the server (its message size): without A2A, uvicorn's own."""
    try:
        from sentinel_mcp.a2a.settings import A2ASettings  # type: ignore[import-not-found]
        from sentinel_mcp.a2a.ws_server_options import ws_server_options  # type: ignore[import-not-found]
    except ImportError:
        return {}
    settings = A2ASettings.from_section(config.sentinel.builtin_settings("a2a"))
    options: dict[str, Any] = ws_server_options(settings)
    return options


def _more_file_descriptors() -> None:
    """Every connection holds a file descriptor; the usual soft limit (1024) is a few hundred clients with
    their streams and upstreams. Raised to the hard limit the system grants (a server's usual first step),
    so that many idle or slow connections (each cut off after its read bounds, ``http_protocol.py``) do not
    leave the gateway unable to accept."""
    import resource

    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 65536)
        if soft != resource.RLIM_INFINITY and soft < wanted:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    except (ValueError, OSError):  # not ours to change here: the limit stays as it was
        pass


def _mount_a2a(
    app: Any,
    holder: HostState[Runtime],
    config: Config,
    host: str,
    port: int,
    owner_token: str | None,
    front_tls: bool = False,
    client_certificates: str = "off",
    authenticator: Any = None,
) -> None:
    try:
        from sentinel_mcp.a2a.app import mount_a2a  # type: ignore[import-not-found]
    except ImportError:
        return
    mount_a2a(
        app,
        holder,
        config,
        host,
        port,
        owner_token,
        front_tls=front_tls,
        client_certificates=client_certificates,
        authenticator=authenticator,
    )


def _mount_console(app: Any, holder: HostState[Runtime], config: Config, auth: Any) -> None:
    try:
        from sentinel_mcp.console.app import mount_console
    except ImportError as e:  # jinja2 missing: serve without the console, and say so
        log.warning("web console not available: %s", e)
        return
    mount_console(app, holder, auth.authenticator, config, auth.console_secrets)


def local_url(scheme: str, host: str, port: int) -> str:
    """The base URL a client on this machine reaches a front bound to ``host`` at: a wildcard binding
    (``0.0.0.0``, ``::``) is no address to connect to, nor one a certificate names, so its loopback; an IPv6
    address in brackets."""
    name = host.strip("[]")
    name = {"": "127.0.0.1", "0.0.0.0": "127.0.0.1", "::": "::1"}.get(name, name)
    return f"{scheme}://[{name}]:{port}" if ":" in name else f"{scheme}://{name}:{port}"


def sync_line(config: Config) -> str:
    sync = config.sentinel.audit.sync
    return f'Audit durability: sentinel.audit.sync = "{sync}": {SYNC_MEANING[sync]}'


def startup_lines(config: Config, rt: Any, base_url: str | None) -> list[str]:
    catalog = rt.catalog_health
    ups = catalog.upstreams()
    ready = [u.name for u in ups if u.state == "ready"]
    lines = [
        f"Sentinel {__import__('sentinel_mcp').__version__} is serving {catalog.tool_count} tools "
        f"from {len(ready)}/{len(ups)} upstreams ({', '.join(ready) or 'none'}); config: {config.source}",
        f"Policy: {rt.gateway.guard.version}; audit log: {shown_location(rt.audit.path)}"
        + (f" (instance {rt.instance.id}; `sentinel-mcp audit` reads every instance)" if rt.instance else ""),
        sync_line(config),
    ]
    for p in [*rt.problems, *catalog.problems]:
        lines.append(f"  warning: {p}")
    if rt.policy_problem:
        lines.append(policy_problem_line(rt.policy_problem))
    if base_url:
        lines += [
            f"  streamable HTTP: {base_url}/mcp    legacy SSE: {base_url}/sse    health: {base_url}/healthz"
            f"    metrics: {base_url}/metrics",
            f"  web console: {base_url}/console",
        ]
    exe = _command_name()
    url = f" --url {base_url}/mcp" if base_url else ""
    if base_url and base_url.startswith("http://") and not loopback_host(urlsplit(base_url).hostname):
        url += " --plaintext"  # ("tls": "off" beyond loopback, said knowingly: the client says it too)
    lines += [
        f"Connect Claude Desktop: `{exe} config claude` prints the snippet for claude_desktop_config.json.",
        f'Try a governed call:    {exe} call airline__cancel_reservation \'{{"reservation_id": '
        f'"NO6JO3"}}\'{url}',
        f"  (a write asks you first; `{exe} audit` shows every decision with its reason)",
    ]
    return lines


def token_lines(auth: Any, base_url: str) -> list[str]:
    """How to authenticate: the generated token is printed once, when it is created; after that, where it is.
    """
    exe = _command_name()
    if not auth.required:
        return ['Authentication: none ("auth": "none"): every local process can call every tool.'
                ] + console_secret_lines(auth, base_url)
    if auth.token_file is None:
        return [
            "Authentication: every caller sends 'Authorization: Bearer <token>' (the owner's token is "
            "sentinel.http.token in the config; principals have their own)."
        ] + console_secret_lines(auth, base_url)
    lines = ["Authentication: every caller sends 'Authorization: Bearer <token>'."]
    if auth.token_created:
        lines.append(
            f"  The owner's token (generated now, shown this once; `{exe} config token` shows it again): "
            f"{auth.owner_token}"
        )
    lines.append(
        f"  The owner's token is in {auth.token_file} (mode 0600); `{exe} config token` prints it; "
        f"`{exe} call ... --url {base_url}/mcp` uses it."
    )
    return lines + console_secret_lines(auth, base_url)


def console_secret_lines(auth: Any, base_url: str) -> list[str]:
    """How the person signs in to the web console: their console secret, which no client is given."""
    if auth.console_secrets is None:
        return []
    exe = _command_name()
    lines = [f"Web console sign-in ({base_url}/console): the owner's console secret, never the token."]
    if auth.console_secret_file is None:
        return [lines[0] + " It is sentinel.http.console_secret in the config; give it to no client."]
    if auth.console_secret_created:
        lines.append(f"  The owner's console secret (generated now, shown this once): {auth.console_secret}")
    lines.append(
        f"  It is in {auth.console_secret_file} (mode 0600); `{exe} config console-secret` prints it. "
        "Give it to no MCP or A2A client."
    )
    # the way in that needs no secret typed: past 20 wrong secrets a minute the form refuses every secret
    lines.append(f"  `{exe} config console-link --url {base_url}` prints a one-time sign-in link.")
    return lines


def policy_problem_line(problem: str) -> str:
    return (
        f"ERROR: {problem}\n  Every call is denied until this is fixed; Sentinel reloads the file when it "
        "changes (/healthz reports status error meanwhile)."
    )


def _command_name() -> str:
    import shutil
    from pathlib import Path

    beside = Path(sys.executable).with_name("sentinel-mcp")
    if shutil.which("sentinel-mcp") == str(beside) or not beside.exists():
        return "sentinel-mcp"
    try:
        return str(beside.relative_to(Path.cwd()))
    except ValueError:
        return str(beside)


def run_stdio(config: Config) -> None:
    try:
        anyio.run(serve_stdio, config)
    except KeyboardInterrupt:
        pass
