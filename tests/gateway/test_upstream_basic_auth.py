"""A user name and password in an HTTP upstream's URL (``https://user:password@host/mcp``) are sent as Basic
auth by both of Sentinel's clients, read one way (``core/url_basic_auth.py``): percent-decoded as UTF-8, as
the SDK's client (httpx2) sends them. Before, the lean client (``gateway/lean_http.py``) dropped them: the
upstream's handshake (the SDK's) passed, and every ``tools/call`` (the lean path's) was refused 401.

Against a real upstream on 127.0.0.1 that refuses any request without the exact credentials
(``basic_auth_upstream.py``), down the lean path and the SDK's, in both protocol eras. What cannot be sent as
written is a config error that never quotes the credentials: a percent-encoding that is no UTF-8, a control
character once decoded, a ':' in the user name once decoded, or an ``Authorization`` header configured beside
them (each client sent a different one).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from pydantic import ValidationError

from sentinel_mcp.config import RemoteServer
from sentinel_mcp.core.url_basic_auth import basic_authorization, credentials_problem
from sentinel_mcp.gateway.lean_http import HeaderRefused, HttpPool
from sentinel_mcp.gateway.upstream import Upstream, UpstreamHooks
from tests.conftest import free_port, stop_process, wait_http

pytestmark = pytest.mark.timeout(240)
ROOT = Path(__file__).resolve().parents[2]
USER, PASSWORD = "bob", "p@ss:wörd 9"  # written in the URL percent-encoded: bob:p%40ss%3Aw%C3%B6rd%209
USERINFO = "bob:p%40ss%3Aw%C3%B6rd%209"
EXPECTED = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRET = "hunter2-s3cret"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory: pytest.TempPathFactory) -> Any:
    port, log = free_port(), tmp_path_factory.mktemp("basic") / "requests.log"
    proc = subprocess.Popen([sys.executable, "-m", "tests.gateway.basic_auth_upstream", str(port), EXPECTED,
                             str(log)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        wait_http(f"http://127.0.0.1:{port}/mcp", proc=proc)
        yield port, log
    finally:
        stop_process(proc)


async def _nothing(*_: Any) -> None:
    return None


async def _echo(url: str, era: str, lean: bool) -> tuple[bool, str]:
    os.environ["SENTINEL_LEAN_UPSTREAM"] = "on" if lean else "off"  # read when the connection is made
    try:
        up = Upstream("tb", RemoteServer(url=url, protocol=era),  # type: ignore[arg-type]
                      UpstreamHooks(catalog_changed=_nothing), health_interval=3600)
        async with anyio.create_task_group() as tg:
            tg.start_soon(up.run)
            try:
                assert await up.wait_ready(30), up.last_error
                result = await up.call_tool("echo", {"text": "through"})
                return up.lean is not None, result.content[0].text  # type: ignore[union-attr]
            finally:
                await up.stop()
    finally:
        os.environ.pop("SENTINEL_LEAN_UPSTREAM", None)


def _lines(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_the_upstream_refuses_a_request_without_the_credentials(upstream: Any) -> None:
    """The check the tests below rely on: no credentials, or other ones, are refused."""
    port, log = upstream
    before = len(_lines(log))
    for auth in (None, ("bob", "wrong"), ("bob", "p@ss:w\N{LATIN SMALL LETTER O WITH DIAERESIS}rd")):
        r = httpx2.post(f"http://127.0.0.1:{port}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                        auth=auth)
        assert r.status_code == 401
    assert [line.split()[0] for line in _lines(log)[before:]] == ["refused"] * 3


@pytest.mark.parametrize("era", ["modern", "legacy"])
@pytest.mark.parametrize("lean", [True, False], ids=["lean", "sdk"])
def test_credentials_in_the_url_reach_the_upstream_down_both_paths(upstream: Any, era: str,
                                                                   lean: bool) -> None:
    port, log = upstream
    before = len(_lines(log))
    took_lean, text = anyio.run(_echo, f"http://{USERINFO}@127.0.0.1:{port}/mcp", era, lean)
    assert took_lean == lean and text == "through"
    lines = _lines(log)[before:]
    assert lines and all(line.startswith("ok ") for line in lines), lines
    calls = [line for line in lines if " tools/call " in line]
    assert calls == ["ok tools/call " + ("other" if lean else "httpx")], lines  # the path that sent it


ACCEPTED = ["a:b@c", "us%40er:p%3Aw:x", "user", "user:", ":pw", "u:pa%zzss", "u:p%25w", "u:\u00e9%C3%A9",
            "u:a;b=c!$&'()*+,", "u:a%2", "u%20x:%7e~", "%E2%82%AC:%F0%9F%98%80", 'u:"<>{}|^`', USERINFO]


@pytest.mark.parametrize("userinfo", ACCEPTED)
def test_the_lean_client_sends_what_the_sdks_client_sends(userinfo: str) -> None:
    url = f"http://{userinfo}@127.0.0.1:9/mcp"
    request = httpx2.Request("POST", url)
    sdk = next(httpx2.AsyncClient()._build_request_auth(request).auth_flow(request)).headers["authorization"]
    assert credentials_problem(url) is None and basic_authorization(url) == sdk
    RemoteServer(url=url)  # loads
    head = HttpPool(url, {}, None, 5.0)._head
    assert head.count(b"\r\nauthorization: " + sdk.encode() + b"\r\n") == 1
    assert b"@" not in head.split(b"\r\n")[1]  # the Host header names the host alone


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/mcp", "http://@127.0.0.1:9/mcp", "http://:@127.0.0.1:9/mcp"])
def test_no_user_info_sends_no_authorization(url: str) -> None:
    assert basic_authorization(url) is None and b"authorization" not in HttpPool(url, {}, None, 5.0)._head


REFUSED = [
    (f"bob:{SECRET}%0d%0aX-Admin:%20yes", "control character (U+000D)"),
    (f"bob:{SECRET}%0A", "control character (U+000A)"),
    (f"bob:{SECRET}%00", "control character (U+0000)"),
    (f"bob:{SECRET}%7F", "control character (U+007F)"),
    (f"bob:{SECRET}%C2%85", "control character (U+0085)"),
    (f"bob%1b:{SECRET}", "user name in the URL holds a control character (U+001B)"),
    (f"bob:{SECRET}%FF", "no UTF-8"),
    (f"bob:{SECRET}%C3", "no UTF-8"),
    (f"bob%ED%A0%80:{SECRET}", "no UTF-8"),  # an encoded surrogate
    (f"bob%3Aadmin:{SECRET}", "holds ':'"),
    (f"bob%3a:{SECRET}", "holds ':'"),
]


@pytest.mark.parametrize("userinfo, why", REFUSED)
def test_credentials_that_cannot_be_sent_as_written_are_a_config_error(userinfo: str, why: str) -> None:
    url = f"http://{userinfo}@127.0.0.1:9/mcp"
    with pytest.raises(ValidationError) as e:
        RemoteServer(url=url)
    said = e.value.errors()[0]["msg"]  # (pydantic's own text quotes the input; the loader never shows it)
    assert why in said and SECRET not in said
    with pytest.raises(HeaderRefused) as refused:  # the lean client refuses it too, whatever loaded it
        HttpPool(url, {}, None, 5.0)
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize("name", ["Authorization", "authorization", "AUTHORIZATION"])
@pytest.mark.parametrize("userinfo", [f"bob:{SECRET}", SECRET, f":{SECRET}"])
def test_an_authorization_header_beside_url_credentials_is_refused(name: str, userinfo: str) -> None:
    url = f"https://{userinfo}@mcp.example.com/mcp"
    with pytest.raises(ValidationError) as e:
        RemoteServer(url=url, headers={name: f"Bearer {SECRET}"})
    said = e.value.errors()[0]["msg"]
    assert "not both" in said and SECRET not in said
    RemoteServer(url=url, headers={"X-Key": "v"})  # another header beside them is fine
    RemoteServer(url="https://mcp.example.com/mcp", headers={name: f"Bearer {SECRET}"})  # or the header alone


@pytest.mark.parametrize("server", [
    {"url": f"http://bob:{SECRET}%0d%0a@127.0.0.1:9/mcp"},
    {"url": f"https://bob:{SECRET}@mcp.example.com/mcp", "headers": {"Authorization": f"Bearer {SECRET}"}},
])
def test_the_config_error_names_the_line_and_never_the_credentials(tmp_path: Path, server: dict) -> None:
    path = tmp_path / "sentinel.json"
    path.write_text(json.dumps({"mcpServers": {"remote": server}}, indent=2))
    os.chmod(path, 0o600)
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "SENTINEL_DATA_DIR": str(tmp_path / "d"),
           "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(path), "config", "show"],
                         capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)
    assert run.returncode == 2 and "(line 3)" in run.stderr, run.stderr
    assert SECRET not in run.stdout + run.stderr
