"""``sentinel-mcp replay --rulebase NEW.pl [--since T]``: the console's what-if replay from the command line.
Exit 0: no recorded decision would change; 1: some would; 2: the candidate does not load, or a usage error."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import datetime
from pathlib import Path

from sentinel_mcp.core.display_text import safe_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay", help="replay recorded calls under a candidate rulebase; list decisions that change"
    )
    p.add_argument(
        "--rulebase",
        action="append",
        required=True,
        metavar="FILE",
        help="candidate file: replaces the configured file of the same name, else joins the set (repeatable)",
    )
    p.add_argument("--only", action="store_true", help="the candidate is exactly the given files")
    p.add_argument(
        "--since", default=None, help="only calls at or after this time (ISO 8601, or e.g. 2h, 30m, 1d)"
    )
    p.add_argument("--principal", default=None, help="only this principal's calls")
    p.add_argument("--all", action="store_true", help="also list calls that do not change")
    p.set_defaults(func=cmd_replay)


def parse_since(text: str | None) -> float | None:
    if not text:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if text[-1:] in units and text[:-1].replace(".", "", 1).isdigit():
        return time.time() - float(text[:-1]) * units[text[-1]]
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise SystemExit(
            f"sentinel-mcp replay: --since expects an ISO 8601 time or a span like 2h, got {text!r}"
        )


def _joined_hint(current: list[Path], given: list[Path], only: bool) -> None:
    """Why a changed copy saved under a new name fails with every predicate it shares: it was loaded beside
    the configured files, not instead of one (only a file of the same name replaces one)."""
    names = sorted({Path(c).name for c in current})
    if only or not names:
        return
    for g in given:
        if g.name not in names:
            print(f"sentinel-mcp replay: {safe_text(g.name, 200)} names no configured rulebase "
                  f"({', '.join(safe_text(n, 200) for n in names)}), "
                  "so it was loaded beside them, not instead of one: save a changed copy under the name of "
                  "the file it replaces (in another folder), or pass --only with every file of the candidate",
                  file=sys.stderr)


def cmd_replay(args: argparse.Namespace) -> int:
    return asyncio.run(_replay(args))


async def _replay(args: argparse.Namespace) -> int:
    from sentinel_mcp.config import load_config
    from sentinel_mcp.console.replay import candidate_files, pick_rows, replay
    from sentinel_mcp.gateway.audit_reader import read_record
    from sentinel_mcp.gateway.replica import audit_key, row_key
    from sentinel_mcp.policy.engine import shared_engine
    from sentinel_mcp.policy.fact_store import FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    config = load_config(args.config)
    given = [Path(f).expanduser().resolve() for f in args.rulebase]
    missing = [str(f) for f in given if not f.is_file()]
    if missing:
        print(f"sentinel-mcp replay: no such file: {', '.join(missing)}", file=sys.stderr)
        return 2
    current = config.rulebase_paths()
    candidate = candidate_files(current, given, args.only)
    # the record this config's gateway writes: the cluster's table on a server store, else the files
    rows = pick_rows(
        await read_record(config.store_url, config.store_path, tail=5000, principal=args.principal,
                          key=audit_key(config)),
        since=parse_since(args.since),
    )
    facts_path = facts_db_path(config)  # with a server store, the facts the replicas share
    live = (
        await FactStore(config.store_url or facts_path, key=row_key(config, "facts")).open()
        if config.store_url or facts_path.exists()
        else None
    )
    try:
        report = await replay(
            rows,
            current=current,
            candidate=candidate,
            live_facts=live,
            settings=config.sentinel.policy,
            seeds=config.sentinel.seeds,
            engine=shared_engine(),
        )
    finally:
        if live is not None:
            await live.close()
    if report.problems:
        for p in report.problems:
            print(f"sentinel-mcp replay: the candidate does not load: {p}", file=sys.stderr)
        _joined_hint(current, given, args.only)
        return 2
    print(
        f"Replayed {report.examined} recorded call(s): rulebase {report.current_version} -> candidate "
        f"{report.candidate_version}; {report.skipped_default} decided by the default policy under both "
        f"(unchanged); {len(report.skipped_other)} skipped."
    )
    shown = report.results if args.all else report.changes
    for r in shown:
        ts = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.row.get("ts") or 0))
        mark = "CHANGES" if r.changed else ("not reproducible" if not r.reproduced else "same")
        row = {k: safe_text("" if r.row.get(k) is None else str(r.row.get(k)), 400)  # stored words, shown
               for k in ("id", "session", "tool", "arguments")}
        print(
            f"{mark:16} #{row['id']} {ts} {row['session']} {row['tool']} "
            f"{row['arguments']}: {safe_text(str(r.recorded), 40)} -> {safe_text(str(r.candidate), 40)}"
        )
        print(f"{'':16}   candidate: {safe_text(r.candidate_reason, 300)}")
    if report.unreproducible and not args.all:
        print(
            f"{len(report.unreproducible)} call(s) not reproducible (the current rulebase no longer decides "
            "them "
            "as recorded); --all lists them."
        )
    for s in report.skipped_other[:20]:
        print(f"skipped: {safe_text(str(s), 400)}")
    print(f"{len(report.changes)} decision(s) would change.")
    print(f"Note: {report.limits}")
    return 1 if report.changes else 0
