"""The owner's token file is followed while Sentinel runs (``identity/file_secret.py``), and each re-read is
held to the whole trust rule: not only the file's own descriptor (this account's, nobody else may write it,
not a link) but every folder up to ``/``. A data dir made writable by others (or given to another account)
after start lets that account put a token of its choosing in place; such a file now signs nobody in, and the
error says why. Before, only the file's descriptor was judged on a re-read: a token another account chose
was taken; and a folder opened to others while the file itself stayed untouched went unnoticed until the
file changed."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest
from tests.identity.identity_rig import ALICE, env_for, http_sentinel, write_config

from sentinel_mcp.identity import owner_token
from sentinel_mcp.identity.file_secret import FileSecret
from sentinel_mcp.identity.resolver import token_digest
from tests.support.followed_token import SteppingClock

CHOSEN = "a-token-another-account-chose-0123456789"


def _planted(path: Path) -> None:
    """A token file as another account able to write the folder would leave it: this account's file (the
    folder's writer renamed in a copy Sentinel itself once wrote), mode 0600, holding the chosen token."""
    new = path.with_name(".planted")
    new.write_text(CHOSEN + "\n")
    new.chmod(0o600)
    os.replace(new, path)


@pytest.fixture
def followed(tmp_path: Path) -> tuple[FileSecret, Path]:
    tmp_path.chmod(0o755)
    data = tmp_path / "outer" / "data"
    data.mkdir(parents=True, mode=0o700)
    data.parent.chmod(0o755)
    token, _ = owner_token.load_or_create(data)
    path = owner_token.token_path(data)
    return FileSecret(path, "the owner's token", token, token_digest, clock=SteppingClock()), path


@pytest.mark.parametrize("folder", ["data dir", "the folder above"])
def test_a_token_put_in_a_folder_others_may_write_signs_nobody_in(followed, folder: str, caplog) -> None:
    source, path = followed
    target = path.parent if folder == "data dir" else path.parent.parent
    target.chmod(0o777)
    _planted(path)
    with caplog.at_level(logging.ERROR):
        assert source.digest() is None
    assert any("may be written by group or others" in r.getMessage() for r in caplog.records)
    assert source.digest() != token_digest(CHOSEN)
    target.chmod(0o700 if folder == "data dir" else 0o755)
    os.utime(path)  # seen again: the folder is safe, the file is this account's
    assert source.digest() == token_digest(CHOSEN)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another account takes root")
def test_a_token_in_a_folder_given_to_another_account_signs_nobody_in(followed) -> None:
    source, path = followed
    os.chown(path.parent.parent, 12345, 12345)
    _planted(path)
    assert source.digest() is None


@pytest.mark.parametrize("folder", ["data dir", "the folder above"])
def test_a_folder_opened_to_others_while_the_file_is_untouched_signs_nobody_in(followed, folder: str,
                                                                                caplog) -> None:
    """The file's own stat is unchanged (nothing was planted yet), but whoever may now write the folder could
    swap it at will: the file is no longer trusted, so its token signs nobody in until the folder is closed
    again. Before, only a change of the file itself made Sentinel look at the folders again."""
    source, path = followed
    token = owner_token.read(path)
    assert source.digest() == token_digest(token)
    target = path.parent if folder == "data dir" else path.parent.parent
    target.chmod(0o777)
    with caplog.at_level(logging.ERROR):
        assert source.digest() is None
        assert source.digest() is None  # and stays refused, logged once
    said = [r.getMessage() for r in caplog.records if "may be written by group or others" in r.getMessage()]
    assert len(said) == 1, said
    target.chmod(0o700 if folder == "data dir" else 0o755)
    assert source.digest() == token_digest(token)  # closed again, nothing else touched: the same token again


async def _status(http, base: str, token: str) -> int:
    """An MCP request's status with ``token`` (401: it signs nobody in)."""
    r = await http.post(f"{base}/mcp", headers={
        "Authorization": f"Bearer {token}", "accept": "application/json, text/event-stream",
        "content-type": "application/json", "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"},
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}})
    return r.status_code


async def test_the_running_gateway_stops_signing_in_by_a_token_whose_folder_was_opened(tmp_path) -> None:
    """The real gateway over HTTP: the data dir is opened to others while it runs, the token file untouched;
    within about a second the owner's token signs nobody in (401), and signs in again once the folder is
    closed (waited for by polling, a bounded count of looks, never a fixed sleep)."""
    cfg = write_config(tmp_path)
    token = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "config", "token"],
                           capture_output=True, text=True, timeout=60, env=env_for(cfg)).stdout.strip()
    data = tmp_path / "state"
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=30) as http:
            assert await _status(http, base, token) == 200
            data.chmod(0o777)
            try:
                seen = []
                for _ in range(200):  # within ~1 s expected: looks 0.05 s apart, at most 200
                    seen.append(await _status(http, base, token))
                    if seen[-1] == 401:
                        break
                    await asyncio.sleep(0.05)
                assert seen[-1] == 401 and set(seen[:-1]) <= {200}, seen
                assert await _status(http, base, ALICE) == 200  # the config's own tokens are untouched
            finally:
                data.chmod(0o700)
            for _ in range(200):
                if await _status(http, base, token) == 200:
                    break
                await asyncio.sleep(0.05)
            assert await _status(http, base, token) == 200
