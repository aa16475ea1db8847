"""CPU per request of certificate -> principal: a subject rule without a bundle (as before issuer binding)
against an issuer-bound rule with the front's bundle (as ``serve_http`` wires it), interleaved.

Usage: python benchmarks/certificate_rules.py [--rounds N] [--calls N]"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from sentinel_mcp.identity.certificates import CertificateResolver
from sentinel_mcp.identity.credentials import Credentials
from sentinel_mcp.identity.principal import Principal
from sentinel_mcp.tls.authority import LocalCA
from sentinel_mcp.tls.server_context import FrontTLS, ServerContexts
from sentinel_mcp.tls.settings import CertificateMatch

GOAL_US = 50.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ca = LocalCA(Path(tmp) / "ca")
        ca.create()
        server, alice = ca.issue_server(["localhost"], ["127.0.0.1"]), ca.issue_client("alice")
        contexts = ServerContexts(FrontTLS(server.cert, server.key, ca.ca_cert_path, ca.crl_path, "optional"))
        cas = contexts.trusted_cas()
        assert cas is not None
        alice_p = Principal("alice", "certificate")
        unbound = CertificateMatch(subject="CN=alice,O=Sentinel")
        bound = CertificateMatch(subject="CN=alice,O=Sentinel", issuer=cas.cas[0].subject_text)
        resolvers = {
            "subject rule, no bundle (before)": CertificateResolver(
                [(unbound, alice_p)], "optional", is_revoked=contexts.is_revoked
            ),
            "issuer-bound rule, the front's bundle": CertificateResolver(
                [(bound, alice_p)],
                "optional",
                is_revoked=contexts.is_revoked,
                trusted_cas=contexts.trusted_cas,
            ),
        }
        creds = Credentials(tls={"client_cert_chain": [alice.cert.read_text()]})
        per: dict[str, list[float]] = {name: [] for name in resolvers}
        for r in resolvers.values():
            assert r.resolve(creds) == alice_p
        for _ in range(args.rounds):
            for name, r in resolvers.items():
                t = time.process_time()
                for _ in range(args.calls):
                    r.resolve(creds)
                per[name].append((time.process_time() - t) / args.calls * 1e6)
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'certificate -> principal, CPU per request':45} {'median us':>10} {'min us':>8} {'goal us':>8}")
    for name, samples in per.items():
        samples.sort()
        median = samples[len(samples) // 2]
        met = "yes" if median < GOAL_US else "NO"
        print(f"{name:45} {median:10.2f} {samples[0]:8.2f} {GOAL_US:8.1f}  {met}")


if __name__ == "__main__":
    main()
