"""A CA taken out of the front's ``ca`` admits nothing more, on connections made before too (red team "tls",
finding 4): the per-request check re-read the dates and the CRL, but a kept-alive connection whose
certificate a removed CA had signed stayed its principal (the owner, with an ``owner`` rule) for as long as
the client kept it busy."""

from __future__ import annotations

import os
import ssl
from typing import Any

import httpx2
from starlette.responses import PlainTextResponse
from tests.tls.tls_rig import front_in_process

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.identity.resolver import AuthFailed
from sentinel_mcp.tls.server_context import FrontTLS
from sentinel_mcp.tls.settings import CertificateMatch


async def test_a_kept_alive_connection_ends_with_its_ca(tmp_path, pki):
    ca_file = tmp_path / "clients-ca.pem"
    ca_file.write_bytes(pki.ca.ca_cert_path.read_bytes())
    crl_file = tmp_path / "crl.pem"
    crl_file.write_bytes(pki.ca.crl_path.read_bytes())
    tls = FrontTLS(pki.server.cert, pki.server.key, ca_file, crl_file, "optional")
    resolver: list[CertificateResolver] = []

    async def who(request: Any) -> PlainTextResponse:
        try:
            found = resolver[0].resolve(Credentials.from_scope(request.scope))
        except AuthFailed as e:
            return PlainTextResponse(str(e), status_code=401)
        return PlainTextResponse(found.name if found else "nobody")

    async with front_in_process(tls, who) as (port, acceptor):
        contexts = acceptor.contexts
        rule = CertificateMatch(subject="CN=owner,O=Sentinel")
        owner = pki.ca.issue_client("owner")
        resolver.append(CertificateResolver([(rule, Principal("owner", "certificate"))],
                                            is_revoked=contexts.is_revoked, trusted_cas=contexts.trusted_cas))
        ctx = ssl.create_default_context(cafile=str(pki.ca.ca_cert_path))
        ctx.load_cert_chain(str(owner.cert), str(owner.key))
        async with httpx2.AsyncClient(verify=ctx, timeout=10) as client:
            url = f"https://localhost:{port}/"
            assert (await client.get(url)).text == "owner"
            pki.ca.revoke("carol")  # a new CRL: the context is rebuilt, the bundle's CAs are the same ones
            contexts.reload_now()
            assert (await client.get(url)).text == "owner"
            tmp = tmp_path / "new-ca.pem"
            tmp.write_bytes(pki.other_ca.ca_cert_path.read_bytes())  # the CA is replaced by another one
            os.replace(tmp, ca_file)
            crl_file.write_bytes(pki.other_ca.crl_path.read_bytes())
            contexts.reload_now()
            answer = await client.get(url)  # the same connection
            assert answer.status_code == 401 and "reconnect" in answer.text
