"""``sentinel-mcp tls``: a local CA for a small deployment.

sentinel-mcp tls init            the CA, the front's certificate (this machine's names and addresses), the CRL
sentinel-mcp tls issue NAME      a client certificate for a person or a peer, and the config lines to use it
sentinel-mcp tls revoke NAME     revoke it (by name, serial or fingerprint); the front re-reads the CRL
sentinel-mcp tls list            what was issued
sentinel-mcp tls crl             write a fresh CRL (it is valid for a year)
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import sys
from typing import TYPE_CHECKING, Any

from sentinel_mcp.config import RESERVED_PRINCIPALS, ConfigError, load_config

if TYPE_CHECKING:
    from sentinel_mcp.tls.authority import LocalCA

# The CA and certificate code (cryptography) is imported by the `tls` commands that use it, not when the
# sub-command is registered on every `sentinel-mcp` start (0.1 s of the gateway's cold start, issue 21).


def _ca(args: argparse.Namespace) -> tuple[Any, LocalCA]:
    from sentinel_mcp.tls.authority import LocalCA, tls_dir

    config = load_config(args.config)
    return config, LocalCA(tls_dir(config.data_dir))


def _j(value: Any) -> str:
    return json.dumps(value)


def _public_host() -> str:
    from sentinel_mcp.tls.authority import machine_addresses

    for a in machine_addresses():
        if not ipaddress.ip_address(a).is_loopback:
            return f"[{a}]" if ":" in a else a
    return "127.0.0.1"


def cmd_init(args: argparse.Namespace) -> int:
    from sentinel_mcp.tls.authority import machine_addresses, machine_names

    config, ca = _ca(args)
    for ip in args.ip or []:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise ConfigError(f"--ip {ip!r} is not an IP address") from None
    created = ca.create()
    names = list(dict.fromkeys([*machine_names(), *(args.name or [])]))
    ips = list(dict.fromkeys([*machine_addresses(), *(args.ip or [])]))
    if args.force or not (ca.server_cert_path.exists() and ca.server_key_path.exists()):
        server = ca.issue_server(names, ips, days=args.days)
        made = f"for {', '.join(names + ips)} (valid until {server.not_after:%Y-%m-%d})"
    else:
        made = "kept (--force issues a new one)"
    print(
        f"Local CA            {ca.ca_cert_path}  ({'created now' if created else 'already there'}; "
        f"its key {ca.ca_key_path.name} is mode 0600)"
    )
    print(f"Server certificate  {ca.server_cert_path}  {made}")
    print(f"Revocation list     {ca.crl_path}")
    tls = {
        "cert": str(ca.server_cert_path),
        "key": str(ca.server_key_path),
        "ca": str(ca.ca_cert_path),
        "crl": str(ca.crl_path),
        "client_certificates": "optional",
    }
    port = config.sentinel.http.port
    print(
        '\nAdd to the "sentinel" section of your config, then serve on this machine\'s address '
        f"(sentinel-mcp serve --http 0.0.0.0:{port}):"
    )
    print(f'  "http": {_j({"host": "0.0.0.0", "port": port, "tls": tls})}')
    print(
        '  (client_certificates: "optional" = a token or a client certificate; "required" = a certificate on '
        'every connection; "off" = tokens only)'
    )
    print(
        f"\nClients trust this CA:  curl --cacert {ca.ca_cert_path} https://{_public_host()}:{port}/healthz"
    )
    print("A client certificate for a person or a peer:  sentinel-mcp tls issue NAME")
    return 0


def cmd_issue(args: argparse.Namespace) -> int:
    from sentinel_mcp.tls.peer_certificate import colon_hex

    config, ca = _ca(args)
    name = args.name
    if name in RESERVED_PRINCIPALS and name != "owner":
        raise ConfigError(f"{name!r} is a reserved principal name; choose another")
    try:
        issued = ca.issue_client(name, dns=args.dns, ips=args.ip, days=args.days)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    port = config.sentinel.http.port
    url = f"https://{_public_host()}:{port}"
    files = {"ca": str(ca.ca_cert_path), "cert": str(issued.cert), "key": str(issued.key)}
    print(
        f"Client certificate for {name} (valid until {issued.not_after:%Y-%m-%d}; serial {issued.serial:x})"
    )
    print(f"  subject      {issued.subject}")
    print(f"  sha256       {colon_hex(issued.sha256)}")
    print(f"  certificate  {issued.cert}")
    print(f"  key          {issued.key}  (mode 0600: hand it over privately)")
    print(f"  CA           {ca.ca_cert_path}")
    from sentinel_mcp.tls.trusted_cas import TrustedCAs

    # bound to this CA: the rule stays right if the front's bundle later trusts other CAs too (docs/tls.md)
    match = {"subject": issued.subject, "issuer": TrustedCAs.from_file(ca.ca_cert_path).cas[0].subject_text}
    if name == "owner":
        print("\nOn this Sentinel it is the owner: in sentinel.http.tls add")
        print(f'  "owner": {_j(match)}')
    else:
        print(
            f'\nOn this Sentinel it is the principal {name!r}: add to sentinel.principals ("tools" and '
            '"upstreams" limit its reach)'
        )
        print(f"  {_j({'name': name, 'certificate': match})}")
    print(f'  (exactly this certificate instead: "certificate": {_j({"sha256": issued.sha256})})')
    print(f"\nWhere {name} uses it (this front at {url}):")
    print(f'  another Sentinel, mcpServers:    "sentinel": {_j({"url": url + "/mcp", "tls": files})}')
    print(f"  an A2A peer, sentinel.a2a.peer_tls:  {_j(files)}")
    print(f"  curl --cacert {files['ca']} --cert {files['cert']} --key {files['key']} {url}/healthz")
    print(f"Revoke it: sentinel-mcp tls revoke {name}")
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    _, ca = _ca(args)
    hits = ca.revoke(args.what)
    for e in hits:
        print(f"revoked {e['name']} (serial {e['serial']}, sha256 {e['sha256'][:16]}…)")
    print(
        f"{ca.crl_path} rewritten; a running Sentinel refuses the certificate from its next connection or "
        "request"
    )
    return 0


def cmd_crl(args: argparse.Namespace) -> int:
    _, ca = _ca(args)
    print(f"wrote {ca.write_crl()}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from sentinel_mcp.tls.authority import AuthorityError

    _, ca = _ca(args)
    if not ca.exists:
        raise AuthorityError(f"no local CA in {ca.dir}: run `sentinel-mcp tls init` first")
    entries = ca.index()
    if args.json:
        print(json.dumps(entries, indent=2))
        return 0
    print(f"CA {ca.subject} ({ca.ca_cert_path})")
    for e in entries:
        state = (
            f"revoked {e['revoked_at'][:19]}" if e.get("revoked_at") else f"valid until {e['not_after'][:10]}"
        )
        print(f"  {e['name']:20} serial {e['serial'][:16]:16}  {state}")
    if not entries:
        print("  no client certificates issued yet (sentinel-mcp tls issue NAME)")
    return 0


def _guarded(func: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        from sentinel_mcp.tls.authority import AuthorityError

        try:
            return int(func(args))
        except AuthorityError as e:
            print(f"sentinel-mcp tls: {e}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"sentinel-mcp tls: {e.filename or ''}: {e.strerror or e}", file=sys.stderr)
            return 2

    return run


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "tls", help="TLS: a local CA, the front's certificate, client certificates (mutual TLS)"
    )
    tsub = p.add_subparsers(dest="tls_command", metavar="ACTION")
    i = tsub.add_parser(
        "init", help="create the local CA and this machine's server certificate in the data dir"
    )
    i.add_argument("--name", action="append", help="another DNS name for the server certificate (repeatable)")
    i.add_argument("--ip", action="append", help="another IP address for the server certificate (repeatable)")
    i.add_argument("--days", type=_days, default=397, help="validity of the server certificate (default 397)")
    i.add_argument("--force", action="store_true", help="issue a new server certificate even if one exists")
    i.set_defaults(func=_guarded(cmd_init))
    c = tsub.add_parser(
        "issue", help="issue a client certificate for a person or a peer (prints the config lines)"
    )
    c.add_argument("name", help="the principal it names")
    c.add_argument("--dns", action="append", help="a DNS name, if the peer also serves with it (repeatable)")
    c.add_argument(
        "--ip", action="append", help="an IP address, if the peer also serves with it (repeatable)"
    )
    c.add_argument("--days", type=_days, default=397, help="validity in days (default 397)")
    c.set_defaults(func=_guarded(cmd_issue))
    r = tsub.add_parser(
        "revoke", help="revoke a client certificate (name, serial or SHA-256) and rewrite the CRL"
    )
    r.add_argument("what")
    r.set_defaults(func=_guarded(cmd_revoke))
    cr = tsub.add_parser("crl", help="write a fresh CRL (valid for a year)")
    cr.set_defaults(func=_guarded(cmd_crl))
    ls = tsub.add_parser("list", help="the client certificates issued by the local CA")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=_guarded(cmd_list))
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _days(text: str) -> float:
    """A certificate's validity: a positive finite number of days no longer than the CA's own (checked by the
    command line, so a NaN or a huge one stops before anything is written)."""
    from sentinel_mcp.tls.authority import CA_DAYS

    try:
        days = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of days") from None
    if not (0 < days <= CA_DAYS):  # NaN fails this too
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of days above 0 and at most {CA_DAYS}")
    return days
