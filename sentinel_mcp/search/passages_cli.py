"""``sentinel-mcp passages sign-existing``: the operator finds the passages (memories, policy paragraphs) on
the server store that replicas no longer read because they were signed the older way, and signs again, with
``--yes``, only those the cluster's key vouches for (``search/passage_resign.py`` says how each is judged).
Without ``--yes`` (or with ``--dry-run``) it only reports."""

from __future__ import annotations

import argparse
import asyncio
import json

from sentinel_mcp.config import load_config
from sentinel_mcp.core.display_text import safe_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("passages",
                       help="the shared passage index: sign again rows the cluster's key vouches for")
    psub = p.add_subparsers(dest="action", metavar="ACTION")
    s = psub.add_parser("sign-existing",
                        help="report rows no replica reads (signed the older way, unsigned, forged); "
                             "--yes signs again those signed the older way by this cluster's key")
    mode = s.add_mutually_exclusive_group()
    mode.add_argument("--yes", action="store_true", help="sign the vouched rows (default: report only)")
    mode.add_argument("--dry-run", action="store_true", help="report only (the default)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_sign_existing)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def cmd_sign_existing(args: argparse.Namespace) -> int:
    return asyncio.run(_sign_existing(args))


_SAID = {
    "current": "signed as today (read)",
    "vouched": "signed by this cluster's key before ids were signed (read again once signed: --yes)",
    "copied": "an older signature on several rows: copies, none signed",
    "unsigned": "no signature (from before rows were signed, or written in SQL): refused",
    "forged": "a signature that is not this cluster's (edited, planted, another key): refused",
}


async def _sign_existing(args: argparse.Namespace) -> int:
    from sentinel_mcp.search.passage_resign import KINDS, sign_vouched, survey
    from sentinel_mcp.search.shared_index import SCHEMA
    from sentinel_mcp.storage.open import open_database, release
    from sentinel_mcp.storage.row_signature import configured_key

    config = load_config(args.config)
    if config.store_url is None:
        print("sentinel-mcp passages: passages are signed on a server store only (sentinel.store); "
              "nothing to do")
        return 0
    # a server store without a seal key raises, naming the setting (a key of its own would vouch for nothing)
    key = configured_key(config.sentinel.cluster.seal_key, "passages")
    db = open_database(config.store_url, "passages")
    try:
        await db.migrate(SCHEMA)
        report = await survey(db, key)
        signed = await sign_vouched(db, report) if args.yes else 0
    finally:
        await release(db)
    if args.json:
        print(json.dumps({"counts": {k: dict(report.counts[k]) for k in KINDS},
                          "ids": report.ids, "signed": signed, "dry_run": not args.yes}, ensure_ascii=True))
        return 0
    for kind in KINDS:
        total = report.total(kind)
        print(f"{kind:9} {total:7}  {_SAID[kind]}")
        if total and kind != "current":
            for namespace, n in sorted(report.counts[kind].items()):
                print(f"          {n:7}  in {safe_text(namespace, 200)}")
            if kind != "vouched":
                print(f"          ids: {', '.join(map(str, report.ids[kind]))}"
                      + (" …" if total > len(report.ids[kind]) else ""))
    if args.yes:
        print(f"signed again: {signed} row(s)")
    elif report.total("vouched"):
        print("nothing changed (a dry run): --yes signs the vouched rows")
    return 0
