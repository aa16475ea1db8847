"""``sentinel-mcp kept``: the operator lists the facts kept for every conversation (``option(kept(...))``: one
certificate per cancelled flight) and clears one, by its exact text as listed; every clear is recorded
(``kept log``). The store is the config's: the server store replicas share (its rows signed with the
cluster's seal key) or the facts file a running gateway writes too (``policy/kept_clears.py``)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import sys
import time
from typing import Any

from sentinel_mcp.config import load_config
from sentinel_mcp.core.display_text import safe_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("kept", help="facts kept for every conversation: list them, clear one, the clears")
    ksub = p.add_subparsers(dest="action", metavar="ACTION")
    ls = ksub.add_parser("list", help="every kept fact")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)
    cl = ksub.add_parser("clear", help="clear one kept fact, by its exact text as `list` shows it (recorded)")
    cl.add_argument("fact", help="e.g. \"compensated('QDGWHB')\"")
    cl.add_argument("--reason", default="", help="why (kept with the record of the clear)")
    cl.set_defaults(func=cmd_clear)
    lg = ksub.add_parser("log", help="every clear: when, by whom, why")
    lg.add_argument("--json", action="store_true")
    lg.set_defaults(func=cmd_log)
    p.set_defaults(func=lambda args: (p.print_help(), 2)[1])


def _store(args: argparse.Namespace) -> Any:
    """The config's fact store (not opened), or None when there is none yet."""
    from sentinel_mcp.app.facts_source import has_facts
    from sentinel_mcp.gateway.replica import row_key
    from sentinel_mcp.policy.fact_store import FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    config = load_config(args.config)
    if not has_facts(config):
        return None
    return FactStore(config.store_url or facts_db_path(config), key=row_key(config, "facts"))


def _when(stamp: float | None) -> str:
    return "-" if stamp is None else time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(stamp))


def cmd_list(args: argparse.Namespace) -> int:
    return asyncio.run(_list(args))


async def _list(args: argparse.Namespace) -> int:
    from sentinel_mcp.policy.kept_clears import kept_facts

    store = _store(args)
    facts = [] if store is None else await _with(store, kept_facts)
    if args.json:
        print(json.dumps({"kept": [{"fact": f.fact, "established_at": f.established_at,
                                    "source_tool": f.source_tool} for f in facts]}, ensure_ascii=True))
        return 0
    for f in facts:  # a fact's text holds what an upstream or a client sent: shown safely on the terminal
        tool = safe_text(f.source_tool or "-", 200)
        print(f"{safe_text(f.fact, 2_000)}\t{_when(f.established_at)} UTC\t{tool}")
    if not facts:
        print("no kept facts")
    return 0


def cmd_clear(args: argparse.Namespace) -> int:
    return asyncio.run(_clear(args))


async def _clear(args: argparse.Namespace) -> int:
    from sentinel_mcp.policy.kept_clears import clear

    store = _store(args)
    by = f"cli:{_user()}"
    found = None if store is None else await _with(store, lambda s: clear(s, args.fact, by, args.reason))
    if found is None:
        print(f"sentinel-mcp kept: no kept fact is exactly {safe_text(args.fact, 2_000)} (see `kept list`); "
              "nothing cleared", file=sys.stderr)
        return 1
    print(json.dumps({"cleared": found.fact, "by": by, "established_at": found.established_at},
                     ensure_ascii=True))
    return 0


def cmd_log(args: argparse.Namespace) -> int:
    return asyncio.run(_log(args))


async def _log(args: argparse.Namespace) -> int:
    from sentinel_mcp.policy.kept_clears import clears

    store = _store(args)
    rows = [] if store is None else await _with(store, clears)
    if args.json:
        print(json.dumps({"clears": rows}, ensure_ascii=True))
        return 0
    for r in rows:
        who, why = safe_text(r["cleared_by"], 200), safe_text(r["reason"] or "", 2_000)
        print(f"{_when(r['cleared_at'])} UTC  {safe_text(r['fact'], 2_000)}  by {who}  {why}")
    if not rows:
        print("no clears")
    return 0


async def _with(store: Any, do: Any) -> Any:
    async with store:
        return await do(store)


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no name for this uid: the uid says who
        import os

        return f"uid {os.getuid()}"
