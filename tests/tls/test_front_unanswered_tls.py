"""Over the TLS front too, a 500 no layer of ours wrote (here Starlette's own, for a route that raised, with
no ``SafeHeaders`` in front of it) leaves with the safe headers: the front's transport adds them under TLS
as on plain HTTP (``tests/gateway/test_front_unanswered.py``)."""

from __future__ import annotations

import ssl
from typing import Any

import httpx2
from tests.tls.tls_rig import front_in_process

from sentinel_mcp.core.safe_headers import SAFE_HEADERS
from sentinel_mcp.tls.server_context import FrontTLS


async def test_a_route_that_raised_is_answered_with_the_safe_headers_over_tls(pki):
    async def broken(request: Any) -> Any:
        raise RuntimeError("a fault in the route")

    tls = FrontTLS(pki.server.cert, pki.server.key, None, None, "off")
    async with front_in_process(tls, broken) as (port, _):
        ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
        async with httpx2.AsyncClient(verify=ctx, timeout=30) as client:
            answer = await client.get(f"https://localhost:{port}/")
    assert answer.status_code == 500
    for name, value in SAFE_HEADERS:
        assert answer.headers.get_list(name.decode()) == [value.decode()], name
