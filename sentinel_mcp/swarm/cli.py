"""``sentinel-mcp swarm build SPEC.json | status TASK_ID | list | gc``: builds from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import signal
import socket
import sys
import time
from typing import TYPE_CHECKING, Any

from sentinel_mcp.config import load_config
from sentinel_mcp.core.cli_numbers import count
from sentinel_mcp.swarm.spec_file import read_spec_text

if TYPE_CHECKING:
    from sentinel_mcp.swarm.build_service import BuildService
    from sentinel_mcp.swarm.settings import SwarmSettings

EXIT_FAILED = 1
EXIT_USAGE = 2


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("swarm", help="generate Android apps (planner, coder, critic, verifier)")
    sub = p.add_subparsers(dest="swarm_command", metavar="ACTION")
    p.set_defaults(func=lambda args: (p.print_help(), EXIT_USAGE)[1])

    b = sub.add_parser("build", help="build an app from a JSON spec file ('-' reads stdin)")
    b.add_argument("spec", help="SPEC.json")
    b.add_argument("--backend", choices=["local", "openai"], help="override sentinel.swarm.backend")
    b.add_argument("--model", help="GGUF model for the local backend (else sentinel.swarm.local.model_path)")
    b.add_argument("--max-steps", type=int)
    b.add_argument("--max-model-calls", type=int)
    b.add_argument("--max-tokens", type=int)
    b.add_argument("--max-minutes", type=float)
    b.add_argument("--json", action="store_true", help="print the final status as JSON")
    b.set_defaults(func=cmd_build)

    s = sub.add_parser("status", help="show one build")
    s.add_argument("task_id")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_status)

    ls = sub.add_parser("list", help="recent builds")
    ls.add_argument("--limit", type=count, default=20)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)

    gc = sub.add_parser(
        "gc", help="remove failed builds' workspaces and old logs, as the retention settings say"
    )
    gc.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    gc.add_argument("--json", action="store_true")
    gc.set_defaults(func=cmd_gc)

    se = sub.add_parser(
        "sign-ends",
        help="list builds ended without a signed end (a server store), whose files no sweep removes; "
             "--yes signs the ends you vouch for",
    )
    se.add_argument("--yes", action="store_true", help="sign the ends listed (else a dry run)")
    se.set_defaults(func=cmd_sign_ends)


def _service(args: argparse.Namespace) -> tuple[BuildService, SwarmSettings]:
    # the build service (orchestrator, agents, settings: pydantic models) is imported by a swarm command, not
    # by registering the sub-command, which every start of every command does (issue 21)
    from sentinel_mcp.swarm.build_service import BuildService
    from sentinel_mcp.swarm.settings import swarm_settings

    cfg = load_config(args.config)
    section = dict(cfg.sentinel.builtin_settings("swarm"))
    if getattr(args, "backend", None):
        section["backend"] = args.backend
    if getattr(args, "model", None):
        section["local"] = dict(section.get("local") or {}, model_path=args.model)
    settings = swarm_settings(section)
    root = cfg.data_dir / "swarm"  # the gateway's swarm built-in's own (runtime.py: data_dir / its name)
    if not cfg.store_url:
        return BuildService(root, settings), settings
    # a replica's config: the cluster's builds, where the gateway records them, signed with its key; never a
    # local file beside it (issue: `swarm list` saw "no builds" and `gc` swept the wrong rows)
    from sentinel_mcp.storage.location import LocationError
    from sentinel_mcp.storage.row_signature import configured_key

    try:
        key = configured_key(cfg.sentinel.cluster.seal_key, "swarm build")  # the replicas' own
    except LocationError as e:
        print(f"sentinel-mcp swarm: {e}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE) from None
    replica = cfg.sentinel.cluster.replica or f"{socket.gethostname()[:40]}-cli-{secrets.token_hex(3)}"
    service = BuildService(
        root, settings, store=cfg.store_url, replica=replica, key=key,
        lease_seconds=settings.build_lease_seconds,
        renew_every=min(settings.build_lease_renew_seconds, settings.build_lease_seconds / 3),
        ends_own_old=False,  # beside the replica named so, not its restart: its running builds are its own
    )
    return service, settings


def _read_spec(path: str) -> str:
    return read_spec_text(path, sys.stdin.buffer)


def cmd_build(args: argparse.Namespace) -> int:
    return asyncio.run(_build(args))


async def _build(args: argparse.Namespace) -> int:
    from sentinel_mcp.swarm.backends.base import ModelError
    from sentinel_mcp.swarm.progress_bar import ProgressBar
    from sentinel_mcp.swarm.spec import SpecError
    from sentinel_mcp.swarm.task_lock import BuildBusyError, BuildQuotaError

    service, settings = _service(args)
    spec_text = _read_spec(args.spec)
    caps = {
        "max_steps": args.max_steps,
        "max_model_calls": args.max_model_calls,
        "max_tokens": args.max_tokens,
        # 0 is a cap (refused: no time), not "none given": None alone leaves the configured cap
        "max_wall_seconds": args.max_minutes * 60 if args.max_minutes is not None else None,
    }
    bar = ProgressBar()

    async def backend_factory():
        # imported here: the backends load the MCP SDK and an HTTP client; registering the `swarm`
        # sub-command on every start must not (issue 21: `serve` launches its upstreams before the SDK loads)
        from sentinel_mcp.swarm.backends.factory import make_backend

        return make_backend(settings)

    await service.start()
    try:
        try:
            task_id = await service.submit(spec_text, backend_factory, session="cli", caps=caps, listener=bar)
        except (SpecError, ValueError, BuildBusyError, BuildQuotaError, ModelError) as e:
            print(f"sentinel-mcp swarm: {e}", file=sys.stderr)
            return EXIT_USAGE
        got_signal: list[str] = []
        loop = asyncio.get_running_loop()

        def on_signal(sig: signal.Signals) -> None:
            got_signal.append(sig.name)
            loop.create_task(service.cancel(task_id))

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal, sig)
        try:
            status = await service.wait(task_id)
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)
        bar.finish()
        _print_status(status, args.json)
        if got_signal:
            return 130 if got_signal[0] == "SIGINT" else 143
        return 0 if status["state"] == "COMPLETED" else EXIT_FAILED
    finally:
        await service.close()


def cmd_status(args: argparse.Namespace) -> int:
    from sentinel_mcp.swarm.build_service import UnknownTaskError

    async def run() -> int:
        service, _ = _service(args)
        await service.start()
        try:
            _print_status(await service.status(args.task_id), args.json)
            return 0
        except UnknownTaskError as e:
            print(f"sentinel-mcp swarm: {e}", file=sys.stderr)
            return EXIT_FAILED
        finally:
            await service.close()

    return asyncio.run(run())


def cmd_list(args: argparse.Namespace) -> int:
    async def run() -> int:
        service, _ = _service(args)
        await service.start()
        try:
            tasks = await service.list(max(1, args.limit))
        finally:
            await service.close()
        if args.json:
            print(json.dumps(tasks, indent=2))
        for t in [] if args.json else tasks:
            print(_list_line(t))
        return 0

    return asyncio.run(run())


def cmd_gc(args: argparse.Namespace) -> int:
    async def run() -> int:
        service, settings = _service(args)
        await service.start(sweep=False)  # this sweep, and only it, removes (or, dry, reports)
        try:
            report = await service.gc(dry_run=args.dry_run)
        finally:
            await service.close()
        if args.json:
            print(json.dumps(report.as_dict(), indent=2))
            return 0
        verb = "would remove" if args.dry_run else "removed"
        r = settings.retention
        print(
            f"{verb} {len(report.workspaces)} failed workspace(s) older than {r.failed_workspace_days:g} "
            f"days, {len(report.trimmed)} completed workspace(s) past their caller's caps "
            f"({r.max_kept_workspaces} builds, {r.max_kept_mib} MiB), "
            f"{len(report.logs)} log file(s) past retention ({settings.log_retention_days} days, debug "
            f"{r.debug_log_days})"
        )
        for tid in report.workspaces + report.trimmed:
            print(f"  workspace {tid}")
        for name in report.logs:
            print(f"  log {name}")
        for why in report.skipped:
            print(f"  kept: {why}")
        return 0

    return asyncio.run(run())


def cmd_sign_ends(args: argparse.Namespace) -> int:
    """Builds of this cluster (their binding signed) that ended without a signed end: listed, so the operator
    can judge each (who, what state, when, why); with ``--yes`` their ends are signed as listed (each only if
    its row is unchanged since), and the sweeps then act on them (``swarm/build_rows.py``)."""
    from sentinel_mcp.core.display_text import safe_text
    from sentinel_mcp.storage.location import LocationError
    from sentinel_mcp.storage.row_signature import configured_key
    from sentinel_mcp.swarm.state import SwarmStore

    config = load_config(args.config)
    if not config.store_url:
        print("sentinel-mcp swarm sign-ends: builds' ends are signed on a server store only (sentinel.store "
              "names none): on this embedded store the sweeps act on every ended build", file=sys.stderr)
        return 2
    try:
        key = configured_key(config.sentinel.cluster.seal_key, "swarm build")  # the replicas' own
    except LocationError as e:
        print(f"sentinel-mcp swarm sign-ends: {e}", file=sys.stderr)
        return 2

    async def run() -> int:
        async with SwarmStore(config.store_url or "", key=key) as store:
            rows = await store.ends_unsigned()
            signed = 0
            for r in rows:
                at = r.get("finished_at")
                when = (time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if isinstance(at, float)
                        else "?")
                print(f"{safe_text(r['task_id'], 40)}  {safe_text(r['principal'], 40)}  "
                      f"{safe_text(r['state'], 10)}  {when}  {safe_text(r.get('error') or '', 200)}")
                if args.yes:
                    signed += await store.sign_end(r)
        if args.yes:
            print(f"signed {signed} of {len(rows)} end(s); a row changed since it was read, or without an "
                  "end time, was left unsigned")
        else:
            print(f"{len(rows)} build(s) ended without a signed end: their files are kept, never swept. "
                  "Check each (a build marked ended in SQL looks the same), then run again with --yes to "
                  "sign their ends as listed")
        return 0

    return asyncio.run(run())


def _list_line(t: dict[str, Any]) -> str:
    """A build's line in ``swarm list``: its text shown marked (a store's rows, a caller's spec)."""
    from sentinel_mcp.core.display_text import Marked, safe_text

    return Marked(f"{safe_text(t['task_id'], 40)}  {safe_text(t['state'], 10):<10} "
                  f"{safe_text(t['app_name'] or '', 80):<20} {safe_text(t['error'] or '', 300)}")


