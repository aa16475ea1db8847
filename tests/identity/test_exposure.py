"""Safe defaults for exposure: the owner's token generated on first start (0600, shown once, `config token`),
no unauthenticated non-loopback binding, Host and Origin checked on every binding, ${VAR} in every config
string and no literal placeholder as a token."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import stat
import subprocess
import sys

import httpx2
import pytest
import uvicorn
from tests.identity.identity_rig import ALICE, CAROL, OWNER_TOKEN, free_port, http_sentinel, write_config
from tests.support.cli_in_process import run_main
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sentinel_mcp.config import ConfigError, parse_config
from sentinel_mcp.app.http_app import CallerGuard
from sentinel_mcp.app.serve import token_lines
from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.resolver import SCOPE_KEY, Authenticator, TokenResolver
from sentinel_mcp.identity.principal import Principal

pytestmark = pytest.mark.timeout(180)


def test_the_owner_token_is_generated_once_kept_0600_and_shown_by_the_cli(tmp_path):
    cfg = parse_config({"sentinel": {"data_dir": str(tmp_path / "state")}}, base_dir=tmp_path)
    first = http_auth_for(cfg)
    path = owner_token.token_path(cfg.data_dir)
    assert first.token_created and first.owner_token and len(first.owner_token) >= 32
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = http_auth_for(cfg)
    assert not again.token_created and again.owner_token == first.owner_token
    shown_now = "\n".join(token_lines(first, "http://127.0.0.1:1"))
    shown_later = "\n".join(token_lines(again, "http://127.0.0.1:1"))
    assert (
        first.owner_token in shown_now and first.owner_token not in shown_later and str(path) in shown_later
    )
    path.chmod(0o644)  # someone loosened it: tightened on the next start
    http_auth_for(cfg)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    cfg_file = tmp_path / "c.json"
    cfg_file.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path / "state")}}))
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg_file), "config", "token"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and out.stdout.strip() == first.owner_token
    # the console secret beside it: shown once too, printed by its own command, never the token
    secret = first.console_secret
    assert secret and secret != first.owner_token and first.console_secret_file is not None
    assert secret in shown_now and secret not in shown_later and str(first.console_secret_file) in shown_later
    out = run_main(["-c", str(cfg_file), "config", "console-secret"])  # `config token` above ran end to end
    assert out.returncode == 0 and out.stdout.strip() == secret, out.stderr
    path.write_text("short\n")
    with pytest.raises(ConfigError, match="no usable token"):
        http_auth_for(cfg)


def test_auth_none_is_explicit_and_gives_no_token(tmp_path):
    cfg = parse_config({"sentinel": {"data_dir": str(tmp_path), "http": {"auth": "none"}}}, base_dir=tmp_path)
    auth = http_auth_for(cfg)
    assert not auth.required and auth.owner_token is None
    assert not owner_token.token_path(cfg.data_dir).exists()


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "example.com"])
def test_a_non_loopback_binding_without_a_token_refuses_to_start(tmp_path, host):
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"sentinel": {"data_dir": str(tmp_path), "http": {"auth": "none"}}}))
    listen = f"[{host}]:8765" if ":" in host else f"{host}:8765"
    p = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", listen],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "without authentication" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize(
    "value, expected",
    [
        (
            {"http": {"token": "${SENTINEL_TEST_UNSET_VAR}"}},
            "environment variable ${SENTINEL_TEST_UNSET_VAR} is not set",
        ),
        ({"http": {"token": "${not a var}"}}, "still contains '${'"),
        ({"http": {"token": "$${X}"}}, "is not set"),
        ({"http": {"token": "  "}}, "empty"),
        ({"principals": [{"name": "x", "token": "${1BAD}-0123456789abcdef"}]}, "still contains '${'"),
        ({"principals": [{"name": "owner", "token": "0123456789abcdef0"}]}, "reserved"),
        # the standalone built-ins' caller: the sensors built-in treats it as the device's owner
        ({"principals": [{"name": "local", "token": "0123456789abcdef0"}]}, "'local' is reserved"),
        ({"principals": [{"name": "a b", "token": "0123456789abcdef0"}]}, "principals.0.name"),
        ({"principals": [{"name": "x", "token": "short"}]}, "at least 16"),
        ({"principals": [{"name": "x"}]}, "exactly one of 'token' and 'token_sha256'"),
        (
            {
                "principals": [
                    {"name": "x", "token": "0123456789abcdef0"},
                    {"name": "x", "token": "0123456789abcdef1"},
                ]
            },
            "used twice",
        ),
        (
            {
                "principals": [
                    {"name": "x", "token": "0123456789abcdef0"},
                    {"name": "y", "token": "0123456789abcdef0"},
                ]
            },
            "share a token",
        ),
    ],
)
def test_tokens_and_principals_are_checked(value, expected):
    with pytest.raises(ConfigError) as e:
        parse_config({"sentinel": value}, source="cfg.json")
    assert expected in str(e.value)


def test_variables_expand_in_every_string_of_the_config(tmp_path, monkeypatch):
    monkeypatch.setenv("ST_TOKEN", "from-the-environment-123")
    monkeypatch.setenv("ST_USER", "u_42")
    monkeypatch.setenv("ST_DIR", str(tmp_path / "st"))
    monkeypatch.setenv("ST_URL", "http://127.0.0.1:9/mcp")
    monkeypatch.setenv("ST_KEY", "peer-key-abcdefgh")
    cfg = parse_config(
        {
            "mcpServers": {"web": {"url": "${ST_URL}", "headers": {"X": "${ST_MISSING:-fallback}"}}},
            "sentinel": {
                "data_dir": "${ST_DIR}",
                "http": {"token": "${ST_TOKEN}", "allowed_hosts": ["${ST_HOST:-h.lan}"]},
                "seeds": {"current_user": "${ST_USER}", "list": ["${ST_USER}", "x"]},
                "principals": [{"name": "p", "token": "${ST_TOKEN}-principal"}],
                "a2a": {"api_keys": {"rover": "${ST_KEY}"}},
                "policy": {"allow": ["${ST_USER}__*"]},
            },
        },
        base_dir=tmp_path,
    )
    s = cfg.sentinel
    assert (
        cfg.mcp_servers["web"].url == "http://127.0.0.1:9/mcp"
        and cfg.mcp_servers["web"].headers["X"] == "fallback"
    )
    assert s.http.token == "from-the-environment-123" and s.http.allowed_hosts == ["h.lan"]
    assert s.seeds == {"current_user": "u_42", "list": ["u_42", "x"]} and str(cfg.data_dir) == str(
        tmp_path / "st"
    )
    assert s.principals[0].token == "from-the-environment-123-principal" and s.policy.allow == ["u_42__*"]
    assert s.builtin_settings("a2a")["api_keys"]["rover"] == "peer-key-abcdefgh"
    resolver = http_auth_for(cfg).authenticator
    from sentinel_mcp.identity.credentials import Credentials

    assert resolver.authenticate(Credentials(bearer="from-the-environment-123")).name == "owner"
    assert resolver.authenticate(Credentials(api_key="peer-key-abcdefgh")).name == "rover"


def test_config_show_masks_secrets(tmp_path):
    cfg = tmp_path / "c.json"
    cfg.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "web": {
                        "url": "http://127.0.0.1:9/mcp",
                        "headers": {"Authorization": "Bearer s3cr3t-h3ader"},
                    },
                    "cmd": {"command": "x", "env": {"API_TOKEN": "s3cr3t-env"}},
                },
                "sentinel": {
                    "data_dir": str(tmp_path),
                    "http": {"token": "s3cr3t-http-token"},
                    "principals": [{"name": "p", "token": "s3cr3t-principal-token"}],
                    "a2a": {
                        "api_keys": {"rover": "s3cr3t-api-key"},
                        "peer_tokens": {"http://x": "s3cr3t-peer"},
                    },
                },
            }
        )
    )
    out = subprocess.run(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "show"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0 and "s3cr3t" not in out.stdout and "***" in out.stdout
    assert json.loads(out.stdout)["sentinel"]["principals"][0]["name"] == "p"


# --- Host and Origin on every binding -------------------------------------------------------------------


async def _guarded(bind_host: str, port: int, **kw) -> tuple[uvicorn.Server, asyncio.Task, socket.socket]:
    async def whoami(request: Request) -> JSONResponse:
        return JSONResponse({"principal": request.scope[SCOPE_KEY].name})

    tokens = TokenResolver()
    tokens.add(Principal("alice", "token"), token=ALICE)
    app = Starlette(routes=[Route("/mcp", whoami, methods=["GET", "POST"])])
    app.add_middleware(CallerGuard, bind_host=bind_host, port=port, auth=Authenticator([tokens]), **kw)
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.02)
    return server, task, sock


@pytest.mark.parametrize("bind", ["127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "192.0.2.10"])
async def test_host_and_origin_are_checked_on_every_binding(bind):
    port = free_port()
    server, task, sock = await _guarded(
        bind, port, extra_hosts=["sentinel.lan"], extra_origins=["https://console.example"]
    )
    try:
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            auth = {"Authorization": f"Bearer {ALICE}"}

            async def status(**headers: str) -> int:
                return (await http.get("/mcp", headers={**auth, **headers})).status_code

            assert await status() == 200
            assert (await http.get("/mcp", headers=auth)).json() == {"principal": "alice"}
            for host in (
                "evil.example",
                f"evil.example:{port}",
                "127.0.0.1.evil.example",
                f"localhost.:{port}",
                "",
                f"127.0.0.1:{port + 1}",
                "sentinel.lan.evil",
                "LOCALHOST:1",
            ):
                assert await status(host=host) == 421, host
            assert await status(host=f"sentinel.lan:{port}") == 200
            assert await status(host=f"[::1]:{port}") == 200
            ip_literal = await status(host=f"203.0.113.7:{port}")
            assert ip_literal == (200 if bind in ("0.0.0.0", "::") else 421)  # a rebinding page sends a name
            for origin in (
                "http://evil.example",
                "null",
                f"http://evil.example:{port}",
                "file://",
                "http://127.0.0.1.nip.io",
                f"http://localhost:{port}/path",
                "javascript:alert(1)",
                "https://console.example.evil",
                f"http://203.0.113.7:{port}",
                # no port: the scheme's default one (80, 443), another server of this host, never this one
                "http://127.0.0.1",
                "http://localhost",
                "https://127.0.0.1",
                "http://LOCALHOST",
                "http://127.0.0.1:80",
                "http://sentinel.lan",
                f"http://127.0.0.1:{port}0",
            ):
                assert await status(origin=origin) == 403, origin
            for origin in (
                f"http://127.0.0.1:{port}",
                f"http://localhost:{port}",
                "https://console.example",
                f"http://sentinel.lan:{port}",
            ):
                assert await status(origin=origin) == 200, origin
            assert (await http.get("/mcp")).status_code == 401
            assert (await http.get("/mcp", headers={"Authorization": "Bearer wrong"})).status_code == 401
            assert (await http.get("/mcp", headers={"X-API-Key": ALICE})).status_code == 200
    finally:
        server.should_exit = True
        await task
        sock.close()


@pytest.mark.parametrize("bind", ["127.0.0.1", "localhost", "::1", "0.0.0.0", "::", "192.0.2.10"])
def test_a_kept_host_verdict_is_the_verdict_of_the_check_itself(bind):
    """``CallerGuard.host_allowed`` keeps its verdicts on the Host values seen: asked again, in any order,
    each is what the check itself says (allowed and refused alike), and the table stays within its bounds."""
    from sentinel_mcp.app import http_app

    port = 8931
    guard = CallerGuard(None, bind_host=bind, port=port, auth=Authenticator([TokenResolver()]),
                        extra_hosts=["sentinel.lan", "[2001:db8::1]"])
    hosts = ["evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", f"localhost.:{port}", "",
             f"127.0.0.1:{port + 1}", "sentinel.lan.evil", "LOCALHOST:1", f"sentinel.lan:{port}",
             f"[::1]:{port}", f"203.0.113.7:{port}", "127.0.0.1", f"127.0.0.1:{port}", f" LocalHost:{port} ",
             "sentinel.lan", f"192.0.2.10:{port}", f"[2001:db8::1]:{port}", "[2001:db8::1]", "[::1",
             f"::1:{port}", f"localhost:{port}:{port}", "localhost:", f"localhost:0{port}", "l" * 300,
             f"127.0.0.1:{port}\x00", None]
    for round_ in range(3):
        for host in hosts if round_ != 1 else reversed(hosts):
            assert guard.host_allowed(host) is guard._host_verdict(host), host
    assert any(guard.host_allowed(h) for h in hosts) and not all(guard.host_allowed(h) for h in hosts)
    for n in range(2 * http_app.MAX_HOSTS_KEPT):
        host = f"h{n}.example:{port}"
        assert guard.host_allowed(host) is False
    assert len(guard._hosts) == http_app.MAX_HOSTS_KEPT
    assert all(len(h) <= http_app.MAX_KEPT_HOST for h in guard._hosts)
    assert all(guard._hosts[h] is guard._host_verdict(h) for h in guard._hosts)


async def test_a_wildcard_binding_with_a_token_serves_and_keeps_every_check(tmp_path):
    cfg = write_config(
        tmp_path, http={"tls": "off", "token": OWNER_TOKEN}
    )  # plaintext beyond loopback, said explicitly (tests/tls)
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http", f"0.0.0.0:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env={**os.environ, "SENTINEL_DATA_DIR": str(tmp_path / "state")},
    )
    from tests.identity.identity_rig import stop_process, wait_http

    try:
        wait_http(f"http://127.0.0.1:{port}/healthz", proc=proc, timeout=60)
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            ok = {"Authorization": f"Bearer {OWNER_TOKEN}", "Accept": "application/json, text/event-stream"}
            health = (await http.get("/healthz", headers=ok)).json()  # details for the operator
            assert health["tls"] == "off" and any(
                "plaintext beyond loopback" in p for p in health["problems"]
            )
            assert (
                await http.post("/mcp", json=body, headers={**ok, "Host": "evil.example"})
            ).status_code == 421
            assert (
                await http.post("/mcp", json=body, headers={**ok, "Origin": "http://evil.example"})
            ).status_code == 403
            assert (await http.post("/mcp", json=body)).status_code == 401
            assert (
                await http.post("/a2a", json=body, headers={**ok, "Origin": "http://evil.example"})
            ).status_code == 403
    finally:
        stop_process(proc)


async def test_the_generated_token_guards_a_real_sentinel(tmp_path):
    cfg = write_config(tmp_path)
    with http_sentinel(cfg) as (base, _):
        token = owner_token.token_path(tmp_path / "state").read_text().strip()
        async with httpx2.AsyncClient(timeout=10) as http:
            health = (await http.get(f"{base}/healthz")).json()
            assert health["status"] == "ok"  # public, as the agent card
            body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            accept = {"Accept": "application/json, text/event-stream"}
            assert (await http.post(f"{base}/mcp", json=body, headers=accept)).status_code == 401
            assert (await http.get(f"{base}/sse")).status_code == 401
            assert (await http.post(f"{base}/messages/?session_id=x", json=body)).status_code == 401
            r = await http.post(
                f"{base}/mcp", json=body, headers={**accept, "Authorization": f"Bearer {token}"}
            )
            assert r.status_code not in (
                401,
                403,
                421,
            )  # past the guard (the MCP layer wants initialize first)


@pytest.mark.parametrize("headers", [
    [],
    [(b"host", b"127.0.0.1:8"), (b"authorization", b"Bearer t"), (b"accept", b"*/*")],
    [(b"Host", b"a"), (b"HOST", b"b"), (b"hOsT", b"c")],  # every spelling, the last one counts
    [(b"origin", b"http://x"), (b"Origin", b"null"), (b"x-api-key", b"k1"), (b"X-API-KEY", b"k2")],
    [(b"ho\xc0st", b"h"), (b"host\xff", b"h"), (b"\xc1uthorization", b"Bearer z"), (b"host", b"\xe9t\xe9")],
    [(b"authorization", b"Bearer a"), (b"Authorization", b"Basic b"), (b"x-forwarded-host", b"evil")],
])
def test_the_caller_check_reads_its_headers_as_a_full_decode_would(headers):
    """``checked_headers`` decodes only the four headers the caller check reads: they must be exactly what
    decoding every header name and value (names lower-cased, the last repeat winning) gives for those four,
    and so the credentials alike."""
    from sentinel_mcp.app.http_app import CHECKED_HEADERS, checked_headers
    from sentinel_mcp.identity.credentials import Credentials

    scope = {"type": "http", "headers": headers, "client": ("127.0.0.1", 1)}
    full = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}
    wanted = {name.decode() for name in CHECKED_HEADERS}
    assert checked_headers(scope) == {k: v for k, v in full.items() if k in wanted}
    assert Credentials.from_scope(scope, checked_headers(scope)) == Credentials.from_scope(scope)


def test_one_pass_over_the_head_refuses_the_first_repeat_and_reads_what_the_caller_check_reads():
    """``_checked_head`` is the repeat check and ``checked_headers`` in one pass: the first header of
    ``SINGLE_HEADERS`` sent twice (any spelling) is named, as walking the headers for repeats names it, and a
    head without one reads what ``checked_headers`` reads."""
    import random

    from sentinel_mcp.app.http_app import SINGLE_HEADERS, _checked_head, checked_headers

    names = [b"host", b"Host", b"origin", b"ORIGIN", b"authorization", b"x-api-key", b"mcp-session-id",
             b"Mcp-Protocol-Version", b"last-event-id", b"x-sentinel-session", b"accept", b"content-type",
             b"ho\xc0st", b"x-forwarded-host"]
    rng = random.Random(21)
    outcomes = set()
    for _ in range(3000):
        headers = [(rng.choice(names), rng.choice([b"a", b"\xe9", b"Bearer t"]))
                   for _ in range(rng.randrange(6))]
        scope = {"type": "http", "headers": headers}
        first, seen = None, set()
        for key, _ in headers:
            if key.lower() in SINGLE_HEADERS:
                if key.lower() in seen:
                    first = key.lower().decode("latin-1")
                    break
                seen.add(key.lower())
        repeated, found = _checked_head(scope)
        assert repeated == first, headers
        if first is None:
            assert found == checked_headers(scope), headers
        outcomes.add(first is None)
    assert outcomes == {True, False}


async def test_health_details_are_the_operators(tmp_path):
    """/healthz names upstreams, file paths and causes: the operator (the owner's token) sees them (as
    /metrics' whole view); a person who may reach every tool, a principal limited to some upstreams, another
    agent's key, a wrong or absent credential get the status word only."""
    cfg = write_config(tmp_path, http={"token": OWNER_TOKEN}, a2a={"name": "identity-test", "task_db": "",
                                                                   "api_keys": {"rover": "rover-key-1234"}})
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=10) as http:
            owner = {"Authorization": f"Bearer {OWNER_TOKEN}"}
            full = (await http.get(f"{base}/healthz", headers=owner)).json()
            assert "upstreams" in full and "storage" in full, full
            for headers in ({"Authorization": f"Bearer {ALICE}"}, {"X-API-Key": ALICE},
                            {"Authorization": f"Bearer {CAROL}"}, {"X-API-Key": CAROL},
                            {"X-API-Key": "rover-key-1234"}, {"Authorization": "Bearer rover-key-1234"},
                            {"Authorization": f"Bearer {ALICE}x"}, {}):
                r = await http.get(f"{base}/healthz", headers=headers)
                assert r.status_code == 200 and r.json() == {"status": full["status"]}, (headers, r.text)


