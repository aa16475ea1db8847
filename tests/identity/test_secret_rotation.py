"""The owner's token and console secret, kept in files of the data dir, can be replaced while Sentinel runs
(``sentinel-mcp config token --rotate``): the old one stops signing in, open console sessions of the old
console secret end. A replaced file is trusted by the first one's rules; whatever else lands there (a link, a
file others can write, another principal's secret, nothing) signs nobody in: fail closed."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import httpx2
import pytest
from tests.console.console_rig import csrf_of
from tests.identity.identity_rig import ALICE, env_for, http_sentinel, write_config
from tests.support.cli_in_process import run_main

from sentinel_mcp.config import parse_config
from sentinel_mcp.console.auth import ConsoleAuth
from sentinel_mcp.identity import console_secret, file_secret, owner_token
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.http_auth import http_auth_for
from sentinel_mcp.identity.resolver import AuthFailed

KNOWN = "attacker-knows-this-secret-0123456789"
ALICE_SECRET = "alice-console-0123456789abcdef"


@pytest.fixture
def now(monkeypatch):
    monkeypatch.setattr(file_secret, "RECHECK_SECONDS", 0.0)  # every request looks (by default once a second)


def _auth(tmp_path):
    cfg = parse_config({"sentinel": {"data_dir": str(tmp_path / "data"), "principals": [
        {"name": "alice", "token": ALICE, "console_secret": ALICE_SECRET}]}})
    return http_auth_for(cfg)


def _who(auth, secret: str) -> str | None:
    try:
        return auth.authenticator.authenticate(Credentials(bearer=secret)).name
    except AuthFailed:
        return None


def _signs_in(auth, secret: str) -> str | None:
    found = auth.console_secrets.resolve(Credentials(bearer=secret))
    return found.name if found is not None else None


def test_a_replaced_token_takes_effect_and_the_old_one_signs_nobody_in(tmp_path, now):
    auth = _auth(tmp_path)
    old = auth.owner_token
    assert _who(auth, old) == "owner"
    new = owner_token.replace(tmp_path / "data")
    assert new != old and _who(auth, new) == "owner" and _who(auth, old) is None
    assert _who(auth, ALICE) == "alice"  # the others' tokens are untouched
    secret = console_secret.replace(tmp_path / "data")
    assert _signs_in(auth, secret) == "owner" and _signs_in(auth, auth.console_secret) is None
    assert _who(auth, secret) is None and _signs_in(auth, new) is None  # still two kinds apart


def _plant(path, how: str, tmp_path) -> None:
    path.unlink()
    if how == "link":
        (tmp_path / "known").write_text(KNOWN)
        os.symlink(tmp_path / "known", path)
    elif how == "others-write":
        path.write_text(KNOWN)
        os.chmod(path, 0o666)
    elif how == "directory":
        path.mkdir()
    elif how == "fifo":
        os.mkfifo(path, 0o600)
    elif how in ("empty", "short", "binary", "huge"):
        data = {"empty": b"", "short": b"abc\n", "binary": b"\xff\xfe" * 20, "huge": b"x" * 5000}[how]
        path.write_bytes(data)
        os.chmod(path, 0o600)
    # "gone": left deleted


@pytest.mark.parametrize("how", ["gone", "link", "others-write", "directory", "fifo", "empty", "short",
                                 "binary", "huge"])
@pytest.mark.parametrize("which", ["token", "console secret"])
def test_whatever_else_replaces_the_file_signs_nobody_in(tmp_path, now, how, which):
    auth = _auth(tmp_path)
    path = auth.token_file if which == "token" else auth.console_secret_file
    old = auth.owner_token if which == "token" else auth.console_secret
    look = _who if which == "token" else _signs_in
    assert look(auth, old) == "owner"
    _plant(path, how, tmp_path)
    assert look(auth, old) is None and look(auth, KNOWN) is None
    assert _who(auth, ALICE) == "alice" and _signs_in(auth, ALICE_SECRET) == "alice"
    if path.is_dir():
        path.rmdir()
    elif path.exists() or path.is_symlink():
        path.unlink()
    fresh = (owner_token.replace if which == "token" else console_secret.replace)(tmp_path / "data")
    assert look(auth, fresh) == "owner"  # a good one in place: the owner signs in again


@pytest.mark.parametrize("copied", ["console secret", "alice's token", "alice's console secret"])
def test_a_replaced_token_that_is_another_secret_signs_nobody_in(tmp_path, now, copied):
    """A token file now holding a console secret would make it a bearer (a client answering for the user
    with the console's sign-in); holding alice's token, a second owner of her secret."""
    auth = _auth(tmp_path)
    text = {"console secret": auth.console_secret, "alice's token": ALICE,
            "alice's console secret": ALICE_SECRET}[copied]
    _write_secret(auth.token_file, text)
    assert _who(auth, text) == ("alice" if copied == "alice's token" else None)
    assert _who(auth, auth.owner_token) is None


@pytest.mark.parametrize("copied", ["owner token", "alice's token"])
def test_a_replaced_console_secret_that_is_a_token_signs_nobody_in(tmp_path, now, copied):
    auth = _auth(tmp_path)
    text = auth.owner_token if copied == "owner token" else ALICE
    _write_secret(auth.console_secret_file, text)
    assert _signs_in(auth, text) is None and _signs_in(auth, auth.console_secret) is None
    assert _who(auth, text) == ("owner" if copied == "owner token" else "alice")  # the token still works


def _write_secret(path, text: str) -> None:
    tmp = path.with_name(".planted")
    tmp.write_text(text + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def test_a_replaced_console_secret_ends_the_sessions_signed_in_with_it(tmp_path, now):
    auth = _auth(tmp_path)
    console = ConsoleAuth(auth.authenticator, auth.console_secrets)
    owner_sid, _ = console.sign_in(auth.console_secret)
    alice_sid, _ = console.sign_in(ALICE_SECRET)
    console_secret.replace(tmp_path / "data")
    auth.console_secrets.refresh()
    assert owner_sid not in console._sessions and alice_sid in console._sessions
    assert console.sign_in(auth.console_secret) is None


def _cli(cfg, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", *args],
                          capture_output=True, text=True, timeout=60, env=env_for(cfg))


def _in_process(cfg, monkeypatch, *args: str) -> subprocess.CompletedProcess[str]:
    """``_cli`` through ``main`` in this process, with the environment ``_cli`` gives its child (the
    rotations a running gateway must follow run end to end through ``_cli``)."""
    monkeypatch.setenv("SENTINEL_DATA_DIR", env_for(cfg)["SENTINEL_DATA_DIR"])
    return run_main(["-c", str(cfg), "config", *args])


def _shown(cfg, monkeypatch, what: str) -> str:
    """``config token`` / ``console-secret``: what it prints."""
    out = _in_process(cfg, monkeypatch, what)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


async def test_rotate_from_the_cli_reaches_a_running_gateway(tmp_path, monkeypatch):
    """The real gateway over HTTP: the old token and the old console sign-in stop within about a second of
    ``config ... --rotate`` (waited for by polling, a bounded count of looks, never a fixed sleep)."""
    cfg = write_config(tmp_path)
    token, secret = _shown(cfg, monkeypatch, "token"), _shown(cfg, monkeypatch, "console-secret")
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=30, follow_redirects=False) as http:
            health = await http.get(f"{base}/healthz", headers={"Authorization": f"Bearer {token}"})
            assert health.status_code == 200
            form = await http.get(f"{base}/console/login")
            r = await http.post(f"{base}/console/login", data={"csrf": csrf_of(form.text), "secret": secret},
                                headers={"origin": base})
            assert r.status_code == 303, r.text[:300]
            assert (await http.get(f"{base}/console/inbox")).status_code == 200

            rotated = _cli(cfg, "token", "--rotate")
            assert rotated.returncode == 0 and "replaced now" in rotated.stderr, rotated.stderr
            new = rotated.stdout.strip()
            assert new != token
            statuses = [await _mcp_status(http, base, new)]
            for _ in range(200):  # within ~1 s expected: looks 0.05 s apart, at most 200
                old = await _mcp_status(http, base, token)
                statuses.append(old)
                if old == 401:
                    break
                await asyncio.sleep(0.05)
            assert statuses[-1] == 401 and set(statuses[1:-1]) <= {200}, statuses
            assert await _mcp_status(http, base, new) == 200

            again = _cli(cfg, "console-secret", "--rotate")
            assert again.returncode == 0 and again.stdout.strip() != secret
            for _ in range(200):
                page = await http.get(f"{base}/console/inbox")
                if page.status_code != 200:
                    break
                await asyncio.sleep(0.05)
            assert page.status_code in (302, 303) and "login" in page.headers["location"], page.status_code


async def _mcp_status(http, base: str, token: str) -> int:
    r = await http.post(f"{base}/mcp", headers={
        "Authorization": f"Bearer {token}", "accept": "application/json, text/event-stream",
        "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    return r.status_code


def test_rotate_refuses_a_secret_the_config_sets(tmp_path, monkeypatch):
    cfg = write_config(tmp_path, http={"token": "configured-owner-token-0123456789"})
    out = _in_process(cfg, monkeypatch, "token", "--rotate")  # the refusal is main's: no process needed
    assert out.returncode == 1 and "change it there and restart" in out.stderr, out.stderr


async def test_a_stream_of_the_rotated_token_gets_nothing_more(tmp_path, monkeypatch):
    """The owner rotates a token that leaked while a call it made streams progress over HTTP (a stream, an
    A2A subscription, stays open for hours): the stream ends at its next chunk past the rotation, the call's
    result never reaching the old token's holder, as a revoked client certificate's stream ends
    (``app/stream_recheck.py``). Before, a stream was re-checked only for certificates ("tokens hold for the
    process's life"), but the owner's token is followed from its file: the old token's stream got it all. A
    token that stays good gets the whole stream."""
    import json
    import sys

    from tests.gateway.helpers import TOOLBOX
    from tests.tls.test_stream_recheck import HEADERS, _slow_call

    cfg = write_config(tmp_path)
    body = json.loads(cfg.read_text())
    body["mcpServers"]["tb"] = {"command": sys.executable, "args": [TOOLBOX]}
    cfg.write_text(json.dumps(body))
    token = _shown(cfg, monkeypatch, "token")

    async def streamed(secret: str, rotate: bool) -> list[dict]:
        got: list[dict] = []
        async with httpx2.AsyncClient(timeout=60) as http:
            async with http.stream("POST", f"{base}/mcp", json=_slow_call(4.0),
                                   headers={**HEADERS, "Authorization": f"Bearer {secret}"}) as r:
                assert r.status_code == 200, await r.aread()
                async for line in r.aiter_lines():
                    if line.startswith("data:"):
                        got.append(json.loads(line[5:]))
                        if rotate and len(got) == 1:
                            assert _cli(cfg, "token", "--rotate").returncode == 0
        return got

    with http_sentinel(cfg) as (base, _):
        whole = await streamed(token, rotate=False)
        assert sum(m.get("method") == "notifications/progress" for m in whole) == 4, whole
        assert whole[-1].get("id") == 7 and "result" in whole[-1], whole
        cut = await streamed(token, rotate=True)
        assert not any(m.get("id") == 7 for m in cut), cut  # the result never reached the old token
        assert sum(m.get("method") == "notifications/progress" for m in cut) < 4, cut
        new = _shown(cfg, monkeypatch, "token")
        assert new != token
        again = await streamed(new, rotate=False)  # the new token's stream: whole
        assert again[-1].get("id") == 7 and "result" in again[-1], again
