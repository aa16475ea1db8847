"""``sentinel-mcp check | query | facts``: rulebases and the fact store from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from sentinel_mcp.config import Config, load_config
from sentinel_mcp.core.display_text import safe_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("check", help="check rulebase files (syntax, undefined predicates, askables, tools)")
    p.add_argument("files", nargs="*", help="rulebase files (default: the config's sentinel.rulebases)")
    p.add_argument(
        "--connect",
        action="store_true",
        help="also start the configured upstreams and check the tools that bindings and guards name",
    )
    p.add_argument(
        "--coverage",
        action="store_true",
        help="also list the paragraphs of each declared policy document that no rule cites",
    )
    p.set_defaults(func=cmd_check)

    q = sub.add_parser("query", help="prove a symbolic goal over a session's facts and contexts")
    q.add_argument(
        "goal", help="e.g. 'user_membership(mia_li_3668, M)' (the airline example's, with --connect)"
    )
    q.add_argument("--session", default="default")
    q.add_argument(
        "--connect",
        action="store_true",
        help="start the configured upstreams so that missing facts are fetched",
    )
    q.set_defaults(func=cmd_query)

    f = sub.add_parser("facts", help="the fact store summary of a session (or the list of sessions)")
    f.add_argument("--session", default=None, help="session id (default: list the sessions)")
    f.add_argument("--json", action="store_true", help="all valid facts as JSON")
    f.set_defaults(func=cmd_facts)


def _files(args: argparse.Namespace, config: Config) -> list[Path]:
    if args.files:
        return [Path(f).expanduser().resolve() for f in args.files]
    return config.rulebase_paths()


def cmd_check(args: argparse.Namespace) -> int:
    return asyncio.run(_check(args))


async def _check(args: argparse.Namespace) -> int:
    """Exit 0 when clean, 1 when there is any problem (error or warning), 2 on a usage error."""
    from sentinel_mcp.policy.checker import check_paths, problem_line
    from sentinel_mcp.policy.rulebase_includes import included_files
    from sentinel_mcp.policy.engine import shared_engine

    config = load_config(args.config)
    files = _files(args, config)
    if not files:
        print("sentinel-mcp check: no rulebase files given or configured", file=sys.stderr)
        return 2
    catalog = None
    if args.connect:
        from sentinel_mcp.app.runtime import running_gateway

        async with running_gateway(config) as rt:
            catalog = rt.gateway.catalog_by_identity()
            problems = await check_paths(shared_engine(), files, catalog)
    else:
        problems = await check_paths(shared_engine(), files, None)
    for p in problems:
        # a path or message may carry the config's own text: shown cleaned, never raw
        print(safe_text(problem_line(p), 20_000, keep_newlines=True))
    errors = sum(1 for p in problems if p.severity == "error")
    if not errors:
        await _print_coverage(files, args.coverage)
    included = included_files(files)[len(files):]  # checked with them (rulebase_includes.py): named
    what = f"{len(files)} file(s)" + (f" and {len(included)} included ({', '.join(map(str, included))})"
                                      if included else "")
    what += f" against {len(catalog)} catalog tools" if catalog is not None else ""
    print(f"{what}: {errors} error(s), {len(problems) - errors} warning(s)", file=sys.stderr)
    return 1 if problems else 0


async def _print_coverage(files: list[Path], list_uncited: bool) -> None:
    """The share of each declared policy document's paragraphs that some rule cites (stderr), and with
    ``--coverage`` the paragraphs no rule cites (stdout, ``file:line: info: ...``; they are no problem)."""
    from sentinel_mcp.policy.checker import coverage
    from sentinel_mcp.policy.engine import shared_engine

    try:
        report = await coverage(shared_engine(), files)
    except Exception:  # noqa: BLE001 - the problems above already say why the files do not load
        return
    for name, r in report.items():
        print(
            f"policy coverage: {safe_text(name, 200)} ({safe_text(r['path'], 400)}): "
            f"{r['cited']} of {r['paragraphs']} paragraphs cited "
            f"({r['share']:.0%}); requirements without a citation: {r['uncited_rules']}",
            file=sys.stderr,
        )
        if list_uncited:
            for para in r["uncited"]:
                print(f"{safe_text(r['path'], 400)}:{para.line_start}: info: not cited by any rule: "
                      f"{safe_text(para.text, 100)}")


def cmd_query(args: argparse.Namespace) -> int:
    return asyncio.run(_query(args))


async def _query(args: argparse.Namespace) -> int:
    from sentinel_mcp.app.facts_source import facts_location

    config = load_config(args.config)

    async def run(port: Any) -> int:
        with facts_location(config) as (store_path, local_dir):  # the server store, or the file (or a copy)
            return await _run_query(args, config, port, store_path, local_dir)

    if args.connect:
        from sentinel_mcp.app.runtime import running_gateway

        async with running_gateway(config) as rt:
            return await run(rt.gateway)
    return await run(None)


async def _run_query(
    args: argparse.Namespace, config: Any, port: Any, store_path: Any, local_dir: Any
) -> int:
    from sentinel_mcp.gateway.replica import row_key
    from sentinel_mcp.policy.guard import PolicyGuard
    from sentinel_mcp.policy.policy_service import PolicyService

    guard = PolicyGuard(
        config.rulebase_paths(),
        port,
        store_path=store_path,
        local_dir=local_dir,
        settings=config.sentinel.policy,
        seeds=config.sentinel.seeds,
    )
    guard.store.key = row_key(config, "facts") or guard.store.key  # a server store: the replicas' key
    await guard.start(watch=False)
    try:
        if not guard.rulebases.loaded:
            print(f"sentinel-mcp query: rulebase not loaded: {guard.load_error}", file=sys.stderr)
            return 2
        out = await PolicyService(guard).query(args.session, args.goal)
    finally:
        await guard.close()
    print(json.dumps(out.model_dump(), indent=1, default=str))
    return 0 if out.status == "proved" else 1


def cmd_facts(args: argparse.Namespace) -> int:
    return asyncio.run(_facts(args))


async def _facts(args: argparse.Namespace) -> int:
    from sentinel_mcp.app.facts_source import facts_location, has_facts
    from sentinel_mcp.gateway.replica import row_key
    from sentinel_mcp.policy.fact_store import FactStore
    from sentinel_mcp.policy.guard_of_config import facts_db_path

    config = load_config(args.config)
    if not has_facts(config):
        print(f"no fact store yet at {facts_db_path(config)}", file=sys.stderr)
        return 0
    with facts_location(config) as (location, _scratch):  # the server store, or the file (or a copy)
        return await _print_facts(FactStore(location, key=row_key(config, "facts")), args)


async def _print_facts(store: Any, args: argparse.Namespace) -> int:
    async with store:
        if args.session is None:
            for s in await store.sessions():
                print(f"{safe_text(s, 400)}\t{await store.count(s)} fact(s)")
            return 0
        if args.json:
            facts = [f.model_dump() for f in await store.valid(args.session)]
            print(json.dumps({"facts": facts, "contexts": await store.contexts(args.session)}, indent=1))
        else:
            print(safe_text(await store.summary(args.session), 1_000_000, keep_newlines=True))
    return 0