def test_config_show_never_prints_a_value_expanded_from_the_environment(tmp_path, monkeypatch):
    """Secrets reach a config through ``${VAR}`` in any string (an argument, a URL's query, an env value of
    any name): ``config show`` prints such a value as written (``${VAR}``), and an upstream's env and header
    values masked whatever their names, never the secret itself."""
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({
        "mcpServers": {
            "cmd": {"command": "x", "args": ["--key=${SHOWN_SECRET}"],
                    "env": {"OPENAI_API_KEY": "literal-env-value", "K": "${SHOWN_SECRET}"}},
            "web": {"url": "https://h.example/mcp?key=${SHOWN_SECRET}",
                    "headers": {"X-Api-Key": "literal-hdr"}},
        },
        "sentinel": {"data_dir": str(tmp_path), "seeds": {"who": "${SHOWN_SECRET}"}},
    }))
    # in process (test_config_show_masks_secrets runs `config show` end to end): the same environment variable
    monkeypatch.setenv("SHOWN_SECRET", "hunter2-xyz")
    out = run_main(["-c", str(cfg), "config", "show"])
    assert out.returncode == 0, out.stderr
    for leaked in ("hunter2-xyz", "literal-env-value", "literal-hdr"):
        assert leaked not in out.stdout, out.stdout
    shown = json.loads(out.stdout)
    assert shown["mcpServers"]["cmd"]["args"] == ["--key=${SHOWN_SECRET}"]
    assert shown["mcpServers"]["web"]["url"] == "https://h.example/mcp?key=${SHOWN_SECRET}"
