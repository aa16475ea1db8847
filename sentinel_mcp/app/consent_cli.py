"""``sentinel-mcp consent``: the device owner grants, revokes and lists principals' consents to personal data,
and ``audit --principal`` shows one principal's view of the audit log."""

from __future__ import annotations

import argparse
import json
import sys
import time

from sentinel_mcp.config import load_config
from sentinel_mcp.gateway.consents import ANY_PURPOSE, ConsentBook
from sentinel_mcp.core.display_text import compose, safe_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "consent", help="principals' consents to read personal data (grant, revoke, list, log)"
    )
    csub = p.add_subparsers(dest="action", metavar="ACTION")
    g = csub.add_parser("grant", help="let a principal read a kind of personal data")
    g.add_argument("principal", help="the principal's name (owner: your own MCP clients)")
    g.add_argument(
        "kind", help="the kind of data a tool declares, e.g. messages, contacts, 'traveller profile'"
    )
    g.add_argument("--purpose", default=ANY_PURPOSE, help="only for this stated purpose (default: any)")
    g.add_argument("--expires-in", type=float, metavar="SECONDS", help="default: until revoked")
    g.set_defaults(func=cmd_grant)
    r = csub.add_parser("revoke", help="take a principal's consent back (all kinds unless one is named)")
    r.add_argument("principal")
    r.add_argument("kind", nargs="?")
    r.add_argument("--purpose", help="only the consent for this purpose, by its exact text ('*': the consent "
                   "to any purpose); default: every purpose of the kind")
    r.set_defaults(func=cmd_revoke)
    ls = csub.add_parser("list", help="live consents")
    ls.add_argument("--principal")
    ls.set_defaults(func=cmd_list)
    lg = csub.add_parser("log", help="every grant and revoke")
    lg.add_argument("--principal")
    lg.set_defaults(func=cmd_log)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _book(args: argparse.Namespace) -> ConsentBook:
    config = load_config(args.config)
    from sentinel_mcp.gateway.replica import row_key

    # a server store's rows signed with the key the replicas use (the config's seal key)
    return ConsentBook(config.store_url or config.store_path.parent / "consents.db",
                       key=row_key(config, "consent"))


def cmd_grant(args: argparse.Namespace) -> int:
    book = _book(args)
    try:
        consent = book.grant(args.principal, args.kind, args.purpose, expires_in=args.expires_in, by="cli")
    except ValueError as e:
        print(f"sentinel-mcp consent: {e}", file=sys.stderr)
        return 2
    finally:
        book.close()
    print(json.dumps({"granted": consent.model_dump()}))
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    purpose = args.purpose
    if purpose is not None and (args.kind is None or not purpose):
        # checked before the book opens: read as "every purpose" it would end consents meant to be kept
        print("sentinel-mcp consent: --purpose is non-empty and given with its kind; nothing revoked",
              file=sys.stderr)
        return 2
    book = _book(args)
    try:
        n = book.revoke(args.principal, args.kind, purpose, by="cli")
    finally:
        book.close()
    if purpose is None:
        # said, not left to be guessed: the console revokes one purpose, this every one of the kind (or all)
        kind = args.kind
        what = "every kind and purpose" if kind is None \
            else compose("every purpose of ", safe_text(kind, 200))
        print(f"sentinel-mcp consent: no --purpose: revoked {what} ({n})", file=sys.stderr)
    print(json.dumps({"revoked": n, "principal": args.principal, "kind": args.kind, "purpose": purpose,
                      "all_purposes": purpose is None}))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    book = _book(args)
    try:
        print(json.dumps({"consents": [c.model_dump() for c in book.list(args.principal)]}))
    finally:
        book.close()
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    book = _book(args)
    try:
        for row in book.log(args.principal):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(row["at"]))
            # a purpose is the client's own text (and a kind a tool's): shown safely on the terminal
            who, kind, purpose = (safe_text(row[k], 200) for k in ("principal", "kind", "purpose"))
            print(f"{when}  {row['action']:6} {who:16} {kind:20} {purpose:12} by {safe_text(row['by'], 40)}")
    finally:
        book.close()
    return 0
