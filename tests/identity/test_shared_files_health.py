"""The deployer's opt-out for files another account owns (``SENTINEL_SHARED_FILES=trust``, a container's
bind-mounted config) is never silent: a real Sentinel names each such file among ``/healthz``'s problems for
the operator (red team "perms12"), and without the opt-out it does not start. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx2
import pytest
from tests.identity.identity_rig import OWNER_TOKEN, env_for, http_sentinel, write_config

pytestmark = pytest.mark.timeout(180)


async def test_a_kept_shared_config_is_named_on_healthz(tmp_path, monkeypatch):
    cfg = write_config(tmp_path, http={"token": OWNER_TOKEN})
    os.chmod(cfg, 0o600)
    os.chown(cfg, 54321, -1)  # the host's account, as a bind mount shows it
    monkeypatch.delenv("SENTINEL_SHARED_FILES", raising=False)
    refused = subprocess.run([sys.executable, "-m", "sentinel_mcp", "-c", str(cfg), "serve", "--http",
                              "127.0.0.1:1"], capture_output=True, text=True, timeout=120, env=env_for(cfg))
    assert refused.returncode != 0 and str(cfg) in refused.stderr and "chown" in refused.stderr
    monkeypatch.setenv("SENTINEL_SHARED_FILES", "trust")
    with http_sentinel(cfg) as (base, _):
        async with httpx2.AsyncClient(timeout=10) as http:
            owner = {"Authorization": f"Bearer {OWNER_TOKEN}"}
            health = (await http.get(f"{base}/healthz", headers=owner)).json()
    named = [p for p in health["problems"] if str(cfg) in p and "SENTINEL_SHARED_FILES" in p]
    assert len(named) == 1, health["problems"]
