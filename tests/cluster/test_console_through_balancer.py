"""The web console through the balancer: two real replicas behind haproxy (the recipe's configuration), a
person signs in with the login form and uses the console page after page, each request on a new connection
(a browser opens several). A console session and its CSRF secret belong to the replica that signed the person
in, so the balancer keeps a browser on that replica (a cookie haproxy sets on ``/console`` only; MCP requests
are not pinned by it); if that replica dies, the browser goes to another one and is asked to sign in again."""

from __future__ import annotations

import asyncio
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import httpx2
import pytest

from examples.cluster.recipe import Cluster
from tests.cluster.test_replicas import base_config
from tests.console.console_rig import csrf_of
from tests.records.rig import AUTH, CONSOLE_SECRET

pytestmark = pytest.mark.timeout(240)
PAGES = ("/console/inbox", "/console/activity", "/console/policy", "/console/sessions")


class Browser:
    """A cookie jar, and a new connection for every request."""

    def __init__(self, base: str) -> None:
        self.base, self.jar = base, httpx2.Cookies()

    async def request(self, method: str, path: str, **kw: Any) -> httpx2.Response:
        async with httpx2.AsyncClient(cookies=self.jar, follow_redirects=False, timeout=30) as http:
            r = await http.request(method, self.base + path, **kw)
            self.jar.update(r.cookies)
            return r

    async def sign_in(self) -> None:
        form = await self.request("GET", "/console/login")
        assert form.status_code == 200, form.status_code
        r = await self.request("POST", "/console/login",
                               data={"csrf": csrf_of(form.text), "secret": CONSOLE_SECRET},
                               headers={"origin": self.base})
        assert r.status_code == 303 and r.headers["location"] == "/console/inbox", r.status_code


async def test_a_person_uses_the_console_through_the_balancer(pg_url: str) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="sentinel-console-lb-"))
    cluster = Cluster(tmp, base_config(tmp), store_url=pg_url)
    try:
        await asyncio.to_thread(cluster.up, AUTH)
        person = Browser(f"http://127.0.0.1:{cluster.port}")
        await person.sign_in()
        for _ in range(3):  # page after page, each on a new connection
            for path in PAGES:
                r = await person.request("GET", path)
                assert r.status_code == 200, (path, r.status_code, r.headers.get("location"))
        pinned = person.jar.get("sentinel_replica")
        assert pinned in ("r0", "r1"), dict(person.jar)
        # the replica it is pinned to dies: the next page comes from the other one, which asks to sign in
        victim = list(cluster.procs)[int(pinned[1])]
        os.killpg(cluster.procs[victim].pid, signal.SIGKILL)
        cluster.procs[victim].wait(10)
        for _ in range(50):  # bounded: haproxy redispatches at once, or after its health check
            r = await person.request("GET", "/console/inbox")
            if r.status_code in (200, 303):
                break
            await asyncio.sleep(0.2)
        assert r.status_code == 303 and r.headers["location"] == "/console/login", r.status_code
        await person.sign_in()  # signing in again works on the survivor
        for path in PAGES:
            assert (await person.request("GET", path)).status_code == 200, path
    finally:
        await asyncio.to_thread(cluster.down)