def _print_status(status: dict[str, Any], as_json: bool) -> None:
    """Every text of the build shown marked and cut (its rows may be written by anyone who can write the
    store, its file names by its tools, its warnings quote a model); a part withheld as unsigned reads '?'
    and is named."""
    from sentinel_mcp.core.display_text import safe_text

    if as_json:
        print(json.dumps(status, indent=2, default=str))
        return
    error = safe_text(status["error"], 500) if status.get("error") else None
    print(f"task {safe_text(status['task_id'], 40)}: {safe_text(status['state'], 10)}"
          f"{f' ({error})' if error else ''}")
    print(f"workspace: {safe_text(status['workspace'], 300)}")
    prompt, completion = status.get("prompt_tokens"), status.get("completion_tokens")
    tokens = prompt + completion if isinstance(prompt, int) and isinstance(completion, int) else "?"
    calls = status.get("model_calls")
    print(f"model calls: {calls if isinstance(calls, int) else '?'}, tokens: {tokens}")
    if status.get("unverified"):
        print(f"not signed by this cluster (withheld): {safe_text(', '.join(status['unverified']), 300)}")
    for what, n in (status.get("rows_missing") or {}).items():
        print(f"{n} recorded {safe_text(what, 20)} row(s) missing from the store (deleted outside Sentinel)")
    for f in status.get("files") or []:
        print(f"  {safe_text(f, 300)}")
    for w in status.get("warnings") or []:
        print(f"warning: {safe_text(w, 500)}")
    report = status.get("report") or {}
    verifier = report.get("verifier") if isinstance(report, dict) else None
    if isinstance(verifier, dict) and "quality_score" in verifier:
        print(f"quality score: {safe_text(verifier['quality_score'], 20)}")
